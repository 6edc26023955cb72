/**
 * Liveness of the event loop: a timer that should fire every `intervalMs` measures how late it
 * fires (timer drift). Everything this process does (serving, Raft ticks, storage callbacks)
 * runs on that loop, so a loop blocked for seconds is a process that cannot make progress.
 */

/** Default bound of a loop stall before /livez fails: 5 s (docs/health.md). */
export const EVENT_LOOP_BOUND_MS = 5_000;
/** Default sampling interval. */
export const EVENT_LOOP_SAMPLE_MS = 250;

/** Options of EventLoopMonitor; the clock and timer are injectable for tests. */
export interface EventLoopMonitorOptions {
  boundMs?: number;
  intervalMs?: number;
  now?: () => number;
  setInterval?: (fn: () => void, ms: number) => { unref?(): unknown };
  clearInterval?: (t: unknown) => void;
}

/**
 * Samples the loop's delay; check() fails while the last sample, or the stall still under way
 * (time since the last sample beyond one interval), exceeds the bound. A stall that ended is
 * reported by the probe that arrives right after it, then forgotten at the next sample.
 */
export class EventLoopMonitor {
  readonly boundMs: number;
  private readonly intervalMs: number;
  private readonly now: () => number;
  private readonly setTimer: NonNullable<EventLoopMonitorOptions['setInterval']>;
  private readonly clearTimer: NonNullable<EventLoopMonitorOptions['clearInterval']>;
  private timer: unknown;
  private lastSample = 0;
  private lastDelay = 0;

  constructor(o: EventLoopMonitorOptions = {}) {
    this.boundMs = o.boundMs ?? EVENT_LOOP_BOUND_MS;
    this.intervalMs = o.intervalMs ?? EVENT_LOOP_SAMPLE_MS;
    this.now = o.now ?? (() => performance.now());
    this.setTimer = o.setInterval ?? ((fn, ms) => setInterval(fn, ms));
    this.clearTimer = o.clearInterval ?? ((t) => clearInterval(t as NodeJS.Timeout));
  }

  /** Starts sampling (the timer never keeps the process alive). */
  start(): void {
    if (this.timer !== undefined) return;
    this.lastSample = this.now();
    const t = this.setTimer(() => this.sample(), this.intervalMs);
    t.unref?.();
    this.timer = t;
  }

  stop(): void {
    if (this.timer !== undefined) this.clearTimer(this.timer);
    this.timer = undefined;
  }

  /** One timer firing: how late it came. */
  sample(): void {
    const t = this.now();
    this.lastDelay = Math.max(0, t - this.lastSample - this.intervalMs);
    this.lastSample = t;
  }

  /** undefined while the loop keeps up, else the stall in ms against the bound. */
  check(): string | undefined {
    if (this.timer === undefined) return 'event loop monitor not running';
    const running = Math.max(0, this.now() - this.lastSample - this.intervalMs);
    const stall = Math.max(this.lastDelay, running);
    return stall > this.boundMs ? `event loop blocked for ${Math.round(stall)} ms (bound ${this.boundMs} ms)` : undefined;
  }
}
