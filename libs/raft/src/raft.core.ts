import { RaftLog } from './raft.log.js';
import { Progress } from './raft.progress.js';
import { committedIndex, hasQuorum, voteResult } from './raft.quorum.js';
import { ProposalIndex, envelopeProposer, envelopeSeq, hasEnvelope } from './raft.proposal-index.js';
import { ReadOnly } from './raft.read-only.js';
import type { RaftStorage } from './raft.storage.js';
import {
  type ConfChange,
  type ConfState,
  type Entry,
  type HardState,
  type Message,
  type MessageType,
  type NodeId,
  type ReadState,
  type RaftStatus,
  type Role,
  type Snapshot,
  EMPTY_DATA,
  NONE,
  RaftError,
  decodeConfChange,
  entrySize,
  msg,
} from './raft.types.js';

/** Configuration of one Raft node. Times are in ticks; the driver decides how long a tick is. */
export interface RaftConfig {
  /** This node's id (> 0). */
  id: NodeId;
  /** Stable state to start from. */
  storage: RaftStorage;
  /** Base election timeout in ticks; the randomized timeout is in [electionTick, 2*electionTick). */
  electionTick: number;
  /** Heartbeat interval in ticks; must be smaller than electionTick. */
  heartbeatTick: number;
  /** Injected uniform random source in [0, 1): the core never uses global randomness. */
  random: () => number;
  /** Index already applied by the state machine when restarting (default: storage's snapshot index). */
  applied?: number;
  /** Soft byte limit of entries in one append message (default 1 MiB). */
  maxSizePerMsg?: number;
  /** Max append messages in flight per peer in replicate state (default 256). */
  maxInflightMsgs?: number;
  /** Max bytes of in-flight appends per peer, 0 = unlimited (default 32 MiB). */
  maxInflightBytes?: number;
  /** Soft byte limit of committed entries handed out in one Ready (default 64 MiB). */
  maxCommittedSizePerReady?: number;
  /** Leader steps down without a quorum of recent contact; followers ignore votes while in lease. */
  checkQuorum?: boolean;
  /** Pre-vote phase (thesis section 9.6) so a partitioned node does not disrupt the cluster. */
  preVote?: boolean;
  /**
   * Entries carry RaftNode's envelope (raft.proposal-index.ts): as leader, append a proposal
   * at most once however many copies of it arrive (docs/raft.md "Resent proposals").
   */
  dedupProposals?: boolean;
  /** How many proposals a leader's index of its log remembers (default 65536). */
  proposalIndexCap?: number;
  /**
   * A leader tells followers of a new commit index only with appends that carry entries, or
   * when they wait for it; the driver sends the rest later (flushCommitNotices). Default false:
   * an append to every follower for each advance of the commit index, as etcd's raft does.
   */
  deferCommitNotices?: boolean;
}

const CAMPAIGN_TRANSFER = 'transfer';

/**
 * The Raft algorithm as a pure, synchronous state machine (shape of etcd's raft). Inputs are
 * step(message) and tick(); outputs accumulate in `msgs`, `readStates` and the log's unstable
 * part, collected by RawNode.ready(). Nothing here does I/O, reads a clock or global randomness.
 */
export class Raft {
  readonly id: NodeId;
  term = 0;
  vote: NodeId = NONE;
  lead: NodeId = NONE;
  role: Role = 'follower';
  readonly raftLog: RaftLog;
  /** Replication progress of every member (voters and learners), including self. */
  readonly prs = new Map<NodeId, Progress>();
  readonly voters = new Set<NodeId>();
  readonly learners = new Set<NodeId>();
  private readonly votes = new Map<NodeId, boolean>();
  /** Outgoing messages; drained by RawNode.ready(). */
  msgs: Message[] = [];
  /** Answered ReadIndex requests; drained by RawNode.ready(). */
  readStates: ReadState[] = [];
  private readonly readOnly = new ReadOnly();
  /** ReadIndex requests that arrived before this leader committed an entry of its term (thesis 6.4). */
  private pendingReadIndexMessages: Message[] = [];
  electionElapsed = 0;
  private heartbeatElapsed = 0;
  private randomizedElectionTimeout = 0;
  /**
   * Set by leaderConnectionLost() while this follower's transport reported the connection to
   * its leader broken and nothing has come from the leader since; `leaderLostTimeout` is the
   * tick count without leader traffic after which it campaigns early (see tickElection).
   */
  private leaderLost = false;
  private leaderLostTimeout = 0;
  leadTransferee: NodeId = NONE;
  /** Index of the newest conf change proposed; a new one waits until it is applied. */
  pendingConfIndex = 0;
  readonly electionTimeout: number;
  readonly heartbeatTimeout: number;
  private readonly random: () => number;
  private readonly maxMsgSize: number;
  private readonly maxInflight: number;
  private readonly maxInflightBytes: number;
  readonly maxCommittedSizePerReady: number;
  readonly checkQuorum: boolean;
  readonly preVote: boolean;
  private readonly dedupProposals: boolean;
  private readonly deferCommitNotices: boolean;
  private readonly proposalIndexCap: number;
  /** A leader's index of the proposals in its log (with dedupProposals). */
  private proposalIndex: ProposalIndex | undefined;
  /** Copies of proposals this node, as leader, did not append: already in its log, or not checkable. */
  readonly proposalStats = { duplicates: 0, uncheckable: 0 };
  /**
   * Commit notices of a leader with deferCommitNotices: appends sent only to carry the commit
   * index, at once to a follower that waits for it (urgent), or by flushCommitNotices (timer).
   */
  readonly commitNoticeStats = { urgent: 0, timer: 0 };

