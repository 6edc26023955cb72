/**
 * HpackDecoder on any input: arbitrary bytes, and header blocks of encodeHeaders with bytes
 * flipped, cut short or spliced, one after another on the same decoder (its dynamic table
 * carries over, as on a connection). Each block decodes or throws HpackError, nothing else;
 * an error ends the connection, so the next sequence starts with a fresh decoder.
 *
 * FC_RUNS raises the number of sequences, FC_SEED picks other ones.
 */
import * as fc from 'fast-check';
import { HpackDecoder, HpackError, encodeHeaders } from './hpack.js';

const numRuns = Number(process.env.FC_RUNS) || 500;
const seed = Number(process.env.FC_SEED) || 3;

const fields = fc.array(
  fc.tuple(fc.oneof(fc.constantFrom(':path', ':method', 'content-type', 'te', 'x-a'), fc.string({ maxLength: 10 })), fc.string({ maxLength: 40 })),
  {
    maxLength: 6,
  },
);

/** A block: random bytes, or an encoded header list with one change made to its bytes. */
const block: fc.Arbitrary<Buffer> = fc.oneof(
  fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
  fc.tuple(fields, fc.nat(), fc.nat(0xff), fc.constantFrom('flip', 'cut', 'insert', 'none')).map(([list, at, byte, how]) => {
    const b = Buffer.from(encodeHeaders(list));
    if (b.length === 0 || how === 'none') return b;
    const i = at % b.length;
    if (how === 'flip') b[i] = byte;
    if (how === 'cut') return b.subarray(0, i);
    if (how === 'insert') return Buffer.concat([b.subarray(0, i), Buffer.from([byte]), b.subarray(i)]);
    return b;
  }),
  // Size updates, table indexes and Huffman-flagged literals, the octets that steer the decoder.
  fc.array(fc.constantFrom(0x20, 0x3f, 0xe1, 0x1f, 0xff, 0x80, 0xbe, 0xbf, 0x40, 0x00, 0x10, 0x7f, 0x87, 0x85), { maxLength: 16 }).map((b) => Buffer.from(b)),
);

describe('HpackDecoder on any input', () => {
  it('decodes each block of a sequence or throws HpackError, nothing else', () => {
    let decoded = 0;
    let refused = 0;
    fc.assert(
      fc.property(fc.array(block, { minLength: 1, maxLength: 6 }), fc.constantFrom(Infinity, 64, 4096), (blocks, maxListBytes) => {
        const decoder = new HpackDecoder();
        for (const b of blocks) {
          try {
            decoder.decode(
              b,
              (name, value) => {
                if (typeof name !== 'string' || typeof value !== 'string') throw new Error('a field that is not a string');
              },
              maxListBytes,
            );
            decoded++;
          } catch (e) {
            if (!(e instanceof HpackError)) throw e;
            refused++;
            return;
          }
        }
      }),
      { numRuns, seed },
    );
    // Both outcomes were reached: the inputs are neither all valid nor all refused.
    expect(decoded).toBeGreaterThan(numRuns / 10);
    expect(refused).toBeGreaterThan(numRuns / 10);
  });
});
