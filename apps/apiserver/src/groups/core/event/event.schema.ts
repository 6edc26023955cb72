/**
 * Schema of core/v1 Event and its parts (k8s.io/api/core/v1 types.go).
 */
import { defineSchema, fieldOf, MicroTimeSchema, objectRootSchema, TimeSchema } from '@app/apimachinery';
import { CORE, gvk, int32, ObjectReferenceSchema, str } from '../core.schema.js';

/** core/v1 EventSource. */
export const EventSourceSchema = defineSchema(`${CORE}.EventSource`, {
  type: 'object',
  description: 'The component that reported an event.',
  properties: {
    component: str('Component that produced the event.'),
    host: str('Node the event came from.'),
  },
});

/** core/v1 EventSeries. */
export const EventSeriesSchema = defineSchema(`${CORE}.EventSeries`, {
  type: 'object',
  description: 'Data about a series of repeated events.',
  properties: {
    count: int32('Occurrences in the series so far.'),
    lastObservedTime: fieldOf(MicroTimeSchema, { description: 'Time of the last occurrence.' }),
  },
});

/** core/v1 Event. */
export const EventSchema = defineSchema(
  `${CORE}.Event`,
  objectRootSchema(
    gvk('Event'),
    'A report of something that happened in the cluster.',
    {
      action: str('What was done, or failed, about the regarding object.'),
      count: int32('How many times the event occurred.'),
      eventTime: fieldOf(MicroTimeSchema, { description: 'When the event was first observed.' }),
      firstTimestamp: fieldOf(TimeSchema, { description: 'When the event was first recorded.' }),
      involvedObject: fieldOf(ObjectReferenceSchema, { description: 'The object this event is about.', default: {} }),
      lastTimestamp: fieldOf(TimeSchema, { description: 'When the most recent occurrence was recorded.' }),
      message: str('Human-readable description of the event.'),
      reason: str('Short machine-readable reason for the transition, in CamelCase.'),
      related: fieldOf(ObjectReferenceSchema, { description: 'A second object involved, if any.' }),
      reportingComponent: { type: 'string', default: '', description: 'Controller that emitted the event, e.g. kubernetes.io/kubelet.' },
      reportingInstance: { type: 'string', default: '', description: 'Instance of the controller, e.g. the kubelet host name.' },
      series: fieldOf(EventSeriesSchema, { description: 'Data about the series this event belongs to, if any.' }),
      source: fieldOf(EventSourceSchema, { description: 'Component reporting the event.', default: {} }),
      type: str('Normal or Warning (others may be added).'),
    },
    { required: ['metadata', 'involvedObject'] },
  ),
);
