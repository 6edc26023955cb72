/**
 * HPACK (RFC 7541): header compression for HTTP/2.
 *
 * HpackDecoder decodes the header blocks a peer sends on one connection: the static table, a
 * dynamic table kept as a ring buffer, and the Huffman code, decoded a byte at a time through a
 * state table built once at module load. encodeHeaders is a stateless encoder: static-table
 * indexes and plain literals, never the dynamic table, never Huffman.
 *
 * Names and values are strings with one character per octet (latin1), so a string's length is
 * its size in octets, as the dynamic table and header list sizes count it.
 */
import { Buffer } from 'node:buffer';

/** A malformed header block: a connection error of type COMPRESSION_ERROR (RFC 7540 4.3), the connection must end. */
export class HpackError extends Error {
  override readonly name = 'HpackError';
}

/** RFC 7541 Appendix A: the static table, index 1 to 61. */
const STATIC_TABLE: ReadonlyArray<readonly [string, string]> = [
  [':authority', ''],
  [':method', 'GET'],
  [':method', 'POST'],
  [':path', '/'],
  [':path', '/index.html'],
  [':scheme', 'http'],
  [':scheme', 'https'],
  [':status', '200'],
  [':status', '204'],
  [':status', '206'],
  [':status', '304'],
  [':status', '400'],
  [':status', '404'],
  [':status', '500'],
  ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'],
  ['accept-language', ''],
  ['accept-ranges', ''],
  ['accept', ''],
  ['access-control-allow-origin', ''],
  ['age', ''],
  ['allow', ''],
  ['authorization', ''],
  ['cache-control', ''],
  ['content-disposition', ''],
  ['content-encoding', ''],
  ['content-language', ''],
  ['content-length', ''],
  ['content-location', ''],
  ['content-range', ''],
  ['content-type', ''],
  ['cookie', ''],
  ['date', ''],
  ['etag', ''],
  ['expect', ''],
  ['expires', ''],
  ['from', ''],
  ['host', ''],
  ['if-match', ''],
  ['if-modified-since', ''],
  ['if-none-match', ''],
  ['if-range', ''],
  ['if-unmodified-since', ''],
  ['last-modified', ''],
  ['link', ''],
  ['location', ''],
  ['max-forwards', ''],
  ['proxy-authenticate', ''],
  ['proxy-authorization', ''],
  ['range', ''],
  ['referer', ''],
  ['refresh', ''],
  ['retry-after', ''],
  ['server', ''],
  ['set-cookie', ''],
  ['strict-transport-security', ''],
  ['transfer-encoding', ''],
  ['user-agent', ''],
  ['vary', ''],
  ['via', ''],
  ['www-authenticate', ''],
];
const STATIC_COUNT = STATIC_TABLE.length;
const STATIC_NAMES = STATIC_TABLE.map((e) => e[0]);
const STATIC_VALUES = STATIC_TABLE.map((e) => e[1]);

