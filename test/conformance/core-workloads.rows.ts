/**
 * Rules of core/v1's ReplicationController and PodTemplate as stored kinds (no replication
 * manager): defaults (pkg/apis/core/v1 defaults.go and the pod template's core defaults),
 * validation (pkg/apis/core/validation), the scale subresource (autoscaling/v1 Scale) and
 * kubectl's columns (pkg/printers/internalversion printers.go).
 */
import type { RowGroup } from './conformance.types.js';

const NS = 'cf-corewl';
const RC = `/api/v1/namespaces/${NS}/replicationcontrollers`;
const PT = `/api/v1/namespaces/${NS}/podtemplates`;
const MERGE = { 'content-type': 'application/merge-patch+json' };
const TABLE = 'application/json;as=Table;g=meta.k8s.io;v=v1';

type Obj = Record<string, unknown>;
/** A ReplicationController of nginx pods labelled app=<name>, without selector (defaulted); `spec` and `podSpec` add or replace fields. */
const rc = (name: string, spec: Obj = {}, podSpec: Obj = {}) => ({
  apiVersion: 'v1',
  kind: 'ReplicationController',
  metadata: { name },
  spec: { template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }], ...podSpec } }, ...spec },
});
const pt = (name: string, image = 'nginx:1.27') => ({
  apiVersion: 'v1',
  kind: 'PodTemplate',
  metadata: { name },
  template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'web', image }] } },
});

