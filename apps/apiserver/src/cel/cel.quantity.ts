/**
 * Kubernetes' CEL libraries for quantities, URLs and semantic versions
 * (k8s.io/apiserver/pkg/cel/library: quantity.go, urls.go, semverlib.go): the same function names,
 * overloads, results and error texts.
 *
 * - Quantities keep kube's internal form (resource.Quantity holds either a small int64 mantissa with
 *   a decimal scale or an arbitrary-precision decimal), because `isInteger`, `asInteger` and
 *   `asApproximateFloat` depend on it; values are exact (bigint).
 * - URLs follow Go's net/url (ParseRequestURI to accept, Parse to build the value).
 * - Versions follow github.com/blang/semver/v4 (Parse, and kube's normalizing variant).
 */
import { isIPv4, isIPv6 } from 'node:net';
import type { Environment } from '@marcbachmann/cel-js';
import { parseQuantity } from '@app/apimachinery';
import { goQuote } from './cel.go-quote.js';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const fitsInt64 = (v: bigint): boolean => v >= INT64_MIN && v <= INT64_MAX;
const pow10n = (k: number): bigint => 10n ** BigInt(k);

// ---------------------------------------------------------------------------------------------
// Quantity
// ---------------------------------------------------------------------------------------------

/**
 * resource.Quantity's amount: `int` is its int64Amount (value × 10^scale, value within int64),
 * `dec` its inf.Dec (unscaled × 10^-scale). Quantities move to `dec` when int64 arithmetic would
 * overflow, and never back.
 */
type Amount =
  { readonly kind: 'int'; readonly value: bigint; readonly scale: number } | { readonly kind: 'dec'; readonly unscaled: bigint; readonly scale: number };

/** The value as coefficient × 10^exponent. */
function decimalOf(a: Amount): [bigint, number] {
  return a.kind === 'int' ? [a.value, a.scale] : [a.unscaled, -a.scale];
}

function toDec(a: Amount): { unscaled: bigint; scale: number } {
  return a.kind === 'dec' ? a : { unscaled: a.value, scale: -a.scale };
}

function cmpAmount(a: Amount, b: Amount): -1 | 0 | 1 {
  const [ca, ea] = decimalOf(a);
  const [cb, eb] = decimalOf(b);
  const e = Math.min(ea, eb);
  const x = ca * pow10n(ea - e);
  const y = cb * pow10n(eb - e);
  return x < y ? -1 : x > y ? 1 : 0;
}

function addDec(a: Amount, b: Amount): Amount {
  const x = toDec(a);
  const y = toDec(b);
  const scale = Math.max(x.scale, y.scale);
  return { kind: 'dec', unscaled: x.unscaled * pow10n(scale - x.scale) + y.unscaled * pow10n(scale - y.scale), scale };
}

/** int64Amount.Add: undefined when the int64 form overflows. */
function addInt(a: { value: bigint; scale: number }, b: { value: bigint; scale: number }): Amount | undefined {
  if (b.value === 0n) return { kind: 'int', value: a.value, scale: a.scale };
  if (a.value === 0n) return { kind: 'int', value: b.value, scale: b.scale };
  const scale = Math.min(a.scale, b.scale);
  const x = a.value * pow10n(a.scale - scale);
  const y = b.value * pow10n(b.scale - scale);
  if (!fitsInt64(x) || !fitsInt64(y) || !fitsInt64(x + y)) return undefined;
  return { kind: 'int', value: x + y, scale };
}

/** Quantity.Add. */
function addAmount(a: Amount, b: Amount): Amount {
  if (a.kind === 'int' && b.kind === 'int') {
    const r = addInt(a, b);
    if (r) return r;
  }
  return addDec(a, b);
}

/** Quantity.Sub (the int64 form negates the operand's mantissa as Go does, wrapping at int64's minimum). */
function subAmount(a: Amount, b: Amount): Amount {
  if (a.kind === 'int' && b.kind === 'int') {
    const r = addInt(a, { value: b.value === INT64_MIN ? INT64_MIN : -b.value, scale: b.scale });
    if (r) return r;
  }
  const y = toDec(b);
  return addDec(a, { kind: 'dec', unscaled: -y.unscaled, scale: y.scale });
}