/** RFC 7541 Appendix B: the Huffman code of each symbol, 0 to 255 then EOS (256), right-aligned. */
// prettier-ignore
const HUFFMAN_CODES = [
  0x1ff8, 0x7fffd8, 0xfffffe2, 0xfffffe3, 0xfffffe4, 0xfffffe5, 0xfffffe6, 0xfffffe7,
  0xfffffe8, 0xffffea, 0x3ffffffc, 0xfffffe9, 0xfffffea, 0x3ffffffd, 0xfffffeb, 0xfffffec,
  0xfffffed, 0xfffffee, 0xfffffef, 0xffffff0, 0xffffff1, 0xffffff2, 0x3ffffffe, 0xffffff3,
  0xffffff4, 0xffffff5, 0xffffff6, 0xffffff7, 0xffffff8, 0xffffff9, 0xffffffa, 0xffffffb,
  0x14, 0x3f8, 0x3f9, 0xffa, 0x1ff9, 0x15, 0xf8, 0x7fa,
  0x3fa, 0x3fb, 0xf9, 0x7fb, 0xfa, 0x16, 0x17, 0x18,
  0x0, 0x1, 0x2, 0x19, 0x1a, 0x1b, 0x1c, 0x1d,
  0x1e, 0x1f, 0x5c, 0xfb, 0x7ffc, 0x20, 0xffb, 0x3fc,
  0x1ffa, 0x21, 0x5d, 0x5e, 0x5f, 0x60, 0x61, 0x62,
  0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a,
  0x6b, 0x6c, 0x6d, 0x6e, 0x6f, 0x70, 0x71, 0x72,
  0xfc, 0x73, 0xfd, 0x1ffb, 0x7fff0, 0x1ffc, 0x3ffc, 0x22,
  0x7ffd, 0x3, 0x23, 0x4, 0x24, 0x5, 0x25, 0x26,
  0x27, 0x6, 0x74, 0x75, 0x28, 0x29, 0x2a, 0x7,
  0x2b, 0x76, 0x2c, 0x8, 0x9, 0x2d, 0x77, 0x78,
  0x79, 0x7a, 0x7b, 0x7ffe, 0x7fc, 0x3ffd, 0x1ffd, 0xffffffc,
  0xfffe6, 0x3fffd2, 0xfffe7, 0xfffe8, 0x3fffd3, 0x3fffd4, 0x3fffd5, 0x7fffd9,
  0x3fffd6, 0x7fffda, 0x7fffdb, 0x7fffdc, 0x7fffdd, 0x7fffde, 0xffffeb, 0x7fffdf,
  0xffffec, 0xffffed, 0x3fffd7, 0x7fffe0, 0xffffee, 0x7fffe1, 0x7fffe2, 0x7fffe3,
  0x7fffe4, 0x1fffdc, 0x3fffd8, 0x7fffe5, 0x3fffd9, 0x7fffe6, 0x7fffe7, 0xffffef,
  0x3fffda, 0x1fffdd, 0xfffe9, 0x3fffdb, 0x3fffdc, 0x7fffe8, 0x7fffe9, 0x1fffde,
  0x7fffea, 0x3fffdd, 0x3fffde, 0xfffff0, 0x1fffdf, 0x3fffdf, 0x7fffeb, 0x7fffec,
  0x1fffe0, 0x1fffe1, 0x3fffe0, 0x1fffe2, 0x7fffed, 0x3fffe1, 0x7fffee, 0x7fffef,
  0xfffea, 0x3fffe2, 0x3fffe3, 0x3fffe4, 0x7ffff0, 0x3fffe5, 0x3fffe6, 0x7ffff1,
  0x3ffffe0, 0x3ffffe1, 0xfffeb, 0x7fff1, 0x3fffe7, 0x7ffff2, 0x3fffe8, 0x1ffffec,
  0x3ffffe2, 0x3ffffe3, 0x3ffffe4, 0x7ffffde, 0x7ffffdf, 0x3ffffe5, 0xfffff1, 0x1ffffed,
  0x7fff2, 0x1fffe3, 0x3ffffe6, 0x7ffffe0, 0x7ffffe1, 0x3ffffe7, 0x7ffffe2, 0xfffff2,
  0x1fffe4, 0x1fffe5, 0x3ffffe8, 0x3ffffe9, 0xffffffd, 0x7ffffe3, 0x7ffffe4, 0x7ffffe5,
  0xfffec, 0xfffff3, 0xfffed, 0x1fffe6, 0x3fffe9, 0x1fffe7, 0x1fffe8, 0x7ffff3,
  0x3fffea, 0x3fffeb, 0x1ffffee, 0x1ffffef, 0xfffff4, 0xfffff5, 0x3ffffea, 0x7ffff4,
  0x3ffffeb, 0x7ffffe6, 0x3ffffec, 0x3ffffed, 0x7ffffe7, 0x7ffffe8, 0x7ffffe9, 0x7ffffea,
  0x7ffffeb, 0xffffffe, 0x7ffffec, 0x7ffffed, 0x7ffffee, 0x7ffffef, 0x7fffff0, 0x3ffffee,
  0x3fffffff,
];

