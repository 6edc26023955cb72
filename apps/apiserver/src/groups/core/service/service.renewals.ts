/**
 * When another server's endpoint record counts as expired, judged by what this server observed
 * rather than by the time written in the record: a record whose resourceVersion has not changed
 * for `ttlMs` of this process's monotonic clock. Clocks of different hosts never meet, so a
 * server whose wall clock runs behind is not dropped while it renews, and one whose clock runs
 * ahead cannot keep a dead record alive (client-go's leader election judges a Lease the same way).
 * A record first seen counts from that moment.
 */
export class ObservedRenewals {
  private readonly seen = new Map<string, { version: string; at: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Whether `key`, now at `version`, has gone `ttlMs` without a change this process saw. */
  expired(key: string, version: string): boolean {
    const t = this.now();
    const s = this.seen.get(key);
    if (!s || s.version !== version) {
      this.seen.set(key, { version, at: t });
      return false;
    }
    return t - s.at > this.ttlMs;
  }

  /** Forgets the keys not in `present` (records removed since). */
  retain(present: ReadonlySet<string>): void {
    for (const k of this.seen.keys()) if (!present.has(k)) this.seen.delete(k);
  }
}