/** Quantity.AsInt64: only the int64 form with a non-negative scale converts. */
function asInt64(a: Amount): bigint | undefined {
  if (a.kind === 'dec' || a.scale < 0) return undefined;
  const v = a.value * pow10n(a.scale);
  return fitsInt64(v) ? v : undefined;
}

// Go's math.Pow10 tables, so that asApproximateFloat rounds as kube does.
const POW10 = Array.from({ length: 32 }, (_, i) => Number(`1e${i}`));
const POW10_POS32 = Array.from({ length: 10 }, (_, i) => Number(`1e${i * 32}`));
const POW10_NEG32 = Array.from({ length: 11 }, (_, i) => Number(`1e-${i * 32}`));

function goPow10(n: number): number {
  if (n >= 0 && n <= 308) return POW10_POS32[Math.floor(n / 32)] * POW10[n % 32];
  if (n < 0 && n >= -323) return POW10_NEG32[Math.floor(-n / 32)] / POW10[-n % 32];
  return n > 0 ? Infinity : 0;
}

/** Quantity.AsApproximateFloat64. */
function approximateFloat(a: Amount): number {
  const [coef, exp] = decimalOf(a);
  const base = Number(coef);
  return exp === 0 ? base : base * goPow10(exp);
}

const DECIMAL_SUFFIX: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIX: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const NANOS_PER_UNIT = 10n ** 9n;

/**
 * The amount resource.ParseQuantity builds for a string the repo's parser accepted: the int64 fast
 * path when the digits and scale allow it, else the decimal rounded up to nano units (or capped).
 */
function parseAmount(str: string, nanos: bigint): Amount {
  if (str === '0') return { kind: 'int', value: 0n, scale: 0 };
  let pos = 0;
  let positive = true;
  if (str[0] === '-' || str[0] === '+') {
    positive = str[0] === '+';
    pos++;
  }
  while (pos < str.length && str[pos] === '0') pos++;
  let num = '0';
  let denom = '';
  let suffix = '';
  if (pos < str.length) {
    const m = /^(\d*)(?:\.(\d*))?(.*)$/s.exec(str.slice(pos))!;
    num = m[1] || '0';
    denom = m[2] ?? '';
    suffix = m[3];
  }
  let precision: number;
  let scale: number;
  let mantissa = 1n;
  const binary = BINARY_SUFFIX[suffix];
  if (binary === undefined) {
    scale = DECIMAL_SUFFIX[suffix] ?? Number(suffix.slice(1));
    precision = 18 - num.length - denom.length;
  } else {
    scale = 0;
    if (denom.length === 0) {
      mantissa = 1n << BigInt(binary);
      precision = 15 - num.length - Math.trunc((binary * 3) / 10) - 1;
    } else precision = -1;
  }
  if (precision >= 0) {
    scale -= denom.length;
    if (scale >= -9) {
      const value = BigInt(num + denom) * mantissa;
      if (fitsInt64(value)) return { kind: 'int', value: positive ? value : -value, scale };
    }
  }
  if (nanos === 0n) return { kind: 'dec', unscaled: 0n, scale: 0 };
  // BinarySI values above 2^63-1 are capped to that value (scale 0); everything else keeps nanos.
  if (binary !== undefined && (nanos === INT64_MAX * NANOS_PER_UNIT || nanos === -INT64_MAX * NANOS_PER_UNIT))
    return { kind: 'dec', unscaled: nanos < 0n ? -INT64_MAX : INT64_MAX, scale: 0 };
  return { kind: 'dec', unscaled: nanos, scale: 9 };
}

/** A `kubernetes.Quantity` value. */
class CelQuantity {
  constructor(readonly amount: Amount) {}

  static parse(str: string): CelQuantity {
    const q = parseQuantity(str); // throws with kube's messages
    return new CelQuantity(parseAmount(str, q.nanos));
  }

