import { unlink } from 'node:fs/promises';
import { REAL_CLOCK, type RaftClock, type TimerHandle } from './raft.clock.js';
import { LeaderStateSignal, leaderStateOf, type LeaderState } from './raft.leader-state.js';
import { isDurabilityFree, type PendingProposal, type PendingRead, type RaftNodeOptions, type StateMachine } from './raft.node.types.js';
import { RawNode } from './raft.rawnode.js';
import type { RaftTransport } from './raft.transport.js';
import {
  type ConfChange,
  type ConfState,
  type Entry,
  type Message,
  type NodeId,
  type RaftStatus,
  type Ready,
  RaftError,
  decodeConfChange,
  isRaftError,
  msg,
  NONE,
} from './raft.types.js';
import { ENVELOPE_BYTES, envelopeProposer, envelopeSeq, hasEnvelope } from './raft.proposal-index.js';

export * from './raft.node.types.js';

const NO_DATA = new Uint8Array(0);
const HEADER = ENVELOPE_BYTES;
const EMPTY_MESSAGES: readonly Message[] = [];
/** RaftNodeOptions.commitNoticeMs by default. */
const DEFAULT_COMMIT_NOTICE_MS = 10;

function inConf(c: ConfState, id: NodeId): boolean {
  return c.voters.includes(id) || c.learners.includes(id);
}

/**
 * The node driver: owns a RawNode, ticks it from a timer and runs the loop of the Ready
 * contract — persist (one fsync per Ready) -> send -> apply -> advance. Proposals carry a small
 * envelope (proposer id, sequence) so the proposer learns when its entry is applied, also when
 * a follower forwarded it to the leader.
 */
export class RaftNode {
  readonly id: NodeId;
  private readonly raw: RawNode;
  private transport: RaftTransport | undefined;
  private readonly storage: RaftNodeOptions['storage'];
  private readonly clock: RaftClock;
  private readonly sm: StateMachine;
  private readonly opts: Required<Pick<RaftNodeOptions, 'tickMs' | 'snapshotEntries' | 'keepEntries' | 'requestTimeoutMs' | 'resendMs' | 'commitNoticeMs'>>;
  private resendGate: (() => boolean) | undefined;
  /** Something may make a pending proposal due for a resend: look at them in the next feed. */
  private resendCheck = false;
  /** Proposals sent again (a copy was lost, dropped, or its leader changed). */
  readonly resendStats = { resent: 0 };
  /**
   * Proposal sequence, started from the clock so that a restarted process never reuses the
   * (proposer id, seq) of an entry its previous incarnation appended: such an entry may commit
   * after the restart and would otherwise resolve an unrelated new proposal. (A collision needs
   * more than 1000 proposals per millisecond of the previous incarnation's life.)
   */
  private seq: number;
  private readonly proposals = new Map<number, PendingProposal>();
  private removedNote: string | undefined;
  private removedByPeer: string | undefined;
  private readonly reads = new Map<string, PendingRead>();
  private queuedProposals: Uint8Array[] = [];
  private queuedMessages: Message[] = [];
  /** Files of snapshots received since the last Ready (see removeUnusedSnapshotFiles). */
  private receivedSnapshotFiles: string[] = [];
  private ticks = 0;
  private running = false;
  private scheduled = false;
  private stopped = false;
  private tickTimer: TimerHandle | undefined;
  /** Armed while a leader owes followers a commit notice (see commitNoticeMs). */
  private noticeTimer: TimerHandle | undefined;
  private noticeDue = false;
  private applied: number;
  private smDurable: number;
  private confState: ConfState;
  /** Membership after each configuration entry applied since the last snapshot (and at it). */
  private confHistory: { index: number; confState: ConfState }[];
  private loopError: Error | undefined;
  /** A sync of the durable state machine, running beside the loop (see maybeSnapshot). */
  private smSyncing: Promise<void> | undefined;
  /** The index the last finished sync made durable, until the log is compacted to it. */
  private smSynced: number | undefined;
  private fatalListeners: ((e: Error) => void)[] = [];
  /** Called by feed() before it takes the queued proposals (setProposalSource). */
  private proposalSource: (() => void) | undefined;
  /** wake() was called: the loop runs feed() once more, which calls the proposal source. */
  private sourceDue = false;
  private idleWaiters: (() => void)[] = [];
  private readonly leaderState = new LeaderStateSignal();

