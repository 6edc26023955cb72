/**
 * events.k8s.io/v1 Event validation (pkg/apis/core/validation ValidateEventCreate and
 * ValidateEventUpdate for a request at events.k8s.io/v1): the legacy checks core/v1 Events get,
 * then the strict ones of the newer API: eventTime set, type Normal or Warning, the deprecated
 * core fields unset, a series of at least 2 with its last observed time, and on update every
 * field but the series immutable. Kubernetes checks the internal (core) object, so the messages
 * name the core fields (involvedObject, message, firstTimestamp, reportingController, ...).
 */
import { isDeepStrictEqual } from 'node:util';
import type { FieldError, KubeObject } from '@app/apimachinery';
import type { Strategy } from '@app/registry';
import { validateEvent } from '../../core/event/event.strategy.js';
import { eventToCore } from './event.conversion.js';

type Obj = Record<string, unknown>;
const isSet = (v: unknown): boolean => v !== undefined && v !== null && v !== '' && v !== 0;

/** validateV1EventSeries on the core shape. */
function validateSeries(core: KubeObject): FieldError[] {
  const series = core.series as Obj | undefined | null;
  if (series === undefined || series === null) return [];
  const errs: FieldError[] = [];
  if (!(typeof series.count === 'number' && series.count >= 2))
    errs.push({ type: 'FieldValueInvalid', field: 'series.count', value: '', detail: 'should be at least 2' });
  if (!isSet(series.lastObservedTime)) errs.push({ type: 'FieldValueRequired', field: 'series.lastObservedTime', detail: '' });
  return errs;
}

/** ValidateEventCreate at events.k8s.io/v1, given the object in the served shape. */
export function validateEventsV1Create(obj: KubeObject): FieldError[] {
  const core = eventToCore(obj);
  const errs = [...validateEvent(core), ...validateSeries(core)];
  if (!isSet(core.eventTime)) errs.push({ type: 'FieldValueRequired', field: 'eventTime', detail: '' });
  if (core.type !== 'Normal' && core.type !== 'Warning') {
    errs.push({ type: 'FieldValueInvalid', field: 'type', value: '', detail: `has invalid value: ${typeof core.type === 'string' ? core.type : ''}` });
  }
  const unset = (field: string, v: unknown) => {
    if (isSet(v)) errs.push({ type: 'FieldValueInvalid', field, value: '', detail: 'needs to be unset' });
  };
  unset('firstTimestamp', core.firstTimestamp);
  unset('lastTimestamp', core.lastTimestamp);
  unset('count', core.count);
  const source = (core.source ?? {}) as Obj;
  if (isSet(source.component) || isSet(source.host)) errs.push({ type: 'FieldValueInvalid', field: 'source', value: '', detail: 'needs to be unset' });
  return errs;
}

/**
 * The fields ValidateEventUpdate keeps immutable, by their core names, in its order; `reason`
 * stands twice there, so a changed reason is reported twice, as by Kubernetes.
 */
const IMMUTABLE = [
  'involvedObject',
  'reason',
  'message',
  'source',
  'firstTimestamp',
  'lastTimestamp',
  'count',
  'reason',
  'type',
  'eventTime',
  'action',
  'related',
  'reportingComponent',
  'reportingInstance',
];

/** ValidateEventUpdate at events.k8s.io/v1, given both objects in the served shape. */
export function validateEventsV1Update(obj: KubeObject, old: KubeObject): FieldError[] {
  const core = eventToCore(obj);
  const prev = eventToCore(old);
  const errs = validateEvent(core);
  if (!isDeepStrictEqual(core.series, prev.series)) errs.push(...validateSeries(core));
  for (const f of IMMUTABLE) {
    if (!isDeepStrictEqual(core[f] ?? null, prev[f] ?? null)) {
      errs.push({ type: 'FieldValueInvalid', field: f === 'reportingComponent' ? 'reportingController' : f, value: core[f], detail: 'field is immutable' });
    }
  }
  return errs;
}

/** The events.k8s.io/v1 Event strategy. */
export const eventsV1Strategy: Strategy = {
  validate: validateEventsV1Create,
  validateUpdate: validateEventsV1Update,
};
