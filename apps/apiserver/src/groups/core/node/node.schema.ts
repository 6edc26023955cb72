/**
 * Schema of core/v1 Node (k8s.io/api/core/v1 types.go), registered under Kubernetes' definition
 * names. Nodes are stored objects here (no kubelet reports them); the schema carries every
 * field a node agent would write.
 */
import { defineSchema, fieldOf, objectRootSchema, QuantitySchema, TimeSchema, type JSONSchemaProps } from '@app/apimachinery';
import { bool, CORE, gvk, int32, str } from '../core.schema.js';

const time = (description: string): JSONSchemaProps => fieldOf(TimeSchema, { description });
const strings = (description: string): JSONSchemaProps => ({ type: 'array', description, items: { type: 'string' } });
const quantities = (description: string): JSONSchemaProps => ({ type: 'object', description, additionalProperties: QuantitySchema });

/** core/v1 Taint. */
export const TaintSchema = defineSchema(`${CORE}.Taint`, {
  type: 'object',
  description: 'Repels pods that do not tolerate it from the node.',
  required: ['key', 'effect'],
  properties: {
    effect: { type: 'string', enum: ['NoExecute', 'NoSchedule', 'PreferNoSchedule'], description: 'NoSchedule, PreferNoSchedule or NoExecute.' },
    key: str('The taint key (a qualified name).'),
    timeAdded: time('When a NoExecute taint was added.'),
    value: str('The taint value (a label value).'),
  },
});

const ConfigMapNodeConfigSourceSchema = defineSchema(`${CORE}.ConfigMapNodeConfigSource`, {
  type: 'object',
  description: 'A ConfigMap holding a node configuration.',
  required: ['namespace', 'name', 'kubeletConfigKey'],
  properties: {
    kubeletConfigKey: str('Key of the KubeletConfiguration in the ConfigMap.'),
    name: str('Name of the ConfigMap.'),
    namespace: str('Namespace of the ConfigMap.'),
    resourceVersion: str('ResourceVersion of the ConfigMap (status only).'),
    uid: str('UID of the ConfigMap (status only).'),
  },
});

const NodeConfigSourceSchema = defineSchema(`${CORE}.NodeConfigSource`, {
  type: 'object',
  description: 'A source of node configuration (deprecated dynamic kubelet configuration).',
  properties: { configMap: fieldOf(ConfigMapNodeConfigSourceSchema, { description: 'The ConfigMap source.' }) },
});

/** core/v1 NodeSpec. */
export const NodeSpecSchema = defineSchema(`${CORE}.NodeSpec`, {
  type: 'object',
  description: 'How the node is configured.',
  properties: {
    configSource: fieldOf(NodeConfigSourceSchema, { description: 'Deprecated: no longer used.' }),
    externalID: str('Deprecated: not all kubelets set it.'),
    podCIDR: str('Pod IP range of the node.'),
    podCIDRs: { ...strings('Pod IP ranges of the node, at most one per IP family; the first equals podCIDR.'), 'x-kubernetes-list-type': 'set' },
    providerID: str('ID of the node in its cloud provider: <ProviderName>://<ProviderSpecificNodeID>.'),
    taints: { type: 'array', description: 'Taints of the node.', items: TaintSchema, 'x-kubernetes-list-type': 'atomic' },
    unschedulable: bool('Whether new pods may not be scheduled to the node.'),
  },
});

const NodeConditionSchema = defineSchema(`${CORE}.NodeCondition`, {
  type: 'object',
  description: 'A condition of the node (Ready, MemoryPressure, DiskPressure, PIDPressure, NetworkUnavailable).',
  required: ['type', 'status'],
  properties: {
    lastHeartbeatTime: time('Last time the condition was reported.'),
    lastTransitionTime: time('Last time the status changed.'),
    message: str('Human-readable details.'),
    reason: str('Brief reason of the last transition.'),
    status: str('True, False or Unknown.'),
    type: str('Type of the condition.'),
  },
});

const NodeAddressSchema = defineSchema(`${CORE}.NodeAddress`, {
  type: 'object',
  description: 'An address of the node.',
  required: ['type', 'address'],
  properties: { address: str('The address.'), type: str('Hostname, ExternalIP, InternalIP, ExternalDNS or InternalDNS.') },
});

const DaemonEndpointSchema = defineSchema(`${CORE}.DaemonEndpoint`, {
  type: 'object',
  description: 'A port a daemon of the node listens on.',
  required: ['Port'],
  properties: { Port: int32('The port number.') },
});

const NodeSwapStatusSchema = defineSchema(`${CORE}.NodeSwapStatus`, {
  type: 'object',
  description: 'Swap memory of the node.',
  properties: { capacity: { type: 'integer', format: 'int64', description: 'Total swap memory in bytes.' } },
});

