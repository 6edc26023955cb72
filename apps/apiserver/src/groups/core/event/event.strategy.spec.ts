import type { KubeObject } from '@app/apimachinery';
import { validateEvent } from './event.strategy.js';

const ev = (extra: Record<string, unknown>, ns = 'team'): KubeObject => ({ apiVersion: 'v1', kind: 'Event', metadata: { name: 'e', namespace: ns }, ...extra });

describe('Event validation (legacyValidateEvent)', () => {
  it('an Event without eventTime must name its own namespace', () => {
    expect(validateEvent(ev({ involvedObject: { namespace: 'team' } }))).toEqual([]);
    expect(validateEvent(ev({ involvedObject: { namespace: 'other' } }))).toEqual([
      { type: 'FieldValueInvalid', field: 'involvedObject.namespace', value: 'other', detail: 'does not match event.namespace' },
    ]);
    // Empty is accepted only in the default namespace.
    expect(validateEvent(ev({ involvedObject: {} }, 'default'))).toEqual([]);
    expect(validateEvent(ev({ involvedObject: {} }))).toHaveLength(1);
  });

  it('an Event with eventTime must say who reported it and what happened', () => {
    const errs = validateEvent(ev({ eventTime: '2024-01-01T00:00:00.000000Z', involvedObject: { namespace: 'team' } }));
    expect(errs.map((e) => `${e.field}:${e.type}`)).toEqual([
      'reportingController:FieldValueRequired',
      'reportingController:FieldValueInvalid',
      'reportingController:FieldValueInvalid',
      'reportingInstance:FieldValueRequired',
      'action:FieldValueRequired',
      'reason:FieldValueRequired',
    ]);
    const ok = ev({
      eventTime: '2024-01-01T00:00:00.000000Z',
      involvedObject: { namespace: 'team' },
      reportingComponent: 'c',
      reportingInstance: 'i',
      action: 'A',
      reason: 'R',
    });
    expect(validateEvent(ok)).toEqual([]);
  });
});