  constructor(c: RaftConfig) {
    if (!(c.id > 0)) throw new RaftError('ErrInvariant', 'id must be > 0');
    if (!(c.heartbeatTick > 0) || !(c.electionTick > c.heartbeatTick)) {
      throw new RaftError('ErrInvariant', 'need 0 < heartbeatTick < electionTick');
    }
    this.id = c.id;
    this.raftLog = new RaftLog(c.storage);
    this.electionTimeout = c.electionTick;
    this.heartbeatTimeout = c.heartbeatTick;
    this.random = c.random;
    this.maxMsgSize = c.maxSizePerMsg ?? 1 << 20;
    this.maxInflight = c.maxInflightMsgs ?? 256;
    this.maxInflightBytes = c.maxInflightBytes ?? 32 << 20;
    this.maxCommittedSizePerReady = c.maxCommittedSizePerReady ?? 64 << 20;
    this.checkQuorum = c.checkQuorum ?? false;
    this.preVote = c.preVote ?? false;
    this.dedupProposals = c.dedupProposals ?? false;
    this.deferCommitNotices = c.deferCommitNotices ?? false;
    this.proposalIndexCap = c.proposalIndexCap ?? 65_536;
    const { hardState, confState } = c.storage.initialState();
    this.applyConfState(confState);
    if (hardState.term !== 0 || hardState.vote !== 0 || hardState.commit !== 0) this.loadState(hardState);
    if (c.applied !== undefined && c.applied > 0) {
      if (c.applied > this.raftLog.lastIndex()) {
        throw new RaftError('ErrInvariant', `applied ${c.applied} beyond last index ${this.raftLog.lastIndex()}`);
      }
      // Only committed entries are ever applied, so `applied` is a lower bound of the commit
      // index even when the persisted commit lags it (commit-only hard-state writes are not
      // fsynced, and a snapshot may sit above the compacted prefix).
      if (c.applied > this.raftLog.committed) this.raftLog.committed = c.applied;
      this.raftLog.appliedTo(c.applied);
    }
    this.becomeFollower(this.term, NONE);
  }

  // ---------------------------------------------------------------- state accessors

  hardState(): HardState {
    return { term: this.term, vote: this.vote, commit: this.raftLog.committed };
  }

  confState(): ConfState {
    return { voters: [...this.voters].sort((a, b) => a - b), learners: [...this.learners].sort((a, b) => a - b) };
  }

  /** A node may campaign only as a voter of its current configuration. */
  promotable(): boolean {
    return this.voters.has(this.id);
  }

  status(): RaftStatus {
    const peers = [];
    if (this.role === 'leader') {
      for (const [id, pr] of this.prs) peers.push({ id, match: pr.match, next: pr.next, state: pr.state, learner: pr.isLearner });
    }
    return {
      id: this.id,
      term: this.term,
      vote: this.vote,
      lead: this.lead,
      role: this.role,
      commit: this.raftLog.committed,
      applied: this.raftLog.applied,
      lastIndex: this.raftLog.lastIndex(),
      peers,
    };
  }

  private loadState(hs: HardState): void {
    if (hs.commit > this.raftLog.lastIndex()) {
      throw new RaftError('ErrInvariant', `hard state commit ${hs.commit} beyond last index ${this.raftLog.lastIndex()}`);
    }
    // The snapshot index is committed even if the hard state was written before it.
    this.raftLog.committed = Math.max(hs.commit, this.raftLog.committed);
    this.term = hs.term;
    this.vote = hs.vote;
  }

  // ---------------------------------------------------------------- sending

  private send(m: Message): void {
    m.from = this.id;
    // Vote requests carry the candidate's (possibly future) term; responses to pre-votes carry
    // the term they answer. Everything else is stamped with our current term.
    if (m.type === 'vote' || m.type === 'preVote' || m.type === 'voteResp' || m.type === 'preVoteResp') {
      if (m.term === 0) throw new RaftError('ErrInvariant', `term unset on ${m.type}`);
    } else if (m.type !== 'prop' && m.type !== 'readIndex' && m.type !== 'transferLeader' && m.type !== 'propDropped') {
      m.term = this.term;
    }
    this.msgs.push(m);
  }

  /** Sends an append (or a snapshot when the needed entries are compacted). Returns whether sent. */
  private maybeSendAppend(to: NodeId, sendIfEmpty: boolean): boolean {
    const pr = this.prs.get(to);
    if (!pr || pr.isPaused()) return false;
    const prevIndex = pr.next - 1;
    const prevTerm = this.raftLog.termOrCompacted(prevIndex);
    const ents = prevTerm < 0 ? undefined : this.raftLog.entriesFrom(pr.next, this.maxMsgSize);
    if (ents === undefined) return this.sendSnapshot(to, pr);
    if (ents.length === 0 && !sendIfEmpty) return false;
    let bytes = 0;
    for (const e of ents) bytes += entrySize(e);
    const commit = this.raftLog.committed;
    this.send(msg({ type: 'app', to, index: prevIndex, logTerm: prevTerm, entries: ents, commit }));
    pr.sentCommit = Math.max(pr.sentCommit, Math.min(commit, prevIndex + ents.length));
    pr.sentEntries(ents.length, bytes, ents.length > 0 ? ents[ents.length - 1]!.index : prevIndex);
    return true;
  }

  /** InstallSnapshot (paper section 7): the follower is behind the leader's compacted log. */
  private sendSnapshot(to: NodeId, pr: Progress): boolean {
    if (!pr.recentActive) return false;
    let snap: Snapshot;
    try {
      snap = this.raftLog.snapshot();
    } catch (e) {
      if (e instanceof RaftError && e.code === 'ErrSnapshotTemporarilyUnavailable') return false;
      throw e;
    }
    if (snap.metadata.index === 0) throw new RaftError('ErrInvariant', 'need a non-empty snapshot');
    this.send(msg({ type: 'snap', to, snapshot: snap }));
    pr.becomeSnapshot(snap.metadata.index);
    return true;
  }

