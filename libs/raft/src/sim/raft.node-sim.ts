import { RaftNode } from '../raft.node.js';
import { type AppliedEntry, isDurabilityFree } from '../raft.node.types.js';
import type { RawNode } from '../raft.rawnode.js';
import type { Entry, Message, NodeId, Ready } from '../raft.types.js';
import { SimFailure } from './raft.sim.js';
import { SimDisk } from './sim.disk.js';
import { SimKv, type SimKvObserver, fnv } from './sim.kv.js';
import { SimRandom } from './sim.random.js';
import { type SimProcess, SimScheduler } from './sim.scheduler.js';
import type { NodeSimOptions, NodeSimStats } from './raft.node-sim.types.js';

export type { NodeSimOptions, NodeSimStats } from './raft.node-sim.types.js';

/** Virtual milliseconds per simulation step, and per Raft tick of every node. */
export const STEP_MS = 5;
const TICK_MS = 10;

interface Member {
  readonly id: NodeId;
  readonly founding: boolean;
  readonly disk: SimDisk;
  proc: SimProcess;
  /** Set once RaftNode.create resolved for the current process. */
  node: RaftNode | undefined;
  kv: SimKv | undefined;
  /** Down (crashed) until this virtual time; 0 when up. */
  downUntil: number;
  /**
   * The Ready the driver is working on when it must be fsynced: the disk's completed-write
   * count when it was taken (the Ready's save is pending while the count is unchanged).
   */
  ready: { completedAt: number; sendBeforePersist: boolean } | undefined;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

/** The core inside a RaftNode, read (never driven) by the simulator's invariant checks. */
function coreOf(node: RaftNode): RawNode {
  return (node as unknown as { raw: RawNode }).raw;
}

/**
 * Deterministic simulation of a cluster of production RaftNodes (raft.node.ts) in one process:
 * every node runs the real driver loop on a virtual clock (sim.scheduler.ts) over a simulated
 * disk that separates written from synced (sim.disk.ts), behind a network that drops,
 * duplicates, delays, reorders and partitions messages, with crashes (process or power) and
 * restarts through RaftNode.create on the surviving disk. All of it follows one seed; the
 * invariants (docs/raft.md) are checked as the driver produces each Ready, message and apply.
 */
export class NodeSim implements SimKvObserver {
  readonly rng: SimRandom;
  readonly stats: NodeSimStats = {
    elections: 0,
    writesAcknowledged: 0,
    readsServed: 0,
    crashes: 0,
    powerLosses: 0,
    partitions: 0,
    snapshotsSent: 0,
    confChanges: 0,
    transfers: 0,
    messages: 0,
    connectionLosses: 0,
    earlyLeaderSends: 0,
    earlyDurabilityFree: 0,
    earlyApplies: 0,
    proposalsResent: 0,
    duplicateProposals: 0,
    fsyncs: 0,
    unsyncedKept: 0,
    unsyncedLost: 0,
    tornRecords: 0,
  };
  private readonly opts: NodeSimOptions;
  private readonly sched = new SimScheduler();
  private readonly members = new Map<NodeId, Member>();
  private readonly voters: NodeId[] = [];
  /** Directed links currently cut: `${from}>${to}` -> virtual time the cut heals. */
  private readonly cuts = new Map<string, number>();
  private readonly dropRate: number;
  private readonly dupRate: number;
  private readonly maxDelay: number;
  private readonly crashRate: number;
  private readonly partitionRate: number;
  private readonly snapshotEntries: number;
  private readonly keepEntries: number;
  private readonly maxInflight: number;
  private healing = false;
  private failure: SimFailure | undefined;
  // Global knowledge for the invariants.
  private readonly leaderOfTerm = new Map<number, NodeId>();
  /** Highest commit index checked for durability, per leader term. */
  private readonly checkedCommit = new Map<number, number>();
  private readonly appliedAt = new Map<number, { term: number; key: string }>();
  private readonly hashAt = new Map<number, number>();
  private readonly entryIdentity = new Map<string, string>();
  private readonly acknowledged = new Map<number, string>();
  /** Index at which each write (its key is unique) was applied: a write applies at one index only. */
  private readonly keyAppliedAt = new Map<string, number>();
  private maxApplied = 0;
  private writeSeq = 0;

