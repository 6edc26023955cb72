import { configMapKeyError, MAX_DATA_BYTES, utf8Len, validateDataMaps, validateImmutable } from './data-maps.validation.js';

describe('data map rules', () => {
  it('accept config keys of alphanumerics, "-", "_" and "." and refuse the rest', () => {
    expect(configMapKeyError('app.properties')).toBeUndefined();
    expect(configMapKeyError('KEY_name-1')).toBeUndefined();
    expect(configMapKeyError('a/b')).toMatch(/a valid config key must consist of/);
    expect(configMapKeyError('.')).toBe("must not be '.'");
    expect(configMapKeyError('..')).toBe("must not be '..'");
    expect(configMapKeyError('..a')).toBe("must not start with '..'");
    expect(configMapKeyError('a'.repeat(254))).toBe('must be no more than 253 characters');
  });

  it('refuse a key present in two maps and a total over the size limit', () => {
    const maps = [
      { field: 'data', decode: utf8Len },
      { field: 'binaryData', decode: (v: unknown) => Buffer.from(String(v), 'base64').length },
    ];
    const dup = validateDataMaps({ metadata: {}, data: { k: 'v' }, binaryData: { k: 'aGk=' } }, maps);
    expect(dup).toEqual([{ type: 'FieldValueInvalid', field: 'data[k]', value: 'k', detail: 'duplicate of key present in binaryData' }]);
    const big = validateDataMaps({ metadata: {}, data: { a: 'x'.repeat(MAX_DATA_BYTES), b: 'y' } }, maps);
    expect(big).toEqual([{ type: 'FieldValueTooLong', field: '', detail: `must have at most ${MAX_DATA_BYTES} bytes` }]);
    expect(validateDataMaps({ metadata: {}, data: { a: 'x'.repeat(MAX_DATA_BYTES) } }, maps)).toEqual([]);
  });

  it('freeze the data fields and the flag once immutable is set', () => {
    const old = { metadata: {}, immutable: true, data: { a: '1' } };
    expect(validateImmutable({ metadata: {}, immutable: true, data: { a: '1' } }, old, ['data'])).toEqual([]);
    expect(validateImmutable({ metadata: {}, immutable: true, data: { a: '2' } }, old, ['data']).map((e) => e.field)).toEqual(['data']);
    expect(validateImmutable({ metadata: {}, data: { a: '1' } }, old, ['data']).map((e) => e.field)).toEqual(['immutable']);
    expect(validateImmutable({ metadata: {}, data: { a: '2' } }, { metadata: {}, data: { a: '1' } }, ['data'])).toEqual([]);
  });
});
