import { applyDefaults, findUnknownFields, validateSchema } from '@app/apimachinery';
import { EventSchema } from './event.schema.js';

type Doc = Record<string, unknown>;

describe('Event schema', () => {
  it('defaults the string fields and requires involvedObject-shaped data', () => {
    const ev: Doc = { metadata: { name: 'e' }, involvedObject: { kind: 'Pod', name: 'p' }, eventTime: '2024-01-01T00:00:00.123456Z' };
    applyDefaults(ev, EventSchema);
    expect(ev).toMatchObject({ reportingComponent: '', reportingInstance: '', source: {} });
    expect(validateSchema(ev, EventSchema)).toEqual([]);
    expect(findUnknownFields({ involvedObject: { kind: 'Pod', bogus: 1 } }, EventSchema)).toEqual(['involvedObject.bogus']);
  });
});
