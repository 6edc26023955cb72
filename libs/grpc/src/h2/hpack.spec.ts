import { createHash } from 'node:crypto';
import * as http2 from 'node:http2';
import * as net from 'node:net';
import { HpackDecoder, HpackError, encodeHeaders } from './hpack.js';

type Field = [string, string];

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

/** Decodes a block into its fields. */
function decode(d: HpackDecoder, block: Buffer, maxListBytes?: number): { fields: Field[]; ok: boolean } {
  const fields: Field[] = [];
  const ok = d.decode(block, (name, value) => fields.push([name, value]), maxListBytes);
  return { fields, ok };
}

/** An integer with an N-bit prefix (RFC 7541 5.1), `flags` in the first octet. */
function int(value: number, prefixBits: number, flags = 0): number[] {
  const mask = (1 << prefixBits) - 1;
  if (value < mask) return [flags | value];
  const out = [flags | mask];
  for (value -= mask; value >= 128; value = Math.floor(value / 128)) out.push(0x80 | (value % 128));
  out.push(value);
  return out;
}

/**
 * The dynamic table, newest entry first, read with indexed fields 62, 63, ... until one is past
 * the end (an indexed field changes nothing, a bad index throws before any change).
 */
function dynamicTable(d: HpackDecoder): Field[] {
  const out: Field[] = [];
  for (let index = 62; ; index++) {
    try {
      d.decode(Buffer.from(int(index, 7, 0x80)), (name, value) => out.push([name, value]));
    } catch (e) {
      if (e instanceof HpackError) return out;
      throw e;
    }
  }
}

