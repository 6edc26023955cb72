import { defineSchema, fieldOf } from './schema.names.js';
import { MicroTimeSchema, TimeSchema } from './meta.schemas.js';
import { decodeTimes, TimeDecodeError } from './schema.times.js';
import type { JSONSchemaProps } from './schema.types.js';

const schema: JSONSchemaProps = defineSchema('test.Times', {
  type: 'object',
  properties: {
    at: fieldOf(TimeSchema, { description: 'a Time' }),
    micro: fieldOf(MicroTimeSchema, { description: 'a MicroTime' }),
    nested: { type: 'object', properties: { list: { type: 'array', items: MicroTimeSchema } } },
    other: { type: 'string' },
  },
});

function decode(obj: Record<string, unknown>): Record<string, unknown> {
  decodeTimes(obj, schema);
  return obj;
}

describe('decodeTimes (metav1.Time and MicroTime as Go decodes them)', () => {
  it('stores a Time in UTC with second precision, a fraction dropped', () => {
    expect(decode({ at: '2024-01-01T12:00:00.75+02:00' }).at).toBe('2024-01-01T10:00:00Z');
    expect(decode({ at: '2024-01-01T10:00:00Z' }).at).toBe('2024-01-01T10:00:00Z');
  });

  it('stores a MicroTime in UTC, its six fractional digits kept', () => {
    expect(decode({ micro: '2024-01-01T10:00:00.123456+02:00' }).micro).toBe('2024-01-01T08:00:00.123456Z');
    expect(decode({ nested: { list: ['2024-01-01T00:00:00.000001-01:00'] } })).toEqual({ nested: { list: ['2024-01-01T01:00:00.000001Z'] } });
  });

  it('refuses a MicroTime without exactly six fractional digits, naming the layout and the path', () => {
    for (const v of ['2024-01-01T10:00:00Z', '2024-01-01T10:00:00.123Z', '2024-01-01T10:00:00.1234567Z', 'soon']) {
      let err: unknown;
      try {
        decode({ micro: v });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(TimeDecodeError);
      expect((err as TimeDecodeError).message).toContain(`parsing time ${JSON.stringify(v)} as "2006-01-02T15:04:05.000000Z07:00"`);
      expect((err as TimeDecodeError).path).toBe('.micro');
    }
  });

  it('refuses a day out of range and a value that is no string; leaves null and other fields alone', () => {
    expect(() => decode({ at: '2024-02-30T00:00:00Z' })).toThrow(TimeDecodeError);
    expect(() => decode({ at: 5 })).toThrow(TimeDecodeError);
    expect(decode({ at: null, other: 'x' })).toEqual({ at: null, other: 'x' });
  });
});
