/**
 * Schema of node.k8s.io/v1 RuntimeClass (k8s.io/api/node/v1 types.go), registered under its
 * definition names.
 */
import { defineSchema, fieldOf, objectRootSchema, protoSchema, type JSONSchemaProps } from '@app/apimachinery';
import { CORE_OVERLAYS } from '../../core/core.overlays.js';
import { str } from '../../core/core.schema.js';

const NODE = 'io.k8s.api.node.v1';

/** core/v1 Toleration, as RuntimeClass scheduling embeds it: the one Pods use, derived from its message. */
export const TolerationSchema: JSONSchemaProps = protoSchema('k8s.io.api.core.v1.Toleration', CORE_OVERLAYS);

/** node/v1 Overhead. */
export const OverheadSchema: JSONSchemaProps = defineSchema(`${NODE}.Overhead`, {
  type: 'object',
  description: 'Resources a pod of this runtime class uses beyond its containers.',
  properties: {
    podFixed: {
      type: 'object',
      description: 'Fixed overhead per pod.',
      additionalProperties: { 'x-kubernetes-int-or-string': true, description: 'A Quantity.' },
    },
  },
});

/** node/v1 Scheduling. */
export const SchedulingSchema: JSONSchemaProps = defineSchema(`${NODE}.Scheduling`, {
  type: 'object',
  description: 'Where pods of this runtime class may run; absent means every node.',
  properties: {
    nodeSelector: {
      type: 'object',
      description: "Merged with the pod's nodeSelector; a conflict rejects the pod.",
      additionalProperties: { type: 'string' },
      'x-kubernetes-map-type': 'atomic',
    },
    tolerations: {
      type: 'array',
      description: "Appended to the pod's tolerations.",
      items: TolerationSchema,
      'x-kubernetes-list-type': 'atomic',
    },
  },
});

/** node/v1 RuntimeClass (cluster-scoped). */
export const RuntimeClassSchema: JSONSchemaProps = defineSchema(
  `${NODE}.RuntimeClass`,
  objectRootSchema(
    { group: 'node.k8s.io', version: 'v1', kind: 'RuntimeClass' },
    'A container runtime configuration (handler) that pods can select by name.',
    {
      handler: str('The CRI handler running pods of this class: a lower-case DNS label, immutable. All nodes are assumed to have it.'),
      overhead: fieldOf(OverheadSchema, { description: 'Resource overhead of running a pod with this class.' }),
      scheduling: fieldOf(SchedulingSchema, { description: 'Nodes that support this class; absent: all nodes.' }),
    },
    { required: ['handler'] },
  ),
);