  private sendAppend(to: NodeId): void {
    this.maybeSendAppend(to, true);
  }

  private sendHeartbeat(to: NodeId, context: string): void {
    const pr = this.prs.get(to);
    // Never tell a follower to commit beyond what it is known to hold (etcd does the same), so
    // the follower's commitTo stays within its log.
    const commit = Math.min(pr ? pr.match : 0, this.raftLog.committed);
    this.send(msg({ type: 'heartbeat', to, commit, context }));
    if (pr) pr.sentCommit = Math.max(pr.sentCommit, commit);
  }

  /**
   * The commit index advanced. A follower with entries still to receive learns of it from the
   * append that carries them. One with nothing new is told at once only if it waits for the
   * commit (urgentCommit); the others learn of it from their next append, or from the notice
   * the driver sends a moment later (flushCommitNotices). That saves an append, its answer and
   * a wake-up of every follower for each commit when writes come one by one.
   */
  private bcastCommit(): void {
    if (!this.deferCommitNotices) return this.bcastAppend();
    for (const [id, pr] of this.prs) {
      if (id === this.id) continue;
      if (this.maybeSendAppend(id, false)) {
        while (this.maybeSendAppend(id, false)) {
          /* keep the window full */
        }
      } else if (this.urgentCommit(pr)) this.sendUrgentNotice(id);
    }
  }

  private sendUrgentNotice(id: NodeId): void {
    this.commitNoticeStats.urgent++;
    this.sendAppend(id);
  }

  /**
   * Whether a follower must learn of the commit index at once: it holds committed entries it
   * has not been told of, and it waits for them (its own proposals, or a ReadIndex answered to
   * it), or they include a configuration change (a removed member must learn of its removal
   * before the leader stops sending to it).
   */
  private urgentCommit(pr: Progress): boolean {
    if (!this.deferCommitNotices) return false;
    const known = Math.min(this.raftLog.committed, pr.match);
    if (known <= pr.sentCommit) return false;
    return pr.awaited > pr.sentCommit || (this.pendingConfIndex > pr.sentCommit && this.pendingConfIndex <= known);
  }

  /**
   * Whether a notice can be sent to this follower now: it holds committed entries it has not
   * been told are committed, and it is in replicate state with room in its window. The driver
   * asks again after every turn of its loop, so one that cannot be sent one yet counts once it
   * can.
   */
  private owesNotice(id: NodeId, pr: Progress): boolean {
    return id !== this.id && pr.state === 'replicate' && !pr.isPaused() && Math.min(this.raftLog.committed, pr.match) > pr.sentCommit;
  }

  /** Whether a follower is owed a commit notice that can be sent now (owesNotice). */
  commitNoticePending(): boolean {
    if (!this.deferCommitNotices || this.role !== 'leader') return false;
    for (const [id, pr] of this.prs) if (this.owesNotice(id, pr)) return true;
    return false;
  }

  /** Sends every follower owed a commit notice an append that carries the commit index. */
  flushCommitNotices(): void {
    if (!this.deferCommitNotices || this.role !== 'leader') return;
    for (const [id, pr] of this.prs) {
      if (!this.owesNotice(id, pr)) continue;
      this.commitNoticeStats.timer++;
      this.sendAppend(id);
    }
  }

  private bcastAppend(): void {
    for (const id of this.prs.keys()) {
      if (id === this.id) continue;
      this.sendAppend(id);
      // Pipelining: a peer in replicate state gets as many messages as its window allows.
      while (this.maybeSendAppend(id, false)) {
        /* keep sending */
      }
    }
  }

  private bcastHeartbeat(context: string): void {
    for (const id of this.prs.keys()) if (id !== this.id) this.sendHeartbeat(id, context);
  }

  // ---------------------------------------------------------------- role transitions

  private reset(term: number): void {
    if (this.term !== term) {
      this.term = term;
      this.vote = NONE;
    }
    this.lead = NONE;
    this.electionElapsed = 0;
    this.heartbeatElapsed = 0;
    this.resetRandomizedElectionTimeout();
    this.leadTransferee = NONE;
    this.votes.clear();
    const last = this.raftLog.lastIndex();
    for (const [id, pr] of this.prs) {
      const fresh = new Progress(last + 1, this.maxInflight, this.maxInflightBytes, pr.isLearner);
      if (id === this.id) fresh.match = this.stableLastIndex();
      this.prs.set(id, fresh);
    }
    this.pendingConfIndex = 0;
    this.proposalIndex = undefined;
    this.leaderLost = false;
    this.readOnly.reset();
    this.pendingReadIndexMessages = [];
  }

  private resetRandomizedElectionTimeout(): void {
    // Paper section 5.2: randomized timeouts in [T, 2T) make split votes rare.
    this.randomizedElectionTimeout = this.electionTimeout + Math.floor(this.random() * this.electionTimeout);
  }

  becomeFollower(term: number, lead: NodeId): void {
    this.reset(term);
    this.lead = lead;
    this.role = 'follower';
  }

  becomeCandidate(): void {
    if (this.role === 'leader') throw new RaftError('ErrInvariant', 'leader cannot become candidate');
    this.reset(this.term + 1);
    this.vote = this.id;
    this.role = 'candidate';
  }

  /** Pre-vote (thesis 9.6): ask first, without touching term or vote. */
  becomePreCandidate(): void {
    if (this.role === 'leader') throw new RaftError('ErrInvariant', 'leader cannot become pre-candidate');
    this.votes.clear();
    this.lead = NONE;
    this.role = 'preCandidate';
  }

