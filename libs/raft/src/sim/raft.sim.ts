import { RawNode } from '../raft.rawnode.js';
import { MemoryStorage } from '../raft.storage.js';
import { type ConfState, type Entry, type HardState, type Message, type NodeId, type Ready, RaftError, decodeConfChange, isRaftError } from '../raft.types.js';
import { EventQueue } from './sim.queue.js';
import { SimRandom } from './sim.random.js';

/** Knobs of one simulated run; all derived from the seed unless given. */
export interface SimOptions {
  /** Initial voters (3 or 5). */
  voters: number;
  /** Extra idle nodes that membership changes may add. */
  spares: number;
  /** Ticks with faults, followed by a healing phase. */
  steps: number;
  /** Ticks allowed in the healing phase for the cluster to commit a final write everywhere. */
  healSteps: number;
  /** Receives a line per event when set (debugging a replayed seed). */
  trace?: (line: string) => void;
}

/** Counters reported by a run (to see that the faults actually happened). */
export interface SimStats {
  elections: number;
  writesCommitted: number;
  readsServed: number;
  crashes: number;
  partitions: number;
  snapshotsSent: number;
  confChanges: number;
  transfers: number;
  messages: number;
  /** "Connection lost" signals fed to nodes (on crashes, cuts, and spurious ones). */
  connectionLosses: number;
}

/** A violated invariant; the message names the seed so the run can be replayed with SEED=. */
export class SimFailure extends Error {
  constructor(
    readonly seed: number,
    readonly tick: number,
    what: string,
  ) {
    super(`raft sim seed ${seed} failed at tick ${tick}: ${what} (replay: SEED=${seed})`);
    this.name = 'SimFailure';
  }
}

interface SimNode {
  readonly id: NodeId;
  /** The synced disk: only what a Ready persisted survives a crash. */
  readonly disk: MemoryStorage;
  /** Last fsynced hard state: a commit-only change (mustSync false) is written unsynced. */
  syncedHard: HardState;
  raw: RawNode | undefined;
  downUntil: number;
  /** State machine: index of the last applied entry and a running hash of everything applied. */
  smIndex: number;
  smHash: number;
  confState: ConfState;
  /** Read contexts served locally once applied reaches their index. */
  waitingReads: { context: string; index: number }[];
}

type Delivery = { kind: 'msg'; m: Message } | { kind: 'snapStatus'; leader: NodeId; peer: NodeId; failed: boolean };

const enc = new TextEncoder();
const dec = new TextDecoder();

function fnv(h: number, data: Uint8Array, tag: number): number {
  let x = (h ^ tag) >>> 0;
  for (let i = 0; i < data.length; i++) x = Math.imul(x ^ data[i]!, 16777619) >>> 0;
  return Math.imul(x ^ 0xff, 16777619) >>> 0;
}

/** Snapshot data of the simulated state machine; empty data is the bootstrap (initial) state. */
function decodeSmSnapshot(index: number, data: Uint8Array): { index: number; hash: number } {
  if (data.length === 0) return { index, hash: 0 };
  return JSON.parse(dec.decode(data)) as { index: number; hash: number };
}

function entryKey(e: Entry): string {
  return (e.type === 'conf' ? 'c:' : 'n:') + dec.decode(e.data);
}

/**
 * Deterministic simulation of a Raft cluster in one process (in the manner of TigerBeetle's
 * VOPR): the network, disk, crashes and client load are all driven by one seed; every
 * invariant of the paper is checked after every step. Synchronous: no await, no timers.
 */
export class RaftSim {
  readonly rng: SimRandom;
  readonly stats: SimStats = {
    elections: 0,
    writesCommitted: 0,
    readsServed: 0,
    crashes: 0,
    partitions: 0,
    connectionLosses: 0,
    snapshotsSent: 0,
    confChanges: 0,
    transfers: 0,
    messages: 0,
  };
  private now = 0;
  private readonly nodes = new Map<NodeId, SimNode>();
  private readonly queue = new EventQueue<Delivery>();
  /** Directed links currently cut: key `${from}>${to}`, value = tick the cut heals. */
  private readonly cuts = new Map<string, number>();
  private readonly opts: SimOptions;
  // Fault rates for this seed.
  private readonly dropRate: number;
  private readonly dupRate: number;
  private readonly maxDelay: number;
  private readonly crashRate: number;
  private readonly partitionRate: number;
  private readonly checkQuorum: boolean;
  private readonly preVote: boolean;
  private healing = false;
  // Global knowledge for the invariants.
  private readonly leaderOfTerm = new Map<number, NodeId>();
  private readonly committed = new Map<number, { term: number; key: string }>();
  private readonly hashAt = new Map<number, number>();
  private readonly entryIdentity = new Map<string, string>();
  private maxCommitted = 0;
  private readonly reads = new Map<string, number>();
  private writeSeq = 0;
  private readSeq = 0;

