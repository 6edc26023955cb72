/**
 * The part of kube-apiserver's bootstrap policy that grants Kubernetes' own components what
 * they need (plugin/pkg/auth/authorizer/rbac/bootstrappolicy: policy.go, controller_policy.go,
 * namespace_policy.go): kube-scheduler, kube-controller-manager, kube-proxy, the kubelet's
 * role, monitoring and delegated authentication; one `system:controller:<name>` role per
 * controller of kube-controller-manager, bound to the service account `kube-system/<name>` it
 * runs as with `--use-service-account-credentials`; and the Roles for leader election and the
 * authentication ConfigMap in kube-system. The controllers of dynamic resource allocation
 * (resource.k8s.io, not served) are left out.
 */
import type { KubeObject } from '@app/apimachinery';
import { NODE_RULES } from '@app/authz';
import type { PolicyRule } from './rbac.validation.js';

const LABELS = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };
const ANNOTATIONS = { 'rbac.authorization.kubernetes.io/autoupdate': 'true' };
const meta = (name: string, namespace?: string) => ({
  name,
  ...(namespace ? { namespace } : {}),
  labels: { ...LABELS },
  annotations: { ...ANNOTATIONS },
});

const READ = ['get', 'list', 'watch'];
const LIST_WATCH = ['list', 'watch'];
const PATCH_UPDATE = ['patch', 'update'];
const READ_WRITE = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];
const CORE = [''];
const APPS = ['apps', 'extensions'];

const rule = (apiGroups: string[], resources: string[], verbs: string[]): PolicyRule => ({ apiGroups, resources, verbs });
const named = (apiGroups: string[], resources: string[], resourceNames: string[], verbs: string[]): PolicyRule => ({
  apiGroups,
  resources,
  resourceNames,
  verbs,
});
const urls = (nonResourceURLs: string[]): PolicyRule => ({ nonResourceURLs, verbs: ['get'] });
/** Recording Events through either Events API, which nearly every component does. */
const EVENTS = rule(['', 'events.k8s.io'], ['events'], ['create', 'patch', 'update']);
const TOKEN_REVIEWS = rule(['authentication.k8s.io'], ['tokenreviews'], ['create']);
const ACCESS_REVIEWS = rule(['authorization.k8s.io'], ['subjectaccessreviews'], ['create']);
/** A component's leader election: create any Lease, then keep the one of its name. */
const leaderLease = (name: string): PolicyRule[] => [
  rule(['coordination.k8s.io'], ['leases'], ['create']),
  named(['coordination.k8s.io'], ['leases'], [name], ['get', 'update']),
];

type Subject = { kind: 'User' | 'Group'; name: string } | { kind: 'ServiceAccount'; name: string; namespace: string };
const user = (name: string): Subject => ({ kind: 'User', name });
const group = (name: string): Subject => ({ kind: 'Group', name });
const serviceAccount = (name: string): Subject => ({ kind: 'ServiceAccount', name, namespace: 'kube-system' });
const subjectOf = (s: Subject) => (s.kind === 'ServiceAccount' ? { ...s } : { apiGroup: 'rbac.authorization.k8s.io', ...s });

const clusterRole = (name: string, rules: PolicyRule[]): KubeObject => ({ metadata: meta(name), rules });
const binding = (name: string, roleKind: 'ClusterRole' | 'Role', subjects: Subject[], namespace?: string): KubeObject => ({
  metadata: meta(name, namespace),
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: roleKind, name },
  // kube's system:node binding is kept without subjects (the Node authorizer grants kubelets).
  ...(subjects.length ? { subjects: subjects.map(subjectOf) } : {}),
});