/** RFC 7541 Appendix B: the length in bits of each code in HUFFMAN_CODES. */
// prettier-ignore
const HUFFMAN_LENGTHS = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28,
  28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,
  6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6,
  5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,
  13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
  7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,
  15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5,
  6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,
  20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23,
  24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,
  22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23,
  21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
  26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,
  19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,
  20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23,
  26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
  30,
];

const EOS = 256;

// The Huffman decoder is a finite state machine over the code tree: a state is an internal node
// (the bits read since the last symbol), 256 of them for 257 leaves, the root being state 0.
// HUFFMAN_STEP[state << 8 | byte] holds the state after the byte's 8 bits and the symbols they
// complete: at most 2, since a code has 5 bits or more. Layout of an entry:
const STEP_STATE = 0xff; // bits 0-7: the next state
const STEP_SYM1_SHIFT = 8; // bits 8-15: the first symbol completed
const STEP_SYM2_SHIFT = 16; // bits 16-23: the second one
const STEP_ONE = 1 << 24; // at least one symbol completed
const STEP_TWO = 1 << 25; // two symbols completed
const STEP_EOS = 1 << 26; // the bits contain EOS: an error (RFC 7541 5.2)

/** The Huffman state machine, and which states may end a string (padding of at most 7 bits, all ones). */
const { step: HUFFMAN_STEP, accepting: HUFFMAN_ACCEPTING } = buildHuffmanMachine();

function buildHuffmanMachine(): { step: Uint32Array; accepting: Uint8Array } {
  // children[node * 2 + bit]: 0 while unset (the root is no one's child), LEAF | symbol for a
  // leaf, else the internal node's number.
  const LEAF = 0x1000;
  const children = new Uint16Array(256 * 2);
  const depth = new Uint8Array(256);
  const allOnes = new Uint8Array(256);
  allOnes[0] = 1;
  let nodes = 1;
  for (let sym = 0; sym <= EOS; sym++) {
    const code = HUFFMAN_CODES[sym];
    const len = HUFFMAN_LENGTHS[sym];
    let node = 0;
    for (let i = len - 1; i >= 0; i--) {
      const slot = node * 2 + ((code >>> i) & 1);
      if (children[slot] & LEAF) throw new Error(`HPACK Huffman table: code of ${sym} extends another code`);
      if (i === 0) {
        if (children[slot] !== 0) throw new Error(`HPACK Huffman table: code of ${sym} is a prefix of another code`);
        children[slot] = LEAF | sym;
      } else {
        if (children[slot] === 0) {
          if (nodes === 256) throw new Error('HPACK Huffman table: more than 256 internal nodes');
          depth[nodes] = depth[node] + 1;
          allOnes[nodes] = allOnes[node] & (code >>> i) & 1;
          children[slot] = nodes++;
        }
        node = children[slot];
      }
    }
  }
  if (nodes !== 256 || children.includes(0)) throw new Error('HPACK Huffman table: the code is not complete');

  const step = new Uint32Array(256 * 256);
  for (let state = 0; state < 256; state++) {
    for (let byte = 0; byte < 256; byte++) {
      let node = state;
      let entry = 0;
      for (let i = 7; i >= 0; i--) {
        const child = children[node * 2 + ((byte >>> i) & 1)];
        if (!(child & LEAF)) {
          node = child;
          continue;
        }
        const sym = child & ~LEAF;
        node = 0;
        if (sym === EOS) entry |= STEP_EOS;
        else if (!(entry & STEP_ONE)) entry |= STEP_ONE | (sym << STEP_SYM1_SHIFT);
        else entry |= STEP_TWO | (sym << STEP_SYM2_SHIFT);
      }
      step[(state << 8) | byte] = entry | node;
    }
  }
  const accepting = new Uint8Array(256);
  for (let state = 0; state < 256; state++) accepting[state] = allOnes[state] && depth[state] <= 7 ? 1 : 0;
  return { step, accepting };
}