  constructor(
    readonly seed: number,
    opts?: Partial<SimOptions>,
  ) {
    this.rng = new SimRandom(seed);
    const r = this.rng;
    this.opts = {
      voters: opts?.voters ?? (r.chance(0.5) ? 3 : 5),
      spares: opts?.spares ?? 2,
      steps: opts?.steps ?? 300,
      healSteps: opts?.healSteps ?? 400,
      trace: opts?.trace,
    };
    this.dropRate = r.pick([0, 0.01, 0.05, 0.15]);
    this.dupRate = r.pick([0, 0.02, 0.1]);
    this.maxDelay = r.pick([1, 3, 8]);
    this.crashRate = r.pick([0, 0.003, 0.01]);
    this.partitionRate = r.pick([0, 0.005, 0.02]);
    this.checkQuorum = r.chance(0.5);
    this.preVote = r.chance(0.5);
    const voters: NodeId[] = [];
    for (let i = 1; i <= this.opts.voters; i++) voters.push(i);
    for (let i = 1; i <= this.opts.voters + this.opts.spares; i++) {
      const disk = i <= this.opts.voters ? MemoryStorage.bootstrap(voters) : new MemoryStorage();
      const n: SimNode = {
        id: i,
        disk,
        raw: undefined,
        syncedHard: disk.hardState(),
        downUntil: 0,
        smIndex: 0,
        smHash: 0,
        confState: disk.snapshot().metadata.confState,
        waitingReads: [],
      };
      this.nodes.set(i, n);
      this.start(n);
    }
  }

  private fail(what: string): never {
    throw new SimFailure(this.seed, this.now, what);
  }

  private start(n: SimNode): void {
    this.trace(`start ${n.id}`);
    const snap = n.disk.snapshot();
    n.raw = new RawNode({
      id: n.id,
      storage: n.disk,
      electionTick: 10,
      heartbeatTick: 2,
      random: () => this.rng.next(),
      applied: snap.metadata.index,
      maxSizePerMsg: 64 + this.rng.int(0, 3) * 100,
      maxInflightMsgs: this.rng.int(1, 8),
      maxInflightBytes: this.rng.pick([0, 200, 4096]),
      checkQuorum: this.checkQuorum,
      preVote: this.preVote,
    });
    // The state machine is volatile: rebuild it from the snapshot; the log replays the rest.
    if (snap.metadata.index > 0) {
      const s = decodeSmSnapshot(snap.metadata.index, snap.data);
      n.smIndex = s.index;
      n.smHash = s.hash;
    } else {
      n.smIndex = 0;
      n.smHash = 0;
    }
    n.confState = snap.metadata.confState;
    n.waitingReads = [];
  }

  private trace(line: string): void {
    if (this.opts.trace) this.opts.trace(`[${this.now}] ${line}`);
  }

  private crash(n: SimNode): void {
    this.trace(`crash ${n.id}`);
    // The unsynced tail is lost: a hard state written without fsync reverts.
    n.disk.setHardState(n.syncedHard);
    n.raw = undefined;
    n.downUntil = this.now + this.rng.int(5, 80);
    this.stats.crashes++;
    // The survivors' transports see the connections to the crashed node break (a reset).
    for (const m of this.up()) this.connectionLost(m, n.id);
  }

  /** Feeds `n` the transport's signal that its connection to `peer` broke. */
  private connectionLost(n: SimNode, peer: NodeId): void {
    this.trace(`connection lost ${n.id} -> ${peer}`);
    this.stats.connectionLosses++;
    n.raw!.reportConnectionLost(peer);
  }

  /** Runs the whole scenario; throws SimFailure on any violated invariant. */
  run(): SimStats {
    for (let i = 0; i < this.opts.steps; i++) this.step();
    this.heal();
    return this.stats;
  }

