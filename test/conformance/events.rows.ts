/**
 * events.k8s.io/v1 Event: the core/v1 Events under the newer field names, one set of objects
 * behind both APIs (pkg/apis/events/v1 conversion, pkg/registry/core/event), with the stricter
 * validation of the newer API (pkg/apis/core/validation ValidateEventCreate/Update for
 * events.k8s.io/v1) and its field selectors.
 */
import type { RowGroup } from './conformance.types.js';

const NS = 'cf-events';
const V1 = `/apis/events.k8s.io/v1/namespaces/${NS}/events`;
const CORE = `/api/v1/namespaces/${NS}/events`;
const MERGE = { 'content-type': 'application/merge-patch+json' };
const TABLE = 'application/json;as=Table;g=meta.k8s.io;v=v1';

type Obj = Record<string, unknown>;
/** A new-style Event about a ConfigMap of the namespace, as kube-scheduler's recorder writes one. */
const ev = (name: string, extra: Obj = {}) => ({
  apiVersion: 'events.k8s.io/v1',
  kind: 'Event',
  metadata: { name },
  eventTime: '2026-01-01T00:00:00.000000Z',
  reportingController: 'example.com/tester',
  reportingInstance: 'tester-1',
  action: 'Check',
  reason: 'Checked',
  regarding: { apiVersion: 'v1', kind: 'ConfigMap', name: 'cm', namespace: NS },
  note: 'all good',
  type: 'Normal',
  ...extra,
});

