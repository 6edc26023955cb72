/**
 * Wire and persistence types of the Raft core. The shapes follow etcd's raftpb (Message, Entry,
 * HardState, Snapshot, ConfState) so that the proto in proto/raft.proto maps onto them one to one.
 * Node ids are positive integers; 0 means "none" (no leader, no vote).
 */

/** Id of a Raft node. 0 is reserved for "none". */
export type NodeId = number;

/** The "none" node id: no leader known, no vote cast. */
export const NONE: NodeId = 0;

/** Kind of a log entry: application data, or a membership change (data = encoded ConfChange). */
export type EntryType = 'normal' | 'conf';

/**
 * One log entry. Immutable once created: the core shares entry objects between the unstable
 * log, messages and Ready batches, so nobody may mutate an entry (or its data) after proposing.
 */
export interface Entry {
  readonly term: number;
  readonly index: number;
  readonly type: EntryType;
  readonly data: Uint8Array;
}

/**
 * State that MUST be on stable storage before any message that depends on it is sent
 * (Raft paper, figure 2, "Persistent state on all servers"; commit is persisted too so a
 * restart does not re-apply from scratch, as etcd does).
 */
export interface HardState {
  readonly term: number;
  readonly vote: NodeId;
  readonly commit: number;
}

/** Membership: voters count for elections and commit, learners only receive the log. */
export interface ConfState {
  readonly voters: readonly NodeId[];
  readonly learners: readonly NodeId[];
}

/** Snapshot metadata: the last log position it covers and the membership at that point. */
export interface SnapshotMetadata {
  readonly index: number;
  readonly term: number;
  readonly confState: ConfState;
}

/** A state-machine snapshot as carried by InstallSnapshot (paper section 7). */
export interface Snapshot {
  readonly metadata: SnapshotMetadata;
  readonly data: Uint8Array;
  /**
   * When set, the state-machine data is in this file and `data` is empty: a large snapshot is
   * exported, sent, received, stored and installed without being held in memory. Whoever holds
   * the snapshot owns the file (the transport deletes a sent one; the storage deletes a stored
   * one when it is replaced).
   */
  readonly file?: string;
}

/**
 * Single-server membership change (Raft thesis section 4.1, with learners as in etcd):
 * `addLearner` adds a non-voting member, `promote` turns a learner (or a new node) into a voter,
 * `remove` removes a voter or learner.
 */
export interface ConfChange {
  readonly type: 'addLearner' | 'promote' | 'remove';
  readonly nodeId: NodeId;
}

/** Message kinds. `hup`, `beat`, `prop`, `snapStatus`, `unreachable` and `transferLeader` may be local. */
export type MessageType =
  | 'hup'
  | 'beat'
  | 'prop'
  | 'app'
  | 'appResp'
  | 'vote'
  | 'voteResp'
  | 'preVote'
  | 'preVoteResp'
  | 'snap'
  | 'heartbeat'
  | 'heartbeatResp'
  | 'unreachable'
  | 'snapStatus'
  | 'transferLeader'
  | 'timeoutNow'
  | 'readIndex'
  | 'readIndexResp'
  | 'propDropped';

/**
 * A Raft message. Fields not used by a type are left at their zero value (0, false, empty).
 * `index`/`logTerm` mean: for `app` the entry preceding `entries`; for `vote`/`preVote` the
 * candidate's last entry; for `appResp` the acknowledged (or rejected) index; for
 * `readIndexResp` the read index; for `transferLeader` the transferee. `context` correlates ReadIndex requests and marks
 * transfer-forced campaigns.
 */
export interface Message {
  type: MessageType;
  from: NodeId;
  to: NodeId;
  term: number;
  logTerm: number;
  index: number;
  entries: readonly Entry[];
  commit: number;
  snapshot?: Snapshot;
  reject: boolean;
  rejectHint: number;
  context: string;
}

/** Role of a node (etcd's StateType). */
export type Role = 'follower' | 'preCandidate' | 'candidate' | 'leader';

/** Volatile state worth reporting; not persisted. */
export interface SoftState {
  readonly lead: NodeId;
  readonly role: Role;
}

/** Result of a ReadIndex request: reads with `context` are linearizable once applied >= index. */
export interface ReadState {
  readonly index: number;
  readonly context: string;
}

/**
 * One batch of work for the driver. Contract (etcd raft's Ready, in the same order):
 *  1. Write `snapshot` (if any), `entries` and `hardState` to stable storage — with fsync when
 *     `mustSync` — BEFORE any of `messages` is sent, because messages (votes granted, append
 *     acknowledgements) promise that this state is durable (paper section 5, figure 2).
 *     Sole exception: `sendBeforePersist` (below).
 *  2. Send `messages`.
 *  3. Apply `snapshot` then `committedEntries` to the state machine, in order; for each
 *     `conf` entry call RawNode.applyConfChange.
 *  4. Serve reads in `readStates` once the applied index reaches their index.
 *  5. Call RawNode.advance(ready).
 */
