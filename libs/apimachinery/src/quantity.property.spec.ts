import fc from 'fast-check';
import { canonicalQuantity, parseQuantity, QuantityParseError } from './quantity.js';
import { formatGoDuration, parseGoDuration, WireValueError } from './protobuf/protobuf.wellknown.js';

// FC_RUNS raises the number of generated cases (a longer, deeper run).
const numRuns = Number(process.env.FC_RUNS) || 300;

const quantity = fc
  .tuple(fc.constantFrom('', '+', '-'), fc.integer({ min: 0, max: 999999 }), fc.option(fc.integer({ min: 0, max: 999 }), { nil: undefined }), fc.constantFrom('', 'n', 'u', 'm', 'k', 'M', 'G', 'T', 'P', 'E', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei', 'e3', 'E-2', 'e0'))
  .map(([sign, whole, frac, suffix]) => `${sign}${whole}${frac === undefined ? '' : `.${frac}`}${suffix}`);

describe('quantity properties', () => {
  it('the canonical form is a fixed point with the same value', () => {
    fc.assert(
      fc.property(quantity, (q) => {
        let canon: string;
        try {
          canon = canonicalQuantity(q);
        } catch (e) {
          expect(e).toBeInstanceOf(QuantityParseError); // e.g. beyond the BinarySI maximum
          return;
        }
        expect(canonicalQuantity(canon)).toBe(canon);
        expect(parseQuantity(canon).nanos).toBe(parseQuantity(q).nanos);
      }),
      { numRuns },
    );
  });

  it('answers arbitrary text with a Quantity or QuantityParseError only', () => {
    const noise = fc.oneof(fc.string(), fc.array(fc.constantFrom('1', '0', '.', '+', '-', 'e', 'E', 'i', 'Ki', 'm', 'k', '9'.repeat(30), 'e999999'), { maxLength: 8 }).map((xs) => xs.join('')));
    fc.assert(
      fc.property(noise, (t) => {
        try {
          parseQuantity(t).toString();
        } catch (e) {
          expect(e).toBeInstanceOf(QuantityParseError);
        }
      }),
      { numRuns },
    );
  });
});

describe('Go duration properties', () => {
  it('parses what it formats, for whole nanoseconds within 2^53', () => {
    fc.assert(
      fc.property(fc.integer({ min: -(2 ** 53 - 1), max: 2 ** 53 - 1 }), (ns) => {
        expect(parseGoDuration(formatGoDuration(ns))).toBe(ns);
      }),
      { numRuns },
    );
  });

  it('answers arbitrary text with a number or WireValueError only', () => {
    const noise = fc.oneof(fc.string(), fc.array(fc.constantFrom('1', '.', '-', '+', 'h', 'm', 's', 'ms', 'us', 'µs', 'ns', 'd', '5'), { maxLength: 8 }).map((xs) => xs.join('')));
    fc.assert(
      fc.property(noise, (t) => {
        try {
          expect(typeof parseGoDuration(t)).toBe('number');
        } catch (e) {
          expect(e).toBeInstanceOf(WireValueError);
        }
      }),
      { numRuns },
    );
  });
});
