import { describe, expect, it } from '@jest/globals';
import { fieldErrorMessage, type JSONSchemaProps } from '@app/apimachinery';
import { CelValidator, escapeCelName, ruleFieldPath } from './crd.cel.js';

const rules = (...r: Record<string, unknown>[]) => ({ 'x-kubernetes-validations': r });

function validator(schema: JSONSchemaProps): CelValidator {
  const { validator: v, errors } = CelValidator.compile(schema, 'schema');
  expect(errors.map(fieldErrorMessage)).toEqual([]);
  return v!;
}

const messages = (v: CelValidator, obj: unknown, old?: unknown, warnings: string[] = []) => v.validate(obj, old, warnings).map(fieldErrorMessage);

const SPEC: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        replicas: { type: 'integer' },
        maxReplicas: { type: 'integer' },
        ratio: { type: 'number' },
        name: { type: 'string', ...rules({ rule: "self.matches('^[a-z]+$')", message: 'must be lower case' }) },
        'dash-name': { type: 'string' },
        tags: { type: 'array', items: { type: 'string' }, ...rules({ rule: 'self.all(t, self.exists_one(u, u == t))', message: 'tags must be unique' }) },
        labels: { type: 'object', additionalProperties: { type: 'string', ...rules({ rule: 'self.size() <= 5' }) } },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: {
            type: 'object',
            properties: { name: { type: 'string' }, port: { type: 'integer', ...rules({ rule: 'self == oldSelf', message: 'port is immutable' }) } },
          },
        },
        size: { 'x-kubernetes-int-or-string': true },
      },
      ...rules(
        {
          rule: '!has(self.replicas) || self.replicas <= self.maxReplicas',
          messageExpression: "'replicas (' + string(self.replicas) + ') above ' + string(self.maxReplicas)",
        },
        { rule: '!has(self.ratio) || self.ratio < 1.0', message: 'ratio below one', fieldPath: '.ratio', reason: 'FieldValueForbidden' },
        { rule: '!has(self.dash__dash__name) || self.dash__dash__name != "x"' },
      ),
    },
  },
  ...rules({ rule: "self.metadata.name.startsWith('ok-')", message: 'name must start with ok-' }),
};

const obj = (spec: Record<string, unknown>, name = 'ok-a') => ({ apiVersion: 'g/v1', kind: 'K', metadata: { name, namespace: 'default', uid: 'u' }, spec });

