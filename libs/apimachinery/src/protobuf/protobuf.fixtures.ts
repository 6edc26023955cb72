/**
 * Test data of the protobuf codec specs: a served-kinds table like the one the server builds from
 * its registry, and one fully populated object of every kind and list message of the API packages
 * loaded. Test support only: not exported from the library.
 */
import { encodeProtobuf, protobufRoot, type JsonObject, type ProtobufKinds } from './protobuf.codec.js';
import { storageKinds } from './protobuf.fixtures.storage.js';

/** Proto package of each apiVersion these tests use (the server takes messages from its registry). */
export const PACKAGES: Record<string, string> = {
  v1: 'k8s.io.api.core.v1',
  'authentication.k8s.io/v1': 'k8s.io.api.authentication.v1',
  'authorization.k8s.io/v1': 'k8s.io.api.authorization.v1',
  'certificates.k8s.io/v1': 'k8s.io.api.certificates.v1',
  'coordination.k8s.io/v1': 'k8s.io.api.coordination.v1',
  'events.k8s.io/v1': 'k8s.io.api.events.v1',
  'rbac.authorization.k8s.io/v1': 'k8s.io.api.rbac.v1',
  'scheduling.k8s.io/v1': 'k8s.io.api.scheduling.v1',
  'storage.k8s.io/v1': 'k8s.io.api.storage.v1',
};

/** A served-kinds table as the server's registry gives one: any message of those packages. */
export const kinds: ProtobufKinds = {
  messageFor(apiVersion, kind) {
    const pkg = PACKAGES[apiVersion];
    if (!pkg) return undefined;
    try {
      protobufRoot().lookupType(`${pkg}.${kind}`);
      return `${pkg}.${kind}`;
    } catch {
      return undefined;
    }
  },
  servesGroupVersion: (apiVersion) => apiVersion in PACKAGES,
};

/** The message of a test object, as a declaration would name it. */
export function messageOf(obj: JsonObject): string | undefined {
  return kinds.messageFor(String(obj.apiVersion ?? ''), String(obj.kind ?? ''));
}

/** encodeProtobuf with the object's message. */
export function enc(obj: JsonObject): Uint8Array {
  return encodeProtobuf(obj, messageOf(obj));
}

/** Every ObjectMeta field set, including the pointer zero deletionGracePeriodSeconds: 0. */
const fullMeta = (name: string, namespace?: string): JsonObject => ({
  name,
  generateName: `${name}-`,
  ...(namespace ? { namespace } : {}),
  selfLink: `/x/${name}`,
  uid: `uid-${name}`,
  resourceVersion: '42',
  generation: 3,
  creationTimestamp: '2024-01-02T03:04:05Z',
  deletionTimestamp: '2024-01-02T03:05:05Z',
  deletionGracePeriodSeconds: 0,
  labels: { app: 'web', tier: 'front' },
  annotations: { 'example.com/note': 'hi' },
  ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: 'u-o', controller: false, blockOwnerDeletion: true }],
  finalizers: ['kubernetes', 'example.com/f'],
  managedFields: [
    {
      manager: 'kubectl-create',
      operation: 'Update',
      apiVersion: 'v1',
      time: '2024-01-02T03:04:05Z',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:data': { '.': {}, 'f:a': {} } },
      subresource: 'status',
    },
  ],
});

const listMeta: JsonObject = { selfLink: '/l', resourceVersion: '7', continue: 'tok', remainingItemCount: 0 };

/** A ConfigMap with every field set. */
export const configMap: JsonObject = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: fullMeta('cm', 'default'),
  immutable: false,
  data: { a: 'b', 'multi.line': 'x\ny\n' },
  binaryData: { bin: Buffer.from([0, 1, 255]).toString('base64') },
};

const secret: JsonObject = {
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: fullMeta('s', 'default'),
  immutable: true,
  data: { k: Buffer.from('v').toString('base64'), empty: '' },
  stringData: { plain: 'text' },
  type: 'kubernetes.io/tls',
};

