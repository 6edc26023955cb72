/**
 * kube's CEL libraries for network addresses and named string formats
 * (k8s.io/apiserver/pkg/cel/library ip.go, cidr.go, format.go), with kube's names, semantics and
 * error texts:
 *
 *   ip('10.0.0.1').family() == 4          isIP('::1')        ip.isCanonical('2001:db8::1')
 *   cidr('10.0.0.0/8').containsIP('10.1.2.3')                 cidr('10.0.0.1/8').masked()
 *   format.dns1123Label().validate(self.name)                 format.named('uuid').hasValue()
 *
 * Addresses are parsed as Go's net/netip parses them (kube's parser): no leading zeros in IPv4
 * octets, at most four hex digits per IPv6 group, kube then rejecting zones and IPv4-mapped IPv6
 * addresses; a CIDR may have host bits set (`masked()` clears them). The `uri` format is checked as
 * Go's url.ParseRequestURI checks it (error text included), the other CRD formats as
 * kube-openapi's strfmt checks them.
 *
 * The library has no namespaced functions: `ip.isCanonical(...)` and `format.named(...)` are
 * methods of the constants `ip` and `format` (types IPNamespace and FormatNamespace), and `net`
 * is a constant whose fields `IP` and `CIDR` are the types, so `type(x) == net.IP` works.
 */
import { Buffer } from 'node:buffer';
import { Optional, type Environment } from '@marcbachmann/cel-js';
import { isDNS1035Label, isDNS1123Label, isDNS1123Subdomain, isQualifiedName, isValidLabelValue } from '@app/apimachinery';

// ---------------------------------------------------------------------------------------------
// Go's strconv.Quote (the `%q` of kube's messages), over a string of UTF-8 bytes (one char a byte).

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/** The UTF-8 bytes of a string, one char per byte (a lone surrogate becomes U+FFFD, as Go decodes it). */
function utf8(s: string): string {
  return Buffer.from(s, 'utf8').toString('latin1');
}

/** Decodes one rune at `i` as Go's utf8.DecodeRuneInString: [rune, width], rune -1 for an invalid byte. */
function decodeRune(b: string, i: number): [number, number] {
  const c0 = b.charCodeAt(i);
  if (c0 < 0x80) return [c0, 1];
  const cont = (k: number, lo = 0x80, hi = 0xbf): number => {
    const c = i + k < b.length ? b.charCodeAt(i + k) : -1;
    return c >= lo && c <= hi ? c & 0x3f : -1;
  };
  if (c0 >= 0xc2 && c0 <= 0xdf) {
    const c1 = cont(1);
    return c1 < 0 ? [-1, 1] : [((c0 & 0x1f) << 6) | c1, 2];
  }
  if (c0 >= 0xe0 && c0 <= 0xef) {
    const c1 = cont(1, c0 === 0xe0 ? 0xa0 : 0x80, c0 === 0xed ? 0x9f : 0xbf);
    const c2 = c1 < 0 ? -1 : cont(2);
    return c2 < 0 ? [-1, 1] : [((c0 & 0x0f) << 12) | (c1 << 6) | c2, 3];
  }
  if (c0 >= 0xf0 && c0 <= 0xf4) {
    const c1 = cont(1, c0 === 0xf0 ? 0x90 : 0x80, c0 === 0xf4 ? 0x8f : 0xbf);
    const c2 = c1 < 0 ? -1 : cont(2);
    const c3 = c2 < 0 ? -1 : cont(3);
    return c3 < 0 ? [-1, 1] : [((c0 & 0x07) << 18) | (c1 << 12) | (c2 << 6) | c3, 4];
  }
  return [-1, 1];
}

const hex = (n: number, width: number): string => n.toString(16).padStart(width, '0');

const SIMPLE_ESCAPES: Record<number, string> = { 7: '\\a', 8: '\\b', 12: '\\f', 10: '\\n', 13: '\\r', 9: '\\t', 11: '\\v' };

