/** Options and counters of the node simulator (raft.node-sim.ts). */

/** Knobs of one run of the node simulator; the rest is derived from the seed. */
export interface NodeSimOptions {
  /** Founding voters (3 or 5; from the seed when not given). */
  voters: number;
  /** Extra nodes, empty at first, that membership changes may add. */
  spares: number;
  /** Steps (of STEP_MS virtual ms) with faults, followed by the healing phase. */
  steps: number;
  /** Steps allowed in the healing phase for a final write to be applied on every voter. */
  healSteps: number;
  /**
   * The broken variant, for the simulator's own test only: the leader's disk resolves its
   * fsync-ed writes before the fsync (sim.disk.ts ackBeforeSync), so the leader's driver counts
   * its own entries (and answers their proposers) while they are not yet durable.
   */
  brokenLeaderAcksUnsynced: boolean;
  /**
   * Another broken variant: leaders append every copy of a proposal that reaches them (their
   * core's duplicate check is off), while the drivers still resend.
   */
  brokenAppendsEveryCopy: boolean;
  /** Receives a line per notable event when set (debugging a replayed seed). */
  trace?: (line: string) => void;
}

/** Counters of one run: what the faults and the driver's paths actually did. */
export interface NodeSimStats {
  elections: number;
  writesAcknowledged: number;
  readsServed: number;
  crashes: number;
  /** Crashes that lost the machine's power (unsynced writes may be lost), not just the process. */
  powerLosses: number;
  partitions: number;
  snapshotsSent: number;
  confChanges: number;
  transfers: number;
  messages: number;
  connectionLosses: number;
  /** Messages of a leader's Ready sent before that Ready's fsync completed (sendBeforePersist). */
  earlyLeaderSends: number;
  /** Durability-free messages (forwarded proposals, ReadIndex) sent before their Ready's fsync. */
  earlyDurabilityFree: number;
  /** Committed entries applied before the fsync of the Ready that carried them (durablyLogged). */
  earlyApplies: number;
  /** Proposals a driver sent again (RaftNode's resends). */
  proposalsResent: number;
  /** Copies of proposals a leader did not append because its log held the proposal already. */
  duplicateProposals: number;
  fsyncs: number;
  unsyncedKept: number;
  unsyncedLost: number;
  tornRecords: number;
}
