/**
 * What the core/v1 protobuf messages cannot say about the schemas derived from them
 * (schema.proto.ts): descriptions, required fields, enums and defaults, with Kubernetes' facts
 * (k8s.io/api/core/v1 types.go, defaults.go). Kinds of other groups embedding these messages
 * (VolumeAttachment's inlineVolumeSpec, StorageClass's allowedTopologies) pass this table too.
 */
import type { SchemaOverlays } from '@app/apimachinery';
import { LocalObjectReferenceSchema, ObjectReferenceSchema } from './core.schema.js';

const C = 'k8s.io.api.core.v1';
const d = (description: string) => ({ description });

/** Access modes of volumes and claims. */
export const ACCESS_MODES: readonly string[] = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];
/** PersistentVolume reclaim policies. */
export const RECLAIM_POLICIES: readonly string[] = ['Delete', 'Recycle', 'Retain'];
/** Volume modes. */
export const VOLUME_MODES: readonly string[] = ['Block', 'Filesystem'];

const secretRef = d('Reference to the secret holding the credentials.');

/** One short description per volume source (the Volume table of the resources document). */
const SOURCES: Record<string, string> = {
  awsElasticBlockStore: 'An AWS EBS disk (deprecated in-tree source).',
  azureDisk: 'An Azure data disk (deprecated in-tree source).',
  azureFile: 'An Azure File share (deprecated in-tree source).',
  cephfs: 'A CephFS mount.',
  cinder: 'An OpenStack Cinder volume (deprecated in-tree source).',
  configMap: 'Keys of a ConfigMap as files.',
  csi: 'A volume of an external CSI driver.',
  downwardAPI: 'Fields of the pod as files.',
  emptyDir: 'An empty directory that lives as long as the pod.',
  ephemeral: 'A claim created for the pod and deleted with it.',
  fc: 'A Fibre Channel disk.',
  flexVolume: 'A volume of a FlexVolume plugin (deprecated).',
  flocker: 'A Flocker dataset (deprecated).',
  gcePersistentDisk: 'A GCE persistent disk (deprecated in-tree source).',
  gitRepo: 'A git repository cloned into an empty directory (deprecated).',
  glusterfs: 'A GlusterFS mount.',
  hostPath: 'A file or directory of the node.',
  image: 'The content of an OCI image or artifact, read-only.',
  iscsi: 'An iSCSI disk.',
  nfs: 'An NFS export.',
  persistentVolumeClaim: "A PersistentVolumeClaim of the pod's namespace.",
  photonPersistentDisk: 'A Photon Controller disk (deprecated).',
  portworxVolume: 'A Portworx volume (deprecated in-tree source).',
  projected: 'Several sources (secrets, config maps, downward API, service account token) in one directory.',
  quobyte: 'A Quobyte mount (deprecated).',
  rbd: 'A Ceph RBD image.',
  scaleIO: 'A ScaleIO volume (deprecated).',
  secret: 'Keys of a Secret as files.',
  storageos: 'A StorageOS volume (deprecated).',
  vsphereVolume: 'A vSphere VMDK (deprecated in-tree source).',
  local: 'A disk, partition or directory of one node.',
};
const sourcesOf = (names: string[]) => Object.fromEntries(names.map((n) => [n, { description: SOURCES[n]! }]));

/**
 * The overlay of a workload's condition message (type, status, last transition time, reason,
 * message), the same for ReplicationController and the apps/v1 workloads; `type` describes the
 * condition types.
 */
export function workloadConditionOverlay(kind: string, type: string): SchemaOverlays[string] {
  return {
    description: `One condition of a ${kind}.`,
    required: ['type', 'status'],
    fields: {
      type: d(type),
      status: { description: 'True, False or Unknown.', enum: ['False', 'True', 'Unknown'] },
      lastTransitionTime: d('When the status last changed.'),
      reason: d('CamelCase reason of the last transition.'),
      message: d('Human-readable details of the last transition.'),
    },
  };
}

