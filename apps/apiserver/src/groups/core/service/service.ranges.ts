/**
 * The ranges Services take their cluster IPs and node ports from (kube-apiserver's
 * --service-cluster-ip-range and --service-node-port-range), and the bitmap of what is taken in
 * each. A value is an offset into its range; the bitmap holds one bit per offset.
 *
 * Dynamic allocation avoids a static band at the bottom of the range as long as the rest has
 * room, so that values users choose themselves there rarely collide with allocated ones (kube's
 * ServiceIPStaticSubrange and ServiceNodePortStaticSubrange): the band is size/16 addresses
 * (between 16 and 256) of a cluster IP range, size/32 ports (between 16 and 128) of a node port
 * range, and none when the range has fewer than 16 values.
 */

import { formatIP, parseCIDRSloppy, parseIPSloppy } from '../../networking/networking.ip.js';

/** A range of allocatable values. */
export interface ValueRange<V> {
  /** The range as configured ('10.0.0.0/24', '30000-32767'); stored beside its bitmap. */
  readonly text: string;
  /** How many values it holds. */
  readonly size: number;
  /** Offsets below this are the static band. */
  readonly staticBand: number;
  /** The offset of `value`, undefined when the range does not hold it. */
  offsetOf(value: V): number | undefined;
  valueAt(offset: number): V;
}

/** The most values a range may hold (kube's limit for its bitmaps: a /12 of IPv4). */
export const MAX_RANGE_VALUES = 1 << 20;

/** The static band's size: size/step clamped to [min, max], none below min values. */
function bandOf(size: number, step: number, max: number): number {
  const min = 16;
  if (size < min) return 0;
  return Math.min(Math.max(Math.floor(size / step), min), max);
}

/** A cluster IP range. */
export interface IpRange extends ValueRange<string> {
  readonly family: 'IPv4' | 'IPv6';
}

/** An IP address's family and value (k8s.io/utils/net's sloppy parsing); undefined when it is none. */
export function parseIp(s: string): { family: 'IPv4' | 'IPv6'; value: bigint } | undefined {
  const p = parseIPSloppy(s);
  return p ? { family: p.bits === 32 ? 'IPv4' : 'IPv6', value: p.value } : undefined;
}

/**
 * Parses a service CIDR. The network's first address is never allocated, nor an IPv4 network's
 * broadcast address; the first address after the network's is the `kubernetes` Service's.
 */
export function parseIpRange(cidr: string): IpRange {
  const parsed = parseCIDRSloppy(cidr.trim());
  if (!parsed) throw new Error(`${JSON.stringify(cidr)} is not a CIDR such as 10.0.0.0/24`);
  const family = parsed.bits === 32 ? 'IPv4' : 'IPv6';
  const { bits, prefix, network } = parsed;
  const hostBits = bits - prefix;
  if (hostBits > 20) {
    throw new Error(`${cidr} is too large; for ${bits}-bit addresses, the mask must be >= ${bits - 20}`);
  }
  const total = 2 ** hostBits;
  // IPv4 leaves out the network and broadcast addresses, IPv6 the network's (subnet-router anycast).
  const size = family === 'IPv4' ? total - 2 : total - 1;
  if (size < 1) throw new Error(`${cidr} is too small: it holds no address to allocate`);
  const first = network + 1n;
  const text = `${formatIP({ bits, value: network })}/${prefix}`;
  return {
    text,
    family,
    size,
    staticBand: bandOf(size, 16, 256),
    offsetOf(value: string) {
      const p = parseIp(value);
      if (!p || p.family !== family) return undefined;
      const off = p.value - first;
      return off >= 0n && off < BigInt(size) ? Number(off) : undefined;
    },
    valueAt: (offset: number) => formatIP({ bits, value: first + BigInt(offset) }),
  };
}

/** Parses a node port range: `30000-32767`, `30000+2767` (base and how many more), or one port. */
export function parsePortRange(text: string): ValueRange<number> {
  const m = /^\s*(\d+)\s*(?:([-+])\s*(\d+))?\s*$/.exec(text);
  if (!m) throw new Error(`${JSON.stringify(text)} is not a port range such as 30000-32767`);
  const base = Number(m[1]);
  const max = m[2] === undefined ? base : m[2] === '-' ? Number(m[3]) : base + Number(m[3]);
  if (base < 1 || max > 65535 || max < base) throw new Error(`${JSON.stringify(text)} is not a port range within 1-65535 such as 30000-32767`);
  const size = max - base + 1;
  return {
    text: `${base}-${max}`,
    size,
    staticBand: bandOf(size, 32, 128),
    offsetOf: (port: number) => (Number.isInteger(port) && port >= base && port <= max ? port - base : undefined),
    valueAt: (offset: number) => base + offset,
  };
}

/** The set of taken offsets of one range. */
export class Bitmap {
  readonly bytes: Uint8Array;

  constructor(
    readonly size: number,
    bytes?: Uint8Array,
  ) {
    this.bytes = new Uint8Array(Math.ceil(size / 8));
    if (bytes) this.bytes.set(bytes.subarray(0, this.bytes.length));
    // Bits past the range (a stored bitmap of another size) are not kept.
    const spare = this.bytes.length * 8 - size;
    if (spare > 0) this.bytes[this.bytes.length - 1] &= 0xff >> spare;
  }

  has(offset: number): boolean {
    return (this.bytes[offset >> 3] & (1 << (offset & 7))) !== 0;
  }

  set(offset: number): void {
    this.bytes[offset >> 3] |= 1 << (offset & 7);
  }

  clear(offset: number): void {
    this.bytes[offset >> 3] &= ~(1 << (offset & 7));
  }

  /** How many offsets are taken. */
  count(): number {
    let n = 0;
    for (const b of this.bytes) {
      let x = b;
      while (x) {
        x &= x - 1;
        n++;
      }
    }
    return n;
  }

  /** Every taken offset, ascending. */
  *taken(): Iterable<number> {
    for (let i = 0; i < this.bytes.length; i++) {
      if (this.bytes[i] === 0) continue;
      for (let b = 0; b < 8; b++) if (this.bytes[i] & (1 << b)) yield i * 8 + b;
    }
  }

  /**
   * A free offset: above the static band first, scanning from a random start and wrapping, then
   * in the band the same way; undefined when the range is full.
   */
  firstFree(staticBand: number, random: () => number = Math.random): number | undefined {
    const scan = (lo: number, hi: number): number | undefined => {
      const n = hi - lo;
      if (n <= 0) return undefined;
      const start = Math.floor(random() * n);
      for (let i = 0; i < n; i++) {
        const off = lo + ((start + i) % n);
        if (!this.has(off)) return off;
      }
      return undefined;
    };
    return scan(staticBand, this.size) ?? scan(0, Math.min(staticBand, this.size));
  }
}