// RFC 7541 Appendix B code lengths, symbols 0 to 256 (EOS). The code is canonical (codes of a
// length follow in symbol order, each length's first code following the previous length's last),
// so the test derives its codes from the lengths alone, apart from the table hpack.ts carries.
// prettier-ignore
const LENGTHS = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,
  6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,
  13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,
  15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,
  20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,
  22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
  26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, 19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,
  20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
  30,
];
const CODES: number[] = [];
{
  const order = LENGTHS.map((len, sym) => [len, sym]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let code = 0;
  let prev = order[0][0];
  for (const [len, sym] of order) {
    code *= 2 ** (len - prev);
    prev = len;
    CODES[sym] = code++;
  }
}

/** Huffman-codes latin1 octets, padding with ones. */
function huffman(s: string | Buffer): Buffer {
  const octets = typeof s === 'string' ? Buffer.from(s, 'latin1') : s;
  const out: number[] = [];
  let acc = 0;
  let bits = 0;
  for (const sym of octets) {
    acc = acc * 2 ** LENGTHS[sym] + CODES[sym];
    bits += LENGTHS[sym];
    while (bits >= 8) {
      bits -= 8;
      const octet = Math.floor(acc / 2 ** bits);
      out.push(octet);
      acc -= octet * 2 ** bits;
    }
  }
  if (bits > 0) out.push(acc * 2 ** (8 - bits) + 2 ** (8 - bits) - 1);
  return Buffer.from(out);
}

/** A string literal, Huffman-coded or not. */
const str = (s: string | Buffer, h: boolean): number[] => {
  const octets = h ? huffman(s) : typeof s === 'string' ? Buffer.from(s, 'latin1') : s;
  return [...int(octets.length, 7, h ? 0x80 : 0), ...octets];
};

/** A literal field without indexing with a literal name. */
const literal = (name: string, value: string | Buffer, h: boolean): number[] => [0x00, ...str(name, h), ...str(value, h)];

/** A literal field with incremental indexing with a literal name. */
const indexing = (name: string, value: string, h = false): number[] => [0x40, ...str(name, h), ...str(value, h)];

/** A seeded pseudo-random generator (mulberry32), so failures repeat. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

describe('HpackDecoder: RFC 7541 Appendix C', () => {
  it('C.2: a literal with indexing, without indexing, never indexed, and an indexed field', () => {
    let d = new HpackDecoder();
    expect(decode(d, hex('400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572'))).toEqual({
      fields: [['custom-key', 'custom-header']],
      ok: true,
    });
    expect(dynamicTable(d)).toEqual([['custom-key', 'custom-header']]);

    d = new HpackDecoder();
    expect(decode(d, hex('040c 2f73 616d 706c 652f 7061 7468')).fields).toEqual([[':path', '/sample/path']]);
    expect(dynamicTable(d)).toEqual([]);

    d = new HpackDecoder();
    expect(decode(d, hex('1008 7061 7373 776f 7264 0673 6563 7265 74')).fields).toEqual([['password', 'secret']]);
    expect(dynamicTable(d)).toEqual([]);

    d = new HpackDecoder();
    expect(decode(d, hex('82')).fields).toEqual([[':method', 'GET']]);
    expect(dynamicTable(d)).toEqual([]);
  });

  const requests: Field[][] = [
    [
      [':method', 'GET'],
      [':scheme', 'http'],
      [':path', '/'],
      [':authority', 'www.example.com'],
    ],
    [
      [':method', 'GET'],
      [':scheme', 'http'],
      [':path', '/'],
      [':authority', 'www.example.com'],
      ['cache-control', 'no-cache'],
    ],
    [
      [':method', 'GET'],
      [':scheme', 'https'],
      [':path', '/index.html'],
      [':authority', 'www.example.com'],
      ['custom-key', 'custom-value'],
    ],
  ];
  const requestTables: Field[][] = [
    [[':authority', 'www.example.com']],
    [
      ['cache-control', 'no-cache'],
      [':authority', 'www.example.com'],
    ],
    [
      ['custom-key', 'custom-value'],
      ['cache-control', 'no-cache'],
      [':authority', 'www.example.com'],
    ],
  ];

  it.each([
    [
      'C.3, without Huffman',
      [
        '8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d',
        '8286 84be 5808 6e6f 2d63 6163 6865',
        '8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65',
      ],
    ],
    [
      'C.4, with Huffman',
      ['8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff', '8286 84be 5886 a8eb 1064 9cbf', '8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf'],
    ],
  ])('%s: three requests on one connection, each building on the dynamic table', (_name, blocks) => {
    const d = new HpackDecoder();
    blocks.forEach((block, i) => {
      expect(decode(d, hex(block))).toEqual({ fields: requests[i], ok: true });
      expect(dynamicTable(d)).toEqual(requestTables[i]);
    });
  });

  const date1 = 'Mon, 21 Oct 2013 20:13:21 GMT';
  const date2 = 'Mon, 21 Oct 2013 20:13:22 GMT';
  const cookie = 'foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1';
  const responses: Field[][] = [
    [
      [':status', '302'],
      ['cache-control', 'private'],
      ['date', date1],
      ['location', 'https://www.example.com'],
    ],
    [
      [':status', '307'],
      ['cache-control', 'private'],
      ['date', date1],
      ['location', 'https://www.example.com'],
    ],
    [
      [':status', '200'],
      ['cache-control', 'private'],
      ['date', date2],
      ['location', 'https://www.example.com'],
      ['content-encoding', 'gzip'],
      ['set-cookie', cookie],
    ],
  ];
  const responseTables: Field[][] = [
    [
      ['location', 'https://www.example.com'],
      ['date', date1],
      ['cache-control', 'private'],
      [':status', '302'],
    ],
    [
      [':status', '307'],
      ['location', 'https://www.example.com'],
      ['date', date1],
      ['cache-control', 'private'],
    ],
    [
      ['set-cookie', cookie],
      ['content-encoding', 'gzip'],
      ['date', date2],
    ],
  ];

  it.each([
    [
      'C.5, without Huffman',
      [
        `4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3120 474d 546e 1768
         7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d`,
        '4803 3330 37c1 c0bf',
        `88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d 54c0 5a04 677a 6970 7738 666f 6f3d 4153
         444a 4b48 514b 425a 584f 5157 454f 5049 5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e 3d31`,
      ],
    ],
    [
      'C.6, with Huffman',
      [
        `4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8
         e9ae 82ae 43d3`,
        '4883 640e ffc1 c0bf',
        `88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b
         3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07`,
      ],
    ],
  ])('%s: three responses with a 256-octet table, evicting', (_name, blocks) => {
    const d = new HpackDecoder(256);
    blocks.forEach((block, i) => {
      expect(decode(d, hex(block))).toEqual({ fields: responses[i], ok: true });
      expect(dynamicTable(d)).toEqual(responseTables[i]);
    });
  });
});

describe('HpackDecoder: Huffman', () => {
  it("the test's canonical code reproduces the RFC's codes", () => {
    expect(CODES[256]).toBe(0x3fffffff);
    expect([CODES[0], CODES[10], CODES[255]]).toEqual([0x1ff8, 0x3ffffffc, 0x3ffffee]);
    expect(huffman('www.example.com').toString('hex')).toBe('f1e3c2e5f23a6ba0ab90f4ff');
    expect(huffman('foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1').toString('hex')).toBe(
      '94e7821dd7f2e6c7b335dfdfcd5b3960d5af27087f3672c1ab270fb5291f9587316065c003ed4ee5b1063d5007',
    );
  });

  it('decodes every symbol, alone and in random strings of every length up to 300', () => {
    const d = new HpackDecoder();
    for (let sym = 0; sym < 256; sym++) {
      const s = String.fromCharCode(sym);
      expect(decode(d, Buffer.from([...literal(s, s, true), ...literal(s + s + s, s.repeat(7), true)])).fields).toEqual([
        [s, s],
        [s + s + s, s.repeat(7)],
      ]);
    }
    const rnd = random(7);
    for (let len = 0; len <= 300; len++) {
      const octets = Buffer.from(Array.from({ length: len }, () => Math.floor(rnd() * 256)));
      // Half the strings from the common symbols only (5- to 8-bit codes).
      if (len % 2) for (let i = 0; i < len; i++) octets[i] = 0x20 + (octets[i] % 0x5f);
      const s = octets.toString('latin1');
      expect(decode(d, Buffer.from([...literal('x', octets, true), ...indexing(s, s, true)])).fields).toEqual([
        ['x', s],
        [s, s],
      ]);
    }
  });

  it.each([
    ['8 bits of padding', [0xff]],
    ['11 bits of padding', [0x1f, 0xff]],
    ['3 octets of padding', [0x1f, 0xff, 0xff, 0xff]],
    ['29 bits of padding', [0xff, 0x9f, 0xff, 0xff, 0xff]],
    ['padding of zeros', [0x00]],
    ['padding neither all ones nor a symbol', [0x52, 0xbc, 0x30, 0xff, 0xff, 0xff, 0xff]],
    ['padding with a zero bit', [0x1d]],
    ['EOS', [0xff, 0xff, 0xff, 0xff, 0xfc]],
    ['EOS then a symbol', [0xff, 0xff, 0xff, 0xfc, 0x7f]],
  ])('rejects %s', (_name, coded) => {
    const block = Buffer.from([0x00, 0x01, 0x61, 0x80 | coded.length, ...coded]);
    expect(() => new HpackDecoder().decode(block, () => undefined)).toThrow(HpackError);
  });

  it('accepts padding of 1 to 7 ones and none', () => {
    // 'a' is 00011 (5 bits): 3 bits of padding; '0' '0' '0' '0' '0' '0' '0' '0' is 40 bits: none.
    expect(decode(new HpackDecoder(), Buffer.from([0x00, 0x01, 0x61, 0x81, 0x1f])).fields).toEqual([['a', 'a']]);
    expect(decode(new HpackDecoder(), Buffer.from([0x00, 0x01, 0x61, 0x85, 0, 0, 0, 0, 0])).fields).toEqual([['a', '00000000']]);
    // '%' is 010101 (6 bits) with 2 ones; '&' (0xf8, 8 bits) then '%': 14 bits, 2 ones.
    expect(decode(new HpackDecoder(), Buffer.from([0x00, 0x01, 0x61, 0x82, 0xf8, 0x57])).fields).toEqual([['a', '&%']]);
    // A 30-bit code (10, '\n') then 2 ones.
    expect(decode(new HpackDecoder(), Buffer.from([0x00, 0x01, 0x61, 0x84, 0xff, 0xff, 0xff, 0xf3])).fields).toEqual([['a', '\n']]);
  });
});

describe('HpackDecoder: integers, the table and errors', () => {
  it('reads multi-octet integers, redundant zero continuation octets included, up to 5 of them', () => {
    const d = new HpackDecoder();
    const long = 'v'.repeat(70_000);
    expect(decode(d, Buffer.from([...int(28, 4), ...str(long, false)])).fields).toEqual([['content-length', long]]);
    // Name index 15 (accept-charset) as 15 + 0 over five continuation octets.
    expect(decode(d, Buffer.from([0x0f, 0x80, 0x80, 0x80, 0x80, 0x00, 0x01, 0x78])).fields).toEqual([['accept-charset', 'x']]);
    expect(() => d.decode(Buffer.from([0x0f, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x01, 0x78]), () => undefined)).toThrow(/more than 5 continuation/);
  });

  it.each([
    ['index 0', [0x80]],
    ['an index past the empty dynamic table', [0xbe]],
    ['an index past the end, multi-octet', int(1000, 7, 0x80)],
    ['a name index past the table (with indexing)', [0x7e, 0x01, 0x61]],
    ['a name index past the table (without indexing)', [0x0f, 0x2f, 0x01, 0x61]],
    ['a truncated integer', [0xff]],
    ['a truncated integer, continuation pending', [0xff, 0x80]],
    ['an integer of 2^31', [0x00, 0x01, 0x61, ...int(2 ** 31, 7)]],
    ['an integer far above 2^31', [0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]],
    ['a string cut short', [0x00, 0x05, 0x61, 0x62]],
    ['a string length of 2^31-1', [0x00, 0x01, 0x61, ...int(2 ** 31 - 1, 7)]],
    ['a missing value', [0x00, 0x01, 0x61]],
    ['a missing name', [0x40]],
    ['a size update above the maximum', int(4097, 5, 0x20)],
    ['a size update after a field', [0x82, 0x20]],
    ['a size update between fields', [0x20, 0x82, 0x3f, 0xe1, 0x1f]],
  ])('rejects %s', (_name, block) => {
    expect(() => new HpackDecoder().decode(Buffer.from(block), () => undefined)).toThrow(HpackError);
  });

  it('honours size updates at the start of a block: to 0 empties the table, back up to the maximum', () => {
    const d = new HpackDecoder();
    decode(d, Buffer.from([...indexing('a', 'b'), ...indexing('c', 'd')]));
    expect(dynamicTable(d)).toEqual([
      ['c', 'd'],
      ['a', 'b'],
    ]);
    // Two updates (0, then 4096, the maximum), then a field.
    expect(decode(d, Buffer.from([0x20, ...int(4096, 5, 0x20), 0x82])).fields).toEqual([[':method', 'GET']]);
    expect(dynamicTable(d)).toEqual([]);
    // A limit of 68 octets holds two 34-octet entries; a third evicts the oldest.
    decode(d, Buffer.from([...int(68, 5, 0x20), ...indexing('a', 'b'), ...indexing('c', 'd'), ...indexing('e', 'f')]));
    expect(dynamicTable(d)).toEqual([
      ['e', 'f'],
      ['c', 'd'],
    ]);
    // An entry larger than the limit empties the table and is not added.
    expect(decode(d, Buffer.from(indexing('big', 'x'.repeat(40)))).fields).toEqual([['big', 'x'.repeat(40)]]);
    expect(dynamicTable(d)).toEqual([]);
    // Shrinking evicts at once.
    decode(d, Buffer.from([...indexing('a', 'b'), ...indexing('c', 'd')]));
    decode(d, Buffer.from(int(40, 5, 0x20)));
    expect(dynamicTable(d)).toEqual([['c', 'd']]);
  });

  it('an entry named after the entry it evicts keeps that name', () => {
    const d = new HpackDecoder(40);
    decode(d, Buffer.from(indexing('name', 'v')));
    // 0x7e: with indexing, name = index 62 (that entry), evicted to make room for the new one.
    expect(decode(d, Buffer.from([0x7e, ...str('w', false)])).fields).toEqual([['name', 'w']]);
    expect(dynamicTable(d)).toEqual([['name', 'w']]);
  });

  it('keeps the dynamic table like a simple model through many additions, wraps and evictions', () => {
    const rnd = random(42);
    const d = new HpackDecoder(2000);
    let model: Field[] = [];
    let limit = 2000;
    const tables: Field[][] = [];
    const models: Field[][] = [];
    for (let round = 0; round < 300; round++) {
      const block: number[] = [];
      if (round % 50 === 49) {
        limit = Math.floor(rnd() * 2001);
        block.push(...int(limit, 5, 0x20));
        let size = 0;
        model = model.filter(([n, v]) => (size += n.length + v.length + 32) <= limit);
      }
      const adds = Math.floor(rnd() * 8);
      for (let i = 0; i < adds; i++) {
        const f: Field = [`n${Math.floor(rnd() * 100)}`, 'v'.repeat(Math.floor(rnd() * 120))];
        block.push(...indexing(f[0], f[1], rnd() < 0.5));
        model.unshift(f);
        let size = 0;
        model = model.filter(([n, v]) => (size += n.length + v.length + 32) <= limit);
      }
      // Indexed references to the entries as they stand after the block's additions.
      const refs = model.length ? Array.from({ length: 3 }, () => Math.floor(rnd() * model.length)) : [];
      for (const r of refs) block.push(...int(62 + r, 7, 0x80));
      const { fields } = decode(d, Buffer.from(block));
      expect(fields.slice(adds)).toEqual(refs.map((r) => model[r]));
      if (round % 10 === 0) {
        tables.push(dynamicTable(d));
        models.push([...model]);
      }
    }
    expect(tables).toEqual(models);
  });

  it('over maxListBytes returns false, emits no more, and keeps the table in step', () => {
    const d = new HpackDecoder();
    const block = Buffer.from([0x82, ...indexing('x-one', 'a'.repeat(50)), ...indexing('x-two', 'b'.repeat(50), true), 0x84]);
    // :method GET is 7 + 3 + 32 = 42 octets, x-one 5 + 50 + 32 = 87: 129 in all, then x-two passes 200.
    const emitted: Field[] = [];
    expect(d.decode(block, (n, v) => emitted.push([n, v]), 200)).toBe(false);
    expect(emitted).toEqual([
      [':method', 'GET'],
      ['x-one', 'a'.repeat(50)],
    ]);
    // The next block refers to both entries the first one added.
    expect(decode(d, Buffer.from([0xbe, 0xbf]), 200)).toEqual({
      fields: [
        ['x-two', 'b'.repeat(50)],
        ['x-one', 'a'.repeat(50)],
      ],
      ok: true,
    });
    // Exactly at the limit is within it.
    expect(decode(d, Buffer.from([0x82]), 42)).toEqual({ fields: [[':method', 'GET']], ok: true });
    expect(decode(d, Buffer.from([0x82]), 41)).toEqual({ fields: [], ok: false });
  });
});

describe('encodeHeaders', () => {
  it('encodes static matches as one octet, static names by index, other names literally', () => {
    expect([...encodeHeaders([[':status', '200']])]).toEqual([0x88]);
    expect([...encodeHeaders([[':authority', '']])]).toEqual([0x81]);
    expect([...encodeHeaders([['content-type', 'application/grpc']])]).toEqual([0x0f, 0x10, 0x10, ...Buffer.from('application/grpc')]);
    expect([...encodeHeaders([[':status', '201']])]).toEqual([0x08, 0x03, ...Buffer.from('201')]);
    expect([...encodeHeaders([['grpc-status', '0']])]).toEqual([0x00, 0x0b, ...Buffer.from('grpc-status'), 0x01, 0x30]);
    expect(encodeHeaders([]).length).toBe(0);
  });

  it('round-trips through the decoder, leaving its table empty', () => {
    const rnd = random(3);
    const latin1 = Buffer.from(Array.from({ length: 500 }, () => 0x20 + Math.floor(rnd() * 0xe0))).toString('latin1');
    const fields: Field[] = [
      [':status', '200'],
      [':status', '418'],
      ['content-type', 'application/grpc'],
      ['grpc-encoding', 'identity'],
      ['www-authenticate', ''],
      ['accept-encoding', 'gzip, deflate'],
      ['x-empty', ''],
      ['', 'an empty name'],
      ['x-long', 'y'.repeat(200_000)],
      ['x-latin1', latin1],
      ['grpc-message', 'caf\u00e9 \u00ff'],
      ['grpc-status', '0'],
    ];
    const d = new HpackDecoder();
    expect(decode(d, encodeHeaders(fields)).fields).toEqual(fields);
    expect(decode(d, encodeHeaders(fields)).fields).toEqual(fields);
    expect(dynamicTable(d)).toEqual([]);
  });
});

/** The header blocks (HEADERS and CONTINUATION payloads joined) a client sends, read raw off the connection. */
class HeaderBlockCapture {
  readonly blocks: Buffer[] = [];
  private buf = Buffer.alloc(0);
  private pending: Buffer[] | null = null;
  private waiters: Array<() => void> = [];

  push(chunk: Buffer): void {
    this.buf = Buffer.concat([this.buf, chunk]);
    let off = 0;
    if (this.buf.length >= 24 && this.buf.subarray(0, 24).toString('latin1') === 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n') this.buf = this.buf.subarray(24);
    while (this.buf.length - off >= 9) {
      const len = this.buf.readUIntBE(off, 3);
      if (this.buf.length - off < 9 + len) break;
      const type = this.buf[off + 3];
      const flags = this.buf[off + 4];
      let payload = this.buf.subarray(off + 9, off + 9 + len);
      off += 9 + len;
      if (type === 0x1) {
        // HEADERS: PADDED (0x8) puts a pad length first and padding last, PRIORITY (0x20) 5 octets first.
        let pad = 0;
        if (flags & 0x8) {
          pad = payload[0];
          payload = payload.subarray(1);
        }
        if (flags & 0x20) payload = payload.subarray(5);
        payload = payload.subarray(0, payload.length - pad);
        this.pending = [payload];
      } else if (type === 0x9 && this.pending) {
        this.pending.push(payload);
      } else {
        continue;
      }
      if (flags & 0x4) {
        this.blocks.push(Buffer.concat(this.pending));
        this.pending = null;
        for (const w of this.waiters.splice(0)) w();
      }
    }
    this.buf = this.buf.subarray(off);
  }

  async waitFor(n: number): Promise<void> {
    while (this.blocks.length < n) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
}

/**
 * A header list for comparing with what node sent: the pseudo-header fields sorted (node orders
 * them its own way), long values by length and digest (to keep a failure's diff short).
 */
function comparable(fields: Field[]): Field[] {
  const pseudo = fields.filter(([n]) => n.startsWith(':')).sort(([a], [b]) => (a < b ? -1 : 1));
  const short = ([n, v]: Field): Field => [n, v.length > 100 ? `${v.length} chars, sha1 ${createHash('sha1').update(v, 'latin1').digest('hex')}` : v];
  return [...pseudo, ...fields.filter(([n]) => !n.startsWith(':'))].map(short);
}

describe('HpackDecoder against node:http2 (nghttp2: Huffman, dynamic table, never-indexed fields)', () => {
  it('decodes the header blocks of requests on one session', async () => {
    const capture = new HeaderBlockCapture();
    const sockets: net.Socket[] = [];
    const server = net.createServer((socket) => {
      sockets.push(socket);
      // An empty SETTINGS frame: the server's connection preface.
      socket.write(Buffer.from([0, 0, 0, 0x4, 0, 0, 0, 0, 0]));
      socket.on('data', (chunk: Buffer) => capture.push(chunk));
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', () => undefined);

    const rnd = random(11);
    const big = Buffer.from(Array.from({ length: 20_000 }, () => 0x20 + Math.floor(rnd() * 0x5f))).toString('latin1');
    const common = {
      'content-type': 'application/grpc',
      te: 'trailers',
      'user-agent': 'grpc-go/1.26.0',
      'x-latin1': 'caf\u00e9 \u00e0 la cr\u00e8me \u00ff',
    };
    const requests: Array<{ headers: http2.OutgoingHttpHeaders; want: Field[] }> = [
      {
        headers: { ':method': 'POST', ':path': '/etcdserverpb.KV/Put', ...common, 'grpc-timeout': '4999m', authorization: 'Bearer secret-token' },
        want: [
          [':method', 'POST'],
          [':authority', `127.0.0.1:${port}`],
          [':scheme', 'http'],
          [':path', '/etcdserverpb.KV/Put'],
          ['content-type', 'application/grpc'],
          ['te', 'trailers'],
          ['user-agent', 'grpc-go/1.26.0'],
          ['x-latin1', common['x-latin1']],
          ['grpc-timeout', '4999m'],
          ['authorization', 'Bearer secret-token'],
        ],
      },
      {
        headers: {
          ':method': 'POST',
          ':path': '/etcdserverpb.KV/Range',
          ...common,
          'grpc-timeout': '4998m',
          'x-token': 'abc',
          [http2.sensitiveHeaders]: ['x-token'],
        },
        want: [
          [':method', 'POST'],
          [':authority', `127.0.0.1:${port}`],
          [':scheme', 'http'],
          [':path', '/etcdserverpb.KV/Range'],
          ['content-type', 'application/grpc'],
          ['te', 'trailers'],
          ['user-agent', 'grpc-go/1.26.0'],
          ['x-latin1', common['x-latin1']],
          ['grpc-timeout', '4998m'],
          ['x-token', 'abc'],
        ],
      },
      // Larger than a frame (16384 octets): HEADERS then CONTINUATION.
      { headers: { ':method': 'GET', ':path': '/big', 'x-big': big, 'x-big2': big.slice(0, 1500) }, want: [] },
      // The same again: now indexed from the dynamic table, where the first one was added.
      { headers: { ':method': 'GET', ':path': '/big', 'x-big2': big.slice(0, 1500) }, want: [] },
    ];
    requests[2].want = [
      [':method', 'GET'],
      [':authority', `127.0.0.1:${port}`],
      [':scheme', 'http'],
      [':path', '/big'],
      ['x-big', big],
      ['x-big2', big.slice(0, 1500)],
    ];
    requests[3].want = [
      [':method', 'GET'],
      [':authority', `127.0.0.1:${port}`],
      [':scheme', 'http'],
      [':path', '/big'],
      ['x-big2', big.slice(0, 1500)],
    ];
    try {
      for (const r of requests) session.request(r.headers, { endStream: true }).on('error', () => undefined);
      await capture.waitFor(requests.length);
    } finally {
      session.destroy();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }

    const d = new HpackDecoder();
    const got = capture.blocks.map((block) => decode(d, block).fields);
    expect(got.map(comparable)).toEqual(requests.map((r) => comparable(r.want)));
    // nghttp2 used Huffman (its first block is smaller than plain literals), the dynamic table
    // (the later blocks are smaller still) and CONTINUATION (the third block is over 16384 octets).
    expect(capture.blocks[0].length).toBeLessThan(encodeHeaders(requests[0].want).length);
    expect(capture.blocks[1].length).toBeLessThan(capture.blocks[0].length / 2);
    expect(capture.blocks[2].length).toBeGreaterThan(16_384);
    expect(capture.blocks[3].length).toBeLessThan(100);
    // x-token, marked sensitive, went as a literal never indexed (0x10) with a literal name.
    const neverIndexed = [Buffer.from([0x10, ...str('x-token', true)]), Buffer.from([0x10, ...str('x-token', false)])];
    expect(neverIndexed.some((b) => capture.blocks[1].includes(b))).toBe(true);
  });
});