/** The core/v1 overlays. */
export const CORE_OVERLAYS: SchemaOverlays = {
  [`${C}.VolumeSource`]: {
    description: 'Where a volume comes from: exactly one source.',
    fields: sourcesOf(Object.keys(SOURCES).filter((k) => k !== 'local')),
  },
  [`${C}.PersistentVolumeSource`]: {
    description: 'The storage behind a persistent volume: exactly one source.',
    fields: sourcesOf([
      'awsElasticBlockStore',
      'azureDisk',
      'azureFile',
      'cephfs',
      'cinder',
      'csi',
      'fc',
      'flexVolume',
      'flocker',
      'gcePersistentDisk',
      'glusterfs',
      'hostPath',
      'iscsi',
      'local',
      'nfs',
      'photonPersistentDisk',
      'portworxVolume',
      'quobyte',
      'rbd',
      'scaleIO',
      'storageos',
      'vsphereVolume',
    ]),
  },
  // Shared with the hand-written core kinds (Event, ServiceAccount): one schema per definition.
  [`${C}.ObjectReference`]: { use: ObjectReferenceSchema },
  [`${C}.LocalObjectReference`]: { use: LocalObjectReferenceSchema },
  [`${C}.PersistentVolumeSpec`]: {
    description: 'What a persistent volume is: its capacity, access modes, reclaim policy and exactly one volume source.',
    fields: {
      accessModes: d('Ways the volume can be mounted: ReadWriteOnce, ReadOnlyMany, ReadWriteMany, ReadWriteOncePod.'),
      capacity: d('Resources of the volume; only "storage" is recognised.'),
      claimRef: d('The claim this volume is bound to (both ways); set by the binder or pre-set to reserve the volume for a claim.'),
      mountOptions: d('Mount options such as ro or soft, passed to the mount as is (not validated).'),
      nodeAffinity: d('Nodes from which the volume can be reached.'),
      persistentVolumeReclaimPolicy: {
        description:
          'What happens once the claim is released: Retain (default for volumes created by hand), Delete (default for provisioned ones) or Recycle (deprecated).',
        enum: [...RECLAIM_POLICIES],
        default: 'Retain',
      },
      storageClassName: d('The StorageClass the volume belongs to; empty means none.'),
      volumeMode: { description: 'Filesystem (default) or Block.', enum: [...VOLUME_MODES], default: 'Filesystem' },
      volumeAttributesClassName: d('The VolumeAttributesClass of the volume.'),
    },
  },
  [`${C}.PersistentVolumeStatus`]: {
    description: 'What is known about a persistent volume; set by the system.',
    fields: {
      phase: { description: 'Pending, Available, Bound, Released or Failed.', enum: ['Pending', 'Available', 'Bound', 'Released', 'Failed'] },
      message: d('Human-readable reason for the phase.'),
      reason: d('Short CamelCase reason of a failure.'),
      lastPhaseTransitionTime: d('When the phase last changed.'),
    },
  },
  [`${C}.PersistentVolumeClaimSpec`]: {
    description: 'What a claim asks for: access modes, resources, class, mode and where its data comes from.',
    fields: {
      accessModes: d('Access modes the volume must offer.'),
      selector: d('Label query over volumes considered for binding.'),
      resources: d('Minimum resources the volume must have; requests.storage is required.'),
      volumeName: d('Name of the PersistentVolume backing this claim (binding reference).'),
      storageClassName: d('Name of the StorageClass required by the claim.'),
      volumeMode: { description: 'Filesystem (default) or Block.', enum: [...VOLUME_MODES], default: 'Filesystem' },
      dataSource: d('A VolumeSnapshot or a PersistentVolumeClaim to populate the volume from.'),
      dataSourceRef: d('Any object (non-core, or a PersistentVolumeClaim) to populate the volume from; equal to dataSource when both are set.'),
      volumeAttributesClassName: d('The VolumeAttributesClass the claim asks for.'),
    },
  },
  [`${C}.PersistentVolumeClaimStatus`]: {
    description: 'What is known about a claim; set by the system.',
    fields: {
      phase: { description: 'Pending, Bound or Lost.', enum: ['Pending', 'Bound', 'Lost'] },
      accessModes: d('Access modes of the bound volume.'),
      capacity: d('Capacity of the bound volume.'),
      allocatedResources: d('Resources allocated to the claim; the larger of it and spec.resources counts toward quota.'),
      conditions: d('Current conditions of the claim (ResizeStarted while the volume is resized).'),
    },
  },
  [`${C}.PersistentVolumeClaimCondition`]: { required: ['type', 'status'] },
  [`${C}.TypedLocalObjectReference`]: { required: ['kind', 'name'] },
  [`${C}.TypedObjectReference`]: { required: ['kind', 'name'] },
  [`${C}.NodeSelector`]: { description: 'A union of node selector terms.', required: ['nodeSelectorTerms'], extra: { 'x-kubernetes-map-type': 'atomic' } },
  [`${C}.NodeSelectorRequirement`]: { required: ['key', 'operator'], fields: { operator: { enum: ['DoesNotExist', 'Exists', 'Gt', 'In', 'Lt', 'NotIn'] } } },
  [`${C}.VolumeNodeAffinity`]: {
    description: 'Constraints on the nodes a volume can be reached from.',
    fields: { required: d('Nodes matching one of these terms can reach the volume.') },
  },
  [`${C}.TopologySelectorLabelRequirement`]: { required: ['key', 'values'] },
  [`${C}.HostPathVolumeSource`]: { required: ['path'] },
  [`${C}.LocalVolumeSource`]: { required: ['path'] },
  [`${C}.NFSVolumeSource`]: { required: ['server', 'path'] },
  [`${C}.CSIPersistentVolumeSource`]: {
    required: ['driver', 'volumeHandle'],
    fields: { controllerPublishSecretRef: secretRef, nodePublishSecretRef: secretRef },
  },
  [`${C}.ISCSIPersistentVolumeSource`]: { required: ['targetPortal', 'iqn', 'lun'] },
  [`${C}.GlusterfsPersistentVolumeSource`]: { required: ['endpoints', 'path'] },
  [`${C}.RBDPersistentVolumeSource`]: { required: ['monitors', 'image'] },
  [`${C}.CephFSPersistentVolumeSource`]: { required: ['monitors'] },
  [`${C}.CinderPersistentVolumeSource`]: { required: ['volumeID'] },
  [`${C}.AWSElasticBlockStoreVolumeSource`]: { required: ['volumeID'] },
  [`${C}.GCEPersistentDiskVolumeSource`]: { required: ['pdName'] },
  [`${C}.AzureFilePersistentVolumeSource`]: { required: ['secretName', 'shareName'] },
  [`${C}.AzureDiskVolumeSource`]: { required: ['diskName', 'diskURI'] },
  [`${C}.FlexPersistentVolumeSource`]: { required: ['driver'] },
  [`${C}.VsphereVirtualDiskVolumeSource`]: { required: ['volumePath'] },
  [`${C}.PhotonPersistentDiskVolumeSource`]: { required: ['pdID'] },
  [`${C}.PortworxVolumeSource`]: { required: ['volumeID'] },
  [`${C}.QuobyteVolumeSource`]: { required: ['registry', 'volume'] },
  [`${C}.ScaleIOPersistentVolumeSource`]: { required: ['gateway', 'system', 'secretRef'] },
  [`${C}.LimitRangeSpec`]: {
    description: 'Limits on the resources of the objects of one namespace.',
    required: ['limits'],
    fields: { limits: d('The limits, at most one item per type.') },
  },
  [`${C}.LimitRangeItem`]: {
    description: 'Limits and defaults for one kind of object.',
    required: ['type'],
    fields: {
      type: d('What the limits apply to: Container, Pod or PersistentVolumeClaim.'),
      default: d('Limits given to containers that set none.'),
      defaultRequest: d('Requests given to containers that set none.'),
      max: d('Largest value allowed per resource.'),
      min: d('Smallest value allowed per resource.'),
      maxLimitRequestRatio: d('Largest limit/request ratio allowed per resource; both must be set and non-zero.'),
    },
  },
  [`${C}.ResourceQuotaSpec`]: {
    description: 'The hard limits a quota enforces, and which objects it applies to.',
    fields: {
      hard: d('Limit per resource name (pods, requests.cpu, count/configmaps, ...).'),
      scopes: d('Filters every tracked object must match (Terminating, NotTerminating, BestEffort, NotBestEffort, PriorityClass, CrossNamespacePodAffinity).'),
      scopeSelector: d('Filters like scopes, expressed with operators and values; objects must match both.'),
    },
  },
  [`${C}.ResourceQuotaStatus`]: {
    description: 'The limits enforced and what the namespace uses of them.',
    fields: { hard: d('The limits enforced now (copied from spec.hard).'), used: d('Current use of each limited resource in the namespace.') },
  },
  [`${C}.ScopeSelector`]: {
    description: 'The AND of its scope requirements.',
    fields: { matchExpressions: d('The requirements.') },
  },
  [`${C}.ScopedResourceSelectorRequirement`]: {
    description: 'One scope requirement: a scope name, an operator and values.',
    fields: {
      scopeName: d('The scope the requirement applies to (BestEffort, CrossNamespacePodAffinity, NotBestEffort, NotTerminating, PriorityClass, Terminating).'),
      operator: d('In, NotIn, Exists or DoesNotExist.'),
      values: d('Values for In and NotIn; empty for Exists and DoesNotExist.'),
    },
  },
  // Pod and what it embeds (types.go, defaults.go SetDefaults_Pod/Container/...).
  [`${C}.PodSpec`]: {
    description: 'What a pod runs: its containers, volumes and scheduling constraints.',
    required: ['containers'],
    fields: {
      containers: d('The containers of the pod (at least one); names are unique within the pod.'),
      initContainers: d('Containers run one after the other before the app containers start.'),
      volumes: d('Volumes the containers can mount, each with exactly one source.'),
      restartPolicy: { description: 'Always (default), OnFailure or Never.', enum: ['Always', 'Never', 'OnFailure'], default: 'Always' },
      terminationGracePeriodSeconds: { description: 'Seconds the pod is given to stop gracefully. Default 30.', default: 30 },
      dnsPolicy: {
        description: 'ClusterFirst (default), ClusterFirstWithHostNet, Default or None.',
        enum: ['ClusterFirst', 'ClusterFirstWithHostNet', 'Default', 'None'],
        default: 'ClusterFirst',
      },
      schedulerName: { description: 'The scheduler that places the pod. Default default-scheduler.', default: 'default-scheduler' },
      serviceAccountName: d('The ServiceAccount the pod runs as; the ServiceAccount admission plugin sets default.'),
      serviceAccount: d('Deprecated alias of serviceAccountName.'),
      automountServiceAccountToken: d('Whether the service account token is mounted into the containers.'),
      nodeName: d('The node the pod is bound to.'),
      nodeSelector: d('Labels a node must have for the pod to be placed there.'),
      enableServiceLinks: { description: 'Whether service information is injected as environment variables. Default true.', default: true },
      securityContext: d('Pod-level security attributes.'),
    },
  },
  [`${C}.Container`]: {
    description: 'One container of a pod.',
    required: ['name'],
    fields: {
      name: d('Name of the container, a DNS label unique within the pod.'),
      image: d('Container image reference.'),
      imagePullPolicy: {
        description: 'Always, Never or IfNotPresent; default Always for :latest or untagged images, else IfNotPresent.',
        enum: ['Always', 'IfNotPresent', 'Never'],
      },
      ports: d('Ports the container exposes.'),
      resources: d('Compute resources required (requests) and allowed (limits).'),
      volumeMounts: d('Volumes of the pod mounted into the container.'),
      terminationMessagePath: { description: 'File the termination message is read from. Default /dev/termination-log.', default: '/dev/termination-log' },
      terminationMessagePolicy: { description: 'File (default) or FallbackToLogsOnError.', enum: ['FallbackToLogsOnError', 'File'], default: 'File' },
    },
  },
  [`${C}.ContainerPort`]: {
    required: ['containerPort'],
    fields: {
      protocol: { description: 'TCP (default), UDP or SCTP.', enum: ['SCTP', 'TCP', 'UDP'], default: 'TCP' },
      containerPort: d('Port number on the pod IP, 1-65535.'),
    },
  },
  [`${C}.Volume`]: {
    description: 'A named volume of a pod with exactly one source.',
    required: ['name'],
    fields: { name: d('Name of the volume, a DNS label unique within the pod.') },
  },
  [`${C}.VolumeMount`]: {
    required: ['name', 'mountPath'],
    fields: { name: d('Name of a volume of the pod.'), mountPath: d('Path in the container to mount at.') },
  },
  [`${C}.EnvVar`]: { required: ['name'] },
  [`${C}.KeyToPath`]: { required: ['key', 'path'] },
  [`${C}.DownwardAPIVolumeFile`]: { required: ['path'] },
  [`${C}.PersistentVolumeClaimVolumeSource`]: { required: ['claimName'] },
  [`${C}.ServiceAccountTokenProjection`]: {
    required: ['path'],
    fields: { expirationSeconds: { description: 'Requested lifetime of the token in seconds; at least 600. Default 3600.', default: 3600 } },
  },
  [`${C}.ConfigMapVolumeSource`]: { fields: { defaultMode: { description: 'Mode bits of the files, 0000-0777. Default 0644.', default: 420 } } },
  [`${C}.SecretVolumeSource`]: { fields: { defaultMode: { description: 'Mode bits of the files, 0000-0777. Default 0644.', default: 420 } } },
  [`${C}.ProjectedVolumeSource`]: { fields: { defaultMode: { description: 'Mode bits of the files, 0000-0777. Default 0644.', default: 420 } } },
  [`${C}.DownwardAPIVolumeSource`]: { fields: { defaultMode: { description: 'Mode bits of the files, 0000-0777. Default 0644.', default: 420 } } },
  [`${C}.EphemeralVolumeSource`]: { description: 'A claim created for and owned by the pod.' },
  [`${C}.PodTemplateSpec`]: { description: 'The pods a workload creates: their metadata and spec.' },
  [`${C}.ReplicationControllerSpec`]: {
    description: 'The desired state of a ReplicationController: how many pods of which template.',
    fields: {
      replicas: { description: 'Number of pods wanted. Default 1.', default: 1 },
      minReadySeconds: d('Seconds a new pod must be ready, without a container crashing, before it counts as available. Default 0.'),
      selector: d('Labels the pods must carry to count; defaulted from the template labels when empty, and must match them.'),
      template: d('The pods to create when too few exist; its restartPolicy may only be Always.'),
    },
  },
  [`${C}.ReplicationControllerStatus`]: {
    description: 'What the replication manager last observed; written through the status subresource.',
    fields: {
      replicas: d('Pods selected by the ReplicationController.'),
      fullyLabeledReplicas: d('Pods whose labels match the template labels.'),
      readyReplicas: d('Pods with a Ready condition.'),
      availableReplicas: d('Pods ready for at least minReadySeconds.'),
      observedGeneration: d('The generation the controller last acted on.'),
      conditions: d('Latest observations of the ReplicationController (ReplicaFailure).'),
    },
  },
  [`${C}.ReplicationControllerCondition`]: workloadConditionOverlay('ReplicationController', 'ReplicaFailure.'),
  [`${C}.PodStatus`]: {
    description: 'What is known about a pod; set by the system.',
    fields: { phase: { description: 'Pending, Running, Succeeded, Failed or Unknown.', enum: ['Failed', 'Pending', 'Running', 'Succeeded', 'Unknown'] } },
  },
};