/** The group. */
export const EVENTS_V1: RowGroup = {
  name: 'events.k8s.io/v1 Event',
  namespace: NS,
  rows: [
    {
      id: 'evapi-1',
      rule: 'An Event created at events.k8s.io/v1 is the core/v1 Event of the same name, its fields under the core names',
      source: 'upstream pkg/apis/events/v1 conversion; pkg/registry/events (the core event storage)',
      upstream: '201; GET /api/v1 .../events/e1 200 with involvedObject, message, reportingComponent and the same uid',
      req: { method: 'POST', path: V1, body: ev('e1') },
      expect: { status: 201, body: { apiVersion: 'events.k8s.io/v1', regarding: { kind: 'ConfigMap', name: 'cm' }, note: 'all good', deprecatedSource: {} } },
      then: [
        {
          req: { method: 'GET', path: `${CORE}/e1` },
          expect: {
            status: 200,
            body: {
              apiVersion: 'v1',
              kind: 'Event',
              involvedObject: { kind: 'ConfigMap', name: 'cm' },
              message: 'all good',
              reportingComponent: 'example.com/tester',
              reportingInstance: 'tester-1',
              action: 'Check',
              eventTime: '2026-01-01T00:00:00.000000Z',
            },
            absent: ['note', 'regarding', 'reportingController'],
          },
        },
      ],
    },
    {
      id: 'evapi-2',
      rule: 'A core/v1 Event reads at events.k8s.io/v1 with regarding, note and the deprecated* fields',
      source: 'upstream pkg/apis/events/v1 conversion',
      upstream: '200 {regarding: involvedObject, note: message, deprecatedCount: count, deprecatedSource: source}',
      setup: [
        {
          method: 'POST',
          path: CORE,
          body: {
            apiVersion: 'v1',
            kind: 'Event',
            metadata: { name: 'e2' },
            involvedObject: { kind: 'Pod', name: 'p', namespace: NS },
            reason: 'Pulled',
            message: 'image pulled',
            count: 3,
            source: { component: 'kubelet', host: 'n1' },
            firstTimestamp: '2026-01-01T00:00:00Z',
            type: 'Normal',
          },
        },
      ],
      req: { method: 'GET', path: `${V1}/e2` },
      expect: {
        status: 200,
        body: {
          apiVersion: 'events.k8s.io/v1',
          kind: 'Event',
          regarding: { kind: 'Pod', name: 'p' },
          note: 'image pulled',
          deprecatedCount: 3,
          deprecatedSource: { component: 'kubelet', host: 'n1' },
          deprecatedFirstTimestamp: '2026-01-01T00:00:00Z',
        },
        absent: ['message', 'involvedObject', 'count', 'source'],
      },
    },
    {
      id: 'evapi-3',
      rule: 'events.k8s.io/v1 validates strictly: eventTime required, type Normal or Warning, the deprecated fields unset, a series of at least 2; messages name the core fields',
      source: 'upstream pkg/apis/core/validation (ValidateEventCreate, validateV1EventSeries)',
      upstream:
        '422 "[series.count: Invalid value: \\"\\": should be at least 2, series.lastObservedTime: Required value, eventTime: Required value, type: Invalid value: \\"\\": has invalid value: Odd, count: Invalid value: \\"\\": needs to be unset]"',
      req: { method: 'POST', path: V1, body: ev('e3', { eventTime: undefined, type: 'Odd', deprecatedCount: 3, series: { count: 1 } }) },
      expect: {
        status: 422,
        reason: 'Invalid',
        message:
          'Event.events.k8s.io "e3" is invalid: [series.count: Invalid value: "": should be at least 2, series.lastObservedTime: Required value, eventTime: Required value, type: Invalid value: "": has invalid value: Odd, count: Invalid value: "": needs to be unset]',
      },
    },
    {
      id: 'evapi-4',
      rule: 'An events.k8s.io/v1 update may change the series only',
      source: 'upstream pkg/apis/core/validation (ValidateEventUpdate)',
      upstream: '422 "message: Invalid value: \\"changed\\": field is immutable"; a series update -> 200',
      setup: [{ method: 'POST', path: V1, body: ev('e4') }],
      req: { method: 'PATCH', path: `${V1}/e4`, body: { note: 'changed' }, headers: MERGE },
      expect: { status: 422, message: 'Event.events.k8s.io "e4" is invalid: message: Invalid value: "changed": field is immutable' },
      then: [
        {
          req: { method: 'PATCH', path: `${V1}/e4`, body: { series: { count: 2, lastObservedTime: '2026-01-01T00:05:00.000000Z' } }, headers: MERGE },
          expect: { status: 200, body: { series: { count: 2, lastObservedTime: '2026-01-01T00:05:00.000000Z' } } },
        },
      ],
    },
    {
      id: 'evapi-5',
      rule: 'events.k8s.io/v1 field selectors name the newer fields (regarding.*, reportingController); the core names are not supported there',
      source: 'upstream pkg/apis/events/v1 (field label conversion)',
      upstream: '200 with e5 only; 400 "field label not supported: involvedObject.name"',
      setup: [{ method: 'POST', path: V1, body: ev('e5', { regarding: { apiVersion: 'v1', kind: 'Secret', name: 's5', namespace: NS } }) }],
      req: { method: 'GET', path: `${V1}?fieldSelector=regarding.name%3Ds5,reportingController%3Dexample.com%2Ftester` },
      expect: { status: 200, body: { kind: 'EventList', items: [{ metadata: { name: 'e5' } }] } },
      then: [
        {
          req: { method: 'GET', path: `${V1}?fieldSelector=involvedObject.name%3Ds5` },
          expect: { status: 400, message: /field label not supported: involvedObject\.name/ },
        },
      ],
    },
    {
      id: 'evapi-6',
      rule: "An events.k8s.io/v1 Event in kubectl's columns: LAST SEEN, TYPE, REASON, OBJECT, MESSAGE (the core printer's)",
      source: 'upstream pkg/printers/internalversion printers.go (printEvent)',
      upstream: '200 Table with columns Name, Last Seen, Type, Reason, Object, Message, Age (priority 1)',
      setup: [{ method: 'POST', path: V1, body: ev('e6') }],
      req: { method: 'GET', path: `${V1}/e6`, headers: { accept: TABLE } },
      expect: {
        status: 200,
        body: {
          kind: 'Table',
          columnDefinitions: [
            { name: 'Name' },
            { name: 'Last Seen' },
            { name: 'Type' },
            { name: 'Reason' },
            { name: 'Object' },
            { name: 'Message' },
            { name: 'Age', priority: 1 },
          ],
        },
        text: /"cells":\["e6","[^"]+","Normal","Checked","configmap\/cm","all good","[^"]+"\]/,
      },
    },
  ],
};
