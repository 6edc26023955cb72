import type { RaftClock, TimerHandle } from '../raft.clock.js';
import { EventQueue } from './sim.queue.js';

/** A simulated process: its timers fire only while it is alive (a crash drops them all). */
export interface SimProcess {
  alive: boolean;
}

interface SimTimer {
  readonly owner: SimProcess;
  readonly fn: () => void;
  readonly every: number;
  cancelled: boolean;
}

const FOREVER: SimProcess = { alive: true };

/**
 * Virtual time for the node simulator: one queue of timed events ordered by (time, insertion),
 * run one at a time, each followed by a full drain of the microtasks it caused (the awaits of
 * the driver loop), before the next one. Nothing else runs meanwhile (no real I/O), so a run is
 * a pure function of the seed.
 */
export class SimScheduler {
  /** Virtual milliseconds since the start of the run. */
  private t = 0;
  private readonly queue = new EventQueue<SimTimer>();
  /** What now() of a process clock adds to the virtual time (any fixed epoch will do). */
  static readonly EPOCH = 1_700_000_000_000;

  get time(): number {
    return this.t;
  }

  /** A RaftClock whose timers belong to `owner` (dropped once it is no longer alive). */
  clockFor(owner: SimProcess): RaftClock {
    return {
      now: () => SimScheduler.EPOCH + this.t,
      setTimeout: (fn, ms) => this.add(owner, fn, ms, 0),
      clearTimeout: (h) => cancel(h),
      setInterval: (fn, ms) => this.add(owner, fn, ms, Math.max(1, ms)),
      clearInterval: (h) => cancel(h),
      setImmediate: (fn) => {
        this.add(owner, fn, 0, 0);
      },
    };
  }

  /** Runs `fn` after `ms` virtual milliseconds, whatever happens to the processes. */
  after(ms: number, fn: () => void): void {
    this.add(FOREVER, fn, ms, 0);
  }

  /** Runs every event due up to `until` (virtual ms), in order; then sets the time to `until`. */
  async runUntil(until: number, stop: () => boolean): Promise<void> {
    for (;;) {
      const at = this.queue.peekAt();
      if (at === undefined || at > until || stop()) break;
      const ev = this.queue.popDue(at)!;
      this.t = at;
      if (ev.cancelled || !ev.owner.alive) continue;
      if (ev.every > 0) this.queue.push(at + ev.every, ev);
      ev.fn();
      // A real macrotask turn: every microtask the event caused (and those they cause) runs now.
      await new Promise<void>((r) => setImmediate(r));
    }
    if (this.t < until) this.t = until;
  }

  private add(owner: SimProcess, fn: (...args: unknown[]) => void, ms: number, every: number): TimerHandle {
    const ev: SimTimer = { owner, fn: () => fn(), every, cancelled: false };
    this.queue.push(this.t + Math.max(0, ms), ev);
    return ev;
  }
}

function cancel(h: TimerHandle): void {
  if (h && typeof h === 'object' && 'cancelled' in h) (h as SimTimer).cancelled = true;
}
