import { Raft, type RaftConfig } from './raft.core.js';
import {
  type ConfChange,
  type ConfState,
  type Entry,
  type HardState,
  type Message,
  type RaftStatus,
  type Ready,
  type SoftState,
  EMPTY_ENTRIES,
  NONE,
  encodeConfChange,
  msg,
} from './raft.types.js';

/**
 * Thread-free wrapper around the core that batches its output into Ready objects (etcd's
 * RawNode). Usage, in this order: if (hasReady()) { rd = ready(); persist; send; apply;
 * advance(rd) }. ready() hands out each message and read state once; advance() tells the core
 * what became durable and applied.
 */
export class RawNode {
  readonly raft: Raft;
  private prevSoft: SoftState;
  private prevHard: HardState;

  constructor(config: RaftConfig) {
    this.raft = new Raft(config);
    this.prevSoft = { lead: this.raft.lead, role: this.raft.role };
    this.prevHard = this.raft.hardState();
  }

  /** Advances logical time by one tick. */
  tick(): void {
    this.raft.tick();
  }

  /** Starts an election now (tests and bootstrap of a single node). */
  campaign(): void {
    this.raft.step(msg({ type: 'hup', from: this.raft.id }));
  }

  /** Proposes application data; throws ErrProposalDropped when it cannot be accepted now. */
  propose(data: Uint8Array): void {
    this.raft.step(msg({ type: 'prop', entries: [{ term: 0, index: 0, type: 'normal', data }], index: this.raft.raftLog.applied }));
  }

  /**
   * Proposes several entries at once (one Ready, one fsync). The message carries this node's
   * applied index: none of these proposals is in the log at or below it, which lets a leader
   * check them for copies already appended (Raft.admitProposals).
   */
  proposeBatch(datas: readonly Uint8Array[]): void {
    if (datas.length === 0) return;
    const entries: Entry[] = datas.map((data) => ({ term: 0, index: 0, type: 'normal' as const, data }));
    this.raft.step(msg({ type: 'prop', entries, index: this.raft.raftLog.applied }));
  }

  /** Proposes a single-server membership change; applied when its entry is applied. */
  proposeConfChange(cc: ConfChange): void {
    this.raft.step(msg({ type: 'prop', entries: [{ term: 0, index: 0, type: 'conf', data: encodeConfChange(cc) }] }));
  }

  /** Applies a committed membership change (call when applying its entry). */
  applyConfChange(cc: ConfChange): ConfState {
    return this.raft.applyConfChange(cc);
  }

  /** Requests a linearizable read index; the answer appears in Ready.readStates with `context`. */
  readIndex(context: string): void {
    this.raft.step(msg({ type: 'readIndex', context }));
  }

  /** Asks the leader to hand leadership to `to` (thesis section 3.10). */
  transferLeadership(to: number): void {
    this.raft.step(msg({ type: 'transferLeader', index: to }));
  }

  /** Feeds a message received from a peer. Local message types are refused. */
  step(m: Message): void {
    if (m.type === 'hup' || m.type === 'beat') return;
    if (m.from === NONE) return;
    this.raft.step(m);
  }

  /** Reports that a snapshot send to `id` finished (reject = failed). */
  reportSnapshot(id: number, failed: boolean): void {
    this.raft.step(msg({ type: 'snapStatus', from: id, term: 0, reject: failed }));
  }

  /** Reports that `id` could not be reached (the leader falls back to probing). */
  reportUnreachable(id: number): void {
    this.raft.step(msg({ type: 'unreachable', from: id }));
  }

  /**
   * Reports that the transport saw the connection to `id` break (reset or refused): when `id`
   * is this follower's leader, it may campaign early (Raft.leaderConnectionLost). Produces no
   * Ready by itself.
   */
  reportConnectionLost(id: number): void {
    this.raft.leaderConnectionLost(id);
  }

  status(): RaftStatus {
    return this.raft.status();
  }

  /** Whether ready() would return anything. */
  hasReady(): boolean {
    const r = this.raft;
    if (r.lead !== this.prevSoft.lead || r.role !== this.prevSoft.role) return true;
    if (r.term !== this.prevHard.term || r.vote !== this.prevHard.vote || r.raftLog.committed !== this.prevHard.commit) return true;
    if (r.raftLog.unstable.snapshot !== undefined) return true;
    if (r.msgs.length > 0 || r.readStates.length > 0) return true;
    if (r.raftLog.unstable.entries.length > 0) return true;
    return r.raftLog.hasNextCommittedEnts();
  }

  /** Collects the pending work; see the Ready contract (persist BEFORE sending). */
  ready(): Ready {
    const r = this.raft;
    const log = r.raftLog;
    let softState: SoftState | undefined;
    if (r.lead !== this.prevSoft.lead || r.role !== this.prevSoft.role) {
      softState = { lead: r.lead, role: r.role };
      this.prevSoft = softState;
    }
    let hardState: HardState | undefined;
    if (r.term !== this.prevHard.term || r.vote !== this.prevHard.vote || log.committed !== this.prevHard.commit) {
      hardState = r.hardState();
    }
    const entries = log.unstable.entries.length > 0 ? log.unstable.entries.slice() : EMPTY_ENTRIES;
    const committedEntries = log.hasNextCommittedEnts() ? log.nextCommittedEnts(r.maxCommittedSizePerReady) : EMPTY_ENTRIES;
    const messages = r.msgs;
    r.msgs = [];
    const readStates = r.readStates;
    if (readStates.length > 0) r.readStates = [];
    // Term, vote and entries must be fsynced; a commit-only change need not be (etcd's MustSync).
    const mustSync = entries.length > 0 || (hardState !== undefined && (hardState.term !== this.prevHard.term || hardState.vote !== this.prevHard.vote));
    // Thesis 10.2.1: a leader may send its appends while writing its own disk, since it counts
    // itself only after advance(). Not when this Ready changes term or vote (a vote must be
    // durable before anyone sees it) or installs a snapshot.
    const sendBeforePersist =
      r.role === 'leader' &&
      log.unstable.snapshot === undefined &&
      (hardState === undefined || (hardState.term === this.prevHard.term && hardState.vote === this.prevHard.vote));
    const rd: Ready = {
      sendBeforePersist,
      softState,
      hardState,
      entries,
      snapshot: log.unstable.snapshot,
      committedEntries,
      messages,
      readStates,
      mustSync: mustSync || log.unstable.snapshot !== undefined,
    };
    if (hardState) this.prevHard = hardState;
    return rd;
  }

  /** Acknowledges a Ready: its entries/snapshot are durable and its committed entries applied. */
  advance(rd: Ready): void {
    const log = this.raft.raftLog;
    if (rd.snapshot) {
      log.stableSnapTo(rd.snapshot.metadata.index);
      if (log.applied < rd.snapshot.metadata.index) log.applied = rd.snapshot.metadata.index;
    }
    if (rd.entries.length > 0) {
      const last = rd.entries[rd.entries.length - 1]!;
      log.stableTo(last.index, last.term);
      this.raft.onPersisted(last.index, last.term);
    }
    if (rd.committedEntries.length > 0) {
      log.appliedTo(rd.committedEntries[rd.committedEntries.length - 1]!.index);
    }
  }
}
