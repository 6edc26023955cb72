/**
 * Helpers of the property specs (`*.property.spec.ts`): outcomes as values, so that a property
 * asserts on every run instead of inside a catch.
 */
import fc from 'fast-check';

/**
 * The seed of every property run: fixed, so that `npm test` checks the same cases each time and
 * a failure replays; `FC_SEED=<n>` explores other cases (with `FC_RUNS` for more of them).
 */
export const PROPERTY_SEED = Number(process.env.FC_SEED) || 20261125;
fc.configureGlobal({ seed: PROPERTY_SEED });

/** What `run` gave: `{ value }`, or `{ error }` with what it threw. */
export function settle<T>(run: () => T): { value: T } | { error: unknown } {
  try {
    return { value: run() };
  } catch (error) {
    return { error };
  }
}

/**
 * Undefined when `run` returns or throws an instance of `allowed`; otherwise what it threw, so
 * that `expect(...).toBeUndefined()` fails showing the unexpected error.
 */
export function unexpectedError(run: () => unknown, allowed: abstract new (...args: never[]) => unknown): unknown {
  const r = settle(run);
  return 'error' in r && !(r.error instanceof allowed) ? r.error : undefined;
}

/** Cases per property: FC_RUNS when set (a longer, deeper run), else the spec's default. */
export function numRuns(fallback: number): number {
  return Number(process.env.FC_RUNS) || fallback;
}