/** The components' ClusterRoles, and the ClusterRoleBindings of those kube binds. */
const COMPONENTS: readonly { name: string; rules: PolicyRule[]; subjects?: Subject[] }[] = [
  { name: 'system:auth-delegator', rules: [TOKEN_REVIEWS, ACCESS_REVIEWS] },
  {
    name: 'system:heapster',
    rules: [rule(CORE, ['events', 'namespaces', 'nodes', 'pods'], READ), rule(['extensions'], ['deployments'], READ)],
  },
  { name: 'system:kube-aggregator', rules: [rule(CORE, ['endpoints', 'services'], READ)] },
  {
    name: 'system:kube-controller-manager',
    subjects: [user('system:kube-controller-manager')],
    rules: [
      EVENTS,
      ...leaderLease('kube-controller-manager'),
      rule(CORE, ['secrets', 'serviceaccounts'], ['create']),
      rule(CORE, ['secrets'], ['delete']),
      rule(CORE, ['configmaps', 'namespaces', 'secrets', 'serviceaccounts'], ['get']),
      rule(CORE, ['secrets', 'serviceaccounts'], ['update']),
      TOKEN_REVIEWS,
      ACCESS_REVIEWS,
      rule(['*'], ['*'], LIST_WATCH),
      rule(CORE, ['serviceaccounts/token'], ['create']),
    ],
  },
  { name: 'system:kube-dns', subjects: [serviceAccount('kube-dns')], rules: [rule(CORE, ['endpoints', 'services'], LIST_WATCH)] },
  {
    name: 'system:kube-scheduler',
    subjects: [user('system:kube-scheduler')],
    rules: [
      EVENTS,
      ...leaderLease('kube-scheduler'),
      rule(CORE, ['nodes'], READ),
      rule(CORE, ['pods'], ['delete', 'get', 'list', 'watch']),
      rule(CORE, ['bindings', 'pods/binding'], ['create']),
      rule(CORE, ['pods/status'], PATCH_UPDATE),
      rule(CORE, ['replicationcontrollers', 'services'], READ),
      rule(APPS, ['replicasets'], READ),
      rule(['apps'], ['statefulsets'], READ),
      rule(['policy'], ['poddisruptionbudgets'], READ),
      rule(CORE, ['persistentvolumeclaims', 'persistentvolumes'], READ),
      TOKEN_REVIEWS,
      ACCESS_REVIEWS,
      rule(['storage.k8s.io'], ['csinodes'], READ),
      rule(CORE, ['namespaces'], READ),
      rule(['storage.k8s.io'], ['csidrivers'], READ),
      rule(['storage.k8s.io'], ['csistoragecapacities'], READ),
    ],
  },
  {
    name: 'system:kubelet-api-admin',
    rules: [rule(CORE, ['nodes'], READ), rule(CORE, ['nodes'], ['proxy']), rule(CORE, ['nodes/log', 'nodes/metrics', 'nodes/proxy', 'nodes/stats'], ['*'])],
  },
  {
    name: 'system:monitoring',
    subjects: [group('system:monitoring')],
    rules: [urls(['/healthz', '/healthz/*', '/livez', '/livez/*', '/metrics', '/metrics/slis', '/readyz', '/readyz/*'])],
  },
  // The kubelet's rules; the Node authorizer grants them to every node (the role's binding has no subjects).
  { name: 'system:node', subjects: [], rules: NODE_RULES.map((r) => structuredClone(r)) },
  {
    name: 'system:node-problem-detector',
    rules: [rule(CORE, ['nodes'], ['get']), rule(CORE, ['nodes/status'], ['patch']), EVENTS],
  },
  {
    name: 'system:node-proxier',
    subjects: [user('system:kube-proxy')],
    rules: [rule(CORE, ['endpoints', 'services'], LIST_WATCH), rule(CORE, ['nodes'], READ), EVENTS, rule(['discovery.k8s.io'], ['endpointslices'], LIST_WATCH)],
  },
  {
    name: 'system:persistent-volume-provisioner',
    rules: [
      rule(CORE, ['persistentvolumes'], ['create', 'delete', 'get', 'list', 'watch']),
      rule(CORE, ['persistentvolumeclaims'], ['get', 'list', 'update', 'watch']),
      rule(['storage.k8s.io'], ['storageclasses'], READ),
      rule(CORE, ['events'], ['watch']),
      EVENTS,
    ],
  },
  {
    name: 'system:service-account-issuer-discovery',
    subjects: [group('system:serviceaccounts')],
    rules: [urls(['/.well-known/openid-configuration', '/openid/v1/jwks'])],
  },
  {
    name: 'system:volume-scheduler',
    subjects: [user('system:kube-scheduler')],
    rules: [
      rule(CORE, ['persistentvolumes'], ['get', 'list', 'patch', 'update', 'watch']),
      rule(['storage.k8s.io'], ['storageclasses'], READ),
      rule(CORE, ['persistentvolumeclaims'], ['get', 'list', 'patch', 'update', 'watch']),
    ],
  },
];

