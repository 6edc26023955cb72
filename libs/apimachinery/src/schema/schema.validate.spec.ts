import { fieldErrorMessage, GoValue } from '../errors.js';
import type { JSONSchemaProps } from './schema.types.js';
import { compileSchemaCheck, compileSchemaPattern, validateSchema } from './schema.validate.js';
import { fieldOf, defineSchema } from './schema.names.js';

const spec: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['name'],
      properties: {
        name: { type: 'string', minLength: 2, maxLength: 5, pattern: '^[a-z]+$' },
        replicas: { type: 'integer', format: 'int32', minimum: 1, maximum: 10 },
        big: { type: 'integer', format: 'int64' },
        ratio: { type: 'number' },
        mode: { type: 'string', enum: ['a', 'b'] },
        when: { type: 'string', format: 'date-time' },
        blob: { type: 'string', format: 'byte' },
        maybe: { type: 'string', nullable: true },
        port: { 'x-kubernetes-int-or-string': true },
        data: { type: 'object', additionalProperties: { type: 'string' } },
        tags: { type: 'array', items: { type: 'string' }, maxItems: 2, 'x-kubernetes-list-type': 'set' },
        ports: {
          type: 'array',
          items: { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer' } } },
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
        },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        template: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object' } } },
      },
    },
  },
};

const errsOf = (specValue: Record<string, unknown>) => validateSchema({ spec: { name: 'ab', ...specValue } }, spec);