  private up(): SimNode[] {
    const out: SimNode[] = [];
    for (const n of this.nodes.values()) if (n.raw) out.push(n);
    return out;
  }

  private leader(): SimNode | undefined {
    let best: SimNode | undefined;
    for (const n of this.nodes.values()) {
      if (n.raw && n.raw.raft.role === 'leader' && (!best || n.raw.raft.term > best.raw!.raft.term)) best = n;
    }
    return best;
  }

  /** One tick of simulated time: faults, client requests, ticks, deliveries. */
  step(): void {
    this.now++;
    const r = this.rng;
    if (!this.healing) this.injectFaults();
    for (const n of this.nodes.values()) {
      if (!n.raw && n.downUntil <= this.now) this.start(n);
    }
    // Client load.
    if (r.chance(0.4)) this.clientWrite();
    if (r.chance(0.08)) this.clientRead();
    for (const n of this.nodes.values()) {
      if (!n.raw) continue;
      n.raw.tick();
      this.handleReady(n);
    }
    for (let d = this.queue.popDue(this.now); d !== undefined; d = this.queue.popDue(this.now)) this.deliver(d);
  }

  private injectFaults(): void {
    const r = this.rng;
    for (const [k, until] of this.cuts) if (until <= this.now) this.cuts.delete(k);
    if (r.chance(this.crashRate)) {
      const ups = this.up();
      if (ups.length > 0) this.crash(r.pick(ups));
    }
    if (r.chance(this.partitionRate)) {
      this.stats.partitions++;
      const ids = [...this.nodes.keys()];
      const until = this.now + r.int(10, 120);
      if (r.chance(0.5)) {
        // Symmetric: split into two random sides.
        const side = new Set(ids.filter(() => r.chance(0.5)));
        for (const a of ids) for (const b of ids) if (side.has(a) !== side.has(b)) this.cuts.set(`${a}>${b}`, until);
        // A cut breaks connections too: the receiving side may see the reset.
        for (const b of ids) {
          const n = this.nodes.get(b)!;
          if (n.raw && r.chance(0.5)) this.connectionLost(n, r.pick(ids.filter((a) => side.has(a) !== side.has(b))) ?? b);
        }
      } else {
        // One-way: a node can send but not receive from some others (or the reverse).
        const a = r.pick(ids);
        for (const b of ids) if (b !== a && r.chance(0.6)) this.cuts.set(r.chance(0.5) ? `${a}>${b}` : `${b}>${a}`, until);
      }
    }
    const lead = this.leader();
    if (lead && r.chance(0.006)) {
      const voters = [...lead.raw!.raft.voters].filter((v) => v !== lead.id);
      if (voters.length > 0) {
        this.stats.transfers++;
        lead.raw!.transferLeadership(r.pick(voters));
        this.handleReady(lead);
      }
    }
    if (lead && r.chance(0.01)) this.confChange(lead);
    // A spurious signal (a connection reset while the peer lives on, often its leader): the
    // leader must not be disrupted, and no invariant may break.
    if (r.chance(0.02)) {
      const ups = this.up();
      if (ups.length > 1) {
        const n = r.pick(ups);
        const lead = n.raw!.raft.lead;
        this.connectionLost(n, lead !== 0 && r.chance(0.8) ? lead : r.pick(ups).id);
      }
    }
    for (const n of this.nodes.values()) if (n.raw && r.chance(0.03)) this.compact(n);
  }

  private confChange(lead: SimNode): void {
    const r = this.rng;
    const raft = lead.raw!.raft;
    const all = [...this.nodes.keys()];
    const outside = all.filter((id) => !raft.voters.has(id) && !raft.learners.has(id));
    const learners = [...raft.learners];
    const removable = [...raft.voters].filter((id) => id !== lead.id);
    const choices: (() => void)[] = [];
    if (outside.length > 0 && learners.length === 0) choices.push(() => lead.raw!.proposeConfChange({ type: 'addLearner', nodeId: r.pick(outside) }));
    if (learners.length > 0 && raft.voters.size < 5) choices.push(() => lead.raw!.proposeConfChange({ type: 'promote', nodeId: r.pick(learners) }));
    if (raft.voters.size > 3) choices.push(() => lead.raw!.proposeConfChange({ type: 'remove', nodeId: r.pick(removable) }));
    if (learners.length > 0) choices.push(() => lead.raw!.proposeConfChange({ type: 'remove', nodeId: r.pick(learners) }));
    if (choices.length === 0) return;
    try {
      r.pick(choices)();
      this.stats.confChanges++;
    } catch (e) {
      if (!isRaftError(e, 'ErrProposalDropped')) throw e;
    }
    this.handleReady(lead);
  }

