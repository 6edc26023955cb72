/**
 * The "sloppy" IP and CIDR parsing Kubernetes keeps for its older networking fields
 * (k8s.io/utils/net ParseIPSloppy, ParseCIDRSloppy: Go 1.16's rules, so IPv4 octets may carry
 * leading zeros and a CIDR may have host bits set), and the containment test of
 * NetworkPolicy's ipBlock.except. Addresses are bigints of 32 or 128 bits. Pure.
 */
import { isIPv6 } from 'node:net';

/** A parsed address: its family's width in bits and its value. */
export interface ParsedIP {
  bits: 32 | 128;
  value: bigint;
}

/** A parsed CIDR: the network address (host bits cleared) and the prefix length. */
export interface ParsedCIDR {
  bits: 32 | 128;
  network: bigint;
  prefix: number;
}

function parseIPv4(s: string): bigint | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  let v = 0n;
  for (const p of parts) {
    if (!/^\d+$/.test(p)) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    v = (v << 8n) | BigInt(n);
  }
  return v;
}

function parseIPv6(s: string): bigint | undefined {
  let text = s;
  let tail: bigint | undefined;
  // An embedded IPv4 tail (::ffff:1.2.3.4) stands for the last two groups.
  const lastColon = text.lastIndexOf(':');
  if (text.slice(lastColon + 1).includes('.')) {
    tail = parseIPv4(text.slice(lastColon + 1));
    if (tail === undefined) return undefined;
    text = `${text.slice(0, lastColon + 1)}${(tail >> 16n).toString(16)}:${(tail & 0xffffn).toString(16)}`;
  }
  if (!isIPv6(text)) return undefined;
  const [head, rest] = text.includes('::') ? (text.split('::') as [string, string]) : [text, undefined];
  const groups = (g: string) => (g === '' ? [] : g.split(':'));
  const h = groups(head);
  const r = rest === undefined ? [] : groups(rest);
  const all = rest === undefined ? h : [...h, ...Array<string>(8 - h.length - r.length).fill('0'), ...r];
  if (all.length !== 8) return undefined;
  return all.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
}

/** ParseIPSloppy: an IPv4 (leading zeros allowed) or IPv6 address, else undefined. */
export function parseIPSloppy(s: string): ParsedIP | undefined {
  const v4 = parseIPv4(s);
  if (v4 !== undefined) return { bits: 32, value: v4 };
  if (!s.includes(':')) return undefined;
  const v6 = parseIPv6(s);
  return v6 === undefined ? undefined : { bits: 128, value: v6 };
}

/**
 * An address as Go's net.IP String() writes one of its width: a dotted quad, or IPv6 in RFC
 * 5952's form (lower case, the longest run of two or more zero groups as `::`, the first of
 * equal runs).
 */
export function formatIP(ip: ParsedIP): string {
  if (ip.bits === 32) return [24n, 16n, 8n, 0n].map((s) => String((ip.value >> s) & 255n)).join('.');
  const groups = Array.from({ length: 8 }, (_, i) => Number((ip.value >> BigInt(112 - 16 * i)) & 0xffffn));
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j;
  }
  const hex = (g: number[]) => g.map((n) => n.toString(16)).join(':');
  return best < 0 ? hex(groups) : `${hex(groups.slice(0, best))}::${hex(groups.slice(best + bestLen))}`;
}

/** ParseCIDRSloppy: `<ip>/<prefix>` (leading zeros allowed in both), else undefined. */
export function parseCIDRSloppy(s: string): ParsedCIDR | undefined {
  const slash = s.indexOf('/');
  if (slash < 0) return undefined;
  const ip = parseIPSloppy(s.slice(0, slash));
  const len = s.slice(slash + 1);
  if (!ip || !/^\d{1,3}$/.test(len.replace(/^0+(?=\d)/, ''))) return undefined;
  const prefix = Number(len);
  if (prefix > ip.bits) return undefined;
  const hostMask = (1n << BigInt(ip.bits - prefix)) - 1n;
  return { bits: ip.bits, network: ip.value & ~hostMask, prefix };
}

/** Whether `inner` is a strict subset of `outer`: same family, inside it, with a longer prefix. */
export function strictSubset(outer: ParsedCIDR, inner: ParsedCIDR): boolean {
  if (outer.bits !== inner.bits || inner.prefix <= outer.prefix) return false;
  const hostBits = BigInt(outer.bits - outer.prefix);
  return inner.network >> hostBits === outer.network >> hostBits;
}