const namespace: JsonObject = {
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: fullMeta('ns'),
  spec: { finalizers: ['kubernetes'] },
  status: {
    phase: 'Terminating',
    conditions: [
      {
        type: 'NamespaceDeletionContentFailure',
        status: 'False',
        lastTransitionTime: '2024-01-02T03:04:05Z',
        reason: 'ContentDeleted',
        message: 'All content successfully deleted',
      },
    ],
  },
};

const serviceAccount: JsonObject = {
  apiVersion: 'v1',
  kind: 'ServiceAccount',
  metadata: fullMeta('sa', 'default'),
  secrets: [{ kind: 'Secret', namespace: 'default', name: 'tok', uid: 'u', apiVersion: 'v1', resourceVersion: '1', fieldPath: 'x' }],
  imagePullSecrets: [{ name: 'regcred' }],
  automountServiceAccountToken: false,
};

const event: JsonObject = {
  apiVersion: 'v1',
  kind: 'Event',
  metadata: fullMeta('ev', 'default'),
  involvedObject: { kind: 'Pod', namespace: 'default', name: 'p', uid: 'u-p', apiVersion: 'v1', resourceVersion: '5', fieldPath: 'spec.containers{c}' },
  reason: 'Started',
  message: 'Started container c',
  source: { component: 'kubelet', host: 'node-1' },
  firstTimestamp: '2024-01-02T03:04:05Z',
  lastTimestamp: '2024-01-02T03:14:05Z',
  count: 2,
  type: 'Normal',
  eventTime: '2024-01-02T03:04:05.123456Z',
  series: { count: 4, lastObservedTime: '2024-01-02T03:24:05.000001Z' },
  action: 'Start',
  related: { kind: 'Node', name: 'node-1' },
  reportingComponent: 'kubelet',
  reportingInstance: 'node-1',
};

const eventsV1Event: JsonObject = {
  apiVersion: 'events.k8s.io/v1',
  kind: 'Event',
  metadata: fullMeta('ev1', 'default'),
  eventTime: '2024-01-02T03:04:05.123456Z',
  series: { count: 4, lastObservedTime: '2024-01-02T03:24:05.000001Z' },
  reportingController: 'default-scheduler',
  reportingInstance: 'default-scheduler-n1',
  action: 'Binding',
  reason: 'Scheduled',
  regarding: { kind: 'Pod', namespace: 'default', name: 'p', uid: 'u-p', apiVersion: 'v1', resourceVersion: '5' },
  related: { kind: 'Node', name: 'node-1' },
  note: 'Successfully assigned default/p to node-1',
  type: 'Normal',
  deprecatedSource: { component: 'scheduler', host: 'h' },
  deprecatedFirstTimestamp: '2024-01-02T03:04:05Z',
  deprecatedLastTimestamp: '2024-01-02T03:14:05Z',
  deprecatedCount: 2,
};

const podTemplateSpec: JsonObject = {
  metadata: { labels: { app: 'web' } },
  spec: { containers: [{ name: 'web', image: 'nginx:1.27', ports: [{ containerPort: 80, protocol: 'TCP' }] }], restartPolicy: 'Always' },
};

const podTemplate: JsonObject = { apiVersion: 'v1', kind: 'PodTemplate', metadata: fullMeta('tpl', 'default'), template: podTemplateSpec };

const replicationController: JsonObject = {
  apiVersion: 'v1',
  kind: 'ReplicationController',
  metadata: fullMeta('rc', 'default'),
  spec: { replicas: 3, minReadySeconds: 5, selector: { app: 'web' }, template: podTemplateSpec },
  status: {
    replicas: 2,
    fullyLabeledReplicas: 2,
    readyReplicas: 1,
    availableReplicas: 1,
    observedGeneration: 3,
    conditions: [{ type: 'ReplicaFailure', status: 'True', lastTransitionTime: '2024-01-02T03:04:05Z', reason: 'FailedCreate', message: 'quota' }],
  },
};

const userInfo: JsonObject = {
  username: 'alice',
  uid: 'u-a',
  groups: ['system:authenticated', 'dev'],
  extra: { 'scopes.example.com': ['a', 'b'], empty: [] },
};

