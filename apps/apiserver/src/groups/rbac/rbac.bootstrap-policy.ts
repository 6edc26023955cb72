/**
 * The bootstrap policy kube-apiserver creates at start (plugin/pkg/auth/authorizer/rbac/
 * bootstrappolicy: policy.go and its testdata): the user-facing roles cluster-admin, admin,
 * edit and view (the last three aggregated from the system:aggregate-to-* roles by their
 * labels), the discovery roles, and the ClusterRoleBindings that give them to system:masters,
 * to every authenticated user and, for the public info, to everyone.
 */
import type { KubeObject } from '@app/apimachinery';
import type { PolicyRule } from './rbac.validation.js';

const META = { labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' }, annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' } };
const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];
const ALL_RW = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const rule = (apiGroups: string[], resources: string[], verbs: string[]): PolicyRule => ({ apiGroups, resources, verbs });
/** The label by which admin, edit and view select the roles aggregated into them. */
export const aggregateTo = (role: 'admin' | 'edit' | 'view'): string => `rbac.authorization.k8s.io/aggregate-to-${role}`;

function clusterRole(name: string, rules: PolicyRule[] | null, extra: { labels?: Record<string, string>; aggregate?: string } = {}): KubeObject {
  // The aggregated roles start without rules (kube writes `rules: null`); the controller fills them.
  const o: KubeObject = { metadata: { name, labels: { ...META.labels, ...extra.labels }, annotations: { ...META.annotations } } };
  if (rules) o.rules = rules;
  if (extra.aggregate) o.aggregationRule = { clusterRoleSelectors: [{ matchLabels: { [extra.aggregate]: 'true' } }] };
  return o;
}

function clusterRoleBinding(name: string, role: string, groups: string[]): KubeObject {
  return {
    metadata: { name, labels: { ...META.labels }, annotations: { ...META.annotations } },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: groups.map((g) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: g })),
  };
}

