import { RawNode } from './raft.rawnode.js';
import { MemoryStorage } from './raft.storage.js';
import { SimRandom } from './sim/sim.random.js';
import { type Entry, type Message, type NodeId, type ReadState, decodeConfChange, isRaftError, msg } from './raft.types.js';

/**
 * Scenario tests of the Raft rules, each naming the paper (Ongaro & Ousterhout 2014) or thesis
 * (Ongaro 2014) section it checks. A tiny synchronous network delivers messages until quiet.
 */

interface TNode {
  raw: RawNode;
  disk: MemoryStorage;
  applied: Entry[];
  reads: ReadState[];
}

class Net {
  readonly nodes = new Map<NodeId, TNode>();
  /** Returns false to drop a message. */
  filter: (m: Message) => boolean = () => true;
  /** Every message that was sent (before filtering), for assertions. */
  sent: Message[] = [];

  constructor(
    ids: NodeId[],
    opts: {
      preVote?: boolean;
      checkQuorum?: boolean;
      maxInflight?: number;
      maxSizePerMsg?: number;
      seed?: number;
      disks?: Map<NodeId, MemoryStorage>;
      /** Founding voters (default: all ids); other ids start with an empty disk. */
      voters?: NodeId[];
      /** Entries carry RaftNode's envelope: leaders append each proposal once. */
      dedup?: boolean;
      /** Leaders defer commit notices (RaftConfig.deferCommitNotices). */
      notices?: boolean;
    } = {},
  ) {
    const rnd = new SimRandom(opts.seed ?? 7);
    for (const id of ids) {
      const voters = opts.voters ?? ids;
      const disk = opts.disks?.get(id) ?? (voters.includes(id) ? MemoryStorage.bootstrap(voters) : new MemoryStorage());
      const r = rnd.fork();
      const raw = new RawNode({
        id,
        storage: disk,
        electionTick: 10,
        heartbeatTick: 1,
        random: () => r.next(),
        applied: disk.snapshot().metadata.index,
        preVote: opts.preVote,
        checkQuorum: opts.checkQuorum,
        maxInflightMsgs: opts.maxInflight,
        maxSizePerMsg: opts.maxSizePerMsg,
        dedupProposals: opts.dedup,
        deferCommitNotices: opts.notices,
      });
      this.nodes.set(id, { raw, disk, applied: [], reads: [] });
    }
  }

  n(id: NodeId): TNode {
    return this.nodes.get(id)!;
  }

  raft(id: NodeId) {
    return this.n(id).raw.raft;
  }

  /**
   * Processes every node's Ready (persist, send, apply, advance) until no message is left,
   * then sends the commit notices a leader's driver would send a moment later (unless
   * `notices` is false) and goes on until quiet.
   */
  settle(maxRounds = 200, notices = true): void {
    for (let round = 0; round < maxRounds; round++) {
      const out: Message[] = [];
      for (const node of this.nodes.values()) {
        while (node.raw.hasReady()) {
          const rd = node.raw.ready();
          if (rd.snapshot) node.disk.applySnapshot(rd.snapshot);
          node.disk.append(rd.entries);
          if (rd.hardState) node.disk.setHardState(rd.hardState);
          out.push(...rd.messages);
          for (const e of rd.committedEntries) {
            node.applied.push(e);
            if (e.type === 'conf') node.raw.applyConfChange(decodeConfChange(e.data));
          }
          node.reads.push(...rd.readStates);
          node.raw.advance(rd);
        }
      }
      if (out.length === 0) {
        // Quiet: the driver's deferred commit notices go out (as its timer would send them).
        let noticed = false;
        for (const node of this.nodes.values()) {
          if (!notices || !node.raw.raft.commitNoticePending()) continue;
          node.raw.raft.flushCommitNotices();
          noticed = true;
        }
        if (noticed) continue;
        return;
      }
      this.sent.push(...out);
      for (const m of out) {
        const to = this.nodes.get(m.to);
        if (to && this.filter(m)) to.raw.step(m);
      }
    }
  }

  /** Cuts a node off in both directions. */
  isolate(id: NodeId): void {
    this.filter = (m) => m.from !== id && m.to !== id;
  }

  heal(): void {
    this.filter = () => true;
  }