/**
 * Buffer's own latin1Slice (undocumented, but what buf.toString('latin1', start, end) calls after
 * its argument checks, for a noticeably lower cost on short strings), else toString.
 */
const latin1Slice =
  (Buffer.prototype as Buffer & { latin1Slice?: (this: Buffer, start: number, end: number) => string }).latin1Slice ??
  function (this: Buffer, start: number, end: number): string {
    return this.toString('latin1', start, end);
  };

/** Scratch space for Huffman-decoded octets, grown as needed (decoding is synchronous). */
let huffmanOut = Buffer.allocUnsafe(1024);

/** Decodes the Huffman-coded octets src[start, end) into a latin1 string. */
function huffmanDecode(src: Buffer, start: number, end: number): string {
  // Every symbol takes 5 bits or more.
  const most = Math.ceil(((end - start) * 8) / 5);
  if (huffmanOut.length < most) huffmanOut = Buffer.allocUnsafe(Math.max(most, huffmanOut.length * 2));
  const out = huffmanOut;
  let n = 0;
  let state = 0;
  for (let i = start; i < end; i++) {
    const entry = HUFFMAN_STEP[(state << 8) | src[i]];
    if (entry & STEP_ONE) {
      out[n++] = entry >>> STEP_SYM1_SHIFT;
      if (entry & STEP_TWO) out[n++] = entry >>> STEP_SYM2_SHIFT;
    }
    if (entry & STEP_EOS) throw new HpackError('HPACK: EOS symbol in a Huffman-coded string');
    state = entry & STEP_STATE;
  }
  if (!HUFFMAN_ACCEPTING[state]) throw new HpackError('HPACK: invalid Huffman padding');
  return latin1Slice.call(out, 0, n);
}

/** The largest integer accepted in a header block. */
const MAX_INT = 0x7fffffff;
/** Octets a dynamic table entry counts beyond its name and value (RFC 7541 4.1). */
const ENTRY_OVERHEAD = 32;

/**
 * The decoding side of one HTTP/2 connection: decodes the header blocks the peer sends, in
 * order, keeping the dynamic table in step with the peer's encoder.
 */
export class HpackDecoder {
  /** The limit we advertise (SETTINGS_HEADER_TABLE_SIZE): no size update may exceed it. */
  private readonly maxTableSize: number;
  /** The dynamic table's current maximum size, as last set by the peer. */
  private limit: number;
  /** The dynamic table's size: the sum of its entries' sizes. */
  private size = 0;
  // The dynamic table, a ring buffer (capacity a power of two): `head` is the oldest entry.
  private names: string[] = new Array<string>(16).fill('');
  private values: string[] = new Array<string>(16).fill('');
  private head = 0;
  private count = 0;
  /** The read position in the block being decoded. */
  private pos = 0;

  /** maxTableSize: the SETTINGS_HEADER_TABLE_SIZE we advertise (default 4096, the protocol's initial value). */
  constructor(maxTableSize = 4096) {
    if (!Number.isInteger(maxTableSize) || maxTableSize < 0 || maxTableSize > MAX_INT) throw new RangeError(`bad HPACK table size ${maxTableSize}`);
    this.maxTableSize = maxTableSize;
    this.limit = maxTableSize;
  }

