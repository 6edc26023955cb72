/**
 * The served kinds' own rules (resources "Resources and their fields"; upstream validation of
 * pkg/apis/core, coordination, scheduling).
 */
import type { RowGroup } from './conformance.types.js';

const NS = 'cf-kinds';
const CM = `/api/v1/namespaces/${NS}/configmaps`;
const SECRETS = `/api/v1/namespaces/${NS}/secrets`;
const LEASES = `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`;
const PC = '/apis/scheduling.k8s.io/v1/priorityclasses';
const EVENTS = `/api/v1/namespaces/${NS}/events`;
const PODS = `/api/v1/namespaces/${NS}/pods`;
const pod = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'nginx' }], automountServiceAccountToken: false, ...spec },
});
const MERGE = { 'content-type': 'application/merge-patch+json' };
const cm = (name: string, extra: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, ...extra });
const secret = (name: string, extra: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, ...extra });
const lease = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name }, spec });
const pc = (name: string, value: number, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'scheduling.k8s.io/v1',
  kind: 'PriorityClass',
  metadata: { name },
  value,
  ...extra,
});
const event = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name },
  involvedObject: { kind: 'ConfigMap', name: 'x', namespace: NS },
  reason: 'Test',
  message: 'm',
  ...extra,
});

/** The group. */
export const KINDS: RowGroup = {
  name: 'kinds',
  namespace: NS,
  rows: [
    {
      id: 'kind-01',
      rule: 'ConfigMap data keys: letters, digits, -, _, .',
      source: 'resources ConfigMap (data keys)',
      upstream: '422 Invalid "data[a b]: Invalid value: \\"a b\\": a valid config key must consist of alphanumeric characters, ..."',
      req: { method: 'POST', path: CM, body: cm('k1', { data: { 'a b': '1' } }) },
      expect: {
        status: 422,
        reason: 'Invalid',
        message: /data\[a b\]: Invalid value: "a b": a valid config key must consist of alphanumeric characters, '-', '_' or '\.'/,
      },
    },
    {
      id: 'kind-02',
      rule: 'ConfigMap keys must not be in both data and binaryData',
      source: 'resources ConfigMap (keys must not overlap)',
      upstream: '422 Invalid "data[k]: Invalid value: \\"k\\": duplicate of key present in binaryData"',
      req: { method: 'POST', path: CM, body: cm('k2', { data: { k: '1' }, binaryData: { k: 'MQ==' } }) },
      expect: { status: 422, reason: 'Invalid', message: /data\[k\]: Invalid value: "k": duplicate of key present in binaryData/ },
    },
    {
      id: 'kind-03',
      rule: 'ConfigMap binaryData holds base64; a value that is not base64 does not decode',
      source: 'resources ConfigMap (binaryData: bytes)',
      upstream: '400 BadRequest "... cannot be handled as a ConfigMap: illegal base64 data ..."',
      req: { method: 'POST', path: CM, body: cm('k3', { binaryData: { k: '!!not base64' } }) },
      expect: { status: 400, reason: 'BadRequest', message: /^ConfigMap in version "v1" cannot be handled as a ConfigMap: illegal base64 data/ },
    },
    {
      id: 'kind-04',
      rule: 'An immutable ConfigMap refuses a data change',
      source: 'resources ConfigMap (immutable)',
      upstream: '422 Invalid "data: Forbidden: field is immutable when `immutable` is set"',
      setup: [{ method: 'POST', path: CM, body: cm('k4', { data: { a: '1' }, immutable: true }) }],
      req: { method: 'PATCH', path: `${CM}/k4`, body: { data: { a: '2' } }, headers: MERGE },
      expect: { status: 422, reason: 'Invalid', message: /data: Forbidden: field is immutable when `immutable` is set/ },
    },
    {
      id: 'kind-05',
      rule: 'An immutable ConfigMap cannot become mutable again',
      source: 'resources ConfigMap (immutable)',
      upstream: '422 Invalid "immutable: Forbidden: field is immutable when `immutable` is set"',
      req: { method: 'PATCH', path: `${CM}/k4`, body: { immutable: false }, headers: MERGE },
      expect: { status: 422, reason: 'Invalid', message: /immutable: Forbidden: field is immutable when `immutable` is set/ },
    },
    {
      id: 'kind-06',
      rule: 'An immutable ConfigMap still takes metadata changes',
      source: 'resources ConfigMap (immutable: metadata still can)',
      upstream: '200',
      req: { method: 'PATCH', path: `${CM}/k4`, body: { metadata: { labels: { ok: 'yes' } } }, headers: MERGE },
      expect: { status: 200, body: { metadata: { labels: { ok: 'yes' } } } },
    },
    {
      id: 'kind-07',
      rule: 'Secret stringData is merged into data and never returned',
      source: 'resources Secret (stringData)',
      upstream: '201, data.k = base64("v"), no stringData',
      req: { method: 'POST', path: SECRETS, body: secret('s1', { data: { k: 'b2xk' }, stringData: { k: 'v' } }) },
      expect: { status: 201, body: { data: { k: 'dg==' } }, absent: ['stringData'] },
    },
    {
      id: 'kind-08',
      rule: 'Secret data holds base64; a value that is not base64 does not decode',
      source: 'resources Secret (data: bytes, RFC 4648 section 4)',
      upstream: '400 BadRequest "... cannot be handled as a Secret: illegal base64 data ..."',
      req: { method: 'POST', path: SECRETS, body: secret('s2', { data: { k: '***' } }) },
      expect: { status: 400, reason: 'BadRequest', message: /^Secret in version "v1" cannot be handled as a Secret: illegal base64 data/ },
    },
    {
      id: 'kind-09',
      rule: 'Secret type is immutable',
      source: 'resources Secret (type); upstream ValidateSecretUpdate',
      upstream: '422 Invalid "type: Invalid value: ...: field is immutable"',
      req: { method: 'PATCH', path: `${SECRETS}/s1`, body: { type: 'example.com/other' }, headers: MERGE },
      expect: { status: 422, reason: 'Invalid', message: /type: Invalid value: "example.com\/other": field is immutable/ },
    },
    {
      id: 'kind-10',
      rule: 'Secret data keys follow the config key rule',
      source: 'resources Secret (keys)',
      upstream: '422 Invalid data[bad key]',
      req: { method: 'POST', path: SECRETS, body: secret('s3', { data: { 'bad key': 'dg==' } }) },
      expect: { status: 422, reason: 'Invalid', message: /data\[bad key\]: Invalid value/ },
    },
    {
      id: 'kind-11',
      rule: 'Secret of type kubernetes.io/tls needs tls.crt and tls.key',
      source: 'resources Secret (type); upstream ValidateSecret',
      upstream: '422 Invalid "data[tls.crt]: Required value"',
      req: { method: 'POST', path: SECRETS, body: secret('s4', { type: 'kubernetes.io/tls', data: {} }) },
      expect: { status: 422, reason: 'Invalid', message: /data\[tls\.crt\]: Required value/ },
    },
    {
      id: 'kind-12',
      rule: 'Secret of type kubernetes.io/service-account-token needs the service-account name annotation',
      source: 'resources Secret (service-account-token); upstream ValidateSecret',
      upstream: '422 Invalid "metadata.annotations[kubernetes.io/service-account.name]: Required value"',
      req: { method: 'POST', path: SECRETS, body: secret('s5', { type: 'kubernetes.io/service-account-token' }) },
      expect: { status: 422, reason: 'Invalid', message: /metadata\.annotations\[kubernetes\.io\/service-account\.name\]: Required value/ },
    },
    {
      id: 'kind-13',
      rule: 'An immutable Secret refuses a data change',
      source: 'resources Secret (immutable: as for ConfigMap)',
      upstream: '422 Invalid "data: Forbidden: field is immutable when `immutable` is set"',
      setup: [{ method: 'POST', path: SECRETS, body: secret('s6', { data: { k: 'dg==' }, immutable: true }) }],
      req: { method: 'PATCH', path: `${SECRETS}/s6`, body: { data: { k: 'dzI=' } }, headers: MERGE },
      expect: { status: 422, reason: 'Invalid', message: /data: Forbidden: field is immutable when `immutable` is set/ },
    },
    {
      id: 'kind-14',
      rule: 'Namespace names are DNS labels (no dots)',
      source: 'upstream ValidateNamespace (ValidateNamespaceName)',
      upstream: '422 Invalid metadata.name',
      req: { method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: 'has.dot' } } },
      expect: { status: 422, reason: 'Invalid', message: /metadata.name: Invalid value: "has.dot": a lowercase RFC 1123 label must consist of/ },
    },
    {
      id: 'kind-15',
      rule: 'A new Namespace gets the kubernetes finalizer and phase Active, and no generation',
      source: 'resources Namespace (status.phase); upstream namespace strategy PrepareForCreate',
      upstream: '201, spec.finalizers [kubernetes], status.phase Active, no metadata.generation',
      req: { method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: 'cf-kinds-new' } } },
      expect: { status: 201, body: { spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } }, absent: ['metadata.generation'] },
    },
    {
      id: 'kind-16',
      rule: 'An update of a Namespace cannot change spec.finalizers (only /finalize can)',
      source: 'resources Kinds and their paths (PUT .../finalize replaces the finalizers); upstream namespace strategy PrepareForUpdate',
      upstream: '200, spec.finalizers unchanged',
      req: { method: 'PATCH', path: '/api/v1/namespaces/cf-kinds-new', body: { spec: { finalizers: [] } }, headers: MERGE },
      expect: { status: 200, body: { spec: { finalizers: ['kubernetes'] } } },
    },
    {
      id: 'kind-17',
      rule: 'Namespace /finalize refuses a finalizer name that is neither standard nor qualified',
      source: 'upstream ValidateNamespaceFinalizeUpdate (validateFinalizerName)',
      upstream: '422 Invalid "spec.finalizers[0]: Invalid value: \\"bogus\\": name is neither a standard finalizer name nor is it fully qualified"',
      req: {
        method: 'PUT',
        path: '/api/v1/namespaces/cf-kinds-new/finalize',
        body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'cf-kinds-new' }, spec: { finalizers: ['bogus'] } },
      },
      expect: {
        status: 422,
        reason: 'Invalid',
        message: /spec\.finalizers\[0\]: Invalid value: "bogus": name is neither a standard finalizer name nor is it fully qualified/,
      },
    },
    {
      id: 'kind-18',
      rule: 'Namespace /finalize replaces spec.finalizers',
      source: 'resources Kinds and their paths (PUT .../finalize)',
      upstream: '200, spec.finalizers as sent',
      req: {
        method: 'PUT',
        path: '/api/v1/namespaces/cf-kinds-new/finalize',
        body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'cf-kinds-new' }, spec: { finalizers: ['example.com/x'] } },
      },
      expect: { status: 200, body: { spec: { finalizers: ['example.com/x'] } } },
    },
    {
      id: 'kind-19',
      rule: 'Namespace status: phase Active on a live namespace is accepted',
      source: 'upstream ValidateNamespaceStatusUpdate',
      upstream: '200',
      req: { method: 'PATCH', path: '/api/v1/namespaces/cf-kinds-new/status', body: { status: { phase: 'Active' } }, headers: MERGE },
      expect: { status: 200, body: { status: { phase: 'Active' } } },
    },
    {
      id: 'kind-20',
      rule: 'metadata.finalizers of a built-in kind: unqualified names must be standard',
      source: 'upstream ValidateObjectMeta (validateKubeFinalizerName)',
      upstream: '422 Invalid "metadata.finalizers[0]: Invalid value: \\"hold\\": name is neither a standard finalizer name nor is it fully qualified"',
      req: { method: 'POST', path: CM, body: { ...cm('k20'), metadata: { name: 'k20', finalizers: ['hold'] } } },
      expect: {
        status: 422,
        reason: 'Invalid',
        message: /metadata\.finalizers\[0\]: Invalid value: "hold": name is neither a standard finalizer name nor is it fully qualified/,
      },
    },
    {
      id: 'kind-21',
      rule: 'Lease leaseDurationSeconds must be positive',
      source: 'resources Lease (leaseDurationSeconds); upstream ValidateLeaseSpec',
      upstream: '422 Invalid "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"',
      req: { method: 'POST', path: LEASES, body: lease('l1', { leaseDurationSeconds: 0 }) },
      expect: { status: 422, reason: 'Invalid', message: /spec\.leaseDurationSeconds: Invalid value: 0: must be greater than 0/ },
    },
    {
      id: 'kind-22',
      rule: 'Lease leaseTransitions must not be negative',
      source: 'resources Lease (leaseTransitions); upstream ValidateLeaseSpec',
      upstream: '422 Invalid "spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0"',
      req: { method: 'POST', path: LEASES, body: lease('l2', { leaseTransitions: -1 }) },
      expect: { status: 422, reason: 'Invalid', message: /spec\.leaseTransitions: Invalid value: -1: must be greater than or equal to 0/ },
    },
    {
      id: 'kind-23',
      rule: 'A Lease has no metadata.generation',
      source: 'upstream lease strategy (no generation)',
      upstream: '201 without metadata.generation',
      req: { method: 'POST', path: LEASES, body: lease('l3', { holderIdentity: 'a' }) },
      expect: { status: 201, absent: ['metadata.generation'] },
    },
    {
      id: 'kind-24',
      rule: 'Lease leaseDurationSeconds of the wrong type does not decode',
      source: 'resources Lease (int32)',
      upstream:
        '400 BadRequest "Lease in version \\"v1\\" cannot be handled as a Lease: json: cannot unmarshal string into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32"',
      req: { method: 'POST', path: LEASES, body: lease('l4', { leaseDurationSeconds: '15' }) },
      expect: {
        status: 400,
        reason: 'BadRequest',
        message:
          /^Lease in version "v1" cannot be handled as a Lease: json: cannot unmarshal string into Go struct field LeaseSpec\.spec\.leaseDurationSeconds of type int32$/,
      },
    },
    {
      id: 'kind-25',
      rule: 'PriorityClass names with the system- prefix are reserved',
      source: 'upstream ValidatePriorityClass',
      upstream: '422 Invalid "metadata.name: Invalid value: \\"system-mine\\": priority class names with \'system-\' prefix are reserved for system use only"',
      req: { method: 'POST', path: PC, body: pc('system-mine', 10) },
      expect: { status: 422, reason: 'Invalid', message: /priority class names with 'system-' prefix are reserved for system use only/ },
    },
    {
      id: 'kind-26',
      rule: 'PriorityClass value above one billion is reserved',
      source: 'resources PriorityClass (value); upstream ValidatePriorityClass',
      upstream: '422 Invalid "value: Forbidden: maximum allowed value of a user defined priority is 1000000000"',
      req: { method: 'POST', path: PC, body: pc('too-high', 2000000000) },
      expect: { status: 422, reason: 'Invalid', message: /value: Forbidden: maximum allowed value of a user defined priority is 1000000000/ },
    },
    {
      id: 'kind-27',
      rule: 'PriorityClass: generation 1, preemptionPolicy defaults to PreemptLowerPriority',
      source: 'resources PriorityClass (preemptionPolicy default); upstream priorityclass strategy (generation 1)',
      upstream: '201, metadata.generation 1, preemptionPolicy PreemptLowerPriority',
      req: { method: 'POST', path: PC, body: pc('cf-low', 10) },
      expect: { status: 201, body: { metadata: { generation: 1 }, preemptionPolicy: 'PreemptLowerPriority' } },
    },
    {
      id: 'kind-28',
      rule: 'PriorityClass value is immutable',
      source: 'upstream ValidatePriorityClassUpdate',
      upstream: '422 Invalid "value: Forbidden: may not be changed in an update."',
      req: { method: 'PATCH', path: `${PC}/cf-low`, body: { value: 11 }, headers: MERGE },
      expect: { status: 422, reason: 'Invalid', message: /value: Forbidden: may not be changed in an update/ },
    },
    {
      id: 'kind-29',
      rule: 'PriorityClass generation stays 1 across updates',
      source: 'upstream priorityclass strategy (PrepareForUpdate keeps generation)',
      upstream: '200, metadata.generation 1',
      req: { method: 'PATCH', path: `${PC}/cf-low`, body: { description: 'changed' }, headers: MERGE },
      expect: { status: 200, body: { metadata: { generation: 1 }, description: 'changed' } },
    },
    {
      id: 'kind-30',
      rule: "Event involvedObject.namespace must match the Event's namespace",
      source: 'upstream ValidateEventCreate',
      upstream: '422 Invalid "involvedObject.namespace: Invalid value: \\"other\\": does not match event.namespace"',
      req: { method: 'POST', path: EVENTS, body: event('e1', { involvedObject: { kind: 'ConfigMap', name: 'x', namespace: 'other' } }) },
      expect: { status: 422, reason: 'Invalid', message: /involvedObject\.namespace: Invalid value: "other": does not match event\.namespace/ },
    },
    {
      id: 'kind-31',
      rule: 'Event eventTime is a MicroTime: stored in UTC with microseconds',
      source: 'resources (MicroTime); upstream metav1.MicroTime',
      upstream: '201, eventTime "2024-05-01T10:00:00.000001Z"',
      req: {
        method: 'POST',
        path: EVENTS,
        body: event('e2', { eventTime: '2024-05-01T12:00:00.000001+02:00', reportingComponent: 'test', reportingInstance: 'test-1', action: 'Do' }),
      },
      expect: { status: 201, body: { eventTime: '2024-05-01T10:00:00.000001Z' } },
    },
    {
      id: 'kind-32',
      rule: 'Event lastTimestamp is a Time: stored in UTC, second precision',
      source: 'resources (Time: RFC 3339); upstream metav1.Time',
      upstream: '201, lastTimestamp "2024-05-01T10:00:00Z"',
      req: { method: 'POST', path: EVENTS, body: event('e3', { lastTimestamp: '2024-05-01T12:00:00.75+02:00' }) },
      expect: { status: 201, body: { lastTimestamp: '2024-05-01T10:00:00Z' } },
    },
    {
      id: 'kind-33',
      rule: 'ServiceAccount create and get',
      source: 'resources ServiceAccount',
      upstream: '201 ServiceAccount',
      req: { method: 'POST', path: `/api/v1/namespaces/${NS}/serviceaccounts`, body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'sa-k' } } },
      expect: { status: 201, body: { kind: 'ServiceAccount', metadata: { name: 'sa-k', namespace: NS } } },
    },
    {
      id: 'kind-34',
      rule: 'Secret data above 1 MiB in total is refused',
      source: 'resources Secret (MaxSecretSize); upstream ValidateSecret',
      upstream: '422 Invalid "data: Too long: must have at most 1048576 bytes"',
      req: { method: 'POST', path: SECRETS, body: secret('big', { data: { k: Buffer.alloc(1048577, 1).toString('base64') } }) },
      expect: { status: 422, reason: 'Invalid', message: /data: Too long/ },
    },
    {
      id: 'kind-35',
      rule: 'Namespace status: an empty phase defaults to Active',
      source: 'upstream SetDefaults_NamespaceStatus, ValidateNamespaceStatusUpdate',
      upstream: '200, status.phase Active',
      req: {
        method: 'PUT',
        path: '/api/v1/namespaces/cf-kinds-new/status',
        body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'cf-kinds-new' }, status: {} },
      },
      expect: { status: 200, body: { status: { phase: 'Active' } } },
    },
    {
      id: 'kind-36',
      rule: 'Event with eventTime must name who reported it and what happened',
      source: 'upstream ValidateEventCreate (legacyValidateEvent, new-style Event)',
      upstream:
        '422 Invalid "[reportingController: Required value, reportingController: Invalid value: "": name part must be non-empty, ..., reportingInstance: Required value, action: Required value, ...]" (the internal field names)',
      req: { method: 'POST', path: EVENTS, body: event('e4', { eventTime: '2024-05-01T10:00:00.000000Z' }) },
      expect: {
        status: 422,
        reason: 'Invalid',
        message:
          /reportingController: Required value, reportingController: Invalid value: "": name part must be non-empty.*reportingInstance: Required value.*action: Required value/,
      },
    },
    {
      id: 'kind-37',
      rule: 'Lease acquireTime that is not a MicroTime does not decode (PUT body)',
      source: 'resources Lease (acquireTime: MicroTime)',
      upstream: '400 BadRequest "Lease in version \\"v1\\" cannot be handled as a Lease: parsing time ..."',
      req: { method: 'PUT', path: `${LEASES}/l3`, body: lease('l3', { acquireTime: '2024-01-01' }) },
      expect: { status: 400, reason: 'BadRequest', message: /^Lease in version "v1" cannot be handled as a Lease: parsing time "2024-01-01"/ },
    },
    {
      id: 'kind-38',
      rule: 'A new pod gets priority 0, PreemptLowerPriority and the not-ready and unreachable tolerations',
      source: 'upstream plugin/pkg/admission/priority and defaulttolerationseconds (enabled by default)',
      upstream:
        '201 with spec.priority 0, spec.preemptionPolicy PreemptLowerPriority, spec.tolerations node.kubernetes.io/not-ready and node.kubernetes.io/unreachable, NoExecute for 300 s',
      req: { method: 'POST', path: PODS, body: pod('pr-1', { tolerations: [{ key: 'a', operator: 'Exists' }] }) },
      expect: {
        status: 201,
        body: {
          spec: {
            priority: 0,
            preemptionPolicy: 'PreemptLowerPriority',
            tolerations: [
              { key: 'a', operator: 'Exists' },
              { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
              { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
            ],
          },
        },
        absent: ['spec.priorityClassName'],
      },
    },
    {
      id: 'kind-39',
      rule: 'A pod naming a PriorityClass that does not exist is refused',
      source: 'resources PriorityClass; upstream plugin/pkg/admission/priority',
      upstream: '403 Forbidden "pods \\"pr-2\\" is forbidden: no PriorityClass with name cf-nope was found"',
      req: { method: 'POST', path: PODS, body: pod('pr-2', { priorityClassName: 'cf-nope' }) },
      expect: { status: 403, reason: 'Forbidden', message: 'pods "pr-2" is forbidden: no PriorityClass with name cf-nope was found' },
    },
    {
      id: 'kind-40',
      rule: "A pod takes its PriorityClass's value and preemption policy, and may not set others",
      source: 'resources PriorityClass (value, preemptionPolicy); upstream plugin/pkg/admission/priority',
      upstream:
        '201 with spec.priority 50 and spec.preemptionPolicy Never; a pod giving priority 7: 403 "the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 50 from the given PriorityClass name"',
      setup: [{ method: 'POST', path: PC, body: pc('cf-never', 50, { preemptionPolicy: 'Never' }) }],
      req: { method: 'POST', path: PODS, body: pod('pr-3', { priorityClassName: 'cf-never' }) },
      expect: { status: 201, body: { spec: { priorityClassName: 'cf-never', priority: 50, preemptionPolicy: 'Never' } } },
      then: [
        {
          req: { method: 'POST', path: PODS, body: pod('pr-4', { priorityClassName: 'cf-never', priority: 7 }) },
          expect: {
            status: 403,
            reason: 'Forbidden',
            message:
              'pods "pr-4" is forbidden: the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 50 from the given PriorityClass name',
          },
        },
      ],
    },
    {
      id: 'kind-41',
      rule: 'Only one PriorityClass is the global default, and a pod naming none takes it',
      source: 'resources PriorityClass (globalDefault); upstream plugin/pkg/admission/priority',
      upstream:
        '403 Forbidden "priorityclasses.scheduling.k8s.io \\"cf-default2\\" is forbidden: PriorityClass cf-default is already marked as default. Only one default can exist"; a new pod: priorityClassName cf-default, priority 5',
      setup: [{ method: 'POST', path: PC, body: pc('cf-default', 5, { globalDefault: true }) }],
      req: { method: 'POST', path: PC, body: pc('cf-default2', 6, { globalDefault: true }) },
      expect: {
        status: 403,
        reason: 'Forbidden',
        message:
          'priorityclasses.scheduling.k8s.io "cf-default2" is forbidden: PriorityClass cf-default is already marked as default. Only one default can exist',
      },
      then: [
        { req: { method: 'POST', path: PODS, body: pod('pr-5') }, expect: { status: 201, body: { spec: { priorityClassName: 'cf-default', priority: 5 } } } },
        { req: { method: 'DELETE', path: `${PC}/cf-default` }, expect: { status: 200 } },
        {
          req: { method: 'POST', path: PODS, body: pod('pr-6') },
          expect: { status: 201, body: { spec: { priority: 0 } }, absent: ['spec.priorityClassName'] },
        },
      ],
    },
    {
      id: 'kind-42',
      rule: "A pod naming no image pull secrets gets its service account's",
      source: 'upstream plugin/pkg/admission/serviceaccount (imagePullSecrets)',
      upstream: '201 with spec.imagePullSecrets [{name: regcred}]',
      setup: [
        {
          method: 'POST',
          path: `/api/v1/namespaces/${NS}/serviceaccounts`,
          body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'puller' }, imagePullSecrets: [{ name: 'regcred' }] },
        },
      ],
      req: { method: 'POST', path: PODS, body: pod('pr-7', { serviceAccountName: 'puller' }) },
      expect: { status: 201, body: { spec: { serviceAccountName: 'puller', imagePullSecrets: [{ name: 'regcred' }] } } },
    },
    {
      id: 'kind-43',
      rule: "A pod's eviction deletes it and answers 201 with a Status; the Eviction must name the pod",
      source: 'conventions (the Pod subresource eviction, a virtual type); upstream registry/core/pod/storage/eviction.go',
      upstream: '201 Status Success; a different name: 400 "name in URL does not match name in Eviction object"; a missing pod: 404',
      setup: [{ method: 'POST', path: PODS, body: pod('ev-1') }],
      req: { method: 'POST', path: `${PODS}/ev-1/eviction`, body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'ev-1' } } },
      expect: { status: 201, body: { kind: 'Status', status: 'Success', code: 201 } },
      then: [
        { req: { method: 'GET', path: `${PODS}/ev-1` }, expect: { status: 404 } },
        {
          req: { method: 'POST', path: `${PODS}/ev-2/eviction`, body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'other' } } },
          expect: { status: 400, reason: 'BadRequest', message: 'name in URL does not match name in Eviction object' },
        },
        {
          req: { method: 'POST', path: `${PODS}/ev-2/eviction`, body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'ev-2' } } },
          expect: { status: 404, reason: 'NotFound', message: 'pods "ev-2" not found' },
        },
      ],
    },
  ],
};
