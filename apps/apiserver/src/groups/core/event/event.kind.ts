/**
 * core/v1 Event: its declaration, with kubectl's columns and the field selectors Kubernetes
 * offers for events (pkg/registry/core/event).
 */
import { ageOf, humanDuration, type KindDeclaration, type TableColumn } from '@app/registry';
import { asMap, str } from '../core.helpers.js';
import { EventSchema } from './event.schema.js';
import type { KubeObject } from '@app/apimachinery';
import { eventStrategy } from './event.strategy.js';

/** The names an Event API gives the fields kubectl's columns read (core/v1's, or events.k8s.io/v1's). */
export interface EventFieldNames {
  regarding: string;
  message: string;
  lastTimestamp: string;
}

/**
 * kubectl's columns for Events (printEvent): LAST SEEN (series, last timestamp, eventTime, then
 * creation), TYPE, REASON, OBJECT, MESSAGE, and AGE with -o wide; `names` are the API's fields.
 */
export function eventColumns(names: EventFieldNames): TableColumn[] {
  const lastSeen = (o: KubeObject): string | undefined =>
    (asMap(o.series).lastObservedTime as string | undefined) ??
    (o[names.lastTimestamp] as string | undefined) ??
    (o.eventTime as string | undefined) ??
    (o.metadata.creationTimestamp as string | undefined);
  return [
    {
      name: 'Last Seen',
      type: 'string',
      priority: 0,
      description: 'Time since the event was last seen',
      cell: (o, now) => {
        const t = lastSeen(o);
        return t ? humanDuration(now.getTime() - Date.parse(t)) : '<unknown>';
      },
    },
    { name: 'Type', type: 'string', priority: 0, description: 'Event type', cell: (o) => o.type ?? '' },
    { name: 'Reason', type: 'string', priority: 0, description: 'Why the event happened', cell: (o) => o.reason ?? '' },
    {
      name: 'Object',
      type: 'string',
      priority: 0,
      description: 'The object the event is about',
      cell: (o) => {
        const r = asMap(o[names.regarding]);
        return `${String(r.kind ?? '').toLowerCase()}/${String(r.name ?? '')}`;
      },
    },
    { name: 'Message', type: 'string', priority: 0, description: 'Human-readable description', cell: (o) => o[names.message] ?? '' },
    { name: 'Age', type: 'string', priority: 1, description: 'Time since creation', cell: (o, now) => ageOf(o, now) },
  ];
}

/** The Event declaration. */
export const eventKind: KindDeclaration = {
  group: '',
  version: 'v1',
  kind: 'Event',
  plural: 'events',
  singular: 'event',
  shortNames: ['ev'],
  namespaced: true,
  schema: EventSchema,
  protobufMessage: 'k8s.io.api.core.v1.Event',
  strategy: eventStrategy,
  // PUT to a missing Event creates it (eventStrategy.AllowCreateOnUpdate).
  allowCreateOnUpdate: true,
  tableColumns: eventColumns({ regarding: 'involvedObject', message: 'message', lastTimestamp: 'lastTimestamp' }),
  fieldSelectors: {
    'involvedObject.kind': str((o) => asMap(o.involvedObject).kind),
    'involvedObject.namespace': str((o) => asMap(o.involvedObject).namespace),
    'involvedObject.name': str((o) => asMap(o.involvedObject).name),
    'involvedObject.uid': str((o) => asMap(o.involvedObject).uid),
    'involvedObject.apiVersion': str((o) => asMap(o.involvedObject).apiVersion),
    'involvedObject.resourceVersion': str((o) => asMap(o.involvedObject).resourceVersion),
    'involvedObject.fieldPath': str((o) => asMap(o.involvedObject).fieldPath),
    reason: str((o) => o.reason),
    reportingComponent: str((o) => o.reportingComponent),
    source: str((o) => asMap(o.source).component),
    type: str((o) => o.type),
  },
};