/** The bootstrap ClusterRoles. */
export const BOOTSTRAP_CLUSTER_ROLES: readonly KubeObject[] = [
  clusterRole('cluster-admin', [rule(['*'], ['*'], ['*']), { nonResourceURLs: ['*'], verbs: ['*'] }]),
  clusterRole('admin', null, { aggregate: aggregateTo('admin') }),
  clusterRole('edit', null, { aggregate: aggregateTo('edit'), labels: { [aggregateTo('admin')]: 'true' } }),
  clusterRole('view', null, { aggregate: aggregateTo('view'), labels: { [aggregateTo('edit')]: 'true' } }),
  clusterRole(
    'system:aggregate-to-admin',
    [rule(['authorization.k8s.io'], ['localsubjectaccessreviews'], ['create']), rule(['rbac.authorization.k8s.io'], ['rolebindings', 'roles'], ALL_RW)],
    { labels: { [aggregateTo('admin')]: 'true' } },
  ),
  clusterRole(
    'system:aggregate-to-edit',
    [
      rule([''], ['pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy', 'secrets', 'services/proxy'], READ),
      rule([''], ['serviceaccounts'], ['impersonate']),
      rule([''], ['pods', 'pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy'], WRITE),
      rule([''], ['pods/eviction'], ['create']),
      rule(
        [''],
        [
          'configmaps',
          'events',
          'persistentvolumeclaims',
          'replicationcontrollers',
          'replicationcontrollers/scale',
          'secrets',
          'serviceaccounts',
          'services',
          'services/proxy',
        ],
        WRITE,
      ),
      rule([''], ['serviceaccounts/token'], ['create']),
      rule(
        ['apps'],
        ['daemonsets', 'deployments', 'deployments/rollback', 'deployments/scale', 'replicasets', 'replicasets/scale', 'statefulsets', 'statefulsets/scale'],
        WRITE,
      ),
      rule(['autoscaling'], ['horizontalpodautoscalers'], WRITE),
      rule(['batch'], ['cronjobs', 'jobs'], WRITE),
      rule(
        ['extensions'],
        [
          'daemonsets',
          'deployments',
          'deployments/rollback',
          'deployments/scale',
          'ingresses',
          'networkpolicies',
          'replicasets',
          'replicasets/scale',
          'replicationcontrollers/scale',
        ],
        WRITE,
      ),
      rule(['policy'], ['poddisruptionbudgets'], WRITE),
      rule(['networking.k8s.io'], ['ingresses', 'networkpolicies'], WRITE),
      rule(['coordination.k8s.io'], ['leases'], ALL_RW),
    ],
    { labels: { [aggregateTo('edit')]: 'true' } },
  ),
  clusterRole(
    'system:aggregate-to-view',
    [
      rule(
        [''],
        [
          'configmaps',
          'endpoints',
          'persistentvolumeclaims',
          'persistentvolumeclaims/status',
          'pods',
          'replicationcontrollers',
          'replicationcontrollers/scale',
          'serviceaccounts',
          'services',
          'services/status',
        ],
        READ,
      ),
      rule(
        [''],
        [
          'bindings',
          'events',
          'limitranges',
          'namespaces/status',
          'pods/log',
          'pods/status',
          'replicationcontrollers/status',
          'resourcequotas',
          'resourcequotas/status',
        ],
        READ,
      ),
      rule([''], ['namespaces'], READ),
      rule(['discovery.k8s.io'], ['endpointslices'], READ),
      rule(
        ['apps'],
        [
          'controllerrevisions',
          'daemonsets',
          'daemonsets/status',
          'deployments',
          'deployments/scale',
          'deployments/status',
          'replicasets',
          'replicasets/scale',
          'replicasets/status',
          'statefulsets',
          'statefulsets/scale',
          'statefulsets/status',
        ],
        READ,
      ),
      rule(['autoscaling'], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status'], READ),
      rule(['batch'], ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status'], READ),
      rule(
        ['extensions'],
        [
          'daemonsets',
          'daemonsets/status',
          'deployments',
          'deployments/scale',
          'deployments/status',
          'ingresses',
          'ingresses/status',
          'networkpolicies',
          'replicasets',
          'replicasets/scale',
          'replicasets/status',
          'replicationcontrollers/scale',
        ],
        READ,
      ),
      rule(['policy'], ['poddisruptionbudgets', 'poddisruptionbudgets/status'], READ),
      rule(['networking.k8s.io'], ['ingresses', 'ingresses/status', 'networkpolicies'], READ),
    ],
    { labels: { [aggregateTo('view')]: 'true' } },
  ),
  clusterRole('system:basic-user', [
    rule(['authorization.k8s.io'], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'], ['create']),
    rule(['authentication.k8s.io'], ['selfsubjectreviews'], ['create']),
  ]),
  clusterRole('system:discovery', [
    {
      nonResourceURLs: ['/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/openapi', '/openapi/*', '/readyz', '/version', '/version/'],
      verbs: ['get'],
    },
  ]),
  clusterRole('system:public-info-viewer', [{ nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'], verbs: ['get'] }]),
  // The certificates API (docs/certificates.md): who may request node client certificates that
  // csrapproving approves, who may ask for certificates at all, and one approver role per signer.
  clusterRole('system:certificates.k8s.io:certificatesigningrequests:nodeclient', [
    rule(['certificates.k8s.io'], ['certificatesigningrequests/nodeclient'], ['create']),
  ]),
  clusterRole('system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', [
    rule(['certificates.k8s.io'], ['certificatesigningrequests/selfnodeclient'], ['create']),
  ]),
  clusterRole('system:node-bootstrapper', [rule(['certificates.k8s.io'], ['certificatesigningrequests'], ['create', 'get', 'list', 'watch'])]),
  ...['kube-apiserver-client', 'kube-apiserver-client-kubelet', 'kubelet-serving', 'legacy-unknown'].map((signer) =>
    clusterRole(`system:certificates.k8s.io:${signer}-approver`, [
      { apiGroups: ['certificates.k8s.io'], resources: ['signers'], resourceNames: [`kubernetes.io/${signer}`], verbs: ['approve'] },
    ]),
  ),
];

/** The bootstrap ClusterRoleBindings. */
export const BOOTSTRAP_CLUSTER_ROLE_BINDINGS: readonly KubeObject[] = [
  clusterRoleBinding('cluster-admin', 'cluster-admin', ['system:masters']),
  clusterRoleBinding('system:basic-user', 'system:basic-user', ['system:authenticated']),
  clusterRoleBinding('system:discovery', 'system:discovery', ['system:authenticated']),
  clusterRoleBinding('system:public-info-viewer', 'system:public-info-viewer', ['system:authenticated', 'system:unauthenticated']),
];

/**
 * What kubeadm sets up so that a client without credentials may read kube-public/cluster-info
 * (kubeadm's clusterinfo phase): the Role kubeadm:bootstrap-signer-clusterinfo (get that one
 * ConfigMap) bound to the user system:anonymous. Created with cluster-info when bootstrap
 * tokens are enabled (bootstrap/cluster-info.publisher.ts).
 */
export const CLUSTER_INFO_ROLE: Readonly<KubeObject> = {
  metadata: { name: 'kubeadm:bootstrap-signer-clusterinfo', namespace: 'kube-public' },
  rules: [{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['cluster-info'], verbs: ['get'] }],
};

/** The RoleBinding of {@link CLUSTER_INFO_ROLE} to system:anonymous. */
export const CLUSTER_INFO_ROLE_BINDING: Readonly<KubeObject> = {
  metadata: { name: 'kubeadm:bootstrap-signer-clusterinfo', namespace: 'kube-public' },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'kubeadm:bootstrap-signer-clusterinfo' },
  subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'system:anonymous' }],
};
