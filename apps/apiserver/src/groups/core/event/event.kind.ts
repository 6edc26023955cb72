/**
 * core/v1 Event: its declaration, with kubectl's columns and the field selectors Kubernetes
 * offers for events (pkg/registry/core/event).
 */
import { ageOf, humanDuration, type KindDeclaration } from '@app/registry';
import { asMap, str } from '../core.helpers.js';
import { EventSchema } from './event.schema.js';
import type { KubeObject } from '@app/apimachinery';
import { eventStrategy } from './event.strategy.js';

/** When an event was last seen: series, lastTimestamp, eventTime, then creation. */
function eventTime(o: KubeObject): string | undefined {
  const series = asMap(o.series);
  return (series.lastObservedTime as string) ?? (o.lastTimestamp as string) ?? (o.eventTime as string) ?? (o.metadata.creationTimestamp as string | undefined);
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
  tableColumns: [
    {
      name: 'Last Seen',
      type: 'string',
      priority: 0,
      description: 'Time since the event was last seen',
      cell: (o, now) => {
        const t = eventTime(o);
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
        const io = asMap(o.involvedObject);
        return `${String(io.kind ?? '').toLowerCase()}/${String(io.name ?? '')}`;
      },
    },
    { name: 'Message', type: 'string', priority: 0, description: 'Human-readable description', cell: (o) => o.message ?? '' },
    { name: 'Age', type: 'string', priority: 1, description: 'Time since creation', cell: (o, now) => ageOf(o, now) },
  ],
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
