/**
 * Resolving envelope kinds to protobuf messages (through the server's served kinds), and which
 * scalar fields keep their zero value in JSON: a fact about Kubernetes' Go types that a .proto
 * file cannot say.
 */

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';
const CORE = 'k8s.io.api.core.v1';
const ADMREG = 'k8s.io.api.admissionregistration.v1';
const AUTHN = 'k8s.io.api.authentication.v1';
const AUTHZ = 'k8s.io.api.authorization.v1';
const CERTS = 'k8s.io.api.certificates.v1';
const COORD = 'k8s.io.api.coordination.v1';
const DISC = 'k8s.io.api.discovery.v1';
const NET = 'k8s.io.api.networking.v1';
const RBAC = 'k8s.io.api.rbac.v1';
const SCHED = 'k8s.io.api.scheduling.v1';
const STORAGE = 'k8s.io.api.storage.v1';

/**
 * meta/v1 kinds. Kubernetes registers them ("unversioned" types) in every group version, so
 * e.g. `v1 Status` and `meta.k8s.io/v1 DeleteOptions` are both accepted.
 */
const META_KINDS: readonly string[] = [
  'Status',
  'DeleteOptions',
  'CreateOptions',
  'UpdateOptions',
  'PatchOptions',
  'GetOptions',
  'ListOptions',
  'WatchEvent',
  'APIResourceList',
  'APIGroupList',
  'APIGroup',
  'APIVersions',
  'PartialObjectMetadata',
  'PartialObjectMetadataList',
];

/**
 * Which protobuf message carries a served kind. The server implements it on its KindRegistry
 * (each declaration's protobufMessage), so the codec has no table of kinds of its own.
 */
export interface ProtobufKinds {
  /** Full message name (no leading dot) of a served kind or of its List; undefined when none. */
  messageFor(apiVersion: string, kind: string): string | undefined;
  /** Whether the apiVersion is served at all (meta/v1 kinds are accepted in every served one). */
  servesGroupVersion(apiVersion: string): boolean;
}

/** The meta/v1 message of a meta kind (Status, DeleteOptions, ...), whatever its apiVersion. */
export function metaMessageFor(kind: string): string | undefined {
  return META_KINDS.includes(kind) ? `${META}.${kind}` : undefined;
}

/**
 * The message for an apiVersion/kind found in an envelope: the served kind's, else a meta/v1
 * kind in a served group version (or meta.k8s.io/v1). Undefined: no protobuf form (415/406).
 */