describe('validateSchema', () => {
  it('accepts a valid object', () => {
    expect(
      errsOf({
        replicas: 3,
        ratio: 0.5,
        mode: 'a',
        when: '2024-02-29T10:00:00.123Z',
        blob: 'aGVsbG8=',
        maybe: null,
        port: 'http',
        data: { 'a.b': 'x' },
        tags: ['x', 'y'],
        ports: [
          { name: 'a', port: 1 },
          { name: 'b', port: 1 },
        ],
        free: { anything: { goes: [1] } },
        template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x' }, spec: {} },
      }),
    ).toEqual([]);
  });

  it('reports type errors the way kube-apiserver does for custom resources', () => {
    const errs = errsOf({ replicas: 'three' });
    expect(errs).toEqual([
      {
        type: 'FieldValueTypeInvalid',
        field: 'spec.replicas',
        value: 'string',
        detail: 'spec.replicas in body must be of type integer: "string"',
      },
    ]);
    expect(fieldErrorMessage(errs[0])).toBe('spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"');
  });

  it('distinguishes integer from number', () => {
    expect(errsOf({ replicas: 1.5 })[0].detail).toBe('spec.replicas in body must be of type integer: "number"');
    expect(errsOf({ ratio: 2 })).toEqual([]);
  });

  it('checks int32 and int64 ranges', () => {
    expect(errsOf({ replicas: 2 ** 31 }).map((e) => e.field)).toEqual(['spec.replicas', 'spec.replicas']); // int32 and maximum
    expect(errsOf({ big: 2 ** 40 })).toEqual([]);
    expect(errsOf({ big: 2 ** 63 })[0].detail).toContain('must be of type int64');
  });

  it('requires required fields', () => {
    const errs = validateSchema({ spec: {} }, spec);
    expect(errs).toEqual([{ type: 'FieldValueRequired', field: 'spec.name', detail: '' }]);
    expect(fieldErrorMessage(errs[0])).toBe('spec.name: Required value');
  });

  it('reports enum mismatches as Unsupported value with the supported list', () => {
    const [e] = errsOf({ mode: 'c' });
    expect(fieldErrorMessage(e)).toBe('spec.mode: Unsupported value: "c": supported values: "a", "b"');
  });

  it('checks string lengths and patterns', () => {
    expect(errsOf({}).length).toBe(0);
    const long = validateSchema({ spec: { name: 'abcdef' } }, spec);
    expect(long.map((e) => e.type)).toEqual(['FieldValueTooLong']);
    expect(fieldErrorMessage(long[0])).toBe('spec.name: Too long: may not be more than 5 bytes');
    const short = validateSchema({ spec: { name: 'a' } }, spec);
    expect(short[0].detail).toBe('spec.name in body should be at least 2 chars long');
    const pat = validateSchema({ spec: { name: 'AB' } }, spec);
    expect(pat[0].detail).toBe("spec.name in body should match '^[a-z]+$'");
  });

  it('checks minimum and maximum', () => {
    expect(errsOf({ replicas: 0 })[0].detail).toBe('spec.replicas in body should be greater than or equal to 1');
    expect(errsOf({ replicas: 11 })[0].detail).toBe('spec.replicas in body should be less than or equal to 10');
  });

  it('checks byte and date-time formats', () => {
    expect(errsOf({ blob: 'not base64!' })[0].detail).toBe('spec.blob in body must be of type byte: "not base64!"');
    expect(errsOf({ blob: 'abc' })).toHaveLength(1); // missing padding
    expect(errsOf({ when: '2024-02-30T10:00:00Z' })).toHaveLength(1);
    expect(errsOf({ when: '2024-01-01 10:00:00' })).toHaveLength(1);
    expect(errsOf({ when: '2024-01-01T10:00:00+02:00' })).toEqual([]);
  });

  it('rejects null unless nullable', () => {
    expect(errsOf({ maybe: null })).toEqual([]);
    expect(errsOf({ mode: null })[0].detail).toBe('spec.mode in body must be of type string: "null"');
  });

  it('accepts integer or string for int-or-string and nothing else', () => {
    expect(errsOf({ port: 80 })).toEqual([]);
    expect(errsOf({ port: true })[0].detail).toBe('spec.port in body must be of type integer,string: "boolean"');
  });

  it('writes map keys and list indexes like field.Path', () => {
    const errs = errsOf({ data: { 'app.properties': 1 }, tags: ['x', 5] });
    expect(errs.map((e) => e.field)).toEqual(['spec.data[app.properties]', 'spec.tags[1]']);
  });

  it('finds duplicates in sets and keyed lists', () => {
    expect(errsOf({ tags: ['x', 'x'] })).toEqual([{ type: 'FieldValueDuplicate', field: 'spec.tags[1]', value: 'x', detail: '' }]);
    const errs = errsOf({ ports: [{ name: 'a' }, { name: 'a', port: 2 }] });
    expect(errs).toEqual([{ type: 'FieldValueDuplicate', field: 'spec.ports[1]', value: new GoValue('map[string]interface {}{"name":"a"}'), detail: '' }]);
  });

  it('finds duplicates in one pass: objects equal whatever their key order, long lists at any index', () => {
    const schema: JSONSchemaProps = {
      type: 'object',
      properties: {
        pairs: {
          type: 'array',
          'x-kubernetes-list-type': 'set',
          items: { type: 'object', 'x-kubernetes-map-type': 'atomic', properties: { a: { type: 'integer' }, b: { type: 'integer' } } },
        },
        names: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name', 'protocol'],
          items: { type: 'object', properties: { name: { type: 'string' }, protocol: { type: 'string' } } },
        },
      },
    };
    // The compiled check and the interpreter (selected by a definitions map) alike.
    const check = (v: unknown) => [
      ...validateSchema(v, schema, 'spec', { root: false }),
      ...validateSchema(v, schema, 'spec', { root: false, definitions: {} }),
    ];
    expect(check({ pairs: [{ a: 1, b: 2 }, { b: 2, a: 1 }, { a: 1 }] }).map((e) => e.field)).toEqual(['spec.pairs[1]', 'spec.pairs[1]']);
    // 200,000 names, the last repeating the first, and as many keyed items with one repeat:
    // pairwise comparison would be 2 x 10^10 steps.
    const names = Array.from({ length: 200_000 }, (_, i) => `n${i}`);
    names.push('n0');
    const ports = Array.from({ length: 200_000 }, (_, i) => ({ name: `p${i}`, protocol: 'TCP' }));
    ports.push({ protocol: 'TCP', name: 'p7' });
    expect(check({ names, ports })).toEqual([
      { type: 'FieldValueDuplicate', field: 'spec.names[200000]', value: 'n0', detail: '' },
      { type: 'FieldValueDuplicate', field: 'spec.ports[200000]', value: new GoValue('map[string]interface {}{"name":"p7", "protocol":"TCP"}'), detail: '' },
      { type: 'FieldValueDuplicate', field: 'spec.names[200000]', value: 'n0', detail: '' },
      { type: 'FieldValueDuplicate', field: 'spec.ports[200000]', value: new GoValue('map[string]interface {}{"name":"p7", "protocol":"TCP"}'), detail: '' },
    ]);
  });

  it('limits list length', () => {
    const [e] = errsOf({ tags: ['a', 'b', 'c'] });
    expect(fieldErrorMessage(e)).toBe('spec.tags: Too many: 3: must have at most 2 items');
  });

  it('requires apiVersion and kind on embedded resources', () => {
    const errs = errsOf({ template: { spec: {} } });
    expect(errs.map((e) => `${e.field}:${e.type}`)).toEqual(['spec.template.apiVersion:FieldValueRequired', 'spec.template.kind:FieldValueRequired']);
  });

  it('validates through fieldOf wrappers and $refs', () => {
    const shared = defineSchema('test.Shared', { type: 'object', properties: { n: { type: 'integer' } } });
    const s: JSONSchemaProps = { type: 'object', properties: { a: fieldOf(shared, { description: 'x' }), b: { $ref: '#/components/schemas/test.Shared' } } };
    const errs = validateSchema({ a: { n: 'x' }, b: { n: 'y' } }, s, '', { definitions: { 'test.Shared': shared } });
    expect(errs.map((e) => e.field)).toEqual(['a.n', 'b.n']);
    const missing = validateSchema({ b: {} }, s);
    expect(missing[0].type).toBe('InternalError');
  });

  it('prefixes paths with basePath and names the root <root>', () => {
    expect(validateSchema(5, { type: 'object' })[0].detail).toBe('<root> in body must be of type object: "integer"');
    expect(validateSchema({ x: 1 }, { type: 'object', properties: { x: { type: 'string' } } }, 'spec')[0].field).toBe('spec.x');
  });

  it('applies anyOf and oneOf as value validations', () => {
    const s: JSONSchemaProps = { type: 'object', properties: { v: { type: 'integer', anyOf: [{ minimum: 10 }, { maximum: 0 }] } } };
    expect(validateSchema({ v: 20 }, s)).toEqual([]);
    expect(validateSchema({ v: 5 }, s)[0].detail).toBe('v in body must match at least one schema in anyOf');
  });
});

