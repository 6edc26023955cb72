/**
 * Disk faults on one node of a three-node cluster (docs/disk-faults.md): the other two, a
 * majority, keep taking writes and serving Most Recent reads while one follower's disk is full,
 * fails its fsyncs, or is slow; the faulty follower catches up once its disk is healthy again
 * (by itself after a full disk, after a restart once it stopped on an I/O error). A leader
 * whose disk is full stops answering its followers, which elect another leader among them.
 * A follower whose Raft log is corrupt refuses to start; it is removed and a new, empty member
 * takes its place, which catches up from the others.
 *
 * Every node runs with the test-only switch on one shared control file; each plan names the
 * faulty node's data directory in `match`, so only that node's writes fail.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { NODE_NAMES, type TestCluster, rawPost, startThreeNodeCluster } from './support/cluster.helper.js';
import { type ServerHandle, getFreePort, metricSum, metricValue, request, startServer, waitFor } from './support/server.js';

const CM = '/api/v1/namespaces/default/configmaps';

const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v: name } });

describe('disk faults on one node of three', () => {
  let dir: string;
  let control: string;
  let cluster: TestCluster;
  const added: ServerHandle[] = [];
  const previous = process.env.KAPI_TEST_FAULTS;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kapi-diskfaults-ctl-'));
    control = join(dir, 'faults.json');
    await writeFile(control, '');
    // The cluster helper passes the same flags to every node; the nodes inherit this.
    process.env.KAPI_TEST_FAULTS = '1';
    cluster = await startThreeNodeCluster('kapi-diskfaults-cluster-', ['--test-disk-faults', control]);
  }, 90_000);
  afterAll(async () => {
    for (const h of added) await h.cleanup();
    await cluster?.cleanup();
    if (previous === undefined) delete process.env.KAPI_TEST_FAULTS;
    else process.env.KAPI_TEST_FAULTS = previous;
    await rm(dir, { recursive: true, force: true });
  });
  const setFaults = (plan: object) => writeFile(control, JSON.stringify(plan));
  afterEach(() => setFaults({}));

  /** The current leader and the two followers, the first of which is made faulty. */
  const roles = async (): Promise<{ leader: ServerHandle; faulty: ServerHandle; healthy: ServerHandle }> => {
    const leader = await waitFor('a leader', async () => {
      for (const n of cluster.nodes) if (n.exited === undefined && (await metricValue(n, 'etcd_server_is_leader')) === 1) return n;
      return undefined;
    });
    const [faulty, healthy] = cluster.nodes.filter((n) => n !== leader);
    return { leader, faulty: faulty!, healthy: healthy! };
  };

  /** Writes `names` through the leader and reads each back (Most Recent) from both healthy nodes. */
  const writesAndReadsServed = async (leader: ServerHandle, healthy: ServerHandle, names: string[]): Promise<void> => {
    for (const name of names) {
      expect((await request(leader, 'POST', CM, { body: cm(name) })).status).toBe(201);
      for (const n of [leader, healthy]) expect((await request(n, 'GET', `${CM}/${name}`)).status).toBe(200);
    }
  };

  const caughtUp = (node: ServerHandle, name: string) =>
    waitFor(`${name} on the recovered node`, async () => (await request(node, 'GET', `${CM}/${name}`)).status === 200, 30_000);

  it('a full disk on a follower: the others serve on, the follower reports it and catches up once space is back', async () => {
    const { leader, faulty, healthy } = await roles();
    await setFaults({ write: 'ENOSPC', match: `${faulty.dataDir}/` });
    await writesAndReadsServed(leader, healthy, ['full-1', 'full-2', 'full-3']);
    await waitFor('the faulty node to report its full disk', async () => (await metricValue(faulty, 'kapi_storage_disk_full')) === 1);
    expect((await request(faulty, 'GET', '/readyz?verbose', { identity: 'anonymous' })).body).toContain('[-]storage-disk failed');
    expect(await metricValue(leader, 'kapi_storage_disk_full')).toBe(0);
    await writesAndReadsServed(leader, healthy, ['full-4']);
    await setFaults({});
    await caughtUp(faulty, 'full-4');
    expect(await metricValue(faulty, 'kapi_storage_disk_full')).toBe(0);
    expect(faulty.exited).toBeUndefined();
  }, 60_000);

  it('a follower whose fsync fails stops; the others serve on; restarted, it catches up', async () => {
    const { leader, faulty, healthy } = await roles();
    await setFaults({ fsync: 'EIO', match: `${faulty.dataDir}/` });
    await writesAndReadsServed(leader, healthy, ['eio-1', 'eio-2']);
    await waitFor('the faulty node to stop', async () => faulty.exited !== undefined, 20_000);
    expect(faulty.exited).toEqual({ code: 1, signal: null });
    expect(faulty.stderr).toMatch(/fatal: storage failure: IO error: .*Input\/output error \(injected on fsync\)/);
    await writesAndReadsServed(leader, healthy, ['eio-3']);
    await setFaults({});
    await faulty.start();
    await caughtUp(faulty, 'eio-3');
  }, 60_000);

  it('a slow fsync on a follower: writes and reads go on, the follower keeps up', async () => {
    const { leader, faulty, healthy } = await roles();
    await setFaults({ fsyncDelayMs: 200, match: `${faulty.dataDir}/` });
    await writesAndReadsServed(leader, healthy, ['slow-1', 'slow-2', 'slow-3']);
    await caughtUp(faulty, 'slow-3');
    expect(await metricSum(faulty, 'kapi_test_disk_faults_injected_total')).toBeGreaterThan(0);
    expect(faulty.exited).toBeUndefined();
  }, 60_000);

  it('a full disk on the leader: the other two elect a leader and serve on; the old leader catches up once space is back', async () => {
    const { leader: stuck } = await roles();
    const others = cluster.nodes.filter((n) => n !== stuck);
    await setFaults({ write: 'ENOSPC', match: `${stuck.dataDir}/` });
    // Its next write (a lease renewal, a controller's update: there is always one) waits for space.
    await waitFor('the leader to report its full disk', async () => (await metricValue(stuck, 'kapi_storage_disk_full')) === 1);
    const leader = await waitFor(
      'a new leader among the other two',
      async () => {
        for (const n of others) if ((await metricValue(n, 'etcd_server_is_leader')) === 1) return n;
        return undefined;
      },
      30_000,
    );
    await writesAndReadsServed(
      leader,
      others.find((n) => n !== leader)!,
      ['lead-1', 'lead-2'],
    );
    await setFaults({});
    await caughtUp(stuck, 'lead-2');
    expect(await metricValue(stuck, 'kapi_storage_disk_full')).toBe(0);
    expect(await metricValue(stuck, 'etcd_server_is_leader')).toBe(0);
    expect(stuck.exited).toBeUndefined();
  }, 60_000);

  it('a follower whose Raft log is corrupt refuses to start; removed, and added back empty under a new name, it catches up from its peers', async () => {
    const { leader, faulty, healthy } = await roles();
    await writesAndReadsServed(leader, healthy, ['wipe-1']);
    await faulty.stop();
    const raftDir = join(faulty.dataDir, 'raft');
    const db = new ClassicLevel<string, Uint8Array>(raftDir, { keyEncoding: 'utf8', valueEncoding: 'view' });
    await db.open();
    const [last] = await db.keys({ gt: 'e', lt: 'f', reverse: true, limit: 1 }).all();
    const raw = (await db.get(last!))!.slice();
    raw[raw.length - 1] ^= 0x01;
    await db.put(last!, raw);
    await db.close();
    await expect(faulty.start()).rejects.toThrow();
    expect(faulty.stderr).toContain(`raft log in ${raftDir}: checksum mismatch in record ${last} (log entry ${parseInt(last!.slice(1), 16)})`);

    // It may have voted or acknowledged entries: it comes back only as a new, empty member.
    const name = NODE_NAMES[cluster.nodes.indexOf(faulty)]!;
    expect((await request(leader, 'DELETE', `/cluster/members/${name}`)).status).toBe(200);
    await writesAndReadsServed(leader, healthy, ['wipe-2']);
    const members = (await request(leader, 'GET', '/cluster/members')).json<{ members: { name: string; peerURL: string }[] }>().members;
    const port = await getFreePort();
    const initial = [...members.map((m) => `${m.name}=${m.peerURL}`), `n4=127.0.0.1:${port}`].join(',');
    const adding = rawPost(leader, '/cluster/members', { name: 'n4', peerURL: `127.0.0.1:${port}` });
    const n4 = await startServer({
      args: [
        '--name',
        'n4',
        '--pki-dir',
        join(faulty.dataDir, '..', 'pki'),
        '--listen-peer-port',
        String(port),
        '--initial-cluster',
        initial,
        '--initial-cluster-state',
        'existing',
      ],
      dataDir: join(dir, 'n4'),
      readyTimeoutMs: 40_000,
    });
    added.push(n4);
    expect((await adding).status).toBe(201);
    await caughtUp(n4, 'wipe-2');
  }, 90_000);
});
