/**
 * Schemas of the storage.k8s.io/v1 kinds, derived from their protobuf messages with the core and
 * storage overlays (schema.proto.ts). Kinds without a spec (StorageClass, CSIStorageCapacity)
 * take the message's top-level fields.
 */
import { defineSchema, fieldOf, objectRootSchema, protoSchema, resolveSchema, schemaName, type JSONSchemaProps } from '@app/apimachinery';
import { CORE_OVERLAYS } from '../core/core.overlays.js';
import { BINDING_MODES, STORAGE_OVERLAYS } from './storage.overlays.js';

const S = 'k8s.io.api.storage.v1';
const message = (name: string): JSONSchemaProps => protoSchema(`${S}.${name}`, CORE_OVERLAYS, STORAGE_OVERLAYS);
const gvk = (kind: string) => ({ group: 'storage.k8s.io', version: 'v1', kind });

/** The fields of a root message other than metadata, with descriptions and more laid over. */
function topLevel(name: string, over: Record<string, JSONSchemaProps>): Record<string, JSONSchemaProps> {
  const { metadata: _m, ...props } = resolveSchema(message(name)).properties ?? {};
  const out: Record<string, JSONSchemaProps> = {};
  for (const [k, v] of Object.entries(props)) out[k] = over[k] ? (schemaName(v) ? fieldOf(v, over[k]) : { ...v, ...over[k] }) : v;
  return out;
}

/** storage/v1 StorageClass (cluster-scoped). */
export const StorageClassSchema: JSONSchemaProps = defineSchema(
  'io.k8s.api.storage.v1.StorageClass',
  objectRootSchema(
    gvk('StorageClass'),
    'A class of storage that dynamically provisioned persistent volumes are created from.',
    topLevel('StorageClass', {
      provisioner: { description: 'Name of the volume plugin or CSI driver that provisions volumes of this class. Immutable.' },
      parameters: { description: 'Parameters for the provisioner. Immutable.' },
      reclaimPolicy: {
        description: 'Reclaim policy of provisioned volumes: Delete (default) or Retain. Immutable.',
        enum: ['Delete', 'Retain'],
        default: 'Delete',
      },
      mountOptions: { description: 'Mount options of provisioned volumes, such as ro or soft (not validated).' },
      allowVolumeExpansion: { description: 'Whether claims of this class may grow.' },
      volumeBindingMode: {
        description: 'When volumes are provisioned and bound: Immediate (default) or WaitForFirstConsumer. Immutable.',
        enum: [...BINDING_MODES],
        default: 'Immediate',
      },
      allowedTopologies: { description: 'Topologies volumes may be provisioned in; empty means anywhere.' },
    }),
    { required: ['provisioner'] },
  ),
);

/** storage/v1 VolumeAttachment (cluster-scoped). */
export const VolumeAttachmentSchema: JSONSchemaProps = defineSchema(
  'io.k8s.api.storage.v1.VolumeAttachment',
  objectRootSchema(
    gvk('VolumeAttachment'),
    "The intent to attach a volume to a node, and the attacher's report of the result.",
    {
      spec: fieldOf(message('VolumeAttachmentSpec'), { description: 'What to attach where; set by the creator.' }),
      status: fieldOf(message('VolumeAttachmentStatus'), { description: 'Attach/detach result, set by the attacher only.' }),
    },
    { required: ['spec'] },
  ),
);

/** storage/v1 CSIDriver (cluster-scoped). */
export const CSIDriverSchema: JSONSchemaProps = defineSchema(
  'io.k8s.api.storage.v1.CSIDriver',
  objectRootSchema(
    gvk('CSIDriver'),
    "A CSI volume driver installed in the cluster; its name is the driver's name.",
    { spec: fieldOf(message('CSIDriverSpec'), { description: 'How Kubernetes talks to the driver.' }) },
    { required: ['spec'] },
  ),
);

/** storage/v1 CSINode (cluster-scoped). */
export const CSINodeSchema: JSONSchemaProps = defineSchema(
  'io.k8s.api.storage.v1.CSINode',
  objectRootSchema(
    gvk('CSINode'),
    'The CSI drivers installed on one node; named like the node and normally written by its node agent.',
    {
      spec: fieldOf(message('CSINodeSpec'), { description: 'The drivers of the node.' }),
      status: fieldOf(message('CSINodeStatus'), { description: "Health of the node's storage, as drivers report it." }),
    },
    { required: ['spec'] },
  ),
);

/** storage/v1 CSIStorageCapacity (namespaced). */
export const CSIStorageCapacitySchema: JSONSchemaProps = defineSchema(
  'io.k8s.api.storage.v1.CSIStorageCapacity',
  objectRootSchema(
    gvk('CSIStorageCapacity'),
    'Storage capacity of one class in one topology segment, as a CSI driver reports it.',
    topLevel('CSIStorageCapacity', {
      storageClassName: { description: 'The StorageClass the capacity applies to. Required, immutable.' },
      capacity: { description: 'Capacity available for new volumes; unset means unknown.' },
      maximumVolumeSize: { description: 'Largest volume that can be created; unset means capacity decides.' },
      nodeTopology: { description: 'Nodes the capacity is reachable from: unset none, empty all. Immutable.' },
    }),
    { required: ['storageClassName'] },
  ),
);