  becomeLeader(): void {
    if (this.role === 'follower') throw new RaftError('ErrInvariant', 'follower cannot become leader');
    this.reset(this.term);
    this.lead = this.id;
    this.role = 'leader';
    const self = this.prs.get(this.id);
    if (self) self.becomeReplicate();
    for (const pr of this.prs.values()) pr.recentActive = true;
    // Conf changes proposed by earlier leaders may be uncommitted: refuse new ones until our
    // log up to here is applied (thesis 4.1 safety fix: commit an entry of this term first).
    this.pendingConfIndex = this.raftLog.lastIndex();
    if (this.dedupProposals) this.indexProposals();
    // Paper section 8 / 5.4.2: a no-op of the new term lets the leader commit earlier entries.
    this.appendEntries([{ term: this.term, index: 0, type: 'normal', data: EMPTY_DATA }]);
  }

  /**
   * Builds the new leader's index of the proposals in its log (as far back as the log holds
   * entries, up to the index's cap). Every entry that is or may yet be committed is there:
   * committed ones are in a leader's log (Leader Completeness), and others commit only through
   * it while it leads.
   */
  private indexProposals(): void {
    const last = this.raftLog.lastIndex();
    const floor = Math.max(this.raftLog.firstIndex() - 1, last - this.proposalIndexCap);
    const index = new ProposalIndex(floor, this.proposalIndexCap);
    for (let lo = floor + 1; lo <= last;) {
      const ents = this.raftLog.slice(lo, last + 1, 8 << 20);
      index.addEntries(ents);
      lo += ents.length;
    }
    this.proposalIndex = index;
  }

  /**
   * The entries of a 'prop' message this leader appends: a proposal already in its log is
   * left out (a resent copy; the one in the log commits or is resent again after a leader
   * change), and so is one it cannot check, because the proposer's applied index (`m.index`,
   * 0 when the sender did not say) is below what the index covers. The uncheckable ones of a
   * forwarded message go back to its sender, which resends them later.
   */
  private admitProposals(m: Message, index: ProposalIndex): readonly Entry[] {
    let es: Entry[] | undefined;
    let back: Entry[] | undefined;
    // Two copies in one message (none of this build's senders makes one) count as one.
    let seen: ProposalIndex | undefined;
    const uncheckable = m.index > 0 && m.index < index.floor;
    for (let i = 0; i < m.entries.length; i++) {
      const e = m.entries[i]!;
      let keep = true;
      if (hasEnvelope(e)) {
        const proposer = envelopeProposer(e.data);
        const seq = envelopeSeq(e.data);
        if (uncheckable) {
          keep = false;
          this.proposalStats.uncheckable++;
          (back ??= []).push(e);
        } else if (index.has(proposer, seq) || seen?.has(proposer, seq)) {
          keep = false;
          this.proposalStats.duplicates++;
        } else if (m.entries.length > 1) {
          (seen ??= new ProposalIndex(0, m.entries.length)).add(proposer, seq, i);
        }
      }
      if (keep) es?.push(e);
      else es ??= m.entries.slice(0, i);
    }
    if (back && m.from !== NONE && m.from !== this.id) {
      this.send(
        msg({ type: 'propDropped', to: m.from, entries: back, context: 'the proposer is too far behind the leader to check the proposal for a duplicate' }),
      );
    }
    return es ?? m.entries;
  }

  private appendEntries(es: Entry[]): void {
    const li = this.raftLog.lastIndex();
    for (let i = 0; i < es.length; i++) {
      const e = es[i]!;
      es[i] = { term: this.term, index: li + 1 + i, type: e.type, data: e.data };
    }
    this.raftLog.append(es);
    this.proposalIndex?.addEntries(es);
    // The leader counts its own copy only once it is durable (onPersisted), so the driver may
    // write the leader's disk in parallel with replicating (thesis section 10.2.1).
  }

  /** Last index known to be on stable storage (unstable entries excluded). */
  private stableLastIndex(): number {
    const u = this.raftLog.unstable;
    if (u.snapshot) return 0;
    return Math.min(this.raftLog.lastIndex(), u.offset - 1);
  }

  /**
   * The driver persisted entries through (index, term). On the leader this is its own
   * acknowledgement: it may advance the commit index (counting itself only when durable).
   */
  onPersisted(index: number, term: number): void {
    if (this.role !== 'leader') return;
    if (this.raftLog.termOrCompacted(index) !== term) return;
    const self = this.prs.get(this.id);
    if (!self || !self.maybeUpdate(index)) return;
    if (this.maybeCommit()) {
      this.releasePendingReadIndexMessages();
      this.bcastCommit();
    }
  }

  private maybeCommit(): boolean {
    const mci = committedIndex(this.voters, (id) => this.prs.get(id)?.match ?? 0);
    return this.raftLog.maybeCommit(mci, this.term);
  }

  private committedEntryInCurrentTerm(): boolean {
    return this.raftLog.termOrCompacted(this.raftLog.committed) === this.term;
  }

  // ---------------------------------------------------------------- ticks

  /** Advances logical time by one tick. */
  tick(): void {
    if (this.role === 'leader') this.tickHeartbeat();
    else this.tickElection();
  }

  /**
   * Followers and candidates: start an election after the randomized timeout (section 5.2), or
   * earlier when the connection to the leader broke and the leader stayed silent since (see
   * leaderConnectionLost).
   */
  tickElection(): void {
    this.electionElapsed++;
    const early = this.leaderSuspected() && this.electionElapsed >= this.leaderLostTimeout;
    if (this.promotable() && (early || this.electionElapsed >= this.randomizedElectionTimeout)) {
      this.electionElapsed = 0;
      this.leaderLost = false;
      this.step(msg({ type: 'hup', from: this.id }));
    }
  }

