import fc from 'fast-check';
import { canonicalQuantity, parseQuantity, QuantityParseError } from './quantity.js';
import { formatGoDuration, parseGoDuration, WireValueError } from './protobuf/protobuf.wellknown.js';
import { numRuns as runs, settle, unexpectedError } from './property.fixtures.js';

const numRuns = runs(300);

const quantity = fc
  .tuple(
    fc.constantFrom('', '+', '-'),
    fc.integer({ min: 0, max: 999999 }),
    fc.option(fc.integer({ min: 0, max: 999 }), { nil: undefined }),
    fc.constantFrom('', 'n', 'u', 'm', 'k', 'M', 'G', 'T', 'P', 'E', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei', 'e3', 'E-2', 'e0'),
  )
  .map(([sign, whole, frac, suffix]) => `${sign}${whole}${frac === undefined ? '' : `.${frac}`}${suffix}`);

describe('quantity properties', () => {
  it('the canonical form is a fixed point with the same value', () => {
    fc.assert(
      fc.property(quantity, (q) => {
        // A generated quantity may still be refused (e.g. beyond the BinarySI maximum).
        const r = settle(() => canonicalQuantity(q));
        expect('value' in r || r.error instanceof QuantityParseError).toBe(true);
        if (!('value' in r)) return;
        const canon = r.value;
        expect(canonicalQuantity(canon)).toBe(canon);
        expect(parseQuantity(canon).nanos).toBe(parseQuantity(q).nanos);
      }),
      { numRuns },
    );
  });

  it('answers arbitrary text with a Quantity or QuantityParseError only', () => {
    const noise = fc.oneof(
      fc.string(),
      fc.array(fc.constantFrom('1', '0', '.', '+', '-', 'e', 'E', 'i', 'Ki', 'm', 'k', '9'.repeat(30), 'e999999'), { maxLength: 8 }).map((xs) => xs.join('')),
    );
    fc.assert(
      fc.property(noise, (t) => {
        expect(unexpectedError(() => parseQuantity(t).toString(), QuantityParseError)).toBeUndefined();
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
    const noise = fc.oneof(
      fc.string(),
      fc.array(fc.constantFrom('1', '.', '-', '+', 'h', 'm', 's', 'ms', 'us', 'µs', 'ns', 'd', '5'), { maxLength: 8 }).map((xs) => xs.join('')),
    );
    fc.assert(
      fc.property(noise, (t) => {
        expect(unexpectedError(() => parseGoDuration(t), WireValueError)).toBeUndefined();
      }),
      { numRuns },
    );
  });
});
