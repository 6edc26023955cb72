/** Schema of events.k8s.io/v1 Event (k8s.io/api/events/v1 types.go). */
import { defineSchema, fieldOf, MicroTimeSchema, objectRootSchema, TimeSchema } from '@app/apimachinery';
import { int32, ObjectReferenceSchema, str } from '../../core/core.schema.js';
import { EventSourceSchema } from '../../core/event/event.schema.js';

/** events.k8s.io/v1 EventSeries. */
export const EventsV1SeriesSchema = defineSchema('io.k8s.api.events.v1.EventSeries', {
  type: 'object',
  description: 'A series of repeated events: how many, and when the last one was seen.',
  properties: {
    count: int32('Occurrences in the series up to the last heartbeat.'),
    lastObservedTime: fieldOf(MicroTimeSchema, { description: 'When the last occurrence was seen before the last heartbeat.' }),
  },
});

/** events.k8s.io/v1 Event. */
export const EventsV1EventSchema = defineSchema(
  'io.k8s.api.events.v1.Event',
  objectRootSchema(
    { group: 'events.k8s.io', version: 'v1', kind: 'Event' },
    'A report of something that happened in the cluster; the same objects as core/v1 Events, under the newer field names.',
    {
      eventTime: fieldOf(MicroTimeSchema, { description: 'When the event was first observed. Required.' }),
      series: fieldOf(EventsV1SeriesSchema, { description: 'The series this event stands for, when it repeats.' }),
      reportingController: str('The controller that emitted the event, e.g. kubernetes.io/kubelet. Required for new events.'),
      reportingInstance: str('The instance of that controller, at most 128 characters. Required for new events.'),
      action: str('What was done, or failed, about the regarding object; machine-readable, at most 128 characters.'),
      reason: str('Why the action was taken; at most 128 characters.'),
      regarding: fieldOf(ObjectReferenceSchema, { description: 'The object this event is about.', default: {} }),
      related: fieldOf(ObjectReferenceSchema, { description: 'A second object involved, if any.' }),
      note: str('Human-readable description of the status of the action, at most 1 kB.'),
      type: str('Normal or Warning (others may be added).'),
      deprecatedSource: fieldOf(EventSourceSchema, { description: "core/v1's source, kept for compatibility.", default: {} }),
      deprecatedFirstTimestamp: fieldOf(TimeSchema, { description: "core/v1's firstTimestamp, kept for compatibility." }),
      deprecatedLastTimestamp: fieldOf(TimeSchema, { description: "core/v1's lastTimestamp, kept for compatibility." }),
      deprecatedCount: int32("core/v1's count, kept for compatibility."),
    },
    // eventTime and the series' fields are required by validation (event.strategy.ts), whose
    // messages Kubernetes gives, rather than by the schema.
    { required: ['metadata'] },
  ),
);
