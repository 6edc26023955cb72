/**
 * The contracts around the node driver (raft.node.ts): what its state machine implements, its
 * options, and the bookkeeping of proposals and reads waiting for their answer.
 */
import type { RaftClock, TimerHandle } from './raft.clock.js';
import type { RaftNodeStorage } from './raft.storage-port.js';
import type { RaftTransport } from './raft.transport.js';
import type { Message, NodeId } from './raft.types.js';

/** A committed entry as the state machine sees it (the driver's envelope removed). */
export interface AppliedEntry {
  readonly index: number;
  readonly term: number;
  readonly data: Uint8Array;
}

/**
 * A state-machine snapshot. `index`/`term` are of the last entry it includes. With `file`, the
 * data is in that file and `data` is empty (see Snapshot.file): snapshot() hands the file over
 * to the node, restore() reads it and leaves it in place.
 */
export interface StateMachineSnapshot {
  readonly index: number;
  readonly term: number;
  readonly data: Uint8Array;
  readonly file?: string;
}

/**
 * The replicated application (for example the MVCC store). Contract:
 *  - apply() is called once per committed entry, in index order, never concurrently; its
 *    result is handed to the proposer of that entry. It must be deterministic.
 *  - appliedIndex() is the last index whose effects are durable in the state machine (a
 *    durable store may return a value that survives restarts; entries up to it are skipped
 *    on replay, a volatile one returns 0 after a restart and gets everything again).
 *  - snapshot() captures the state at its own applied index (the index it returns); it may run
 *    while later entries are applied. restore() replaces the state.
 *  - sync(), for a durable state machine only: makes every applied entry durable and returns
 *    the durable applied index. The driver does not wait for it: apply() goes on being called
 *    while a sync runs, and the log is compacted to the index it returns. With it, the Raft
 *    snapshots kept on disk hold only metadata (index, term, membership: the state machine
 *    itself is the snapshot, as in etcd), so
 *    compacting the log costs one fsync instead of a copy of the whole state; the data is
 *    exported only when a follower needs it. Without it, every snapshot stores the exported
 *    state (a volatile state machine rebuilds from it after a restart).
 *  - onFailure(), for a state machine that writes after apply() returned: it reports a write
 *    that failed there. The driver then stops for good, as when apply() itself throws, without
 *    waiting for another entry to apply.
 */
export interface StateMachine {
  apply(entry: AppliedEntry): Promise<unknown>;
  appliedIndex(): number;
  snapshot(): Promise<StateMachineSnapshot>;
  restore(snapshot: StateMachineSnapshot): Promise<void>;
  sync?(): Promise<number>;
  onFailure?(listener: (e: Error) => void): void;
}

/** Options of RaftNode. */
export interface RaftNodeOptions {
  id: NodeId;
  storage: RaftNodeStorage;
  stateMachine: StateMachine;
  /** Set with setTransport() when the transport needs the node first. */
  transport?: RaftTransport;
  /** Founding voters, used only when the storage is empty. */
  bootstrapVoters?: readonly NodeId[];
  tickMs?: number;
  electionTick?: number;
  heartbeatTick?: number;
  /** Take a snapshot after this many applied entries (default 10000). */
  snapshotEntries?: number;
  /** Entries kept in the log behind a snapshot for slow followers (default 1000). */
  keepEntries?: number;
  /** Proposals and reads fail with ErrTimeout after this many ms (default 10000). */
  requestTimeoutMs?: number;
  /**
   * A proposal sent but not applied after this many ms is sent again (default two election
   * timeouts); see RaftNode.setResendGate.
   */
  resendMs?: number;
  /**
   * How long a leader may wait before telling a follower that entries it holds are committed,
   * when no append is going to it anyway (default 10). A follower learns of a commit with the
   * next append that carries entries; this bounds how late it applies when none comes. 0 tells
   * followers at once, with an append of its own for every commit.
   */
  commitNoticeMs?: number;
  /**
   * Appends with entries in flight to one follower before the leader waits for an answer
   * (default 1). Every append costs the follower a Ready, an fsync (~30 µs of CPU here, and
   * kernel journal work besides) and an answer; with a small window, entries proposed while it
   * is full leave together in the next append, so under load the batches grow instead of the
   * message count (idle latency is unchanged: the first append leaves at once). On the 3-node
   * bench a window of 2 gave ~10% more creates/s than 256, and 1 another 2-5% over 2 in
   * interleaved A/B runs (~10 entries per append instead of ~5). A lost append is re-sent on the
   * next heartbeat answer, which frees the window (etcd's rule).
   */
  maxInflightMsgs?: number;
  random?: () => number;
  /** Clock and timers of the driver (default: Node's real ones; the simulator's are virtual). */
  clock?: RaftClock;
}

/** A proposal waiting for its entry to be applied (or to fail). */
export interface PendingProposal {
  resolve(v: { index: number; term: number; result: unknown }): void;
  reject(e: Error): void;
  timer: TimerHandle;
  /** Proposed while this node was leader at this term (0 when forwarded). */
  leaderTerm: number;
  /** The enveloped entry data, kept for resending. */
  env: Uint8Array;
  /** How many times it was handed to the core (appended as leader, or forwarded). */
  sent: number;
  /** Clock time of the last send, and the leader and term it went to. */
  sentAt: number;
  sentLead: NodeId;
  sentTerm: number;
  /** A copy came back dropped or undelivered: resend once a leader is known. */
  due: boolean;
  /**
   * Never resent: a snapshot was installed after it was sent, so its entry may be among those
   * the snapshot covers, which this node did not apply one by one (see RaftNode.resend).
   */
  frozen: boolean;
}

/** A ReadIndex request waiting for the applied index to reach its read index. */
export interface PendingRead {
  resolve(index: number): void;
  reject(e: Error): void;
  timer: TimerHandle;
  index: number;
}

/**
 * Messages that carry no promise about the sender's persisted state (a forwarded proposal, a
 * ReadIndex request or answer): they may leave before the Ready's entries and hard state are
 * durable. Votes and append/heartbeat answers may not (they acknowledge what is on disk).
 */
export function isDurabilityFree(m: Message): boolean {
  return m.type === 'prop' || m.type === 'readIndex' || m.type === 'readIndexResp' || m.type === 'propDropped';
}