  /** Log compaction (paper section 7): snapshot the state machine and drop a log prefix. */
  private compact(n: SimNode): void {
    const snapIndex = n.disk.snapshot().metadata.index;
    if (n.smIndex - snapIndex < 3 || n.smIndex > n.disk.lastIndex()) return;
    const data = enc.encode(JSON.stringify({ index: n.smIndex, hash: n.smHash }));
    n.disk.createSnapshot(n.smIndex, n.confState, data);
    n.disk.compact(Math.max(snapIndex + 1, n.smIndex - this.rng.int(0, 3)));
  }

  private clientWrite(): void {
    const ups = this.up();
    if (ups.length === 0) return;
    const n = this.rng.pick(ups);
    try {
      n.raw!.propose(enc.encode(`w${++this.writeSeq}`));
    } catch (e) {
      if (!isRaftError(e, 'ErrProposalDropped')) throw e;
    }
    this.handleReady(n);
  }

  /** Starts a read: it must observe every write committed anywhere before this moment. */
  private clientRead(): void {
    const ups = this.up();
    if (ups.length === 0) return;
    const n = this.rng.pick(ups);
    const ctx = `r${++this.readSeq}`;
    let floor = 0;
    for (const m of this.nodes.values()) {
      const c = m.raw ? m.raw.raft.raftLog.committed : m.disk.hardState().commit;
      if (c > floor) floor = c;
    }
    this.reads.set(ctx, floor);
    try {
      n.raw!.readIndex(ctx);
    } catch (e) {
      if (!isRaftError(e, 'ErrProposalDropped')) throw e;
    }
    this.handleReady(n);
  }

  private deliver(d: Delivery): void {
    if (d.kind === 'snapStatus') {
      const n = this.nodes.get(d.leader);
      if (n?.raw) {
        n.raw.reportSnapshot(d.peer, d.failed);
        this.handleReady(n);
      }
      return;
    }
    const m = d.m;
    const n = this.nodes.get(m.to);
    if (!n || !n.raw) return;
    if (!this.healing && this.cuts.has(`${m.from}>${m.to}`)) return;
    if (this.opts.trace) {
      this.trace(
        `${m.from}->${m.to} ${m.type} t${m.term} i${m.index} lt${m.logTerm} c${m.commit} n${m.entries.length}${m.entries.length ? `[${m.entries[0]!.index}..${m.entries[m.entries.length - 1]!.index}]` : ''}${m.reject ? ` REJ hint${m.rejectHint}` : ''}${m.snapshot ? ` snap${m.snapshot.metadata.index}` : ''}`,
      );
    }
    n.raw.step(m);
    this.handleReady(n);
  }

  private sendAll(n: SimNode, msgs: readonly Message[]): void {
    const r = this.rng;
    for (const m of msgs) {
      this.stats.messages++;
      const dropped = !this.healing && (r.chance(this.dropRate) || this.cuts.has(`${m.from}>${m.to}`));
      if (m.type === 'snap') {
        this.stats.snapshotsSent++;
        // The transport reports the outcome of a snapshot send to the leader (etcd's ReportSnapshot).
        this.queue.push(this.now + 1 + r.int(0, this.maxDelay), { kind: 'snapStatus', leader: n.id, peer: m.to, failed: dropped });
      }
      if (dropped) continue;
      // While healing the network is fast as well as reliable, so liveness can be judged.
      this.queue.push(this.now + 1 + (this.healing ? 0 : r.int(0, this.maxDelay)), { kind: 'msg', m });
      if (!this.healing && r.chance(this.dupRate)) this.queue.push(this.now + 1 + r.int(0, this.maxDelay * 2), { kind: 'msg', m });
    }
  }

