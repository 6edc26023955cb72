/**
 * Rules of the apps/v1 workloads ReplicaSet, StatefulSet and DaemonSet as stored kinds (no
 * controllers): defaults (pkg/apis/apps/v1 defaults.go and the pod template's core defaults),
 * validation (pkg/apis/apps/validation and the apps/v1 strategies), the scale subresource
 * (autoscaling/v1 Scale) and kubectl's columns (pkg/printers/internalversion printers.go).
 */
import type { RowGroup } from './conformance.types.js';

const NS = 'cf-appswl';
const RS = `/apis/apps/v1/namespaces/${NS}/replicasets`;
const STS = `/apis/apps/v1/namespaces/${NS}/statefulsets`;
const DS = `/apis/apps/v1/namespaces/${NS}/daemonsets`;
const MERGE = { 'content-type': 'application/merge-patch+json' };
const TABLE = 'application/json;as=Table;g=meta.k8s.io;v=v1';

type Obj = Record<string, unknown>;
/** A workload of `kind` running nginx pods labelled app=<name>; `spec` and `podSpec` add or replace fields. */
const workload = (kind: string, name: string, spec: Obj = {}, podSpec: Obj = {}, labels: Obj = { app: name }) => ({
  apiVersion: 'apps/v1',
  kind,
  metadata: { name },
  spec: {
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }], ...podSpec } },
    ...spec,
  },
});
const rs = (name: string, spec: Obj = {}, podSpec: Obj = {}, labels?: Obj) => workload('ReplicaSet', name, spec, podSpec, labels);
const sts = (name: string, spec: Obj = {}, podSpec: Obj = {}, labels?: Obj) => workload('StatefulSet', name, { serviceName: name, ...spec }, podSpec, labels);
const ds = (name: string, spec: Obj = {}, podSpec: Obj = {}, labels?: Obj) => workload('DaemonSet', name, spec, podSpec, labels);

