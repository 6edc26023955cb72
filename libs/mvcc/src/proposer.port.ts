/**
 * The write port of the state machine. The API layer proposes commands and reads after a
 * barrier; it never applies directly. The first implementation (LocalProposer) is a
 * group-committing fsynced log on the local store; the Raft node implements the same port
 * (propose = append + replicate + apply; readBarrier = ReadIndex, Raft thesis section 6.4)
 * without any change above it.
 */
import type { TxnCommand, TxnResult } from './mvcc.types.js';

/** Replicated write path + linearizable-read barrier. */
export interface Proposer {
  /**
   * Resolves with the command's result once it is durable and applied to the local store (its
   * events were emitted before this resolves). Rejects with MvccError('InvalidCommand') for a
   * malformed command (nothing proposed), or an error whose outcome is unknown (e.g. lost
   * leadership: the command may still commit).
   */
  propose(command: TxnCommand): Promise<TxnResult>;
  /**
   * Resolves when every write acknowledged before the call is applied locally, so a local
   * read afterwards is linearizable ("Most Recent" reads).
   */
  readBarrier(): Promise<void>;
  /**
   * Resolves once every write this node has answered is in its local store and its events
   * have been emitted (no quorum round: a local wait, free when nothing is being written).
   * Absent when propose already resolves only after that.
   */
  settled?(): Promise<void>;
  /**
   * Whether this node is the one that proposes the group's periodic work (history compaction):
   * the Raft leader. Absent for a proposer that is the only writer of its store.
   */
  leads?(): boolean;
  /** Stops accepting proposals; resolves after in-flight ones settled. */
  close(): Promise<void>;
}
