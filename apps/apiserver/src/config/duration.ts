/** Durations written as Go's `time.Duration` strings, as kube-apiserver's flags and the `timeout` query parameter take them. */

/** Go's `time.ParseDuration` units, in milliseconds. */
const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  'µs': 1e-3, // U+00B5
  'μs': 1e-3, // U+03BC
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/**
 * Parses a Go duration string ("90s", "1m30s", "1.5h", "300ms", "-2s", "0") into milliseconds.
 * Throws an Error whose message is Go's (`time: invalid duration "x"`, ...).
 */
export function parseGoDuration(s: string): number {
  const quoted = JSON.stringify(s);
  let rest = s;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    if (rest[0] === '-') sign = -1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') throw new Error(`time: invalid duration ${quoted}`);
  let total = 0;
  while (rest !== '') {
    const num = /^(\d*)(?:\.(\d*))?/.exec(rest)!;
    if (num[0] === '' || num[0] === '.' || (num[1] === '' && (num[2] ?? '') === '')) throw new Error(`time: invalid duration ${quoted}`);
    rest = rest.slice(num[0].length);
    const unit = /^[^\d.]*/.exec(rest)![0];
    if (unit === '') throw new Error(`time: missing unit in duration ${quoted}`);
    const ms = UNIT_MS[unit];
    if (ms === undefined) throw new Error(`time: unknown unit ${JSON.stringify(unit)} in duration ${quoted}`);
    rest = rest.slice(unit.length);
    total += Number(`${num[1] || '0'}.${num[2] || '0'}`) * ms;
  }
  // Go's limit is ~292 years of nanoseconds; anything that large is "no smaller than the maximum" here.
  if (!Number.isFinite(total)) throw new Error(`time: invalid duration ${quoted}`);
  return sign * total;
}