  /**
   * Input from the transport: the connection to peer `id` broke (reset or refused). When `id`
   * is this follower's leader, the follower campaigns (pre-vote) once the leader has also been
   * silent for a short grace, 2 heartbeats plus half a heartbeat per voter of lower id (the
   * survivors of a crash otherwise campaign on the same tick and split the vote), instead of
   * after the randomized election timeout; and it no longer ignores others' pre-votes as "in lease" once
   * the 2 heartbeats passed. Only with pre-vote and check-quorum both on.
   *
   * Why this is safe and never disrupts a live leader (docs/raft.md "Early campaign"): it only
   * changes WHEN a follower campaigns and whether it honours another's pre-vote, never how
   * votes are counted, so election safety (one leader per term, section 5.2) and log matching
   * are untouched. A pre-vote raises no term, and a pre-vote wins only with a quorum of nodes
   * whose own lease lapsed: each node heard nothing from the leader for 2 heartbeats after its
   * own transport saw the leader's connection break, or for the full election timeout. A live
   * leader heartbeats every heartbeat interval to every node it can reach; any message from it
   * clears the signal (stepFollower), so a quorum can only grant while the leader cannot reach
   * that quorum, and then check-quorum steps it down anyway. Reads stay linearizable because
   * they use ReadIndex (a quorum round), never a leader lease.
   */
  leaderConnectionLost(id: NodeId): void {
    if (!this.preVote || !this.checkQuorum || this.role !== 'follower' || id === NONE || this.lead !== id) return;
    if (this.leaderLost) return;
    this.leaderLost = true;
    // Staggered by rank among the other voters: the survivors of a crash see the break at
    // about the same time and would otherwise campaign on the same tick and split the vote.
    const rank = [...this.voters].filter((v) => v !== id && v < this.id).length;
    this.leaderLostTimeout = 2 * this.heartbeatTimeout + rank * Math.max(1, Math.ceil(this.heartbeatTimeout / 2));
  }

  /** True when the leader's connection was reported lost and it has been silent for 2 heartbeats. */
  private leaderSuspected(): boolean {
    return this.leaderLost && this.role === 'follower' && this.electionElapsed >= 2 * this.heartbeatTimeout;
  }

  /** Leaders: heartbeats every heartbeatTick; check-quorum and transfer timeout every election timeout. */
  tickHeartbeat(): void {
    this.heartbeatElapsed++;
    this.electionElapsed++;
    if (this.electionElapsed >= this.electionTimeout) {
      this.electionElapsed = 0;
      if (this.checkQuorum) {
        // Thesis section 6.2: a leader that has not heard from a quorum steps down.
        const ok = hasQuorum(this.voters, (id) => id === this.id || (this.prs.get(id)?.recentActive ?? false));
        for (const [id, pr] of this.prs) if (id !== this.id) pr.recentActive = false;
        if (!ok) {
          this.becomeFollower(this.term, NONE);
          return;
        }
      }
      // Thesis section 3.10: abort a transfer that did not finish within an election timeout.
      if (this.role === 'leader' && this.leadTransferee !== NONE) this.leadTransferee = NONE;
    }
    if (this.role !== 'leader') return;
    if (this.heartbeatElapsed >= this.heartbeatTimeout) {
      this.heartbeatElapsed = 0;
      this.bcastHeartbeat('');
    }
  }

  // ---------------------------------------------------------------- elections

  private hasUnappliedConfChanges(): boolean {
    const log = this.raftLog;
    if (log.applied >= log.committed) return false;
    let lo = Math.max(log.applied + 1, log.firstIndex());
    const hi = log.committed + 1;
    while (lo < hi) {
      const ents = log.slice(lo, hi, 1 << 20);
      for (const e of ents) if (e.type === 'conf') return true;
      lo += ents.length;
    }
    return false;
  }

  private hup(transfer: boolean): void {
    if (this.role === 'leader') return;
    if (!this.promotable()) return;
    // A node must apply committed membership changes before it campaigns, or it could count
    // votes in a stale configuration (etcd's rule for single-server changes).
    if (this.hasUnappliedConfChanges()) return;
    if (this.preVote && !transfer) this.campaign('pre');
    else this.campaign(transfer ? 'transfer' : 'election');
  }

  private campaign(kind: 'pre' | 'election' | 'transfer'): void {
    let voteType: MessageType;
    let term: number;
    if (kind === 'pre') {
      this.becomePreCandidate();
      voteType = 'preVote';
      term = this.term + 1;
    } else {
      this.becomeCandidate();
      voteType = 'vote';
      term = this.term;
    }
    this.votes.set(this.id, true);
    if (voteResult(this.voters, this.votes) === 'won') {
      if (kind === 'pre') this.campaign('election');
      else this.becomeLeader();
      return;
    }
    const lastIndex = this.raftLog.lastIndex();
    const lastTerm = this.raftLog.lastTerm();
    for (const id of this.voters) {
      if (id === this.id) continue;
      this.send(msg({ type: voteType, to: id, term, index: lastIndex, logTerm: lastTerm, context: kind === 'transfer' ? CAMPAIGN_TRANSFER : '' }));
    }
  }

  // ---------------------------------------------------------------- step

