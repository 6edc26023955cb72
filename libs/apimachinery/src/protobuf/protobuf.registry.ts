/**
 * Which protobuf message carries which group/version/kind, and which scalar fields keep their
 * zero value in JSON. Both are facts about Kubernetes' Go types that a .proto file cannot say.
 */

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';
const CORE = 'k8s.io.api.core.v1';
const AUTHN = 'k8s.io.api.authentication.v1';
const AUTHZ = 'k8s.io.api.authorization.v1';
const CERTS = 'k8s.io.api.certificates.v1';
const COORD = 'k8s.io.api.coordination.v1';
const RBAC = 'k8s.io.api.rbac.v1';

/** Proto package of each apiVersion whose kinds live in one package. */
const PACKAGES: Record<string, string> = {
  v1: CORE,
  'authentication.k8s.io/v1': AUTHN,
  'authorization.k8s.io/v1': AUTHZ,
  'certificates.k8s.io/v1': CERTS,
  'coordination.k8s.io/v1': COORD,
  'rbac.authorization.k8s.io/v1': RBAC,
};

/** Kinds served per apiVersion (the message has the kind's name in that package). */
const KINDS: Record<string, readonly string[]> = {
  v1: [
    'ConfigMap', 'ConfigMapList', 'Secret', 'SecretList', 'Namespace', 'NamespaceList',
    'ServiceAccount', 'ServiceAccountList', 'Event', 'EventList',
  ],
  'authentication.k8s.io/v1': ['TokenRequest', 'TokenReview', 'SelfSubjectReview'],
  'authorization.k8s.io/v1': [
    'SelfSubjectAccessReview', 'SubjectAccessReview', 'LocalSubjectAccessReview', 'SelfSubjectRulesReview',
  ],
  'certificates.k8s.io/v1': ['CertificateSigningRequest', 'CertificateSigningRequestList'],
  'coordination.k8s.io/v1': ['Lease', 'LeaseList'],
  'rbac.authorization.k8s.io/v1': [
    'Role', 'RoleList', 'ClusterRole', 'ClusterRoleList', 'RoleBinding', 'RoleBindingList',
    'ClusterRoleBinding', 'ClusterRoleBindingList',
  ],
};

/**
 * meta/v1 kinds. Kubernetes registers them ("unversioned" types) in every group version, so
 * e.g. `v1 Status` and `meta.k8s.io/v1 DeleteOptions` are both accepted.
 */
const META_KINDS: readonly string[] = [
  'Status', 'DeleteOptions', 'CreateOptions', 'UpdateOptions', 'PatchOptions', 'GetOptions',
  'ListOptions', 'WatchEvent', 'APIResourceList', 'APIGroupList', 'APIGroup', 'APIVersions',
  'PartialObjectMetadata', 'PartialObjectMetadataList',
];

/**
 * Full protobuf message name (no leading dot) for an apiVersion/kind, or undefined when the server
 * has no protobuf form for it (custom resources, unknown kinds: the caller answers 415/406).
 */
export function messageNameFor(apiVersion: string, kind: string): string | undefined {
  const pkg = PACKAGES[apiVersion];
  if (pkg && KINDS[apiVersion]?.includes(kind)) return `${pkg}.${kind}`;
  if (META_KINDS.includes(kind) && (pkg !== undefined || apiVersion === 'meta.k8s.io/v1')) return `${META}.${kind}`;
  return undefined;
}

/** Every (apiVersion, kind, message) triple the registry knows, for discovery and tests. */
export function registeredKinds(): { apiVersion: string; kind: string; message: string }[] {
  const out: { apiVersion: string; kind: string; message: string }[] = [];
  for (const [apiVersion, kinds] of Object.entries(KINDS)) {
    for (const kind of kinds) out.push({ apiVersion, kind, message: `${PACKAGES[apiVersion]}.${kind}` });
  }
  return out;
}