export function messageNameFor(kinds: ProtobufKinds, apiVersion: string, kind: string): string | undefined {
  const served = kinds.messageFor(apiVersion, kind);
  if (served) return served;
  if (apiVersion === 'meta.k8s.io/v1' || kinds.servesGroupVersion(apiVersion)) return metaMessageFor(kind);
  return undefined;
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
  // core/v1 Node, Service, Endpoints: fields without omitempty, pointers
  `${CORE}.NodeCondition.type`,
  `${CORE}.NodeCondition.status`,
  `${CORE}.NodeAddress.type`,
  `${CORE}.NodeAddress.address`,
  `${CORE}.Taint.key`,
  `${CORE}.Taint.effect`,
  `${CORE}.DaemonEndpoint.Port`,
  `${CORE}.AttachedVolume.name`,
  `${CORE}.AttachedVolume.devicePath`,
  `${CORE}.NodeSystemInfo.machineID`,
  `${CORE}.NodeSystemInfo.systemUUID`,
  `${CORE}.NodeSystemInfo.bootID`,
  `${CORE}.NodeSystemInfo.kernelVersion`,
  `${CORE}.NodeSystemInfo.osImage`,
  `${CORE}.NodeSystemInfo.containerRuntimeVersion`,
  `${CORE}.NodeSystemInfo.kubeletVersion`,
  `${CORE}.NodeSystemInfo.kubeProxyVersion`,
  `${CORE}.NodeSystemInfo.operatingSystem`,
  `${CORE}.NodeSystemInfo.architecture`,
  `${CORE}.ServicePort.port`,
  `${CORE}.ServiceSpec.allocateLoadBalancerNodePorts`,
  `${CORE}.ServiceSpec.ipFamilyPolicy`,
  `${CORE}.ServiceSpec.internalTrafficPolicy`,
  `${CORE}.ServiceSpec.loadBalancerClass`,
  `${CORE}.ServiceSpec.trafficDistribution`,
  `${CORE}.ClientIPConfig.timeoutSeconds`,
  `${CORE}.PortStatus.port`,
  `${CORE}.PortStatus.protocol`,
  `${CORE}.PortStatus.error`,
  `${CORE}.LoadBalancerIngress.ipMode`,
  `${CORE}.EndpointAddress.ip`,
  `${CORE}.EndpointAddress.nodeName`,
  `${CORE}.EndpointPort.port`,
  `${CORE}.EndpointPort.appProtocol`,
  `${CORE}.ServicePort.appProtocol`,
  `${CORE}.NodeFeatures.supplementalGroupsPolicy`,
  `${CORE}.NodeRuntimeHandlerFeatures.recursiveReadOnlyMounts`,
  `${CORE}.NodeRuntimeHandlerFeatures.userNamespaces`,
  `${CORE}.NodeRuntimeHandler.name`,
  `${CORE}.ConfigMapNodeConfigSource.namespace`,
  `${CORE}.ConfigMapNodeConfigSource.name`,
  `${CORE}.ConfigMapNodeConfigSource.kubeletConfigKey`,
  `${CORE}.NodeSwapStatus.capacity`,
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
  // scheduling/v1: value has no omitempty, preemptionPolicy is a pointer
  `${SCHED}.PriorityClass.value`,
  `${SCHED}.PriorityClass.preemptionPolicy`,
  // rbac/v1 without omitempty
  `${RBAC}.RoleRef.apiGroup`,
  `${RBAC}.RoleRef.kind`,
  `${RBAC}.RoleRef.name`,
  `${RBAC}.Subject.kind`,
  `${RBAC}.Subject.name`,
  // core/v1 volumes, claims, pods: pointers and fields without omitempty
  `${CORE}.ConfigMapVolumeSource.defaultMode`,
  `${CORE}.ConfigMapVolumeSource.optional`,
  `${CORE}.SecretVolumeSource.defaultMode`,
  `${CORE}.SecretVolumeSource.optional`,
  `${CORE}.ProjectedVolumeSource.defaultMode`,
  `${CORE}.DownwardAPIVolumeSource.defaultMode`,
  `${CORE}.KeyToPath.mode`,
  `${CORE}.CSIVolumeSource.readOnly`,
  `${CORE}.ServiceAccountTokenProjection.expirationSeconds`,
  `${CORE}.ContainerPort.containerPort`,
  `${CORE}.ContainerStatus.ready`,
  `${CORE}.ContainerStatus.restartCount`,
  `${CORE}.PodSpec.terminationGracePeriodSeconds`,
  `${CORE}.PodSpec.automountServiceAccountToken`,
  `${CORE}.PodSpec.enableServiceLinks`,
  `${CORE}.PodSpec.priority`,
  `${CORE}.SecurityContext.privileged`,
  `${CORE}.SecurityContext.runAsUser`,
  `${CORE}.SecurityContext.runAsGroup`,
  `${CORE}.SecurityContext.runAsNonRoot`,
  `${CORE}.SecurityContext.readOnlyRootFilesystem`,
  `${CORE}.SecurityContext.allowPrivilegeEscalation`,
  `${CORE}.PodSecurityContext.runAsUser`,
  `${CORE}.PodSecurityContext.runAsGroup`,
  `${CORE}.PodSecurityContext.runAsNonRoot`,
  `${CORE}.PodSecurityContext.fsGroup`,
  `${CORE}.LimitRangeItem.type`,
  `${CORE}.ScopedResourceSelectorRequirement.scopeName`,
  `${CORE}.ScopedResourceSelectorRequirement.operator`,
  // storage/v1
  `${STORAGE}.StorageClass.allowVolumeExpansion`,
  `${STORAGE}.CSIDriverSpec.attachRequired`,
  `${STORAGE}.CSIDriverSpec.podInfoOnMount`,
  `${STORAGE}.CSIDriverSpec.storageCapacity`,
  `${STORAGE}.CSIDriverSpec.requiresRepublish`,
  `${STORAGE}.CSIDriverSpec.seLinuxMount`,
  `${STORAGE}.TokenRequest.audience`,
  `${STORAGE}.VolumeAttachmentStatus.attached`,
  `${STORAGE}.VolumeNodeResources.count`,
  // admissionregistration/v1: the webhooks' policies, timeout and client config are pointers;
  // names and the service's namespace have no omitempty
  `${ADMREG}.MutatingWebhook.name`,
  `${ADMREG}.MutatingWebhook.failurePolicy`,
  `${ADMREG}.MutatingWebhook.matchPolicy`,
  `${ADMREG}.MutatingWebhook.sideEffects`,
  `${ADMREG}.MutatingWebhook.timeoutSeconds`,
  `${ADMREG}.MutatingWebhook.reinvocationPolicy`,
  `${ADMREG}.ValidatingWebhook.name`,
  `${ADMREG}.ValidatingWebhook.failurePolicy`,
  `${ADMREG}.ValidatingWebhook.matchPolicy`,
  `${ADMREG}.ValidatingWebhook.sideEffects`,
  `${ADMREG}.ValidatingWebhook.timeoutSeconds`,
  `${ADMREG}.WebhookClientConfig.url`,
  `${ADMREG}.ServiceReference.namespace`,
  `${ADMREG}.ServiceReference.name`,
  `${ADMREG}.ServiceReference.path`,
  `${ADMREG}.ServiceReference.port`,
  `${ADMREG}.Rule.scope`,
  `${ADMREG}.MatchCondition.name`,
  `${ADMREG}.MatchCondition.expression`,
  // networking/v1: pointers (ingressClassName, pathType, the parameters' apiGroup, scope and
  // namespace, protocol, endPort) and fields without omitempty
  `${NET}.IngressSpec.ingressClassName`,
  `${NET}.HTTPIngressPath.pathType`,
  `${NET}.IngressServiceBackend.name`,
  `${NET}.IngressClassParametersReference.apiGroup`,
  `${NET}.IngressClassParametersReference.kind`,
  `${NET}.IngressClassParametersReference.name`,
  `${NET}.IngressClassParametersReference.scope`,
  `${NET}.IngressClassParametersReference.namespace`,
  `${NET}.IngressPortStatus.port`,
  `${NET}.IngressPortStatus.protocol`,
  `${NET}.IngressPortStatus.error`,
  `${NET}.IPBlock.cidr`,
  `${NET}.NetworkPolicyPort.protocol`,
  `${NET}.NetworkPolicyPort.endPort`,
  // discovery/v1: pointers (the conditions, hostname, nodeName, zone, every EndpointPort field)
  // and fields without omitempty (addressType, the hints' names)
  `${DISC}.EndpointSlice.addressType`,
  `${DISC}.EndpointConditions.ready`,
  `${DISC}.EndpointConditions.serving`,
  `${DISC}.EndpointConditions.terminating`,
  `${DISC}.Endpoint.hostname`,
  `${DISC}.Endpoint.nodeName`,
  `${DISC}.Endpoint.zone`,
  `${DISC}.EndpointPort.name`,
  `${DISC}.EndpointPort.protocol`,
  `${DISC}.EndpointPort.port`,
  `${DISC}.EndpointPort.appProtocol`,
  `${DISC}.ForZone.name`,
  `${DISC}.ForNode.name`,
]);

