/**
 * JSON forms of the apimachinery value types whose protobuf shape differs from their JSON shape:
 * meta/v1 Time and MicroTime ({seconds, nanos} on the wire, RFC 3339 strings in JSON) and
 * meta/v1 Duration (int64 nanoseconds on the wire, a Go duration string in JSON).
 *
 * These are pure functions; the codec calls them while walking a message.
 */

/** A value that could not be converted between its JSON and protobuf forms. */
export class WireValueError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WireValueError';
  }
}

/** Seconds since the Unix epoch plus non-negative nanoseconds, as in google.protobuf.Timestamp. */
export interface WireTimestamp {
  seconds: number;
  nanos: number;
}

// RFC 3339 date-time; Go's time.Parse(time.RFC3339) accepts any fraction length and an offset.
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/**
 * Parses an RFC 3339 timestamp to seconds + nanos (UTC). Throws WireValueError on bad input.
 * Nanosecond fractions are kept, unlike Date.parse which stops at milliseconds.
 */
export function parseRfc3339(text: string): WireTimestamp {
  const m = RFC3339.exec(text);
  if (!m) throw new WireValueError(`invalid RFC 3339 time ${JSON.stringify(text)}`);
  const [, y, mo, d, h, mi, s, frac, , sign, oh, om] = m;
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1 || day > 31 || Number(h) > 23 || Number(mi) > 59 || Number(s) > 60) {
    throw new WireValueError(`invalid RFC 3339 time ${JSON.stringify(text)}`);
  }
  let ms = Date.UTC(Number(y), month - 1, day, Number(h), Number(mi), Number(s));
  if (sign) {
    const offset = (Number(oh) * 60 + Number(om)) * 60_000;
    ms -= sign === '+' ? offset : -offset;
  }
  const nanos = frac ? Number(frac.padEnd(9, '0')) : 0;
  return { seconds: Math.floor(ms / 1000), nanos };
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

function formatUtc(seconds: number): string {
  const d = new Date(seconds * 1000);
  if (Number.isNaN(d.getTime())) throw new WireValueError(`time out of range: ${seconds}s`);
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}` +
    `T${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}`
  );
}

/**
 * meta/v1 Time as JSON: UTC, whole seconds, "Z" suffix (Go: t.UTC().Format(time.RFC3339)); the
 * fraction is dropped because metav1.Time marshals JSON at second precision.
 */
export function formatTime(ts: WireTimestamp): string {
  return `${formatUtc(ts.seconds)}Z`;
}

/** meta/v1 MicroTime as JSON: UTC with exactly 6 fractional digits (Go's RFC3339Micro layout). */
export function formatMicroTime(ts: WireTimestamp): string {
  return `${formatUtc(ts.seconds)}.${pad(Math.floor(ts.nanos / 1000), 6)}Z`;
}

const UNIT_NANOS: Record<string, number> = {
  ns: 1,
  us: 1e3,
  µs: 1e3,
  μs: 1e3,
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

/**
 * Parses a Go duration string ("1h0m0s", "1.5s", "-300ms") to nanoseconds, following Go's
 * time.ParseDuration grammar: optional sign, then one or more decimal numbers each with a unit.
 * A malformed one throws WireValueError with Go's own message (`time: invalid duration "x"`,
 * `time: missing unit in duration "1"`, `time: unknown unit "d" in duration "1d"`), which the
 * API quotes as kube-apiserver does. Precision is that of a JS number (exact up to 2^53 ns,
 * about 104 days).
 */
export function parseGoDuration(text: string): number {
  const quoted = JSON.stringify(text);
  let rest = text;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    if (rest[0] === '-') sign = -1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') throw new WireValueError(`time: invalid duration ${quoted}`);
  let total = 0;
  while (rest.length > 0) {
    const num = /^(\d*)(?:\.(\d*))?/.exec(rest)!;
    if (num[1] === '' && (num[2] ?? '') === '') throw new WireValueError(`time: invalid duration ${quoted}`);
    rest = rest.slice(num[0].length);
    // The unit runs to the next digit or dot, as in Go.
    const unit = /^[^\d.]*/.exec(rest)![0];
    if (unit === '') throw new WireValueError(`time: missing unit in duration ${quoted}`);
    const nanos = UNIT_NANOS[unit];
    if (nanos === undefined) throw new WireValueError(`time: unknown unit ${JSON.stringify(unit)} in duration ${quoted}`);
    rest = rest.slice(unit.length);
    total += Number(`${num[1] || '0'}.${num[2] || '0'}`) * nanos;
  }
  return sign * Math.round(total);
}

function trimFraction(whole: number, frac: number, digits: number): string {
  if (frac === 0) return String(whole);
  return `${whole}.${pad(frac, digits).replace(/0+$/, '')}`;
}

/**
 * Formats nanoseconds as Go's time.Duration.String(): "0s", sub-second values in ns/µs/ms,
 * otherwise h, m and s parts with the seconds fraction trimmed ("1h0m0s", "1m30.5s").
 */
export function formatGoDuration(nanos: number): string {
  if (!Number.isFinite(nanos)) throw new WireValueError(`invalid duration ${nanos}`);
  if (nanos === 0) return '0s';
  const neg = nanos < 0;
  let n = Math.abs(Math.round(nanos));
  let out: string;
  if (n < 1e3) out = `${n}ns`;
  else if (n < 1e6) out = `${trimFraction(Math.floor(n / 1e3), n % 1e3, 3)}µs`;
  else if (n < 1e9) out = `${trimFraction(Math.floor(n / 1e6), n % 1e6, 6)}ms`;
  else {
    const h = Math.floor(n / 3600e9);
    n -= h * 3600e9;
    const m = Math.floor(n / 60e9);
    n -= m * 60e9;
    const s = trimFraction(Math.floor(n / 1e9), n % 1e9, 9);
    out = h > 0 ? `${h}h${m}m${s}s` : m > 0 ? `${m}m${s}s` : `${s}s`;
  }
  return neg ? `-${out}` : out;
}
