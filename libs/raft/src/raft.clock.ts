/**
 * The clock and timers the node driver (raft.node.ts) runs on. Production uses the real ones
 * (REAL_CLOCK); the simulator (sim/) injects a virtual clock whose timers fire in a
 * deterministic order, so one seed replays the same interleaving of the driver's loop.
 */

/** An opaque handle returned by setTimeout/setInterval, only ever passed back to clear them. */
export type TimerHandle = unknown;

/** Time and timer functions, with the semantics of Node's globals of the same name. */
export interface RaftClock {
  /** Milliseconds since the epoch (Date.now). */
  now(): number;
  setTimeout(fn: (...args: unknown[]) => void, ms: number): TimerHandle;
  clearTimeout(h: TimerHandle): void;
  setInterval(fn: (...args: unknown[]) => void, ms: number): TimerHandle;
  clearInterval(h: TimerHandle): void;
  /** Runs `fn` after the current turn (and its microtasks), before later timers. */
  setImmediate(fn: (...args: unknown[]) => void): void;
}

/** Node's real clock and timers: the default of RaftNodeOptions.clock. */
export const REAL_CLOCK: RaftClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout | undefined),
  setInterval: (fn, ms) => setInterval(fn, ms),
  clearInterval: (h) => clearInterval(h as NodeJS.Timeout | undefined),
  setImmediate: (fn) => {
    setImmediate(fn);
  },
};