  /** The driver loop for one node: persist, (maybe crash), send, apply, advance. */
  private handleReady(n: SimNode): void {
    while (n.raw && n.raw.hasReady()) {
      const raw = n.raw;
      const rd = raw.ready();
      this.checkLeader(n, rd);
      if (this.opts.trace) {
        const r = raw.raft;
        if (rd.softState) this.trace(`node ${n.id} -> ${rd.softState.role} term ${r.term} lead ${rd.softState.lead}`);
        if (rd.entries.length) this.trace(`node ${n.id} persist ${rd.entries.map((e) => `${e.index}@${e.term}`).join(',')}`);
        if (rd.snapshot) this.trace(`node ${n.id} persist snapshot ${rd.snapshot.metadata.index}@${rd.snapshot.metadata.term}`);
        if (rd.committedEntries.length) this.trace(`node ${n.id} apply ${rd.committedEntries.map((e) => `${e.index}@${e.term}:${entryKey(e)}`).join(',')}`);
      }
      // A leader's appends may leave before its own fsync (thesis 10.2.1).
      if (rd.sendBeforePersist) this.sendAll(n, rd.messages);
      // A crash before fsync loses this whole Ready (only early-sent leader appends escaped).
      if (!this.healing && (rd.entries.length > 0 || rd.hardState) && this.rng.chance(this.crashRate / 4)) {
        this.crash(n);
        return;
      }
      this.persist(n, rd);
      if (!rd.sendBeforePersist) this.sendAll(n, rd.messages);
      this.apply(n, rd);
      raw.advance(rd);
    }
  }

  private checkLeader(n: SimNode, rd: Ready): void {
    const raft = n.raw!.raft;
    if (raft.role !== 'leader') return;
    const prev = this.leaderOfTerm.get(raft.term);
    if (prev === undefined) {
      this.leaderOfTerm.set(raft.term, n.id);
      this.stats.elections++;
      // Leader completeness (paper section 5.4): a new leader holds every committed entry.
      const log = raft.raftLog;
      if (log.lastIndex() < this.maxCommitted) this.fail(`leader ${n.id} term ${raft.term} lacks committed entries up to ${this.maxCommitted}`);
      for (let i = Math.max(log.firstIndex(), 1); i <= this.maxCommitted; i++) {
        const c = this.committed.get(i);
        if (c && log.term(i) !== c.term) this.fail(`leader ${n.id} term ${raft.term} has term ${log.term(i)} at committed index ${i} (expected ${c.term})`);
      }
    } else if (prev !== n.id) {
      this.fail(`two leaders in term ${raft.term}: ${prev} and ${n.id}`);
    }
    void rd;
  }

  private persist(n: SimNode, rd: Ready): void {
    if (rd.snapshot) n.disk.applySnapshot(rd.snapshot);
    if (rd.entries.length > 0) {
      n.disk.append(rd.entries);
      // Log matching (paper section 5.3): an (index, term) pair identifies the entry and the
      // term of its predecessor, which by induction fixes the whole prefix.
      let prevTerm: number;
      try {
        prevTerm = n.disk.term(rd.entries[0]!.index - 1);
      } catch {
        prevTerm = -1;
      }
      for (const e of rd.entries) {
        const id = `${e.index}:${e.term}`;
        const val = `${entryKey(e)}|${prevTerm}`;
        const seen = this.entryIdentity.get(id);
        if (seen === undefined) {
          if (prevTerm >= 0) this.entryIdentity.set(id, val);
        } else if (prevTerm >= 0 && seen !== val) {
          this.fail(`log matching: node ${n.id} entry ${id} is ${val}, elsewhere ${seen}`);
        }
        prevTerm = e.term;
      }
    }
    if (rd.hardState) n.disk.setHardState(rd.hardState);
    if (rd.mustSync) n.syncedHard = n.disk.hardState();
  }