  constructor(
    readonly seed: number,
    opts?: Partial<NodeSimOptions>,
  ) {
    this.rng = new SimRandom(seed);
    const r = this.rng;
    this.opts = {
      voters: opts?.voters ?? (r.chance(0.5) ? 3 : 5),
      spares: opts?.spares ?? 1,
      steps: opts?.steps ?? 400,
      healSteps: opts?.healSteps ?? 600,
      brokenLeaderAcksUnsynced: opts?.brokenLeaderAcksUnsynced ?? false,
      brokenAppendsEveryCopy: opts?.brokenAppendsEveryCopy ?? false,
      trace: opts?.trace,
    };
    this.dropRate = r.pick([0, 0.01, 0.05]);
    this.dupRate = r.pick([0, 0.02]);
    this.maxDelay = r.pick([2, 6, 20]);
    this.crashRate = r.pick([0.002, 0.005, 0.01]);
    this.partitionRate = r.pick([0, 0.003, 0.01]);
    this.snapshotEntries = r.pick([6, 15, 40]);
    this.keepEntries = r.pick([0, 2, 5]);
    this.maxInflight = r.pick([1, 2, 8]);
    const fsyncMs = r.pick<readonly [number, number]>([
      [1, 2],
      [1, 6],
      [3, 12],
    ]);
    for (let i = 1; i <= this.opts.voters; i++) this.voters.push(i);
    for (let i = 1; i <= this.opts.voters + this.opts.spares; i++) {
      const disk = new SimDisk(i, r, fsyncMs, (id, entries, prevTerm) => this.checkLogMatching(id, entries, prevTerm));
      const m: Member = {
        id: i,
        founding: i <= this.opts.voters,
        disk,
        proc: { alive: false },
        node: undefined,
        kv: undefined,
        downUntil: 0,
        ready: undefined,
      };
      if (this.opts.brokenLeaderAcksUnsynced) disk.ackBeforeSync = () => m.node !== undefined && coreOf(m.node).raft.role === 'leader';
      this.members.set(i, m);
    }
  }

  /** Runs the whole scenario; rejects with SimFailure on a violated invariant. */
  async run(): Promise<NodeSimStats> {
    try {
      for (const m of this.members.values()) this.start(m);
      for (let i = 0; i < this.opts.steps; i++) await this.step();
      await this.heal();
    } finally {
      for (const m of this.members.values()) m.proc.alive = false;
    }
    for (const m of this.members.values()) {
      this.countResends(m);
      this.stats.fsyncs += m.disk.stats.fsyncs;
      this.stats.unsyncedKept += m.disk.stats.unsyncedKept;
      this.stats.unsyncedLost += m.disk.stats.unsyncedLost;
      this.stats.tornRecords += m.disk.stats.tornRecords;
    }
    return this.stats;
  }

  /** Records the first violation (later ones follow from it) and throws it. */
  private fail(what: string): never {
    this.failure ??= new SimFailure(this.seed, this.sched.time, what);
    throw this.failure;
  }

  private trace(line: string): void {
    if (this.opts.trace) this.opts.trace(`[${this.sched.time}] ${line}`);
  }

  /** Starts a process on the member's disk: RaftNode.create, then start(). */
  private start(m: Member): void {
    this.trace(`start ${m.id}`);
    const proc: SimProcess = { alive: true };
    m.proc = proc;
    m.downUntil = 0;
    m.ready = undefined;
    const clock = this.sched.clockFor(proc);
    m.disk.attach(clock);
    const kv = new SimKv(m.id, this);
    m.kv = kv;
    m.node = undefined;
    RaftNode.create({
      id: m.id,
      storage: m.disk,
      stateMachine: kv,
      clock,
      transport: { send: (msgs) => this.send(m, proc, msgs) },
      bootstrapVoters: m.founding ? this.voters : undefined,
      tickMs: TICK_MS,
      electionTick: 10,
      heartbeatTick: 1,
      snapshotEntries: this.snapshotEntries,
      keepEntries: this.keepEntries,
      requestTimeoutMs: 2000,
      maxInflightMsgs: this.maxInflight,
      random: () => this.rng.next(),
    }).then(
      (node) => {
        if (!proc.alive) return;
        m.node = node;
        if (this.opts.brokenAppendsEveryCopy) (coreOf(node).raft as unknown as { dedupProposals: boolean }).dedupProposals = false;
        this.instrument(m, node);
        node.onFatal((e) => {
          if (proc.alive && !this.failure)
            this.failure = new SimFailure(this.seed, this.sched.time, `node ${m.id}'s driver loop failed: ${e.stack ?? e.message}`);
        });
        node.start();
      },
      (e: Error) => {
        if (proc.alive && !this.failure) this.failure = new SimFailure(this.seed, this.sched.time, `node ${m.id} failed to start: ${e.message}`);
      },
    );
  }