const resourceAttributes: JsonObject = {
  namespace: 'default',
  verb: 'list',
  group: 'apps',
  version: 'v1',
  resource: 'deployments',
  subresource: 'scale',
  name: 'web',
  fieldSelector: { rawSelector: 'a=b', requirements: [{ key: 'metadata.name', operator: 'In', values: ['x'] }] },
  labelSelector: { rawSelector: 'app=web', requirements: [{ key: 'app', operator: 'Exists' }] },
};

const sarStatus: JsonObject = { allowed: false, denied: true, reason: 'no rule', evaluationError: 'oops' };

const csr: JsonObject = {
  apiVersion: 'certificates.k8s.io/v1',
  kind: 'CertificateSigningRequest',
  metadata: fullMeta('csr'),
  spec: {
    request: Buffer.from('-----BEGIN CERTIFICATE REQUEST-----\n').toString('base64'),
    signerName: 'kubernetes.io/kube-apiserver-client',
    expirationSeconds: 86400,
    usages: ['digital signature', 'client auth'],
    username: 'alice',
    uid: 'u-a',
    groups: ['g'],
    extra: { k: ['v1', 'v2'] },
  },
  status: {
    conditions: [
      {
        type: 'Approved',
        status: 'True',
        reason: 'KubectlApprove',
        message: 'ok',
        lastUpdateTime: '2024-01-02T03:04:05Z',
        lastTransitionTime: '2024-01-02T03:04:06Z',
      },
    ],
    certificate: Buffer.from('-----BEGIN CERTIFICATE-----\n').toString('base64'),
  },
};

const lease: JsonObject = {
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: fullMeta('lease', 'kube-system'),
  spec: {
    holderIdentity: '',
    leaseDurationSeconds: 15,
    acquireTime: '2024-01-02T03:04:05.000000Z',
    renewTime: '2024-01-02T03:04:20.654321Z',
    leaseTransitions: 0,
    strategy: 'OldestEmulationVersion',
    preferredHolder: 'b',
  },
};

const rule: JsonObject = {
  verbs: ['get', 'list'],
  apiGroups: [''],
  resources: ['configmaps'],
  resourceNames: ['cm'],
  nonResourceURLs: ['/healthz'],
};
const subjects: JsonObject[] = [
  { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' },
  { kind: 'ServiceAccount', name: 'sa', namespace: 'default' },
];

/** One object of every kind and list message of PACKAGES, every field set. */
const node: JsonObject = {
  apiVersion: 'v1',
  kind: 'Node',
  metadata: fullMeta('n1'),
  spec: {
    podCIDR: '10.244.0.0/24',
    podCIDRs: ['10.244.0.0/24', 'fd00::/64'],
    providerID: 'kind://n1',
    unschedulable: true,
    taints: [{ key: 'k', value: 'v', effect: 'NoExecute', timeAdded: '2024-01-02T03:04:05Z' }],
    configSource: { configMap: { namespace: 'kube-system', name: 'cfg', uid: 'u', resourceVersion: '3', kubeletConfigKey: 'kubelet' } },
    externalID: 'ext',
  },
  status: {
    capacity: { cpu: '4', memory: '16Gi' },
    allocatable: { cpu: '3800m' },
    phase: 'Running',
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        lastHeartbeatTime: '2024-01-02T03:04:05Z',
        lastTransitionTime: '2024-01-02T03:04:06Z',
        reason: 'KubeletReady',
        message: 'ok',
      },
    ],
    addresses: [{ type: 'InternalIP', address: '172.18.0.2' }],
    daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    nodeInfo: {
      machineID: 'm',
      systemUUID: 's',
      bootID: 'b',
      kernelVersion: 'k',
      osImage: 'o',
      containerRuntimeVersion: 'containerd://1',
      kubeletVersion: 'v1.33.0',
      kubeProxyVersion: 'v1.33.0',
      operatingSystem: 'linux',
      architecture: 'amd64',
      swap: { capacity: 1024 },
    },
    images: [{ names: ['registry/app:1'], sizeBytes: 12345 }],
    volumesInUse: ['v1'],
    volumesAttached: [{ name: 'v1', devicePath: '/dev/sdb' }],
    config: { active: { configMap: { namespace: 'kube-system', name: 'cfg', kubeletConfigKey: 'kubelet' } }, error: 'e' },
    runtimeHandlers: [{ name: 'runc', features: { recursiveReadOnlyMounts: true, userNamespaces: false } }],
    features: { supplementalGroupsPolicy: true },
  },
};