  private constructor(o: RaftNodeOptions, raw: RawNode, applied: number) {
    this.id = o.id;
    this.raw = raw;
    this.transport = o.transport;
    this.storage = o.storage;
    this.seq = (this.clock = o.clock ?? REAL_CLOCK).now() * 1000;
    this.sm = o.stateMachine;
    this.opts = {
      tickMs: o.tickMs ?? 100,
      snapshotEntries: o.snapshotEntries ?? 10_000,
      keepEntries: o.keepEntries ?? 1000,
      requestTimeoutMs: o.requestTimeoutMs ?? 10_000,
      resendMs: o.resendMs ?? 2 * (o.electionTick ?? 10) * (o.tickMs ?? 100),
      commitNoticeMs: o.commitNoticeMs ?? DEFAULT_COMMIT_NOTICE_MS,
    };
    this.applied = applied;
    this.smDurable = o.stateMachine.appliedIndex();
    const snapMeta = o.storage.snapshot().metadata;
    this.confState = snapMeta.confState;
    this.confHistory = [{ index: snapMeta.index, confState: snapMeta.confState }];
    // A removal this node applied before a snapshot of its own covered it: the configuration
    // replayed from that snapshot no longer shows the change, the record does.
    const removedAt = o.storage.removedAt?.();
    if (removedAt !== undefined) this.removedNote = `its removal from the configuration was applied at index ${removedAt}`;
    // A write the state machine failed after apply() returned: its state may now be behind what
    // this node has told its proposers, so the node stops at once (see fail()).
    o.stateMachine.onFailure?.((e) => {
      if (!this.stopped) this.fail(e);
    });
  }

  /**
   * Opens a node on its storage: bootstraps an empty storage with bootstrapVoters (or leaves
   * it empty for a node that will join), restores the state machine from the stored snapshot
   * when it is behind, and replays the committed log after it.
   */
  static async create(o: RaftNodeOptions): Promise<RaftNode> {
    if (o.storage.isEmpty() && o.bootstrapVoters && o.bootstrapVoters.length > 0) await o.storage.bootstrap(o.bootstrapVoters);
    const snap = o.storage.snapshot();
    if (snap.metadata.index > 0 && o.stateMachine.appliedIndex() < snap.metadata.index) {
      // A metadata-only snapshot (anything past the founding one at index 1 with no data) was
      // written after the state machine was synced up to it: being behind it means the state
      // machine's data was lost or replaced, and the log before it is gone. Refuse to start
      // rather than come up with an empty state that claims to be at that index.
      if (snap.data.length === 0 && snap.file === undefined && snap.metadata.index > 1) {
        throw new RaftError(
          'ErrCorrupt',
          `the state machine is at index ${o.stateMachine.appliedIndex()}, behind the log's snapshot at ${snap.metadata.index}, and the snapshot holds no data: the node's state-machine data is missing; remove this member and add it back with an empty data dir`,
        );
      }
      await o.stateMachine.restore({ index: snap.metadata.index, term: snap.metadata.term, data: snap.data, file: snap.file });
    }
    // A received snapshot whose install was interrupted kept its data in the log's storage until now; a durable state machine holds it from here on.
    if (o.stateMachine.sync && o.stateMachine.appliedIndex() >= snap.metadata.index) await o.storage.dropSnapshotData();
    // Always replay from the snapshot: membership changes after it must be re-applied to the
    // core even when a durable state machine already holds their effects.
    const applied = snap.metadata.index;
    const raw = new RawNode({
      id: o.id,
      storage: o.storage,
      electionTick: o.electionTick ?? 10,
      heartbeatTick: o.heartbeatTick ?? 1,
      random: o.random ?? Math.random,
      applied,
      checkQuorum: true,
      preVote: true,
      dedupProposals: true,
      deferCommitNotices: (o.commitNoticeMs ?? DEFAULT_COMMIT_NOTICE_MS) > 0,
      maxSizePerMsg: 1 << 20,
      maxInflightMsgs: o.maxInflightMsgs ?? 1,
    });
    return new RaftNode(o, raw, applied);
  }

  setTransport(t: RaftTransport): void {
    this.transport = t;
  }

  /**
   * Says whether every member's build appends a proposal at most once however many copies of
   * it reach it as leader (docs/raft.md "Resent proposals"). While it does (the default without
   * a gate), a proposal that was sent stays pending until it is applied or times out: this node
   * sends it again when its leader or term changes, when a copy comes back dropped or
   * undelivered, and every resendMs. Otherwise a proposal fails at once when its copy is known
   * lost (ErrProposalDropped) or its leader lost leadership (ErrLeadershipLost), as before.
   */
  setResendGate(gate: (() => boolean) | undefined): void {
    this.resendGate = gate;
  }

  /** Whether sent proposals are resent (see setResendGate). */
  resendsProposals(): boolean {
    return this.resendGate?.() ?? true;
  }

  /** Starts the tick timer. */
  start(): void {
    if (this.tickTimer) return;
    this.tickTimer = this.clock.setInterval(() => {
      this.ticks++;
      this.schedule();
    }, this.opts.tickMs);
    // A group whose only voter is this node need not wait out a randomized election timeout
    // (1-2 s by default) to lead: campaign now. Safe whatever the real membership is — an
    // early campaign is only an election — and it makes a single node ready at once.
    const cs = this.confState;
    if (cs.voters.length === 1 && cs.voters[0] === this.id && (cs.learners?.length ?? 0) === 0) this.raw.campaign();
    this.schedule();
  }

