import { SubtreePredicate } from './schema.subtree.js';
import type { JSONSchemaProps } from './schema.types.js';

describe('SubtreePredicate', () => {
  const leaf: JSONSchemaProps = { type: 'string', default: 'x' };
  const schema: JSONSchemaProps = {
    type: 'object',
    properties: {
      plain: { type: 'object', properties: { a: { type: 'string' } } },
      deep: { type: 'array', items: { type: 'object', properties: { d: leaf } } },
    },
  };

  it('finds a match anywhere below a node and none where there is none', () => {
    const p = new SubtreePredicate((s) => s.default !== undefined);
    expect(p.has(schema)).toBe(true);
    expect(p.has(schema.properties!.plain!)).toBe(false);
    expect(p.has(schema.properties!.deep!)).toBe(true);
  });

  it('ends on recursive schemas', () => {
    const rec: JSONSchemaProps = { type: 'object', properties: {} };
    rec.properties!.self = rec;
    expect(new SubtreePredicate((s) => s.default !== undefined).has(rec)).toBe(false);
  });
});