  /**
   * Feeds one message (from a peer, or local with term 0). Throws RaftError('ErrProposalDropped')
   * for a local proposal or transfer that cannot be accepted now.
   */
  step(m: Message): void {
    // Meant for the proposer's driver (RaftNode), which takes it before the core sees it.
    if (m.type === 'propDropped') return;
    if (m.term === 0) {
      // local message
    } else if (m.term > this.term) {
      if (m.type === 'vote' || m.type === 'preVote') {
        const force = m.context === CAMPAIGN_TRANSFER;
        const inLease = this.checkQuorum && this.lead !== NONE && this.electionElapsed < this.electionTimeout && !this.leaderSuspected();
        // Thesis section 4.2.3: ignore vote requests while we believe a leader is alive, so a
        // removed or partitioned server cannot disrupt the cluster.
        if (!force && inLease) return;
      }
      if (m.type === 'preVote') {
        // A pre-vote never changes our term.
      } else if (m.type === 'preVoteResp' && !m.reject) {
        // The term is raised only when the pre-vote wins and the real election starts.
      } else if (m.type === 'app' || m.type === 'heartbeat' || m.type === 'snap') {
        this.becomeFollower(m.term, m.from);
      } else {
        this.becomeFollower(m.term, NONE);
      }
    } else if (m.term < this.term) {
      if ((this.checkQuorum || this.preVote) && (m.type === 'heartbeat' || m.type === 'app')) {
        // A stale leader cut off from us may otherwise never learn our term; answering lets it
        // step down (needed with check-quorum/pre-vote, where we ignore its elections).
        this.send(msg({ type: 'appResp', to: m.from }));
      } else if (m.type === 'preVote') {
        this.send(msg({ type: 'preVoteResp', to: m.from, term: this.term, reject: true }));
      }
      return;
    }

    switch (m.type) {
      case 'hup':
        this.hup(m.context === CAMPAIGN_TRANSFER);
        return;
      case 'vote':
      case 'preVote': {
        const canVote = this.vote === m.from || (this.vote === NONE && this.lead === NONE) || (m.type === 'preVote' && m.term > this.term);
        const respType = m.type === 'vote' ? 'voteResp' : 'preVoteResp';
        // Election restriction, paper section 5.4.1.
        if (canVote && this.raftLog.isUpToDate(m.index, m.logTerm)) {
          this.send(msg({ type: respType, to: m.from, term: m.term }));
          if (m.type === 'vote') {
            this.electionElapsed = 0;
            this.vote = m.from;
          }
        } else {
          this.send(msg({ type: respType, to: m.from, term: this.term, reject: true }));
        }
        return;
      }
      default:
        if (this.role === 'leader') this.stepLeader(m);
        else if (this.role === 'follower') this.stepFollower(m);
        else this.stepCandidate(m);
    }
  }

  private stepLeader(m: Message): void {
    switch (m.type) {
      case 'beat':
        this.bcastHeartbeat('');
        return;
      case 'prop': {
        if (m.entries.length === 0) throw new RaftError('ErrProposalDropped', 'empty proposal');
        if (!this.prs.has(this.id)) return this.dropProposal(m, 'leader was removed from the configuration');
        // Thesis section 3.10: stop accepting client requests during a leadership transfer.
        if (this.leadTransferee !== NONE) return this.dropProposal(m, 'leadership transfer in progress');
        const es: Entry[] = [];
        for (const e of this.proposalIndex ? this.admitProposals(m, this.proposalIndex) : m.entries) {
          if (e.type === 'conf') {
            if (this.pendingConfIndex > this.raftLog.applied) {
              return this.dropProposal(m, 'a configuration change is still pending');
            }
            this.pendingConfIndex = this.raftLog.lastIndex() + es.length + 1;
          }
          es.push(e);
        }
        // Every copy was already in the log (or sent back): nothing new to replicate.
        if (es.length === 0) return;
        this.appendEntries(es);
        const from = m.from !== this.id ? this.prs.get(m.from) : undefined;
        if (from) from.awaited = this.raftLog.lastIndex();
        this.bcastAppend();
        return;
      }
      case 'readIndex':
        this.leaderReadIndex(m);
        return;
      case 'transferLeader':
        this.leaderTransfer(m);
        return;
    }
    const pr = this.prs.get(m.from);
    if (!pr) return;
    switch (m.type) {
      case 'appResp': {
        pr.recentActive = true;
        if (m.reject) {
          // Fast backtracking (paper section 5.3, end): jump over the whole conflicting term.
          let next = m.rejectHint;
          if (m.logTerm > 0) next = this.raftLog.findConflictByTerm(m.rejectHint, m.logTerm);
          if (pr.maybeDecrTo(m.index, next)) {
            if (pr.state === 'replicate') pr.becomeProbe();
            this.sendAppend(m.from);
          }
          return;
        }
        const wasPaused = pr.isPaused();
        // A probe answered at exactly match (peer already caught up) also ends probing.
        if (!pr.maybeUpdate(m.index) && !(pr.state === 'probe' && pr.match === m.index)) return;
        if (pr.state === 'probe') pr.becomeReplicate();
        else if (pr.state === 'snapshot' && pr.match >= pr.pendingSnapshot) {
          pr.becomeProbe();
          pr.becomeReplicate();
        } else if (pr.state === 'replicate') pr.inflights.freeLE(m.index);
        if (this.maybeCommit()) {
          this.releasePendingReadIndexMessages();
          this.bcastCommit();
        } else if (wasPaused) {
          this.sendAppend(m.from);
        }
        // Pipelining: keep the window full while there is more to send.
        while (this.maybeSendAppend(m.from, false)) {
          /* send more */
        }
        // It now holds entries committed before it acknowledged them, and waits for them.
        if (this.urgentCommit(pr)) this.sendUrgentNotice(m.from);
        if (m.from === this.leadTransferee && pr.match === this.raftLog.lastIndex()) {
          this.send(msg({ type: 'timeoutNow', to: m.from }));
        }
        return;
      }
      case 'heartbeatResp': {
        pr.recentActive = true;
        pr.probeSent = false;
        if (pr.state === 'replicate' && pr.inflights.full()) pr.inflights.freeFirstOne();
        if (pr.match < this.raftLog.lastIndex()) this.sendAppend(m.from);
        if (m.context === '') return;
        const acks = this.readOnly.recvAck(m.from, m.context);
        if (!acks) return;
        if (!hasQuorum(this.voters, (id) => id === this.id || acks.has(id))) return;
        for (const rs of this.readOnly.advance(m.context)) this.respondReadIndex(rs.req, rs.index);
        return;
      }
      case 'snapStatus':
        if (pr.state !== 'snapshot') return;
        if (m.reject) pr.pendingSnapshot = 0;
        pr.becomeProbe();
        // Wait for the follower's answer (or a heartbeat response) before probing again.
        pr.probeSent = true;
        return;
      case 'unreachable':
        if (pr.state === 'replicate') pr.becomeProbe();
        return;
    }
  }

