/**
 * Removing the leader (docs/cluster.md "Membership"): the leader hands leadership to another
 * voter, which carries out the removal. Asked through a follower and through the leader itself;
 * the last voter cannot be removed. Writes acknowledged before go on being served by the rest.
 */
import { NODE_NAMES, startThreeNodeCluster, type TestCluster } from './support/cluster.helper.js';
import { delay, request, type ServerHandle } from './support/server.js';

interface Members {
  leader?: string;
  members: { name: string; role: string }[];
}

const NAMES = NODE_NAMES;

describe('removing the leader', () => {
  let cluster: TestCluster | undefined;
  const nodes = new Map<string, ServerHandle>();
  const node = (n: string): ServerHandle => nodes.get(n)!;

  const members = async (on: string, local = false): Promise<Members> =>
    (await request(node(on), 'GET', `/cluster/members${local ? '?local=true' : ''}`, { timeoutMs: 20_000 })).json<Members>();
  const leaderAmong = async (among: string[]): Promise<string> => {
    for (let i = 0; i < 100; i++) {
      for (const n of among) {
        const m = await members(n, true).catch(() => undefined);
        if (m?.leader && among.includes(m.leader)) return m.leader;
      }
      await delay(100);
    }
    throw new Error('no leader elected');
  };
  const create = (on: string, name: string) =>
    request(node(on), 'POST', '/api/v1/namespaces/default/configmaps', {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v: name } },
      timeoutMs: 15_000,
    });

  beforeAll(async () => {
    cluster = await startThreeNodeCluster('kapi-remove-leader-', []);
    cluster.nodes.forEach((h, i) => nodes.set(NAMES[i]!, h));
  }, 90_000);

  afterAll(async () => {
    await cluster?.cleanup();
  });

  it('moves leadership to another voter, which removes the old leader; then the leader of two removes itself; the last voter stays', async () => {
    let live = [...NAMES];
    const first = await leaderAmong(live);
    expect((await create(first, 'before')).status).toBe(201);

    // Through a follower: forwarded to the leader, which transfers leadership, then the new
    // leader removes it.
    const follower = live.find((n) => n !== first)!;
    const removed = await request(node(follower), 'DELETE', `/cluster/members/${first}`, { timeoutMs: 30_000 });
    expect({ status: removed.status, body: removed.status === 200 ? '' : removed.body }).toEqual({ status: 200, body: '' });
    live = live.filter((n) => n !== first);
    const view = await members(follower);
    expect(view.members.map((m) => m.name).sort()).toEqual([...live].sort());
    expect(live).toContain(view.leader);
    await node(first).cleanup();
    nodes.delete(first);
    expect((await create(live[0]!, 'after-first')).status).toBe(201);
    for (const n of live) expect((await request(node(n), 'GET', '/api/v1/namespaces/default/configmaps/before')).status).toBe(200);

    // Through the leader itself, in a cluster of two.
    const second = await leaderAmong(live);
    const self = await request(node(second), 'DELETE', `/cluster/members/${second}`, { timeoutMs: 30_000 });
    expect({ status: self.status, body: self.status === 200 ? '' : self.body }).toEqual({ status: 200, body: '' });
    live = live.filter((n) => n !== second);
    await node(second).cleanup();
    nodes.delete(second);
    const last = live[0]!;
    expect(await leaderAmong(live)).toBe(last);
    expect((await members(last)).members.map((m) => m.name)).toEqual([last]);
    expect((await create(last, 'after-second')).status).toBe(201);

    // The last voter cannot remove itself.
    const alone = await request(node(last), 'DELETE', `/cluster/members/${last}`);
    expect(alone.status).toBe(409);
    expect(alone.json<{ message: string }>().message).toContain('the last voter of a cluster cannot be removed');
  }, 120_000);
});
