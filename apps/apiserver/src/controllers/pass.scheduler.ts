/**
 * The run loop of a level-triggered controller: `pass` recomputes everything from the current
 * state, so a burst of changes needs one pass, not one per change. `schedule()` after a change
 * runs a pass on the next turn of the event loop; changes during a pass run one more pass after
 * it (never two at once). A pass that fails, or resolves `true` (work left that no change will
 * announce, such as objects still being deleted), runs again after `retryMs`.
 */
export class PassScheduler {
  /** A pass is due on the next turn and has not started: later changes are covered by it. */
  private queued = false;
  private running = false;
  private again = false;
  private retry: NodeJS.Timeout | undefined;
  private active = false;

  constructor(
    private readonly name: string,
    private readonly pass: () => Promise<boolean | void>,
    private readonly retryMs = 1000,
  ) {}

  start(): void {
    this.active = true;
  }

  /** No pass starts after this; one already running finishes. */
  stop(): void {
    this.active = false;
    if (this.retry) clearTimeout(this.retry);
    this.retry = undefined;
  }

  schedule(): void {
    if (!this.active || this.queued) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.queued = true;
    setImmediate(() => {
      this.queued = false;
      this.running = true;
      (this.active ? this.pass() : Promise.resolve())
        .then((pending) => {
          if (pending === true) this.later();
        })
        .catch((e) => {
          if (!this.active) return;
          process.stderr.write(`${this.name}: ${(e as Error).message}; retrying\n`);
          this.later();
        })
        .finally(() => {
          this.running = false;
          if (this.again) {
            this.again = false;
            this.schedule();
          }
        });
    });
  }

  private later(): void {
    if (!this.active) return;
    if (this.retry) clearTimeout(this.retry);
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.schedule();
    }, this.retryMs);
    this.retry.unref();
  }
}