  sign(): bigint {
    const [coef] = decimalOf(this.amount);
    return coef > 0n ? 1n : coef < 0n ? -1n : 0n;
  }

  cmp(other: CelQuantity): bigint {
    return BigInt(cmpAmount(this.amount, other.amount));
  }
}

function registerQuantity(env: Environment): void {
  const T = 'kubernetes.Quantity';
  env.registerType(T, { ctor: CelQuantity, fields: {} });
  env.registerFunction(`quantity(string): ${T}`, (s: string) => CelQuantity.parse(s));
  env.registerFunction('isQuantity(string): bool', (s: string) => {
    try {
      parseQuantity(s);
      return true;
    } catch {
      return false;
    }
  });
  // kube declares sign as a global overload while documenting it as a method: both forms work here.
  env.registerFunction(`sign(${T}): int`, (q: CelQuantity) => q.sign());
  env.registerFunction(`${T}.sign(): int`, (q: CelQuantity) => q.sign());
  env.registerFunction(`${T}.isGreaterThan(${T}): bool`, (a: CelQuantity, b: CelQuantity) => a.cmp(b) === 1n);
  env.registerFunction(`${T}.isLessThan(${T}): bool`, (a: CelQuantity, b: CelQuantity) => a.cmp(b) === -1n);
  env.registerFunction(`${T}.compareTo(${T}): int`, (a: CelQuantity, b: CelQuantity) => a.cmp(b));
  env.registerFunction(`${T}.asApproximateFloat(): double`, (q: CelQuantity) => approximateFloat(q.amount));
  env.registerFunction(`${T}.asInteger(): int`, (q: CelQuantity) => {
    const v = asInt64(q.amount);
    if (v === undefined) throw new Error('cannot convert value to integer');
    return v;
  });
  env.registerFunction(`${T}.isInteger(): bool`, (q: CelQuantity) => asInt64(q.amount) !== undefined);
  const intQuantity = (n: bigint): Amount => ({ kind: 'int', value: n, scale: 0 });
  env.registerFunction(`${T}.add(${T}): ${T}`, (a: CelQuantity, b: CelQuantity) => new CelQuantity(addAmount(a.amount, b.amount)));
  env.registerFunction(`${T}.add(int): ${T}`, (a: CelQuantity, n: bigint) => new CelQuantity(addAmount(a.amount, intQuantity(n))));
  env.registerFunction(`${T}.sub(${T}): ${T}`, (a: CelQuantity, b: CelQuantity) => new CelQuantity(subAmount(a.amount, b.amount)));
  env.registerFunction(`${T}.sub(int): ${T}`, (a: CelQuantity, n: bigint) => new CelQuantity(subAmount(a.amount, intQuantity(n))));
  // Quantities compare by value (resource.Quantity.Equal): quantity("1") == quantity("1000m").
  env.registerOperator(`${T} == ${T}`, (a: CelQuantity, b: CelQuantity) => a.cmp(b) === 0n);
}

// ---------------------------------------------------------------------------------------------
// URL (Go's net/url). Strings are handled as byte strings (one char per UTF-8 byte), as Go does.
// ---------------------------------------------------------------------------------------------

const toBytes = (s: string): string => Buffer.from(s, 'utf8').toString('latin1');
const fromBytes = (b: string): string => Buffer.from(b, 'latin1').toString('utf8');

enum Enc {
  Path,
  PathSegment,
  Host,
  Zone,
  UserPassword,
  QueryComponent,
  Fragment,
}

class UrlError extends Error {}

const isAlnum = (c: string): boolean => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
const isHex = (c: string | undefined): boolean => c !== undefined && /^[0-9a-fA-F]$/.test(c);

function shouldEscape(c: string, mode: Enc): boolean {
  if (isAlnum(c)) return false;
  if ((mode === Enc.Host || mode === Enc.Zone) && '!$&\'()*+,;=:[]<>"'.includes(c)) return false;
  if ('-_.~'.includes(c)) return false;
  if ('$&+,/:;=?@'.includes(c)) {
    switch (mode) {
      case Enc.Path:
        return c === '?';
      case Enc.PathSegment:
        return c === '/' || c === ';' || c === ',' || c === '?';
      case Enc.UserPassword:
        return c === '@' || c === '/' || c === '?' || c === ':';
      case Enc.QueryComponent:
        return true;
      case Enc.Fragment:
        return false;
      default:
        break;
    }
  }
  if (mode === Enc.Fragment && '!()*'.includes(c)) return false;
  return true;
}

