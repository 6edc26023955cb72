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

function parseIPv4(s: string): bigint | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return undefined;
  let v = 0n;
  for (let i = 1; i <= 4; i++) {
    const octet = Number(m[i]);
    if (octet > 255 || (m[i].length > 1 && m[i].startsWith('0'))) return undefined;
    v = (v << 8n) | BigInt(octet);
  }
  return v;
}

function parseIPv6(s: string): bigint | undefined {
  if (!/^[0-9a-fA-F:.]+$/.test(s) || s.includes(':::')) return undefined;
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const groups = (part: string): number[] | undefined => {
    if (part === '') return [];
    const out: number[] = [];
    const items = part.split(':');
    for (let i = 0; i < items.length; i++) {
      const it = items[i];
      if (i === items.length - 1 && it.includes('.')) {
        const v4 = parseIPv4(it);
        if (v4 === undefined) return undefined;
        out.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(it)) return undefined;
        out.push(parseInt(it, 16));
      }
    }
    return out;
  };
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  if (!head || !tail) return undefined;
  const fill = 8 - head.length - tail.length;
  if (halves.length === 2 ? fill < 1 : fill !== 0) return undefined;
  let v = 0n;
  for (const g of [...head, ...new Array<number>(halves.length === 2 ? fill : 0).fill(0), ...tail]) v = (v << 16n) | BigInt(g);
  return v;
}

/** Parses an IP address (IPv4 dotted quad or IPv6) into its family and value. */
export function parseIp(s: string): { family: 'IPv4' | 'IPv6'; value: bigint } | undefined {
  const v4 = parseIPv4(s);
  if (v4 !== undefined) return { family: 'IPv4', value: v4 };
  const v6 = parseIPv6(s);
  return v6 !== undefined ? { family: 'IPv6', value: v6 } : undefined;
}

/** The canonical text of an IP (RFC 5952 for IPv6: lower case, the longest run of zero groups as ::). */
export function formatIp(family: 'IPv4' | 'IPv6', value: bigint): string {
  if (family === 'IPv4') return [24n, 16n, 8n, 0n].map((s) => String((value >> s) & 0xffn)).join('.');
  const g: number[] = [];
  for (let i = 7; i >= 0; i--) g.push(Number((value >> BigInt(i * 16)) & 0xffffn));
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (a: number[]): string => a.map((x) => x.toString(16)).join(':');
  if (best < 0) return hex(g);
  return `${hex(g.slice(0, best))}::${hex(g.slice(best + bestLen))}`;
}

/**
 * Parses a service CIDR. The network's first address is never allocated, nor an IPv4 network's
 * broadcast address; the first address after the network's is the `kubernetes` Service's.
 */
export function parseIpRange(cidr: string): IpRange {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(cidr.trim());
  const ip = m ? parseIp(m[1]) : undefined;
  if (!m || !ip) throw new Error(`${JSON.stringify(cidr)} is not a CIDR such as 10.0.0.0/24`);
  const bits = ip.family === 'IPv4' ? 32 : 128;
  const prefix = Number(m[2]);
  if (prefix > bits) throw new Error(`${JSON.stringify(cidr)} is not a CIDR such as 10.0.0.0/24`);
  const hostBits = bits - prefix;
  if (hostBits > 20) {
    throw new Error(`${cidr} is too large; for ${bits}-bit addresses, the mask must be >= ${bits - 20}`);
  }
  const network = (ip.value >> BigInt(hostBits)) << BigInt(hostBits);
  const total = 2 ** hostBits;
  // IPv4 leaves out the network and broadcast addresses, IPv6 the network's (subnet-router anycast).
  const size = ip.family === 'IPv4' ? total - 2 : total - 1;
  if (size < 1) throw new Error(`${cidr} is too small: it holds no address to allocate`);
  const first = network + 1n;
  const text = `${formatIp(ip.family, network)}/${prefix}`;
  return {
    text,
    family: ip.family,
    size,
    staticBand: bandOf(size, 16, 256),
    offsetOf(value: string) {
      const p = parseIp(value);
      if (!p || p.family !== ip.family) return undefined;
      const off = p.value - first;
      return off >= 0n && off < BigInt(size) ? Number(off) : undefined;
    },
    valueAt: (offset: number) => formatIp(ip.family, first + BigInt(offset)),
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