const service: JsonObject = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: fullMeta('web', 'default'),
  spec: {
    ports: [
      { name: 'http', protocol: 'TCP', appProtocol: 'http', port: 80, targetPort: 8080, nodePort: 30080 },
      { name: 'named', protocol: 'UDP', port: 53, targetPort: 'dns' },
    ],
    selector: { app: 'web' },
    clusterIP: '10.96.0.10',
    clusterIPs: ['10.96.0.10'],
    type: 'LoadBalancer',
    externalIPs: ['1.2.3.4'],
    sessionAffinity: 'ClientIP',
    loadBalancerIP: '5.6.7.8',
    loadBalancerSourceRanges: ['0.0.0.0/0'],
    externalTrafficPolicy: 'Local',
    healthCheckNodePort: 31000,
    publishNotReadyAddresses: true,
    sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } },
    ipFamilies: ['IPv4'],
    ipFamilyPolicy: 'SingleStack',
    allocateLoadBalancerNodePorts: true,
    loadBalancerClass: 'lb',
    internalTrafficPolicy: 'Cluster',
    trafficDistribution: 'PreferClose',
  },
  status: {
    loadBalancer: { ingress: [{ ip: '9.9.9.9', hostname: 'lb.example', ipMode: 'VIP', ports: [{ port: 80, protocol: 'TCP', error: 'E' }] }] },
    conditions: [{ type: 'Ready', status: 'True', observedGeneration: 2, lastTransitionTime: '2024-01-02T03:04:05Z', reason: 'Ok', message: 'fine' }],
  },
};

const endpoints: JsonObject = {
  apiVersion: 'v1',
  kind: 'Endpoints',
  metadata: fullMeta('web', 'default'),
  subsets: [
    {
      addresses: [{ ip: '10.244.0.5', hostname: 'h', nodeName: 'n1', targetRef: { kind: 'Pod', namespace: 'default', name: 'p', uid: 'u' } }],
      notReadyAddresses: [{ ip: '10.244.0.6' }],
      ports: [{ name: 'http', port: 8080, protocol: 'TCP', appProtocol: 'http' }],
    },
  ],
};