  /**
   * Watches the driver's use of its core without changing it: each Ready taken (to check the
   * leader invariants and to know while its fsync is pending) and each advance.
   */
  private instrument(m: Member, node: RaftNode): void {
    const raw = coreOf(node);
    const ready = raw.ready.bind(raw);
    const advance = raw.advance.bind(raw);
    raw.ready = (): Ready => {
      const rd = ready();
      this.checkLeader(m, raw);
      const saves = rd.snapshot !== undefined || rd.entries.length > 0 || rd.hardState !== undefined;
      m.ready = saves && rd.mustSync ? { completedAt: m.disk.completed, sendBeforePersist: rd.sendBeforePersist } : undefined;
      if (this.opts.trace && rd.entries.length > 0) this.trace(`node ${m.id} persist ${rd.entries.map((e) => `${e.index}@${e.term}`).join(',')}`);
      return rd;
    };
    raw.advance = (rd: Ready): void => {
      m.ready = undefined;
      advance(rd);
    };
  }

  /** Whether the member's driver is between taking a Ready that must be fsynced and that fsync. */
  private beforeFsync(m: Member): { sendBeforePersist: boolean } | undefined {
    return m.ready !== undefined && m.disk.completed === m.ready.completedAt ? m.ready : undefined;
  }

  private crash(m: Member): void {
    const processOnly = this.rng.chance(0.5);
    this.trace(`crash ${m.id}${processOnly ? '' : ' (power loss)'}`);
    m.proc.alive = false;
    this.countResends(m);
    m.node = undefined;
    m.kv = undefined;
    m.ready = undefined;
    m.disk.crash(processOnly);
    m.downUntil = this.sched.time + this.rng.int(20, 400);
    this.stats.crashes++;
    if (!processOnly) this.stats.powerLosses++;
    for (const o of this.members.values()) if (o.node) this.connectionLost(o, m.id);
  }

  /** Adds the resend figures of `m`'s current process (before it is dropped). */
  private countResends(m: Member): void {
    if (!m.node) return;
    this.stats.proposalsResent += m.node.resendStats.resent;
    this.stats.duplicateProposals += coreOf(m.node).raft.proposalStats.duplicates;
  }

  private connectionLost(m: Member, peer: NodeId): void {
    this.stats.connectionLosses++;
    m.node!.reportConnectionLost(peer);
  }

  private up(): Member[] {
    return [...this.members.values()].filter((m) => m.node !== undefined);
  }

  private leader(): Member | undefined {
    let best: Member | undefined;
    for (const m of this.members.values()) {
      const r = m.node && coreOf(m.node).raft;
      if (r && r.role === 'leader' && (!best || r.term > coreOf(best.node!).raft.term)) best = m;
    }
    return best;
  }

  /** One step: run the virtual time forward, then faults and client requests. */
  private async step(): Promise<void> {
    await this.sched.runUntil(this.sched.time + STEP_MS, () => this.failure !== undefined);
    if (this.failure) throw this.failure;
    const now = this.sched.time;
    for (const m of this.members.values()) if (!m.proc.alive && m.downUntil <= now) this.start(m);
    if (!this.healing) this.injectFaults();
    if (this.rng.chance(0.5)) this.clientWrite();
    if (this.rng.chance(0.08)) this.clientRead();
  }

  private injectFaults(): void {
    const r = this.rng;
    const now = this.sched.time;
    for (const [k, until] of this.cuts) if (until <= now) this.cuts.delete(k);
    if (r.chance(this.crashRate)) {
      const live = [...this.members.values()].filter((m) => m.proc.alive);
      if (live.length > 0) this.crash(r.pick(live));
    }
    if (r.chance(this.partitionRate)) {
      this.stats.partitions++;
      const ids = [...this.members.keys()];
      const until = now + r.int(50, 600);
      if (r.chance(0.5)) {
        const side = new Set(ids.filter(() => r.chance(0.5)));
        for (const a of ids) for (const b of ids) if (side.has(a) !== side.has(b)) this.cuts.set(`${a}>${b}`, until);
        for (const m of this.up()) {
          const other = ids.filter((a) => side.has(a) !== side.has(m.id));
          if (other.length > 0 && r.chance(0.5)) this.connectionLost(m, r.pick(other));
        }
      } else {
        const a = r.pick(ids);
        for (const b of ids) if (b !== a && r.chance(0.6)) this.cuts.set(r.chance(0.5) ? `${a}>${b}` : `${b}>${a}`, until);
      }
    }
    const lead = this.leader();
    if (lead && r.chance(0.004)) {
      const others = [...coreOf(lead.node!).raft.voters].filter((v) => v !== lead.id);
      if (others.length > 0) {
        this.stats.transfers++;
        try {
          lead.node!.transferLeadership(r.pick(others));
        } catch {
          // Not the leader any more: nothing to transfer.
        }
      }
    }
    if (lead && r.chance(0.006)) this.confChange(lead);
    if (r.chance(0.01)) {
      const ups = this.up();
      if (ups.length > 1) {
        const m = r.pick(ups);
        const l = coreOf(m.node!).raft.lead;
        this.connectionLost(m, l !== 0 && r.chance(0.8) ? l : r.pick(ups).id);
      }
    }
  }

