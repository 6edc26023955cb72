/**
 * Schema of core/v1 Namespace with Kubernetes' field names, types and merge extensions
 * (k8s.io/api/core/v1 types.go).
 */
import { defineSchema, fieldOf, objectRootSchema, TimeSchema } from '@app/apimachinery';
import { CORE, gvk, str } from '../core.schema.js';

/** core/v1 NamespaceCondition. */
export const NamespaceConditionSchema = defineSchema(`${CORE}.NamespaceCondition`, {
  type: 'object',
  description: 'State of one aspect of a namespace.',
  required: ['type', 'status'],
  properties: {
    lastTransitionTime: fieldOf(TimeSchema, { description: 'When the condition last changed status.' }),
    message: str('Human-readable details of the last transition.'),
    reason: str('Machine-readable reason of the last transition.'),
    status: { type: 'string', default: '', description: 'True, False or Unknown.' },
    type: { type: 'string', default: '', description: 'Type of the condition.' },
  },
});

/** core/v1 NamespaceSpec. */
export const NamespaceSpecSchema = defineSchema(`${CORE}.NamespaceSpec`, {
  type: 'object',
  description: 'Desired state of a namespace.',
  properties: {
    finalizers: {
      type: 'array',
      description: 'Opaque values that must be empty before the namespace is removed from storage.',
      items: { type: 'string', default: '' },
      'x-kubernetes-list-type': 'atomic',
    },
  },
});

/** core/v1 NamespaceStatus. */
export const NamespaceStatusSchema = defineSchema(`${CORE}.NamespaceStatus`, {
  type: 'object',
  description: 'Observed state of a namespace.',
  properties: {
    conditions: {
      type: 'array',
      description: 'Latest observations of the namespace state.',
      items: NamespaceConditionSchema,
      'x-kubernetes-list-map-keys': ['type'],
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-patch-merge-key': 'type',
      'x-kubernetes-patch-strategy': 'merge',
    },
    phase: { type: 'string', enum: ['Active', 'Terminating'], description: 'Lifecycle phase: Active, or Terminating while its contents are removed.' },
  },
});

/** core/v1 Namespace (cluster-scoped). */
export const NamespaceSchema = defineSchema(
  `${CORE}.Namespace`,
  objectRootSchema(gvk('Namespace'), 'A scope for names; most objects live in one.', {
    spec: fieldOf(NamespaceSpecSchema, { description: 'Desired behaviour of the namespace.' }),
    status: fieldOf(NamespaceStatusSchema, { description: 'Current status of the namespace. Read-only.' }),
  }),
);