export interface Ready {
  /**
   * When true, `messages` may be sent before or while step 1 runs (a leader's appends in
   * parallel with its own fsync, thesis section 10.2.1): the core counts the leader's own
   * entries only after advance(). When false, step 1 MUST complete first.
   */
  readonly sendBeforePersist: boolean;
  readonly softState?: SoftState;
  readonly hardState?: HardState;
  readonly entries: readonly Entry[];
  readonly snapshot?: Snapshot;
  readonly committedEntries: readonly Entry[];
  readonly messages: readonly Message[];
  readonly readStates: readonly ReadState[];
  readonly mustSync: boolean;
}

/** Progress of replication to one peer, as reported by status(). */
export interface PeerStatus {
  readonly id: NodeId;
  readonly match: number;
  readonly next: number;
  readonly state: 'probe' | 'replicate' | 'snapshot';
  readonly learner: boolean;
}

/** Snapshot of a node's Raft state for metrics and debugging. */
export interface RaftStatus {
  readonly id: NodeId;
  readonly term: number;
  readonly vote: NodeId;
  readonly lead: NodeId;
  readonly role: Role;
  readonly commit: number;
  readonly applied: number;
  readonly lastIndex: number;
  readonly peers: readonly PeerStatus[];
}

/** Builds a message with zero values for all fields not given. */
export function msg(fields: Partial<Message> & Pick<Message, 'type'>): Message {
  return {
    from: 0,
    to: 0,
    term: 0,
    logTerm: 0,
    index: 0,
    entries: EMPTY_ENTRIES,
    commit: 0,
    reject: false,
    rejectHint: 0,
    context: '',
    ...fields,
  };
}

/** Shared empty entry array (never mutated) to keep the hot path allocation-light. */
export const EMPTY_ENTRIES: readonly Entry[] = Object.freeze([]) as readonly Entry[];

/** Shared empty payload. */
export const EMPTY_DATA: Uint8Array = new Uint8Array(0);

/** The empty hard state of a brand new node. */
export const EMPTY_HARD_STATE: HardState = Object.freeze({ term: 0, vote: 0, commit: 0 });

/** Approximate size in bytes of an entry for flow control (payload plus fixed header). */
export function entrySize(e: Entry): number {
  return e.data.length + 24;
}

/** Encodes a membership change as entry data (small JSON, decoded only when applied). */
export function encodeConfChange(cc: ConfChange): Uint8Array {
  return new TextEncoder().encode(JSON.stringify({ t: cc.type, n: cc.nodeId }));
}

/** Decodes entry data written by encodeConfChange; throws RaftError('ErrInvalidConfChange') on bad input. */
export function decodeConfChange(data: Uint8Array): ConfChange {
  let v: unknown;
  try {
    v = JSON.parse(new TextDecoder().decode(data));
  } catch {
    throw new RaftError('ErrInvalidConfChange', 'conf change entry is not valid JSON');
  }
  const o = v as { t?: unknown; n?: unknown };
  if ((o.t === 'addLearner' || o.t === 'promote' || o.t === 'remove') && typeof o.n === 'number' && Number.isInteger(o.n) && o.n > 0) {
    return { type: o.t, nodeId: o.n };
  }
  throw new RaftError('ErrInvalidConfChange', 'conf change entry has an invalid shape');
}

/** Names of the typed errors raised by the Raft library. */
export type RaftErrorCode =
  | 'ErrCompacted'
  | 'ErrUnavailable'
  | 'ErrSnapshotTemporarilyUnavailable'
  | 'ErrSnapOutOfDate'
  | 'ErrProposalDropped'
  | 'ErrInvalidConfChange'
  | 'ErrCorrupt'
  | 'ErrNotLeader'
  | 'ErrLeadershipLost'
  | 'ErrStopped'
  | 'ErrTimeout'
  | 'ErrInvariant';

/** Typed error of the Raft library; `code` names the condition (etcd's named errors). */
export class RaftError extends Error {
  constructor(
    readonly code: RaftErrorCode,
    message: string,
  ) {
    super(`${code}: ${message}`);
    this.name = 'RaftError';
  }
}

/** True when `e` is a RaftError with the given code. */
export function isRaftError(e: unknown, code: RaftErrorCode): e is RaftError {
  return e instanceof RaftError && e.code === code;
}
