import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LevelDbRaftStorage } from './raft.leveldb-storage.js';
import { RaftNode, type AppliedEntry, type StateMachine, type StateMachineSnapshot } from './raft.node.js';
import type { RaftNodeOptions } from './raft.node.types.js';
import type { RaftTransport } from './raft.transport.js';
import { type Message, type NodeId, isRaftError, msg } from './raft.types.js';

/** A key-value state machine: data is "k=v"; apply returns the number of writes so far. */
class KvMachine implements StateMachine {
  map = new Map<string, string>();
  index = 0;
  writes = 0;
  async apply(e: AppliedEntry): Promise<unknown> {
    const [k, v] = new TextDecoder().decode(e.data).split('=');
    this.map.set(k!, v!);
    this.index = e.index;
    return ++this.writes;
  }
  appliedIndex(): number {
    return this.index;
  }
  async snapshot(): Promise<StateMachineSnapshot> {
    return { index: this.index, term: 0, data: new TextEncoder().encode(JSON.stringify({ m: [...this.map], w: this.writes })) };
  }
  async restore(s: StateMachineSnapshot): Promise<void> {
    const o = s.data.length ? (JSON.parse(new TextDecoder().decode(s.data)) as { m: [string, string][]; w: number }) : { m: [], w: 0 };
    this.map = new Map(o.m);
    this.writes = o.w;
    this.index = s.index;
  }
}

/** In-process transport with an optional cut set. */
class LocalNet {
  nodes = new Map<NodeId, RaftNode>();
  down = new Set<NodeId>();
  transport(from: NodeId): RaftTransport {
    return {
      send: (msgs: readonly Message[]) => {
        for (const m of msgs) {
          if (this.down.has(from) || this.down.has(m.to)) continue;
          const n = this.nodes.get(m.to);
          if (!n) continue;
          setImmediate(() => {
            n.step(m);
            if (m.type === 'snap') this.nodes.get(from)?.reportSnapshot(m.to, false);
          });
        }
      },
    };
  }
}

