import { canonicalJson } from './json.canonical.js';

describe('canonicalJson', () => {
  it('gives values equal as JSON the same text, whatever their key order', () => {
    expect(canonicalJson({ b: [1, { d: 'x', c: null }], a: true })).toBe(canonicalJson({ a: true, b: [1, { c: null, d: 'x' }] }));
    expect(canonicalJson({ a: 1 })).not.toBe(canonicalJson({ a: '1' }));
    expect(canonicalJson([1, 2])).not.toBe(canonicalJson([2, 1]));
    expect(canonicalJson({ a: undefined })).not.toBe(canonicalJson({}));
    expect(canonicalJson(-0)).toBe(canonicalJson(0));
  });
});
