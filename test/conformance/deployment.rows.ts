/**
 * Rules of apps/v1 Deployment as a stored kind (no controller): defaults
 * (pkg/apis/apps/v1 defaults.go and the pod template's core defaults), validation
 * (pkg/apis/apps/validation ValidateDeployment and the apps/v1 strategy), the scale
 * subresource (autoscaling/v1 Scale) and kubectl's columns (printDeployment).
 */
import type { RowGroup } from './conformance.types.js';

const NS = 'cf-deploy';
const DEP = `/apis/apps/v1/namespaces/${NS}/deployments`;
const MERGE = { 'content-type': 'application/merge-patch+json' };
const TABLE = 'application/json;as=Table;g=meta.k8s.io;v=v1';

type Obj = Record<string, unknown>;
/** A Deployment of `replicas` nginx pods labelled app=<name>; `spec` and `podSpec` add or replace fields. */
const deploy = (name: string, spec: Obj = {}, podSpec: Obj = {}, labels: Obj = { app: name }) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }], ...podSpec } },
    ...spec,
  },
});

/** The group. */
export const DEPLOYMENT: RowGroup = {
  name: 'apps/v1 Deployment',
  namespace: NS,
  rows: [
    {
      id: 'deploy-1',
      rule: "A Deployment created from JSON gets Kubernetes' defaults, generation 1 and an empty status",
      source: 'upstream pkg/apis/apps/v1 defaults.go (SetDefaults_Deployment); pkg/apis/core/v1 defaults.go',
      upstream:
        '201: replicas 1, strategy RollingUpdate 25%/25%, revisionHistoryLimit 10, progressDeadlineSeconds 600, template restartPolicy Always, dnsPolicy ClusterFirst, imagePullPolicy IfNotPresent',
      req: { method: 'POST', path: DEP, body: deploy('d1') },
      expect: {
        status: 201,
        body: {
          metadata: { generation: 1 },
          spec: {
            replicas: 1,
            strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } },
            revisionHistoryLimit: 10,
            progressDeadlineSeconds: 600,
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
          status: {},
        },
      },
    },
    {
      id: 'deploy-2',
      rule: 'The selector must match the template labels',
      source: 'upstream pkg/apis/apps/validation (ValidatePodTemplateSpecForReplicaSet)',
      upstream: '422 Invalid "spec.template.metadata.labels: Invalid value: map[string]string{\\"app\\":\\"x\\"}: `selector` does not match template `labels`"',
      req: { method: 'POST', path: DEP, body: deploy('d2', {}, {}, { app: 'x' }) },
      expect: {
        status: 422,
        reason: 'Invalid',
        message:
          'Deployment.apps "d2" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"x"}: `selector` does not match template `labels`',
      },
    },
    {
      id: 'deploy-3',
      rule: 'An empty selector is refused',
      source: 'upstream pkg/apis/apps/validation (ValidateDeploymentSpec)',
      upstream:
        '422 Invalid "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment"',
      req: { method: 'POST', path: DEP, body: deploy('d3', { selector: {} }) },
      expect: {
        status: 422,
        reason: 'Invalid',
        message:
          'Deployment.apps "d3" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment',
      },
    },
    {
      id: 'deploy-4',
      rule: 'The pod template restarts Always',
      source: 'upstream pkg/apis/apps/validation (ValidatePodTemplateSpecForReplicaSet)',
      upstream: '422 Invalid "spec.template.spec.restartPolicy: Unsupported value: \\"Never\\": supported values: \\"Always\\""',
      req: { method: 'POST', path: DEP, body: deploy('d4', {}, { restartPolicy: 'Never' }) },
      expect: {
        status: 422,
        reason: 'Invalid',
        message: 'Deployment.apps "d4" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
      },
    },
    {
      id: 'deploy-5',
      rule: 'The selector cannot change in apps/v1',
      source: 'upstream pkg/registry/apps/deployment strategy.go (ValidateUpdate)',
      upstream: '422 Invalid "spec.selector: Invalid value: ...: field is immutable"',
      setup: [{ method: 'POST', path: DEP, body: deploy('d5') }],
      req: {
        method: 'PATCH',
        path: `${DEP}/d5`,
        body: { spec: { selector: { matchLabels: { app: 'd5', tier: 'web' } }, template: { metadata: { labels: { app: 'd5', tier: 'web' } } } } },
        headers: MERGE,
      },
      expect: { status: 422, reason: 'Invalid', message: /^Deployment\.apps "d5" is invalid: spec\.selector: Invalid value: .*: field is immutable$/ },
    },
    {
      id: 'deploy-6',
      rule: 'Rolling update bounds: maxUnavailable and maxSurge not both 0; Recreate takes no rollingUpdate',
      source: 'upstream pkg/apis/apps/validation (ValidateRollingUpdateDeployment, ValidateDeploymentStrategy)',
      upstream: '422 "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0"; 422 Forbidden for Recreate',
      req: { method: 'POST', path: DEP, body: deploy('d6', { strategy: { rollingUpdate: { maxUnavailable: 0, maxSurge: 0 } } }) },
      expect: {
        status: 422,
        reason: 'Invalid',
        message: 'Deployment.apps "d6" is invalid: spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0',
      },
      then: [
        {
          req: { method: 'POST', path: DEP, body: deploy('d6', { strategy: { type: 'Recreate', rollingUpdate: {} } }) },
          expect: {
            status: 422,
            message: 'Deployment.apps "d6" is invalid: spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is \'Recreate\'',
          },
        },
      ],
    },
    {
      id: 'deploy-7',
      rule: 'The scale subresource reads and writes spec.replicas as an autoscaling/v1 Scale',
      source: 'upstream pkg/registry/apps/deployment/storage (ScaleREST)',
      upstream:
        'GET 200 Scale {spec.replicas 2, status.replicas 0, status.selector "app=d7"}; PUT replicas 5 -> 200, Deployment spec.replicas 5, generation 2 (paused: no ReplicaSet yet)',
      setup: [{ method: 'POST', path: DEP, body: deploy('d7', { replicas: 2, paused: true }) }],
      req: { method: 'GET', path: `${DEP}/d7/scale` },
      expect: {
        status: 200,
        body: {
          apiVersion: 'autoscaling/v1',
          kind: 'Scale',
          metadata: { name: 'd7', namespace: NS },
          spec: { replicas: 2 },
          status: { replicas: 0, selector: 'app=d7' },
        },
      },
      then: [
        {
          req: {
            method: 'PUT',
            path: `${DEP}/d7/scale`,
            body: { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'd7', namespace: NS }, spec: { replicas: 5 } },
          },
          expect: { status: 200, body: { kind: 'Scale', spec: { replicas: 5 } } },
        },
        { req: { method: 'GET', path: `${DEP}/d7` }, expect: { status: 200, body: { metadata: { generation: 2 }, spec: { replicas: 5 } } } },
        {
          req: { method: 'PATCH', path: `${DEP}/d7/scale`, body: { spec: { replicas: -1 } }, headers: MERGE },
          expect: {
            status: 422,
            reason: 'Invalid',
            message: 'Scale.autoscaling "d7" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0',
          },
        },
      ],
    },
    {
      id: 'deploy-8',
      rule: "kubectl's columns: READY is readyReplicas/replicas, then UP-TO-DATE, AVAILABLE, AGE; -o wide adds CONTAINERS, IMAGES, SELECTOR",
      source: 'upstream pkg/printers/internalversion printers.go (printDeployment)',
      upstream:
        '200 Table with columns Name, Ready, Up-to-date, Available, Age, Containers, Images, Selector; cells ["d8","0/3",0,0,"<age>","web","nginx:1.27","app=d8"] (paused: no ReplicaSet yet)',
      setup: [{ method: 'POST', path: DEP, body: deploy('d8', { replicas: 3, paused: true }) }],
      req: { method: 'GET', path: `${DEP}/d8`, headers: { accept: TABLE } },
      expect: {
        status: 200,
        body: {
          kind: 'Table',
          columnDefinitions: [
            { name: 'Name' },
            { name: 'Ready', type: 'string' },
            { name: 'Up-to-date', type: 'integer' },
            { name: 'Available', type: 'integer' },
            { name: 'Age' },
            { name: 'Containers', priority: 1 },
            { name: 'Images', priority: 1 },
            { name: 'Selector', priority: 1 },
          ],
        },
        text: /"cells":\["d8","0\/3",0,0,"\d+s","web","nginx:1\.27","app=d8"\]/,
      },
    },
  ],
};