  /** The error that stopped the driver loop for good (see loop()), if one did. */
  failure(): Error | undefined {
    return this.loopError;
  }

  /**
   * Calls `listener` once the driver loop failed for good (at once, asynchronously, when it
   * already has). Not called by stop().
   */
  onFatal(listener: (e: Error) => void): void {
    const failed = this.loopError;
    if (failed) queueMicrotask(() => listener(failed));
    else this.fatalListeners.push(listener);
  }

  /**
   * Calls `listener` with the leader state (raft.leader-state.ts) whenever a turn of the driver
   * loop changed it, and at once with the current one. Not called after stop() or a failure.
   */
  onLeaderState(listener: (s: LeaderState) => void): void {
    this.leaderState.subscribe(listener);
  }

  /** Stops ticking and rejects everything pending with ErrStopped. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.tickTimer) this.clock.clearInterval(this.tickTimer);
    this.tickTimer = undefined;
    if (this.noticeTimer !== undefined) this.clock.clearTimeout(this.noticeTimer);
    this.noticeTimer = undefined;
    while (this.running) await new Promise<void>((r) => this.idleWaiters.push(r));
    // The caller closes the state machine next: a sync under way ends first.
    await this.smSyncing;
    this.failPending(new RaftError('ErrStopped', 'node stopped'));
  }

  /** Rejects every pending proposal and read with `err`. */
  private failPending(err: Error): void {
    // What the proposal source still holds is proposed now, and refused (the node is stopped).
    if (this.sourceDue) {
      this.sourceDue = false;
      this.proposalSource?.();
    }
    for (const p of this.proposals.values()) {
      this.clock.clearTimeout(p.timer);
      p.reject(err);
    }
    this.proposals.clear();
    for (const r of this.reads.values()) {
      this.clock.clearTimeout(r.timer);
      r.reject(err);
    }
    this.reads.clear();
  }

  /** Feeds a message from the transport. */
  step(m: Message): void {
    if (this.stopped) return;
    if (m.type === 'propDropped') return this.proposalsDropped(m);
    this.queuedMessages.push(m);
    this.schedule();
  }

  reportUnreachable(id: NodeId): void {
    if (!this.stopped) this.raw.reportUnreachable(id);
  }

  /** The transport saw the connection to `id` break (see RawNode.reportConnectionLost). */
  reportConnectionLost(id: NodeId): void {
    if (!this.stopped) this.raw.reportConnectionLost(id);
  }

  /**
   * The transport never sent these forwarded proposals and read requests (no connection to the
   * leader was up): nothing of them can commit, so those of this node fail at once with
   * ErrProposalDropped, which a caller may retry safely, rather than waiting for a leader
   * change (outcome unknown) or the request timeout.
   */
  reportUndelivered(msgs: readonly Message[]): void {
    if (this.stopped) return;
    const err = new RaftError('ErrProposalDropped', 'the leader could not be reached; the request was not sent');
    for (const m of msgs) {
      if (m.type === 'readIndex') {
        const r = this.reads.get(m.context);
        if (r && r.index < 0) {
          this.clock.clearTimeout(r.timer);
          this.reads.delete(m.context);
          r.reject(err);
        }
        continue;
      }
      if (m.type === 'prop') this.dropped(m.entries, err, 'the leader could not be reached');
    }
  }

  /**
   * A node dropped proposals forwarded to it (it had no leader, a leadership transfer was under
   * way, ...) and sent them back: this node's own fail with ErrProposalDropped, which the
   * caller may retry safely (nothing was appended); those this node forwarded for another
   * proposer go on to that proposer.
   */
  private proposalsDropped(m: Message): void {
    const why = `node ${m.from} dropped the forwarded proposal: ${m.context || 'no reason given'}`;
    this.dropped(m.entries, new RaftError('ErrProposalDropped', why), why);
  }

  /**
   * Proposal entries that were not appended anywhere: this node's own fail with `err`; those it
   * forwarded for another node go back to their proposer (a propDropped message).
   */
  private dropped(entries: readonly Entry[], err: RaftError, why: string): void {
    const others = new Map<NodeId, Entry[]>();
    const resend = this.resendsProposals();
    for (const e of entries) {
      if (!hasEnvelope(e)) continue;
      const proposer = envelopeProposer(e.data);
      if (proposer !== this.id) {
        const es = others.get(proposer);
        if (es) es.push(e);
        else others.set(proposer, [e]);
      } else if (!resend) this.failProposal(e.data, err);
      else {
        // Another copy may still be on its way or in the log: send it again rather than fail.
        const p = this.proposals.get(envelopeSeq(e.data));
        if (p) {
          p.due = true;
          this.resendCheck = true;
        }
      }
    }
    for (const [to, es] of others) {
      this.transport?.send([msg({ type: 'propDropped', from: this.id, to, entries: es, context: why })]);
    }
  }

  reportSnapshot(id: NodeId, failed: boolean): void {
    if (this.stopped) return;
    this.raw.reportSnapshot(id, failed);
    this.schedule();
  }