export const everyKind: JsonObject[] = [
  ...storageKinds,
  configMap,
  secret,
  namespace,
  serviceAccount,
  event,
  { apiVersion: 'v1', kind: 'ConfigMapList', metadata: listMeta, items: [configMap, { metadata: { name: 'b' } }] },
  { apiVersion: 'v1', kind: 'SecretList', metadata: listMeta, items: [secret] },
  { apiVersion: 'v1', kind: 'NamespaceList', metadata: listMeta, items: [namespace] },
  { apiVersion: 'v1', kind: 'ServiceAccountList', metadata: listMeta, items: [serviceAccount] },
  { apiVersion: 'v1', kind: 'EventList', metadata: listMeta, items: [event] },
  eventsV1Event,
  { apiVersion: 'events.k8s.io/v1', kind: 'EventList', metadata: listMeta, items: [eventsV1Event] },
  podTemplate,
  { apiVersion: 'v1', kind: 'PodTemplateList', metadata: listMeta, items: [podTemplate] },
  replicationController,
  { apiVersion: 'v1', kind: 'ReplicationControllerList', metadata: listMeta, items: [replicationController] },
  node,
  { apiVersion: 'v1', kind: 'NodeList', metadata: listMeta, items: [node] },
  service,
  { apiVersion: 'v1', kind: 'ServiceList', metadata: listMeta, items: [service] },
  endpoints,
  { apiVersion: 'v1', kind: 'EndpointsList', metadata: listMeta, items: [endpoints] },
  {
    apiVersion: 'v1',
    kind: 'ComponentStatus',
    metadata: { name: 'etcd-0' },
    conditions: [{ type: 'Healthy', status: 'False', message: 'm', error: 'unreachable' }],
  },
  {
    apiVersion: 'v1',
    kind: 'ComponentStatusList',
    metadata: listMeta,
    items: [{ metadata: { name: 'etcd-0' }, conditions: [{ type: 'Healthy', status: 'True' }] }],
  },
  {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    metadata: fullMeta('sa', 'default'),
    spec: {
      audiences: ['api', 'vault'],
      expirationSeconds: 3600,
      boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p', uid: 'u-p' },
    },
    status: { token: 'eyJ.x.y', expirationTimestamp: '2030-01-01T00:00:00Z' },
  },
  {
    apiVersion: 'v1',
    kind: 'Binding',
    metadata: { ...fullMeta('p', 'default'), annotations: { 'scheduler.example.com/by': 'test' } },
    target: { kind: 'Node', name: 'n1', apiVersion: 'v1' },
  },
  {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenReview',
    metadata: fullMeta('tr'),
    spec: { token: 'eyJ', audiences: ['api'] },
    status: { authenticated: true, user: userInfo, audiences: ['api'], error: 'none' },
  },
  { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview', metadata: fullMeta('ssr'), status: { userInfo } },
  {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectAccessReview',
    metadata: fullMeta('ssar'),
    spec: { resourceAttributes, nonResourceAttributes: { path: '/healthz', verb: 'get' } },
    status: sarStatus,
  },
  {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    metadata: fullMeta('sar'),
    spec: { resourceAttributes, user: 'bob', groups: ['g'], extra: { k: ['v'] }, uid: 'u-b' },
    status: { allowed: true },
  },
  {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'LocalSubjectAccessReview',
    metadata: fullMeta('lsar', 'default'),
    spec: { nonResourceAttributes: { path: '/metrics', verb: 'get' }, user: 'bob' },
    status: sarStatus,
  },
  {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectRulesReview',
    metadata: fullMeta('ssrr'),
    spec: { namespace: 'default' },
    status: {
      resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['p'] }],
      nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/api', '/api/*'] }],
      incomplete: false,
      evaluationError: 'partial',
    },
  },
  csr,
  { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequestList', metadata: listMeta, items: [csr] },
  lease,
  { apiVersion: 'coordination.k8s.io/v1', kind: 'LeaseList', metadata: listMeta, items: [lease] },
  {
    apiVersion: 'scheduling.k8s.io/v1',
    kind: 'PriorityClass',
    metadata: fullMeta('critical'),
    value: 1000,
    globalDefault: true,
    description: 'd',
    preemptionPolicy: 'Never',
  },
  {
    apiVersion: 'scheduling.k8s.io/v1',
    kind: 'PriorityClassList',
    metadata: listMeta,
    items: [{ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: fullMeta('zero'), value: 0, preemptionPolicy: 'PreemptLowerPriority' }],
  },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: fullMeta('r', 'default'), rules: [rule] },
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: fullMeta('cr'),
    rules: [rule],
    aggregationRule: {
      clusterRoleSelectors: [{ matchLabels: { agg: 'true' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }] }],
    },
  },
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: fullMeta('rb', 'default'),
    subjects,
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' },
  },
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: fullMeta('crb'),
    subjects,
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cr' },
  },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleList', metadata: listMeta, items: [] },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleList', metadata: listMeta, items: [] },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBindingList', metadata: listMeta, items: [] },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBindingList', metadata: listMeta, items: [] },
  {
    apiVersion: 'v1',
    kind: 'Status',
    metadata: { resourceVersion: '9' },
    status: 'Failure',
    message: 'configmaps "x" not found',
    reason: 'NotFound',
    details: {
      name: 'x',
      group: 'apps',
      kind: 'configmaps',
      uid: 'u',
      causes: [{ reason: 'FieldValueInvalid', message: 'bad', field: 'spec.x' }],
      retryAfterSeconds: 3,
    },
    code: 404,
  },
  {
    apiVersion: 'meta.k8s.io/v1',
    kind: 'DeleteOptions',
    gracePeriodSeconds: 0,
    preconditions: { uid: 'u', resourceVersion: '3' },
    orphanDependents: false,
    propagationPolicy: 'Foreground',
    dryRun: ['All'],
    ignoreStoreReadErrorWithClusterBreakingPotential: false,
  },
];
