import type { JSONSchemaProps } from './schema.types.js';
import { applyDefaults } from './schema.defaults.js';
import { fieldOf } from './schema.names.js';

const shared: JSONSchemaProps = { type: 'object', properties: { level: { type: 'string', default: 'info' } } };
const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      default: {},
      properties: {
        replicas: { type: 'integer', default: 1 },
        strategy: { type: 'object', default: { type: 'Rolling' }, properties: { type: { type: 'string' }, maxSurge: { type: 'integer', default: 25 } } },
        opt: { type: 'string', nullable: true, default: 'x' },
        req: { type: 'string', default: 'd' },
        ports: { type: 'array', items: { type: 'object', properties: { protocol: { type: 'string', default: 'TCP' } } } },
        byName: { type: 'object', additionalProperties: { type: 'object', properties: { weight: { type: 'integer', default: 1 } } } },
        logging: fieldOf(shared, { description: 'with a field-level default', default: {} }),
        list: { type: 'array', default: ['a'], items: { type: 'string' } },
      },
    },
  },
};

describe('applyDefaults', () => {
  it('fills absent fields recursively, including inside defaulted values', () => {
    const obj: Record<string, unknown> = {};
    applyDefaults(obj, schema);
    expect(obj).toEqual({
      spec: { replicas: 1, strategy: { type: 'Rolling', maxSurge: 25 }, opt: 'x', req: 'd', logging: { level: 'info' }, list: ['a'] },
    });
  });

  it('never replaces present values; replaces null only where not nullable', () => {
    const obj = { spec: { replicas: 5, strategy: { type: 'Recreate', maxSurge: 0 }, opt: null, req: null, list: [] } };
    applyDefaults(obj, schema);
    expect(obj.spec).toMatchObject({ replicas: 5, strategy: { type: 'Recreate', maxSurge: 0 }, opt: null, req: 'd', list: [] });
  });

  it('defaults list items and map values', () => {
    const obj = { spec: { ports: [{}, { protocol: 'UDP' }], byName: { a: {}, b: { weight: 3 } } } };
    applyDefaults(obj, schema);
    expect(obj.spec.ports).toEqual([{ protocol: 'TCP' }, { protocol: 'UDP' }]);
    expect(obj.spec.byName).toEqual({ a: { weight: 1 }, b: { weight: 3 } });
  });

  it('copies defaults so objects never share them', () => {
    const a: { spec?: { strategy?: { type?: string } } } = {};
    const b: { spec?: { strategy?: { type?: string } } } = {};
    applyDefaults(a, schema);
    applyDefaults(b, schema);
    a.spec!.strategy!.type = 'changed';
    expect(b.spec!.strategy!.type).toBe('Rolling');
    expect((schema.properties!.spec.properties!.strategy.default as { type: string }).type).toBe('Rolling');
  });
});