  /**
   * Replicates `data`; resolves once the entry is committed AND applied here, with the state
   * machine's result. Rejects with ErrNotLeader when no leader is known, ErrLeadershipLost when
   * this node lost leadership before the entry committed (outcome unknown: it may still commit),
   * ErrTimeout after requestTimeoutMs (outcome unknown), ErrStopped on shutdown.
   */
  propose(data: Uint8Array): Promise<{ index: number; term: number; result: unknown }> {
    if (this.stopped) return Promise.reject(new RaftError('ErrStopped', 'node stopped'));
    if (this.loopError) return Promise.reject(this.loopError);
    const seq = ++this.seq;
    const env = new Uint8Array(HEADER + data.length);
    const v = new DataView(env.buffer);
    v.setUint32(0, this.id);
    v.setFloat64(4, seq);
    env.set(data, HEADER);
    return new Promise((resolve, reject) => {
      const timer = this.clock.setTimeout(() => {
        this.proposals.delete(seq);
        reject(new RaftError('ErrTimeout', `proposal ${seq} not applied within ${this.opts.requestTimeoutMs} ms`));
      }, this.opts.requestTimeoutMs);
      this.proposals.set(seq, { resolve, reject, timer, leaderTerm: 0, env, sent: 0, sentAt: 0, sentLead: 0, sentTerm: 0, due: false, frozen: false });
      this.queuedProposals.push(env);
      this.schedule();
    });
  }

  /**
   * A function the driver loop calls each time it is about to take the queued proposals, in
   * which the caller may propose() what it gathered meanwhile (RaftProposer packs the etcd Puts
   * that arrive while a Ready is being handled into one entry this way). Proposals made there
   * join the same Ready as those already queued.
   */
  setProposalSource(source: (() => void) | undefined): void {
    this.proposalSource = source;
  }

  /** Makes the driver loop call the proposal source soon: at once when idle, else after its current Ready. */
  wake(): void {
    // A stopped node takes no proposal: the source hears so at once (its propose() rejects).
    if (this.stopped) return this.proposalSource?.();
    this.sourceDue = true;
    this.schedule();
  }

  /** Linearizable read barrier (thesis 6.4): resolves with a read index once applied reaches it. */
  readIndex(): Promise<number> {
    if (this.stopped) return Promise.reject(new RaftError('ErrStopped', 'node stopped'));
    const ctx = `${this.id}:${++this.seq}`;
    return new Promise((resolve, reject) => {
      const timer = this.clock.setTimeout(() => {
        this.reads.delete(ctx);
        reject(new RaftError('ErrTimeout', `read index not confirmed within ${this.opts.requestTimeoutMs} ms`));
      }, this.opts.requestTimeoutMs);
      this.reads.set(ctx, { resolve, reject, timer, index: -1 });
      try {
        this.raw.readIndex(ctx);
      } catch (e) {
        this.clock.clearTimeout(timer);
        this.reads.delete(ctx);
        reject(isRaftError(e, 'ErrProposalDropped') ? new RaftError('ErrNotLeader', 'no leader to confirm a read') : e);
        return;
      }
      this.schedule();
    });
  }

  /** Asks the leader to hand leadership to `to` (thesis 3.10); returns once requested. */
  transferLeadership(to: NodeId): void {
    try {
      this.raw.transferLeadership(to);
    } catch (e) {
      throw isRaftError(e, 'ErrProposalDropped') ? new RaftError('ErrNotLeader', 'no leader to transfer from') : e;
    }
    this.schedule();
  }

  addLearner(id: NodeId): Promise<void> {
    return this.confChange({ type: 'addLearner', nodeId: id });
  }

  promote(id: NodeId): Promise<void> {
    return this.confChange({ type: 'promote', nodeId: id });
  }

  removeNode(id: NodeId): Promise<void> {
    return this.confChange({ type: 'remove', nodeId: id });
  }

  /** Proposes a membership change on the leader and waits until it is applied here. */
  private async confChange(cc: ConfChange): Promise<void> {
    const r = this.raw.raft;
    if (r.role !== 'leader') throw new RaftError('ErrNotLeader', `not leader (leader is ${r.lead})`);
    try {
      this.raw.proposeConfChange(cc);
    } catch (e) {
      if (isRaftError(e, 'ErrProposalDropped')) throw new RaftError('ErrProposalDropped', e.message);
      throw e;
    }
    const index = r.raftLog.lastIndex();
    const term = r.term;
    this.schedule();
    const deadline = this.clock.now() + this.opts.requestTimeoutMs;
    while (this.applied < index) {
      if (this.clock.now() > deadline) throw new RaftError('ErrTimeout', 'configuration change not applied in time');
      await new Promise((res) => this.clock.setTimeout(res, 5));
    }
    const t = r.raftLog.termOrCompacted(index);
    if (t >= 0 && t !== term) throw new RaftError('ErrLeadershipLost', 'the change was overwritten by a new leader');
  }

