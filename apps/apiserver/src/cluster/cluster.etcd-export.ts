/**
 * The built-in store as an etcd backend file: what a node streams for `etcdctl snapshot save`
 * (etcdBackendOf), and what `npm run snapshot -- to-etcd` makes of a file in the store's own
 * snapshot format (exportForEtcd). A bbolt database with etcd's buckets, framed as `etcdctl
 * snapshot save` frames etcd's own (the SHA-256 of the database at its end). `etcdctl snapshot
 * status` reads it and `etcdctl snapshot restore` makes etcd members' data dirs from it, so a
 * cluster moves from the built-in store to an etcd cluster (then served with
 * `--storage-backend=etcd3`) keeping every key, value and revision: resourceVersions stay what
 * clients have seen (docs/backup.md).
 *
 * What the file holds (etcd 3.4's backend layout):
 * - bucket `key`: the history, as etcd's revision keys (8 bytes of main revision big-endian, `_`,
 *   8 bytes of sub revision, `t` after them for a deletion) with their mvccpb.KeyValue (key,
 *   create and mod revision, version, value, and the lease the key had at that revision, from
 *   the store's attachment records):
 *   - each key's version at the store's compacted revision C, at its mod revision (keys written
 *     by one revision get sub revisions in key order: the store does not keep their order);
 *   - every put and deletion after C, sub revisions numbered in the order they were made.
 *   So reads at any revision from C on, and watches from there, answer as the store answered.
 *   The store's own records (its lease tables under the reserved prefix, the cluster's member
 *   records) are left out, and with them the revisions that changed nothing else. When the
 *   store's last revisions are such, a tombstone of REVISION_MARK_KEY at the store's revision
 *   carries the revision over (etcd's current revision is its newest record's): etcd's restore
 *   skips a deletion of a key it never saw, so no key appears.
 * - bucket `lease`: each lease (8-byte big-endian id -> leasepb.Lease {ID, TTL});
 * - bucket `meta`: `finishedCompactRev` and `scheduledCompactRev` at C (none when the store was
 *   never compacted), `consistent_index` (the store's applied Raft index).
 * The old cluster's member records are left out, as `etcdctl snapshot restore` drops an etcd
 * backup's members.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { appendFile, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import protobuf from 'protobufjs';
import { type KeyValue, MvccStore, type MvccView } from '@app/mvcc';
import { findProtoFile } from '@app/raft';
import { ALARM_PREFIX, ATTACH_PREFIX, ETCD_RESERVED_PREFIX, LEASE_PREFIX, isReservedKey, writeBoltFile } from '@app/storage';
import { keyBytes } from '../etcd/etcd.convert.js';
import { MEMBER_PREFIX, REMOVED_PREFIX } from './cluster.members.js';
import { inspectSnapshotFile, refuseExisting, type SnapshotFileSummary } from './cluster.restore.js';

/** Keys read per page while listing the store. */
const EXPORT_PAGE = 1000;
/** Revisions of history read at a time. */
const HISTORY_WINDOW = 1000;
/** Bytes of values that end a window of history early (at the end of a revision). */
const HISTORY_WINDOW_BYTES = 4 << 20;

/** The key whose tombstone carries the store's revision when its last revisions are not carried. */
export const REVISION_MARK_KEY = `${ETCD_RESERVED_PREFIX}revision`;

/** What exportForEtcd wrote. */
export interface EtcdExportResult {
  snapshot: SnapshotFileSummary;
  /** The store's revision: etcd's current revision after a restore. */
  revision: number;
  /** The store's compacted revision: etcd's too (0: never compacted). */
  compacted: number;
  /** Live keys. */
  keys: number;
  /** Records of the key bucket: puts and deletions since the compacted revision. */
  changes: number;
  leases: number;
  /** Size of the written file (the database and its 32-byte hash). */
  bytes: number;
}

/** etcd's revision key: main and sub revision, big-endian, joined by `_`; `t` after them for a deletion. */
export function etcdRevisionKey(main: number, sub: number, tombstone = false): Buffer {
  const b = Buffer.alloc(tombstone ? 18 : 17);
  b.writeBigUInt64BE(BigInt(main), 0);
  b[8] = 0x5f;
  b.writeBigUInt64BE(BigInt(sub), 9);
  if (tombstone) b[17] = 0x74;
  return b;
}

