import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { MvccStore, type TxnCommand } from '@app/mvcc';
import { BoltReader, EtcdApplier, leaseRecord, openClusterStorage, writeBoltFile } from '@app/storage';
import { REVISION_MARK_KEY, etcdRecordTypes, etcdRevisionKey } from '../apps/apiserver/src/cluster/cluster.etcd-export.js';
import { nodeIdFromName } from '../apps/apiserver/src/cluster/cluster.ids.js';
import { MEMBER_PREFIX, REMOVED_PREFIX } from '../apps/apiserver/src/cluster/cluster.members.js';
import { snapshotPadding } from '../apps/apiserver/src/cluster/cluster.restore.js';
import { prerequisite } from '../test/support/prereq.js';
import { runSnapshotCli } from './snapshot.cli.js';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const put = (key: string, value: string): TxnCommand => ({ compares: [], success: [{ type: 'put', key, value: enc(value) }], failure: [] });
const del = (key: string): TxnCommand => ({ compares: [], success: [{ type: 'delete', key }], failure: [] });

describe('snapshot CLI: restore, status, to-etcd and from-etcd of a snapshot saved by etcdctl', () => {
  let tmp: string;
  /** A snapshot in etcdctl's framing of a store with history, member records of an old cluster and a compaction. */
  let file: string;
  beforeAll(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'snapshot-cli-'));
    const store = await MvccStore.open(path.join(tmp, 'source'));
    let index = 100;
    await store.apply(++index, put('/registry/configmaps/default/a', 'v1'));
    await store.apply(++index, put('/registry/configmaps/default/a', 'v2'));
    await store.apply(++index, put('/registry/configmaps/default/b', 'b1'));
    await store.apply(++index, del('/registry/configmaps/default/b'));
    await store.apply(
      ++index,
      put(`${MEMBER_PREFIX}old1`, JSON.stringify({ name: 'old1', id: nodeIdFromName('old1'), peerURL: '10.0.0.1:2380', role: 'voter' })),
    );
    await store.apply(++index, put(`${REMOVED_PREFIX}old4`, String(nodeIdFromName('old4'))));
    await store.apply(++index, { compares: [], success: [], failure: [], compact: 2 });
    await store.apply(index + 1, put('/other', 'x'));
    const raw = path.join(tmp, 'raw.snap');
    const { bytes } = await store.exportSnapshotToFile(raw);
    await store.close();
    const body = Buffer.concat([await fs.readFile(raw), Buffer.alloc(snapshotPadding(bytes))]);
    file = path.join(tmp, 'saved.db');
    await fs.writeFile(file, Buffer.concat([body, createHash('sha256').update(body).digest()]));
  });
  afterAll(async () => {
    await fs.rm(tmp, { recursive: true, force: true });
  });

  const run = async (argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runSnapshotCli(
      argv,
      (l) => out.push(l),
      (l) => err.push(l),
    );
    return { code, out, err };
  };

  it('status: revision, compacted revision, Raft index, live keys and size', async () => {
    const r = await run(['status', file, '-w', 'json']);
    expect(r).toMatchObject({ code: 0, err: [] });
    expect(JSON.parse(r.out[0]!)).toMatchObject({ revision: 7, compactRevision: 2, raftIndex: 108, totalKey: 4, totalSize: (await fs.stat(file)).size });
    const table = await run(['status', file]);
    expect(table.out).toEqual(['REVISION\tCOMPACT REVISION\tRAFT INDEX\tTOTAL KEYS\tTOTAL SIZE', `7\t2\t108\t4\t${(await fs.stat(file)).size}`]);
  });

  it('restores three members that start as one cluster with the data, history and revisions of the snapshot, without the old member records', async () => {
    const names = ['r1', 'r2', 'r3'];
    const initial = names.map((n, i) => `${n}=127.0.0.1:${23400 + i}`).join(',');
    for (const n of names) {
      const r = await run(['restore', file, '--data-dir', path.join(tmp, n), '--name', n, '--initial-cluster', initial]);
      expect(r).toMatchObject({ code: 0, err: [] });
      expect(r.out.join('\n')).toContain('dropped 2 member records');
    }
    // One member opened on its own: its log starts after the restore's entry, with the new voters.
    const cs = await openClusterStorage({ dataDir: path.join(tmp, 'r1'), nodeId: nodeIdFromName('r1'), sync: false });
    try {
      expect(cs.store.currentRevision()).toBe(8);
      expect(cs.store.compactedRevision()).toBe(2);
      expect([...cs.node.members().voters].sort()).toEqual(names.map(nodeIdFromName).sort());
      expect(cs.raftStorage.snapshot().metadata).toMatchObject({ index: 109, term: 1 });
      const live = (await cs.store.range('/')).kvs.map((kv) => [kv.key, Buffer.from(kv.value).toString(), kv.modRevision]);
      expect(live).toEqual([
        ['/other', 'x', 7],
        ['/registry/configmaps/default/a', 'v2', 2],
      ]);
      // History past the compaction came along: the first version of /a is gone, its second is there.
      expect(Buffer.from((await cs.store.get('/registry/configmaps/default/b', 3))!.value).toString()).toBe('b1');
      await expect(cs.store.get('/registry/configmaps/default/a', 1)).rejects.toThrow(/compacted/);
    } finally {
      await cs.close();
    }
  });

  it('a single node (no --initial-cluster) is restored as member "default" alone', async () => {
    const dir = path.join(tmp, 'single');
    expect((await run(['restore', file, '--data-dir', dir])).code).toBe(0);
    const cs = await openClusterStorage({ dataDir: dir, nodeId: nodeIdFromName('default'), sync: false });
    try {
      expect(cs.node.members().voters).toEqual([nodeIdFromName('default')]);
      expect(cs.store.currentRevision()).toBe(8);
    } finally {
      await cs.close();
    }
  });

  const b64 = (s: string) => Buffer.from(s).toString('base64');
  /** The records of an etcd backend file's bucket, key and meta records decoded. */
  const boltRecords = async (file: string, bucket: string) => {
    const bytes = (await fs.stat(file)).size;
    const bolt = await BoltReader.open(file, bytes % 512 === 32 ? bytes - 32 : bytes);
    const { keyValue } = etcdRecordTypes();
    const rows: unknown[] = [];
    try {
      for await (const [k, v] of bolt.entries(bucket)) {
        if (bucket !== 'key') {
          rows.push([k.toString(), v.length === 17 ? Number(v.readBigUInt64BE(0)) : v.toString('hex')]);
          continue;
        }
        const rec = keyValue.toObject(keyValue.decode(v), { longs: Number, bytes: String, defaults: true }) as Record<string, unknown>;
        rows.push([
          `${Number(k.readBigUInt64BE(0))}.${Number(k.readBigUInt64BE(9))}${k.length === 18 ? 't' : ''}`,
          rec.key,
          rec.value,
          rec.create_revision,
          rec.mod_revision,
          rec.version,
          rec.lease,
        ]);
      }
    } finally {
      await bolt.close();
    }
    return rows;
  };

  it("to-etcd: the history since the compaction (not the old member records) in etcd's backend format, framed with its SHA-256", async () => {
    const out = path.join(tmp, 'for-etcd.db');
    const r = await run(['to-etcd', file, '--out', out]);
    expect(r).toMatchObject({ code: 0, err: [] });
    expect(r.out[0]).toMatch(
      /^wrote .*for-etcd\.db: 2 keys and 0 leases at revision 7, history from revision 2 \(4 changes\), \d+ bytes \(etcd's backend format\)$/,
    );
    // The version each key had at the compacted revision, then every change after it (the
    // member records' revisions 5 and 6 carry nothing), and the compaction in meta.
    expect(await boltRecords(out, 'key')).toEqual([
      ['2.0', b64('/registry/configmaps/default/a'), b64('v2'), 1, 2, 2, 0],
      ['3.0', b64('/registry/configmaps/default/b'), b64('b1'), 3, 3, 1, 0],
      ['4.0t', b64('/registry/configmaps/default/b'), '', 0, 0, 0, 0],
      ['7.0', b64('/other'), b64('x'), 7, 7, 1, 0],
    ]);
    expect(await boltRecords(out, 'meta')).toEqual([
      ['consistent_index', Buffer.from([0, 0, 0, 0, 0, 0, 0, 108]).toString('hex')],
      ['finishedCompactRev', 2],
      ['scheduledCompactRev', 2],
    ]);
    const bytes = await fs.readFile(out);
    // Whole 4 KiB pages (bbolt's magic in the first meta page), then the SHA-256 of them.
    expect(bytes.length % 4096).toBe(32);
    expect(bytes.readUInt32LE(16)).toBe(0xed0cdaed);
    const db = bytes.subarray(0, bytes.length - 32);
    expect(createHash('sha256').update(db).digest()).toEqual(bytes.subarray(bytes.length - 32));
    // The live keys are there, the old cluster's member records and removal markers are not.
    expect(db.includes(Buffer.from('/registry/configmaps/default/a'))).toBe(true);
    expect(db.includes(Buffer.from('/other'))).toBe(true);
    expect(db.includes(Buffer.from(MEMBER_PREFIX))).toBe(false);
    expect(db.includes(Buffer.from(REMOVED_PREFIX))).toBe(false);
    // Refusals: an existing output file, a damaged backup, usage.
    expect(await run(['to-etcd', file, '--out', out])).toMatchObject({ code: 1, err: [expect.stringContaining('exists: name a new file')] });
    const damaged = path.join(tmp, 'damaged-for-etcd.db');
    const raw = await fs.readFile(file);
    raw[40] = raw[40]! ^ 0xff;
    await fs.writeFile(damaged, raw);
    expect(await run(['to-etcd', damaged, '--out', path.join(tmp, 'x.db')])).toMatchObject({
      code: 1,
      err: [expect.stringContaining('integrity check failed')],
    });
    await expect(fs.access(path.join(tmp, 'x.db'))).rejects.toThrow();
    expect((await run(['to-etcd', file])).code).toBe(2);
    expect((await run(['to-etcd', file, '--out', path.join(tmp, 'y.db'), '--data-dir', tmp])).code).toBe(2);
    expect((await run(['status', file, '--out', path.join(tmp, 'y.db')])).code).toBe(2);
  });

  it('to-etcd: a store of more keys than one listing page, several written by one revision, all in the file etcd reads, and back', async () => {
    const store = await MvccStore.open(path.join(tmp, 'many'));
    let index = 0;
    for (let i = 0; i < 2400; i++) await store.apply(++index, put(`/many/${String(i).padStart(5, '0')}`, `v${i}`));
    // One revision writing three keys: they get sub revisions 0, 1, 2.
    await store.apply(index + 1, {
      compares: [],
      success: ['c', 'a', 'b'].map((k) => ({ type: 'put' as const, key: `/txn/${k}`, value: enc(k) })),
      failure: [],
    });
    // The last revision writes only a lease record: the file carries the revision with a mark.
    const lease = leaseRecord('77', 60);
    await store.apply(index + 2, { compares: [], success: [{ type: 'put', key: lease.key, value: lease.value }], failure: [] });
    const raw = path.join(tmp, 'many.snap');
    const { bytes } = await store.exportSnapshotToFile(raw);
    await store.close();
    const body = Buffer.concat([await fs.readFile(raw), Buffer.alloc(snapshotPadding(bytes))]);
    const saved = path.join(tmp, 'many.db');
    await fs.writeFile(saved, Buffer.concat([body, createHash('sha256').update(body).digest()]));
    const out = path.join(tmp, 'many-etcd.db');
    const r = await run(['to-etcd', saved, '--out', out]);
    expect(r).toMatchObject({ code: 0, err: [] });
    expect(r.out[0]).toContain('2403 keys and 1 leases at revision 2402, the whole history (2403 changes)');
    const records = await boltRecords(out, 'key');
    expect(records.slice(-4)).toEqual([
      ['2401.0', b64('/txn/c'), b64('c'), 2401, 2401, 1, 0],
      ['2401.1', b64('/txn/a'), b64('a'), 2401, 2401, 1, 0],
      ['2401.2', b64('/txn/b'), b64('b'), 2401, 2401, 1, 0],
      ['2402.0t', b64(REVISION_MARK_KEY), '', 0, 0, 0, 0],
    ]);
    // Back: the same keys and revision, the lease, and no mark.
    const back = path.join(tmp, 'many-back.db');
    expect((await run(['from-etcd', out, '--out', back])).out[0]).toContain('2403 keys and 1 leases at revision 2402, the whole history (2403 changes)');
    const backDir = path.join(tmp, 'many-back');
    expect((await run(['restore', back, '--data-dir', backDir])).code).toBe(0);
    const cs = await openClusterStorage({ dataDir: backDir, nodeId: nodeIdFromName('default'), sync: false });
    try {
      expect(cs.store.currentRevision()).toBe(2402);
      expect((await cs.store.range('/')).kvs).toHaveLength(2403);
      expect((await cs.store.eventsAfter(2399)).events.map((e) => `${e.key}@${e.revision}`)).toEqual([
        '/many/02399@2400',
        '/txn/c@2401',
        '/txn/a@2401',
        '/txn/b@2401',
        lease.key + '@2402',
      ]);
    } finally {
      await cs.close();
    }
    if (!prerequisite('etcdctl', "etcdctl snapshot status of a backup made into etcd's format (cluster/snapshot.cli.spec.ts)")) return;
    const { stdout } = await promisify(execFile)('etcdctl', ['snapshot', 'status', out, '-w', 'json'], { env: { ...process.env, ETCDCTL_API: '3' } });
    // Every key record (the mark too: it is what gives etcd the revision), the lease and the meta record.
    expect(JSON.parse(stdout)).toMatchObject({ revision: 2402, totalKey: 2403 + 1 + 1 + 1 });
  });

  it('refuses a damaged file, a data dir in use, a member not in the cluster, and bad usage', async () => {
    const damaged = path.join(tmp, 'damaged.db');
    const bytes = await fs.readFile(file);
    bytes[40] = bytes[40]! ^ 0xff;
    await fs.writeFile(damaged, bytes);
    const bad = await run(['restore', damaged, '--data-dir', path.join(tmp, 'x1')]);
    expect(bad).toMatchObject({ code: 1, err: [expect.stringContaining('snapshot file integrity check failed')] });
    await expect(fs.access(path.join(tmp, 'x1', 'mvcc'))).rejects.toThrow();
    // Without the hash check the damage is found by the snapshot's own validation, or not at all
    // when it hits a value: a byte of the header's magic is caught.
    const header = Buffer.from(bytes);
    header[40] = bytes[40]! ^ 0xff;
    header[5] = header[5]! ^ 0xff;
    await fs.writeFile(damaged, header);
    expect((await run(['restore', damaged, '--data-dir', path.join(tmp, 'x2'), '--skip-hash-check'])).err.join('\n')).toContain('invalid snapshot');
    // A bare export is read with --skip-hash-check; after its end only zero padding may follow.
    const bare = path.join(tmp, 'bare.snap');
    await fs.writeFile(bare, await fs.readFile(path.join(tmp, 'raw.snap')));
    expect((await run(['status', bare, '--skip-hash-check'])).code).toBe(0);
    await fs.appendFile(bare, Buffer.from([0, 0, 7]));
    expect((await run(['status', bare, '--skip-hash-check'])).err.join('\n')).toContain('trailing bytes');
    const truncated = path.join(tmp, 'truncated.db');
    await fs.writeFile(truncated, bytes.subarray(0, bytes.length - 100));
    expect((await run(['status', truncated])).err.join('\n')).toContain('is not the size of a snapshot saved by etcdctl');

    const used = path.join(tmp, 'used');
    expect((await run(['restore', file, '--data-dir', used])).code).toBe(0);
    const again = await run(['restore', file, '--data-dir', used]);
    expect(again).toMatchObject({ code: 1, err: [expect.stringContaining('already holds a node')] });
    const stranger = await run(['restore', file, '--data-dir', path.join(tmp, 'x3'), '--name', 'r9', '--initial-cluster', 'r1=127.0.0.1:1']);
    expect(stranger).toMatchObject({ code: 1, err: [expect.stringContaining('does not list this member')] });

    expect((await run(['restore', file])).code).toBe(2);
    expect((await run(['frobnicate', file])).code).toBe(2);
    expect((await run(['status'])).code).toBe(2);
    expect((await run(['status', file, '--name', 'x'])).code).toBe(2);
    expect((await run(['restore', file, '--data-dir', path.join(tmp, 'x4'), '--bogus'])).code).toBe(2);
  });
  /** etcd's backend file of the records given (revision key, KeyValue), leases and meta records, with etcdctl's SHA-256 when `framed`. */
  const etcdFile = async (
    name: string,
    records: readonly (readonly [main: number, sub: number, tombstone: boolean, kv: Record<string, unknown>])[],
    leases: readonly (readonly [id: number, ttl: number])[],
    metaRecords: readonly (readonly [Buffer, Buffer])[],
    framed = true,
  ): Promise<string> => {
    const { keyValue, lease } = etcdRecordTypes();
    const db = path.join(tmp, `${name}.bolt`);
    const leaseKey = (id: number) => {
      const b = Buffer.alloc(8);
      b.writeBigUInt64BE(BigInt(id));
      return b;
    };
    await writeBoltFile(db, [
      {
        name: Buffer.from('key'),
        entries: records.map(([main, sub, tombstone, kv]) => [
          tombstone ? Buffer.concat([etcdRevisionKey(main, sub), Buffer.from('t')]) : etcdRevisionKey(main, sub),
          Buffer.from(keyValue.encode(keyValue.fromObject(kv)).finish()),
        ]),
      },
      {
        name: Buffer.from('lease'),
        entries: leases.map(([id, ttl]) => [leaseKey(id), Buffer.from(lease.encode(lease.fromObject({ ID: id, TTL: ttl })).finish())]),
      },
      { name: Buffer.from('meta'), entries: metaRecords },
    ]);
    if (!framed) return db;
    const body = await fs.readFile(db);
    const out = path.join(tmp, `${name}.db`);
    await fs.writeFile(out, Buffer.concat([body, createHash('sha256').update(body).digest()]));
    return out;
  };
  const u64be = (n: number) => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64BE(BigInt(n));
    return b;
  };
  const kv = (key: string | Buffer, value: string, create: number, mod: number, version: number, lease = 0) => ({
    key: typeof key === 'string' ? Buffer.from(key) : key,
    value: Buffer.from(value),
    create_revision: create,
    mod_revision: mod,
    version,
    lease,
  });

  it("from-etcd: the history from etcd's compaction, each live key with its revisions and lease, at etcd's revision, restored as any backup", async () => {
    const binary = Buffer.from([0x2f, 0x62, 0x00, 0xff]);
    const file = await etcdFile(
      'etcd',
      [
        [2, 0, false, kv('/a', 'v1', 2, 2, 1)],
        [3, 0, false, kv('/a', 'v2', 2, 3, 2)],
        // One transaction writing two keys.
        [4, 0, false, kv('/t/y', 'y', 4, 4, 1)],
        [4, 1, false, kv('/t/x', 'x', 4, 4, 1)],
        [5, 0, false, kv('/gone', 'g', 5, 5, 1)],
        [6, 0, true, { key: Buffer.from('/gone') }],
        [7, 0, false, kv('/leased', 'l', 7, 7, 1, 0x1234)],
        [8, 0, false, kv('/orphan', 'o', 8, 8, 1, 99)],
        [9, 0, false, kv(binary, 'bin', 9, 9, 1)],
        // Deleted, then written again.
        [10, 0, true, { key: Buffer.from('/t/y') }],
        [11, 0, false, kv('/t/y', 'again', 11, 11, 1)],
      ],
      [[0x1234, 600]],
      [
        [Buffer.from('consistent_index'), u64be(42)],
        [Buffer.from('finishedCompactRev'), etcdRevisionKey(5, 0)],
      ],
    );
    const out = path.join(tmp, 'from-etcd.db');
    const r = await run(['from-etcd', file, '--out', out]);
    expect(r).toMatchObject({ code: 0, err: [] });
    expect(r.out[0]).toMatch(
      /^wrote .*from-etcd\.db: 6 keys and 1 leases at revision 11, history from revision 5 \(11 changes\), \d+ bytes \(a backup of the built-in store\)$/,
    );
    expect(r.out[1]).toBe('1 keys named a lease the file does not hold: they were carried without a lease');
    // Our status reads it: compacted where etcd was, the keys plus the lease and its attachment.
    const st = await run(['status', out, '-w', 'json']);
    expect(JSON.parse(st.out[0]!)).toMatchObject({ revision: 11, compactRevision: 5, raftIndex: 42, totalKey: 8 });

    const dataDir = path.join(tmp, 'from-etcd-node');
    expect((await run(['restore', out, '--data-dir', dataDir])).code).toBe(0);
    const cs = await openClusterStorage({ dataDir, nodeId: nodeIdFromName('default'), sync: false });
    let converted: unknown[] | undefined;
    try {
      converted = (await cs.store.range('')).kvs;
      expect(cs.store.currentRevision()).toBe(11);
      expect(cs.store.compactedRevision()).toBe(5);
      const live = (await cs.store.range('/')).kvs.map((k) => [k.key, Buffer.from(k.value).toString(), k.createRevision, k.modRevision, k.version]);
      expect(live).toEqual([
        ['/a', 'v2', 2, 3, 2],
        ['/b\u{10FF00}\u{10FFFF}', 'bin', 9, 9, 1],
        ['/leased', 'l', 7, 7, 1],
        ['/orphan', 'o', 8, 8, 1],
        ['/t/x', 'x', 4, 4, 1],
        ['/t/y', 'again', 11, 11, 1],
      ]);
      // Past revisions read as etcd read them, from its compacted revision on; watches replay
      // its changes since, deletions with the version they removed.
      await expect(cs.store.get('/a', 4)).rejects.toThrow(/compacted/);
      const at = async (revision: number) =>
        (await cs.store.range('/', { atRevision: revision })).kvs.map((k) => `${k.key}=${Buffer.from(k.value).toString()}`);
      expect(await at(5)).toEqual(['/a=v2', '/gone=g', '/t/x=x', '/t/y=y']);
      expect(await at(6)).toEqual(['/a=v2', '/t/x=x', '/t/y=y']);
      expect(await at(10)).toEqual(['/a=v2', '/b\u{10FF00}\u{10FFFF}=bin', '/leased=l', '/orphan=o', '/t/x=x']);
      const events = (await cs.store.eventsAfter(5, { prefix: '/' })).events;
      expect(events.map((e) => `${e.type} ${e.key}@${e.revision}<${e.prevValue?.modRevision ?? '-'}`)).toEqual([
        'delete /gone@6<5',
        'put /leased@7<-',
        'put /orphan@8<-',
        'put /b\u{10FF00}\u{10FFFF}@9<-',
        'delete /t/y@10<4',
        'put /t/y@11<-',
      ]);
      await cs.store.whenPurged();
      await expect(cs.store.eventsAfter(3)).rejects.toThrow(/compacted/);
      const leases = new EtcdApplier(cs.store, () => Date.now());
      await leases.ready();
      expect(leases.leaseIds()).toEqual([String(0x1234)]);
      expect(leases.lease(String(0x1234))).toMatchObject({ ttl: 600 });
      expect(leases.leaseOf('/leased')).toBe(String(0x1234));
      // The attachment is history too: written with the put of revision 7.
      expect(await leases.leaseAt('/leased', 8)).toBe(String(0x1234));
      expect(await leases.leaseAt('/leased', 6)).toBe('0');
      expect(leases.leaseOf('/orphan')).toBe('0');
    } finally {
      await cs.close();
    }
    // restore and status take etcd's file itself, through the same conversion.
    const direct = path.join(tmp, 'from-etcd-direct');
    const restored = await run(['restore', file, '--data-dir', direct]);
    expect(restored).toMatchObject({ code: 0, err: [] });
    expect(restored.out[0]).toBe(
      `${file} is etcd's backend file: made into a backup of the built-in store first (6 keys and 1 leases at revision 11, history from revision 5)`,
    );
    const again = await openClusterStorage({ dataDir: direct, nodeId: nodeIdFromName('default'), sync: false });
    try {
      expect((await again.store.range('')).kvs).toEqual(converted);
    } finally {
      await again.close();
    }
    const status = await run(['status', file, '-w', 'json']);
    expect(JSON.parse(status.out[0]!)).toEqual({ revision: 11, compactRevision: 5, raftIndex: 42, totalKey: 8, totalSize: (await fs.stat(file)).size });
  });

  it("from-etcd: refuses a file without or with a wrong hash, one that is not etcd's, keys under the store's own prefix", async () => {
    const records = [[2, 0, false, kv('/k', 'v', 2, 2, 1)]] as const;
    const meta = [[Buffer.from('consistent_index'), u64be(1)]] as const;
    const out = (n: string) => path.join(tmp, `refused-${n}.db`);
    // A member's db file has no hash: taken only with --skip-hash-check.
    const bare = await etcdFile('bare', records, [], meta, false);
    expect(await run(['from-etcd', bare, '--out', out('bare')])).toMatchObject({ code: 1, err: [expect.stringContaining('pass --skip-hash-check')] });
    expect(await run(['from-etcd', bare, '--out', out('bare'), '--skip-hash-check'])).toMatchObject({ code: 0, err: [] });
    expect(await run(['from-etcd', bare, '--out', out('bare'), '--skip-hash-check'])).toMatchObject({
      code: 1,
      err: [expect.stringContaining('exists: name a new file')],
    });
    // A hash that does not match.
    const framed = await etcdFile('framed', records, [], meta);
    const bytes = await fs.readFile(framed);
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0xff;
    await fs.writeFile(framed, bytes);
    expect(await run(['from-etcd', framed, '--out', out('hash')])).toMatchObject({ code: 1, err: [expect.stringContaining('integrity check failed')] });
    await expect(fs.access(out('hash'))).rejects.toThrow();
    // Our own backup is no etcd file; a bbolt file without etcd's buckets neither.
    expect(await run(['from-etcd', file, '--out', out('ours')])).toMatchObject({ code: 1, err: [expect.stringContaining('is not a bbolt database')] });
    const other = path.join(tmp, 'other.bolt');
    await writeBoltFile(other, [{ name: Buffer.from('things'), entries: [] }]);
    expect(await run(['from-etcd', other, '--out', out('other'), '--skip-hash-check'])).toMatchObject({
      code: 1,
      err: [expect.stringContaining("not etcd's backend")],
    });
    // A key the store keeps for itself.
    const reserved = await etcdFile('reserved', [[2, 0, false, kv('\u0001etcd/lease/1', 'x', 2, 2, 1)]], [], meta);
    expect(await run(['from-etcd', reserved, '--out', out('reserved')])).toMatchObject({ code: 1, err: [expect.stringContaining('cannot be carried')] });
    await expect(fs.access(out('reserved'))).rejects.toThrow();
    // to-etcd of a file that is etcd's already checks it and copies it; a damaged one is refused.
    const good = await etcdFile('good', records, [], meta);
    const again = await run(['to-etcd', good, '--out', out('again')]);
    expect(again).toMatchObject({ code: 0, err: [] });
    expect(again.out[0]).toBe(`${good} is etcd's backend file already: copied to ${out('again')} (1 keys and 0 leases at revision 2, the whole history)`);
    expect((await fs.readFile(out('again'))).equals(await fs.readFile(good))).toBe(true);
    expect(await run(['to-etcd', good, '--out', out('again')])).toMatchObject({ code: 1, err: [expect.stringContaining('exists: name a new file')] });
    expect(await run(['to-etcd', framed, '--out', out('flipped')])).toMatchObject({ code: 1, err: [expect.stringContaining('integrity check failed')] });
    await expect(fs.access(out('flipped'))).rejects.toThrow();
    expect((await run(['from-etcd', framed])).code).toBe(2);
    expect((await run(['from-etcd', framed, '--out', out('x'), '--name', 'n'])).code).toBe(2);
  });
});
