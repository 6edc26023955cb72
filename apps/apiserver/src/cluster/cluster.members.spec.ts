import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openClusterStorage, type ClusterStorage } from '@app/storage';
import { nodeIdFromName } from './cluster.ids.js';
import { ClusterMembership, MEMBER_PREFIX, type MemberRecord } from './cluster.members.js';
import type { GrpcTransport } from '@app/raft';

const enc = new TextEncoder();

describe('ClusterMembership records', () => {
  let dir: string;
  let cs: ClusterStorage | undefined;
  afterEach(async () => {
    await cs?.close();
    cs = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('a registration that raced with a promotion keeps the promotion (no blind write of a stale record)', async () => {
    dir = await mkdtemp(join(tmpdir(), 'members-'));
    const id = nodeIdFromName('n4');
    const node = await openClusterStorage({ dataDir: dir, nodeId: id, bootstrapVoters: [id], tickMs: 10, compactionIntervalMs: 0 });
    cs = node;
    for (let i = 0; i < 500 && node.node.status().role !== 'leader'; i++) await new Promise((r) => setTimeout(r, 10));
    const key = MEMBER_PREFIX + 'n4';
    const record = (r: Partial<MemberRecord>): Uint8Array =>
      enc.encode(JSON.stringify({ name: 'n4', id, peerURL: '127.0.0.1:1', clientURL: 'https://old:1', role: 'learner', ...r }));
    // The record as the leader first wrote it: a learner, before the node registered its URLs.
    await node.proposer.propose({ compares: [], success: [{ type: 'put', key, value: record({}) }], failure: [] });
    const membership = new ClusterMembership({
      selfName: 'n4',
      selfId: id,
      selfPeerURL: '127.0.0.1:1',
      selfClientURL: 'https://n4:6443',
      initial: [],
      node: node.node,
      store: node.store,
      proposer: node.proposer,
      transport: undefined,
    });
    // The promotion lands after the node read its record and before its own write does.
    const propose = node.proposer.propose.bind(node.proposer);
    let raced = false;
    node.proposer.propose = async (cmd) => {
      if (!raced) {
        raced = true;
        await propose({ compares: [], success: [{ type: 'put', key, value: record({ role: 'voter' }) }], failure: [] });
      }
      return propose(cmd);
    };
    await membership.registerSelf();
    expect(raced).toBe(true);
    const stored = JSON.parse(new TextDecoder().decode((await node.store.get(key))!.value)) as MemberRecord;
    expect(stored).toMatchObject({ role: 'voter', clientURL: 'https://n4:6443' });
  });

  it("keeps the transport's peer of a member whose record is deleted while it is in the configuration; drops it once it is not", async () => {
    dir = await mkdtemp(join(tmpdir(), 'members-'));
    const id = nodeIdFromName('n1');
    const other = nodeIdFromName('n2');
    const node = await openClusterStorage({ dataDir: dir, nodeId: id, bootstrapVoters: [id], tickMs: 10, compactionIntervalMs: 0 });
    cs = node;
    for (let i = 0; i < 500 && node.node.status().role !== 'leader'; i++) await new Promise((r) => setTimeout(r, 10));
    const calls: string[] = [];
    const transport = {
      addPeer: (peer: number, addr: string) => calls.push(`add ${peer} ${addr}`),
      removePeer: (peer: number) => calls.push(`remove ${peer}`),
      setRemovedCheck: () => undefined,
    } as unknown as GrpcTransport;
    const membership = new ClusterMembership({
      selfName: 'n1',
      selfId: id,
      selfPeerURL: '127.0.0.1:1',
      selfClientURL: 'https://n1:6443',
      initial: [],
      node: node.node,
      store: node.store,
      proposer: node.proposer,
      transport,
    });
    await membership.start();
    const key = MEMBER_PREFIX + 'n2';
    const write = (op: 'put' | 'delete') =>
      node.proposer.propose({
        compares: [],
        success: [
          op === 'put'
            ? { type: 'put', key, value: enc.encode(JSON.stringify({ name: 'n2', id: other, peerURL: '127.0.0.1:2', role: 'learner' })) }
            : { type: 'delete', key },
        ],
        failure: [],
      });
    // n2 joins as a learner (a learner does not count for the quorum, so one node commits it).
    await node.node.addLearner(other);
    await write('put');
    expect(calls).toEqual([`add ${other} 127.0.0.1:2`]);
    // Its record deleted by hand: n2 is still in the configuration, so its peer stays.
    await write('delete');
    expect(calls).toEqual([`add ${other} 127.0.0.1:2`]);
    // Removed from the configuration, then its record deleted (a removal's order): the peer goes.
    await write('put');
    await node.node.removeNode(other);
    await write('delete');
    expect(calls).toEqual([`add ${other} 127.0.0.1:2`, `remove ${other}`]);
    membership.stop();
  });
});
