/**
 * The store's space quota (docs/storage.md "Space quota") on three nodes started with a small
 * `--quota-backend-bytes`, driven by Debian's etcdctl v3.4 and the Kubernetes API: puts through
 * one member fill its store until it refuses in etcd's words and raises a NOSPACE alarm; the
 * alarm is listed by every member and in `endpoint status`, and writes that add data are
 * refused through every member (etcd's RESOURCE_EXHAUSTED; the Kubernetes API's 500, as
 * kube-apiserver on a full etcd, which kubectl shows) while reads and deletes go on; after a delete, a compaction
 * and a defragmentation the stores are small again, and once the alarm is disarmed writes are
 * taken again.
 */
import { NODE_NAMES, startThreeNodeCluster, type TestCluster } from './support/cluster.helper.js';
import { prerequisite } from './support/prereq.js';
import { run, type RunResult } from './support/run.js';
import { getFreePorts, kubectl, metricValue, request, waitFor, type ServerHandle } from './support/server.js';

const QUOTA = 3_000_000;
const CM = '/api/v1/namespaces/default/configmaps';
const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v: name } });

describe('the space quota of three nodes', () => {
  let cluster: TestCluster | undefined;
  let have = false;
  const nodes: ServerHandle[] = [];
  let clientPorts: number[] = [];

  const ctl = (i: number | 'all', args: string[], input?: string): Promise<RunResult> => {
    const endpoints = (i === 'all' ? clientPorts : [clientPorts[i]!]).map((p) => `http://127.0.0.1:${p}`).join(',');
    return run('etcdctl', ['--endpoints', endpoints, '--command-timeout', '10s', ...args], { ETCDCTL_API: '3' }, input, 30_000);
  };
  const ok = async (i: number | 'all', args: string[]): Promise<string> => {
    const r = await ctl(i, args);
    if (r.code !== 0) throw new Error(`etcdctl ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
    return r.stdout;
  };
  const status = async (): Promise<{ Status: { header: { member_id: number }; dbSize: number; errors?: string[] } }[]> =>
    JSON.parse(await ok('all', ['endpoint', 'status', '-w', 'json'])) as { Status: { header: { member_id: number }; dbSize: number; errors?: string[] } }[];

  const health = async (i: number): Promise<{ status: number; body: string }> => {
    const res = await fetch(`http://127.0.0.1:${clientPorts[i]}/health`);
    return { status: res.status, body: await res.text() };
  };

  beforeAll(async () => {
    have = prerequisite('etcdctl', 'the space quota through etcdctl (test/etcd.quota.test.ts)');
    if (!have) return;
    clientPorts = await getFreePorts(3);
    cluster = await startThreeNodeCluster('kapi-quota-', (n) => [
      '--listen-client-urls',
      `http://127.0.0.1:${clientPorts[NODE_NAMES.indexOf(n)]}`,
      '--quota-backend-bytes',
      String(QUOTA),
    ]);
    nodes.push(...cluster.nodes);
  }, 120_000);

  afterAll(async () => {
    await cluster?.cleanup();
  });

  it('refuses writes that add data once a store is over its quota, on every member, until space is freed and the alarm disarmed', async () => {
    if (!have) return;
    expect((await request(nodes[1]!, 'POST', CM, { body: cm('before') })).status).toBe(201);
    expect(await ok(0, ['alarm', 'list'])).toBe('');

    // 400 KB values through n1 until its store refuses one (each value lands in its LevelDB log).
    const value = 'v'.repeat(400_000);
    let taken = 0;
    let refused: RunResult | undefined;
    for (let i = 0; i < 30 && !refused; i++) {
      const r = await ctl(0, ['put', `/big/${i}`], value);
      if (r.code === 0) taken++;
      else refused = r;
      // The size is sampled once a second.
      await new Promise((res) => setTimeout(res, 150));
    }
    expect(taken).toBeGreaterThan(3);
    expect(refused?.stderr).toContain('Error: etcdserver: mvcc: database space exceeded');

    // The refusal was answered once n1's alarm was raised through the log (as etcd answers): n1
    // lists an alarm at once. The members' stores are about as large, so another member writing
    // its own records (its identity Lease) in that moment may have raised its alarm first, or too.
    expect((await ok(0, ['alarm', 'list'])).trim()).not.toBe('');
    const ids = new Set((await status()).map((s) => String(s.Status.header.member_id)));
    let listed: string[] = [];
    await waitFor(
      'every member lists the same alarms',
      async () => {
        const lists = await Promise.all([0, 1, 2].map((i) => ok(i, ['alarm', 'list'])));
        listed = lists[0]!.trim().split('\n');
        return lists.every((l) => l === lists[0]);
      },
      10_000,
    );
    for (const line of listed) expect(ids.has(/^memberID:([0-9]+) alarm:NOSPACE$/.exec(line)?.[1] ?? '')).toBe(true);
    const alarms = listed.join('\n');
    for (const s of await status()) expect(s.Status.errors).toEqual(listed.map((a) => `${a} `));
    expect(await metricValue(nodes[1]!, 'etcd_server_quota_backend_bytes')).toBe(QUOTA);
    expect(await metricValue(nodes[1]!, 'kapi_alarms_raised')).toBe(listed.length);
    // etcd 3.4's /health is false while any alarm is raised.
    expect(await health(2)).toEqual({ status: 503, body: '{"health":"false"}' });
    const small = await ctl(2, ['put', '/small', 'x']);
    expect(small.code).not.toBe(0);
    expect(small.stderr).toContain('etcdserver: mvcc: database space exceeded');
    expect((await ctl(1, ['lease', 'grant', '60'])).stderr).toContain('etcdserver: mvcc: database space exceeded');
    const k8s = await request(nodes[2]!, 'POST', CM, { body: cm('during') });
    expect(k8s.status).toBe(500);
    expect(k8s.json<{ reason: string; message: string }>()).toMatchObject({ reason: 'InternalError' });
    expect(k8s.json<{ message: string }>().message).toMatch(/^Internal error occurred: etcdserver: mvcc: database space exceeded/);
    const ctlCreate = await kubectl(nodes[0]!, ['create', 'configmap', 'by-kubectl', '--from-literal=v=1'], { expectFail: true });
    expect(ctlCreate.stderr).toContain('failed to create configmap: Internal error occurred: etcdserver: mvcc: database space exceeded');
    // Reads and deletes go on.
    expect((await request(nodes[2]!, 'GET', `${CM}/before`)).status).toBe(200);
    expect((await request(nodes[2]!, 'DELETE', `${CM}/before`)).status).toBe(200);
    expect(await ok(1, ['get', '/small'])).toBe('');
    expect((await ok(1, ['del', '/big/', '--prefix'])).trim()).toBe(String(taken));

    // Space back: compact the history away and defragment every member.
    const rev = (JSON.parse(await ok(1, ['get', '/none', '-w', 'json'])) as { header: { revision: number } }).header.revision;
    expect(await ok(1, ['compact', String(rev), '--physical'])).toContain(`compacted revision ${rev}`);
    expect((await ok('all', ['defrag'])).match(/Finished defragmenting etcd member/g)).toHaveLength(3);
    for (const s of await status()) expect(s.Status.dbSize).toBeLessThan(QUOTA / 2);
    // Still refused until the alarm is disarmed.
    expect((await ctl(2, ['put', '/small', 'x'])).code).not.toBe(0);
    expect((await ok(2, ['alarm', 'disarm'])).trim()).toBe(alarms);
    for (const i of [0, 1, 2]) await waitFor(`n${i + 1} drops the alarm`, async () => (await ok(i, ['alarm', 'list'])) === '', 10_000);
    expect((await ok(2, ['put', '/small', 'x'])).trim()).toBe('OK');
    expect((await request(nodes[0]!, 'POST', CM, { body: cm('after') })).status).toBe(201);
    expect((await kubectl(nodes[1]!, ['create', 'configmap', 'by-kubectl', '--from-literal=v=1'])).stdout).toContain('configmap/by-kubectl created');
    for (const s of await status()) expect(s.Status.errors ?? []).toEqual([]);
    expect(await health(2)).toEqual({ status: 200, body: '{"health":"true"}' });
  });
});