/** The group. */
export const CORE_WORKLOADS: RowGroup = {
  name: 'core/v1 ReplicationController, PodTemplate',
  namespace: NS,
  rows: [
    {
      id: 'corewl-1',
      rule: "A ReplicationController gets Kubernetes' defaults: the selector and the object's labels from the template labels, 1 replica, the template's Pod defaults, generation 1, status of 0 replicas",
      source:
        'upstream pkg/apis/core/v1 defaults.go (SetDefaults_ReplicationController); pkg/registry/core/replicationcontroller strategy.go (PrepareForCreate)',
      upstream:
        '201: spec.selector {app: c1}, metadata.labels {app: c1}, replicas 1, template restartPolicy Always, imagePullPolicy IfNotPresent; status {replicas: 0}',
      req: { method: 'POST', path: RC, body: rc('c1') },
      expect: {
        status: 201,
        body: {
          metadata: { generation: 1, labels: { app: 'c1' } },
          spec: {
            replicas: 1,
            selector: { app: 'c1' },
            template: { spec: { restartPolicy: 'Always', dnsPolicy: 'ClusterFirst', containers: [{ imagePullPolicy: 'IfNotPresent' }] } },
          },
          status: { replicas: 0 },
        },
      },
    },
    {
      id: 'corewl-2',
      rule: 'A ReplicationController needs a selector and a template, the selector must match the template labels, and the template restarts Always',
      source: 'upstream pkg/apis/core/validation (ValidateReplicationControllerSpec, ValidatePodTemplateSpecForRC)',
      upstream:
        '422 "[spec.selector: Required value, spec.template: Required value]"; 422 "spec.template.metadata.labels: Invalid value: map[string]string{\\"app\\":\\"c2\\"}: `selector` does not match template `labels`"; 422 restartPolicy Unsupported value',
      req: { method: 'POST', path: RC, body: { apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'c2' }, spec: { replicas: 1 } } },
      expect: {
        status: 422,
        reason: 'Invalid',
        message: 'ReplicationController "c2" is invalid: [spec.selector: Required value, spec.template: Required value]',
      },
      then: [
        {
          req: { method: 'POST', path: RC, body: rc('c2', { selector: { app: 'other' } }) },
          expect: {
            status: 422,
            message:
              'ReplicationController "c2" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"c2"}: `selector` does not match template `labels`',
          },
        },
        {
          req: { method: 'POST', path: RC, body: rc('c2', {}, { restartPolicy: 'OnFailure' }) },
          expect: {
            status: 422,
            message: 'ReplicationController "c2" is invalid: spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"',
          },
        },
      ],
    },
    {
      id: 'corewl-3',
      rule: 'A ReplicationController may change its selector (unlike apps/v1); a spec change bumps the generation',
      source: 'upstream pkg/registry/core/replicationcontroller strategy.go (PrepareForUpdate, ValidateUpdate)',
      upstream: '200 with the new selector and template labels, generation 2',
      setup: [{ method: 'POST', path: RC, body: rc('c3') }],
      req: {
        method: 'PATCH',
        path: `${RC}/c3`,
        body: { spec: { selector: { app: 'c3', v: '2' }, template: { metadata: { labels: { app: 'c3', v: '2' } } } } },
        headers: MERGE,
      },
      expect: { status: 200, body: { metadata: { generation: 2 }, spec: { selector: { app: 'c3', v: '2' } } } },
    },
    {
      id: 'corewl-4',
      rule: 'A ReplicationController has the scale subresource (autoscaling/v1 Scale, its selector as a string) and a status subresource',
      source: 'upstream pkg/registry/core/replicationcontroller/storage (ScaleREST, StatusREST)',
      upstream:
        'GET scale 200 {spec.replicas 2, status.selector "app=c4"}; PUT replicas 5 -> spec.replicas 5; PATCH status readyReplicas 2 > replicas 1 -> 422',
      setup: [{ method: 'POST', path: RC, body: rc('c4', { replicas: 2 }) }],
      req: { method: 'GET', path: `${RC}/c4/scale` },
      expect: {
        status: 200,
        body: {
          apiVersion: 'autoscaling/v1',
          kind: 'Scale',
          metadata: { name: 'c4', namespace: NS },
          spec: { replicas: 2 },
          // status.replicas follows the pods the ReplicationController controller creates.
          status: { selector: 'app=c4' },
        },
      },
      then: [
        {
          req: {
            method: 'PUT',
            path: `${RC}/c4/scale`,
            body: { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'c4' }, spec: { replicas: 5 } },
          },
          expect: { status: 200, body: { kind: 'Scale', spec: { replicas: 5 } } },
        },
        { req: { method: 'GET', path: `${RC}/c4` }, expect: { status: 200, body: { metadata: { generation: 2 }, spec: { replicas: 5 } } } },
        {
          req: {
            method: 'PATCH',
            path: `${RC}/c4/status`,
            body: { status: { replicas: 1, readyReplicas: 2, fullyLabeledReplicas: 1, availableReplicas: 0 } },
            headers: MERGE,
          },
          expect: {
            status: 422,
            message: 'ReplicationController "c4" is invalid: status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas',
          },
        },
      ],
    },
    {
      id: 'corewl-5',
      rule: "A ReplicationController in kubectl's columns: DESIRED, CURRENT, READY, AGE; -o wide adds CONTAINERS, IMAGES, SELECTOR",
      source: 'upstream pkg/printers/internalversion printers.go (printReplicationController)',
      upstream:
        '200 Table with columns Name, Desired, Current, Ready, Age, Containers, Images, Selector; cells ["c5",3,0,0,"<age>","web","nginx:1.27","app=c5"]',
      setup: [{ method: 'POST', path: RC, body: rc('c5', { replicas: 3 }) }],
      req: { method: 'GET', path: `${RC}/c5`, headers: { accept: TABLE } },
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
        // CURRENT: 0 until the ReplicationController controller has created the pods.
        text: /"cells":\["c5",3,[03],0,"\d+s","web","nginx:1\.27","app=c5"\]/,
      },
    },
    {
      id: 'corewl-6',
      rule: "A PodTemplate gets the Pod defaults in its template and generation 1; kubectl's columns are CONTAINERS, IMAGES, POD LABELS (no AGE)",
      source: 'upstream pkg/registry/core/podtemplate strategy.go (PrepareForCreate); pkg/printers/internalversion printers.go (printPodTemplate)',
      upstream:
        '201: generation 1, template restartPolicy Always; Table columns Name, Containers, Images, Pod Labels; cells ["t1","web","nginx:1.27","app=t1"]',
      req: { method: 'POST', path: PT, body: pt('t1') },
      expect: {
        status: 201,
        body: { metadata: { generation: 1 }, template: { spec: { restartPolicy: 'Always', containers: [{ imagePullPolicy: 'IfNotPresent' }] } } },
      },
      then: [
        {
          req: { method: 'GET', path: `${PT}/t1`, headers: { accept: TABLE } },
          expect: {
            status: 200,
            body: { kind: 'Table', columnDefinitions: [{ name: 'Name' }, { name: 'Containers' }, { name: 'Images' }, { name: 'Pod Labels' }] },
            text: /"cells":\["t1","web","nginx:1\.27","app=t1"\]/,
          },
        },
      ],
    },
    {
      id: 'corewl-7',
      rule: 'A PodTemplate update that changes the template bumps the generation; a label change does not; the template is validated as a Pod',
      source: 'upstream pkg/registry/core/podtemplate strategy.go (PrepareForUpdate); pkg/apis/core/validation (ValidatePodTemplateUpdate)',
      upstream: 'image change -> generation 2; label change -> generation 2; an empty image -> 422 "template.spec.containers[0].image: Required value"',
      setup: [{ method: 'POST', path: PT, body: pt('t2') }],
      req: { method: 'PATCH', path: `${PT}/t2`, body: { template: { spec: { containers: [{ name: 'web', image: 'nginx:1.28' }] } } }, headers: MERGE },
      expect: { status: 200, body: { metadata: { generation: 2 } } },
      then: [
        {
          req: { method: 'PATCH', path: `${PT}/t2`, body: { metadata: { labels: { x: 'y' } } }, headers: MERGE },
          expect: { status: 200, body: { metadata: { generation: 2 } } },
        },
        {
          req: { method: 'PATCH', path: `${PT}/t2`, body: { template: { spec: { containers: [{ name: 'web', image: '' }] } } }, headers: MERGE },
          expect: { status: 422, message: 'PodTemplate "t2" is invalid: template.spec.containers[0].image: Required value' },
        },
      ],
    },
    {
      id: 'corewl-8',
      rule: "A negative terminationGracePeriodSeconds is not refused: a pod template keeps it, with a warning; a Pod's becomes 1, on create and on update",
      source:
        'upstream pkg/api/pod warnings.go (warningsForPodSpecAndMeta); pkg/apis/core/v1 conversion.go (Convert_v1_Pod_To_core_Pod); pkg/apis/core/validation (ValidatePodUpdate)',
      upstream:
        '201 with Warning "spec.template.spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1"; a Pod created with -1 reads 1, and an update to -1 reads 1',
      req: { method: 'POST', path: RC, body: rc('c8', {}, { terminationGracePeriodSeconds: -1 }) },
      expect: {
        status: 201,
        body: { spec: { template: { spec: { terminationGracePeriodSeconds: -1 } } } },
        headers: { warning: /spec\.template\.spec\.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1/ },
      },
      then: [
        {
          req: {
            method: 'POST',
            path: `/api/v1/namespaces/${NS}/pods`,
            body: {
              apiVersion: 'v1',
              kind: 'Pod',
              metadata: { name: 'p8' },
              spec: { containers: [{ name: 'web', image: 'nginx:1.27' }], terminationGracePeriodSeconds: -1 },
            },
          },
          expect: { status: 201, body: { spec: { terminationGracePeriodSeconds: 1 } } },
        },
        {
          req: { method: 'PATCH', path: `/api/v1/namespaces/${NS}/pods/p8`, body: { spec: { terminationGracePeriodSeconds: -5 } }, headers: MERGE },
          expect: { status: 200, body: { spec: { terminationGracePeriodSeconds: 1 } } },
        },
        {
          req: { method: 'PATCH', path: `/api/v1/namespaces/${NS}/pods/p8`, body: { spec: { terminationGracePeriodSeconds: 20 } }, headers: MERGE },
          expect: { status: 422, message: /^Pod "p8" is invalid: spec: Forbidden: pod updates may not change fields other than/ },
        },
      ],
    },
  ],
};
