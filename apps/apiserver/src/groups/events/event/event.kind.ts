/**
 * events.k8s.io/v1 Event: the core/v1 Events seen under the newer field names (regarding, note,
 * reportingController, deprecated*), stored as core Events (the declaration's `storedAs`), so
 * either API reads, writes and watches the same objects, as in Kubernetes. kubectl's columns are
 * core Events' (the printer works on the internal type); the field selectors are those
 * Kubernetes converts for this version (regarding.*, reason, reportingController, type).
 */
import type { KubeObject } from '@app/apimachinery';
import type { KindDeclaration } from '@app/registry';
import { asMap, str } from '../../core/core.helpers.js';
import { eventColumns } from '../../core/event/event.kind.js';
import { EventSchema } from '../../core/event/event.schema.js';
import { eventFromCore, eventToCore } from './event.conversion.js';
import { EventsV1EventSchema } from './event.schema.js';
import { eventsV1Strategy } from './event.strategy.js';

const regarding = (f: string) => str((o: KubeObject) => asMap(o.regarding)[f]);

/** The events.k8s.io/v1 Event declaration. */
export const eventsV1EventKind: KindDeclaration = {
  group: 'events.k8s.io',
  version: 'v1',
  kind: 'Event',
  plural: 'events',
  singular: 'event',
  shortNames: ['ev'],
  namespaced: true,
  schema: EventsV1EventSchema,
  protobufMessage: 'k8s.io.api.events.v1.Event',
  strategy: eventsV1Strategy,
  allowCreateOnUpdate: true,
  generation: 'none',
  storedAs: { group: '', plural: 'events', kind: 'Event', apiVersion: 'v1', schema: EventSchema, toStored: eventToCore, toServed: eventFromCore },
  tableColumns: eventColumns({ regarding: 'regarding', message: 'note', lastTimestamp: 'deprecatedLastTimestamp' }),
  fieldSelectors: {
    'regarding.kind': regarding('kind'),
    'regarding.namespace': regarding('namespace'),
    'regarding.name': regarding('name'),
    'regarding.uid': regarding('uid'),
    'regarding.apiVersion': regarding('apiVersion'),
    'regarding.resourceVersion': regarding('resourceVersion'),
    'regarding.fieldPath': regarding('fieldPath'),
    reason: str((o) => o.reason),
    reportingController: str((o) => o.reportingController),
    type: str((o) => o.type),
  },
};
