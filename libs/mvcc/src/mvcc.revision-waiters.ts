/**
 * Callers waiting for the store to reach a revision ("not older than" reads, conventions.md
 * "Resource versions").
 */

/** Pending waits for revisions; the store calls wake() after each applied batch. */
export class RevisionWaiters {
  private waiters: { revision: number; resolve: (ok: boolean) => void; timer?: NodeJS.Timeout }[] = [];

  /** Resolves true once wake() reports `revision` or later, false after `timeoutMs` or closeAll(). */
  wait(revision: number, timeoutMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const waiter: (typeof this.waiters)[number] = { revision, resolve };
      waiter.timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  /** Resolves (true) every wait for `revision` or earlier. */
  wake(revision: number): void {
    if (this.waiters.length === 0) return;
    const ready = this.waiters.filter((w) => w.revision <= revision);
    if (ready.length === 0) return;
    this.waiters = this.waiters.filter((w) => w.revision > revision);
    for (const w of ready) {
      clearTimeout(w.timer);
      w.resolve(true);
    }
  }

  /** Resolves every pending wait false (the store closed). */
  closeAll(): void {
    for (const w of this.waiters) {
      clearTimeout(w.timer);
      w.resolve(false);
    }
    this.waiters = [];
  }
}