/** True for the store's own records, which etcd does not get. */
const notCarried = (key: string) => isReservedKey(key) || key.startsWith(MEMBER_PREFIX) || key.startsWith(REMOVED_PREFIX) || key.startsWith(ALARM_PREFIX);

function u64be(n: bigint | number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n), 0);
  return b;
}

/** mvccpb.KeyValue (proto/etcd/kv.proto) and leasepb.Lease (ID = 1, TTL = 2, RemainingTTL = 3, all int64). */
export function etcdRecordTypes(): { keyValue: protobuf.Type; lease: protobuf.Type } {
  const file = findProtoFile('etcd/kv.proto');
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => (isAbsolute(target) ? target : join(dirname(file), target));
  root.loadSync(file, { keepCase: true });
  const lease = new protobuf.Type('Lease')
    .add(new protobuf.Field('ID', 1, 'int64'))
    .add(new protobuf.Field('TTL', 2, 'int64'))
    .add(new protobuf.Field('RemainingTTL', 3, 'int64'));
  new protobuf.Root().define('leasepb').add(lease);
  return { keyValue: root.lookupType('mvccpb.KeyValue'), lease };
}

/** Writes `out` from the snapshot file `file` (see the module comment); `out` must not exist. */
export async function exportForEtcd(o: { file: string; out: string; skipHashCheck?: boolean }): Promise<EtcdExportResult> {
  await refuseExisting(o.out);
  const snapshot = await inspectSnapshotFile(o.file, { skipHashCheck: o.skipHashCheck });
  const work = await mkdtemp(join(tmpdir(), 'kapi-etcd-export-'));
  try {
    const store = await MvccStore.open(join(work, 'mvcc'));
    try {
      await store.importSnapshotFrom(() => createReadStream(o.file, { start: 0, end: snapshot.bytes - 1, highWaterMark: 1 << 20 }));
      return { snapshot, ...(await writeEtcdBackend(store, o.out)) };
    } finally {
      await store.close();
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * The running `store` as etcd's backend file (what `etcdctl snapshot save` gets from etcd),
 * written to a new file in `dir` from one consistent view of it (MvccStore.view: writes go on
 * meanwhile). The caller removes the returned file.
 */
export async function etcdBackendOf(store: MvccStore, dir: string): Promise<{ file: string } & Omit<EtcdExportResult, 'snapshot'>> {
  const out = join(dir, `kapi-etcd-snapshot-${randomBytes(6).toString('hex')}.db`);
  try {
    return { file: out, ...(await writeEtcdBackend(store, out)) };
  } catch (e) {
    await rm(out, { force: true });
    throw e;
  }
}

/** Every record under `prefix` in `view` at `atRevision` (small tables: lease records). */
async function readAll(view: MvccView, prefix: string, atRevision: number): Promise<KeyValue[]> {
  const kvs: KeyValue[] = [];
  for (let after: string | undefined; ;) {
    const page = await view.range(prefix, { limit: EXPORT_PAGE, atRevision, ...(after !== undefined ? { startAfter: after } : {}) });
    kvs.push(...page.kvs);
    if (!page.more) return kvs;
    after = page.kvs[page.kvs.length - 1]!.key;
  }
}

/** Writes the new file `out` from a consistent view of `store` (see the module comment). */
async function writeEtcdBackend(store: MvccStore, out: string): Promise<Omit<EtcdExportResult, 'snapshot'>> {
  const view = await store.view();
  try {
    return await writeView(view, out);
  } finally {
    await view.close();
  }
}

async function writeView(view: MvccView, out: string): Promise<Omit<EtcdExportResult, 'snapshot'>> {
  const { revision, compacted, applied } = view.header;
  const { keyValue, lease } = etcdRecordTypes();
  const encode = (message: Record<string, unknown>) => Buffer.from(keyValue.encode(keyValue.fromObject(message)).finish());
  const text = (b: Uint8Array) => Buffer.from(b).toString('utf8');
  // Each key's lease as of the revision being written: the attachment records at the compacted
  // revision, then their changes as the history goes (an attachment is written in the same
  // revision as the put that sets it).
  const attached = new Map<string, string>();
  if (compacted > 0) for (const kv of await readAll(view, ATTACH_PREFIX, compacted)) attached.set(kv.key.slice(ATTACH_PREFIX.length), text(kv.value));
  // The keys at the compacted revision with their mod revisions, in etcd's order; their values
  // are read again one by one as the bucket is written, so memory holds the key list.
  const base: { key: string; bytes: Buffer; modRevision: number }[] = [];
  if (compacted > 0) {
    for (let after: string | undefined; ;) {
      const page = await view.range('', { limit: EXPORT_PAGE, atRevision: compacted, ...(after !== undefined ? { startAfter: after } : {}) });
      for (const kv of page.kvs) if (!notCarried(kv.key)) base.push({ key: kv.key, bytes: keyBytes(kv.key), modRevision: kv.modRevision });
      if (!page.more) break;
      after = page.kvs[page.kvs.length - 1]!.key;
    }
  }
  base.sort((a, b) => a.modRevision - b.modRevision || Buffer.compare(a.bytes, b.bytes));
  const live = new Set(base.map((k) => k.key));
  let changes = 0;
  const putRecord = (key: Buffer, kv: KeyValue, leaseId: string) =>
    encode({ key, create_revision: kv.createRevision, mod_revision: kv.modRevision, version: kv.version, value: Buffer.from(kv.value), lease: leaseId });
  async function* keyEntries(): AsyncGenerator<readonly [Buffer, Buffer]> {
    let sub = 0;
    for (const [i, k] of base.entries()) {
      sub = i > 0 && base[i - 1]!.modRevision === k.modRevision ? sub + 1 : 0;
      const kv = await view.get(k.key, compacted);
      if (!kv) throw new Error(`bolt export: ${k.key} is missing at revision ${compacted}`);
      changes++;
      yield [etcdRevisionKey(kv.modRevision, sub), putRecord(k.bytes, kv, attached.get(k.key) ?? '0')];
    }
    let newest = compacted;
    for (let after = compacted; after < revision;) {
      const { events, through } = await view.eventsWindow(after, after + HISTORY_WINDOW, HISTORY_WINDOW_BYTES);
      after = through;
      for (let i = 0; i < events.length;) {
        let end = i;
        while (end < events.length && events[end]!.revision === events[i]!.revision) end++;
        const group = events.slice(i, end);
        i = end;
        for (const ev of group) {
          if (!ev.key.startsWith(ATTACH_PREFIX)) continue;
          if (ev.type === 'put') attached.set(ev.key.slice(ATTACH_PREFIX.length), text(ev.value.value));
          else attached.delete(ev.key.slice(ATTACH_PREFIX.length));
        }
        sub = 0;
        for (const ev of group) {
          if (notCarried(ev.key)) continue;
          changes++;
          newest = ev.revision;
          const key = keyBytes(ev.key);
          if (ev.type === 'delete') {
            live.delete(ev.key);
            yield [etcdRevisionKey(ev.revision, sub++, true), encode({ key })];
          } else {
            live.add(ev.key);
            yield [etcdRevisionKey(ev.revision, sub++), putRecord(key, ev.value, attached.get(ev.key) ?? '0')];
          }
        }
      }
    }
    if (newest < revision) yield [etcdRevisionKey(revision, 0, true), encode({ key: keyBytes(REVISION_MARK_KEY) })];
  }
  const leaseEntries = (await readAll(view, LEASE_PREFIX, revision))
    .map((kv) => ({ id: BigInt(kv.key.slice(LEASE_PREFIX.length)), ttl: (JSON.parse(text(kv.value)) as { ttl: number }).ttl }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((l): [Buffer, Buffer] => [u64be(l.id), Buffer.from(lease.encode(lease.fromObject({ ID: l.id.toString(), TTL: l.ttl })).finish())]);
  const compactedKey = etcdRevisionKey(compacted, 0);
  await writeBoltFile(out, [
    { name: Buffer.from('key'), entries: keyEntries() },
    { name: Buffer.from('lease'), entries: leaseEntries },
    {
      name: Buffer.from('meta'),
      entries: [
        [Buffer.from('consistent_index'), u64be(applied)],
        ...(compacted > 0 ? [[Buffer.from('finishedCompactRev'), compactedKey] as const, [Buffer.from('scheduledCompactRev'), compactedKey] as const] : []),
      ],
    },
  ]);
  // etcdctl's framing: the database, then its SHA-256 (the database is whole pages, so 512n).
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(out, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
  await appendFile(out, hash.digest());
  return { revision, compacted, keys: live.size, changes, leases: leaseEntries.length, bytes: (await stat(out)).size };
}