  /**
   * Decodes one complete header block (HEADERS and CONTINUATION fragments joined), calling
   * emit(name, value) for each field in order, and updates the dynamic table as it goes. Throws
   * HpackError on malformed input. When the header list size (name and value lengths plus 32 per
   * field) exceeds maxListBytes, stops calling emit but still decodes the whole block, to keep
   * the table in step, and returns false; else returns true.
   */
  decode(block: Buffer, emit: (name: string, value: string) => void, maxListBytes = Infinity): boolean {
    const end = block.length;
    let listBytes = 0;
    let within = true;
    let fieldSeen = false;
    this.pos = 0;
    while (this.pos < end) {
      const first = block[this.pos];
      let name: string;
      let value: string;
      if (first & 0x80) {
        // Indexed header field (6.1).
        const index = this.readInt(block, 7);
        name = this.nameAt(index);
        value = this.valueAt(index);
      } else if (first & 0x40) {
        // Literal header field with incremental indexing (6.2.1).
        const index = this.readInt(block, 6);
        name = index === 0 ? this.readString(block) : this.nameAt(index);
        value = this.readString(block);
        this.add(name, value);
      } else if (first & 0x20) {
        // Dynamic table size update (6.3): only before the block's first field.
        if (fieldSeen) throw new HpackError('HPACK: dynamic table size update after a header field');
        const size = this.readInt(block, 5);
        if (size > this.maxTableSize) throw new HpackError(`HPACK: dynamic table size update to ${size}, above ${this.maxTableSize}`);
        this.limit = size;
        this.evictTo(size);
        continue;
      } else {
        // Literal header field without indexing (0000xxxx, 6.2.2) or never indexed (0001xxxx, 6.2.3).
        const index = this.readInt(block, 4);
        name = index === 0 ? this.readString(block) : this.nameAt(index);
        value = this.readString(block);
      }
      fieldSeen = true;
      if (within) {
        listBytes += name.length + value.length + ENTRY_OVERHEAD;
        if (listBytes > maxListBytes) within = false;
        else emit(name, value);
      }
    }
    return within;
  }

  /** Reads an integer with an N-bit prefix (5.1) at this.pos. */
  private readInt(block: Buffer, prefixBits: number): number {
    if (this.pos >= block.length) throw new HpackError('HPACK: truncated integer');
    const mask = (1 << prefixBits) - 1;
    let value = block[this.pos++] & mask;
    if (value < mask) return value;
    let scale = 1;
    for (let i = 0; i < 5; i++) {
      if (this.pos >= block.length) throw new HpackError('HPACK: truncated integer');
      const b = block[this.pos++];
      value += (b & 0x7f) * scale;
      if (value > MAX_INT) throw new HpackError('HPACK: integer above 2^31-1');
      if (!(b & 0x80)) return value;
      scale *= 128;
    }
    throw new HpackError('HPACK: integer of more than 5 continuation octets');
  }

  /** Reads a string literal (5.2) at this.pos. */
  private readString(block: Buffer): string {
    if (this.pos >= block.length) throw new HpackError('HPACK: truncated string');
    const huffman = block[this.pos] & 0x80;
    const len = this.readInt(block, 7);
    const start = this.pos;
    const end = start + len;
    if (end > block.length) throw new HpackError('HPACK: truncated string');
    this.pos = end;
    return huffman ? huffmanDecode(block, start, end) : latin1Slice.call(block, start, end);
  }

  /** The ring buffer slot of an index in the dynamic table's index space (62 and up), or throws. */
  private slot(index: number): number {
    const fromNewest = index - STATIC_COUNT - 1;
    if (index === 0 || fromNewest >= this.count) throw new HpackError(`HPACK: bad index ${index}`);
    return (this.head + this.count - 1 - fromNewest) & (this.names.length - 1);
  }

  private nameAt(index: number): string {
    return index <= STATIC_COUNT && index > 0 ? STATIC_NAMES[index - 1] : this.names[this.slot(index)];
  }

  private valueAt(index: number): string {
    return index <= STATIC_COUNT && index > 0 ? STATIC_VALUES[index - 1] : this.values[this.slot(index)];
  }

  /** Adds an entry to the dynamic table, evicting the oldest ones to make room (4.4). */
  private add(name: string, value: string): void {
    const entrySize = name.length + value.length + ENTRY_OVERHEAD;
    if (entrySize > this.limit) {
      this.evictTo(0);
      return;
    }
    this.evictTo(this.limit - entrySize);
    if (this.count === this.names.length) this.grow();
    const i = (this.head + this.count) & (this.names.length - 1);
    this.names[i] = name;
    this.values[i] = value;
    this.count++;
    this.size += entrySize;
  }