/**
 * Fields of embedded Go structs (`json:""` or `json:",inline"`): on the wire they are a nested
 * message, in JSON their fields sit in the enclosing object (Volume's source fields beside its
 * name). Another fact about Kubernetes' Go types a .proto file cannot say.
 */
export const INLINE: ReadonlySet<string> = new Set([
  `${CORE}.Volume.volumeSource`,
  `${CORE}.PersistentVolumeSpec.persistentVolumeSource`,
  `${CORE}.SecretProjection.localObjectReference`,
  `${CORE}.ConfigMapVolumeSource.localObjectReference`,
  `${CORE}.ConfigMapProjection.localObjectReference`,
  `${CORE}.ConfigMapKeySelector.localObjectReference`,
  `${CORE}.SecretKeySelector.localObjectReference`,
  `${CORE}.ConfigMapEnvSource.localObjectReference`,
  `${CORE}.SecretEnvSource.localObjectReference`,
  `${CORE}.Probe.handler`,
  `${CORE}.EphemeralContainer.ephemeralContainerCommon`,
  `${ADMREG}.RuleWithOperations.rule`,
  `${ADMREG}.NamedRuleWithOperations.ruleWithOperations`,
  `${NET}.IngressRule.ingressRuleValue`,
]);

/** Whether `field` of message `typeName` (full name, no leading dot) is an embedded struct. */
export function isInlineField(typeName: string, field: string): boolean {
  return INLINE.has(`${typeName}.${field}`);
}