describe('compiled validation', () => {
  const schema: JSONSchemaProps = {
    type: 'object',
    required: ['spec'],
    properties: {
      spec: {
        type: 'object',
        properties: {
          mode: { type: 'string', enum: ['a', 'b'] },
          n: { type: 'integer', format: 'int32', minimum: 1 },
          tags: { type: 'array', items: { type: 'string', pattern: '^[a-z]+$' }, 'x-kubernetes-list-type': 'set' },
          labels: { type: 'object', additionalProperties: { type: 'string', maxLength: 3 } },
          either: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
        },
      },
    },
  };

  it('compiles a schema once and reuses the check', () => {
    expect(compileSchemaCheck(schema)).toBe(compileSchemaCheck(schema));
  });

  it('reports what the interpreter reports, in the same order', () => {
    const samples: unknown[] = [
      {},
      { spec: { mode: 'c', n: 0, tags: ['x', 'x', 'Y'], labels: { k: 'long' }, either: true } },
      { spec: { n: 3_000_000_000, tags: 'no', labels: [] } },
      { spec: null },
    ];
    for (const obj of samples) {
      // A definitions map (even empty) selects the interpreter.
      expect(validateSchema(obj, schema)).toEqual(validateSchema(obj, schema, '', { definitions: {} }));
    }
    expect(validateSchema(samples[1], schema).length).toBeGreaterThan(4);
  });
});

describe('required fields left to the kind', () => {
  const schema: JSONSchemaProps = {
    type: 'object',
    required: ['type', 'message'],
    'x-kapi-required-unchecked': ['message'],
    properties: { type: { type: 'string' }, message: { type: 'string' } },
  };

  it.each([
    ['compiled', {}],
    ['interpreted', { definitions: {} }],
  ])('%s: checks the other required fields and not those named unchecked', (_, opts) => {
    expect(validateSchema({ type: 'Ready' }, schema, '', opts)).toEqual([]);
    expect(validateSchema({ message: 'm' }, schema, '', opts)).toEqual([expect.objectContaining({ type: 'FieldValueRequired', field: 'type' })]);
  });

  it('metav1.Condition: a condition without a message passes, one without a reason does not', async () => {
    const { ConditionSchema } = await import('./meta.schemas.js');
    const c = { type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'Fine' };
    expect(validateSchema(c, ConditionSchema)).toEqual([]);
    const { reason: _r, ...noReason } = c;
    expect(validateSchema(noReason, ConditionSchema)).toEqual([expect.objectContaining({ type: 'FieldValueRequired', field: 'reason' })]);
  });
});

describe('schema patterns in RE2 syntax', () => {
  it('takes flag groups anywhere, named groups, \\A and \\z, punctuation escapes and the ungreedy flag', () => {
    expect(compileSchemaPattern('^(?i)(abort|warn)?$')!.test('Abort')).toBe(true);
    expect(compileSchemaPattern('^(?i:x)y$')!.test('Xy')).toBe(true);
    expect(compileSchemaPattern('(?i)^(abort|warn)?$')!.test('WARN')).toBe(true);
    expect(compileSchemaPattern('(?is)^a.b$')!.test('A\nB')).toBe(true);
    expect(compileSchemaPattern('(?P<n>[a-z]+)-\\d')!.test('ab-1')).toBe(true);
    // A flag scoped to part of the pattern stays there.
    expect(compileSchemaPattern('^(?i:x)y$')!.test('XY')).toBe(false);
    expect(compileSchemaPattern('\\Aab\\z')!.test('ab')).toBe(true);
    expect(compileSchemaPattern('^[a-z]\\-[0-9]$')!.test('a-1')).toBe(true);
    expect(compileSchemaPattern('(?U)a+')!.test('aa')).toBe(true);
    expect(compileSchemaPattern('(a)\\1')).toBeNull();
    expect(compileSchemaPattern('([a-z')).toBeNull();
  });

  it('matches in linear time: a pattern that backtracks exponentially in JavaScript answers at once', () => {
    expect(compileSchemaPattern('^(a+)+$')!.test(`${'a'.repeat(80)}b`)).toBe(false);
  });

  it('validates a string against such a pattern', () => {
    const schema = { type: 'object' as const, properties: { s: { type: 'string' as const, pattern: '(?i)^(abort|warn)?$' } } };
    expect(validateSchema({ s: 'Warn' }, schema)).toEqual([]);
    expect(validateSchema({ s: 'stop' }, schema).map((e) => e.detail)).toEqual(["s in body should match '(?i)^(abort|warn)?$'"]);
  });
});