  private apply(n: SimNode, rd: Ready): void {
    const raw = n.raw!;
    if (rd.snapshot) {
      const s = decodeSmSnapshot(rd.snapshot.metadata.index, rd.snapshot.data);
      const expect = this.hashAt.get(s.index);
      if (expect !== undefined && expect !== s.hash) this.fail(`snapshot at ${s.index} on node ${n.id} has a different state`);
      n.smIndex = s.index;
      n.smHash = s.hash;
      n.confState = rd.snapshot.metadata.confState;
    }
    for (const e of rd.committedEntries) {
      if (e.index !== n.smIndex + 1) this.fail(`node ${n.id} applies ${e.index} after ${n.smIndex}`);
      const key = entryKey(e);
      // State machine safety (paper section 5.4.3): one entry per index, cluster-wide.
      const c = this.committed.get(e.index);
      if (c === undefined) {
        this.committed.set(e.index, { term: e.term, key });
        if (e.index > this.maxCommitted) this.maxCommitted = e.index;
        if (key.startsWith('n:w')) this.stats.writesCommitted++;
      } else if (c.term !== e.term || c.key !== key) {
        this.fail(`state machine safety: node ${n.id} applies ${key}@${e.term} at ${e.index}, another applied ${c.key}@${c.term}`);
      }
      n.smHash = fnv(n.smHash, e.data, e.type === 'conf' ? 2 : 1);
      n.smIndex = e.index;
      const h = this.hashAt.get(e.index);
      if (h === undefined) this.hashAt.set(e.index, n.smHash);
      else if (h !== n.smHash) this.fail(`node ${n.id} state diverges at ${e.index}`);
      if (e.type === 'conf') {
        try {
          n.confState = raw.applyConfChange(decodeConfChange(e.data));
        } catch (err) {
          if (err instanceof RaftError && err.code === 'ErrInvalidConfChange') this.fail(`undecodable conf change at ${e.index}`);
          throw err;
        }
      }
    }
    for (const rs of rd.readStates) {
      const floor = this.reads.get(rs.context);
      if (floor === undefined) continue; // duplicate answer
      this.reads.delete(rs.context);
      // Linearizable reads (thesis 6.4): the read index covers every write committed before the read began.
      if (rs.index < floor) this.fail(`stale read ${rs.context} on node ${n.id}: read index ${rs.index} < committed ${floor}`);
      n.waitingReads.push({ context: rs.context, index: rs.index });
    }
    if (n.waitingReads.length > 0) {
      n.waitingReads = n.waitingReads.filter((w) => {
        if (n.smIndex < w.index) return true;
        this.stats.readsServed++;
        return false;
      });
    }
  }

  /**
   * Healing phase: all nodes up, network perfect. The cluster must elect a leader and commit a
   * final write on every voter within healSteps (liveness after faults stop).
   */
  private heal(): void {
    this.healing = true;
    this.cuts.clear();
    for (const n of this.nodes.values()) if (!n.raw) this.start(n);
    let marker = '';
    let proposedAt = 0;
    for (let i = 0; i < this.opts.healSteps; i++) {
      this.step();
      const lead = this.leader();
      if (!lead) continue;
      // A proposal made to a deposed leader is lost (never acknowledged); clients retry.
      if (marker !== '' && this.now - proposedAt > 60) marker = '';
      if (marker === '') {
        proposedAt = this.now;
        marker = `w${++this.writeSeq}`;
        try {
          lead.raw!.propose(enc.encode(marker));
          this.handleReady(lead);
        } catch (e) {
          if (!isRaftError(e, 'ErrProposalDropped')) throw e;
          marker = '';
        }
        continue;
      }
      const idx = [...this.committed].find(([, c]) => c.key === `n:${marker}`)?.[0];
      if (idx === undefined) continue;
      const voters = lead.raw!.raft.voters;
      let all = true;
      for (const v of voters) if ((this.nodes.get(v)?.smIndex ?? 0) < idx) all = false;
      if (all) return;
    }
    const lead = this.leader();
    const detail = [...this.nodes.values()]
      .map((n) => `${n.id}:${n.raw?.raft.role}/t${n.raw?.raft.term}/c${n.raw?.raft.raftLog.committed}/a${n.smIndex}/last${n.raw?.raft.raftLog.lastIndex()}`)
      .join(' ');
    const prs = lead
      ? [...lead.raw!.raft.prs].map(([id, p]) => `${id}:${p.state}/m${p.match}/n${p.next}/ps${p.probeSent}/if${p.inflights.count}`).join(' ')
      : '';
    this.fail(
      `no progress after healing for ${this.opts.healSteps} ticks (leader ${lead?.id ?? 'none'} marker ${marker} voters ${lead ? [...lead.raw!.raft.voters].join(',') : ''}; ${detail}; progress ${prs})`,
    );
  }
}

/** Runs one seed; throws SimFailure (whose message contains the seed) on a violation. */
export function runSeed(seed: number, opts?: Partial<SimOptions>): SimStats {
  return new RaftSim(seed, opts).run();
}
