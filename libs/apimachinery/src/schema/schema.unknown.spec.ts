import type { JSONSchemaProps } from './schema.types.js';
import { dropNullFields, findUnknownFields, strictDecodingErrorMessage, unknownFieldWarnings } from './schema.unknown.js';
import { prune } from './schema.prune.js';
import { objectRootSchema } from './meta.schemas.js';

const schema: JSONSchemaProps = objectRootSchema({ group: 'x.io', version: 'v1', kind: 'Thing' }, 'test', {
  spec: {
    type: 'object',
    properties: {
      containers: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
      data: { type: 'object', additionalProperties: { type: 'object', properties: { v: { type: 'string' } } } },
      free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { known: { type: 'object', properties: { a: { type: 'string' } } } } },
      mode: { type: 'string' },
      opt: { type: 'string', nullable: true },
      template: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object', properties: {} } } },
    },
  },
});

const sample = () => ({
  apiVersion: 'x.io/v1',
  kind: 'Thing',
  metadata: { name: 'n', labels: { a: 'b' }, bogus: 1, creationTimestamp: null },
  spec: {
    foo: 1,
    containers: [{ name: 'c', image: 'x' }],
    data: { k: { v: 'x', w: 'y' } },
    free: { anything: [1, 2], known: { a: 'x', b: 'y' } },
    mode: null,
    opt: null,
    template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', zzz: 1 }, spec: { q: 1 } },
  },
  extra: true,
});

describe('findUnknownFields', () => {
  it('reports unknown fields with Kubernetes paths in document order, without mutating', () => {
    const obj = sample();
    const before = JSON.stringify(obj);
    expect(findUnknownFields(obj, schema)).toEqual([
      'metadata.bogus',
      'spec.foo',
      'spec.containers[0].image',
      'spec.data[k].w',
      'spec.free.known.b',
      'spec.template.metadata.zzz',
      'spec.template.spec.q',
      'extra',
    ]);
    expect(JSON.stringify(obj)).toBe(before);
  });

  it('treats apiVersion, kind and metadata as known on a root that does not declare them (custom resources)', () => {
    const bare: JSONSchemaProps = { type: 'object', properties: { spec: { type: 'object', properties: {} } } };
    expect(findUnknownFields({ apiVersion: 'a/v1', kind: 'K', metadata: { name: 'x', nope: 1 }, spec: {} }, bare)).toEqual(['metadata.nope']);
    expect(findUnknownFields({ apiVersion: 'a/v1' }, bare, { root: false })).toEqual(['apiVersion']);
  });

  it('formats strict errors and warnings as kube-apiserver does', () => {
    expect(strictDecodingErrorMessage(['spec.foo', 'bar'])).toBe('strict decoding error: unknown field "spec.foo", unknown field "bar"');
    expect(unknownFieldWarnings(['spec.foo'])).toEqual(['unknown field "spec.foo"']);
  });
});

describe('prune', () => {
  it('removes exactly the unknown fields and returns their paths', () => {
    const obj = sample();
    const removed = prune(obj, schema);
    expect(removed).toEqual(findUnknownFields(sample(), schema));
    expect(findUnknownFields(obj, schema)).toEqual([]);
    expect(obj.spec.free).toEqual({ anything: [1, 2], known: { a: 'x' } });
    expect(obj.spec.containers).toEqual([{ name: 'c' }]);
    expect('extra' in obj).toBe(false);
  });

  it('drops nulls of non-nullable fields but keeps nullable ones', () => {
    const obj = sample();
    prune(obj, schema);
    expect('creationTimestamp' in obj.metadata).toBe(false);
    expect('mode' in obj.spec).toBe(false);
    expect(obj.spec.opt).toBeNull();
  });

  it('keeps everything below additionalProperties: true', () => {
    const s: JSONSchemaProps = { type: 'object', properties: { m: { type: 'object', additionalProperties: true } } };
    const o = { m: { a: { b: 1 } } };
    expect(prune(o, s, { root: false })).toEqual([]);
    expect(o).toEqual({ m: { a: { b: 1 } } });
  });
});

describe('dropNullFields', () => {
  it('drops the nulls of declared non-nullable fields, keeps nullable ones and unknown fields, and removes nothing else', () => {
    const s: JSONSchemaProps = {
      type: 'object',
      properties: {
        a: { type: 'object', properties: { b: { type: 'string' }, n: { type: 'string', nullable: true } } },
        list: { type: 'array', items: { type: 'object', properties: { x: { type: 'object' } } } },
      },
    };
    const o: Record<string, unknown> = { a: { b: null, n: null }, list: [{ x: null }, { x: {} }], other: null };
    dropNullFields(o, s, { root: false });
    expect(o).toEqual({ a: { n: null }, list: [{}, { x: {} }], other: null });
  });
});
