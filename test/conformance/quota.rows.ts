/**
 * Rules of core/v1 ResourceQuota and the ResourceQuota admission plugin: the strategy (status
 * dropped on create), validation (pkg/apis/core/validation ValidateResourceQuota*), kubectl's
 * columns and short name (printResourceQuota), and the plugin's refusals
 * (apiserver/pkg/admission/plugin/resourcequota controller.go). Rows whose quota would refuse
 * later rows' pods delete it in `then`.
 */
import type { RowGroup } from './conformance.types.js';

const NS = 'cf-quota';
const QUOTAS = `/api/v1/namespaces/${NS}/resourcequotas`;
const PODS = `/api/v1/namespaces/${NS}/pods`;

type Obj = Record<string, unknown>;
/** A quota named `name` with `hard`; `spec` adds fields. */
const quota = (name: string, hard: Record<string, string>, spec: Obj = {}) => ({
  apiVersion: 'v1',
  kind: 'ResourceQuota',
  metadata: { name },
  spec: { hard, ...spec },
});
const pod = (name: string, resources: Obj = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'nginx', resources }] },
});

/** The group. */
export const QUOTA: RowGroup = {
  name: 'core/v1 ResourceQuota and the ResourceQuota admission plugin',
  namespace: NS,
  rows: [
    {
      id: 'quota-1',
      rule: 'A ResourceQuota is created with the status it was sent dropped',
      source: 'upstream pkg/registry/core/resourcequota strategy.go (PrepareForCreate)',
      upstream: '201, status {}',
      req: { method: 'POST', path: QUOTAS, body: { ...quota('q1', { services: '3' }), status: { hard: { services: '9' }, used: { services: '1' } } } },
      expect: { status: 201, body: { spec: { hard: { services: '3' } } }, absent: ['status.hard', 'status.used'] },
    },
    {
      id: 'quota-2',
      rule: 'kubectl lists quotas as NAME AGE REQUEST LIMIT',
      source: 'upstream pkg/printers/internalversion printers.go (printResourceQuota)',
      upstream: 'NAME AGE REQUEST LIMIT',
      setup: [{ method: 'POST', path: QUOTAS, body: quota('q2', { 'services.loadbalancers': '2' }) }],
      kubectl: { args: ['-n', NS, 'get', 'quota', 'q2'], stdout: /^NAME\s+AGE\s+REQUEST\s+LIMIT\s*\nq2\s/ },
    },
    {
      id: 'quota-3',
      rule: 'resourcequotas has the short name quota',
      source: 'upstream pkg/registry/core/resourcequota/storage (ShortNames)',
      upstream: 'resourcequotas quota v1 true ResourceQuota',
      kubectl: { args: ['api-resources', '--api-group='], stdout: /^resourcequotas\s+quota\s+v1\s+true\s+ResourceQuota\s*$/m },
    },
    {
      id: 'quota-4',
      rule: 'A quota limits standard or fully qualified resource names only',
      source: 'upstream pkg/apis/core/validation ValidateResourceQuotaResourceName',
      upstream: '422, spec.hard[foo]: Invalid value: "foo": must be a standard resource type or fully qualified',
      req: { method: 'POST', path: QUOTAS, body: quota('q4', { foo: '1' }) },
      expect: {
        status: 422,
        reason: 'Invalid',
        message: 'ResourceQuota "q4" is invalid: spec.hard[foo]: Invalid value: "foo": must be a standard resource type or fully qualified',
      },
    },
    {
      id: 'quota-5',
      rule: 'Object counts are whole numbers',
      source: 'upstream pkg/apis/core/validation ValidateResourceQuantityValue (IsIntegerResourceName)',
      upstream: '422, spec.hard[pods]: Invalid value: resource.Quantity{...s:"1500m"...}: must be an integer',
      divergence: 'the value is printed as the quantity string, where Go prints the Quantity struct with %#v',
      req: { method: 'POST', path: QUOTAS, body: quota('q5', { pods: '1500m' }) },
      expect: { status: 422, message: 'ResourceQuota "q5" is invalid: spec.hard[pods]: Invalid value: "1500m": must be an integer' },
    },
    {
      id: 'quota-6',
      rule: 'A quota limit is not negative',
      source: 'upstream pkg/apis/core/validation ValidateNonnegativeQuantity',
      upstream: '422, spec.hard[requests.cpu]: Invalid value: "-1": must be greater than or equal to 0',
      req: { method: 'POST', path: QUOTAS, body: quota('q6', { 'requests.cpu': '-1' }) },
      expect: { status: 422, message: 'ResourceQuota "q6" is invalid: spec.hard[requests.cpu]: Invalid value: "-1": must be greater than or equal to 0' },
    },
    {
      id: 'quota-7',
      rule: 'BestEffort and NotBestEffort (Terminating and NotTerminating) cannot both be scopes',
      source: 'upstream pkg/apis/core/validation validateResourceQuotaScopes',
      upstream: '422, spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort", "NotBestEffort"}: conflicting scopes',
      req: { method: 'POST', path: QUOTAS, body: quota('q7', { pods: '1' }, { scopes: ['BestEffort', 'NotBestEffort'] }) },
      expect: {
        status: 422,
        message: 'ResourceQuota "q7" is invalid: spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort", "NotBestEffort"}: conflicting scopes',
      },
    },
    {
      id: 'quota-8',
      rule: 'A BestEffort quota may limit only the number of pods',
      source: 'upstream pkg/apis/core/helper IsResourceQuotaScopeValidForResource',
      upstream: '422, spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort"}: unsupported scope applied to resource',
      req: { method: 'POST', path: QUOTAS, body: quota('q8', { 'requests.cpu': '1' }, { scopes: ['BestEffort'] }) },
      expect: {
        status: 422,
        message: 'ResourceQuota "q8" is invalid: spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort"}: unsupported scope applied to resource',
      },
    },
    {
      id: 'quota-9',
      rule: 'The scopes of a quota never change',
      source: 'upstream pkg/apis/core/validation ValidateResourceQuotaUpdate',
      upstream: '422, spec.scopes: Invalid value: ...: field is immutable',
      setup: [{ method: 'POST', path: QUOTAS, body: quota('q9', { pods: '5' }, { scopes: ['NotBestEffort'] }) }],
      req: { method: 'PATCH', path: `${QUOTAS}/q9`, headers: { 'content-type': 'application/merge-patch+json' }, body: { spec: { scopes: ['BestEffort'] } } },
      expect: { status: 422, message: /^ResourceQuota "q9" is invalid: spec\.scopes: Invalid value: .*: field is immutable$/ },
    },
    {
      id: 'quota-10',
      rule: 'A scope selector with In or NotIn names values',
      source: 'upstream pkg/apis/core/validation validateScopedResourceSelectorRequirement',
      upstream:
        "422, spec.scopeSelector.matchExpressions.values: Required value: must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
      req: {
        method: 'POST',
        path: QUOTAS,
        body: quota('q10', { pods: '5' }, { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In' }] } }),
      },
      expect: {
        status: 422,
        message:
          "ResourceQuota \"q10\" is invalid: spec.scopeSelector.matchExpressions.values: Required value: must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
      },
    },
    {
      id: 'quota-11',
      rule: 'A create past a quota is refused with 403, dry runs too',
      source: 'upstream apiserver/pkg/admission/plugin/resourcequota controller.go (CheckRequest)',
      upstream: '403, pods "z1" is forbidden: exceeded quota: z, requested: pods=1, used: pods=0, limited: pods=0',
      setup: [
        { method: 'POST', path: QUOTAS, body: quota('z', { pods: '0' }) },
        { method: 'PUT', path: `${QUOTAS}/z/status`, body: { ...quota('z', { pods: '0' }), status: { hard: { pods: '0' }, used: { pods: '0' } } } },
      ],
      req: { method: 'POST', path: PODS, body: pod('z1') },
      expect: { status: 403, reason: 'Forbidden', message: 'pods "z1" is forbidden: exceeded quota: z, requested: pods=1, used: pods=0, limited: pods=0' },
      then: [
        { req: { method: 'POST', path: `${PODS}?dryRun=All`, body: pod('z2') }, expect: { status: 403, message: /exceeded quota: z, requested: pods=1/ } },
        { req: { method: 'DELETE', path: `${QUOTAS}/z` }, expect: { status: 200 } },
      ],
    },
    {
      id: 'quota-12',
      rule: 'A quota on requests.cpu refuses a pod whose containers do not request cpu',
      source: 'upstream pkg/quota/v1/evaluator/core pods.go (Constraints)',
      upstream: '403, pods "m1" is forbidden: failed quota: cpu: must specify requests.cpu for: c',
      // A quota constrains requests once the controller has filled in its status.hard (kube's
      // evaluator matches on status.hard too): wait for it.
      setup: [
        { method: 'POST', path: QUOTAS, body: quota('cpu', { 'requests.cpu': '1' }) },
        { method: 'GET', path: `${QUOTAS}/cpu`, expect: { status: 200, body: { status: { hard: { 'requests.cpu': '1' } } } }, waitMs: 10_000 },
      ],
      req: { method: 'POST', path: PODS, body: pod('m1') },
      expect: { status: 403, reason: 'Forbidden', message: 'pods "m1" is forbidden: failed quota: cpu: must specify requests.cpu for: c' },
      then: [{ req: { method: 'DELETE', path: `${QUOTAS}/cpu` }, expect: { status: 200 } }],
    },
  ],
};