async function until(cond: () => boolean, ms = 10000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('RaftNode driver', () => {
  let dir: string;
  const open: { node: RaftNode; storage: LevelDbRaftStorage }[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'raft-node-'));
  });
  afterEach(async () => {
    for (const o of open.splice(0)) {
      await o.node.stop();
      await o.storage.close();
    }
    rmSync(dir, { recursive: true, force: true });
  });

  async function startNode(
    net: LocalNet,
    id: NodeId,
    voters: NodeId[] | undefined,
    sm = new KvMachine(),
    snapshotEntries = 10_000,
    timing: Pick<RaftNodeOptions, 'electionTick' | 'heartbeatTick' | 'commitNoticeMs'> = {},
  ) {
    const storage = await LevelDbRaftStorage.open(join(dir, `n${id}`), { sync: false });
    const node = await RaftNode.create({
      id,
      storage,
      stateMachine: sm,
      transport: net.transport(id),
      bootstrapVoters: voters,
      tickMs: 10,
      snapshotEntries,
      keepEntries: 2,
      ...timing,
    });
    net.nodes.set(id, node);
    node.start();
    open.push({ node, storage });
    return { node, sm, storage };
  }

  it('tells a follower of a lone commit with a notice of its own, long before a heartbeat would', async () => {
    // Heartbeats every 10 s: only the leader's commit notice can bring the commit in time.
    const timing = { electionTick: 2000, heartbeatTick: 1000, commitNoticeMs: 20 };
    const net = new LocalNet();
    const { node: n1 } = await startNode(net, 1, [1], undefined, undefined, timing);
    await until(() => n1.status().role === 'leader');
    const { node: n2, sm: sm2 } = await startNode(net, 2, undefined, undefined, undefined, timing);
    await n1.addLearner(2);
    await n1.promote(2);
    await n1.propose(new TextEncoder().encode('a=1'));
    // Committed with node 2's acknowledgement, applied on the leader; node 2 holds the entry
    // and learns that it is committed from the notice.
    await until(() => sm2.map.get('a') === '1', 2000);
    expect(n2.status().commit).toBe(n1.status().commit);
  });

  it('stops for good when a write fails, tells its listeners and fails what is pending', async () => {
    // A state machine whose store fails on a marked entry, as on a full disk.
    class FailingMachine extends KvMachine {
      override async apply(e: AppliedEntry): Promise<unknown> {
        if (new TextDecoder().decode(e.data).startsWith('boom=')) throw new Error('IO error: No space left on device');
        return super.apply(e);
      }
    }
    const net = new LocalNet();
    const { node } = await startNode(net, 1, [1], new FailingMachine());
    await until(() => node.status().role === 'leader');
    const heard: Error[] = [];
    node.onFatal((e) => heard.push(e));
    expect(node.failure()).toBeUndefined();
    await node.propose(new TextEncoder().encode('a=1'));
    const failed = node.propose(new TextEncoder().encode('boom=1'));
    await expect(failed).rejects.toThrow('No space left on device');
    expect(heard.map((e) => e.message)).toEqual(['IO error: No space left on device']);
    expect(node.failure()?.message).toBe('IO error: No space left on device');
    // Nothing more is accepted; a listener that comes late hears of it as well.
    await expect(node.propose(new TextEncoder().encode('b=2'))).rejects.toThrow();
    await expect(node.readIndex()).rejects.toThrow();
    const late = await new Promise<Error>((resolve) => node.onFatal(resolve));
    expect(late.message).toBe('IO error: No space left on device');
  });

  it('stops at once when a state machine reports a write that failed after apply() returned', async () => {
    // Like the MVCC state machine: apply() hands the entry over and returns, the write comes
    // later; here it fails for the marked entry and no further entry ever comes.
    class BackgroundWriteMachine extends KvMachine {
      private listeners: ((e: Error) => void)[] = [];
      onFailure(listener: (e: Error) => void): void {
        this.listeners.push(listener);
      }
      override async apply(e: AppliedEntry): Promise<unknown> {
        const r = await super.apply(e);
        if (new TextDecoder().decode(e.data).startsWith('boom=')) {
          const err = new Error('IO error: Input/output error');
          setTimeout(() => this.listeners.forEach((l) => l(err)), 20);
        }
        return r;
      }
    }
    const net = new LocalNet();
    const { node } = await startNode(net, 1, [1], new BackgroundWriteMachine());
    await until(() => node.status().role === 'leader');
    const heard = new Promise<Error>((resolve) => node.onFatal(resolve));
    await node.propose(new TextEncoder().encode('a=1'));
    await node.propose(new TextEncoder().encode('boom=1'));
    expect((await heard).message).toBe('IO error: Input/output error');
    expect(node.failure()?.message).toBe('IO error: Input/output error');
    await expect(node.propose(new TextEncoder().encode('b=2'))).rejects.toThrow();
    await expect(node.readIndex()).rejects.toThrow();
  });

  const leaderOf = (net: LocalNet) => [...net.nodes.values()].find((n) => n.status().role === 'leader' && !net.down.has(n.id));

  it('elects, commits proposals with their result, forwards from followers, serves reads, transfers, changes membership and catches up by snapshot', async () => {
    const net = new LocalNet();
    const sms = new Map<NodeId, KvMachine>();
    for (const id of [1, 2, 3]) sms.set(id, (await startNode(net, id, [1, 2, 3])).sm);
    await until(() => leaderOf(net) !== undefined);
    const leader = leaderOf(net)!;
    const r = await leader.propose(new TextEncoder().encode('a=1'));
    expect(r.result).toBe(1);
    expect(r.index).toBeGreaterThan(1);
    // Concurrent proposals are batched and all resolve.
    const many = await Promise.all(Array.from({ length: 50 }, (_, i) => leader.propose(new TextEncoder().encode(`k${i}=${i}`))));
    expect(new Set(many.map((x) => x.index)).size).toBe(50);
    // A follower forwards to the leader and learns of its own entry when applying it.
    const follower = [...net.nodes.values()].find((n) => n !== leader)!;
    const fr = await follower.propose(new TextEncoder().encode('b=2'));
    expect(sms.get(follower.id)!.map.get('b')).toBe('2');
    // A read index from a follower covers everything committed before it.
    const ri = await follower.readIndex();
    expect(ri).toBeGreaterThanOrEqual(fr.index);
    // Leadership transfer.
    const target = [...net.nodes.values()].find((n) => n !== leader && n !== follower) ?? follower;
    leader.transferLeadership(target.id);
    await until(() => target.status().role === 'leader');
    // Add a learner (node 4, empty disk): it gets the founding snapshot, then the log.
    const { node: n4, sm: sm4 } = await startNode(net, 4, undefined);
    // A node waiting to join is not in any configuration, and was not removed either.
    expect(n4.removed()).toBeUndefined();
    await target.addLearner(4);
    await until(() => sm4.map.get('b') === '2');
    await target.promote(4);
    expect(target.status().peers.find((p) => p.id === 4)?.learner).toBe(false);
    await target.propose(new TextEncoder().encode('c=3'));
    await until(() => sm4.map.get('c') === '3');
    expect(n4.status().lead).toBe(target.id);
    expect(n4.removed()).toBeUndefined();
    await target.removeNode(4);
    expect(target.status().peers.some((p) => p.id === 4)).toBe(false);
    // Node 4 applies its removal only if a commit index covering it reached it before the
    // leader stopped sending to it; a peer's word counts as well (a removed node that missed
    // the entry still lists itself in its configuration).
    n4.reportRemoved(target.id);
    expect(n4.removed()).toMatch(/^(its removal from the configuration was applied at index \d+|member \d+ refused its messages as a removed member's)$/);
    expect(follower.removed()).toBeUndefined();
    follower.reportRemoved(target.id);
    expect(follower.removed()).toBe(`member ${target.id} refused its messages as a removed member's`);
  }, 30000);

  it('still knows after a restart that it was removed once a snapshot of its own covers the removal, until it is added back', async () => {
    const net = new LocalNet();
    // Two voters: the removal needs node 2's acknowledgement, so the commit reaches node 2.
    await startNode(net, 1, [1, 2]);
    const { node: n2, storage: s2, sm: sm2 } = await startNode(net, 2, [1, 2]);
    await until(() => leaderOf(net) !== undefined);
    if (leaderOf(net)!.id !== 1) {
      n2.transferLeadership(1);
      await until(() => leaderOf(net)?.id === 1);
    }
    const n1 = net.nodes.get(1)!;
    await n1.propose(new TextEncoder().encode('a=1'));
    await n1.removeNode(2);
    await until(() => n2.removed() !== undefined);
    const at = Number(/at index (\d+)$/.exec(n2.removed()!)![1]);
    expect(s2.removedAt()).toBe(at);
    // Node 2 stops, and a snapshot of its own at the removal entry replaces its log (as when
    // entries after the removal reached it and its snapshot threshold was crossed): the
    // configuration a restart replays from no longer shows the change.
    const entry = open.find((o) => o.node === n2)!;
    open.splice(open.indexOf(entry), 1);
    await n2.stop();
    net.nodes.delete(2);
    await s2.createSnapshot(at, { voters: [1], learners: [] }, (await sm2.snapshot()).data);
    await s2.close();
    const storage = await LevelDbRaftStorage.open(join(dir, 'n2'), { sync: false });
    const again = await RaftNode.create({ id: 2, storage, stateMachine: new KvMachine(), transport: net.transport(2), tickMs: 10, keepEntries: 2 });
    open.push({ node: again, storage });
    net.nodes.set(2, again);
    again.start();
    expect(storage.snapshot().metadata).toMatchObject({ index: at, confState: { voters: [1] } });
    expect(again.removed()).toBe(`its removal from the configuration was applied at index ${at}`);
    // Nothing reaches it (it is in no configuration and does not campaign), and it stays so.
    await new Promise((r) => setTimeout(r, 200));
    expect(again.removed()).toBe(`its removal from the configuration was applied at index ${at}`);
    // Added back, as a learner: the record is cleared with what it said.
    await n1.addLearner(2);
    await until(() => again.members().learners.includes(2));
    expect(again.removed()).toBeUndefined();
    await until(() => storage.removedAt() === undefined);
  }, 30000);

  /** Three nodes; the follower's gate set to `resends`; a transfer to an unreachable node under way; a proposal through the follower. */
  async function proposeDuringTransfer(resends: boolean) {
    const net = new LocalNet();
    const sms = new Map<NodeId, KvMachine>();
    for (const id of [1, 2, 3]) sms.set(id, (await startNode(net, id, [1, 2, 3])).sm);
    await until(() => leaderOf(net) !== undefined);
    const leader = leaderOf(net)!;
    const [follower, target] = [...net.nodes.values()].filter((n) => n !== leader);
    await until(() => follower!.status().lead === leader.id);
    follower!.setResendGate(() => resends);
    // A transfer to a node that cannot be reached stays under way for an election timeout; the
    // leader refuses proposals meanwhile (thesis section 3.10), the forwarded one included, and
    // sends it back.
    net.down.add(target!.id);
    leader.transferLeadership(target!.id);
    const proposed = follower!.propose(new TextEncoder().encode('x=1'));
    return { proposed, follower: follower!, leaderSm: sms.get(leader.id)! };
  }

  it('resends a forwarded proposal the leader drops until the leader appends it, once', async () => {
    const { proposed, follower, leaderSm } = await proposeDuringTransfer(true);
    const r = await proposed;
    expect(r.result).toBe(1);
    expect(follower.resendStats.resent).toBeGreaterThan(0);
    expect(leaderSm.writes).toBe(1);
  });

  it('fails a forwarded proposal the leader drops at once, as safe to retry, while resending is gated off', async () => {
    const { proposed } = await proposeDuringTransfer(false);
    const err = await proposed.then(
      () => undefined,
      (e: unknown) => e,
    );
    // Not ErrTimeout after the request timeout (outcome unknown): the leader sent it back.
    expect(isRaftError(err, 'ErrProposalDropped')).toBe(true);
    expect((err as Error).message).toContain('leadership transfer in progress');
  });

  it('passes proposals it forwarded for another node, and could not deliver, back to their proposer', async () => {
    const sent: Message[] = [];
    const storage = await LevelDbRaftStorage.open(join(dir, 'relay'), { sync: false });
    const node = await RaftNode.create({
      id: 1,
      storage,
      stateMachine: new KvMachine(),
      transport: { send: (ms) => sent.push(...ms) },
      bootstrapVoters: [1, 2, 3],
      tickMs: 10,
    });
    open.push({ node, storage });
    // The 12-byte envelope of a proposal of node 7: proposer id, sequence, then the data.
    const env = new Uint8Array(12 + 3);
    new DataView(env.buffer).setUint32(0, 7);
    new DataView(env.buffer).setFloat64(4, 42);
    env.set(new TextEncoder().encode('a=1'), 12);
    node.reportUndelivered([msg({ type: 'prop', from: 1, to: 2, entries: [{ term: 0, index: 0, type: 'normal', data: env }] })]);
    expect(sent.map((m) => [m.type, m.from, m.to, m.entries.length, m.context])).toEqual([['propDropped', 1, 7, 1, 'the leader could not be reached']]);
  });

  it('installs a snapshot on a follower that fell behind a compacted log', async () => {
    const net = new LocalNet();
    const sms = new Map<NodeId, KvMachine>();
    for (const id of [1, 2, 3]) sms.set(id, (await startNode(net, id, [1, 2, 3], new KvMachine(), 20)).sm);
    await until(() => leaderOf(net) !== undefined);
    const leader = leaderOf(net)!;
    const lagging = [...net.nodes.values()].find((n) => n !== leader)!;
    net.down.add(lagging.id);
    for (let i = 0; i < 60; i++) await leader.propose(new TextEncoder().encode(`x${i}=${i}`));
    expect(net.nodes.get(leader.id)!.status().commit).toBeGreaterThan(60);
    net.down.delete(lagging.id);
    await until(() => sms.get(lagging.id)!.map.get('x59') === '59');
    expect(sms.get(lagging.id)!.writes).toBe(60);
  }, 30000);

  it('applies committed entries its log already holds without waiting for the fsync of the next batch', async () => {
    const net = new LocalNet();
    const enc = (t: string) => new TextEncoder().encode(t);
    const stores = new Map<NodeId, LevelDbRaftStorage>();
    for (const id of [1, 2]) stores.set(id, (await startNode(net, id, [1, 2, 3])).storage);
    // Node 3: its saves of new entries can be held, like a slow fsync; it never campaigns.
    const storage = await LevelDbRaftStorage.open(join(dir, 'n3'), { sync: false });
    let hold: Promise<void> | undefined;
    const save = storage.save.bind(storage);
    storage.save = async (rd, mustSync) => {
      if (hold && rd.entries.length > 0) await hold;
      return save(rd, mustSync);
    };
    const sm3 = new KvMachine();
    const n3 = await RaftNode.create({
      id: 3,
      storage,
      stateMachine: sm3,
      transport: net.transport(3),
      bootstrapVoters: [1, 2, 3],
      tickMs: 10,
      electionTick: 1000,
    });
    net.nodes.set(3, n3);
    n3.start();
    open.push({ node: n3, storage });
    await until(() => leaderOf(net) !== undefined);
    const leader = leaderOf(net)!;
    const ls = stores.get(leader.id)!;
    await leader.propose(enc('warm=1'));
    await until(() => sm3.map.get('warm') === '1');
    // From here node 3 hears only what the test hands it, as the leader would send it.
    net.down.add(3);
    const prev = storage.lastIndex();
    const a = await leader.propose(enc('a=1'));
    const b = await leader.propose(enc('b=2'));
    const term = leader.status().term;
    const append = (after: number, upTo: number, commit: number) =>
      n3.step(
        msg({ type: 'app', from: leader.id, to: 3, term, logTerm: ls.term(after), index: after, entries: ls.entries(after + 1, upTo + 1, 1 << 30), commit }),
      );
    // 1. The entries up to A, without a newer commit: saved, not applied.
    append(prev, a.index, prev);
    await until(() => storage.lastIndex() >= a.index);
    expect(sm3.map.get('a')).toBeUndefined();
    // 2. B arrives with the commit of A while node 3's disk holds the write of B: A is applied.
    let release!: () => void;
    hold = new Promise<void>((r) => (release = r));
    try {
      append(a.index, b.index, a.index);
      await until(() => sm3.map.get('a') === '1', 3000);
      expect(sm3.map.get('b')).toBeUndefined();
      expect(storage.lastIndex()).toBe(a.index);
    } finally {
      release();
      hold = undefined;
    }
    net.down.delete(3);
    await until(() => sm3.map.get('b') === '2');
  }, 30000);

  it('calls its proposal source when woken, and what the source proposes is committed; a stopped node hands it ErrStopped', async () => {
    const net = new LocalNet();
    const { node, sm } = await startNode(net, 1, [1]);
    await until(() => node.status().role === 'leader');
    const enc = (s: string) => new TextEncoder().encode(s);
    const gathered: string[] = [];
    const results: Promise<unknown>[] = [];
    let calls = 0;
    node.setProposalSource(() => {
      calls++;
      for (const d of gathered.splice(0)) results.push(node.propose(enc(d)));
    });
    // Gathered while nothing asked the loop to run: not proposed until woken.
    gathered.push('a=1', 'b=2');
    await new Promise((r) => setTimeout(r, 50));
    expect([calls, sm.map.size]).toEqual([0, 0]);
    node.wake();
    node.wake();
    await until(() => results.length === 2);
    await Promise.all(results);
    expect([...sm.map]).toEqual([
      ['a', '1'],
      ['b', '2'],
    ]);
    // Woken while the loop handles a Ready: the source is called once it takes proposals again.
    const busy = node.propose(enc('c=3'));
    gathered.push('d=4');
    node.wake();
    await busy;
    await until(() => sm.map.get('d') === '4');
    // Stopping with the source woken and not yet called: it is called, and its proposal refused.
    gathered.push('e=5');
    node.wake();
    await node.stop();
    const last = results.at(-1)!;
    await expect(last).rejects.toMatchObject({ code: 'ErrStopped' });
    expect(sm.map.has('e')).toBe(false);
    // Once stopped, a wake calls the source at once.
    gathered.push('f=6');
    node.wake();
    await expect(results.at(-1)!).rejects.toMatchObject({ code: 'ErrStopped' });
  });

  it('rejects a proposal with ErrNotLeader when no leader is known', async () => {
    const net = new LocalNet();
    const { node } = await startNode(net, 1, [1, 2, 3]);
    net.down.add(1);
    let err: unknown;
    try {
      await node.propose(new TextEncoder().encode('a=1'));
    } catch (e) {
      err = e;
    }
    expect(isRaftError(err, 'ErrNotLeader')).toBe(true);
  });

  it('recovers its state from disk after a restart', async () => {
    const net = new LocalNet();
    const { node, storage } = await startNode(net, 1, [1]);
    await until(() => node.status().role === 'leader');
    await node.propose(new TextEncoder().encode('p=1'));
    await node.propose(new TextEncoder().encode('q=2'));
    await node.stop();
    await storage.close();
    open.length = 0;
    const again = await startNode(net, 1, [1]);
    await until(() => again.sm.map.get('q') === '2');
    expect(again.sm.writes).toBe(2);
  });

  it('syncs a durable state machine beside the loop and compacts the log to what the sync made durable', async () => {
    /** A durable state machine whose sync() ends only when the test lets it. */
    class SlowSync extends KvMachine {
      calls = 0;
      syncedAt = 0;
      release: (() => void) | undefined;
      sync(): Promise<number> {
        this.calls++;
        const at = (this.syncedAt = this.index);
        return new Promise((resolve) => (this.release = () => resolve(at)));
      }
    }
    const net = new LocalNet();
    const sm = new SlowSync();
    const { node, storage } = await startNode(net, 1, [1], sm, 5);
    await until(() => node.status().role === 'leader');
    const put = (i: number) => node.propose(new TextEncoder().encode(`k${i}=${i}`));
    for (let i = 0; i < 6; i++) await put(i);
    await until(() => sm.calls === 1);
    const syncedAt = sm.syncedAt;
    // While the sync runs, writes go on being applied (the loop does not wait for it), no second
    // sync starts, and the log is not compacted yet.
    for (let i = 6; i < 20; i++) await put(i);
    expect(sm.map.get('k19')).toBe('19');
    expect(sm.calls).toBe(1);
    expect(storage.snapshot().metadata.index).toBeLessThan(syncedAt);
    // Once it ends, the log is compacted to the index it made durable (not to the applied one).
    sm.release!();
    await until(() => storage.snapshot().metadata.index === syncedAt);
    expect(storage.snapshot().data.length).toBe(0);
    // The next write finds enough entries past that snapshot and starts the next sync.
    await put(20);
    await until(() => sm.calls === 2);
    sm.release!();
  });
});