function escapeError(s: string): UrlError {
  return new UrlError(`invalid URL escape ${goQuote(fromBytes(s))}`);
}

function unescape(s: string, mode: Enc): string {
  for (let i = 0; i < s.length;) {
    const c = s[i];
    if (c === '%') {
      if (i + 2 >= s.length || !isHex(s[i + 1]) || !isHex(s[i + 2])) throw escapeError(s.slice(i, i + 3));
      const v = parseInt(s.slice(i + 1, i + 3), 16);
      if (mode === Enc.Host && v < 0x80 && s.slice(i, i + 3) !== '%25') throw escapeError(s.slice(i, i + 3));
      if (mode === Enc.Zone && s.slice(i, i + 3) !== '%25' && v !== 0x20 && shouldEscape(String.fromCharCode(v), Enc.Host))
        throw escapeError(s.slice(i, i + 3));
      i += 3;
    } else {
      if ((mode === Enc.Host || mode === Enc.Zone) && c.charCodeAt(0) < 0x80 && shouldEscape(c, mode))
        throw new UrlError(`invalid character ${goQuote(c)} in host name`);
      i++;
    }
  }
  return s.replace(/%([0-9a-fA-F]{2})|\+/g, (m, hex: string | undefined) =>
    hex ? String.fromCharCode(parseInt(hex, 16)) : mode === Enc.QueryComponent ? ' ' : '+',
  );
}

function escape(s: string, mode: Enc): string {
  let out = '';
  for (const c of s) {
    if (c === ' ' && mode === Enc.QueryComponent) out += '+';
    else if (shouldEscape(c, mode)) out += `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`;
    else out += c;
  }
  return out;
}

function validEncoded(s: string, mode: Enc): boolean {
  for (const c of s) {
    if ("!$&'()*+,;=:@[]%".includes(c)) continue;
    if (shouldEscape(c, mode)) return false;
  }
  return true;
}

function validOptionalPort(port: string): boolean {
  return port === '' || /^:[0-9]*$/.test(port);
}

function validUserinfo(s: string): boolean {
  return /^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(s);
}

/** The host of an IP-literal must be an IPv6 address (with an optional zone). */
function checkIpLiteral(host: string): void {
  const s = fromBytes(host);
  const zone = s.indexOf('%');
  const addr = zone >= 0 ? s.slice(0, zone) : s;
  if (zone < 0 && isIPv4(addr)) throw new UrlError('invalid IP-literal');
  if (!isIPv6(addr) || (zone >= 0 && zone === s.length - 1)) throw new UrlError(`invalid host: ParseAddr(${goQuote(s)}): unable to parse IP`);
}

function parseHost(host: string): string {
  const open = host.lastIndexOf('[');
  if (open > 0) throw new UrlError('invalid IP-literal');
  if (open === 0) {
    const close = host.lastIndexOf(']');
    if (close < 0) throw new UrlError("missing ']' in host");
    const colonPort = host.slice(close + 1);
    if (!validOptionalPort(colonPort)) throw new UrlError(`invalid port ${goQuote(fromBytes(colonPort))} after host`);
    const port = unescape(colonPort, Enc.Host);
    const name = host.slice(1, close);
    const zone = name.indexOf('%25');
    const unescaped = zone >= 0 ? unescape(name.slice(0, zone), Enc.Host) + unescape(name.slice(zone), Enc.Zone) : unescape(name, Enc.Host);
    checkIpLiteral(unescaped);
    return `[${unescaped}]${port}`;
  }
  const colon = host.lastIndexOf(':');
  if (colon >= 0 && !validOptionalPort(host.slice(colon))) throw new UrlError(`invalid port ${goQuote(fromBytes(host.slice(colon)))} after host`);
  return unescape(host, Enc.Host);
}