/** strconv.Quote of a UTF-8 byte string. */
function goQuoteBytes(b: string): string {
  let out = '"';
  for (let i = 0; i < b.length;) {
    const [r, w] = decodeRune(b, i);
    if (r < 0) out += `\\x${hex(b.charCodeAt(i), 2)}`;
    else if (r === 0x22 || r === 0x5c) out += `\\${String.fromCharCode(r)}`;
    else if (PRINTABLE.test(String.fromCodePoint(r))) out += String.fromCodePoint(r);
    else if (SIMPLE_ESCAPES[r] !== undefined) out += SIMPLE_ESCAPES[r];
    else if (r < 0x20 || r === 0x7f) out += `\\x${hex(r, 2)}`;
    else if (r < 0x10000) out += `\\u${hex(r, 4)}`;
    else out += `\\U${hex(r, 8)}`;
    i += w;
  }
  return `${out}"`;
}

/** An error whose message is kube's text (what cel-go reports for the evaluation). */
class GoError extends Error {}

// ---------------------------------------------------------------------------------------------
// net/netip: ParseAddr, ParsePrefix and Addr's predicates and formatting.

/** An address as netip.Addr: the family, its bits (32 or 128 of them) and an IPv6 zone. */
interface Addr {
  readonly v6: boolean;
  readonly bits: bigint;
  readonly zone: string;
}

const MASK32 = (1n << 32n) - 1n;
const MASK128 = (1n << 128n) - 1n;

function addrError(input: string, msg: string, at = ''): GoError {
  const q = `ParseAddr(${goQuoteBytes(input)}): ${msg}`;
  return new GoError(at ? `${q} (at ${goQuoteBytes(at)})` : q);
}

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;

/** The four octets of the IPv4 address in input[off:end]; errors name the whole input. */
function parseIPv4Fields(input: string, off: number, end: number): number[] {
  const s = input.slice(off, end);
  const fields: number[] = [];
  let val = 0;
  let digits = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (isDigit(c)) {
      if (digits === 1 && val === 0) throw addrError(input, 'IPv4 field has octet with leading zero');
      val = val * 10 + (c - 0x30);
      digits++;
      if (val > 255) throw addrError(input, 'IPv4 field has value >255');
    } else if (c === 0x2e) {
      if (i === 0 || i === s.length - 1 || s.charCodeAt(i - 1) === 0x2e) {
        throw addrError(input, 'IPv4 field must have at least one digit', s.slice(i));
      }
      if (fields.length === 3) throw addrError(input, 'IPv4 address too long');
      fields.push(val);
      val = 0;
      digits = 0;
    } else {
      throw addrError(input, 'unexpected character', s.slice(i));
    }
  }
  if (fields.length < 3) throw addrError(input, 'IPv4 address too short');
  fields.push(val);
  return fields;
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  return -1;
}

