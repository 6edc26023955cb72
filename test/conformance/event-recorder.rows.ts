/**
 * Events of the built-in controllers (client-go's tools/record as kube-controller-manager uses
 * it): the disruption controller's Events about a budget, one Event per distinct event whose
 * count grows with repeats, `kubectl describe` showing them, and the Event writes the recorder
 * relies on (the repeat's patch without resourceVersion; events of cluster-scoped objects in
 * `default`).
 */
import type { RowGroup } from './conformance.types.js';

const NS = 'cf-ev-rec';
const PDBS = `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets`;
const PODS = `/api/v1/namespaces/${NS}/pods`;
const EVENTS = `/api/v1/namespaces/${NS}/events`;
/** The disruption controller's Events of `reason` about budget `name`, as kubectl describe looks them up. */
const eventsOf = (name: string, reason: string) =>
  `${EVENTS}?fieldSelector=${encodeURIComponent(`involvedObject.kind=PodDisruptionBudget,involvedObject.namespace=${NS},involvedObject.name=${name},reason=${reason}`)}`;
const WAIT_MS = 15_000;

type Obj = Record<string, unknown>;
const pdb = (name: string, spec: Obj) => ({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name }, spec });
const pod = (name: string, app: string, meta: Obj = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { app }, ...meta },
  spec: { containers: [{ name: 'c', image: 'nginx' }] },
});
const event = (name: string, ns: string, involvedObject: Obj) => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name, namespace: ns },
  involvedObject,
  reason: 'Tested',
  message: 'm',
  type: 'Normal',
  source: { component: 'tester' },
  count: 1,
  firstTimestamp: '2026-01-01T00:00:00Z',
  lastTimestamp: '2026-01-01T00:00:00Z',
});