/** The group. */
export const APPS_WORKLOADS: RowGroup = {
  name: 'apps/v1 ReplicaSet, StatefulSet, DaemonSet',
  namespace: NS,
  rows: [
    {
      id: 'appswl-1',
      rule: "A ReplicaSet created from JSON gets Kubernetes' defaults, generation 1 and a status of 0 replicas",
      source: 'upstream pkg/apis/apps/v1 defaults.go (SetDefaults_ReplicaSet); pkg/registry/apps/replicaset strategy.go (PrepareForCreate)',
      upstream: '201: replicas 1, template restartPolicy Always, dnsPolicy ClusterFirst, imagePullPolicy IfNotPresent; status {replicas: 0}',
      req: { method: 'POST', path: RS, body: rs('r1') },
      expect: {
        status: 201,
        body: {
          metadata: { generation: 1 },
          spec: {
            replicas: 1,
            template: {
              spec: {
                restartPolicy: 'Always',
                dnsPolicy: 'ClusterFirst',
                terminationGracePeriodSeconds: 30,
                schedulerName: 'default-scheduler',
                securityContext: {},
                containers: [{ imagePullPolicy: 'IfNotPresent', terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File' }],
              },
            },
          },
          status: { replicas: 0 },
        },
      },
    },
    {
      id: 'appswl-2',
      rule: 'A ReplicaSet: the selector must be non-empty and match the template labels, and the template restarts Always',
      source: 'upstream pkg/apis/apps/validation (ValidateReplicaSetSpec, ValidatePodTemplateSpecForReplicaSet)',
      upstream:
        '422 "spec.template.metadata.labels: Invalid value: ...: `selector` does not match template `labels`"; 422 "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment"; 422 restartPolicy Unsupported value',
      req: { method: 'POST', path: RS, body: rs('r2', {}, {}, { app: 'x' }) },
      expect: {
        status: 422,
        reason: 'Invalid',
        message:
          'ReplicaSet.apps "r2" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"x"}: `selector` does not match template `labels`',
      },
      then: [
        {
          req: { method: 'POST', path: RS, body: rs('r2', { selector: {} }) },
          expect: {
            status: 422,
            message:
              'ReplicaSet.apps "r2" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment',
          },
        },
        {
          req: { method: 'POST', path: RS, body: rs('r2', {}, { restartPolicy: 'Never' }) },
          expect: {
            status: 422,
            message: 'ReplicaSet.apps "r2" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
          },
        },
      ],
    },
    {
      id: 'appswl-3',
      rule: 'A ReplicaSet: the selector cannot change in apps/v1; a spec change bumps the generation',
      source: 'upstream pkg/registry/apps/replicaset strategy.go (PrepareForUpdate, ValidateUpdate)',
      upstream: '422 Invalid "spec.selector: Invalid value: ...: field is immutable"; a replicas change -> generation 2',
      setup: [{ method: 'POST', path: RS, body: rs('r3') }],
      req: {
        method: 'PATCH',
        path: `${RS}/r3`,
        body: { spec: { selector: { matchLabels: { app: 'r3', tier: 'web' } }, template: { metadata: { labels: { app: 'r3', tier: 'web' } } } } },
        headers: MERGE,
      },
      expect: { status: 422, reason: 'Invalid', message: /^ReplicaSet\.apps "r3" is invalid: spec\.selector: Invalid value: .*: field is immutable$/ },
      then: [
        {
          req: { method: 'PATCH', path: `${RS}/r3`, body: { spec: { replicas: 2 } }, headers: MERGE },
          expect: { status: 200, body: { metadata: { generation: 2 }, spec: { replicas: 2 } } },
        },
      ],
    },
    {
      id: 'appswl-4',
      rule: 'A ReplicaSet has the scale subresource (autoscaling/v1 Scale) and a status subresource',
      source: 'upstream pkg/registry/apps/replicaset/storage (ScaleREST, StatusREST)',
      upstream:
        'GET scale 200 {spec.replicas 2, status.selector "app=r4"}; PUT replicas 5 -> ReplicaSet spec.replicas 5; PUT status readyReplicas 2 > replicas 1 -> 422',
      setup: [{ method: 'POST', path: RS, body: rs('r4', { replicas: 2 }) }],
      req: { method: 'GET', path: `${RS}/r4/scale` },
      expect: {
        status: 200,
        body: {
          apiVersion: 'autoscaling/v1',
          kind: 'Scale',
          metadata: { name: 'r4', namespace: NS },
          spec: { replicas: 2 },
          // status.replicas follows the pods the ReplicaSet controller creates.
          status: { selector: 'app=r4' },
        },
      },
      then: [
        {
          req: {
            method: 'PUT',
            path: `${RS}/r4/scale`,
            body: { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'r4' }, spec: { replicas: 5 } },
          },
          expect: { status: 200, body: { kind: 'Scale', spec: { replicas: 5 } } },
        },
        { req: { method: 'GET', path: `${RS}/r4` }, expect: { status: 200, body: { metadata: { generation: 2 }, spec: { replicas: 5 } } } },
        {
          req: {
            method: 'PATCH',
            path: `${RS}/r4/status`,
            body: { status: { replicas: 1, readyReplicas: 2, fullyLabeledReplicas: 1, availableReplicas: 0 } },
            headers: MERGE,
          },
          expect: { status: 422, message: 'ReplicaSet.apps "r4" is invalid: status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas' },
        },
        {
          req: {
            method: 'PATCH',
            path: `${RS}/r4/status`,
            body: { status: { replicas: 2, readyReplicas: 1, fullyLabeledReplicas: 2, availableReplicas: 1 } },
            headers: MERGE,
          },
          expect: { status: 200, body: { metadata: { generation: 2 }, status: { replicas: 2, readyReplicas: 1 } } },
        },
      ],
    },
    {
      id: 'appswl-5',
      rule: "A ReplicaSet in kubectl's columns: DESIRED, CURRENT, READY, AGE; -o wide adds CONTAINERS, IMAGES, SELECTOR",
      source: 'upstream pkg/printers/internalversion printers.go (printReplicaSet)',
      upstream:
        '200 Table with columns Name, Desired, Current, Ready, Age, Containers, Images, Selector; cells ["r5",3,0,0,"<age>","web","nginx:1.27","app=r5"]',
      setup: [{ method: 'POST', path: RS, body: rs('r5', { replicas: 3 }) }],
      req: { method: 'GET', path: `${RS}/r5`, headers: { accept: TABLE } },
      expect: {
        status: 200,
        body: {
          kind: 'Table',
          columnDefinitions: [
            { name: 'Name' },
            { name: 'Desired', type: 'integer' },
            { name: 'Current', type: 'integer' },
            { name: 'Ready', type: 'integer' },
            { name: 'Age' },
            { name: 'Containers', priority: 1 },
            { name: 'Images', priority: 1 },
            { name: 'Selector', priority: 1 },
          ],
        },
        // CURRENT: 0 until the ReplicaSet controller has created the pods.
        text: /"cells":\["r5",3,[03],0,"\d+s","web","nginx:1\.27","app=r5"\]/,
      },
    },
    {
      id: 'appswl-6',
      rule: "A StatefulSet created from JSON gets Kubernetes' defaults, generation 1 and an empty status",
      source: 'upstream pkg/apis/apps/v1 defaults.go (SetDefaults_StatefulSet); pkg/registry/apps/statefulset strategy.go (PrepareForCreate)',
      upstream:
        '201: replicas 1, podManagementPolicy OrderedReady, updateStrategy RollingUpdate partition 0, revisionHistoryLimit 10, persistentVolumeClaimRetentionPolicy Retain/Retain; status {replicas: 0, availableReplicas: 0}',
      req: { method: 'POST', path: STS, body: sts('s1') },
      expect: {
        status: 201,
        body: {
          metadata: { generation: 1 },
          spec: {
            replicas: 1,
            podManagementPolicy: 'OrderedReady',
            updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
            revisionHistoryLimit: 10,
            persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
            template: { spec: { restartPolicy: 'Always', dnsPolicy: 'ClusterFirst', containers: [{ imagePullPolicy: 'IfNotPresent' }] } },
          },
          status: { replicas: 0, availableReplicas: 0 },
        },
      },
    },
    {
      id: 'appswl-7',
      rule: 'A StatefulSet: the selector must be non-empty and match the template labels; serviceName may be empty',
      source: 'upstream pkg/apis/apps/validation (ValidateStatefulSetSpec, ValidatePodTemplateSpecForStatefulSet)',
      upstream:
        '422 "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for statefulset"; 422 "`selector` does not match template `labels`"; 201 without serviceName',
      req: { method: 'POST', path: STS, body: sts('s2', { selector: {} }) },
      expect: {
        status: 422,
        reason: 'Invalid',
        message:
          'StatefulSet.apps "s2" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for statefulset',
      },
      then: [
        {
          req: { method: 'POST', path: STS, body: sts('s2', {}, {}, { app: 'x' }) },
          expect: {
            status: 422,
            message:
              'StatefulSet.apps "s2" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"x"}: `selector` does not match template `labels`',
          },
        },
        { req: { method: 'POST', path: STS, body: sts('s2', { serviceName: '' }) }, expect: { status: 201 } },
      ],
    },
    {
      id: 'appswl-8',
      rule: 'A StatefulSet update may change only replicas, ordinals, template, updateStrategy, persistentVolumeClaimRetentionPolicy and minReadySeconds',
      source: 'upstream pkg/apis/apps/validation (ValidateStatefulSetUpdate)',
      upstream:
        "422 Forbidden \"spec: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden\"; a minReadySeconds change -> 200, generation 2",
      setup: [{ method: 'POST', path: STS, body: sts('s3') }],
      req: { method: 'PATCH', path: `${STS}/s3`, body: { spec: { serviceName: 'other' } }, headers: MERGE },
      expect: {
        status: 422,
        reason: 'Invalid',
        message:
          "StatefulSet.apps \"s3\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
      },
      then: [
        {
          req: { method: 'PATCH', path: `${STS}/s3`, body: { spec: { minReadySeconds: 5 } }, headers: MERGE },
          expect: { status: 200, body: { metadata: { generation: 2 }, spec: { minReadySeconds: 5 } } },
        },
      ],
    },
    {
      id: 'appswl-9',
      rule: "A StatefulSet has the scale subresource; kubectl's columns are READY (ready/desired) and AGE, -o wide adds CONTAINERS, IMAGES",
      source: 'upstream pkg/registry/apps/statefulset/storage (ScaleREST); pkg/printers/internalversion printers.go (printStatefulSet)',
      upstream: 'PUT scale replicas 3 -> 200; Table columns Name, Ready, Age, Containers, Images; cells ["s4","0/3","<age>","web","nginx:1.27"]',
      // Created with no replicas: the StatefulSet controller has no pod to count yet when the scale answers.
      setup: [{ method: 'POST', path: STS, body: sts('s4', { replicas: 0 }) }],
      req: { method: 'PUT', path: `${STS}/s4/scale`, body: { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 's4' }, spec: { replicas: 3 } } },
      expect: { status: 200, body: { kind: 'Scale', spec: { replicas: 3 }, status: { replicas: 0, selector: 'app=s4' } } },
      then: [
        {
          req: { method: 'GET', path: `${STS}/s4`, headers: { accept: TABLE } },
          expect: {
            status: 200,
            body: {
              columnDefinitions: [
                { name: 'Name' },
                { name: 'Ready', type: 'string' },
                { name: 'Age' },
                { name: 'Containers', priority: 1 },
                { name: 'Images', priority: 1 },
              ],
            },
            text: /"cells":\["s4","0\/3","\d+s","web","nginx:1\.27"\]/,
          },
        },
      ],
    },
    {
      id: 'appswl-10',
      rule: "A DaemonSet created from JSON gets Kubernetes' defaults, template generation 1 and an empty status",
      source: 'upstream pkg/apis/apps/v1 defaults.go (SetDefaults_DaemonSet); pkg/registry/apps/daemonset strategy.go (PrepareForCreate)',
      upstream:
        '201: updateStrategy RollingUpdate maxUnavailable 1 maxSurge 0, revisionHistoryLimit 10, annotation deprecated.daemonset.template.generation "1"; status with the four counts 0',
      req: { method: 'POST', path: DS, body: ds('d1') },
      expect: {
        status: 201,
        body: {
          metadata: { generation: 1, annotations: { 'deprecated.daemonset.template.generation': '1' } },
          spec: {
            updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
            revisionHistoryLimit: 10,
            template: { spec: { restartPolicy: 'Always', containers: [{ imagePullPolicy: 'IfNotPresent' }] } },
          },
          status: { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 },
        },
      },
    },
    {
      id: 'appswl-11',
      rule: 'A DaemonSet: exactly one of maxUnavailable and maxSurge is non-zero; the selector is non-empty and immutable',
      source: 'upstream pkg/apis/apps/validation (ValidateRollingUpdateDaemonSet, ValidateDaemonSetSpec); pkg/registry/apps/daemonset strategy.go',
      upstream:
        '422 "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 1: may not be set when maxUnavailable is non-zero"; 422 "empty selector is invalid for daemonset"; 422 "spec.selector: ... field is immutable"',
      req: { method: 'POST', path: DS, body: ds('d2', { updateStrategy: { rollingUpdate: { maxUnavailable: 1, maxSurge: 1 } } }) },
      expect: {
        status: 422,
        reason: 'Invalid',
        message: 'DaemonSet.apps "d2" is invalid: spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 1: may not be set when maxUnavailable is non-zero',
      },
      then: [
        {
          req: { method: 'POST', path: DS, body: ds('d2', { selector: {} }) },
          expect: {
            status: 422,
            message:
              'DaemonSet.apps "d2" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for daemonset',
          },
        },
        { req: { method: 'POST', path: DS, body: ds('d2') }, expect: { status: 201 } },
        {
          req: {
            method: 'PATCH',
            path: `${DS}/d2`,
            body: { spec: { selector: { matchLabels: { app: 'd2', tier: 'x' } }, template: { metadata: { labels: { app: 'd2', tier: 'x' } } } } },
            headers: MERGE,
          },
          expect: { status: 422, message: /^DaemonSet\.apps "d2" is invalid: spec\.selector: Invalid value: .*: field is immutable$/ },
        },
      ],
    },
    {
      id: 'appswl-12',
      rule: "A DaemonSet in kubectl's columns: DESIRED, CURRENT, READY, UP-TO-DATE, AVAILABLE, NODE SELECTOR, AGE; -o wide adds CONTAINERS, IMAGES, SELECTOR; a template change bumps the template generation",
      source: 'upstream pkg/printers/internalversion printers.go (printDaemonSet); pkg/registry/apps/daemonset strategy.go (PrepareForUpdate)',
      upstream: 'Table cells ["d3",0,0,0,0,0,"disk=ssd","<age>","web","nginx:1.27","app=d3"]; an image change -> generation 2, template generation "2"',
      setup: [{ method: 'POST', path: DS, body: ds('d3', {}, { nodeSelector: { disk: 'ssd' } }) }],
      req: { method: 'GET', path: `${DS}/d3`, headers: { accept: TABLE } },
      expect: {
        status: 200,
        body: {
          columnDefinitions: [
            { name: 'Name' },
            { name: 'Desired', type: 'integer' },
            { name: 'Current', type: 'integer' },
            { name: 'Ready', type: 'integer' },
            { name: 'Up-to-date', type: 'integer' },
            { name: 'Available', type: 'integer' },
            { name: 'Node Selector', type: 'string' },
            { name: 'Age' },
            { name: 'Containers', priority: 1 },
            { name: 'Images', priority: 1 },
            { name: 'Selector', priority: 1 },
          ],
        },
        text: /"cells":\["d3",0,0,0,0,0,"disk=ssd","\d+s","web","nginx:1\.27","app=d3"\]/,
      },
      then: [
        {
          req: {
            method: 'PATCH',
            path: `${DS}/d3`,
            body: { spec: { template: { spec: { containers: [{ name: 'web', image: 'nginx:1.28' }] } } } },
            headers: { 'content-type': 'application/strategic-merge-patch+json' },
          },
          expect: { status: 200, body: { metadata: { generation: 2, annotations: { 'deprecated.daemonset.template.generation': '2' } } } },
        },
      ],
    },
  ],
};
