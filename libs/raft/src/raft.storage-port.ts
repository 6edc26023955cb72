import type { RaftStorage } from './raft.storage.js';
import type { ConfState, Entry, HardState, Snapshot } from './raft.types.js';

/**
 * The storage the node driver (raft.node.ts) runs on: the core's read port (RaftStorage) plus
 * the writes of the Ready contract. Implemented by LevelDbRaftStorage in production and by the
 * simulator's disk (sim/sim.disk.ts). Reads answer from what is durable: a write shows in them
 * only once its promise resolved.
 */
export interface RaftNodeStorage extends RaftStorage {
  /** True when nothing was ever written (a brand-new node). */
  isEmpty(): boolean;
  /** Writes the founding configuration of a new cluster (see bootstrapSnapshot). */
  bootstrap(voters: readonly number[]): Promise<void>;
  /**
   * Persists the durable part of a Ready as one atomic write: snapshot (replacing the log),
   * entries (truncating a conflicting suffix) and hard state. Resolves once durable (fsynced);
   * with `mustSync` false (only the commit index changed) it may resolve before the fsync.
   */
  save(rd: { hardState?: HardState; entries: readonly Entry[]; snapshot?: Snapshot }, mustSync?: boolean): Promise<void>;
  /**
   * Records a state-machine snapshot at applied index i (durably) and discards the log up to
   * `compactTo` (<= i).
   */
  createSnapshot(i: number, confState: ConfState, data: Uint8Array, compactTo?: number): Promise<Snapshot>;
  /** Rewrites the stored snapshot as metadata only (a durable state machine holds its data). */
  dropSnapshotData(): Promise<void>;
  /**
   * The index of this node's own removal from the configuration, as last recorded by
   * setRemovedAt: the node keeps knowing that it was removed after a snapshot of its own
   * covered the removal entry (and the configuration no longer shows the change).
   */
  removedAt?(): number | undefined;
  /** Records (durably) or clears the index of this node's own removal. */
  setRemovedAt?(index: number | undefined): Promise<void>;
}