  elect(id: NodeId): void {
    this.n(id).raw.campaign();
    this.settle();
  }

  tick(id: NodeId, times = 1): void {
    for (let i = 0; i < times; i++) this.n(id).raw.tick();
  }

  data(id: NodeId): string[] {
    return this.n(id)
      .applied.filter((e) => e.type === 'normal' && e.data.length > 0)
      .map((e) => new TextDecoder().decode(e.data));
  }
}

const bytes = (s: string) => new TextEncoder().encode(s);

describe('Raft core scenarios', () => {
  it('elects a leader with a majority of votes (Reference: Raft paper section 5.2)', () => {
    const net = new Net([1, 2, 3]);
    net.elect(1);
    expect(net.raft(1).role).toBe('leader');
    expect(net.raft(2).lead).toBe(1);
    expect(net.raft(3).lead).toBe(1);
    // The bootstrap snapshot is term 1; the first election moves to term 2.
    expect(net.raft(1).term).toBe(2);
    // Votes are persisted in the hard state (figure 2: votedFor is persistent).
    expect(net.n(2).disk.hardState().vote).toBe(1);
  });

  it('campaigns after a randomized timeout in [T, 2T) (Reference: Raft paper section 5.2)', () => {
    const timeouts = new Set<number>();
    for (let seed = 1; seed <= 20; seed++) {
      const net = new Net([1, 2, 3], { seed });
      let t = 0;
      while (net.raft(1).role === 'follower') {
        net.tick(1);
        t++;
      }
      expect(t).toBeGreaterThanOrEqual(10);
      expect(t).toBeLessThan(20);
      timeouts.add(t);
    }
    expect(timeouts.size).toBeGreaterThan(3);
  });

  it('grants at most one vote per term (Reference: Raft paper section 5.2)', () => {
    const net = new Net([1, 2, 3]);
    net.filter = () => false;
    net.n(1).raw.campaign();
    net.n(3).raw.campaign();
    net.settle();
    const r2 = net.n(2).raw;
    r2.step(msg({ type: 'vote', from: 1, to: 2, term: 2, index: 1, logTerm: 1 }));
    r2.step(msg({ type: 'vote', from: 3, to: 2, term: 2, index: 1, logTerm: 1 }));
    const rd = r2.ready();
    const resps = rd.messages.filter((m) => m.type === 'voteResp');
    expect(resps.map((m) => [m.to, m.reject])).toEqual([
      [1, false],
      [3, true],
    ]);
    expect(rd.hardState?.vote).toBe(1);
  });

  it('rejects a candidate whose log is less up to date (Reference: Raft paper section 5.4.1)', () => {
    const net = new Net([1, 2, 3]);
    net.elect(1);
    net.n(1).raw.propose(bytes('a'));
    net.settle();
    // Node 3 missed nothing, but pretend a candidate with only the bootstrap entry asks.
    const r3 = net.n(3).raw;
    r3.step(msg({ type: 'vote', from: 2, to: 3, term: 5, index: 1, logTerm: 1 }));
    const resp = r3.ready().messages.find((m) => m.type === 'voteResp')!;
    expect(resp.reject).toBe(true);
  });

  it('appends a no-op of the new term on election (Reference: Raft paper section 8)', () => {
    const net = new Net([1, 2, 3]);
    net.elect(1);
    const log = net.raft(1).raftLog;
    expect(log.lastIndex()).toBe(2);
    expect(log.term(2)).toBe(2);
    expect(log.committed).toBe(2);
    expect(net.n(2).applied.map((e) => [e.index, e.data.length])).toEqual([[2, 0]]);
  });

  it('replicates and commits once a majority stores the entry (Reference: Raft paper section 5.3)', () => {
    const net = new Net([1, 2, 3]);
    net.elect(1);
    net.isolate(3);
    net.n(1).raw.propose(bytes('x'));
    net.settle();
    expect(net.raft(1).raftLog.committed).toBe(3);
    expect(net.data(1)).toEqual(['x']);
    expect(net.data(3)).toEqual([]);
    net.heal();
    net.n(1).raw.propose(bytes('y'));
    net.settle();
    expect(net.data(3)).toEqual(['x', 'y']);
  });

  it('does not commit an earlier-term entry by counting replicas (Reference: Raft paper section 5.4.2, figure 8)', () => {
    // Nodes 1 and 2 hold entry 2 of term 2 (uncommitted); node 1 becomes leader of term 3.
    const disks = new Map<NodeId, MemoryStorage>();
    for (const id of [1, 2, 3]) {
      const d = MemoryStorage.bootstrap([1, 2, 3]);
      if (id !== 3) d.append([{ index: 2, term: 2, type: 'normal', data: bytes('old') }]);
      d.setHardState({ term: 2, vote: 0, commit: 1 });
      disks.set(id, d);
    }
    const net = new Net([1, 2, 3], { disks });
    net.filter = () => false;
    net.elect(1);
    net.n(1).raw.step(msg({ type: 'voteResp', from: 2, to: 1, term: 3 }));
    net.settle();
    const r1 = net.raft(1);
    expect(r1.role).toBe('leader');
    expect(r1.term).toBe(3);
    // Node 2 acknowledges index 2 (term 2): a majority holds it, but it is not of term 3.
    net.n(1).raw.step(msg({ type: 'appResp', from: 2, to: 1, term: 3, index: 2 }));
    net.settle();
    expect(r1.raftLog.committed).toBe(1);
    // Once the no-op of term 3 (index 3) is on a majority, both commit together.
    net.n(1).raw.step(msg({ type: 'appResp', from: 2, to: 1, term: 3, index: 3 }));
    net.settle();
    expect(r1.raftLog.committed).toBe(3);
  });

  it('overwrites conflicting uncommitted entries and backtracks by whole terms (Reference: Raft paper section 5.3)', () => {
    const disks = new Map<NodeId, MemoryStorage>();
    for (const id of [1, 2, 3]) {
      const d = MemoryStorage.bootstrap([1, 2, 3]);
      const ents: Entry[] = [];
      if (id === 3) {
        // 30 stale entries of term 2 that never committed.
        for (let i = 2; i < 32; i++) ents.push({ index: i, term: 2, type: 'normal', data: bytes(`stale${i}`) });
      } else {
        for (let i = 2; i < 5; i++) ents.push({ index: i, term: 3, type: 'normal', data: bytes(`good${i}`) });
      }
      d.append(ents);
      d.setHardState({ term: 3, vote: 0, commit: 1 });
      disks.set(id, d);
    }
    const net = new Net([1, 2, 3], { disks });
    net.elect(1);
    expect(net.raft(1).role).toBe('leader');
    const rejects = net.sent.filter((m) => m.type === 'appResp' && m.from === 3 && m.reject);
    // One rejection suffices: the hint jumps over all 30 entries of term 2.
    expect(rejects.length).toBe(1);
    expect(net.raft(3).raftLog.lastIndex()).toBe(5);
    expect(net.raft(3).raftLog.term(4)).toBe(3);
    expect(net.data(3)).toEqual(['good2', 'good3', 'good4']);
  });

  it('batches proposals into one append and bounds in-flight messages (Reference: Raft paper section 5.3; etcd flow control)', () => {
    const net = new Net([1, 2, 3], { maxInflight: 2, maxSizePerMsg: 1 });
    net.elect(1);
    net.filter = () => false;
    net.sent = [];
    const raw = net.n(1).raw;
    raw.proposeBatch([bytes('a'), bytes('b'), bytes('c')]);
    net.settle();
    // maxSizePerMsg 1 forces one entry per message; the window of 2 stops the third.
    const toTwo = net.sent.filter((m) => m.type === 'app' && m.to === 2);
    expect(toTwo.length).toBe(2);
    net.heal();
    // An acknowledgement frees the window and the third message goes out at once.
    net.sent = [];
    net.filter = (m) => m.from === 2;
    net.n(2).raw.step(toTwo[0]!);
    net.settle();
    expect(net.sent.filter((m) => m.type === 'app' && m.to === 2).map((m) => m.entries.map((e) => new TextDecoder().decode(e.data)))).toEqual([['c']]);
    // The lost messages are recovered by probing after the next heartbeat.
    net.heal();
    for (let i = 0; i < 3; i++) {
      net.tick(1);
      net.settle();
    }
    expect(net.data(2)).toEqual(['a', 'b', 'c']);
  });

  it('forwards proposals from a follower to the leader (Reference: thesis section 6.2)', () => {
    const net = new Net([1, 2, 3]);
    net.elect(1);
    net.n(3).raw.propose(bytes('from3'));
    net.settle();
    expect(net.data(1)).toEqual(['from3']);
    expect(net.data(3)).toEqual(['from3']);
  });

  it('serves ReadIndex after a heartbeat quorum, on the leader and via a follower (Reference: thesis section 6.4)', () => {
    const net = new Net([1, 2, 3]);
    net.elect(1);
    net.n(1).raw.propose(bytes('w'));
    net.settle();
    const commit = net.raft(1).raftLog.committed;
    net.isolate(1);
    net.n(1).raw.readIndex('lead-read');
    net.settle();
    // Without a quorum of acknowledgements the leader must not answer (it may be deposed).
    expect(net.n(1).reads).toEqual([]);
    net.heal();
    net.n(1).raw.step(msg({ type: 'heartbeatResp', from: 2, to: 1, term: net.raft(1).term, context: 'lead-read' }));
    net.settle();
    expect(net.n(1).reads).toEqual([{ index: commit, context: 'lead-read' }]);
    net.n(3).raw.readIndex('follower-read');
    net.settle();
    expect(net.n(3).reads).toEqual([{ index: commit, context: 'follower-read' }]);
  });

  it('defers ReadIndex until the new leader commits an entry of its term (Reference: thesis section 6.4 step 1)', () => {
    const net = new Net([1, 2, 3]);
    net.filter = () => false;
    net.n(1).raw.campaign();
    net.settle();
    net.n(1).raw.step(msg({ type: 'voteResp', from: 2, to: 1, term: 2 }));
    net.settle();
    expect(net.raft(1).role).toBe('leader');
    net.n(1).raw.readIndex('early');
    net.settle();
    expect(net.n(1).reads).toEqual([]);
    net.heal();
    net.tick(1); // heartbeat
    net.settle();
    expect(net.n(1).reads.map((r) => r.context)).toEqual(['early']);
    expect(net.n(1).reads[0]!.index).toBe(2);
  });

  it('pre-vote keeps a partitioned node from raising its term and disrupting the leader (Reference: thesis section 9.6)', () => {
    const net = new Net([1, 2, 3], { preVote: true });
    net.elect(1);
    const term = net.raft(1).term;
    net.isolate(3);
    for (let i = 0; i < 100; i++) {
      net.tick(3);
      net.settle();
    }
    expect(net.raft(3).term).toBe(term);
    net.heal();
    for (let i = 0; i < 3; i++) {
      net.tick(1);
      net.settle();
    }
    expect(net.raft(1).role).toBe('leader');
    expect(net.raft(1).term).toBe(term);
  });

  it('check-quorum makes an isolated leader step down after an election timeout (Reference: thesis section 6.2)', () => {
    const net = new Net([1, 2, 3], { checkQuorum: true });
    net.elect(1);
    net.isolate(1);
    // The first check after election sees the activity of the election itself; the second
    // finds nobody heard from during a whole election timeout.
    for (let i = 0; i < 10; i++) {
      net.tick(1);
      net.settle();
    }
    expect(net.raft(1).role).toBe('leader');
    for (let i = 0; i < 10; i++) {
      net.tick(1);
      net.settle();
    }
    expect(net.raft(1).role).toBe('follower');
  });

  it('campaigns within 3 heartbeats once the transport saw the leader connection break (early pre-vote; docs/raft.md "Early campaign")', () => {
    const net = new Net([1, 2, 3], { preVote: true, checkQuorum: true });
    net.elect(1);
    const term = net.raft(1).term;
    net.isolate(1);
    net.n(2).raw.reportConnectionLost(1);
    net.n(3).raw.reportConnectionLost(1);
    // The election timeout is 10 ticks (randomized to [10, 20)); the grace is 2 heartbeats plus
    // up to one more, so a new leader stands after at most 3 ticks of silence.
    for (let i = 0; i < 3; i++) {
      net.tick(2);
      net.tick(3);
      net.settle();
    }
    const leaders = [2, 3].filter((id) => net.raft(id).role === 'leader');
    expect(leaders).toHaveLength(1);
    expect(net.raft(leaders[0]!).term).toBe(term + 1);
  });

  it('a spurious connection-lost signal does not disturb a live leader (early pre-vote is safe)', () => {
    const net = new Net([1, 2, 3], { preVote: true, checkQuorum: true });
    net.elect(1);
    const term = net.raft(1).term;
    net.n(2).raw.reportConnectionLost(1);
    net.n(3).raw.reportConnectionLost(1);
    for (let i = 0; i < 40; i++) {
      for (const id of [1, 2, 3]) net.tick(id);
      net.settle();
    }
    expect(net.raft(1).role).toBe('leader');
    expect(net.raft(1).term).toBe(term);
    expect(net.raft(2).term).toBe(term);
  });

  it('a follower cut from a leader that still reaches the others cannot take over early (pre-vote rejected in lease)', () => {
    const net = new Net([1, 2, 3], { preVote: true, checkQuorum: true });
    net.elect(1);
    const term = net.raft(1).term;
    net.filter = (m) => !((m.from === 1 && m.to === 2) || (m.from === 2 && m.to === 1));
    net.n(2).raw.reportConnectionLost(1);
    for (let i = 0; i < 40; i++) {
      for (const id of [1, 2, 3]) net.tick(id);
      net.settle();
    }
    expect(net.raft(1).role).toBe('leader');
    expect(net.raft(1).term).toBe(term);
    expect(net.raft(3).lead).toBe(1);
  });

  it('ignores the signal without pre-vote and check-quorum: the election timeout decides', () => {
    const net = new Net([1, 2, 3]);
    net.elect(1);
    net.isolate(1);
    net.n(2).raw.reportConnectionLost(1);
    net.n(3).raw.reportConnectionLost(1);
    for (let i = 0; i < 5; i++) {
      net.tick(2);
      net.tick(3);
      net.settle();
    }
    expect([net.raft(2).role, net.raft(3).role]).toEqual(['follower', 'follower']);
  });

  it('transfers leadership with TimeoutNow and refuses proposals meanwhile (Reference: thesis section 3.10)', () => {
    const net = new Net([1, 2, 3]);
    net.elect(1);
    net.isolate(3);
    net.n(1).raw.propose(bytes('a'));
    net.settle();
    net.n(1).raw.transferLeadership(3);
    net.settle();
    // Node 3 is behind: the leader first catches it up, and meanwhile drops proposals.
    expect(net.raft(1).leadTransferee).toBe(3);
    expect(() => net.n(1).raw.propose(bytes('b'))).toThrow(/ErrProposalDropped/);
    // One forwarded by a follower goes back to it, so that its proposer learns at once.
    net.sent = [];
    net.n(2).raw.propose(bytes('c'));
    net.settle();
    const back = net.sent.filter((m) => m.type === 'propDropped');
    expect(back.map((m) => [m.from, m.to, m.term, m.context, m.entries.map((e) => new TextDecoder().decode(e.data))])).toEqual([
      [1, 2, 0, 'leadership transfer in progress', ['c']],
    ]);
    net.heal();
    net.tick(1);
    net.settle();
    expect(net.raft(3).role).toBe('leader');
    expect(net.raft(1).lead).toBe(3);
    expect(net.data(3)).toEqual(['a']);
  });

  it('sends a snapshot to a follower behind the compacted log (Reference: Raft paper section 7)', () => {
    const net = new Net([1, 2, 3]);
    net.elect(1);
    net.isolate(3);
    for (let i = 0; i < 10; i++) net.n(1).raw.propose(bytes(`e${i}`));
    net.settle();
    const leader = net.n(1);
    const applied = net.raft(1).raftLog.applied;
    leader.disk.createSnapshot(applied, net.raft(1).confState(), bytes('state-at-' + applied));
    leader.disk.compact(applied);
    net.heal();
    net.n(1).raw.propose(bytes('after'));
    net.settle();
    net.tick(1);
    net.settle();
    const snapMsgs = net.sent.filter((m) => m.type === 'snap' && m.to === 3);
    expect(snapMsgs.length).toBe(1);
    expect(net.n(3).disk.snapshot().metadata.index).toBe(applied);
    net.n(1).raw.reportSnapshot(3, false);
    net.tick(1);
    net.settle();
    expect(net.raft(3).raftLog.committed).toBe(net.raft(1).raftLog.committed);
    expect(net.data(3)).toEqual(['after']);
  });

  it('adds a learner that does not count for commit, promotes and removes (Reference: thesis section 4.1 and 4.2.1)', () => {
    // Node 4 is not a founder: it starts with an empty disk, outside the configuration.
    const net = new Net([1, 2, 3, 4], { voters: [1, 2, 3] });
    net.elect(1);
    net.n(1).raw.proposeConfChange({ type: 'addLearner', nodeId: 4 });
    net.settle();
    net.tick(1);
    net.settle();
    expect(net.raft(1).learners.has(4)).toBe(true);
    expect(net.raft(4).promotable()).toBe(false);
    // Learners do not count: with 2 and 3 cut off nothing commits even though 4 acknowledges.
    net.filter = (m) => m.from !== 2 && m.to !== 2 && m.from !== 3 && m.to !== 3;
    const before = net.raft(1).raftLog.committed;
    net.n(1).raw.propose(bytes('needs-voters'));
    net.settle();
    expect(net.raft(4).raftLog.lastIndex()).toBeGreaterThan(before);
    expect(net.raft(1).raftLog.committed).toBe(before);
    net.heal();
    net.tick(1);
    net.settle();
    net.n(1).raw.proposeConfChange({ type: 'promote', nodeId: 4 });
    net.settle();
    expect([...net.raft(1).voters].sort()).toEqual([1, 2, 3, 4]);
    expect(net.raft(4).promotable()).toBe(true);
    // A second change is refused while the first is pending, then accepted.
    net.n(1).raw.proposeConfChange({ type: 'remove', nodeId: 2 });
    expect(() => net.n(1).raw.proposeConfChange({ type: 'remove', nodeId: 3 })).toThrow(/ErrProposalDropped/);
    net.settle();
    expect([...net.raft(1).voters].sort()).toEqual([1, 3, 4]);
    net.isolate(2);
    net.n(1).raw.propose(bytes('without-2'));
    net.settle();
    expect(net.data(4)).toContain('without-2');
  });

  it('Ready lists entries to persist together with the messages that depend on them (Reference: etcd raft Ready contract)', () => {
    const net = new Net([1, 2, 3]);
    net.elect(1);
    const raw = net.n(1).raw;
    raw.propose(bytes('p'));
    const rd = raw.ready();
    expect(rd.entries.map((e) => e.index)).toEqual([3]);
    expect(rd.mustSync).toBe(true);
    expect(rd.messages.some((m) => m.type === 'app' && m.entries.some((e) => e.index === 3))).toBe(true);
    raw.advance(rd);
    expect(raw.hasReady()).toBe(false);
  });

  it('restarts with an applied index above the persisted commit (found by the simulator, seed 2)', () => {
    // Commit-only hard-state writes are not fsynced, so after a crash the stored commit may lag
    // a snapshot that sits above the compacted prefix of the log.
    const d = MemoryStorage.bootstrap([1, 2, 3]);
    d.append([2, 3, 4].map((i) => ({ index: i, term: 2, type: 'normal' as const, data: bytes(`e${i}`) })));
    d.setHardState({ term: 2, vote: 1, commit: 2 });
    d.createSnapshot(4, { voters: [1, 2, 3], learners: [] }, bytes('state@4'));
    d.compact(3);
    const raw = new RawNode({ id: 1, storage: d, electionTick: 10, heartbeatTick: 1, random: () => 0.5, applied: 4 });
    expect(raw.raft.raftLog.committed).toBe(4);
    expect(raw.raft.raftLog.applied).toBe(4);
  });

  it('reports a typed error for a proposal without a leader', () => {
    const net = new Net([1, 2, 3]);
    let err: unknown;
    try {
      net.n(2).raw.propose(bytes('x'));
    } catch (e) {
      err = e;
    }
    expect(isRaftError(err, 'ErrProposalDropped')).toBe(true);
  });
});