  private confChange(lead: Member): void {
    const r = this.rng;
    const raft = coreOf(lead.node!).raft;
    const node = lead.node!;
    const outside = [...this.members.keys()].filter((id) => !raft.voters.has(id) && !raft.learners.has(id));
    const learners = [...raft.learners];
    const removable = [...raft.voters].filter((id) => id !== lead.id);
    const choices: (() => Promise<void>)[] = [];
    if (outside.length > 0 && learners.length === 0) choices.push(() => node.addLearner(r.pick(outside)));
    if (learners.length > 0 && raft.voters.size < 5) choices.push(() => node.promote(r.pick(learners)));
    if (raft.voters.size > 3) choices.push(() => node.removeNode(r.pick(removable)));
    if (learners.length > 0) choices.push(() => node.removeNode(r.pick(learners)));
    if (choices.length === 0) return;
    this.stats.confChanges++;
    // The outcome does not matter here (a change may be dropped or time out): the invariants do.
    r.pick(choices)().catch(() => undefined);
  }

  private clientWrite(): void {
    const ups = this.up();
    if (ups.length === 0) return;
    const m = this.rng.pick(ups);
    const key = `w${++this.writeSeq}`;
    this.trace(`write ${key} on ${m.id}`);
    void m.node!.propose(enc.encode(key)).then(
      ({ index, term }) => {
        // Acknowledged: applied here at (index, term). It must never be lost from now on.
        const at = this.appliedAt.get(index);
        if (!at || at.key !== key || at.term !== term) this.record(`write ${key} acknowledged at ${index}@${term} but ${at?.key}@${at?.term} is applied there`);
        this.acknowledged.set(index, key);
        this.stats.writesAcknowledged++;
      },
      () => undefined,
    );
  }

  /** A read must observe every write committed anywhere before it started (thesis 6.4). */
  private clientRead(): void {
    const ups = this.up();
    if (ups.length === 0) return;
    let floor = 0;
    for (const o of ups) floor = Math.max(floor, coreOf(o.node!).raft.raftLog.committed);
    const m = this.rng.pick(ups);
    m.node!.readIndex().then(
      (index) => {
        if (index < floor) this.record(`stale read on node ${m.id}: read index ${index} < committed ${floor}`);
        this.stats.readsServed++;
      },
      () => undefined,
    );
  }

  /** A violation seen in a callback (not on the driver's path): reported by the next step. */
  private record(what: string): void {
    this.failure ??= new SimFailure(this.seed, this.sched.time, what);
  }

  private send(m: Member, proc: SimProcess, msgs: readonly Message[]): void {
    if (!proc.alive) return;
    const r = this.rng;
    const early = this.beforeFsync(m);
    for (const msg of msgs) {
      this.stats.messages++;
      if (this.opts.trace) this.trace(`send ${describe(msg)}${early ? ' (before fsync)' : ''}`);
      this.checkDurableAnswer(m, msg, early);
      const dropped = !this.healing && (r.chance(this.dropRate) || this.cuts.has(`${msg.from}>${msg.to}`));
      if (msg.type === 'snap') {
        this.stats.snapshotsSent++;
        // The transport reports the outcome of a snapshot send to the leader that sent it.
        this.sched.after(1 + r.int(0, this.maxDelay), () => {
          if (m.proc === proc && proc.alive && m.node) m.node.reportSnapshot(msg.to, dropped);
        });
      }
      if (dropped) continue;
      this.sched.after(this.healing ? 1 : 1 + r.int(0, this.maxDelay), () => this.deliver(msg));
      if (!this.healing && r.chance(this.dupRate)) this.sched.after(1 + r.int(0, this.maxDelay * 2), () => this.deliver(msg));
    }
  }