/** kube-controller-manager's controllers: `system:controller:<name>`, bound to `kube-system/<name>`. */
const CONTROLLERS: Readonly<Record<string, PolicyRule[]>> = {
  'attachdetach-controller': [
    rule(CORE, ['persistentvolumeclaims', 'persistentvolumes'], LIST_WATCH),
    rule(CORE, ['nodes'], READ),
    rule(CORE, ['nodes/status'], PATCH_UPDATE),
    rule(CORE, ['pods'], LIST_WATCH),
    EVENTS,
    rule(['storage.k8s.io'], ['volumeattachments'], ['create', 'delete', 'get', 'list', 'watch']),
    rule(['storage.k8s.io'], ['csidrivers'], READ),
    rule(['storage.k8s.io'], ['csinodes'], READ),
  ],
  'certificate-controller': [
    rule(['certificates.k8s.io'], ['certificatesigningrequests'], ['delete', 'get', 'list', 'watch']),
    rule(['certificates.k8s.io'], ['certificatesigningrequests/approval', 'certificatesigningrequests/status'], ['update']),
    named(['certificates.k8s.io'], ['signers'], ['kubernetes.io/kube-apiserver-client-kubelet'], ['approve']),
    named(
      ['certificates.k8s.io'],
      ['signers'],
      ['kubernetes.io/kube-apiserver-client', 'kubernetes.io/kube-apiserver-client-kubelet', 'kubernetes.io/kubelet-serving', 'kubernetes.io/legacy-unknown'],
      ['sign'],
    ),
    ACCESS_REVIEWS,
    EVENTS,
  ],
  'clusterrole-aggregation-controller': [rule(['rbac.authorization.k8s.io'], ['clusterroles'], ['escalate', 'get', 'list', 'patch', 'update', 'watch'])],
  'cronjob-controller': [
    rule(['batch'], ['cronjobs'], ['get', 'list', 'update', 'watch']),
    rule(['batch'], ['jobs'], READ_WRITE),
    rule(['batch'], ['cronjobs/status'], ['update']),
    rule(['batch'], ['cronjobs/finalizers'], ['update']),
    rule(CORE, ['pods'], ['delete', 'list', 'watch']),
    EVENTS,
  ],
  'daemon-set-controller': [
    rule(APPS, ['daemonsets'], READ),
    rule(APPS, ['daemonsets/status'], ['update']),
    rule(APPS, ['daemonsets/finalizers'], ['update']),
    rule(CORE, ['nodes'], LIST_WATCH),
    rule(CORE, ['pods'], ['create', 'delete', 'list', 'patch', 'watch']),
    rule(CORE, ['pods/binding'], ['create']),
    rule(['apps'], ['controllerrevisions'], READ_WRITE),
    EVENTS,
  ],
  'deployment-controller': [
    rule(APPS, ['deployments'], ['get', 'list', 'update', 'watch']),
    rule(APPS, ['deployments/status'], ['update']),
    rule(APPS, ['deployments/finalizers'], ['update']),
    rule(APPS, ['replicasets'], READ_WRITE),
    rule(CORE, ['pods'], ['get', 'list', 'update', 'watch']),
    EVENTS,
  ],
  'disruption-controller': [
    rule(APPS, ['deployments'], READ),
    rule(APPS, ['replicasets'], READ),
    rule(CORE, ['replicationcontrollers'], READ),
    rule(['policy'], ['poddisruptionbudgets'], READ),
    rule(['apps'], ['statefulsets'], READ),
    rule(['policy'], ['poddisruptionbudgets/status'], ['update']),
    rule(CORE, ['pods/status'], PATCH_UPDATE),
    rule(['*'], ['*/scale'], ['get']),
    EVENTS,
  ],
  'endpoint-controller': [
    rule(CORE, ['pods', 'services'], READ),
    rule(CORE, ['endpoints'], ['create', 'delete', 'get', 'list', 'update', 'watch']),
    rule(CORE, ['endpoints/restricted'], ['create']),
    EVENTS,
  ],
  'endpointslice-controller': [
    rule(CORE, ['nodes', 'pods', 'services'], READ),
    rule(CORE, ['services/finalizers'], ['update']),
    rule(['discovery.k8s.io'], ['endpointslices'], ['create', 'delete', 'get', 'list', 'update', 'watch']),
    EVENTS,
  ],
  'endpointslicemirroring-controller': [
    rule(CORE, ['endpoints', 'services'], READ),
    rule(CORE, ['services/finalizers'], ['update']),
    rule(CORE, ['endpoints/finalizers'], ['update']),
    rule(['discovery.k8s.io'], ['endpointslices'], ['create', 'delete', 'get', 'list', 'update', 'watch']),
    EVENTS,
  ],
  'ephemeral-volume-controller': [
    rule(CORE, ['pods'], READ),
    rule(CORE, ['pods/finalizers'], ['update']),
    rule(CORE, ['persistentvolumeclaims'], ['create', 'get', 'list', 'watch']),
    EVENTS,
  ],
  'expand-controller': [
    rule(CORE, ['persistentvolumes'], ['get', 'list', 'patch', 'update', 'watch']),
    rule(CORE, ['persistentvolumeclaims/status'], PATCH_UPDATE),
    rule(CORE, ['persistentvolumeclaims'], READ),
    EVENTS,
  ],
  'generic-garbage-collector': [rule(['*'], ['*'], ['delete', 'get', 'list', 'patch', 'update', 'watch']), EVENTS],
  'horizontal-pod-autoscaler': [
    rule(['autoscaling'], ['horizontalpodautoscalers'], READ),
    rule(['autoscaling'], ['horizontalpodautoscalers/status'], ['update']),
    rule(['*'], ['*/scale'], ['get', 'update']),
    rule(CORE, ['pods'], LIST_WATCH),
    rule(['metrics.k8s.io'], ['pods'], LIST_WATCH),
    rule(['custom.metrics.k8s.io'], ['*'], READ),
    rule(['external.metrics.k8s.io'], ['*'], READ),
    EVENTS,
  ],
  'job-controller': [
    rule(['batch'], ['jobs'], ['get', 'list', 'patch', 'update', 'watch']),
    rule(['batch'], ['jobs/status'], ['update']),
    rule(['batch'], ['jobs/finalizers'], ['update']),
    rule(CORE, ['pods'], ['create', 'delete', 'list', 'patch', 'watch']),
    EVENTS,
  ],
  'legacy-service-account-token-cleaner': [
    named(CORE, ['configmaps'], ['kube-apiserver-legacy-service-account-token-tracking'], ['get']),
    rule(CORE, ['secrets'], ['delete', 'patch']),
  ],
  'namespace-controller': [
    rule(CORE, ['namespaces'], ['delete', 'get', 'list', 'watch']),
    rule(CORE, ['namespaces/finalize', 'namespaces/status'], ['update']),
    rule(['*'], ['*'], ['delete', 'deletecollection', 'get', 'list', 'watch']),
  ],
  'node-controller': [
    rule(CORE, ['nodes'], ['delete', 'get', 'list', 'patch', 'update', 'watch']),
    rule(CORE, ['nodes/status'], PATCH_UPDATE),
    rule(CORE, ['pods/status'], PATCH_UPDATE),
    rule(CORE, ['pods'], ['delete', 'get', 'list', 'watch']),
    EVENTS,
  ],
  'persistent-volume-binder': [
    rule(CORE, ['persistentvolumes'], ['create', 'delete', 'get', 'list', 'update', 'watch']),
    rule(CORE, ['persistentvolumes/status'], ['update']),
    rule(CORE, ['persistentvolumeclaims'], ['get', 'list', 'update', 'watch']),
    rule(CORE, ['persistentvolumeclaims/status'], ['update']),
    rule(CORE, ['pods'], ['create', 'delete', 'get', 'list', 'watch']),
    rule(['storage.k8s.io'], ['storageclasses'], READ),
    rule(CORE, ['nodes'], LIST_WATCH),
    EVENTS,
    rule(CORE, ['events'], ['watch']),
  ],
  'pod-garbage-collector': [rule(CORE, ['pods'], ['delete', 'list', 'watch']), rule(CORE, ['nodes'], READ), rule(CORE, ['pods/status'], ['patch'])],
  'pv-protection-controller': [rule(CORE, ['persistentvolumes'], ['get', 'list', 'update', 'watch']), EVENTS],
  'pvc-protection-controller': [
    rule(CORE, ['persistentvolumeclaims'], ['get', 'list', 'update', 'watch']),
    rule(CORE, ['persistentvolumeclaims/status'], ['update']),
    rule(CORE, ['pods'], READ),
    EVENTS,
  ],
  'replicaset-controller': [
    rule(APPS, ['replicasets'], ['get', 'list', 'update', 'watch']),
    rule(APPS, ['replicasets/status'], ['update']),
    rule(APPS, ['replicasets/finalizers'], ['update']),
    rule(CORE, ['pods'], ['create', 'delete', 'list', 'patch', 'watch']),
    EVENTS,
  ],
  'replication-controller': [
    rule(CORE, ['replicationcontrollers'], ['get', 'list', 'update', 'watch']),
    rule(CORE, ['replicationcontrollers/status'], ['update']),
    rule(CORE, ['replicationcontrollers/finalizers'], ['update']),
    rule(CORE, ['pods'], ['create', 'delete', 'list', 'patch', 'watch']),
    EVENTS,
  ],
  'resourcequota-controller': [rule(['*'], ['*'], LIST_WATCH), rule(CORE, ['resourcequotas/status'], ['update']), EVENTS],
  'root-ca-cert-publisher': [rule(CORE, ['configmaps'], ['create', 'update']), EVENTS],
  'route-controller': [rule(CORE, ['nodes'], LIST_WATCH), rule(CORE, ['nodes/status'], ['patch']), EVENTS],
  'selinux-warning-controller': [
    EVENTS,
    rule(CORE, ['persistentvolumes'], READ),
    rule(CORE, ['persistentvolumeclaims'], READ),
    rule(CORE, ['pods'], READ),
    rule(['storage.k8s.io'], ['csidrivers'], READ),
  ],
  'service-account-controller': [rule(CORE, ['serviceaccounts'], ['create']), EVENTS],
  'service-cidrs-controller': [
    rule(['networking.k8s.io'], ['servicecidrs'], ['get', 'list', 'patch', 'update', 'watch']),
    rule(['networking.k8s.io'], ['servicecidrs/finalizers'], PATCH_UPDATE),
    rule(['networking.k8s.io'], ['servicecidrs/status'], PATCH_UPDATE),
    rule(['networking.k8s.io'], ['ipaddresses'], READ),
    EVENTS,
  ],
  'service-controller': [rule(CORE, ['services'], READ), rule(CORE, ['services/status'], PATCH_UPDATE), rule(CORE, ['nodes'], LIST_WATCH), EVENTS],
  'statefulset-controller': [
    rule(CORE, ['pods'], LIST_WATCH),
    rule(['apps'], ['statefulsets'], READ),
    rule(['apps'], ['statefulsets/status'], ['update']),
    rule(['apps'], ['statefulsets/finalizers'], ['update']),
    rule(CORE, ['pods'], ['create', 'delete', 'get', 'patch', 'update']),
    rule(['apps'], ['controllerrevisions'], READ_WRITE),
    rule(CORE, ['persistentvolumeclaims'], ['create', 'get', 'list', 'watch']),
    rule(CORE, ['persistentvolumeclaims'], ['delete', 'update']),
    rule(CORE, ['pods/finalizers'], ['update']),
    EVENTS,
  ],
  'ttl-after-finished-controller': [rule(['batch'], ['jobs'], ['delete', 'get', 'list', 'watch']), EVENTS],
  'taint-eviction-controller': [rule(CORE, ['pods'], ['delete', 'get', 'list']), rule(CORE, ['pods/status'], PATCH_UPDATE), EVENTS],
  'ttl-controller': [rule(CORE, ['nodes'], ['list', 'patch', 'update', 'watch']), EVENTS],
  'validatingadmissionpolicy-status-controller': [
    rule(['admissionregistration.k8s.io'], ['validatingadmissionpolicies'], READ),
    rule(['admissionregistration.k8s.io'], ['validatingadmissionpolicies/status'], ['get', 'patch', 'update']),
    EVENTS,
  ],
  'volumeattributesclass-protection-controller': [
    rule(CORE, ['persistentvolumeclaims'], READ),
    rule(CORE, ['persistentvolumes'], READ),
    rule(['storage.k8s.io'], ['volumeattributesclasses'], ['get', 'list', 'update', 'watch']),
    EVENTS,
  ],
};

