/**
 * What the storage.k8s.io/v1 protobuf messages cannot say about the schemas derived from them
 * (schema.proto.ts): descriptions, required fields, enums and defaults (k8s.io/api/storage/v1
 * types.go, pkg/apis/storage/v1 defaults.go). Passed together with the core overlays, since
 * these kinds embed core messages.
 */
import type { SchemaOverlays } from '@app/apimachinery';

const S = 'k8s.io.api.storage.v1';
const d = (description: string) => ({ description });

/** CSIDriver fsGroupPolicy values. */
export const FS_GROUP_POLICIES: readonly string[] = ['File', 'None', 'ReadWriteOnceWithFSType'];
/** CSIDriver volumeLifecycleModes values. */
export const LIFECYCLE_MODES: readonly string[] = ['Ephemeral', 'Persistent'];
/** StorageClass volumeBindingMode values. */
export const BINDING_MODES: readonly string[] = ['Immediate', 'WaitForFirstConsumer'];

/** The storage.k8s.io/v1 overlays. */
export const STORAGE_OVERLAYS: SchemaOverlays = {
  [`${S}.CSIDriverSpec`]: {
    description: 'What a CSI driver needs from Kubernetes.',
    fields: {
      attachRequired: { description: 'Whether the driver needs an attach step (a VolumeAttachment). Default true. Immutable.', default: true },
      podInfoOnMount: {
        description: 'Whether mount calls carry the pod name, namespace, uid and ephemeral flag in the volume context. Default false. Immutable.',
        default: false,
      },
      volumeLifecycleModes: { description: 'Persistent and/or Ephemeral; empty means Persistent. Immutable.', default: ['Persistent'] },
      storageCapacity: { description: 'Whether scheduling considers CSIStorageCapacity objects of this driver. Default false.', default: false },
      fsGroupPolicy: {
        description: 'How fsGroup applies to volumes: ReadWriteOnceWithFSType (default), File or None.',
        enum: [...FS_GROUP_POLICIES],
        default: 'ReadWriteOnceWithFSType',
      },
      tokenRequests: d('Service account tokens passed to the driver at mount, by audience; audiences must differ.'),
      requiresRepublish: { description: 'Whether the driver wants periodic NodePublishVolume calls. Default false.', default: false },
      seLinuxMount: { description: 'Whether the driver supports the -o context mount option. Default false.', default: false },
      nodeAllocatableUpdatePeriodSeconds: d('How often, in seconds, the node agent refreshes the allocatable volume count (at least 10).'),
      serviceAccountTokenInSecrets: d('Whether service account tokens are passed in secrets rather than the volume context.'),
      preventPodSchedulingIfMissing: d('Whether pods using this driver wait until the driver is installed on the node.'),
    },
  },
  [`${S}.TokenRequest`]: {
    description: 'A service account token to request for a driver.',
    required: ['audience'],
    fields: { audience: d("Audience of the token; empty means the API server's."), expirationSeconds: d('Lifetime of the token in seconds.') },
  },
  [`${S}.CSINodeSpec`]: { description: 'The CSI drivers of a node.', required: ['drivers'], fields: { drivers: d('Drivers installed on the node, by name.') } },
  [`${S}.CSINodeDriver`]: {
    description: 'One CSI driver on a node.',
    required: ['name', 'nodeID'],
    fields: {
      name: d('Name of the driver (the CSIDriver name).'),
      nodeID: d("The node's identity as the driver knows it."),
      topologyKeys: d('Topology labels the driver supports on this node.'),
      allocatable: d('Volume limits of the driver on this node.'),
    },
  },
  [`${S}.VolumeNodeResources`]: { fields: { count: d('Maximum number of volumes of this driver on the node; unset means unlimited.') } },
  [`${S}.VolumeAttachmentSpec`]: {
    description: 'What to attach where.',
    required: ['attacher', 'source', 'nodeName'],
    fields: {
      attacher: d('Name of the volume driver that attaches (GetPluginName()).'),
      source: d('The volume to attach.'),
      nodeName: d('The node to attach the volume to.'),
    },
  },
  [`${S}.VolumeAttachmentSource`]: {
    description: 'Exactly one of persistentVolumeName and inlineVolumeSpec.',
    fields: {
      persistentVolumeName: d('Name of the PersistentVolume to attach.'),
      inlineVolumeSpec: d('A PersistentVolumeSpec of an inline volume migrated to CSI.'),
    },
  },
  [`${S}.VolumeAttachmentStatus`]: {
    description: 'Attach/detach progress; set by the attacher only.',
    required: ['attached'],
    fields: {
      attached: d('Whether the volume is attached.'),
      attachmentMetadata: d('Information the attacher returned on success, for the mount.'),
      attachError: d('The last attach error, if any.'),
      detachError: d('The last detach error, if any.'),
    },
  },
  [`${S}.VolumeError`]: { fields: { message: d('What went wrong.'), time: d('When it happened.'), errorCode: d('Numeric gRPC code of the error.') } },
};