  /** The membership in force after the entries applied here (voters and learners). */
  members(): ConfState {
    return this.confState;
  }

  /**
   * Resend figures: proposals this node sent again, and copies it did not append as leader
   * because its log held the proposal already (`duplicates`) or it could not check them
   * (`uncheckable`, sent back). Counted since the process started.
   */
  proposalCounts(): { resent: number; duplicates: number; uncheckable: number } {
    const { duplicates, uncheckable } = this.raw.raft.proposalStats;
    return { resent: this.resendStats.resent, duplicates, uncheckable };
  }

  /** The leader's commit notices so far (RaftCore.commitNoticeStats; zero with them off). */
  commitNoticeCounts(): { urgent: number; timer: number } {
    return { ...this.raw.raft.commitNoticeStats };
  }

  /**
   * Why this node holds that it was removed from the cluster: it applied its own removal (and
   * is not in the configuration it applied since), or a peer refused its messages as a removed
   * member's (reportRemoved; until a configuration it applies adds it again). Undefined
   * otherwise (a member, or a node waiting to join).
   */
  removed(): string | undefined {
    if (this.removedNote !== undefined && !inConf(this.confState, this.id)) return this.removedNote;
    // A node that missed its removal still lists itself in the configuration it applied.
    return this.removedByPeer;
  }

  /** A configuration that lists this node again: it is a member, whatever was said before. */
  private async clearRemoval(): Promise<void> {
    this.removedByPeer = undefined;
    this.removedNote = undefined;
    if (this.storage.removedAt?.() !== undefined) await this.storage.setRemovedAt?.(undefined);
  }

  /** A peer refused this node's messages because it was removed from the cluster. */
  reportRemoved(by: NodeId): void {
    this.removedByPeer ??= `member ${by} refused its messages as a removed member's`;
  }

  status(): RaftStatus & { applied: number } {
    return { ...this.raw.status(), applied: this.applied };
  }

  private schedule(): void {
    if (this.scheduled || this.running || this.stopped) return;
    this.scheduled = true;
    this.clock.setImmediate(() => {
      this.scheduled = false;
      void this.loop();
    });
  }