interface UserInfo {
  username: string;
  password: string;
  passwordSet: boolean;
}

/** A parsed URL (Go's url.URL), all fields as byte strings. */
class GoUrl {
  scheme = '';
  opaque = '';
  user: UserInfo | undefined;
  host = '';
  path = '';
  rawPath = '';
  omitHost = false;
  forceQuery = false;
  rawQuery = '';
  fragment = '';
  rawFragment = '';

  setPath(p: string): void {
    this.path = unescape(p, Enc.Path);
    this.rawPath = escape(this.path, Enc.Path) === p ? '' : p;
  }

  setFragment(f: string): void {
    this.fragment = unescape(f, Enc.Fragment);
    this.rawFragment = escape(this.fragment, Enc.Fragment) === f ? '' : f;
  }

  escapedPath(): string {
    if (this.rawPath !== '' && validEncoded(this.rawPath, Enc.Path)) {
      try {
        if (unescape(this.rawPath, Enc.Path) === this.path) return this.rawPath;
      } catch {
        // fall through to the computed form
      }
    }
    if (this.path === '*') return '*';
    return escape(this.path, Enc.Path);
  }

  escapedFragment(): string {
    if (this.rawFragment !== '' && validEncoded(this.rawFragment, Enc.Fragment)) {
      try {
        if (unescape(this.rawFragment, Enc.Fragment) === this.fragment) return this.rawFragment;
      } catch {
        // fall through to the computed form
      }
    }
    return escape(this.fragment, Enc.Fragment);
  }

  /** URL.String, which kube compares for equality. */
  toString(): string {
    let out = '';
    if (this.scheme) out += `${this.scheme}:`;
    if (this.opaque) out += this.opaque;
    else {
      if ((this.scheme || this.host || this.user) && !(this.omitHost && !this.host && !this.user)) {
        if (this.host || this.path || this.user) out += '//';
        if (this.user) {
          out += escape(this.user.username, Enc.UserPassword);
          if (this.user.passwordSet) out += `:${escape(this.user.password, Enc.UserPassword)}`;
          out += '@';
        }
        if (this.host) out += escape(this.host, Enc.Host);
      }
      const path = this.escapedPath();
      if (path && path[0] !== '/' && this.host) out += '/';
      if (out === '' && path.split('/')[0].includes(':')) out += './';
      out += path;
    }
    if (this.forceQuery || this.rawQuery) out += `?${this.rawQuery}`;
    if (this.fragment) out += `#${this.escapedFragment()}`;
    return out;
  }

  /** splitHostPort. */
  hostPort(): [string, string] {
    let host = this.host;
    let port = '';
    const colon = host.lastIndexOf(':');
    if (colon >= 0 && validOptionalPort(host.slice(colon))) [host, port] = [host.slice(0, colon), host.slice(colon + 1)];
    if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
    return [host, port];
  }
}