function parseIPv6(input: string): Addr {
  let s = input;
  let zone = '';
  const pct = s.indexOf('%');
  if (pct !== -1) {
    zone = s.slice(pct + 1);
    s = s.slice(0, pct);
    if (zone === '') throw addrError(input, 'zone must be a non-empty string');
  }
  const bytes = new Array<number>(16).fill(0);
  let ellipsis = -1;
  if (s.length >= 2 && s.startsWith('::')) {
    ellipsis = 0;
    s = s.slice(2);
    if (s.length === 0) return { v6: true, bits: 0n, zone };
  }
  let i = 0;
  while (i < 16) {
    let off = 0;
    let acc = 0;
    for (; off < s.length; off++) {
      const h = hexValue(s.charCodeAt(off));
      if (h < 0) break;
      acc = acc * 16 + h;
      if (off > 3) throw addrError(input, 'each group must have 4 or less digits', s);
      if (acc > 0xffff) throw addrError(input, 'IPv6 field has value >=2^16', s);
    }
    if (off === 0) throw addrError(input, 'each colon-separated field must have at least one digit', s);
    if (off < s.length && s.charCodeAt(off) === 0x2e) {
      if (ellipsis < 0 && i !== 12) {
        throw addrError(input, 'embedded IPv4 address must replace the final 2 fields of the address', s);
      }
      if (i + 4 > 16) throw addrError(input, 'too many hex fields to fit an embedded IPv4 at the end of the address', s);
      const end = input.length - (zone.length > 0 ? zone.length + 1 : 0);
      const v4 = parseIPv4Fields(input, end - s.length, end);
      for (let k = 0; k < 4; k++) bytes[i + k] = v4[k]!;
      s = '';
      i += 4;
      break;
    }
    bytes[i] = acc >> 8;
    bytes[i + 1] = acc & 0xff;
    i += 2;
    s = s.slice(off);
    if (s.length === 0) break;
    if (s.charCodeAt(0) !== 0x3a) throw addrError(input, 'unexpected character, want colon', s);
    if (s.length === 1) throw addrError(input, 'colon must be followed by more characters', s);
    s = s.slice(1);
    if (s.charCodeAt(0) === 0x3a) {
      if (ellipsis >= 0) throw addrError(input, 'multiple :: in address', s);
      ellipsis = i;
      s = s.slice(1);
      if (s.length === 0) break;
    }
  }
  if (s.length !== 0) throw addrError(input, 'trailing garbage after address', s);
  if (i < 16) {
    if (ellipsis < 0) throw addrError(input, 'address string too short');
    const n = 16 - i;
    for (let j = i - 1; j >= ellipsis; j--) bytes[j + n] = bytes[j]!;
    for (let j = ellipsis; j < ellipsis + n; j++) bytes[j] = 0;
  } else if (ellipsis >= 0) {
    throw addrError(input, 'the :: must expand to at least one field of zeros');
  }
  let bits = 0n;
  for (const b of bytes) bits = (bits << 8n) | BigInt(b);
  return { v6: true, bits, zone };
}

/** netip.ParseAddr of a UTF-8 byte string; throws its error. */
function parseAddr(s: string): Addr {
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '.') {
      const f = parseIPv4Fields(s, 0, s.length);
      return { v6: false, bits: BigInt(((f[0]! << 24) | (f[1]! << 16) | (f[2]! << 8) | f[3]!) >>> 0), zone: '' };
    }
    if (c === ':') return parseIPv6(s);
    if (c === '%') throw addrError(s, 'missing IPv6 address');
  }
  throw addrError(s, 'unable to parse IP');
}

/** netip.Addr.Is4In6: an IPv6 address in ::ffff:0:0/96. */
const is4In6 = (a: Addr): boolean => a.v6 && a.bits >> 32n === 0xffffn;

const width = (a: Addr): number => (a.v6 ? 128 : 32);

function string4(bits: bigint): string {
  const n = Number(bits & MASK32);
  return [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff].join('.');
}

/** netip.Addr.String: dotted quad, RFC 5952 IPv6 (longest run of two or more zero groups as ::). */
function addrString(a: Addr): string {
  if (!a.v6) return string4(a.bits);
  const zone = a.zone ? `%${a.zone}` : '';
  if (is4In6(a)) return `::ffff:${string4(a.bits)}${zone}`;
  const groups: number[] = [];
  for (let k = 7; k >= 0; k--) groups.push(Number((a.bits >> BigInt(k * 16)) & 0xffffn));
  let zeroStart = -1;
  let zeroLen = 0;
  for (let i = 0; i < 8; i++) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i >= 2 && j - i > zeroLen) [zeroStart, zeroLen] = [i, j - i];
  }
  let out = '';
  for (let i = 0; i < 8; i++) {
    if (i === zeroStart) {
      out += '::';
      i += zeroLen;
      if (i >= 8) break;
    } else if (i > 0) {
      out += ':';
    }
    out += groups[i]!.toString(16);
  }
  return out + zone;
}

/** The top `prefix` bits of an address of `w` bits. */
function maskBits(bits: bigint, w: number, prefix: number): bigint {
  const all = w === 128 ? MASK128 : MASK32;
  return bits & (all ^ ((1n << BigInt(w - prefix)) - 1n));
}

interface Prefix {
  readonly addr: Addr;
  readonly length: number;
}