describe('Raft core: commit notices (docs/raft.md "Commit notices")', () => {
  const commitOf = (net: Net, id: NodeId) => net.raft(id).raftLog.committed;
  const appsTo = (net: Net, to: NodeId) => net.sent.filter((m) => m.type === 'app' && m.from === 1 && m.to === to).length;
  /** Starts the leader's notice counters afresh (the election's own entry counted too). */
  const zeroStats = (net: Net) => Object.assign(net.raft(1).commitNoticeStats, { urgent: 0, timer: 0 });

  it('tells a follower with nothing new of a commit with its next append, or with a notice a moment later', () => {
    const net = new Net([1, 2, 3], { notices: true });
    net.elect(1);
    net.sent = [];
    zeroStats(net);
    net.n(1).raw.propose(bytes('a'));
    net.settle(200, false);
    const a = commitOf(net, 1);
    // One append per follower carried the entry; none followed for its commit.
    expect(appsTo(net, 2)).toBe(1);
    expect(appsTo(net, 3)).toBe(1);
    expect(commitOf(net, 2)).toBe(a - 1);
    expect(net.data(2)).toEqual([]);
    expect(net.raft(1).commitNoticePending()).toBe(true);
    expect(net.raft(1).commitNoticeStats).toEqual({ urgent: 0, timer: 0 });
    // The next write's append carries the commit of the one before.
    net.n(1).raw.propose(bytes('b'));
    net.settle(200, false);
    expect(appsTo(net, 2)).toBe(2);
    expect(net.data(2)).toEqual(['a']);
    expect(net.data(3)).toEqual(['a']);
    // With no write after it, the driver's notice tells them.
    expect(net.raft(1).commitNoticePending()).toBe(true);
    net.raft(1).flushCommitNotices();
    net.settle(200, false);
    expect(appsTo(net, 2)).toBe(3);
    expect(net.data(2)).toEqual(['a', 'b']);
    expect(commitOf(net, 3)).toBe(commitOf(net, 1));
    expect(net.raft(1).commitNoticePending()).toBe(false);
    expect(net.raft(1).commitNoticeStats).toEqual({ urgent: 0, timer: 2 });
    // Told once: flushing again sends nothing.
    net.raft(1).flushCommitNotices();
    net.settle(200, false);
    expect(appsTo(net, 2)).toBe(3);
    expect(net.raft(1).commitNoticeStats.timer).toBe(2);
  });

  it('without deferral, tells every follower of each commit at once (etcd raft)', () => {
    const net = new Net([1, 2, 3]);
    net.elect(1);
    net.sent = [];
    net.n(1).raw.propose(bytes('a'));
    net.settle(200, false);
    expect(appsTo(net, 2)).toBe(2);
    expect(net.data(2)).toEqual(['a']);
    expect(net.raft(1).commitNoticeStats).toEqual({ urgent: 0, timer: 0 });
  });

  it('tells a follower at once of the commit of its own proposal, and of a ReadIndex answered to it', () => {
    const net = new Net([1, 2, 3], { notices: true });
    net.elect(1);
    zeroStats(net);
    net.n(3).raw.propose(bytes('from3'));
    net.settle(200, false);
    expect(net.data(3)).toEqual(['from3']);
    expect(net.data(2)).toEqual([]);
    expect(net.raft(1).commitNoticeStats).toEqual({ urgent: 1, timer: 0 });
    // A write through the leader, then a ReadIndex through node 2: it learns the commit with
    // the answer, so it can serve the read without waiting for the notice.
    net.n(1).raw.propose(bytes('lead'));
    net.settle(200, false);
    expect(net.data(2)).toEqual(['from3']);
    net.n(2).raw.readIndex('r');
    net.settle(200, false);
    expect(net.n(2).reads).toEqual([{ index: commitOf(net, 1), context: 'r' }]);
    expect(commitOf(net, 2)).toBe(commitOf(net, 1));
    expect(net.data(2)).toEqual(['from3', 'lead']);
    // (The leader's heartbeat round that confirms the read carried the commit index.)
    expect(net.raft(1).commitNoticeStats).toEqual({ urgent: 1, timer: 0 });
  });

  it('tells a follower acknowledging late of the commit of its own proposal', () => {
    const net = new Net([1, 2, 3], { notices: true });
    net.elect(1);
    // Node 3's acknowledgements are held back: its proposal commits with node 2's.
    let held: Message[] = [];
    net.filter = (m) => {
      if (m.from === 3 && m.type === 'appResp') {
        held.push(m);
        return false;
      }
      return true;
    };
    net.n(3).raw.propose(bytes('late'));
    net.settle(200, false);
    expect(net.data(1)).toEqual(['late']);
    expect(net.data(3)).toEqual([]);
    net.filter = () => true;
    for (const m of held) net.n(1).raw.step(m);
    held = [];
    net.settle(200, false);
    expect(net.data(3)).toEqual(['late']);
  });

  it('tells every follower at once of the commit of a configuration change, a removed one too', () => {
    const net = new Net([1, 2, 3], { notices: true });
    net.elect(1);
    net.n(1).raw.proposeConfChange({ type: 'remove', nodeId: 3 });
    net.settle(200, false);
    expect([...net.raft(1).voters].sort()).toEqual([1, 2]);
    // Node 3 applied its own removal: the commit reached it before the leader dropped it.
    expect(net.n(3).applied.some((e) => e.type === 'conf')).toBe(true);
    expect(net.n(2).applied.some((e) => e.type === 'conf')).toBe(true);
  });
});