  private dropProposal(m: Message, why: string): void {
    if (m.from === NONE || m.from === this.id) throw new RaftError('ErrProposalDropped', why);
    // A forwarded proposal goes back to the node that forwarded it: nothing of it was appended,
    // so its proposer may retry it at once rather than wait for its request timeout.
    this.send(msg({ type: 'propDropped', to: m.from, entries: m.entries, context: why }));
  }

  private leaderTransfer(m: Message): void {
    const target = m.index;
    const pr = this.prs.get(target);
    if (!pr || pr.isLearner) return;
    if (this.leadTransferee === target) return;
    if (target === this.id) return;
    this.leadTransferee = target;
    // The transfer must finish within one election timeout (thesis section 3.10).
    this.electionElapsed = 0;
    if (pr.match === this.raftLog.lastIndex()) this.send(msg({ type: 'timeoutNow', to: target }));
    else this.sendAppend(target);
  }

  /** ReadIndex on the leader (thesis section 6.4). */
  private leaderReadIndex(m: Message): void {
    if (this.voters.size === 1 && this.voters.has(this.id)) {
      this.respondReadIndex(m, this.raftLog.committed);
      return;
    }
    // Step 1 of 6.4: the leader must have committed an entry of its term, else its commit
    // index may be behind the cluster's.
    if (!this.committedEntryInCurrentTerm()) {
      this.pendingReadIndexMessages.push(m);
      return;
    }
    this.readOnly.addRequest(this.raftLog.committed, m);
    this.readOnly.recvAck(this.id, m.context);
    this.bcastHeartbeat(m.context);
  }

  private releasePendingReadIndexMessages(): void {
    if (this.pendingReadIndexMessages.length === 0 || !this.committedEntryInCurrentTerm()) return;
    const pending = this.pendingReadIndexMessages;
    this.pendingReadIndexMessages = [];
    for (const m of pending) this.leaderReadIndex(m);
  }

  private respondReadIndex(req: Message, index: number): void {
    if (req.from === NONE || req.from === this.id) {
      this.readStates.push({ index, context: req.context });
    } else {
      this.send(msg({ type: 'readIndexResp', to: req.from, index, context: req.context }));
      // The follower serves the read once it has applied `index`: tell it of the commit now.
      const pr = this.prs.get(req.from);
      if (pr) {
        pr.awaited = Math.max(pr.awaited, index);
        if (this.urgentCommit(pr)) this.sendUrgentNotice(req.from);
      }
    }
  }

  private stepCandidate(m: Message): void {
    const myResp: MessageType = this.role === 'preCandidate' ? 'preVoteResp' : 'voteResp';
    switch (m.type) {
      case 'prop':
        return this.dropProposal(m, 'no leader');
      case 'app':
        this.becomeFollower(m.term, m.from);
        this.handleAppend(m);
        return;
      case 'heartbeat':
        this.becomeFollower(m.term, m.from);
        this.handleHeartbeat(m);
        return;
      case 'snap':
        this.becomeFollower(m.term, m.from);
        this.handleSnapshot(m);
        return;
      case 'voteResp':
      case 'preVoteResp': {
        if (m.type !== myResp) return;
        this.votes.set(m.from, !m.reject);
        const r = voteResult(this.voters, this.votes);
        if (r === 'won') {
          if (this.role === 'preCandidate') this.campaign('election');
          else {
            this.becomeLeader();
            this.bcastAppend();
          }
        } else if (r === 'lost') {
          this.becomeFollower(this.term, NONE);
        }
        return;
      }
      case 'transferLeader':
      case 'readIndex':
        if (m.from === NONE || m.from === this.id) throw new RaftError('ErrProposalDropped', 'no leader');
        return;
    }
  }

  private stepFollower(m: Message): void {
    switch (m.type) {
      case 'prop':
        if (this.lead === NONE) return this.dropProposal(m, 'no leader');
        // Proposal forwarding to the leader (etcd; thesis section 6.2 "redirect").
        this.send(msg({ type: 'prop', to: this.lead, entries: m.entries, index: m.index }));
        return;
      case 'app':
        this.electionElapsed = 0;
        this.leaderLost = false;
        this.lead = m.from;
        this.handleAppend(m);
        return;
      case 'heartbeat':
        this.electionElapsed = 0;
        this.leaderLost = false;
        this.lead = m.from;
        this.handleHeartbeat(m);
        return;
      case 'snap':
        this.electionElapsed = 0;
        this.leaderLost = false;
        this.lead = m.from;
        this.handleSnapshot(m);
        return;
      case 'transferLeader':
        if (this.lead === NONE) {
          if (m.from === NONE || m.from === this.id) throw new RaftError('ErrProposalDropped', 'no leader');
          return;
        }
        this.send(msg({ type: 'transferLeader', to: this.lead, index: m.index }));
        return;
      case 'readIndex':
        if (this.lead === NONE) {
          if (m.from === NONE || m.from === this.id) throw new RaftError('ErrProposalDropped', 'no leader');
          return;
        }
        // Follower reads (thesis 6.4.1): ask the leader for its read index.
        this.send(msg({ type: 'readIndex', to: this.lead, context: m.context }));
        return;
      case 'readIndexResp':
        this.readStates.push({ index: m.index, context: m.context });
        return;
      case 'timeoutNow':
        // Thesis 3.10: the target of a transfer campaigns at once, bypassing pre-vote and lease.
        this.hup(true);
        return;
    }
  }

