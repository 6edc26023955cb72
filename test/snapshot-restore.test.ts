/**
 * Backup and restore (docs/backup.md): `etcdctl snapshot save` from a three-node cluster, the
 * cluster lost, `npm run snapshot -- restore` into three new data dirs of a cluster with other
 * member names and ports, and the new cluster serving what the snapshot held: the API's objects
 * with their resourceVersions, the keys etcdctl wrote, none of the writes after the snapshot, only
 * the new members, and new writes above the snapshot's revision. Then the snapshot of one node,
 * which is etcd's backend format: `etcdctl snapshot status` reads it, `etcdctl snapshot restore`
 * makes an etcd 3.4 member of it with the same keys, values, revisions, history
 * (every past revision reads the same) and lease, and an API server on that etcd (`--storage-backend=etcd3`) serves the objects with the
 * resourceVersions they had. A snapshot saved while the API's writes go on holds one revision:
 * etcd restored from it reads as the node read there. And the way back: an API server on etcd 3.4 (`--storage-backend=etcd3`)
 * and etcdctl write, `etcdctl snapshot save` against etcd, `npm run snapshot -- from-etcd` makes
 * the file a backup of ours, and a node restored from it serves the objects with their
 * resourceVersions and uids, and etcdctl the keys with their revisions, history since etcd's
 * compaction and lease.
 *
 * Without etcdctl (KAPI_TEST_WITHOUT=etcdctl) the suite does not run (the save needs it).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPki } from '@app/pki';
import { startEtcd } from './support/etcd.js';
import { prerequisite } from './support/prereq.js';
import { run } from './support/run.js';
import { closeHttpClients, getFreePorts, repoRoot, request, startServer, type ServerHandle } from './support/server.js';

describe('etcdctl snapshot save, then a new cluster restored from the file', () => {
  let dir: string;
  let have = false;
  let haveEtcd = false;
  const servers: ServerHandle[] = [];

  const cm = (name: string, data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
  const etcdctl = async (endpoint: string, args: string[], input?: string): Promise<string> => {
    const r = await run('etcdctl', ['--endpoints', endpoint, ...args], { ETCDCTL_API: '3' }, input);
    if (r.code !== 0) throw new Error(`etcdctl ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
    return r.stdout;
  };
  /**
   * What a Range of the whole keyspace (`get "" --from-key --rev R`) answers at each revision R
   * of [from, to]: keys as text with their values, revisions and leases (`keep` chooses keys).
   * Read through etcd's JSON gateway, which both systems serve on the client URL: one HTTP
   * request per revision instead of an etcdctl process (int64 fields come as strings there, and
   * zero fields may be left out; they are compared as decimal text).
   */
  const readsAt = async (endpoint: string, from: number, to: number, keep: (key: string) => boolean = () => true) => {
    const out: Record<number, string[]> = {};
    const all = Buffer.from([0]).toString('base64');
    for (let r = from; r <= to; r++) {
      const res = await fetch(`${endpoint}/v3/kv/range`, { method: 'POST', body: JSON.stringify({ key: all, range_end: all, revision: r }) });
      if (res.status !== 200) throw new Error(`range at revision ${r} on ${endpoint}: ${res.status} ${await res.text()}`);
      type Num = number | string | undefined;
      const body = (await res.json()) as { kvs?: { key: string; value?: string; create_revision: Num; mod_revision: Num; version: Num; lease?: Num }[] };
      const n = (v: Num) => String(v ?? 0);
      out[r] = (body.kvs ?? [])
        .map((kv) => ({ ...kv, key: Buffer.from(kv.key, 'base64').toString() }))
        .filter((kv) => keep(kv.key))
        .map((kv) => `${kv.key}=${kv.value ?? ''}@${n(kv.create_revision)}/${n(kv.mod_revision)}/${n(kv.version)}/${n(kv.lease)}`);
    }
    return out;
  };

  interface Layout {
    names: string[];
    ports: number[];
    /** `--initial-cluster` of the members. */
    initial: string;
    /** Their cleartext etcd client URLs. */
    endpoints: string[];
  }
  /** Fresh peer and etcd client ports for members `names`. */
  const layout = async (names: string[]): Promise<Layout> => {
    const ports = await getFreePorts(names.length * 2);
    return {
      names,
      ports,
      initial: names.map((n, i) => `${n}=127.0.0.1:${ports[i]}`).join(','),
      endpoints: names.map((_, i) => `http://127.0.0.1:${ports[names.length + i]}`),
    };
  };
  /** Starts the members of `l`, each on its data dir under `base`. */
  const startCluster = async (l: Layout, base: string): Promise<ServerHandle[]> => {
    const nodes = await Promise.all(
      l.names.map((n, i) =>
        startServer({
          args: [
            '--name',
            n,
            '--pki-dir',
            join(dir, 'pki'),
            '--listen-peer-port',
            String(l.ports[i]),
            '--initial-cluster',
            l.initial,
            '--listen-client-urls',
            l.endpoints[i]!,
          ],
          dataDir: join(base, n),
          readyTimeoutMs: 40_000,
        }),
      ),
    );
    servers.push(...nodes);
    return nodes;
  };

  /** A single node with a cleartext etcd endpoint, in the data dir `name`. */
  const singleNode = async (name: string) => {
    const [port] = await getFreePorts(1);
    const endpoint = `http://127.0.0.1:${port}`;
    const node = await startServer({ args: ['--listen-client-urls', endpoint], dataDir: join(dir, name), readyTimeoutMs: 40_000 });
    servers.push(node);
    return { node, endpoint };
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kapi-restore-'));
    have = prerequisite('etcdctl', 'etcdctl snapshot save and a restored cluster (test/snapshot-restore.test.ts)');
    haveEtcd = prerequisite('etcd', 'a backup of the built-in store restored into etcd (test/snapshot-restore.test.ts)');
    await createPki({ outDir: join(dir, 'pki'), hosts: ['127.0.0.1'] });
  }, 60_000);

  afterAll(async () => {
    for (const s of servers) await s.cleanup();
    await closeHttpClients();
    await rm(dir, { recursive: true, force: true });
  });

  it('restores the objects, keys and revisions of the snapshot, with the new members only', async () => {
    if (!have) return;
    const old = await layout(['n1', 'n2', 'n3']);
    const oldNodes = await startCluster(old, join(dir, 'old'));
    const n1 = oldNodes[0]!;
    const created = await request(n1, 'POST', '/api/v1/namespaces/default/configmaps', { body: cm('kept', { a: '1' }) });
    expect(created.status).toBe(201);
    const kept = created.json<{ metadata: { resourceVersion: string; uid: string } }>().metadata;
    await etcdctl(old.endpoints[1]!, ['put', '/backup/a', 'one']);
    await etcdctl(old.endpoints[1]!, ['put', '/backup/b', 'two']);
    // An alarm raised when the snapshot is taken names an old member: it does not come along.
    const alarm = (action: string) =>
      fetch(`${old.endpoints[0]}/v3/maintenance/alarm`, { method: 'POST', body: JSON.stringify({ action, memberID: '1', alarm: 'NOSPACE' }) }).then(
        (r) => r.status,
      );
    expect(await alarm('ACTIVATE')).toBe(200);
    const file = join(dir, 'backup.db');
    expect(await etcdctl(old.endpoints[2]!, ['snapshot', 'save', file])).toContain(`Snapshot saved at ${file}`);
    const savedRev = JSON.parse(await etcdctl(old.endpoints[0]!, ['get', '/backup/a', '-w', 'json'])) as { header: { revision: number } };
    expect((await etcdctl(old.endpoints[0]!, ['alarm', 'list'])).trim()).toBe('memberID:1 alarm:NOSPACE');
    expect(await alarm('DEACTIVATE')).toBe(200);
    // Writes after the snapshot are not in it.
    await etcdctl(old.endpoints[0]!, ['put', '/backup/c', 'three']);
    expect((await request(n1, 'POST', '/api/v1/namespaces/default/configmaps', { body: cm('later', { b: '2' }) })).status).toBe(201);

    const status = await run('node', [join(repoRoot(), 'dist/cluster/snapshot.cli.js'), 'status', file, '-w', 'json']);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ revision: savedRev.header.revision });
    // It is etcd's backend format: etcdctl reads it too.
    expect(JSON.parse(await etcdctl(old.endpoints[0]!, ['snapshot', 'status', file, '-w', 'json']))).toMatchObject({ revision: savedRev.header.revision });

    // The whole cluster is lost.
    for (const s of oldNodes) await s.kill();

    const fresh = await layout(['m1', 'm2', 'm3']);
    const { names, initial, endpoints } = fresh;
    for (const n of names) {
      const r = await run('node', [
        join(repoRoot(), 'dist/cluster/snapshot.cli.js'),
        'restore',
        file,
        '--data-dir',
        join(dir, 'new', n),
        '--name',
        n,
        '--initial-cluster',
        initial,
      ]);
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
      expect(r.stdout).toContain(`member ${n} of ${initial}`);
    }
    // The restored members start on the peer ports the restore named.
    const restored = await startCluster(fresh, join(dir, 'new'));

    for (const node of restored) {
      const got = await request(node, 'GET', '/api/v1/namespaces/default/configmaps/kept');
      expect(got.status).toBe(200);
      expect(got.json<{ metadata: { resourceVersion: string; uid: string }; data: unknown }>()).toMatchObject({ metadata: kept, data: { a: '1' } });
      expect((await request(node, 'GET', '/api/v1/namespaces/default/configmaps/later')).status).toBe(404);
    }
    const members = (await request(restored[1]!, 'GET', '/cluster/members')).json<{ members: { name: string; role: string }[] }>().members;
    expect(members.map((m) => [m.name, m.role])).toEqual(names.map((n) => [n, 'voter']));

    expect((await etcdctl(endpoints.join(','), ['get', '/backup/', '--prefix'])).split('\n').filter((l) => l !== '')).toEqual([
      '/backup/a',
      'one',
      '/backup/b',
      'two',
    ]);
    const etcdMembers = JSON.parse(await etcdctl(endpoints[0]!, ['member', 'list', '-w', 'json'])) as { members: { name: string; peerURLs: string[] }[] };
    expect(etcdMembers.members.map((m) => m.name).sort()).toEqual(names);
    expect(await etcdctl(endpoints[0]!, ['alarm', 'list'])).toBe('');

    // A watch from the snapshot's resourceVersion is served: the history came along.
    const watch = await request(restored[2]!, 'GET', `/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${kept.resourceVersion}&timeoutSeconds=1`);
    expect(watch.status).toBe(200);
    // (An expired resourceVersion would end the stream with an ERROR event of 410.)
    expect(watch.body).not.toContain('"ERROR"');
    const next = await request(restored[0]!, 'POST', '/api/v1/namespaces/default/configmaps', { body: cm('after-restore', { c: '3' }) });
    expect(next.status).toBe(201);
    expect(Number(next.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion)).toBeGreaterThan(savedRev.header.revision);
  });

  it("a node's snapshot restores an etcd member with etcdctl: the same keys, revisions and history, and an API server on it serves the objects", async () => {
    if (!have || !haveEtcd) return;
    const { node, endpoint } = await singleNode('single');
    const created = await request(node, 'POST', '/api/v1/namespaces/default/configmaps', { body: cm('moved', { m: 'v' }) });
    expect(created.status).toBe(201);
    const moved = created.json<{ metadata: { resourceVersion: string; uid: string } }>().metadata;
    await etcdctl(endpoint, ['put', '/x/a', '1']);
    await etcdctl(endpoint, ['put', '/x/a', '2']);
    // Two keys written by one revision.
    await etcdctl(endpoint, ['txn', '-i'], '\nput /x/t2 b\nput /x/t1 a\n\n\n');
    // Values of 1 MiB, each with the previous one: the history holds more than the 4 MiB that
    // end a window of the export, so the file is written from several windows.
    for (const fill of ['A', 'B', 'C', 'D']) await etcdctl(endpoint, ['put', '/x/big'], fill.repeat(1 << 20));
    const leaseId = /lease ([0-9a-f]+) granted/.exec(await etcdctl(endpoint, ['lease', 'grant', '600']))![1]!;
    await etcdctl(endpoint, ['put', '/x/leased', 'l', '--lease', leaseId]);
    await etcdctl(endpoint, ['put', '/x/gone', 'g']);
    // The last write is a delete: the revision counter must still carry on from it.
    await etcdctl(endpoint, ['del', '/x/gone']);
    interface Kvs {
      header: { revision: number };
      kvs?: { key: string; value: string; create_revision: number; mod_revision: number; version: number; lease?: number }[];
    }
    const file = join(dir, 'single.db');
    await etcdctl(endpoint, ['snapshot', 'save', file]);
    // etcd's status reads the revision of the newest record (the delete's tombstone, or the mark
    // carrying the revision) and counts every record: each change, maybe the mark, the lease, the meta record.
    const st = JSON.parse(await etcdctl(endpoint, ['snapshot', 'status', file, '-w', 'json'])) as { revision: number; totalKey: number };
    // The server's own writes (its Lease renewals, controllers) may land at any time, also
    // between a read and the save: the node's state is read at the snapshot's revision, and the
    // etcd restored from the file must hold exactly that state.
    const rev = st.revision;
    expect(rev).toBeGreaterThanOrEqual(Number(moved.resourceVersion) + 10);
    const before = JSON.parse(await etcdctl(endpoint, ['get', '', '--from-key', '--rev', String(rev), '-w', 'json'])) as Kvs;
    // The old cluster's member records stay behind, as etcd's restore drops an etcd backup's members.
    const carried = (key: string) => !key.startsWith('/kapi/cluster/');
    const kept = (before.kvs ?? []).filter((kv) => carried(Buffer.from(kv.key, 'base64').toString()));
    // A node's snapshot is etcd's format already: to-etcd checks it and copies it.
    const copy = join(dir, 'copy.db');
    const conv = await run('node', [join(repoRoot(), 'dist/cluster/snapshot.cli.js'), 'to-etcd', file, '--out', copy]);
    expect({ code: conv.code, stderr: conv.stderr }).toEqual({ code: 0, stderr: '' });
    expect(conv.stdout).toContain(`is etcd's backend file already: copied to ${copy} (${kept.length} keys and 1 leases at revision ${rev}, the whole history)`);
    expect((await readFile(copy)).equals(await readFile(file))).toBe(true);
    expect(st.totalKey).toBeGreaterThan(kept.length + 2);
    // Every revision reads the same on the node (its whole history) and later on etcd.
    const history = await readsAt(endpoint, 1, rev, carried);
    // The reads see the keys and their changes: the leased key at the end, each value of /x/big on its way.
    expect(history[rev]!.filter((l) => /^\/x\/(leased|a)=/.test(l))).toEqual([
      expect.stringMatching(/^\/x\/a=Mg==@\d+\/\d+\/2\/0$/),
      expect.stringMatching(new RegExp(`^/x/leased=bA==@\\d+/\\d+/1/${BigInt(`0x${leaseId}`)}$`)),
    ]);
    expect(new Set(Object.values(history).map((keys) => keys.find((l) => l.startsWith('/x/big='))?.slice(7, 12))).size).toBe(5);

    const etcd = await startEtcd({ members: 1, restoreFrom: file });
    try {
      const url = etcd.members[0]!.clientURL;
      const after = JSON.parse(await etcdctl(url, ['get', '', '--from-key', '-w', 'json'])) as Kvs;
      const strip = (kv: NonNullable<Kvs['kvs']>[number]) => ({ ...kv, lease: kv.lease ?? 0 });
      expect((after.kvs ?? []).map(strip)).toEqual(kept.map(strip));
      expect(after.header.revision).toBe(rev);
      // The lease came along with its key (JSON numbers lose the id's low digits: etcdctl's text is compared).
      expect(await etcdctl(url, ['lease', 'list'])).toContain(leaseId);
      expect(await etcdctl(url, ['lease', 'timetolive', leaseId, '--keys'])).toMatch(/granted with TTL\(600s\).*attached keys\(\[\/x\/leased\]\)/);
      // The history came along: every past revision reads as it did on the node.
      expect(await readsAt(url, 1, rev)).toEqual(history);
      const put = JSON.parse(await etcdctl(url, ['put', '/x/new', 'n', '-w', 'json'])) as { header: { revision: number } };
      expect(put.header.revision).toBe(rev + 1);

      // An API server on that etcd serves the object with the resourceVersion clients saw.
      const onEtcd = await startServer({ args: ['--storage-backend', 'etcd3', '--etcd-servers', url], readyTimeoutMs: 40_000 });
      servers.push(onEtcd);
      const got = await request(onEtcd, 'GET', '/api/v1/namespaces/default/configmaps/moved');
      expect(got.status).toBe(200);
      expect(got.json<{ metadata: { resourceVersion: string; uid: string }; data: unknown }>()).toMatchObject({ metadata: moved, data: { m: 'v' } });
      const next = await request(onEtcd, 'POST', '/api/v1/namespaces/default/configmaps', { body: cm('on-etcd', { e: '1' }) });
      expect(next.status).toBe(201);
      expect(Number(next.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion)).toBeGreaterThan(rev + 1);
    } finally {
      await etcd.cleanup();
    }
  }, 120_000);
  it('a snapshot taken while writes go on holds one revision: etcd restored from it reads as the node read at that revision', async () => {
    if (!have || !haveEtcd) return;
    const { node, endpoint } = await singleNode('busy');
    // Creates, updates and deletes of ConfigMaps keep going until the snapshot is saved.
    let writing = true;
    let writes = 0;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        const name = `busy-${i % 20}`;
        const r = await request(node, 'POST', '/api/v1/namespaces/default/configmaps', { body: cm(name, { i: String(i) }) });
        if (r.status === 409) await request(node, 'DELETE', `/api/v1/namespaces/default/configmaps/${name}`);
        writes++;
      }
    })();
    while (writes < 20) await new Promise((r) => setTimeout(r, 10));
    const file = join(dir, 'busy.db');
    await etcdctl(endpoint, ['snapshot', 'save', file]);
    const saved = writes;
    while (writes < saved + 5) await new Promise((r) => setTimeout(r, 10));
    writing = false;
    await writer;
    const { revision } = JSON.parse(await etcdctl(endpoint, ['snapshot', 'status', file, '-w', 'json'])) as { revision: number };
    // The node went on past the snapshot's revision.
    const now = JSON.parse(await etcdctl(endpoint, ['get', 'x', '-w', 'json'])) as { header: { revision: number } };
    expect(now.header.revision).toBeGreaterThan(revision);
    const carried = (key: string) => !key.startsWith('/kapi/cluster/');
    const history = await readsAt(endpoint, revision - 5, revision, carried);
    const etcd = await startEtcd({ members: 1, restoreFrom: file });
    try {
      const url = etcd.members[0]!.clientURL;
      expect(await readsAt(url, revision - 5, revision)).toEqual(history);
      const put = JSON.parse(await etcdctl(url, ['put', '/busy/next', 'n', '-w', 'json'])) as { header: { revision: number } };
      expect(put.header.revision).toBe(revision + 1);
    } finally {
      await etcd.cleanup();
    }
  }, 120_000);

  it('an etcd snapshot of an API server on etcd becomes a backup of ours: a node restored from it serves the objects and keys with their revisions and history', async () => {
    if (!have || !haveEtcd) return;
    interface Kvs {
      header: { revision: number };
      kvs?: { key: string; value: string; create_revision: number; mod_revision: number; version: number; lease?: number }[];
    }
    const etcd = await startEtcd({ members: 1 });
    let saved: string;
    let before: Kvs;
    let object: { resourceVersion: string; uid: string };
    let leaseId: string;
    let revision: number;
    let compacted: number;
    let history: Record<number, string[]>;
    try {
      const url = etcd.members[0]!.clientURL;
      const onEtcd = await startServer({ args: ['--storage-backend', 'etcd3', '--etcd-servers', url], readyTimeoutMs: 40_000 });
      try {
        const created = await request(onEtcd, 'POST', '/api/v1/namespaces/default/configmaps', { body: cm('from-etcd', { f: 'e' }) });
        expect(created.status).toBe(201);
        object = created.json<{ metadata: { resourceVersion: string; uid: string } }>().metadata;
        const updated = await request(onEtcd, 'PUT', '/api/v1/namespaces/default/configmaps/from-etcd', {
          body: { ...cm('from-etcd', { f: 'updated' }), metadata: { name: 'from-etcd', resourceVersion: object.resourceVersion } },
        });
        expect(updated.status).toBe(200);
        object = updated.json<{ metadata: { resourceVersion: string; uid: string } }>().metadata;
      } finally {
        await onEtcd.cleanup();
      }
      await etcdctl(url, ['put', '/y/a', '1']);
      await etcdctl(url, ['put', '/y/a', '2']);
      await etcdctl(url, ['txn', '-i'], '\nput /y/t2 b\nput /y/t1 a\n\n\n');
      leaseId = /lease ([0-9a-f]+) granted/.exec(await etcdctl(url, ['lease', 'grant', '600']))![1]!;
      await etcdctl(url, ['put', '/y/leased', 'l', '--lease', leaseId]);
      await etcdctl(url, ['put', '/y/gone', 'g']);
      await etcdctl(url, ['del', '/y/gone']);
      // Compacted at the first put of /y/a: what came before is gone, what came after is history.
      compacted = Number(/mod_revision":(\d+)/.exec(await etcdctl(url, ['get', '/y/a', '-w', 'json']))![1]) - 1;
      await etcdctl(url, ['compaction', String(compacted)]);
      before = JSON.parse(await etcdctl(url, ['get', '/y/', '--prefix', '-w', 'json'])) as Kvs;
      revision = before.header.revision;
      history = await readsAt(url, compacted, revision);
      saved = join(dir, 'etcd-saved.db');
      await etcdctl(url, ['snapshot', 'save', saved]);
    } finally {
      await etcd.cleanup();
    }

    const backup = join(dir, 'from-etcd.db');
    const conv = await run('node', [join(repoRoot(), 'dist/cluster/snapshot.cli.js'), 'from-etcd', saved, '--out', backup]);
    expect({ code: conv.code, stderr: conv.stderr }).toEqual({ code: 0, stderr: '' });
    expect(conv.stdout).toContain(`leases at revision ${revision!}, history from revision ${compacted!} (`);
    const restored = await run('node', [join(repoRoot(), 'dist/cluster/snapshot.cli.js'), 'restore', backup, '--data-dir', join(dir, 'from-etcd-node')]);
    expect({ code: restored.code, stderr: restored.stderr }).toEqual({ code: 0, stderr: '' });

    const { node, endpoint } = await singleNode('from-etcd-node');
    // The object, with the resourceVersion and uid clients of the API server on etcd saw.
    const got = await request(node, 'GET', '/api/v1/namespaces/default/configmaps/from-etcd');
    expect(got.status).toBe(200);
    expect(got.json<{ metadata: unknown; data: unknown }>()).toMatchObject({ metadata: object!, data: { f: 'updated' } });
    // The keys etcdctl wrote, with their revisions, versions and lease.
    const after = JSON.parse(await etcdctl(endpoint, ['get', '/y/', '--prefix', '-w', 'json'])) as Kvs;
    expect(after.kvs).toEqual(before!.kvs);
    expect(after.header.revision).toBeGreaterThanOrEqual(revision!);
    expect(await etcdctl(endpoint, ['lease', 'timetolive', leaseId!, '--keys'])).toMatch(/granted with TTL\(600s\).*attached keys\(\[\/y\/leased\]\)/);
    // etcd's history came along: every revision from its compaction on reads the same, and
    // before it is compacted, as on etcd.
    expect(await readsAt(endpoint, compacted!, revision!)).toEqual(history!);
    const past = await run('etcdctl', ['--endpoints', endpoint, 'get', '/y/a', '--rev', String(compacted! - 1)], { ETCDCTL_API: '3' });
    expect(past.stderr).toContain('required revision has been compacted');
    // New writes go on above it.
    const next = await request(node, 'POST', '/api/v1/namespaces/default/configmaps', { body: cm('after-move', { a: '1' }) });
    expect(next.status).toBe(201);
    expect(Number(next.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion)).toBeGreaterThan(revision!);
  }, 120_000);
});