/** Go's url.parse on a byte string. */
function parseUrl(raw: string, viaRequest: boolean): GoUrl {
  if ([...raw].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) throw new UrlError('net/url: invalid control character in URL');
  if (raw === '' && viaRequest) throw new UrlError('empty url');
  const url = new GoUrl();
  if (raw === '*') {
    url.path = '*';
    return url;
  }
  let rest = raw;
  const m = /^([A-Za-z][A-Za-z0-9+\-.]*)?:/.exec(raw);
  if (m) {
    if (!m[1]) throw new UrlError('missing protocol scheme');
    url.scheme = m[1].toLowerCase();
    rest = raw.slice(m[0].length);
  }
  if (rest.endsWith('?') && rest.indexOf('?') === rest.length - 1) {
    url.forceQuery = true;
    rest = rest.slice(0, -1);
  } else {
    const q = rest.indexOf('?');
    if (q >= 0) [rest, url.rawQuery] = [rest.slice(0, q), rest.slice(q + 1)];
  }
  if (!rest.startsWith('/')) {
    if (url.scheme) {
      url.opaque = rest;
      return url;
    }
    if (viaRequest) throw new UrlError('invalid URI for request');
    if (rest.split('/')[0].includes(':')) throw new UrlError('first path segment in URL cannot contain colon');
  }
  if ((url.scheme || (!viaRequest && !rest.startsWith('///'))) && rest.startsWith('//')) {
    let authority = rest.slice(2);
    rest = '';
    const slash = authority.indexOf('/');
    if (slash >= 0) [authority, rest] = [authority.slice(0, slash), authority.slice(slash)];
    const at = authority.lastIndexOf('@');
    url.host = parseHost(at < 0 ? authority : authority.slice(at + 1));
    if (at >= 0) {
      const userinfo = authority.slice(0, at);
      if (!validUserinfo(userinfo)) throw new UrlError('net/url: invalid userinfo');
      const colon = userinfo.indexOf(':');
      url.user =
        colon < 0
          ? { username: unescape(userinfo, Enc.UserPassword), password: '', passwordSet: false }
          : {
              username: unescape(userinfo.slice(0, colon), Enc.UserPassword),
              password: unescape(userinfo.slice(colon + 1), Enc.UserPassword),
              passwordSet: true,
            };
    }
  } else if (url.scheme && rest.startsWith('/')) url.omitHost = true;
  url.setPath(rest);
  return url;
}

function wrapUrlError(raw: string, e: unknown): never {
  if (e instanceof UrlError) throw new UrlError(`parse ${goQuote(fromBytes(raw))}: ${e.message}`);
  throw e;
}

/** url.ParseRequestURI. */
function parseRequestUri(s: string): GoUrl {
  const raw = toBytes(s);
  try {
    return parseUrl(raw, true);
  } catch (e) {
    return wrapUrlError(raw, e);
  }
}

/** url.Parse. */
function parseUrlWithFragment(s: string): GoUrl {
  const raw = toBytes(s);
  const hash = raw.indexOf('#');
  const u = hash < 0 ? raw : raw.slice(0, hash);
  let url: GoUrl;
  try {
    url = parseUrl(u, false);
  } catch (e) {
    return wrapUrlError(u, e);
  }
  if (hash < 0 || hash === raw.length - 1) return url;
  try {
    url.setFragment(raw.slice(hash + 1));
  } catch (e) {
    return wrapUrlError(raw, e);
  }
  return url;
}

/** url.ParseQuery, keeping the pairs that decode. */
function parseQuery(query: string): Record<string, string[]> {
  const out = Object.create(null) as Record<string, string[]>;
  for (const pair of query.split('&')) {
    if (pair === '' || pair.includes(';')) continue;
    const eq = pair.indexOf('=');
    let key: string;
    let value: string;
    try {
      key = fromBytes(unescape(eq < 0 ? pair : pair.slice(0, eq), Enc.QueryComponent));
      value = fromBytes(unescape(eq < 0 ? '' : pair.slice(eq + 1), Enc.QueryComponent));
    } catch {
      continue;
    }
    (out[key] ??= []).push(value);
  }
  return out;
}

/** A `kubernetes.URL` value. */
class CelUrl {
  constructor(readonly url: GoUrl) {}
}

function registerUrls(env: Environment): void {
  const T = 'kubernetes.URL';
  env.registerType(T, { ctor: CelUrl, fields: {} });
  env.registerFunction(`url(string): ${T}`, (s: string) => {
    try {
      parseRequestUri(s);
      return new CelUrl(parseUrlWithFragment(s));
    } catch (e) {
      if (e instanceof UrlError) throw new Error(`URL parse error during conversion from string: ${e.message}`, { cause: e });
      throw e;
    }
  });
  env.registerFunction('isURL(string): bool', (s: string) => {
    try {
      parseRequestUri(s);
      return true;
    } catch {
      return false;
    }
  });
  env.registerFunction(`${T}.getScheme(): string`, (u: CelUrl) => fromBytes(u.url.scheme));
  env.registerFunction(`${T}.getHost(): string`, (u: CelUrl) => fromBytes(u.url.host));
  env.registerFunction(`${T}.getHostname(): string`, (u: CelUrl) => fromBytes(u.url.hostPort()[0]));
  env.registerFunction(`${T}.getPort(): string`, (u: CelUrl) => fromBytes(u.url.hostPort()[1]));
  env.registerFunction(`${T}.getEscapedPath(): string`, (u: CelUrl) => fromBytes(u.url.escapedPath()));
  env.registerFunction(`${T}.getQuery(): map<string, list<string>>`, (u: CelUrl) => parseQuery(u.url.rawQuery));
  env.registerOperator(`${T} == ${T}`, (a: CelUrl, b: CelUrl) => a.url.toString() === b.url.toString());
}

