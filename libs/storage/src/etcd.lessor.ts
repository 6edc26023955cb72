/**
 * Lease expiry (docs/etcd-api.md "Leases"): only the Raft leader decides that a lease ran out,
 * and it does so by proposing a revoke through the log, so every replica deletes the lease's
 * keys at the same position. When a node becomes leader it first restarts every lease's clock
 * at its full TTL (as etcd's lessor Promote does): followers' clocks were only approximations,
 * and a client keeping a lease alive may have been cut off by the election.
 */
import type { RaftNode } from '@app/raft';
import type { EtcdApplier } from './etcd.applier.js';
import type { RaftProposer } from './raft.proposer.js';

/** Runs the leader's expiry loop of one node; stop() ends it. */
export class EtcdLessor {
  private timer: NodeJS.Timeout | undefined;
  private leading = false;
  private readonly revoking = new Set<string>();

  constructor(
    private readonly applier: EtcdApplier,
    private readonly node: RaftNode,
    private readonly proposer: RaftProposer,
    private readonly checkMs = 250,
  ) {}

  /** Starts checking every `checkMs`. */
  start(): void {
    this.timer ??= setInterval(() => this.tick(), this.checkMs);
    this.timer.unref();
  }

  /** Stops checking (revocations in flight settle on their own). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private tick(): void {
    const leads = this.node.status().role === 'leader';
    if (leads && !this.leading) this.applier.refreshAll();
    this.leading = leads;
    if (!leads) return;
    for (const id of this.applier.expired()) {
      if (this.revoking.has(id)) continue;
      this.revoking.add(id);
      this.proposer.proposeEtcd({ revoke: { id } }).then(
        () => this.revoking.delete(id),
        () => this.revoking.delete(id),
      );
    }
  }
}
