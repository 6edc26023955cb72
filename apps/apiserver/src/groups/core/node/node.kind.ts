/**
 * core/v1 Node (cluster-scoped): its declaration, with kubectl's columns (NAME STATUS ROLES AGE
 * VERSION; -o wide: INTERNAL-IP EXTERNAL-IP OS-IMAGE KERNEL-VERSION CONTAINER-RUNTIME) and the
 * status subresource. Nodes are stored as clients write them: no kubelet reports here.
 */
import { ageOf, statusSubresource, type KindDeclaration } from '@app/registry';
import { asMap, str } from '../core.helpers.js';
import { podKubeletPorts } from '../pod/pod.kind.js';
import { nodeProxySubresource } from './node.proxy.js';
import { NodeSchema } from './node.schema.js';
import { nodeAddressCell, nodeRolesCell, nodeStatusCell, nodeStatusStrategy, nodeStrategy } from './node.strategy.js';

const info = (o: Parameters<typeof nodeStatusCell>[0], f: string): string => String(asMap(asMap(o.status).nodeInfo)[f] ?? '');

/** The Node declaration. */
export const nodeKind: KindDeclaration = {
  group: '',
  version: 'v1',
  kind: 'Node',
  plural: 'nodes',
  singular: 'node',
  shortNames: ['no'],
  namespaced: false,
  schema: NodeSchema,
  protobufMessage: 'k8s.io.api.core.v1.Node',
  strategy: nodeStrategy,
  subresources: { status: { verbs: statusSubresource().verbs, strategy: nodeStatusStrategy }, proxy: nodeProxySubresource(podKubeletPorts) },
  generation: 'none',
  tableColumns: [
    { name: 'Status', type: 'string', priority: 0, description: 'The Ready condition, and SchedulingDisabled', cell: (o) => nodeStatusCell(o) },
    { name: 'Roles', type: 'string', priority: 0, description: 'The roles of the node', cell: (o) => nodeRolesCell(o) },
    { name: 'Age', type: 'string', priority: 0, description: 'Time since creation', cell: (o, now) => ageOf(o, now) },
    { name: 'Version', type: 'string', priority: 0, description: 'Kubelet version', cell: (o) => info(o, 'kubeletVersion') },
    { name: 'Internal-IP', type: 'string', priority: 1, description: 'First InternalIP address', cell: (o) => nodeAddressCell(o, 'InternalIP') },
    { name: 'External-IP', type: 'string', priority: 1, description: 'First ExternalIP address', cell: (o) => nodeAddressCell(o, 'ExternalIP') },
    { name: 'OS-Image', type: 'string', priority: 1, description: 'OS image of the node', cell: (o) => info(o, 'osImage') || '<unknown>' },
    { name: 'Kernel-Version', type: 'string', priority: 1, description: 'Kernel version of the node', cell: (o) => info(o, 'kernelVersion') || '<unknown>' },
    {
      name: 'Container-Runtime',
      type: 'string',
      priority: 1,
      description: 'Container runtime of the node',
      cell: (o) => info(o, 'containerRuntimeVersion') || '<unknown>',
    },
  ],
  fieldSelectors: { 'spec.unschedulable': str((o) => asMap(o.spec).unschedulable === true) },
};
