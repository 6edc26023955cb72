/**
 * Rules of ControllerRevision, HorizontalPodAutoscaler, RuntimeClass (and its admission of
 * pods), APIService, FlowSchema, PriorityLevelConfiguration and PodSecurityPolicy (resources
 * "Resources and their fields", "Delete response bodies"; upstream validation of
 * pkg/apis/apps, autoscaling, node, policy, flowcontrol and kube-aggregator apiregistration),
 * and deprecated APIs (conventions "Versioning").
 */
import type { RowGroup } from './conformance.types.js';

const NS = 'cf-kinds-misc';
const CR = `/apis/apps/v1/namespaces/${NS}/controllerrevisions`;
const HPA = `/apis/autoscaling/v1/namespaces/${NS}/horizontalpodautoscalers`;
const RC = '/apis/node.k8s.io/v1/runtimeclasses';
const PODS = `/api/v1/namespaces/${NS}/pods`;
const pod = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'nginx' }], automountServiceAccountToken: false, ...spec },
});
/** A class with an overhead and scheduling constraints. */
const RC_SANDBOX = {
  apiVersion: 'node.k8s.io/v1',
  kind: 'RuntimeClass',
  metadata: { name: 'cf-rc-sandbox' },
  handler: 'runsc',
  overhead: { podFixed: { cpu: '250m', memory: '120Mi' } },
  scheduling: { nodeSelector: { sandbox: 'true' }, tolerations: [{ key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' }] },
};
const AS = '/apis/apiregistration.k8s.io/v1/apiservices';
const FC = '/apis/flowcontrol.apiserver.k8s.io/v1';
const PSP = '/apis/policy/v1beta1/podsecuritypolicies';
const MERGE = { 'content-type': 'application/merge-patch+json' };
const PSP_WARNING = '299 - "policy/v1beta1 PodSecurityPolicy is deprecated in v1.21+, unavailable in v1.25+"';
const psp = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'policy/v1beta1',
  kind: 'PodSecurityPolicy',
  metadata: { name },
  spec: { runAsUser: { rule: 'RunAsAny' }, seLinux: { rule: 'RunAsAny' }, fsGroup: { rule: 'RunAsAny' }, supplementalGroups: { rule: 'RunAsAny' }, ...spec },
});
const hpa = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'autoscaling/v1',
  kind: 'HorizontalPodAutoscaler',
  metadata: { name },
  spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 3, ...spec },
});