  /** Evicts the oldest entries until the table's size is at most `target`. */
  private evictTo(target: number): void {
    const mask = this.names.length - 1;
    while (this.size > target) {
      const i = this.head;
      this.size -= this.names[i].length + this.values[i].length + ENTRY_OVERHEAD;
      this.names[i] = '';
      this.values[i] = '';
      this.head = (i + 1) & mask;
      this.count--;
    }
  }

  /** Doubles the ring buffer's capacity, the oldest entry moving to slot 0. */
  private grow(): void {
    const mask = this.names.length - 1;
    const names = new Array<string>(this.names.length * 2).fill('');
    const values = new Array<string>(this.names.length * 2).fill('');
    for (let k = 0; k < this.count; k++) {
      names[k] = this.names[(this.head + k) & mask];
      values[k] = this.values[(this.head + k) & mask];
    }
    this.names = names;
    this.values = values;
    this.head = 0;
  }
}

/** Per static-table name: the index of its first entry, and the index of each of its (name, value) entries. */
const STATIC_BY_NAME = new Map<string, { index: number; values: Map<string, number> }>();
STATIC_TABLE.forEach(([name, value], i) => {
  let e = STATIC_BY_NAME.get(name);
  if (!e) STATIC_BY_NAME.set(name, (e = { index: i + 1, values: new Map() }));
  if (!e.values.has(value)) e.values.set(value, i + 1);
});

/** The octets an integer takes with an N-bit prefix. */
function intSize(value: number, prefixBits: number): number {
  const mask = (1 << prefixBits) - 1;
  if (value < mask) return 1;
  let n = 2;
  for (value -= mask; value >= 128; value = Math.floor(value / 128)) n++;
  return n;
}

/** Writes an integer with an N-bit prefix, `flags` in the first octet's other bits; returns the offset after it. */
function writeInt(out: Buffer, off: number, value: number, prefixBits: number, flags: number): number {
  const mask = (1 << prefixBits) - 1;
  if (value < mask) {
    out[off++] = flags | value;
    return off;
  }
  out[off++] = flags | mask;
  for (value -= mask; value >= 128; value = Math.floor(value / 128)) out[off++] = 0x80 | (value % 128);
  out[off++] = value;
  return off;
}

/** Writes a string literal without Huffman coding; returns the offset after it. */
function writeString(out: Buffer, off: number, s: string): number {
  off = writeInt(out, off, s.length, 7, 0);
  return off + out.write(s, off, s.length, 'latin1');
}

/**
 * Encodes a header list into one header block without state: a field whose name and value are
 * both in the static table as its index (':status' '200' is the one octet 0x88), any other as a
 * literal without indexing, naming a static-table name by index. No Huffman coding, no dynamic
 * table, so nothing to keep per connection. Names are written as given (HTTP/2 wants them in lower
 * case); names and values are written as latin1, one octet per character.
 */
export function encodeHeaders(fields: ReadonlyArray<readonly [string, string]>): Buffer {
  // First the size, noting each field's representation: > 0 a static index of name and value,
  // < 0 minus a static name's index, 0 a literal name.
  const kinds = new Int8Array(fields.length);
  let size = 0;
  for (let i = 0; i < fields.length; i++) {
    const [name, value] = fields[i];
    const known = STATIC_BY_NAME.get(name);
    const both = known?.values.get(value);
    if (both !== undefined) {
      kinds[i] = both;
      size += intSize(both, 7);
      continue;
    }
    if (known) {
      kinds[i] = -known.index;
      size += intSize(known.index, 4);
    } else {
      size += 1 + intSize(name.length, 7) + name.length;
    }
    size += intSize(value.length, 7) + value.length;
  }
  const out = Buffer.allocUnsafe(size);
  let off = 0;
  for (let i = 0; i < fields.length; i++) {
    const [name, value] = fields[i];
    const kind = kinds[i];
    if (kind > 0) {
      off = writeInt(out, off, kind, 7, 0x80);
      continue;
    }
    if (kind < 0) {
      off = writeInt(out, off, -kind, 4, 0);
    } else {
      out[off++] = 0;
      off = writeString(out, off, name);
    }
    off = writeString(out, off, value);
  }
  return out;
}