  private deliver(msg: Message): void {
    const to = this.members.get(msg.to);
    if (!to?.node) return;
    if (!this.healing && this.cuts.has(`${msg.from}>${msg.to}`)) return;
    if (this.opts.trace) this.trace(`deliver ${describe(msg)}`);
    to.node.step(msg);
  }

  /**
   * The Ready contract as the production driver bends it: before the Ready's fsync only a
   * leader's sendBeforePersist messages and durability-free ones may leave; and whatever an
   * answer acknowledges (an appended index, a granted vote) is on the synced disk when it leaves.
   */
  private checkDurableAnswer(m: Member, msg: Message, early: { sendBeforePersist: boolean } | undefined): void {
    if (early && msg.type !== 'snap') {
      if (early.sendBeforePersist) this.stats.earlyLeaderSends++;
      else if (isDurabilityFree(msg)) this.stats.earlyDurabilityFree++;
      else this.fail(`node ${m.id} sent ${msg.type} to ${msg.to} before its Ready was fsynced`);
    }
    // An answer made before a later term's append truncated the entry (both in one Ready) leaves
    // after that truncation: it was true when made, before the node moved on.
    const moved = (m.disk.durableHardState()?.term ?? 0) > msg.term;
    if (msg.type === 'appResp' && !msg.reject && msg.index > 0 && !moved && !m.disk.durablyHolds(msg.index)) {
      this.fail(`node ${m.id} acknowledged index ${msg.index} to ${msg.to} before it was synced`);
    }
    if (msg.type === 'voteResp' && !msg.reject) {
      const h = m.disk.durableHardState();
      if (!h || h.term < msg.term || (h.term === msg.term && h.vote !== msg.to))
        this.fail(`node ${m.id} granted its vote in term ${msg.term} to ${msg.to} before it was synced`);
    }
  }

  /** Election safety, leader completeness, and commit durability, as a leader takes a Ready. */
  private checkLeader(m: Member, raw: RawNode): void {
    const raft = raw.raft;
    if (raft.role !== 'leader') return;
    const prev = this.leaderOfTerm.get(raft.term);
    if (prev === undefined) {
      this.leaderOfTerm.set(raft.term, m.id);
      this.stats.elections++;
      this.trace(`node ${m.id} leads term ${raft.term}`);
      const log = raft.raftLog;
      if (log.lastIndex() < this.maxApplied) this.fail(`leader ${m.id} term ${raft.term} lacks applied entries up to ${this.maxApplied}`);
      for (const [i, a] of this.appliedAt) {
        if (i < log.firstIndex()) continue;
        if (log.term(i) !== a.term) this.fail(`leader ${m.id} term ${raft.term} has term ${log.term(i)} at applied index ${i} (applied: ${a.term})`);
      }
    } else if (prev !== m.id) {
      this.fail(`two leaders in term ${raft.term}: ${prev} and ${m.id}`);
    }
    // What the leader counted as committed is durable on a quorum of its voters. It counts only
    // entries of its own term (5.4.2), under the membership in force now (changes apply only
    // between Readies); an older commit index it learned as a follower was counted by others.
    const c = raft.raftLog.committed;
    if (c <= (this.checkedCommit.get(raft.term) ?? 0) || c < raft.raftLog.firstIndex()) return;
    this.checkedCommit.set(raft.term, c);
    const term = raft.raftLog.term(c);
    if (term !== raft.term) return;
    let holders = 0;
    for (const v of raft.voters) if (this.members.get(v)?.disk.durablyHolds(c, term)) holders++;
    if (holders <= raft.voters.size / 2)
      this.fail(`leader ${m.id} term ${raft.term} committed ${c}@${term}, durable on only ${holders} of ${raft.voters.size} voters`);
  }

  private checkLogMatching(id: NodeId, entries: readonly Entry[], prevTerm: number): void {
    for (const e of entries) {
      const k = `${e.index}:${e.term}`;
      const val = `${e.type}:${Buffer.from(e.data).toString('hex')}|${prevTerm}`;
      const seen = this.entryIdentity.get(k);
      if (seen === undefined) {
        if (prevTerm >= 0) this.entryIdentity.set(k, val);
      } else if (prevTerm >= 0 && seen !== val) {
        this.fail(`log matching: node ${id} entry ${k} is ${val}, elsewhere ${seen}`);
      }
      prevTerm = e.term;
    }
  }