/** The group. */
export const KINDS_MISC: RowGroup = {
  name: 'kinds beyond core',
  namespace: NS,
  rows: [
    {
      id: 'kmisc-01',
      rule: 'ControllerRevision data is immutable',
      source: 'resources Kinds and their paths (ControllerRevision); upstream apps/validation',
      upstream: '422 Invalid "data: Invalid value: ...: field is immutable"',
      setup: [{ method: 'POST', path: CR, body: { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'r1' }, revision: 1, data: { a: 1 } } }],
      req: { method: 'PATCH', path: `${CR}/r1`, body: { data: { a: 2 } }, headers: MERGE },
      expect: { status: 422, reason: 'Invalid', message: /^ControllerRevision\.apps "r1" is invalid: data: Invalid value: .*: field is immutable$/ },
    },
    {
      id: 'kmisc-02',
      rule: 'ControllerRevision delete answers with a Status',
      source: 'resources Delete response bodies',
      upstream: '200 Status Success',
      setup: [{ method: 'POST', path: CR, body: { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'r2' }, revision: 1, data: {} } }],
      req: { method: 'DELETE', path: `${CR}/r2` },
      expect: { status: 200, body: { kind: 'Status', status: 'Success', details: { name: 'r2', group: 'apps', kind: 'controllerrevisions' } } },
    },
    {
      id: 'kmisc-03',
      rule: 'HorizontalPodAutoscaler maxReplicas is at least minReplicas; status starts empty',
      source: 'upstream autoscaling/validation',
      upstream: '422 Invalid "spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`"',
      req: { method: 'POST', path: HPA, body: hpa('h1', { minReplicas: 4, maxReplicas: 2 }) },
      expect: {
        status: 422,
        reason: 'Invalid',
        message: 'HorizontalPodAutoscaler.autoscaling "h1" is invalid: spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`',
      },
      then: [
        {
          req: { method: 'POST', path: HPA, body: { ...hpa('h2', {}), status: { currentReplicas: 9, desiredReplicas: 9 } } },
          expect: { status: 201, body: { spec: { minReplicas: 1 }, status: { currentReplicas: 0, desiredReplicas: 0 } } },
        },
      ],
    },
    {
      id: 'kmisc-04',
      rule: 'RuntimeClass handler is immutable',
      source: 'resources RuntimeClass (handler immutable)',
      upstream: '422 Invalid "handler: Invalid value: \\"runc\\": field is immutable"',
      setup: [{ method: 'POST', path: RC, body: { apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name: 'cf-rc' }, handler: 'runsc' } }],
      req: { method: 'PATCH', path: `${RC}/cf-rc`, body: { handler: 'runc' }, headers: MERGE },
      expect: { status: 422, reason: 'Invalid', message: 'RuntimeClass.node.k8s.io "cf-rc" is invalid: handler: Invalid value: "runc": field is immutable' },
    },
    {
      id: 'kmisc-05',
      rule: 'APIService name is <version>.<group>; priorities in range',
      source: 'resources APIService',
      upstream:
        '422 Invalid "[metadata.name: Invalid value: ...: must be `spec.version+\\".\\"+spec.group`: ..., spec.versionPriority: Invalid value: 0: must be positive and less than 1000]"',
      req: {
        method: 'POST',
        path: AS,
        body: {
          apiVersion: 'apiregistration.k8s.io/v1',
          kind: 'APIService',
          metadata: { name: 'v1.wrong.example.com' },
          spec: { group: 'cf.example.com', version: 'v1', groupPriorityMinimum: 100, versionPriority: 0, service: { namespace: 'a', name: 'b' } },
        },
      },
      expect: {
        status: 422,
        reason: 'Invalid',
        message:
          'APIService.apiregistration.k8s.io "v1.wrong.example.com" is invalid: [metadata.name: Invalid value: "v1.wrong.example.com": must be `spec.version+"."+spec.group`: "v1.cf.example.com", spec.versionPriority: Invalid value: 0: must be positive and less than 1000]',
      },
    },
    {
      id: 'kmisc-06',
      rule: 'A local APIService exists for every served group-version, Available',
      source: 'upstream kube-aggregator autoregister',
      upstream: '200 spec {group: apps, version: v1, groupPriorityMinimum: 17800, versionPriority: 15}, Available True',
      req: { method: 'GET', path: `${AS}/v1.apps` },
      expect: {
        status: 200,
        body: {
          spec: { group: 'apps', version: 'v1', groupPriorityMinimum: 17800, versionPriority: 15 },
          status: { conditions: [{ type: 'Available', status: 'True', reason: 'Local' }] },
        },
        absent: ['spec.service'],
      },
    },
    {
      id: 'kmisc-12',
      rule: 'APIService status is written through /status only; a condition status is True, False or Unknown',
      source: 'resources Kinds and their paths (APIService status); upstream apiregistration/validation',
      upstream: '422 Invalid "status.conditions[0].status: Unsupported value: \\"Up\\": supported values: \\"True\\", \\"False\\", \\"Unknown\\""',
      setup: [
        {
          method: 'POST',
          path: AS,
          body: {
            apiVersion: 'apiregistration.k8s.io/v1',
            kind: 'APIService',
            metadata: { name: 'v1.status.example.com' },
            spec: { group: 'status.example.com', version: 'v1', groupPriorityMinimum: 100, versionPriority: 10, service: { namespace: 'a', name: 'b' } },
            status: { conditions: [{ type: 'Available', status: 'True' }] },
          },
          expect: { status: 201, absent: ['status.conditions'] },
        },
      ],
      req: {
        method: 'PATCH',
        path: `${AS}/v1.status.example.com/status`,
        body: { status: { conditions: [{ type: 'Available', status: 'Up' }] } },
        headers: MERGE,
      },
      expect: {
        status: 422,
        reason: 'Invalid',
        message:
          'APIService.apiregistration.k8s.io "v1.status.example.com" is invalid: status.conditions[0].status: Unsupported value: "Up": supported values: "True", "False", "Unknown"',
      },
      then: [
        {
          req: {
            method: 'PATCH',
            path: `${AS}/v1.status.example.com/status`,
            body: { status: { conditions: [{ type: 'Available', status: 'False', reason: 'ServiceNotFound' }] } },
            headers: MERGE,
          },
          expect: { status: 200, body: { status: { conditions: [{ type: 'Available', status: 'False', reason: 'ServiceNotFound' }] } } },
        },
      ],
    },
    {
      id: 'kmisc-07',
      rule: 'FlowSchema needs a priority level and a matching precedence in 1-10000',
      source: 'resources FlowSchema',
      upstream:
        '422 Invalid "[spec.matchingPrecedence: Invalid value: 0: must be a positive value, spec.priorityLevelConfiguration.name: Required value: must reference a priority level]"',
      req: {
        method: 'POST',
        path: `${FC}/flowschemas`,
        body: {
          apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
          kind: 'FlowSchema',
          metadata: { name: 'cf-fs' },
          spec: { matchingPrecedence: 0, priorityLevelConfiguration: { name: '' } },
        },
      },
      expect: {
        status: 422,
        reason: 'Invalid',
        message:
          'FlowSchema.flowcontrol.apiserver.k8s.io "cf-fs" is invalid: [spec.matchingPrecedence: Invalid value: 0: must be a positive value, spec.priorityLevelConfiguration.name: Required value: must reference a priority level]',
      },
    },
    {
      id: 'kmisc-08',
      rule: 'A Limited priority level needs its limits; queuing parameters are defaulted',
      source: 'upstream flowcontrol/validation, v1 defaults',
      upstream: '422 Invalid "spec.limited: Required value: must not be empty when type is Limited"; defaults 30 shares, 64 queues, hand 8, length 50',
      req: {
        method: 'POST',
        path: `${FC}/prioritylevelconfigurations`,
        body: { apiVersion: 'flowcontrol.apiserver.k8s.io/v1', kind: 'PriorityLevelConfiguration', metadata: { name: 'cf-pl' }, spec: { type: 'Limited' } },
      },
      expect: {
        status: 422,
        reason: 'Invalid',
        message:
          'PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io "cf-pl" is invalid: spec.limited: Required value: must not be empty when type is Limited',
      },
      then: [
        {
          req: {
            method: 'POST',
            path: `${FC}/prioritylevelconfigurations`,
            body: {
              apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
              kind: 'PriorityLevelConfiguration',
              metadata: { name: 'cf-pl' },
              spec: { type: 'Limited', limited: { limitResponse: { type: 'Queue', queuing: {} } } },
            },
          },
          expect: {
            status: 201,
            body: {
              spec: {
                limited: { nominalConcurrencyShares: 30, lendablePercent: 0, limitResponse: { queuing: { queues: 64, handSize: 8, queueLengthLimit: 50 } } },
              },
            },
          },
        },
      ],
    },
    {
      id: 'kmisc-09',
      rule: 'PodSecurityPolicy: ranges required for MustRunAs; allowPrivilegeEscalation defaults to true',
      source: 'resources PodSecurityPolicy',
      upstream: 'the API accepted an empty range list (admission refused the policy later); default allowPrivilegeEscalation true',
      divergence: 'the resources document requires ranges for MustRunAs, so the API refuses the policy at once',
      req: { method: 'POST', path: PSP, body: psp('cf-psp1', { runAsUser: { rule: 'MustRunAs' } }) },
      expect: {
        status: 422,
        reason: 'Invalid',
        message: 'PodSecurityPolicy.policy "cf-psp1" is invalid: spec.runAsUser.ranges: Required value: ranges are required for MustRunAs',
        headers: { warning: PSP_WARNING },
      },
      then: [
        {
          req: { method: 'POST', path: PSP, body: psp('cf-psp1') },
          expect: { status: 201, body: { spec: { allowPrivilegeEscalation: true } }, headers: { warning: PSP_WARNING } },
        },
      ],
    },
    {
      id: 'kmisc-10',
      rule: 'PodSecurityPolicy delete answers with the object, and the deprecation warning',
      source: 'resources Delete response bodies; conventions Versioning (deprecated endpoints)',
      upstream: '200 PodSecurityPolicy; Warning: 299 - "policy/v1beta1 PodSecurityPolicy is deprecated in v1.21+, unavailable in v1.25+"',
      setup: [{ method: 'POST', path: PSP, body: psp('cf-psp2') }],
      req: { method: 'DELETE', path: `${PSP}/cf-psp2` },
      expect: { status: 200, body: { kind: 'PodSecurityPolicy', metadata: { name: 'cf-psp2' } }, headers: { warning: PSP_WARNING } },
    },
    {
      id: 'kmisc-11',
      rule: 'componentstatuses lists the storage, with the deprecation warning',
      source: 'conventions Versioning; upstream registry/core/componentstatus',
      upstream: '200 ComponentStatusList with etcd-0 Healthy (and scheduler, controller-manager); Warning "v1 ComponentStatus is deprecated in v1.19+"',
      divergence: "no separate scheduler or controller-manager process to probe: only etcd-0, this node's storage",
      req: { method: 'GET', path: '/api/v1/componentstatuses' },
      expect: {
        status: 200,
        body: { kind: 'ComponentStatusList', items: [{ metadata: { name: 'etcd-0' }, conditions: [{ type: 'Healthy', status: 'True', message: 'ok' }] }] },
        headers: { warning: '299 - "v1 ComponentStatus is deprecated in v1.19+"' },
      },
    },
    {
      id: 'kmisc-13',
      rule: 'A pod naming a RuntimeClass that does not exist is refused',
      source: 'resources RuntimeClass; upstream plugin/pkg/admission/runtimeclass',
      upstream: '403 Forbidden "pods \\"rc-p1\\" is forbidden: pod rejected: RuntimeClass \\"cf-missing\\" not found"',
      req: { method: 'POST', path: PODS, body: pod('rc-p1', { runtimeClassName: 'cf-missing' }) },
      expect: { status: 403, reason: 'Forbidden', message: 'pods "rc-p1" is forbidden: pod rejected: RuntimeClass "cf-missing" not found' },
    },
    {
      id: 'kmisc-14',
      rule: "A pod takes its RuntimeClass's overhead, node selector and tolerations",
      source: 'resources RuntimeClass (scheduling: nodeSelector merged, tolerations appended); upstream plugin/pkg/admission/runtimeclass',
      upstream:
        '201 with spec.overhead the class podFixed, spec.nodeSelector the union, spec.tolerations merged after DefaultTolerationSeconds added its two (a toleration another tolerates a superset of left out)',
      setup: [{ method: 'POST', path: RC, body: RC_SANDBOX }],
      req: {
        method: 'POST',
        path: PODS,
        body: pod('rc-p2', {
          runtimeClassName: 'cf-rc-sandbox',
          nodeSelector: { disk: 'ssd' },
          tolerations: [
            { key: 'sandbox', operator: 'Equal', value: 'yes', effect: 'NoSchedule' },
            { key: 'other', operator: 'Exists' },
          ],
        }),
      },
      expect: {
        status: 201,
        body: {
          spec: {
            overhead: { cpu: '250m', memory: '120Mi' },
            nodeSelector: { disk: 'ssd', sandbox: 'true' },
            tolerations: [
              { key: 'other', operator: 'Exists' },
              { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
              { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
              { key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' },
            ],
          },
        },
      },
    },
    {
      id: 'kmisc-15',
      rule: "A pod whose node selector or overhead contradicts its RuntimeClass's is refused",
      source: 'resources RuntimeClass (nodeSelector conflicts reject the Pod); upstream plugin/pkg/admission/runtimeclass',
      upstream:
        '403 Forbidden "pods \\"rc-p3\\" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = true; pod.spec.nodeSelector[sandbox] = false"; an overhead that differs: "pod rejected: Pod\'s Overhead doesn\'t match RuntimeClass\'s defined Overhead"',
      setup: [{ method: 'POST', path: RC, body: { ...RC_SANDBOX, metadata: { name: 'cf-rc-sandbox2' } } }],
      req: { method: 'POST', path: PODS, body: pod('rc-p3', { runtimeClassName: 'cf-rc-sandbox2', nodeSelector: { sandbox: 'false' } }) },
      expect: {
        status: 403,
        reason: 'Forbidden',
        message: 'pods "rc-p3" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = true; pod.spec.nodeSelector[sandbox] = false',
      },
      then: [
        {
          req: { method: 'POST', path: PODS, body: pod('rc-p4', { runtimeClassName: 'cf-rc-sandbox2', overhead: { cpu: '1' } }) },
          expect: {
            status: 403,
            reason: 'Forbidden',
            message: "pods \"rc-p4\" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
          },
        },
        {
          req: { method: 'POST', path: PODS, body: pod('rc-p5', { overhead: { cpu: '1' } }) },
          expect: {
            status: 403,
            reason: 'Forbidden',
            message: 'pods "rc-p5" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead',
          },
        },
        { req: { method: 'GET', path: `${PODS}/rc-p3` }, expect: { status: 404 } },
      ],
    },
  ],
};
