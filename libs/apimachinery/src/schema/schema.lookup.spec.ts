import type { JSONSchemaProps } from './schema.types.js';
import { listMergeInfo, mapMergeType, patchMeta, schemaAt } from './schema.lookup.js';
import { LabelSelectorSchema, ObjectMetaSchema, OwnerReferenceSchema } from './meta.schemas.js';

const root: JSONSchemaProps = {
  type: 'object',
  properties: {
    metadata: { allOf: [ObjectMetaSchema], description: 'meta' },
    spec: {
      type: 'object',
      properties: {
        containers: {
          type: 'array',
          items: { type: 'object', properties: { name: { type: 'string' }, env: { type: 'array', items: { type: 'object' } } } },
          'x-kubernetes-patch-strategy': 'merge',
          'x-kubernetes-patch-merge-key': 'name',
        },
        args: { type: 'array', items: { type: 'string' } },
        volumes: { type: 'array', items: { type: 'object' }, 'x-kubernetes-patch-strategy': 'merge,retainKeys', 'x-kubernetes-patch-merge-key': 'name' },
        data: { type: 'object', additionalProperties: { type: 'string', format: 'byte' } },
      },
    },
  },
};

describe('schemaAt', () => {
  it('follows properties, list items, map values and wrappers', () => {
    expect(schemaAt(root, ['spec', 'containers', 0, 'name'])?.type).toBe('string');
    expect(schemaAt(root, ['spec', 'data', 'any.key'])?.format).toBe('byte');
    expect(schemaAt(root, ['metadata', 'ownerReferences', 3])).toBe(OwnerReferenceSchema);
    expect(schemaAt(root, ['metadata'])?.description).toBe('meta');
    expect(schemaAt(root, ['spec', 'nope'])).toBeUndefined();
    expect(schemaAt(root, [])).toBe(root);
  });
});

describe('listMergeInfo', () => {
  it('reads x-kubernetes-list-type and map keys', () => {
    expect(listMergeInfo(ObjectMetaSchema.properties!.ownerReferences)).toEqual({ listType: 'map', keys: ['uid'] });
    expect(listMergeInfo(ObjectMetaSchema.properties!.finalizers)).toEqual({ listType: 'set', keys: [] });
    expect(listMergeInfo(ObjectMetaSchema.properties!.managedFields)).toEqual({ listType: 'atomic', keys: [] });
  });

  it('falls back to patch strategy merge + merge key, else atomic', () => {
    expect(listMergeInfo(schemaAt(root, ['spec', 'containers'])!)).toEqual({ listType: 'map', keys: ['name'] });
    expect(listMergeInfo(schemaAt(root, ['spec', 'volumes'])!)).toEqual({ listType: 'map', keys: ['name'] });
    expect(listMergeInfo(schemaAt(root, ['spec', 'args'])!)).toEqual({ listType: 'atomic', keys: [] });
    expect(listMergeInfo({ type: 'array', items: { type: 'string' }, 'x-kubernetes-patch-strategy': 'merge' })).toEqual({ listType: 'set', keys: [] });
  });

  it('exposes patch strategies and map types', () => {
    expect(patchMeta(schemaAt(root, ['spec', 'volumes'])!)).toEqual({ strategies: ['merge', 'retainKeys'], mergeKey: 'name' });
    expect(patchMeta(schemaAt(root, ['spec', 'args'])!)).toEqual({ strategies: [] });
    expect(mapMergeType(LabelSelectorSchema)).toBe('atomic');
    expect(mapMergeType(ObjectMetaSchema.properties!.labels)).toBe('granular');
  });
});