/** netip.ParsePrefix of a UTF-8 byte string; throws its error. */
function parsePrefix(s: string): Prefix {
  const fail = (msg: string): GoError => new GoError(`netip.ParsePrefix(${goQuoteBytes(s)}): ${msg}`);
  const slash = s.lastIndexOf('/');
  if (slash < 0) throw fail("no '/'");
  let addr: Addr;
  try {
    addr = parseAddr(s.slice(0, slash));
  } catch (e) {
    throw fail((e as Error).message);
  }
  if (addr.v6 && addr.zone !== '') throw fail('IPv6 zones cannot be present in a prefix');
  const bitsStr = s.slice(slash + 1);
  // strconv.Atoi on digits only (no sign, no leading zero), as ParsePrefix allows.
  if (!/^(0|[1-9][0-9]*)$/.test(bitsStr) || BigInt(bitsStr) > 0x7fffffffffffffffn) {
    throw fail(`bad bits after slash: ${goQuoteBytes(bitsStr)}`);
  }
  const length = Number(bitsStr);
  if (length > width(addr)) throw fail('prefix length out of range');
  return { addr, length };
}

// ---------------------------------------------------------------------------------------------
// The CEL values.

/** `net.IP`. */
class CelIP {
  constructor(readonly addr: Addr) {}
  toString(): string {
    return addrString(this.addr);
  }
}

/** `net.CIDR`: an address (host bits possibly set) and a prefix length. */
class CelCIDR {
  constructor(
    readonly addr: Addr,
    readonly length: number,
  ) {}
  toString(): string {
    return `${addrString(this.addr)}/${this.length}`;
  }
  masked(): CelCIDR {
    return new CelCIDR({ ...this.addr, bits: maskBits(this.addr.bits, width(this.addr), this.length) }, this.length);
  }
}

const sameAddr = (a: Addr, b: Addr): boolean => a.v6 === b.v6 && a.bits === b.bits && a.zone === b.zone;

/** kube's parseIPAddr: netip's syntax, no zone, no IPv4-mapped IPv6 address. */
function parseIP(raw: string): CelIP {
  const bytes = utf8(raw);
  let addr: Addr;
  try {
    addr = parseAddr(bytes);
  } catch (e) {
    throw new GoError(`IP Address ${goQuoteBytes(bytes)} parse error during conversion from string: ${(e as Error).message}`);
  }
  if (addr.zone !== '') throw new GoError(`IP address ${goQuoteBytes(bytes)} with zone value is not allowed`);
  if (is4In6(addr)) throw new GoError(`IPv4-mapped IPv6 address ${goQuoteBytes(bytes)} is not allowed`);
  return new CelIP(addr);
}

const CIDR_PARSE_ERROR = 'network address parse error during conversion from string';

/** kube's stringToCIDR (whose message repeats the prefix, as kube's does): netip's syntax, no IPv4-mapped IPv6 address. */
function parseCIDR(raw: string): CelCIDR {
  const bytes = utf8(raw);
  let prefix: Prefix;
  try {
    prefix = parsePrefix(bytes);
  } catch (e) {
    throw new GoError(`${CIDR_PARSE_ERROR}: ${CIDR_PARSE_ERROR}: ${(e as Error).message}`);
  }
  if (is4In6(prefix.addr)) {
    throw new GoError(`${CIDR_PARSE_ERROR}: IPv4-mapped IPv6 address ${goQuoteBytes(bytes)} is not allowed`);
  }
  return new CelCIDR(prefix.addr, prefix.length);
}

const succeeds = (f: () => unknown): boolean => {
  try {
    f();
    return true;
  } catch (e) {
    if (e instanceof GoError) return false;
    throw e;
  }
};

/** netip.Prefix.Contains. */
function cidrContainsIP(c: CelCIDR, ip: CelIP): boolean {
  if (c.addr.v6 !== ip.addr.v6 || ip.addr.zone !== '') return false;
  const w = width(c.addr);
  return maskBits(c.addr.bits ^ ip.addr.bits, w, c.length) === 0n;
}

/** kube's containsCIDR: same family, `other` masked to this prefix equals this network, and no shorter prefix. */
function cidrContainsCIDR(c: CelCIDR, other: CelCIDR): boolean {
  if (c.addr.v6 !== other.addr.v6) return false;
  const w = width(c.addr);
  return maskBits(c.addr.bits, w, c.length) === maskBits(other.addr.bits, w, c.length) && c.length <= other.length;
}