  /** State-machine safety and durability of acknowledged writes, at each apply. */
  onApply(kv: SimKv, e: AppliedEntry, key: string): void {
    const m = this.members.get(kv.node)!;
    if (m.kv !== kv) return; // a crashed process's late call
    if (this.beforeFsync(m)) {
      this.stats.earlyApplies++;
      if (!m.disk.durablyHolds(e.index, e.term))
        this.fail(`node ${m.id} applied ${e.index}@${e.term} before its Ready's fsync, and it is not on its synced disk`);
    }
    const a = this.appliedAt.get(e.index);
    if (a === undefined) {
      this.appliedAt.set(e.index, { term: e.term, key });
      if (e.index > this.maxApplied) this.maxApplied = e.index;
    } else if (a.term !== e.term || a.key !== key) {
      const acked = this.acknowledged.get(e.index);
      this.fail(
        `${acked ? `acknowledged write ${acked} lost: ` : 'state machine safety: '}node ${m.id} applies ${key}@${e.term} at ${e.index}, another applied ${a.key}@${a.term}`,
      );
    }
    const once = this.keyAppliedAt.get(key);
    if (once === undefined) this.keyAppliedAt.set(key, e.index);
    else if (once !== e.index) this.fail(`write ${key} applied twice, at ${once} and at ${e.index}: a proposal must be appended at most once`);
    const h = this.hashAt.get(e.index);
    const next = fnv(kv.hash, e.data, e.index);
    if (h === undefined) this.hashAt.set(e.index, next);
    else if (h !== next) this.fail(`node ${m.id}'s state diverges at ${e.index}`);
  }

  onRestore(kv: SimKv, s: { index: number; hash: number }): void {
    const h = this.hashAt.get(s.index);
    if (h !== undefined && h !== s.hash) this.fail(`node ${kv.node} restored a snapshot at ${s.index} with a different state`);
  }

  /**
   * Healing: every node up, the network perfect. A leader must apply a fresh write on every
   * voter within healSteps (liveness once faults stop).
   */
  private async heal(): Promise<void> {
    this.healing = true;
    this.cuts.clear();
    for (const m of this.members.values()) if (!m.proc.alive) this.start(m);
    let marker: Promise<number | undefined> | undefined;
    let index: number | undefined;
    for (let i = 0; i < this.opts.healSteps; i++) {
      await this.step();
      const lead = this.leader();
      if (!lead) continue;
      if (index === undefined && marker === undefined) {
        marker = this.writeOn(lead);
        void marker.then((x) => {
          index = x;
          marker = undefined;
        });
        continue;
      }
      if (index === undefined) continue;
      const voters = coreOf(lead.node!).raft.voters;
      if ([...voters].every((v) => (this.members.get(v)?.kv?.index ?? 0) >= index!)) return;
    }
    const detail = [...this.members.values()]
      .map((m) => {
        const r = m.node && coreOf(m.node).raft;
        return `${m.id}:${r?.role}/t${r?.term}/c${r?.raftLog.committed}/a${m.kv?.index}/last${r?.raftLog.lastIndex()}`;
      })
      .join(' ');
    this.fail(`no progress after healing for ${this.opts.healSteps} steps (marker index ${index}; ${detail})`);
  }

  private writeOn(m: Member): Promise<number | undefined> {
    const key = `w${++this.writeSeq}`;
    return m.node!.propose(enc.encode(key)).then(
      ({ index }) => index,
      () => undefined,
    );
  }
}

function describe(m: Message): string {
  // Proposals are named by their keys (after RaftNode's 12-byte envelope): they have no index yet.
  const ents =
    m.type === 'prop' || m.type === 'propDropped'
      ? `[${m.entries.map((e) => dec.decode(e.data.subarray(12))).join(',')}]`
      : m.entries.length > 0
        ? `[${m.entries[0]!.index}..${m.entries[m.entries.length - 1]!.index}]`
        : '';
  return `${m.from}->${m.to} ${m.type} t${m.term} i${m.index} lt${m.logTerm} c${m.commit}${ents}${m.reject ? ` REJ hint${m.rejectHint}` : ''}${m.snapshot ? ` snap${m.snapshot.metadata.index}` : ''}`;
}

/** Runs one seed; rejects with SimFailure (whose message holds the seed) on a violation. */
export function runNodeSeed(seed: number, opts?: Partial<NodeSimOptions>): Promise<NodeSimStats> {
  return new NodeSim(seed, opts).run();
}