const LEADER_LOCKING = [
  rule(['coordination.k8s.io'], ['leases'], ['create', 'get', 'list', 'update', 'watch']),
  rule(['coordination.k8s.io'], ['leasecandidates'], ['create', 'get', 'list', 'update', 'watch']),
];

/** Roles and their RoleBindings in kube-system and kube-public, by namespace. */
const NAMESPACED: readonly { namespace: string; name: string; rules: PolicyRule[]; binding: string; subjects: Subject[] }[] = [
  {
    namespace: 'kube-public',
    name: 'system:controller:bootstrap-signer',
    binding: 'system:controller:bootstrap-signer',
    rules: [rule(CORE, ['configmaps'], READ), named(CORE, ['configmaps'], ['cluster-info'], ['update']), EVENTS],
    subjects: [serviceAccount('bootstrap-signer')],
  },
  {
    namespace: 'kube-system',
    name: 'extension-apiserver-authentication-reader',
    binding: 'system::extension-apiserver-authentication-reader',
    rules: [named(CORE, ['configmaps'], ['extension-apiserver-authentication'], READ)],
    subjects: [user('system:kube-controller-manager'), user('system:kube-scheduler')],
  },
  {
    namespace: 'kube-system',
    name: 'system::leader-locking-kube-controller-manager',
    binding: 'system::leader-locking-kube-controller-manager',
    rules: LEADER_LOCKING,
    subjects: [user('system:kube-controller-manager'), serviceAccount('kube-controller-manager'), serviceAccount('leader-election-controller')],
  },
  {
    namespace: 'kube-system',
    name: 'system::leader-locking-kube-scheduler',
    binding: 'system::leader-locking-kube-scheduler',
    rules: LEADER_LOCKING,
    subjects: [user('system:kube-scheduler'), serviceAccount('kube-scheduler')],
  },
  {
    namespace: 'kube-system',
    name: 'system:controller:bootstrap-signer',
    binding: 'system:controller:bootstrap-signer',
    rules: [rule(CORE, ['secrets'], READ)],
    subjects: [serviceAccount('bootstrap-signer')],
  },
  {
    namespace: 'kube-system',
    name: 'system:controller:cloud-provider',
    binding: 'system:controller:cloud-provider',
    rules: [rule(CORE, ['configmaps'], ['create', 'get', 'list', 'watch'])],
    subjects: [serviceAccount('cloud-provider')],
  },
  {
    namespace: 'kube-system',
    name: 'system:controller:token-cleaner',
    binding: 'system:controller:token-cleaner',
    rules: [rule(CORE, ['secrets'], ['delete', 'get', 'list', 'watch']), EVENTS],
    subjects: [serviceAccount('token-cleaner')],
  },
];