// ---------------------------------------------------------------------------------------------
// Formats: Go's url.ParseRequestURI (its error), kube-openapi's strfmt checks, the name rules.

/** The net/url encoding modes parsing uses. */
const Mode = { Path: 1, Host: 2, Zone: 3, UserPassword: 4 } as const;
type Mode = (typeof Mode)[keyof typeof Mode];

const isAlnum = (c: number): boolean => (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || isDigit(c);

/** net/url shouldEscape for the modes parsing uses. */
function shouldEscape(c: number, mode: Mode): boolean {
  if (isAlnum(c)) return false;
  const ch = String.fromCharCode(c);
  if ((mode === Mode.Host || mode === Mode.Zone) && `!$&'()*+,;=:[]<>"`.includes(ch)) return false;
  if ('-_.~'.includes(ch)) return false;
  if ('$&+,/:;=?@'.includes(ch)) {
    if (mode === Mode.Path) return ch === '?';
    if (mode === Mode.UserPassword) return '@/?:'.includes(ch);
  }
  return true;
}

/** net/url unescape of a byte string: [value, error]. */
function unescape(s: string, mode: Mode): [string, string | undefined] {
  const escapeError = (e: string): [string, string] => ['', `invalid URL escape ${goQuoteBytes(e)}`];
  let out = '';
  for (let i = 0; i < s.length;) {
    const c = s.charCodeAt(i);
    if (c === 0x25) {
      if (i + 2 >= s.length || hexValue(s.charCodeAt(i + 1)) < 0 || hexValue(s.charCodeAt(i + 2)) < 0) {
        return escapeError(s.slice(i, i + 3));
      }
      const v = (hexValue(s.charCodeAt(i + 1)) << 4) | hexValue(s.charCodeAt(i + 2));
      const triple = s.slice(i, i + 3);
      if (mode === Mode.Host && hexValue(s.charCodeAt(i + 1)) < 8 && triple !== '%25') return escapeError(triple);
      if (mode === Mode.Zone && triple !== '%25' && v !== 0x20 && shouldEscape(v, Mode.Host)) return escapeError(triple);
      out += String.fromCharCode(v);
      i += 3;
    } else {
      if ((mode === Mode.Host || mode === Mode.Zone) && c < 0x80 && shouldEscape(c, mode)) {
        return ['', `invalid character ${goQuoteBytes(s[i]!)} in host name`];
      }
      out += s[i];
      i++;
    }
  }
  return [out, undefined];
}

const validOptionalPort = (port: string): boolean => port === '' || /^:[0-9]*$/.test(port);

/** net/url parseHost: host[:port], a bracketed IPv6 literal (zone allowed) or a name. */
function parseHost(host: string): string | undefined {
  const open = host.lastIndexOf('[');
  if (open > 0) return 'invalid IP-literal';
  if (open === 0) {
    const close = host.lastIndexOf(']');
    if (close < 0) return "missing ']' in host";
    const colonPort = host.slice(close + 1);
    if (!validOptionalPort(colonPort)) return `invalid port ${goQuoteBytes(colonPort)} after host`;
    const hostname = host.slice(1, close);
    const zone = hostname.indexOf('%25');
    let unescaped: string;
    if (zone >= 0) {
      const [h, he] = unescape(hostname.slice(0, zone), Mode.Host);
      if (he) return he;
      const [z, ze] = unescape(hostname.slice(zone), Mode.Zone);
      if (ze) return ze;
      unescaped = h + z;
    } else {
      const [h, he] = unescape(hostname, Mode.Host);
      if (he) return he;
      unescaped = h;
    }
    let addr: Addr;
    try {
      addr = parseAddr(unescaped);
    } catch (e) {
      return `invalid host: ${(e as Error).message}`;
    }
    return addr.v6 ? undefined : 'invalid IP-literal';
  }
  const colon = host.lastIndexOf(':');
  if (colon !== -1 && !validOptionalPort(host.slice(colon))) return `invalid port ${goQuoteBytes(host.slice(colon))} after host`;
  return unescape(host, Mode.Host)[1];
}

const validUserinfo = (s: string): boolean => /^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(s);

function parseAuthority(authority: string): string | undefined {
  const at = authority.lastIndexOf('@');
  const hostErr = parseHost(at < 0 ? authority : authority.slice(at + 1));
  if (hostErr !== undefined || at < 0) return hostErr;
  const userinfo = authority.slice(0, at);
  if (!validUserinfo(userinfo)) return 'net/url: invalid userinfo';
  const colon = userinfo.indexOf(':');
  if (colon < 0) return unescape(userinfo, Mode.UserPassword)[1];
  return unescape(userinfo.slice(0, colon), Mode.UserPassword)[1] ?? unescape(userinfo.slice(colon + 1), Mode.UserPassword)[1];
}

/** The error of Go's url.ParseRequestURI(raw) (an absolute URI or an absolute path), if any. */
function parseRequestURIError(raw: string): string | undefined {
  const s = utf8(raw);
  const err = ((): string | undefined => {
    if ([...s].some((c) => c < ' ' || c === '\x7f')) return 'net/url: invalid control character in URL';
    if (s === '') return 'empty url';
    if (s === '*') return undefined;
    let scheme = '';
    let rest = s;
    const m = /^[A-Za-z][A-Za-z0-9+\-.]*(?=:)|^(?=:)/.exec(s);
    if (m) {
      if (m[0] === '') return 'missing protocol scheme';
      scheme = m[0];
      rest = s.slice(scheme.length + 1);
    }
    if (rest.endsWith('?') && rest.indexOf('?') === rest.length - 1) rest = rest.slice(0, -1);
    else if (rest.includes('?')) rest = rest.slice(0, rest.indexOf('?'));
    if (!rest.startsWith('/')) return scheme !== '' ? undefined : 'invalid URI for request';
    if (scheme !== '' && rest.startsWith('//')) {
      let authority = rest.slice(2);
      rest = '';
      const slash = authority.indexOf('/');
      if (slash >= 0) [authority, rest] = [authority.slice(0, slash), authority.slice(slash)];
      const e = parseAuthority(authority);
      if (e !== undefined) return e;
    }
    return unescape(rest, Mode.Path)[1];
  })();
  return err === undefined ? undefined : `parse ${goQuoteBytes(s)}: ${err}`;
}

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/;
const TIME = /^([0-9]{2}):([0-9]{2}):([0-9]{2})([^\n][0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/u;

/** strfmt.IsDate: Go's time.Parse("2006-01-02", s). */
function isDate(s: string): boolean {
  const m = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/.exec(s);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (month < 1 || month > 12) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
  return day >= 1 && day <= days;
}

/** strfmt.IsDateTime: lowercased, split at every 't'; the first part a date, the second a time. */
function isDateTime(s: string): boolean {
  if (utf8(s).length < 4) return false;
  const parts = s.toLowerCase().split('t');
  if (parts.length < 2 || !isDate(parts[0]!)) return false;
  const m = TIME.exec(parts[1]!);
  return m !== null && m[1]! <= '23' && m[2]! <= '59' && m[3]! <= '59';
}

/**
 * pkg/api/validation maskTrailingDash as kube has it: a trailing '-' and the character before it
 * become 'a' (Go slices bytes; a lone "-" makes Go panic, which cel-go reports as an internal error).
 */
function maskTrailingDash(name: string): string {
  if (!name.endsWith('-')) return name;
  const bytes = Buffer.from(name, 'utf8');
  if (bytes.length < 2) throw new GoError(`internal error: runtime error: slice bounds out of range [:${bytes.length - 2}]`);
  return `${bytes.subarray(0, bytes.length - 2).toString('utf8')}a`;
}

/** `kubernetes.NamedFormat`: equal when the names are. */
class CelFormat {
  constructor(
    readonly name: string,
    readonly check: (s: string) => string[],
  ) {}
}

const one = (ok: boolean, message: string): string[] => (ok ? [] : [message]);

/** kube's ConstantFormats, by the name format.named() takes. */
const FORMATS: ReadonlyMap<string, CelFormat> = new Map(
  (
    [
      ['dns1123Label', 'DNS1123Label', isDNS1123Label],
      ['dns1123Subdomain', 'DNS1123Subdomain', isDNS1123Subdomain],
      ['dns1035Label', 'DNS1035Label', isDNS1035Label],
      ['qualifiedName', 'QualifiedName', isQualifiedName],
      ['dns1123LabelPrefix', 'DNS1123LabelPrefix', (s) => isDNS1123Label(maskTrailingDash(s))],
      ['dns1123SubdomainPrefix', 'DNS1123SubdomainPrefix', (s) => isDNS1123Subdomain(maskTrailingDash(s))],
      ['dns1035LabelPrefix', 'DNS1035LabelPrefix', (s) => isDNS1035Label(maskTrailingDash(s))],
      ['labelValue', 'LabelValue', isValidLabelValue],
      ['uri', 'URI', (s) => [parseRequestURIError(s)].filter((e): e is string => e !== undefined)],
      ['uuid', 'uuid', (s) => one(UUID.test(s), 'does not match the UUID format')],
      ['byte', 'byte', (s) => one(BASE64.test(s), 'invalid base64')],
      ['date', 'date', (s) => one(isDate(s), 'invalid date')],
      ['datetime', 'datetime', (s) => one(isDateTime(s), 'invalid datetime')],
    ] as [string, string, (s: string) => string[]][]
  ).map(([key, name, check]) => [key, new CelFormat(name, check)]),
);

class IPNamespace {}
class FormatNamespace {}
/** `net`: its fields are the types net.IP and net.CIDR. */
class NetNamespace {
  constructor(
    readonly IP: unknown,
    readonly CIDR: unknown,
  ) {}
}

/** Registers kube's IP, CIDR and format libraries. */
export function registerCelNetwork(env: Environment): void {
  // IP (library/ip.go)
  env.registerType('net.IP', { ctor: CelIP, fields: {} });
  env.registerType('IPNamespace', { ctor: IPNamespace, fields: {} });
  env.registerConstant('ip', 'IPNamespace', new IPNamespace());
  env.registerFunction('ip(string): net.IP', (s: string) => parseIP(s));
  env.registerFunction('isIP(string): bool', (s: string) => succeeds(() => parseIP(s)));
  env.registerFunction('IPNamespace.isCanonical(string): bool', (_: IPNamespace, s: string) => parseIP(s).toString() === s);
  env.registerFunction('net.IP.family(): int', (ip: CelIP) => (ip.addr.v6 ? 6n : 4n));
  env.registerFunction('net.IP.isUnspecified(): bool', (ip: CelIP) => ip.addr.bits === 0n);
  env.registerFunction('net.IP.isLoopback(): bool', (ip: CelIP) => isLoopback(ip.addr));
  env.registerFunction('net.IP.isLinkLocalMulticast(): bool', (ip: CelIP) => isLinkLocalMulticast(ip.addr));
  env.registerFunction('net.IP.isLinkLocalUnicast(): bool', (ip: CelIP) => isLinkLocalUnicast(ip.addr));
  env.registerFunction('net.IP.isGlobalUnicast(): bool', (ip: CelIP) => isGlobalUnicast(ip.addr));
  env.registerFunction('string(net.IP): string', (ip: CelIP) => ip.toString());
  env.registerOperator('net.IP == net.IP', (a: CelIP, b: CelIP) => sameAddr(a.addr, b.addr));

  // CIDR (library/cidr.go)
  env.registerType('net.CIDR', { ctor: CelCIDR, fields: {} });
  env.registerFunction('cidr(string): net.CIDR', (s: string) => parseCIDR(s));
  env.registerFunction('isCIDR(string): bool', (s: string) => succeeds(() => parseCIDR(s)));
  // kube answers "no such overload" for a string that is no IP (its binding checks the wrong argument).
  env.registerFunction('net.CIDR.containsIP(string): bool', (c: CelCIDR, s: string) => {
    let ip: CelIP;
    try {
      ip = parseIP(s);
    } catch {
      throw new GoError('no such overload');
    }
    return cidrContainsIP(c, ip);
  });
  env.registerFunction('net.CIDR.containsIP(net.IP): bool', (c: CelCIDR, ip: CelIP) => cidrContainsIP(c, ip));
  env.registerFunction('net.CIDR.containsCIDR(string): bool', (c: CelCIDR, s: string) => cidrContainsCIDR(c, parseCIDR(s)));
  env.registerFunction('net.CIDR.containsCIDR(net.CIDR): bool', (c: CelCIDR, o: CelCIDR) => cidrContainsCIDR(c, o));
  env.registerFunction('net.CIDR.ip(): net.IP', (c: CelCIDR) => new CelIP(c.addr));
  env.registerFunction('net.CIDR.masked(): net.CIDR', (c: CelCIDR) => c.masked());
  env.registerFunction('net.CIDR.prefixLength(): int', (c: CelCIDR) => BigInt(c.length));
  env.registerFunction('string(net.CIDR): string', (c: CelCIDR) => c.toString());
  env.registerOperator('net.CIDR == net.CIDR', (a: CelCIDR, b: CelCIDR) => sameAddr(a.addr, b.addr) && a.length === b.length);

  // `net.IP` and `net.CIDR` as type values: the library's own type objects.
  const typeOf = (expr: string): unknown => env.evaluate(expr, {}) as unknown;
  env.registerType('NetNamespace', { ctor: NetNamespace, fields: { IP: 'type', CIDR: 'type' } });
  env.registerConstant('net', 'NetNamespace', new NetNamespace(typeOf('type(ip("0.0.0.0"))'), typeOf('type(cidr("0.0.0.0/0"))')));

  // Format (library/format.go)
  env.registerType('kubernetes.NamedFormat', { ctor: CelFormat, fields: {} });
  env.registerType('FormatNamespace', { ctor: FormatNamespace, fields: {} });
  env.registerConstant('format', 'FormatNamespace', new FormatNamespace());
  env.registerFunction('FormatNamespace.named(string): optional<kubernetes.NamedFormat>', (_: FormatNamespace, name: string) => {
    const f = FORMATS.get(name);
    return f ? Optional.of(f) : Optional.none();
  });
  for (const [key, f] of FORMATS) env.registerFunction(`FormatNamespace.${key}(): kubernetes.NamedFormat`, () => f);
  env.registerFunction('kubernetes.NamedFormat.validate(string): optional<list<string>>', (f: CelFormat, s: string) => {
    const errs = f.check(s);
    return errs.length === 0 ? Optional.none() : Optional.of(errs);
  });
  env.registerOperator('kubernetes.NamedFormat == kubernetes.NamedFormat', (a: CelFormat, b: CelFormat) => a.name === b.name);
}

/** netip IsLoopback: 127.0.0.0/8, ::1. */
const isLoopback = (a: Addr): boolean => (a.v6 ? a.bits === 1n : a.bits >> 24n === 127n);

/** netip IsLinkLocalMulticast: 224.0.0.0/24, ffx2::/16. */
const isLinkLocalMulticast = (a: Addr): boolean => (a.v6 ? ((a.bits >> 112n) & 0xff0fn) === 0xff02n : a.bits >> 8n === 0xe00000n);

/** netip IsLinkLocalUnicast: 169.254.0.0/16, fe80::/10. */
const isLinkLocalUnicast = (a: Addr): boolean => (a.v6 ? ((a.bits >> 112n) & 0xffc0n) === 0xfe80n : a.bits >> 16n === 0xa9fen);

/** netip IsGlobalUnicast: not unspecified, broadcast, loopback, multicast or link-local unicast. */
function isGlobalUnicast(a: Addr): boolean {
  if (a.bits === 0n || (!a.v6 && a.bits === MASK32)) return false;
  const multicast = a.v6 ? a.bits >> 120n === 0xffn : a.bits >> 28n === 0xen;
  return !isLoopback(a) && !multicast && !isLinkLocalUnicast(a);
}