describe('Raft core: proposals resent with the same envelope (docs/raft.md "Resent proposals")', () => {
  /** RaftNode's envelope (proposer id, sequence) before the data. */
  const env = (proposer: number, seq: number, s: string): Uint8Array => {
    const d = new Uint8Array(12 + s.length);
    new DataView(d.buffer).setUint32(0, proposer);
    new DataView(d.buffer).setFloat64(4, seq);
    d.set(bytes(s), 12);
    return d;
  };
  const keys = (net: Net, id: NodeId): string[] =>
    net
      .n(id)
      .applied.filter((e) => e.type === 'normal' && e.data.length >= 12)
      .map((e) => new TextDecoder().decode(e.data.subarray(12)));
  const prop = (from: NodeId, to: NodeId, index: number, ...datas: Uint8Array[]): Message =>
    msg({ type: 'prop', from, to, index, entries: datas.map((data) => ({ term: 0, index: 0, type: 'normal' as const, data })) });

  it('a leader appends a proposal once however many copies reach it, and a new leader finds it in its log', () => {
    const net = new Net([1, 2, 3], { dedup: true });
    net.elect(1);
    const a = env(2, 1, 'a');
    net.n(2).raw.proposeBatch([a]);
    // A resend before the first copy is committed, and two copies in one message.
    net.n(2).raw.proposeBatch([a]);
    net.n(1).raw.step(prop(2, 1, net.raft(2).raftLog.applied, a, a));
    net.settle();
    expect(keys(net, 1)).toEqual(['a']);
    expect(net.raft(1).proposalStats.duplicates).toBe(3);
    net.elect(3);
    expect(net.raft(3).role).toBe('leader');
    net.n(2).raw.proposeBatch([a, env(2, 2, 'b')]);
    net.settle();
    expect(keys(net, 3)).toEqual(['a', 'b']);
    expect(keys(net, 2)).toEqual(['a', 'b']);
    expect(net.raft(3).proposalStats.duplicates).toBe(1);
  });

  it('sends back a copy it cannot check, from a proposer behind what its index covers, and takes it once the proposer says more', () => {
    const net = new Net([1, 2, 3], { dedup: true });
    net.elect(1);
    for (let i = 1; i <= 5; i++) net.n(1).raw.proposeBatch([env(1, i, `e${i}`)]);
    net.settle();
    // Node 3 compacts its log, then leads: its index starts after the compacted entries.
    const applied = net.raft(3).raftLog.applied;
    net.n(3).disk.createSnapshot(applied, net.raft(3).confState(), bytes('s'));
    net.n(3).disk.compact(applied);
    net.elect(3);
    expect(net.raft(3).role).toBe('leader');
    net.sent = [];
    net.n(3).raw.step(prop(2, 3, 1, env(2, 9, 'late')));
    net.settle();
    expect(keys(net, 3)).not.toContain('late');
    expect(net.raft(3).proposalStats.uncheckable).toBe(1);
    const back = net.sent.filter((m) => m.type === 'propDropped');
    expect(back.map((m) => [m.to, m.entries.length])).toEqual([[2, 1]]);
    expect(back[0]!.context).toContain('too far behind');
    // Sent again by a proposer that applied everything up to the compaction: checked, appended.
    net.n(3).raw.step(prop(2, 3, applied, env(2, 9, 'late')));
    net.settle();
    expect(keys(net, 3).filter((k) => k === 'late')).toEqual(['late']);
  });
});