const NodeSystemInfoSchema = defineSchema(`${CORE}.NodeSystemInfo`, {
  type: 'object',
  description: 'Identifiers and versions of the node.',
  required: [
    'machineID',
    'systemUUID',
    'bootID',
    'kernelVersion',
    'osImage',
    'containerRuntimeVersion',
    'kubeletVersion',
    'kubeProxyVersion',
    'operatingSystem',
    'architecture',
  ],
  properties: {
    architecture: str('Architecture reported by the node.'),
    bootID: str('Boot ID reported by the node.'),
    containerRuntimeVersion: str('Container runtime version: <runtime>://<version>.'),
    kernelVersion: str('Kernel version (uname -r).'),
    kubeProxyVersion: str('Deprecated: kube-proxy version.'),
    kubeletVersion: str('Kubelet version.'),
    machineID: str('Machine ID (/etc/machine-id).'),
    operatingSystem: str('Operating system reported by the node.'),
    osImage: str('OS image (/etc/os-release PRETTY_NAME).'),
    swap: fieldOf(NodeSwapStatusSchema, { description: 'Swap memory information.' }),
    systemUUID: str('System UUID (SMBIOS).'),
  },
});

const NodeRuntimeHandlerSchema = defineSchema(`${CORE}.NodeRuntimeHandler`, {
  type: 'object',
  description: 'A runtime handler of the node.',
  properties: {
    features: {
      type: 'object',
      description: 'Features of the handler.',
      properties: {
        recursiveReadOnlyMounts: bool('Whether recursive read-only mounts are supported.'),
        userNamespaces: bool('Whether user namespaces are supported.'),
      },
    },
    name: str('Handler name; empty for the default handler.'),
  },
});

/** core/v1 NodeStatus. */
export const NodeStatusSchema = defineSchema(`${CORE}.NodeStatus`, {
  type: 'object',
  description: 'Most recently observed status of the node.',
  properties: {
    addresses: {
      type: 'array',
      description: 'Addresses of the node.',
      items: NodeAddressSchema,
      'x-kubernetes-list-map-keys': ['type'],
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-patch-merge-key': 'type',
      'x-kubernetes-patch-strategy': 'merge',
    },
    allocatable: quantities('Resources available to pods; defaults to capacity.'),
    capacity: quantities('Total resources of the node.'),
    conditions: {
      type: 'array',
      description: 'Current conditions of the node.',
      items: NodeConditionSchema,
      'x-kubernetes-list-map-keys': ['type'],
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-patch-merge-key': 'type',
      'x-kubernetes-patch-strategy': 'merge',
    },
    config: {
      type: 'object',
      description: 'Status of the (deprecated) dynamic configuration.',
      properties: {
        active: fieldOf(NodeConfigSourceSchema, { description: 'The configuration in use.' }),
        assigned: fieldOf(NodeConfigSourceSchema, { description: 'The configuration assigned.' }),
        error: str('Error of the assignment.'),
        lastKnownGood: fieldOf(NodeConfigSourceSchema, { description: 'The last configuration known good.' }),
      },
    },
    daemonEndpoints: {
      type: 'object',
      description: 'Endpoints of daemons on the node.',
      properties: { kubeletEndpoint: fieldOf(DaemonEndpointSchema, { description: 'Endpoint of the kubelet.' }) },
    },
    features: {
      type: 'object',
      description: 'Features the node supports.',
      properties: { supplementalGroupsPolicy: bool('Whether the SupplementalGroupsPolicy feature is supported.') },
    },
    images: {
      type: 'array',
      description: 'Container images on the node.',
      items: {
        type: 'object',
        description: 'A container image.',
        properties: {
          names: strings('Names of the image.'),
          sizeBytes: { type: 'integer', format: 'int64', description: 'Size of the image in bytes.' },
        },
      },
      'x-kubernetes-list-type': 'atomic',
    },
    nodeInfo: fieldOf(NodeSystemInfoSchema, { description: 'Identifiers and versions of the node.' }),
    phase: str('Deprecated: never used.'),
    runtimeHandlers: { type: 'array', description: 'Runtime handlers available.', items: NodeRuntimeHandlerSchema, 'x-kubernetes-list-type': 'atomic' },
    volumesAttached: {
      type: 'array',
      description: 'Volumes attached to the node.',
      items: {
        type: 'object',
        description: 'A volume attached to the node.',
        required: ['name', 'devicePath'],
        properties: { devicePath: str('Device path of the volume.'), name: str('Name of the attached volume.') },
      },
      'x-kubernetes-list-type': 'atomic',
    },
    volumesInUse: { ...strings('Volumes in use (mounted) on the node.'), 'x-kubernetes-list-type': 'atomic' },
  },
});

/** core/v1 Node (cluster-scoped). */
export const NodeSchema: JSONSchemaProps = defineSchema(
  `${CORE}.Node`,
  objectRootSchema(gvk('Node'), 'A worker node. Stored as reported; nothing runs on it here.', {
    spec: fieldOf(NodeSpecSchema, { description: 'How the node is configured.' }),
    status: fieldOf(NodeStatusSchema, { description: 'Most recently observed status of the node. Read-only.' }),
  }),
);
