/**
 * Rules of policy/v1 PodDisruptionBudget and the budget check of the pods' eviction
 * subresource: the strategy (status emptied on create, written through /status only,
 * generation), validation (pkg/apis/policy/validation), kubectl's columns
 * (printPodDisruptionBudget), and the eviction's refusals that do not wait for the disruption
 * controller (pkg/registry/core/pod/storage/eviction.go).
 */
import type { RowGroup } from './conformance.types.js';

const NS = 'cf-policy';
const PDBS = `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets`;
const PODS = `/api/v1/namespaces/${NS}/pods`;
const TABLE = 'application/json;as=Table;g=meta.k8s.io;v=v1';

type Obj = Record<string, unknown>;
/** A budget named `name` over app=`app`; `spec` adds or replaces fields. */
const pdb = (name: string, app: string, spec: Obj = {}) => ({
  apiVersion: 'policy/v1',
  kind: 'PodDisruptionBudget',
  metadata: { name },
  spec: { selector: { matchLabels: { app } }, ...spec },
});
const pod = (name: string, app: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { app } },
  spec: { containers: [{ name: 'c', image: 'nginx' }] },
});
const eviction = (name: string) => ({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name } });
/** A pod's /status making it Running and Ready. */
const running = (name: string, app: string) => ({ ...pod(name, app), status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } });

/** The group. */
export const POLICY: RowGroup = {
  name: 'policy/v1 PodDisruptionBudget',
  namespace: NS,
  rows: [
    {
      id: 'pdb-1',
      rule: 'A PodDisruptionBudget is created with generation 1 and the status it was sent dropped',
      source: 'upstream pkg/registry/policy/poddisruptionbudget strategy.go (PrepareForCreate)',
      upstream: '201, metadata.generation 1, status without the sent disruptionsAllowed',
      req: { method: 'POST', path: PDBS, body: { ...pdb('p1', 'none', { minAvailable: 1 }), status: { disruptionsAllowed: 9 } } },
      expect: { status: 201, body: { metadata: { generation: 1 }, spec: { minAvailable: 1 } }, absent: ['status.disruptionsAllowed'] },
    },
    {
      id: 'pdb-2',
      rule: 'The spec may change, and a change bumps generation',
      source: 'upstream pkg/registry/policy/poddisruptionbudget strategy.go (PrepareForUpdate, status strategy)',
      upstream: '200, generation 2 after a spec change',
      setup: [{ method: 'POST', path: PDBS, body: pdb('p2', 'none', { minAvailable: 1 }) }],
      req: {
        method: 'PATCH',
        path: `${PDBS}/p2`,
        headers: { 'content-type': 'application/merge-patch+json' },
        body: { spec: { minAvailable: 2 } },
      },
      expect: { status: 200, body: { metadata: { generation: 2 }, spec: { minAvailable: 2 } } },
    },
    {
      id: 'pdb-3',
      rule: 'minAvailable and maxUnavailable cannot both be set',
      source: 'upstream pkg/apis/policy/validation ValidatePodDisruptionBudgetSpec',
      upstream: '422, spec: Invalid value: ...: minAvailable and maxUnavailable cannot be both set',
      req: { method: 'POST', path: PDBS, body: pdb('p3', 'a', { minAvailable: 1, maxUnavailable: 1 }) },
      expect: { status: 422, reason: 'Invalid', message: /spec: Invalid value: .*: minAvailable and maxUnavailable cannot be both set$/ },
    },
    {
      id: 'pdb-4',
      rule: 'A percentage bound may not exceed 100%',
      source: 'upstream pkg/apis/policy/validation ValidatePodDisruptionBudgetSpec (IsNotMoreThan100Percent)',
      upstream: '422, spec.maxUnavailable: Invalid value: "120%": must not be greater than 100%',
      req: { method: 'POST', path: PDBS, body: pdb('p4', 'a', { maxUnavailable: '120%' }) },
      expect: { status: 422, message: 'PodDisruptionBudget.policy "p4" is invalid: spec.maxUnavailable: Invalid value: "120%": must not be greater than 100%' },
    },
    {
      id: 'pdb-9',
      rule: 'The unhealthy-pod eviction policy is AlwaysAllow or IfHealthyBudget',
      source: 'upstream pkg/apis/policy/validation ValidatePodDisruptionBudgetSpec (supportedUnhealthyPodEvictionPolicies)',
      upstream: '422, spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported values: "AlwaysAllow", "IfHealthyBudget"',
      req: { method: 'POST', path: PDBS, body: pdb('p9', 'a', { unhealthyPodEvictionPolicy: 'Never' }) },
      expect: {
        status: 422,
        message:
          'PodDisruptionBudget.policy "p9" is invalid: spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported values: "AlwaysAllow", "IfHealthyBudget"',
      },
    },
    {
      id: 'pdb-5',
      rule: 'A status written through /status is checked: counters not negative, conditions well formed',
      source: 'upstream pkg/apis/policy/validation ValidatePodDisruptionBudgetStatusUpdate; apimachinery ValidateConditions',
      upstream: '422 naming status.currentHealthy and status.conditions[0].reason',
      setup: [{ method: 'POST', path: PDBS, body: pdb('p5', 'none', { minAvailable: 1 }) }],
      req: {
        method: 'PATCH',
        path: `${PDBS}/p5/status`,
        headers: { 'content-type': 'application/merge-patch+json' },
        body: {
          status: {
            currentHealthy: -1,
            conditions: [{ type: 'DisruptionAllowed', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z', reason: '', message: '' }],
          },
        },
      },
      expect: {
        status: 422,
        message:
          'PodDisruptionBudget.policy "p5" is invalid: [status.conditions[0].reason: Required value: must be set, status.currentHealthy: Invalid value: -1: must be greater than or equal to 0]',
      },
    },
    {
      id: 'pdb-6',
      rule: "kubectl's columns: NAME, MIN AVAILABLE, MAX UNAVAILABLE, ALLOWED DISRUPTIONS, AGE",
      source: 'upstream pkg/printers/internalversion printers.go (printPodDisruptionBudget)',
      upstream: 'Table columns Name, Min Available, Max Unavailable, Allowed Disruptions, Age; N/A for an unset bound',
      setup: [{ method: 'POST', path: PDBS, body: pdb('p6', 'none', { maxUnavailable: '25%' }) }],
      req: { method: 'GET', path: `${PDBS}/p6`, headers: { accept: TABLE } },
      expect: {
        status: 200,
        body: {
          columnDefinitions: [{ name: 'Name' }, { name: 'Min Available' }, { name: 'Max Unavailable' }, { name: 'Allowed Disruptions' }, { name: 'Age' }],
        },
        text: /"cells":\["p6","N\/A","25%",0,"\d+s"\]/,
      },
    },
    {
      id: 'pdb-7',
      rule: 'A Pending pod is evicted without looking at its budget',
      source: 'upstream pkg/registry/core/pod/storage/eviction.go (canIgnorePDB)',
      upstream: '201 Success, the pod deleted, though its budget allows no disruption',
      setup: [
        { method: 'POST', path: PDBS, body: pdb('p7', 'pending', { maxUnavailable: 0 }) },
        { method: 'POST', path: PODS, body: pod('pending-1', 'pending') },
      ],
      req: { method: 'POST', path: `${PODS}/pending-1/eviction`, body: eviction('pending-1') },
      expect: { status: 201, body: { kind: 'Status', status: 'Success' } },
      then: [{ req: { method: 'GET', path: `${PODS}/pending-1` }, expect: { status: 404 } }],
    },
    {
      id: 'pdb-8',
      rule: 'A running pod covered by two budgets cannot be evicted',
      source: 'upstream pkg/registry/core/pod/storage/eviction.go',
      upstream: '500, status Failure, no reason, "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."',
      setup: [
        { method: 'POST', path: PDBS, body: pdb('p8a', 'two', { minAvailable: 0 }) },
        { method: 'POST', path: PDBS, body: pdb('p8b', 'two', { maxUnavailable: '100%' }) },
        { method: 'POST', path: PODS, body: pod('two-1', 'two') },
        { method: 'PUT', path: `${PODS}/two-1/status`, body: running('two-1', 'two') },
      ],
      req: { method: 'POST', path: `${PODS}/two-1/eviction`, body: eviction('two-1') },
      expect: { status: 500, message: 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.', absent: ['reason'] },
      then: [{ req: { method: 'GET', path: `${PODS}/two-1` }, expect: { status: 200 } }],
    },
    {
      id: 'pdb-10',
      rule: 'A condition written without a message is accepted (metav1 conditions need type, status, lastTransitionTime and reason)',
      source: 'upstream apimachinery pkg/apis/meta/v1/validation ValidateCondition (no check of an empty message)',
      upstream: '200, the condition stored without a message',
      setup: [{ method: 'POST', path: PDBS, body: pdb('p10', 'none', { minAvailable: 1 }) }],
      req: {
        method: 'PATCH',
        path: `${PDBS}/p10/status`,
        headers: { 'content-type': 'application/merge-patch+json' },
        body: { status: { conditions: [{ type: 'Checked', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'ByHand' }] } },
      },
      expect: { status: 200, body: { status: { conditions: [{ type: 'Checked', reason: 'ByHand' }] } } },
    },
  ],
};