  /** The driver loop: feed inputs, then for each Ready persist -> send -> apply -> advance. */
  private async loop(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (;;) {
        // Stopped (or failed) while a Ready was handled: nothing more is persisted or sent.
        if (this.stopped) break;
        this.feed();
        if (this.smSynced !== undefined) await this.compactToSynced();
        if (!this.raw.hasReady()) {
          this.removeUnusedSnapshotFiles(undefined);
          break;
        }
        const rd = this.raw.ready();
        this.removeUnusedSnapshotFiles(rd.snapshot);
        await this.handleReady(rd);
      }
    } catch (e) {
      this.fail(e);
    } finally {
      if (!this.stopped) {
        this.leaderState.publish(leaderStateOf(this.raw.raft));
        this.armCommitNotice();
      }
      this.running = false;
      for (const w of this.idleWaiters.splice(0)) w();
      if (
        !this.stopped &&
        (this.queuedMessages.length > 0 || this.queuedProposals.length > 0 || this.sourceDue || this.ticks > 0 || this.noticeDue || this.smSynced !== undefined)
      )
        this.schedule();
    }
  }

  /**
   * A failed write of the log or of the state machine (a full disk, an I/O error): what this
   * node holds in memory may now be ahead of its disk, so it must not go on. It stops for good;
   * its durable state is intact and a restart resumes from it.
   */
  private fail(e: unknown): void {
    if (this.loopError) return;
    const err = e instanceof Error ? e : new Error(String(e));
    this.loopError = err;
    this.stopped = true;
    if (this.tickTimer) this.clock.clearInterval(this.tickTimer);
    if (this.noticeTimer !== undefined) this.clock.clearTimeout(this.noticeTimer);
    this.failPending(err);
    for (const l of this.fatalListeners.splice(0)) l(err);
  }

  /** Arms the timer of the commit notice a leader owes its followers, if it owes one. */
  private armCommitNotice(): void {
    if (this.noticeTimer !== undefined || this.noticeDue || !this.raw.raft.commitNoticePending()) return;
    this.noticeTimer = this.clock.setTimeout(() => {
      this.noticeTimer = undefined;
      this.noticeDue = true;
      this.schedule();
    }, this.opts.commitNoticeMs);
  }

  private feed(): void {
    if (this.ticks > 0) this.resendCheck = true;
    for (; this.ticks > 0; this.ticks--) this.raw.tick();
    if (this.queuedMessages.length > 0) {
      const msgs = this.queuedMessages;
      this.queuedMessages = [];
      for (const m of msgs) {
        if (m.snapshot?.file !== undefined) this.receivedSnapshotFiles.push(m.snapshot.file);
        this.raw.step(m);
      }
    }
    if (this.sourceDue) {
      this.sourceDue = false;
      this.proposalSource?.();
    }
    if (this.queuedProposals.length > 0) {
      const props = this.queuedProposals;
      this.queuedProposals = [];
      const r = this.raw.raft;
      try {
        // One batch: one Ready, one fsync for all concurrent proposers.
        this.raw.proposeBatch(props);
        const now = this.clock.now();
        for (const env of props) this.markSent(env, r.lead, r.term, now);
        if (r.role === 'leader') for (const p of props) this.markLeaderTerm(p, r.term);
      } catch (e) {
        if (!isRaftError(e, 'ErrProposalDropped')) throw e;
        // Never sent anywhere: the caller may retry safely.
        const err = r.lead === 0 ? new RaftError('ErrNotLeader', 'no leader known') : new RaftError('ErrProposalDropped', e.message);
        for (const p of props) this.failProposal(p, err);
      }
    }
    if (this.noticeDue) {
      this.noticeDue = false;
      this.raw.raft.flushCommitNotices();
    }
    if (this.resendCheck) {
      this.resendCheck = false;
      if (this.resendsProposals()) this.resend();
    }
  }

  private markSent(env: Uint8Array, lead: NodeId, term: number, now: number): void {
    const p = this.proposals.get(envelopeSeq(env));
    if (!p) return;
    p.sent++;
    // Sent with applied index 0 (a joining node before its first snapshot), the copy said
    // nothing a leader could check it against (Raft.admitProposals): it is never resent.
    if (this.raw.raft.raftLog.applied === 0) p.frozen = true;
    p.sentAt = now;
    p.sentLead = lead;
    p.sentTerm = term;
    p.due = false;
  }

  /**
   * Sends again, in one batch, the pending proposals that may have been lost: those sent to
   * another leader or term than the current one (a leader that lost leadership may have dropped
   * them), those a copy of which came back (not sooner than a tick after the last send), and
   * those not applied within resendMs. The leader appends a copy only if its log does not hold
   * one already (Raft.admitProposals), so a resend never writes twice. That check relies on
   * the message's applied index: no pending proposal is in the log at or below it, since this
   * node applied those entries one by one and would have resolved it. A snapshot breaks that
   * (its entries are not applied one by one), so proposals sent before one are not resent.
   */
  private resend(): void {
    const r = this.raw.raft;
    if (r.lead === NONE) return;
    const now = this.clock.now();
    let envs: Uint8Array[] | undefined;
    for (const p of this.proposals.values()) {
      if (p.sent === 0 || p.frozen) continue;
      const elapsed = now - p.sentAt;
      const moved = p.sentLead !== r.lead || p.sentTerm !== r.term;
      if (moved || elapsed >= this.opts.resendMs || (p.due && elapsed >= this.opts.tickMs)) (envs ??= []).push(p.env);
    }
    if (!envs) return;
    try {
      this.raw.proposeBatch(envs);
    } catch (e) {
      // No leader to take them now (a transfer under way): the next tick tries again.
      if (!isRaftError(e, 'ErrProposalDropped')) throw e;
      return;
    }
    this.resendStats.resent += envs.length;
    for (const env of envs) this.markSent(env, r.lead, r.term, now);
  }

  /**
   * Deletes the files of received snapshots that the core did not take (stale, or already
   * covered by the log): `taken`, the one it did take, now belongs to the log's storage.
   */
  private removeUnusedSnapshotFiles(taken: { file?: string } | undefined): void {
    if (this.receivedSnapshotFiles.length === 0) return;
    for (const f of this.receivedSnapshotFiles) if (f !== taken?.file) void unlink(f).catch(() => undefined);
    this.receivedSnapshotFiles = [];
  }

  private markLeaderTerm(env: Uint8Array, term: number): void {
    const p = this.proposals.get(envelopeSeq(env));
    if (p) p.leaderTerm = term;
  }

  private failProposal(env: Uint8Array, err: Error): void {
    const seq = envelopeSeq(env);
    const p = this.proposals.get(seq);
    if (!p) return;
    this.clock.clearTimeout(p.timer);
    this.proposals.delete(seq);
    p.reject(err);
  }

  private async handleReady(rd: Ready): Promise<void> {
    // 1. Persist (fsync) BEFORE sending: votes and acknowledgements promise durability.
    // (A leader's appends go out first, in parallel with its own fsync: thesis 10.2.1.)
    // Forwarded proposals and read requests promise nothing about this node's log, so they
    // never wait for its fsync either: a follower that is writing a batch of entries would
    // otherwise hold every new client write for one more fsync before the leader sees it.
    let late: readonly Message[] = EMPTY_MESSAGES;
    let messages = rd.messages;
    if (messages.some((m) => m.type === 'snap')) {
      // Snapshots are built from the state machine when needed, off the loop (see sendSnapshot).
      for (const m of messages) if (m.type === 'snap') void this.sendSnapshot(m);
      messages = messages.filter((m) => m.type !== 'snap');
    }
    if (messages.length > 0) {
      if (rd.sendBeforePersist) this.transport?.send(messages);
      else {
        const early = messages.filter(isDurabilityFree);
        late = early.length === messages.length ? EMPTY_MESSAGES : early.length === 0 ? messages : messages.filter((m) => !isDurabilityFree(m));
        if (early.length > 0) this.transport?.send(early);
      }
    }
    // Committed entries that this node's log already holds durably are applied before the
    // Ready's own fsync, not after it (etcd's server hands them to its applier before saving,
    // too): they are on a quorum and on this disk, so nothing the fsync decides can change them,
    // and their proposers' answers no longer wait for the next batch's fsync. The rest (a
    // single node commits what it appends in the same Ready; a snapshot comes first) follow the save as before.
    let committed = rd.committedEntries;
    if (!rd.snapshot && committed.length > 0 && (rd.entries.length > 0 || rd.hardState)) {
      const n = this.durablyLogged(committed);
      for (let i = 0; i < n; i++) await this.applyEntry(committed[i]!);
      if (n > 0) committed = committed.slice(n);
    }
    if (rd.snapshot || rd.entries.length > 0 || rd.hardState) {
      // A commit-index-only change need not be fsynced (it is recoverable from the quorum).
      await this.storage.save({ snapshot: rd.snapshot, entries: rd.entries, hardState: rd.hardState }, rd.mustSync);
    }
    // 2. Send.
    if (late.length > 0) this.transport?.send(late);
    // 3. Apply.
    if (rd.snapshot) {
      const s = rd.snapshot;
      // A sync under way belongs to the state being replaced: it ends first, and what it made
      // durable is not compacted to (the snapshot's index is past it).
      await this.smSyncing;
      this.smSynced = undefined;
      await this.sm.restore({ index: s.metadata.index, term: s.metadata.term, data: s.data, file: s.file });
      // A durable state machine now holds the snapshot on disk (its restore is synced): the
      // log's storage keeps only the metadata, as after a snapshot of its own.
      if (this.sm.sync) await this.storage.dropSnapshotData();
      this.smDurable = s.metadata.index;
      this.applied = s.metadata.index;
      this.confState = s.metadata.confState;
      this.confHistory = [{ index: s.metadata.index, confState: s.metadata.confState }];
      if (inConf(this.confState, this.id)) await this.clearRemoval();
      // A proposal sent before may be in the entries the snapshot covers: this node cannot
      // tell, so it must not send it again (it may still be applied after the snapshot).
      for (const p of this.proposals.values()) if (p.sent > 0) p.frozen = true;
    }
    for (const e of committed) await this.applyEntry(e);
    if (rd.softState) {
      // A new leader or role: proposals sent to the one before may need resending.
      if (this.resendsProposals()) this.resendCheck = true;
      else if (rd.softState.role !== 'leader') this.failLeaderProposals();
    }
    for (const rs of rd.readStates) {
      const p = this.reads.get(rs.context);
      if (p) p.index = rs.index;
    }
    this.resolveReads();
    // 4. Advance.
    this.raw.advance(rd);
    await this.maybeSnapshot();
  }

  /**
   * How many of `committed` (in index order) the durable log already holds: their indexes are
   * within the saved log and the last of them has the saved entry's term (Log Matching then
   * covers the ones before it).
   */
  private durablyLogged(committed: readonly Entry[]): number {
    const last = this.storage.lastIndex();
    let n = 0;
    while (n < committed.length && committed[n]!.index <= last) n++;
    if (n === 0) return 0;
    try {
      return this.storage.term(committed[n - 1]!.index) === committed[n - 1]!.term ? n : 0;
    } catch {
      return 0;
    }
  }

  private async applyEntry(e: Entry): Promise<void> {
    if (e.type === 'conf') {
      const before = this.confState;
      this.confState = this.raw.applyConfChange(decodeConfChange(e.data));
      if (inConf(before, this.id) && !inConf(this.confState, this.id)) {
        this.removedNote = `its removal from the configuration was applied at index ${e.index}`;
        await this.storage.setRemovedAt?.(e.index);
      }
      // Added (back) by a configuration this node applied: what a peer said before is past.
      else if (!inConf(before, this.id) && inConf(this.confState, this.id)) await this.clearRemoval();
      this.confHistory.push({ index: e.index, confState: this.confState });
      this.applied = e.index;
      return;
    }
    if (e.data.length < HEADER) {
      this.applied = e.index; // leader no-op
      return;
    }
    const proposer = envelopeProposer(e.data);
    const seq = envelopeSeq(e.data);
    let result: unknown;
    // Entries already reflected in a durable state machine are not applied twice.
    if (e.index > this.smDurable) {
      result = await this.sm.apply({ index: e.index, term: e.term, data: e.data.subarray(HEADER) });
      this.smDurable = e.index;
    }
    this.applied = e.index;
    if (proposer === this.id) {
      const p = this.proposals.get(seq);
      if (p) {
        this.clock.clearTimeout(p.timer);
        this.proposals.delete(seq);
        p.resolve({ index: e.index, term: e.term, result });
      }
    }
  }

  /** Proposals accepted while we were leader can no longer be tracked to commit by us. */
  private failLeaderProposals(): void {
    for (const [seq, p] of this.proposals) {
      if (p.leaderTerm === 0) continue;
      this.clock.clearTimeout(p.timer);
      this.proposals.delete(seq);
      p.reject(new RaftError('ErrLeadershipLost', 'leadership lost before the entry was applied; outcome unknown'));
    }
  }

  private resolveReads(): void {
    for (const [ctx, r] of this.reads) {
      if (r.index >= 0 && this.applied >= r.index) {
        this.clock.clearTimeout(r.timer);
        this.reads.delete(ctx);
        r.resolve(r.index);
      }
    }
  }

  /** Membership in force after entry `index` (which must not precede the last snapshot). */
  private confStateAt(index: number): ConfState {
    let cs: ConfState | undefined;
    for (const h of this.confHistory) {
      if (h.index > index) break;
      cs = h.confState;
    }
    if (!cs) throw new RaftError('ErrCompacted', `membership at ${index} is older than the last snapshot`);
    return cs;
  }

  /**
   * Answers a MsgSnap from the core with the state machine's current export (thesis 5.3's
   * InstallSnapshot): the core picked the storage snapshot, whose data may be empty, so the
   * message is rebuilt at the state machine's applied index A (>= that snapshot's index, so the
   * follower continues from the leader's log after A, as etcd's merged snapshot does), with A's
   * term and membership. Runs beside the loop; a failure is reported to the core, which retries.
   */
  private async sendSnapshot(m: Message): Promise<void> {
    try {
      const s = await this.sm.snapshot();
      try {
        if (this.stopped || !this.transport) throw new RaftError('ErrStopped', 'node stopped');
        const base = this.storage.snapshot().metadata;
        const term = s.index === base.index ? base.term : this.raw.raft.raftLog.termOrCompacted(s.index);
        if (!(term > 0)) throw new RaftError('ErrCompacted', `the log no longer holds the term of ${s.index}`);
        const snapshot = { metadata: { index: s.index, term, confState: this.confStateAt(s.index) }, data: s.data, file: s.file };
        // The transport owns the export's file from here (it deletes it once sent).
        this.transport.send([{ ...m, snapshot }]);
      } catch (e) {
        if (s.file !== undefined) await unlink(s.file).catch(() => undefined);
        throw e;
      }
    } catch {
      if (this.stopped) return;
      this.raw.reportSnapshot(m.to, true);
      this.schedule();
    }
  }

  /**
   * Log compaction (paper section 7) once enough entries were applied since the last snapshot.
   * A durable state machine is synced to `applied` first and the snapshot keeps only metadata;
   * otherwise the export is stored with it. The sync (LevelDB flushing its memtables to synced
   * tables, tens of milliseconds) runs beside the loop; a later turn compacts the log to what
   * it made durable (compactToSynced).
   */
  private async maybeSnapshot(): Promise<void> {
    const last = this.storage.snapshot().metadata.index;
    if (this.applied - last < this.opts.snapshotEntries) return;
    const sync = this.sm.sync?.bind(this.sm);
    if (sync) {
      if (this.smSyncing !== undefined || this.smSynced !== undefined) return;
      this.smSyncing = sync().then(
        (durable) => {
          this.smSyncing = undefined;
          this.smSynced = durable;
          this.schedule();
        },
        (e: unknown) => {
          this.smSyncing = undefined;
          if (!this.stopped) this.fail(e);
        },
      );
      return;
    }
    const s = await this.sm.snapshot();
    // The membership recorded with the snapshot is the one at `applied`; a state machine that
    // snapshots a different index is skipped this round.
    if (s.index !== this.applied || s.index <= last) return;
    await this.storage.createSnapshot(s.index, this.confState, s.data, this.compactionPoint(last, s.index));
    this.trimConfHistory();
  }

  /** Records a metadata-only snapshot at the index the last sync made durable, compacting the log. */
  private async compactToSynced(): Promise<void> {
    const last = this.storage.snapshot().metadata.index;
    const i = Math.min(this.smSynced!, this.applied);
    this.smSynced = undefined;
    if (i <= last) return;
    await this.storage.createSnapshot(i, this.confStateAt(i), NO_DATA, this.compactionPoint(last, i));
    this.trimConfHistory();
  }

  /** Where the log is compacted to for a snapshot at i: a few entries are kept for lagging followers. */
  private compactionPoint(last: number, i: number): number {
    return Math.max(last, i - this.opts.keepEntries);
  }

  private trimConfHistory(): void {
    const keepFrom = this.storage.snapshot().metadata.index;
    let k = 0;
    while (k + 1 < this.confHistory.length && this.confHistory[k + 1]!.index <= keepFrom) k++;
    if (k > 0) this.confHistory.splice(0, k);
  }
}