/** The group. */
export const EVENT_RECORDER: RowGroup = {
  name: 'Events of the built-in controllers',
  namespace: NS,
  rows: [
    {
      id: 'ev-rec-1',
      rule: 'A PodDisruptionBudget selecting no pods gets a Normal NoPods Event from controllermanager, named <budget>.<hex>',
      source: 'upstream pkg/controller/disruption/disruption.go (trySync); client-go tools/record event.go (makeEvent)',
      upstream: 'one Event: type Normal, reason NoPods, message "No matching pods found", source.component controllermanager, involvedObject the budget',
      req: { method: 'POST', path: PDBS, body: pdb('none', { minAvailable: 1, selector: { matchLabels: { app: 'none' } } }) },
      expect: { status: 201 },
      then: [
        {
          req: { method: 'GET', path: eventsOf('none', 'NoPods') },
          waitMs: WAIT_MS,
          expect: {
            status: 200,
            text: /"name":"none\.[0-9a-f]{12,}"/,
            body: {
              items: [
                {
                  type: 'Normal',
                  reason: 'NoPods',
                  message: 'No matching pods found',
                  source: { component: 'controllermanager' },
                  reportingComponent: 'controllermanager',
                  involvedObject: { kind: 'PodDisruptionBudget', apiVersion: 'policy/v1', name: 'none', namespace: NS },
                },
              ],
            },
          },
        },
      ],
    },
    {
      id: 'ev-rec-2',
      rule: 'A repeated event raises the count of the one Event (same name) instead of creating another',
      source: 'client-go tools/record events_cache.go (EventCorrelator: eventObserve)',
      upstream: 'still one NoPods Event about the budget, count >= 2 after another sync',
      setup: [{ method: 'POST', path: PDBS, body: pdb('repeat', { minAvailable: 1, selector: { matchLabels: { app: 'repeat' } } }) }],
      // A pod the budget does not select makes the controller sync the namespace's budgets again.
      req: { method: 'POST', path: PODS, body: pod('unselected', 'other') },
      expect: { status: 201 },
      then: [
        {
          req: { method: 'GET', path: eventsOf('repeat', 'NoPods') },
          waitMs: WAIT_MS,
          expect: { status: 200, text: /"count":([2-9]|\d{2,})\b/, body: { items: [{ reason: 'NoPods' }] } },
        },
      ],
    },
    {
      id: 'ev-rec-3',
      rule: 'A budget whose expected pod count cannot be computed gets a Warning CalculateExpectedPodCountFailed Event with the reason',
      source: 'upstream pkg/controller/disruption/disruption.go (trySync, getScaleController)',
      upstream:
        'Warning CalculateExpectedPodCountFailed, message: Failed to calculate the number of expected pods: no matches for kind "Widget" in version "example.com/v1"',
      setup: [
        {
          method: 'POST',
          path: PODS,
          body: pod('owned', 'scaleless', {
            // A kind nobody serves: the garbage collector leaves the pod alone, the disruption controller cannot scale it.
            ownerReferences: [{ apiVersion: 'example.com/v1', kind: 'Widget', name: 'w', uid: '00000000-0000-0000-0000-000000000001', controller: true }],
          }),
        },
      ],
      req: { method: 'POST', path: PDBS, body: pdb('scaleless', { minAvailable: '50%', selector: { matchLabels: { app: 'scaleless' } } }) },
      expect: { status: 201 },
      then: [
        {
          req: { method: 'GET', path: eventsOf('scaleless', 'CalculateExpectedPodCountFailed') },
          waitMs: WAIT_MS,
          expect: {
            status: 200,
            body: {
              items: [
                {
                  type: 'Warning',
                  message: 'Failed to calculate the number of expected pods: no matches for kind "Widget" in version "example.com/v1"',
                  source: { component: 'controllermanager' },
                },
              ],
            },
          },
        },
      ],
    },
    {
      id: 'ev-rec-4',
      rule: "kubectl describe pdb lists the controller's Events in its Events section",
      source: 'upstream staging/src/k8s.io/kubectl/pkg/describe describe.go (PodDisruptionBudgetDescriber, searchEvents)',
      upstream: 'Events: Normal NoPods <age> controllermanager No matching pods found',
      setup: [{ method: 'POST', path: PDBS, body: pdb('described', { maxUnavailable: 1, selector: { matchLabels: { app: 'described' } } }) }],
      kubectl: {
        args: ['-n', NS, 'describe', 'pdb', 'described'],
        waitMs: WAIT_MS,
        stdout: /Events:\s+Type\s+Reason\s+Age\s+From\s+Message[\s\S]*Normal\s+NoPods\s+.*\s+controllermanager\s+No matching pods found/,
      },
    },
    {
      id: 'ev-rec-5',
      rule: "An Event's repeat is a strategic merge patch of count, lastTimestamp and message without resourceVersion",
      source: 'client-go tools/record events_cache.go (eventObserve); kubernetes/typed/core/v1 event_expansion.go (EventSinkImpl.Patch)',
      upstream: '200 with the new count and lastTimestamp, firstTimestamp kept',
      setup: [{ method: 'POST', path: EVENTS, body: event('patched.1', NS, { kind: 'ConfigMap', apiVersion: 'v1', name: 'x', namespace: NS }) }],
      req: {
        method: 'PATCH',
        path: `${EVENTS}/patched.1`,
        headers: { 'content-type': 'application/strategic-merge-patch+json' },
        body: { count: 2, lastTimestamp: '2026-01-01T00:05:00Z', message: 'm' },
      },
      expect: { status: 200, body: { count: 2, firstTimestamp: '2026-01-01T00:00:00Z', lastTimestamp: '2026-01-01T00:05:00Z' } },
    },
    {
      id: 'ev-rec-6',
      rule: 'The Event of a cluster-scoped object is stored in default, its involvedObject without namespace',
      source: 'client-go tools/record event.go (makeEvent: namespace default); pkg/apis/core/validation events.go (legacyValidateEvent)',
      upstream: '201 in default; the same Event in another namespace is 422 (involvedObject.namespace does not match event.namespace)',
      req: {
        method: 'POST',
        path: '/api/v1/namespaces/default/events',
        body: event('cf-ev-rec-node.1', 'default', { kind: 'Node', apiVersion: 'v1', name: 'cf-ev-rec-node' }),
      },
      expect: { status: 201, body: { metadata: { namespace: 'default' } }, absent: ['involvedObject.namespace'] },
      then: [
        {
          req: { method: 'POST', path: EVENTS, body: event('cf-ev-rec-node.2', NS, { kind: 'Node', apiVersion: 'v1', name: 'cf-ev-rec-node' }) },
          expect: { status: 422, reason: 'Invalid', message: /involvedObject\.namespace: Invalid value: "": does not match event\.namespace/ },
        },
      ],
    },
  ],
};