// ---------------------------------------------------------------------------------------------
// Semver (blang/semver v4)
// ---------------------------------------------------------------------------------------------

type PreRelease = { readonly num: bigint } | { readonly str: string };

const ALPHANUM = /^[0-9A-Za-z-]*$/;
const DIGITS = /^[0-9]*$/;
const UINT64_MAX = 2n ** 64n - 1n;

/** strconv.ParseUint(s, 10, 64) on a string of digits. */
function parseUint(s: string): bigint {
  if (s === '') throw new Error(`strconv.ParseUint: parsing ${goQuote(s)}: invalid syntax`);
  const v = BigInt(s);
  if (v > UINT64_MAX) throw new Error(`strconv.ParseUint: parsing ${goQuote(s)}: value out of range`);
  return v;
}

const hasLeadingZeroes = (s: string): boolean => s.length > 1 && s[0] === '0';

/** strings.SplitN(s, sep, n). */
function splitN(s: string, sep: string, n: number): string[] {
  const parts = s.split(sep);
  return parts.length <= n ? parts : [...parts.slice(0, n - 1), parts.slice(n - 1).join(sep)];
}

function parseVersionNumber(s: string, name: string): bigint {
  if (!DIGITS.test(s)) throw new Error(`Invalid character(s) found in ${name} number ${goQuote(s)}`);
  if (hasLeadingZeroes(s)) throw new Error(`${name[0].toUpperCase()}${name.slice(1)} number must not contain leading zeroes ${goQuote(s)}`);
  return parseUint(s);
}

/** A `kubernetes.Semver` value. */
class CelSemver {
  constructor(
    readonly major: bigint,
    readonly minor: bigint,
    readonly patch: bigint,
    readonly pre: readonly PreRelease[],
    readonly build: readonly string[],
  ) {}

  /** semver.Parse. */
  static parse(s: string): CelSemver {
    if (s.length === 0) throw new Error('Version string empty');
    const parts = splitN(s, '.', 3);
    if (parts.length !== 3) throw new Error('No Major.Minor.Patch elements found');
    const major = parseVersionNumber(parts[0], 'major');
    const minor = parseVersionNumber(parts[1], 'minor');
    let patchStr = parts[2];
    let build: string[] = [];
    let prerelease: string[] = [];
    const plus = patchStr.indexOf('+');
    if (plus >= 0) [build, patchStr] = [patchStr.slice(plus + 1).split('.'), patchStr.slice(0, plus)];
    const dash = patchStr.indexOf('-');
    if (dash >= 0) [prerelease, patchStr] = [patchStr.slice(dash + 1).split('.'), patchStr.slice(0, dash)];
    const patch = parseVersionNumber(patchStr, 'patch');
    const pre = prerelease.map((p): PreRelease => {
      if (p.length === 0) throw new Error('Prerelease is empty');
      if (DIGITS.test(p)) {
        if (hasLeadingZeroes(p)) throw new Error(`Numeric PreRelease version must not contain leading zeroes ${goQuote(p)}`);
        return { num: parseUint(p) };
      }
      if (ALPHANUM.test(p)) return { str: p };
      throw new Error(`Invalid character(s) found in prerelease ${goQuote(p)}`);
    });
    for (const b of build) {
      if (b.length === 0) throw new Error('Build meta data is empty');
      if (!ALPHANUM.test(b)) throw new Error(`Invalid character(s) found in build meta data ${goQuote(b)}`);
    }
    return new CelSemver(major, minor, patch, pre, build);
  }

