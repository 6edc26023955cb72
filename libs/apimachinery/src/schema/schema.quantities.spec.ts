import { QuantitySchema } from './schema.proto.js';
import { fieldOf } from './schema.names.js';
import { decodeQuantities } from './schema.quantities.js';
import type { JSONSchemaProps } from './schema.types.js';

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    limits: { type: 'object', additionalProperties: QuantitySchema },
    capacity: fieldOf(QuantitySchema, { description: 'wrapped' }),
    items: { type: 'array', items: { type: 'object', properties: { size: QuantitySchema, name: { type: 'string' } } } },
    plain: { type: 'integer' },
  },
};

describe('decodeQuantities', () => {
  it('rewrites quantities written as numbers or strings into their canonical strings, and nothing else', () => {
    const obj = {
      limits: { cpu: 0.5, memory: 2, storage: '1.5Gi', big: 1500 },
      capacity: 0.001,
      items: [{ size: -3, name: 'a' }, { size: ' 250m ' }, { size: '0.5' }],
      plain: 7,
    };
    decodeQuantities(obj, schema);
    expect(obj).toEqual({
      limits: { cpu: '500m', memory: '2', storage: '1536Mi', big: '1500' },
      capacity: '1m',
      items: [{ size: '-3', name: 'a' }, { size: '250m' }, { size: '500m' }],
      plain: 7,
    });
  });

  it("refuses a string that is no quantity with Kubernetes' message", () => {
    expect(() => decodeQuantities({ limits: { cpu: 'lots' } }, schema)).toThrow(
      "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    );
  });

  it('leaves values of other types for the decode check to refuse', () => {
    const obj = { limits: { cpu: true }, items: 'x' };
    decodeQuantities(obj, schema);
    expect(obj).toEqual({ limits: { cpu: true }, items: 'x' });
  });
});
