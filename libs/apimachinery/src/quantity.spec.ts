import { canonicalQuantity, parseQuantity, Quantity, QuantityParseError, QUANTITY_FORMAT_ERROR, QUANTITY_SUFFIX_ERROR } from './quantity.js';

describe('resource.Quantity', () => {
  // Canonical forms as kube-apiserver prints them (apimachinery/pkg/api/resource quantity_test.go behaviour).
  it.each([
    ['0', '0'],
    ['00', '0'],
    ['-0', '0'],
    ['1', '1'],
    ['100m', '100m'],
    ['0.1', '100m'],
    ['.5', '500m'],
    ['1.5', '1500m'],
    ['1000', '1k'],
    ['1500', '1500'],
    ['1000000', '1M'],
    ['1k', '1k'],
    ['1000m', '1'],
    ['1Ki', '1Ki'],
    ['1024', '1024'],
    ['1024Ki', '1Mi'],
    ['1.5Gi', '1536Mi'],
    ['0.5Gi', '512Mi'],
    ['0.5Ki', '512'],
    ['1.5Ki', '1536'],
    ['1e3', '1e3'],
    ['1.5e3', '1500'],
    ['1E6', '1e6'],
    ['12e-3', '12e-3'], // the exponent form is kept,
    ['1n', '1n'],
    ['0.0000000001', '1n'],
    ['-0.0000000001', '-1n'],
    ['-100m', '-100m'],
    ['+1', '1'],
    ['1.', '1'],
    ['2E', '2E'],
    ['5000E', '5000E'],
    ['100u', '100u'],
    ['0.5m', '500u'],
    ['1.1Mi', '1153433600m'], // not a whole number of bytes: DecimalSI,
    ['8Ei', '9223372036854775807'], // BinarySI is capped at 2^63-1
    ['7Ei', '7Ei'],
    ['-2Ki', '-2Ki'],
  ])('%s -> %s', (input, canonical) => {
    expect(canonicalQuantity(input)).toBe(canonical);
  });

  it('rejects malformed strings with Kubernetes messages', () => {
    for (const bad of ['', 'abc', '1.5.5', '1 Gi', '1Gi2x', '--1']) {
      expect(() => parseQuantity(bad)).toThrow(QuantityParseError);
    }
    expect(() => parseQuantity('1.5.5')).toThrow(QUANTITY_FORMAT_ERROR);
    expect(() => parseQuantity('1Ki1')).toThrow(QUANTITY_SUFFIX_ERROR);
    expect(() => parseQuantity('1e')).toThrow(QUANTITY_SUFFIX_ERROR);
    expect(() => parseQuantity('1Q')).toThrow(QUANTITY_FORMAT_ERROR);
    expect(() => parseQuantity('1e99999')).toThrow(QuantityParseError);
  });

  it('compares across formats', () => {
    expect(parseQuantity('1Gi').cmp(parseQuantity('1G'))).toBe(1);
    expect(parseQuantity('1000m').equals(parseQuantity('1'))).toBe(true);
    expect(parseQuantity('500m').cmp(parseQuantity('0.6'))).toBe(-1);
    expect(parseQuantity('1e3').cmp(parseQuantity('1k'))).toBe(0);
  });

  it('value() and milliValue() round up', () => {
    expect(parseQuantity('100m').value()).toBe(1n);
    expect(parseQuantity('1.5').milliValue()).toBe(1500n);
    expect(parseQuantity('1n').milliValue()).toBe(1n);
    expect(parseQuantity('-1.5').value()).toBe(-2n);
    expect(Quantity.fromMilli(250).toString()).toBe('250m');
    expect(Quantity.fromInt(2048, 'BinarySI').toString()).toBe('2Ki');
    expect(parseQuantity('1Gi').add(parseQuantity('512Mi')).toString()).toBe('1536Mi');
    expect(JSON.stringify({ q: parseQuantity('0.5') })).toBe('{"q":"500m"}');
  });
});
