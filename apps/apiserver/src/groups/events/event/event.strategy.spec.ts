import type { KubeObject } from '@app/apimachinery';
import { eventFromCore, eventToCore } from './event.conversion.js';
import { validateEventsV1Create, validateEventsV1Update } from './event.strategy.js';

const ev = (extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'events.k8s.io/v1',
  kind: 'Event',
  metadata: { name: 'e', namespace: 'ns' },
  eventTime: '2026-01-01T00:00:00.000000Z',
  reportingController: 'example.com/c',
  reportingInstance: 'c-1',
  action: 'Do',
  reason: 'Done',
  regarding: { kind: 'Pod', name: 'p', namespace: 'ns' },
  note: 'n',
  type: 'Normal',
  deprecatedSource: {},
  ...extra,
});
const fields = (errs: { field: string; detail?: string }[]) => errs.map((e) => `${e.field}: ${e.detail ?? ''}`);

describe('events.k8s.io/v1 Event conversion', () => {
  it('renames the fields both ways and round-trips', () => {
    const core = eventToCore(ev({ deprecatedCount: 2, deprecatedFirstTimestamp: '2026-01-01T00:00:00Z' }));
    expect(core).toEqual({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'e', namespace: 'ns' },
      eventTime: '2026-01-01T00:00:00.000000Z',
      reportingComponent: 'example.com/c',
      reportingInstance: 'c-1',
      action: 'Do',
      reason: 'Done',
      involvedObject: { kind: 'Pod', name: 'p', namespace: 'ns' },
      message: 'n',
      type: 'Normal',
      source: {},
      count: 2,
      firstTimestamp: '2026-01-01T00:00:00Z',
    });
    expect(eventFromCore(core)).toEqual(ev({ deprecatedCount: 2, deprecatedFirstTimestamp: '2026-01-01T00:00:00Z' }));
  });
});

describe('events.k8s.io/v1 Event validation', () => {
  it('accepts a complete new-style event', () => {
    expect(validateEventsV1Create(ev())).toEqual([]);
  });
  it('refuses what only the newer API refuses, naming the core fields', () => {
    const errs = validateEventsV1Create(
      ev({
        eventTime: undefined,
        type: '',
        deprecatedCount: 1,
        deprecatedLastTimestamp: '2026-01-01T00:00:00Z',
        deprecatedSource: { host: 'h' },
        series: { count: 1 },
      }),
    );
    expect(fields(errs)).toEqual([
      'series.count: should be at least 2',
      'series.lastObservedTime: ',
      'eventTime: ',
      'type: has invalid value: ',
      'lastTimestamp: needs to be unset',
      'count: needs to be unset',
      'source: needs to be unset',
    ]);
  });
  it('keeps every field but the series on update', () => {
    expect(validateEventsV1Update(ev({ series: { count: 2, lastObservedTime: '2026-01-01T00:01:00.000000Z' } }), ev())).toEqual([]);
    expect(fields(validateEventsV1Update(ev({ note: 'x', reportingController: 'example.com/d' }), ev()))).toEqual([
      'message: field is immutable',
      'reportingController: field is immutable',
    ]);
  });
});