  private handleAppend(m: Message): void {
    if (m.index < this.raftLog.committed) {
      this.send(msg({ type: 'appResp', to: m.from, index: this.raftLog.committed }));
      return;
    }
    const lastNew = this.raftLog.maybeAppend(m.index, m.logTerm, m.commit, m.entries);
    if (lastNew >= 0) {
      this.send(msg({ type: 'appResp', to: m.from, index: lastNew }));
      return;
    }
    // Reject with a hint: the largest index <= m.index whose term is <= m.logTerm, and its term,
    // so the leader can skip a whole conflicting term in one round trip.
    const hintIndex = this.raftLog.findConflictByTerm(Math.min(m.index, this.raftLog.lastIndex()), m.logTerm);
    const hintTerm = Math.max(0, this.raftLog.termOrCompacted(hintIndex));
    this.send(msg({ type: 'appResp', to: m.from, index: m.index, reject: true, rejectHint: hintIndex, logTerm: hintTerm }));
  }

  private handleHeartbeat(m: Message): void {
    this.raftLog.commitTo(Math.min(m.commit, this.raftLog.lastIndex()));
    this.send(msg({ type: 'heartbeatResp', to: m.from, context: m.context }));
  }

  private handleSnapshot(m: Message): void {
    const s = m.snapshot;
    if (s && this.restore(s)) {
      this.send(msg({ type: 'appResp', to: m.from, index: this.raftLog.lastIndex() }));
    } else {
      this.send(msg({ type: 'appResp', to: m.from, index: this.raftLog.committed }));
    }
  }

  /** Installs a snapshot unless we already have its content; returns whether it was installed. */
  private restore(s: Snapshot): boolean {
    const { index, term } = s.metadata;
    if (index <= this.raftLog.committed) return false;
    if (this.role !== 'follower') {
      this.becomeFollower(this.term + 1, NONE);
      return false;
    }
    if (this.raftLog.matchTerm(index, term)) {
      // We hold the snapshot's last entry: fast-forward commit instead of discarding the log.
      this.raftLog.commitTo(index);
      return false;
    }
    this.raftLog.restore(s);
    this.prs.clear();
    this.voters.clear();
    this.learners.clear();
    this.applyConfState(s.metadata.confState);
    return true;
  }

  // ---------------------------------------------------------------- membership

  private applyConfState(cs: ConfState): void {
    const next = this.raftLog.lastIndex() + 1;
    for (const id of cs.voters) {
      this.voters.add(id);
      this.prs.set(id, new Progress(next, this.maxInflight, this.maxInflightBytes, false));
    }
    for (const id of cs.learners) {
      this.learners.add(id);
      this.prs.set(id, new Progress(next, this.maxInflight, this.maxInflightBytes, true));
    }
    const self = this.prs.get(this.id);
    if (self) self.match = next - 1;
  }

  /**
   * Applies a committed membership change (called by the driver when it applies a `conf`
   * entry). Single-server changes only (thesis section 4.1). Returns the new configuration.
   */
  applyConfChange(cc: ConfChange): ConfState {
    const id = cc.nodeId;
    const last = this.raftLog.lastIndex();
    switch (cc.type) {
      case 'addLearner':
        if (!this.voters.has(id) && !this.learners.has(id)) {
          this.learners.add(id);
          this.prs.set(id, new Progress(last + 1, this.maxInflight, this.maxInflightBytes, true));
          this.prs.get(id)!.recentActive = true;
        }
        break;
      case 'promote':
        if (!this.voters.has(id)) {
          this.learners.delete(id);
          this.voters.add(id);
          const pr = this.prs.get(id);
          if (pr) pr.isLearner = false;
          else {
            const fresh = new Progress(last + 1, this.maxInflight, this.maxInflightBytes, false);
            fresh.recentActive = true;
            this.prs.set(id, fresh);
          }
        }
        break;
      case 'remove':
        this.voters.delete(id);
        this.learners.delete(id);
        this.prs.delete(id);
        break;
    }
    if (this.role === 'leader') {
      if (!this.voters.has(this.id)) {
        // A leader removed from the configuration steps down; the others elect a new leader.
        this.becomeFollower(this.term, NONE);
      } else {
        if (this.leadTransferee !== NONE && !this.voters.has(this.leadTransferee)) this.leadTransferee = NONE;
        // The quorum may have changed: commit what the new majority already holds.
        if (this.maybeCommit()) this.bcastAppend();
        else if (cc.type !== 'remove') this.sendAppend(id);
      }
    }
    return this.confState();
  }

  /** Decodes and applies a committed `conf` entry. */
  applyConfEntry(e: Entry): ConfState {
    return this.applyConfChange(decodeConfChange(e.data));
  }

  /** Number of voters that would be needed for a quorum (used by drivers and tests). */
  quorumSize(): number {
    return (this.voters.size >> 1) + 1;
  }
}
