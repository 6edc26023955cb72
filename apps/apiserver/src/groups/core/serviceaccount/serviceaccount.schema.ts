/**
 * Schema of core/v1 ServiceAccount (k8s.io/api/core/v1 types.go).
 */
import { defineSchema, objectRootSchema } from '@app/apimachinery';
import { bool, CORE, gvk, LocalObjectReferenceSchema, ObjectReferenceSchema } from '../core.schema.js';

/** core/v1 ServiceAccount. */
export const ServiceAccountSchema = defineSchema(
  `${CORE}.ServiceAccount`,
  objectRootSchema(gvk('ServiceAccount'), 'An identity for processes in pods, with the secrets it may use.', {
    automountServiceAccountToken: bool('Whether pods of this account get an API token mounted automatically.'),
    imagePullSecrets: {
      type: 'array',
      description: 'Secrets in the same namespace used to pull images for pods of this account.',
      items: LocalObjectReferenceSchema,
      'x-kubernetes-list-type': 'atomic',
    },
    secrets: {
      type: 'array',
      description: 'Secrets in the same namespace pods of this account may use.',
      items: ObjectReferenceSchema,
      'x-kubernetes-patch-merge-key': 'name',
      'x-kubernetes-patch-strategy': 'merge',
    },
  }),
);