  /** kube's normalizeAndParse: drops a leading "v", leading zeros, and fills in a missing minor or patch. */
  static parseNormalized(s: string): CelSemver {
    const parts = splitN(s.startsWith('v') ? s.slice(1) : s, '.', 3).map((p) => {
      if (p.length <= 1) return p;
      const t = p.replace(/^0+/, '');
      return t.length === 0 || !(t[0] >= '0' && t[0] <= '9') ? `0${t}` : t;
    });
    if (parts.length < 3) {
      if (/[+-]/.test(parts[parts.length - 1])) throw new Error('short version cannot contain PreRelease/Build meta data');
      while (parts.length < 3) parts.push('0');
    }
    return CelSemver.parse(parts.join('.'));
  }

  /** Version.Compare (build metadata has no precedence). */
  compare(o: CelSemver): bigint {
    for (const [a, b] of [
      [this.major, o.major],
      [this.minor, o.minor],
      [this.patch, o.patch],
    ])
      if (a !== b) return a > b ? 1n : -1n;
    if (this.pre.length === 0 || o.pre.length === 0) return this.pre.length === o.pre.length ? 0n : this.pre.length === 0 ? 1n : -1n;
    for (let i = 0; i < this.pre.length && i < o.pre.length; i++) {
      const c = comparePre(this.pre[i], o.pre[i]);
      if (c !== 0n) return c;
    }
    return this.pre.length === o.pre.length ? 0n : this.pre.length < o.pre.length ? -1n : 1n;
  }
}

function comparePre(a: PreRelease, b: PreRelease): bigint {
  if ('num' in a && 'num' in b) return a.num === b.num ? 0n : a.num > b.num ? 1n : -1n;
  if ('num' in a) return -1n;
  if ('num' in b) return 1n;
  return a.str === b.str ? 0n : a.str > b.str ? 1n : -1n;
}

function registerSemver(env: Environment): void {
  const T = 'kubernetes.Semver';
  // kube returns the uint64 parts as int64 (wrapping above 2^63-1).
  const int64 = (v: bigint): bigint => BigInt.asIntN(64, v);
  const parse = (s: string, normalize: boolean): CelSemver => (normalize ? CelSemver.parseNormalized(s) : CelSemver.parse(s));
  const isSemver = (s: string, normalize: boolean): boolean => {
    try {
      parse(s, normalize);
      return true;
    } catch {
      return false;
    }
  };
  env.registerType(T, { ctor: CelSemver, fields: {} });
  env.registerFunction(`semver(string): ${T}`, (s: string) => parse(s, false));
  env.registerFunction(`semver(string, bool): ${T}`, (s: string, n: boolean) => parse(s, n));
  env.registerFunction('isSemver(string): bool', (s: string) => isSemver(s, false));
  env.registerFunction('isSemver(string, bool): bool', (s: string, n: boolean) => isSemver(s, n));
  env.registerFunction(`${T}.major(): int`, (v: CelSemver) => int64(v.major));
  env.registerFunction(`${T}.minor(): int`, (v: CelSemver) => int64(v.minor));
  env.registerFunction(`${T}.patch(): int`, (v: CelSemver) => int64(v.patch));
  env.registerFunction(`${T}.isGreaterThan(${T}): bool`, (a: CelSemver, b: CelSemver) => a.compare(b) === 1n);
  env.registerFunction(`${T}.isLessThan(${T}): bool`, (a: CelSemver, b: CelSemver) => a.compare(b) === -1n);
  env.registerFunction(`${T}.compareTo(${T}): int`, (a: CelSemver, b: CelSemver) => a.compare(b));
  env.registerOperator(`${T} == ${T}`, (a: CelSemver, b: CelSemver) => a.compare(b) === 0n);
}

/** Registers kube's quantity, URL and semver CEL libraries in `env`. */
export function registerCelQuantity(env: Environment): void {
  registerQuantity(env);
  registerUrls(env);
  registerSemver(env);
}