const controllerRole = (name: string) => `system:controller:${name}`;

/** The components' and controllers' ClusterRoles. */
export const COMPONENT_CLUSTER_ROLES: readonly KubeObject[] = [
  ...COMPONENTS.map((c) => clusterRole(c.name, c.rules)),
  ...Object.entries(CONTROLLERS).map(([name, rules]) => clusterRole(controllerRole(name), rules)),
];

/** Their ClusterRoleBindings (each named after its role). */
export const COMPONENT_CLUSTER_ROLE_BINDINGS: readonly KubeObject[] = [
  ...COMPONENTS.filter((c) => c.subjects).map((c) => binding(c.name, 'ClusterRole', c.subjects!)),
  ...Object.keys(CONTROLLERS).map((name) => binding(controllerRole(name), 'ClusterRole', [serviceAccount(name)])),
];

/** The Roles in kube-system and kube-public. */
export const COMPONENT_ROLES: readonly KubeObject[] = NAMESPACED.map((r) => ({ metadata: meta(r.name, r.namespace), rules: r.rules }));

/** Their RoleBindings. */
export const COMPONENT_ROLE_BINDINGS: readonly KubeObject[] = NAMESPACED.map((r) => ({
  ...binding(r.binding, 'Role', r.subjects, r.namespace),
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: r.name },
}));
