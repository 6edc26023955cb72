import fc from 'fast-check';
import { JsonSyntaxError, parseJsonStrict } from './json.strict.js';
import { numRuns as runs, settle } from './property.fixtures.js';

const numRuns = runs(300);

describe('strict JSON properties', () => {
  it('parses what JSON.stringify prints to an equal value with no duplicates', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const r = parseJsonStrict(JSON.stringify(v));
        expect(r.value).toEqual(JSON.parse(JSON.stringify(v)));
        expect(r.duplicates).toEqual([]);
      }),
      { numRuns },
    );
  });

  it('agrees with JSON.parse on the value of any text, or throws only JsonSyntaxError', () => {
    const texts = fc.oneof(
      fc.string(),
      fc.jsonValue().map((v) => JSON.stringify(v)),
      fc
        .tuple(
          fc.jsonValue().map((v) => JSON.stringify(v)),
          fc.nat(),
          fc.string({ maxLength: 3 }),
        )
        .map(([s, at, ins]) => s.slice(0, at % (s.length + 1)) + ins + s.slice(at % (s.length + 1))),
    );
    fc.assert(
      fc.property(texts, (t) => {
        let expected: unknown;
        let valid = true;
        try {
          expected = JSON.parse(t);
        } catch {
          valid = false;
        }
        const r = settle(() => parseJsonStrict(t).value);
        expect('error' in r).toBe(!valid);
        expect('value' in r ? r.value : undefined).toEqual(valid ? expected : undefined);
        expect('error' in r ? r.error instanceof JsonSyntaxError : true).toBe(true);
      }),
      { numRuns },
    );
  });

  it('reports a repeated key once per repeat, and the last occurrence wins', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 8 }), fc.array(fc.integer(), { minLength: 2, maxLength: 5 }), (key, values) => {
        const k = JSON.stringify(key);
        const r = parseJsonStrict(`{${values.map((v) => `${k}:${v}`).join(',')}}`);
        expect(r.duplicates).toHaveLength(values.length - 1);
        expect((r.value as Record<string, unknown>)[key]).toBe(values[values.length - 1]);
      }),
      { numRuns },
    );
  });
});