/**
 * Scalar fields whose zero value ("", 0, false) is meaningful in JSON. Everything else is
 * dropped when zero, because Go's generated marshaller writes every non-pointer field (so a
 * kubectl ConfigMap carries `generateName: ""`, `generation: 0` on the wire) while Go's JSON
 * encoder omits them (`omitempty`). Two cases stay:
 *  - pointer fields (`*bool`, `*int64`, `*string`): on the wire only when set, so an explicit
 *    `immutable: false` survives;
 *  - non-pointer fields without `omitempty` in their json tag, which Go's JSON always prints
 *    (e.g. SubjectAccessReviewStatus.allowed, RoleRef.apiGroup).
 */
export const KEEP_ZERO: ReadonlySet<string> = new Set([
  // meta/v1 pointers
  `${META}.ObjectMeta.deletionGracePeriodSeconds`,
  `${META}.OwnerReference.controller`,
  `${META}.OwnerReference.blockOwnerDeletion`,
  `${META}.ListMeta.remainingItemCount`,
  `${META}.DeleteOptions.gracePeriodSeconds`,
  `${META}.DeleteOptions.orphanDependents`,
  `${META}.DeleteOptions.propagationPolicy`,
  `${META}.DeleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential`,
  `${META}.Preconditions.uid`,
  `${META}.Preconditions.resourceVersion`,
  `${META}.PatchOptions.force`,
  `${META}.ListOptions.sendInitialEvents`,
  // meta/v1 without omitempty
  `${META}.OwnerReference.apiVersion`,
  `${META}.OwnerReference.kind`,
  `${META}.OwnerReference.name`,
  `${META}.OwnerReference.uid`,
  `${META}.LabelSelectorRequirement.key`,
  `${META}.LabelSelectorRequirement.operator`,
  `${META}.FieldSelectorRequirement.key`,
  `${META}.FieldSelectorRequirement.operator`,
  `${META}.Condition.type`,
  `${META}.Condition.status`,
  `${META}.Condition.reason`,
  `${META}.Condition.message`,
  `${META}.APIResource.name`,
  `${META}.APIResource.singularName`,
  `${META}.APIResource.namespaced`,
  `${META}.APIResource.kind`,
  `${META}.APIResourceList.groupVersion`,
  `${META}.APIGroup.name`,
  `${META}.GroupVersionForDiscovery.groupVersion`,
  `${META}.GroupVersionForDiscovery.version`,
  `${META}.ServerAddressByClientCIDR.clientCIDR`,
  `${META}.ServerAddressByClientCIDR.serverAddress`,
  `${META}.WatchEvent.type`,
  `${META}.ApplyOptions.force`,
  // core/v1
  `${CORE}.ConfigMap.immutable`,
  `${CORE}.Secret.immutable`,
  `${CORE}.ServiceAccount.automountServiceAccountToken`,
  `${CORE}.NamespaceCondition.type`,
  `${CORE}.NamespaceCondition.status`,
  `${CORE}.Event.reportingComponent`,
  `${CORE}.Event.reportingInstance`,
  // authentication/v1
  `${AUTHN}.TokenRequestSpec.expirationSeconds`,
  `${AUTHN}.TokenRequestStatus.token`,
  // authorization/v1
  `${AUTHZ}.SubjectAccessReviewStatus.allowed`,
  `${AUTHZ}.SubjectRulesReviewStatus.incomplete`,
  // certificates/v1
  `${CERTS}.CertificateSigningRequestSpec.expirationSeconds`,
  `${CERTS}.CertificateSigningRequestSpec.signerName`,
  `${CERTS}.CertificateSigningRequestCondition.type`,
  `${CERTS}.CertificateSigningRequestCondition.status`,
  // coordination/v1: every LeaseSpec scalar is a pointer
  `${COORD}.LeaseSpec.holderIdentity`,
  `${COORD}.LeaseSpec.leaseDurationSeconds`,
  `${COORD}.LeaseSpec.leaseTransitions`,
  `${COORD}.LeaseSpec.strategy`,
  `${COORD}.LeaseSpec.preferredHolder`,
  // rbac/v1 without omitempty
  `${RBAC}.RoleRef.apiGroup`,
  `${RBAC}.RoleRef.kind`,
  `${RBAC}.RoleRef.name`,
  `${RBAC}.Subject.kind`,
  `${RBAC}.Subject.name`,
]);
