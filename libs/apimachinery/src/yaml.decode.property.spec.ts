import fc from 'fast-check';
import { stringify } from 'yaml';
import { decodeYaml, YamlDecodeError } from './yaml.decode.js';
import { numRuns as runs, unexpectedError } from './property.fixtures.js';

const numRuns = runs(200);

describe('YAML decoding properties', () => {
  it('decodes YAML 1.1 printed from a JSON value back to that value', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (v) => {
        const json = JSON.parse(JSON.stringify(v)) as unknown;
        // Printed as YAML 1.1, as bodies are read: `Y` or `on` must come out quoted.
        const d = decodeYaml(stringify(json, { version: '1.1' }));
        expect(d.value).toEqual(json);
        expect(d.duplicates).toEqual([]);
      }),
      { numRuns },
    );
  });

  it('decodes JSON text (YAML is a superset) to the same value', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (v) => {
        const text = JSON.stringify(v);
        expect(decodeYaml(text).value).toEqual(JSON.parse(text));
      }),
      { numRuns },
    );
  });

  it('throws nothing but YamlDecodeError on arbitrary text', () => {
    const texts = fc.oneof(
      fc.string(),
      fc
        .array(
          fc.constantFrom(
            'a: ',
            '- ',
            '  ',
            '\n',
            '&x ',
            '*x',
            '!!binary ',
            '!foo ',
            '? ',
            '{',
            '}',
            '[',
            ']',
            ',',
            '"',
            "'",
            '|',
            '>',
            '---\n',
            '%YAML 1.2\n',
            '<<: ',
            '1',
            'x',
          ),
          { maxLength: 30 },
        )
        .map((xs) => xs.join('')),
    );
    fc.assert(
      fc.property(texts, (t) => {
        expect(unexpectedError(() => decodeYaml(t), YamlDecodeError)).toBeUndefined();
      }),
      { numRuns },
    );
  });
});

describe('YAML plain scalars without a digit', () => {
  it('keeps `.`, `-.` and `+.` strings, as go-yaml does, instead of failing on a NaN', () => {
    expect(decodeYaml('a: .\nb: -.\nc: +.\nd: ._\ne: .5\nf: 1.\n').value).toEqual({ a: '.', b: '-.', c: '+.', d: '._', e: 0.5, f: 1 });
  });
});
