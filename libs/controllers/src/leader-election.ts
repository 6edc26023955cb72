/**
 * Leader election on a coordination.k8s.io/v1 Lease, as kube-controller-manager does it with
 * client-go's leaderelection package (LeaseLock): one candidate holds the Lease and renews it
 * every retry period; the others watch the record and take over only once it has not changed
 * for a whole lease duration, measured on THEIR OWN clock from when they last saw it change
 * (client-go's observedTime), so clock skew between nodes does not matter. A holder that cannot
 * renew within the renew deadline stops leading before anyone else may acquire (renew deadline
 * < lease duration). On a clean shutdown the holder releases the Lease (client-go's
 * ReleaseOnCancel: empty holderIdentity, leaseDurationSeconds 1) so a successor starts at once.
 * Writes use the Lease's resourceVersion as a precondition: two candidates never both win.
 */

/** The fields of a Lease spec that election uses (coordination.k8s.io/v1 LeaseSpec). */
export interface LeaseRecord {
  holderIdentity: string;
  leaseDurationSeconds: number;
  /** RFC 3339 with microseconds (MicroTime), as client-go writes them. */
  acquireTime: string;
  renewTime: string;
  leaseTransitions: number;
}

/** The storage of one Lease; conflicts (lost races) and other failures are thrown. */
export interface LeaseLock {
  /** The record and its resourceVersion, or undefined when the Lease does not exist. */
  get(): Promise<{ record: LeaseRecord; resourceVersion: string } | undefined>;
  /** Creates the Lease; throws when it exists already. */
  create(record: LeaseRecord): Promise<void>;
  /** Replaces the record if the Lease is still at `resourceVersion`; throws on conflict. */
  update(record: LeaseRecord, resourceVersion: string): Promise<void>;
}

/** Options of LeaderElector (defaults: the controller manager's 15 s / 10 s / 2 s). */
export interface LeaderElectorOptions {
  lock: LeaseLock;
  /** This candidate's identity (node name + random suffix, as `hostname_uuid` in Kubernetes). */
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  onStartedLeading(): void;
  onStoppedLeading(): void;
  /** Clock (tests). */
  now?: () => number;
}

/** MicroTime in RFC 3339 with 6 fractional digits. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** Runs the election loop; `leading` tells whether this candidate holds the Lease now. */
export class LeaderElector {
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private stopped = false;
  private isLeading = false;
  private observedRaw = '';
  private observedTime = 0;
  private lastRenew = 0;
  private ticking: Promise<void> | undefined;

  constructor(private readonly o: LeaderElectorOptions) {
    this.leaseDurationMs = o.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = o.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = o.retryPeriodMs ?? 2_000;
    this.now = o.now ?? Date.now;
    if (this.renewDeadlineMs >= this.leaseDurationMs) throw new RangeError('renew deadline must be shorter than the lease duration');
  }

  get leading(): boolean {
    return this.isLeading;
  }

  /** Starts trying to acquire (at once, then every retry period). */
  start(): void {
    if (this.running || this.stopped) return;
    this.running = true;
    const loop = (): void => {
      if (this.stopped) return;
      this.ticking = this.tick().finally(() => {
        this.ticking = undefined;
        if (!this.stopped) this.timer = setTimeout(loop, this.retryPeriodMs);
      });
    };
    loop();
  }

  /** One acquire-or-renew round (exposed for tests). */
  async tick(): Promise<void> {
    let ok: boolean;
    try {
      ok = await this.tryAcquireOrRenew();
    } catch {
      ok = false;
    }
    const t = this.now();
    if (ok) {
      this.lastRenew = t;
      if (!this.isLeading && !this.stopped) {
        this.isLeading = true;
        this.o.onStartedLeading();
      }
    } else if (this.isLeading && t - this.lastRenew >= this.renewDeadlineMs) {
      this.isLeading = false;
      this.o.onStoppedLeading();
    }
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const t = this.now();
    const current = await this.o.lock.get();
    const fresh = (prev?: LeaseRecord): LeaseRecord => ({
      holderIdentity: this.o.identity,
      leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
      acquireTime: prev && prev.holderIdentity === this.o.identity ? prev.acquireTime : microTime(t),
      renewTime: microTime(t),
      leaseTransitions: prev ? (prev.holderIdentity === this.o.identity ? prev.leaseTransitions : prev.leaseTransitions + 1) : 0,
    });
    if (!current) {
      await this.o.lock.create(fresh());
      this.observe(JSON.stringify(fresh()), t);
      return true;
    }
    const raw = JSON.stringify(current.record);
    if (raw !== this.observedRaw) this.observe(raw, t);
    const rec = current.record;
    const mine = rec.holderIdentity === this.o.identity;
    // An empty holder is a released Lease; otherwise wait a full duration of the holder's
    // own lease length after we last saw the record change.
    const durationMs = Math.max(1, rec.leaseDurationSeconds || 0) * 1000;
    const expired = rec.holderIdentity === '' || this.observedTime + durationMs <= t;
    if (!mine && !expired) return false;
    const next = fresh(rec);
    await this.o.lock.update(next, current.resourceVersion);
    this.observe(JSON.stringify(next), t);
    return true;
  }

  private observe(raw: string, t: number): void {
    this.observedRaw = raw;
    this.observedTime = t;
  }

  /** Stops the loop; when leading, stops leading and releases the Lease (best effort). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.ticking;
    if (!this.isLeading) return;
    this.isLeading = false;
    this.o.onStoppedLeading();
    try {
      const current = await this.o.lock.get();
      if (current && current.record.holderIdentity === this.o.identity) {
        const t = this.now();
        await this.o.lock.update({ ...current.record, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime(t) }, current.resourceVersion);
      }
    } catch {
      // Release is an optimisation: without it the successor waits one lease duration.
    }
  }
}