describe('CEL validation rules of custom resources', () => {
  it('escapes property names as kube does', () => {
    expect(escapeCelName('foo')).toBe('foo');
    expect(escapeCelName('foo-bar')).toBe('foo__dash__bar');
    expect(escapeCelName('a.b/c__d')).toBe('a__dot__b__slash__c__underscores__d');
    expect(escapeCelName('namespace')).toBe('__namespace__');
    expect(escapeCelName('1a')).toBeUndefined();
    expect(escapeCelName('a b')).toBeUndefined();
  });

  it('passes a valid object and reports each failed rule at its node', () => {
    const v = validator(SPEC);
    expect(messages(v, obj({ replicas: 1, maxReplicas: 2, ratio: 0.5, name: 'abc', tags: ['a', 'b'], labels: { a: 'x' }, 'dash-name': 'y' }))).toEqual([]);
    expect(
      messages(v, obj({ replicas: 3, maxReplicas: 2, ratio: 1.5, name: 'ABC', tags: ['a', 'a'], labels: { big: 'toolong' }, 'dash-name': 'x' }, 'bad')),
    ).toEqual([
      '<nil>: Invalid value: "object": name must start with ok-',
      'spec: Invalid value: "object": replicas (3) above 2',
      'spec.ratio: Forbidden: ratio below one',
      'spec: Invalid value: "object": failed rule: !has(self.dash__dash__name) || self.dash__dash__name != "x"',
      'spec.name: Invalid value: "string": must be lower case',
      'spec.tags: Invalid value: "array": tags must be unique',
      'spec.labels[big]: Invalid value: "string": failed rule: self.size() <= 5',
    ]);
  });

  it('shows integers as int and numbers as double, metadata as name and generateName only', () => {
    const v = validator({
      type: 'object',
      properties: {
        spec: { type: 'object', properties: { n: { type: 'integer' }, d: { type: 'number' } }, ...rules({ rule: 'self.n + 1 == 3 && self.d * 2.0 == 3.0' }) },
      },
    });
    expect(messages(v, obj({ n: 2, d: 1.5 }))).toEqual([]);
    expect(messages(v, obj({ n: 1, d: 1.5 }))).toEqual(['spec: Invalid value: "object": failed rule: self.n + 1 == 3 && self.d * 2.0 == 3.0']);
    expect(messages(validator(SPEC), obj({}))).toEqual([]);
  });

  it('reports a runtime error as kube does', () => {
    const v = validator({ type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'integer' } }, ...rules({ rule: 'self.a > 0' }) } } });
    expect(messages(v, obj({}))).toEqual(['spec: Invalid value: "object": no such key: a evaluating rule: self.a > 0']);
  });

  it('runs transition rules on correlated old values only, and ratchets unchanged values into warnings', () => {
    const v = validator(SPEC);
    const before = obj({ ports: [{ name: 'http', port: 80 }], name: 'ABC' });
    expect(messages(v, before)).toEqual(['spec.name: Invalid value: "string": must be lower case']);
    // The port changed: the transition rule fails; the unchanged invalid name only warns.
    const warnings: string[] = [];
    expect(
      messages(
        v,
        obj({
          ports: [
            { name: 'http', port: 81 },
            { name: 'new', port: 1 },
          ],
          name: 'ABC',
        }),
        before,
        warnings,
      ),
    ).toEqual(['spec.ports[0].port: Invalid value: "integer": port is immutable']);
    expect(warnings).toEqual(['spec.name: Invalid value: "string": must be lower case']);
    // Reordered items correlate by key.
    expect(
      messages(
        v,
        obj({
          ports: [
            { name: 'x', port: 9 },
            { name: 'http', port: 80 },
          ],
        }),
        before,
      ),
    ).toEqual([]);
  });

  it('correlates the items of a long map list by key in one pass', () => {
    const v = validator(SPEC);
    const n = 100_000;
    const ports = Array.from({ length: n }, (_, i) => ({ name: `p${i}`, port: i }));
    const before = obj({ ports });
    // Reversed, so every old item is far from its new place, and the first one (old p0) changed.
    const after = obj({ ports: ports.map((p, i) => (i === 0 ? { name: 'p0', port: 7 } : p)).reverse() });
    expect(messages(v, after, before)).toEqual([`spec.ports[${n - 1}].port: Invalid value: "integer": port is immutable`]);
  });

  it('gives optional oldSelf to rules that ask for it', () => {
    const v = validator({
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: { mode: { type: 'string' } },
          ...rules({
            rule: "!oldSelf.hasValue() || oldSelf.value().mode == self.mode || self.mode == 'open'",
            optionalOldSelf: true,
            message: 'mode may only open',
          }),
        },
      },
    });
    expect(messages(v, obj({ mode: 'closed' }))).toEqual([]);
    expect(messages(v, obj({ mode: 'closed' }), obj({ mode: 'open' }))).toEqual(['spec: Invalid value: "object": mode may only open']);
  });

  it('stops a rule that reads too many elements', () => {
    const v = validator({
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: { l: { type: 'array', items: { type: 'integer' }, ...rules({ rule: 'self.all(x, self.all(y, x != y || true))' }) } },
        },
      },
    });
    const l = Array.from({ length: 2000 }, (_, i) => i);
    expect(messages(v, obj({ l }))).toEqual([
      '<nil>: Invalid value: "object": validation failed due to running out of cost budget, no further validation rules will be run',
    ]);
    expect(v.validate(obj({ l: l.slice(0, 10) }), undefined, [], 1000)).toEqual([]);
  });

  it('matches with RE2 in linear time: a pattern that backtracks exponentially in JavaScript returns at once', () => {
    const re = (rule: string) =>
      validator({ type: 'object', properties: { spec: { type: 'object', properties: { s: { type: 'string' } }, ...rules({ rule }) } } });
    const v = re("!self.s.matches('(a+)+$')");
    expect(messages(v, obj({ s: `${'a'.repeat(60)}b` }))).toEqual([]);
    expect(messages(v, obj({ s: 'aaa' }))).toEqual(['spec: Invalid value: "object": failed rule: !self.s.matches(\'(a+)+$\')']);
    // RE2 syntax: a backreference is refused when the rule runs.
    expect(messages(re("self.s.matches('(a)\\\\1')"), obj({ s: 'aa' }))[0]).toMatch(
      /^spec: Invalid value: "object": invalid regular expression: .* evaluating rule: /,
    );
  });

  it('offers kube’s list and string functions', () => {
    const v = validator({
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: { l: { type: 'array', items: { type: 'integer' } }, s: { type: 'string' } },
          ...rules(
            { rule: 'self.l.isSorted() && self.l.sum() == 6 && self.l.min() == 1 && self.l.max() == 3 && self.l.indexOf(2) == 1' },
            {
              rule: "self.s.charAt(1) == 'b' && self.s.replace('b', 'x') == 'axc' && self.s.matches('^[a-c]+$') && matches(self.s, 'b') && !self.s.matches('d')",
            },
            { rule: "self.s.lowerAscii() == 'abc' && self.s.indexOf('c') == 2 && self.s.split('b') == ['a', 'c']" },
          ),
        },
      },
    });
    expect(messages(v, obj({ l: [1, 2, 3], s: 'abc' }))).toEqual([]);
  });

  it('shows strings of the byte, date, date-time and duration formats as bytes, timestamps and durations', () => {
    const v = validator({
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            start: { type: 'string', format: 'date-time' },
            end: { type: 'string', format: 'date-time', ...rules({ rule: "self > timestamp('2000-01-01T00:00:00Z')", message: 'end before 2000' }) },
            day: { type: 'string', format: 'date' },
            timeout: { type: 'string', format: 'duration', ...rules({ rule: "self <= duration('1h')", message: 'timeout above an hour' }) },
            data: { type: 'string', format: 'byte', ...rules({ rule: "self.size() <= 4 && self != b'bad'", message: 'data too long or bad' }) },
            plain: { type: 'string', format: 'hostname' },
          },
          ...rules(
            { rule: 'self.start < self.end', message: 'start must come before end' },
            { rule: "self.end - self.start <= duration('24h')", message: 'more than a day' },
            { rule: "self.day.getFullYear() == 2024 && self.day == timestamp('2024-02-29T00:00:00Z')", message: 'not the leap day' },
            { rule: "self.plain.startsWith('h')", message: 'plain strings stay strings' },
          ),
        },
      },
    });
    const good = { start: '2024-02-29T10:00:00Z', end: '2024-02-29t12:30:00.5+01:00', day: '2024-02-29', timeout: '1h', data: 'YWJj', plain: 'host' };
    expect(messages(v, obj(good))).toEqual([]);
    expect(messages(v, obj({ ...good, start: '2024-03-01T00:00:00Z', timeout: '90m', data: 'YmFk', day: '2024-02-28' }))).toEqual([
      'spec: Invalid value: "object": start must come before end',
      'spec: Invalid value: "object": not the leap day',
      'spec.timeout: Invalid value: "string": timeout above an hour',
      'spec.data: Invalid value: "string": data too long or bad',
    ]);
    expect(messages(v, obj({ ...good, end: '2024-03-02T00:00:00Z' }))).toEqual(['spec: Invalid value: "object": more than a day']);
    // A value that does not parse stays a string: the rules that use it fail with a type error.
    expect(messages(v, obj({ ...good, timeout: 'an hour' }))[0]).toBe(
      "spec.timeout: Invalid value: \"string\": Variable 'self' is not of type 'google.protobuf.Duration', got 'string' evaluating rule: timeout above an hour",
    );
    // Compiled against the type kube gives the format: a timestamp has no size().
    const { errors } = CelValidator.compile(
      { type: 'object', properties: { t: { type: 'string', format: 'date-time', ...rules({ rule: 'self.size() > 0' }) } } },
      's',
    );
    expect(errors.map(fieldErrorMessage).join('\n')).toContain('compilation failed');
  });

  it('refuses what kube refuses when the definition is written', () => {
    const { errors } = CelValidator.compile(
      {
        type: 'object',
        properties: {
          spec: {
            type: 'object',
            properties: {
              a: { type: 'integer' },
              l: { type: 'array', items: { type: 'object', properties: { x: { type: 'string' } }, ...rules({ rule: 'self.x == oldSelf.x' }) } },
            },
            ...rules({ rule: '' }, { rule: 'self.a > 0', fieldPath: '.b' }, { rule: 'self.a > 0', messageExpression: 'self.a' }),
          },
        },
      },
      's',
    );
    expect(errors.map(fieldErrorMessage)).toEqual([
      's.properties[spec].x-kubernetes-validations[0].rule: Required value: rule is not specified',
      's.properties[spec].x-kubernetes-validations[1].fieldPath: Invalid value: ".b": fieldPath must be a valid path: does not refer to a valid field',
      's.properties[spec].x-kubernetes-validations[2].messageExpression: Invalid value: "self.a": messageExpression compilation failed: must evaluate to a string',
      's.properties[spec].properties[l].items.x-kubernetes-validations[0].rule: Invalid value: "self.x == oldSelf.x": oldSelf cannot be used on the uncorrelatable portion of the schema within s.properties[spec].properties[l].items',
    ]);
  });

  it('normalizes a rule fieldPath against the schema', () => {
    const s: JSONSchemaProps = {
      type: 'object',
      properties: { a: { type: 'object', properties: { 'b.c': { type: 'object', additionalProperties: { type: 'string' } } } } },
    };
    expect(ruleFieldPath(".a['b.c']['k']", s)).toEqual({ path: 'a.b.c[k]' });
    expect(ruleFieldPath('.x', s)).toEqual({ error: 'does not refer to a valid field' });
  });
});
