/** What the benchmarks' command lines share. */

/** A flag's positive number (`dflt` when absent or empty); throws on anything else. */
export function positive(v: string | undefined, dflt: number, what: string): number {
  if (v === undefined || v === '') return dflt;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${what} must be a positive number, got ${JSON.stringify(v)}`);
  return n;
}
