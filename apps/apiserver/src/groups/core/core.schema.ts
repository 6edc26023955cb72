/**
 * Schema pieces the core/v1 kinds share: the definition-name prefix, small property builders and
 * the reference types (ObjectReference, LocalObjectReference), registered under their Kubernetes
 * definition names (io.k8s.api.core.v1.*) so the OpenAPI documents match kube-apiserver's.
 */
import { defineSchema, type JSONSchemaProps } from '@app/apimachinery';

/** Definition-name prefix of core/v1 types. */
export const CORE = 'io.k8s.api.core.v1';

/** group/version/kind of a core/v1 root. */
export const gvk = (kind: string): { group: string; version: string; kind: string } => ({ group: '', version: 'v1', kind });

/** A string property. */
export const str = (description: string): JSONSchemaProps => ({ type: 'string', description });
/** An int32 property. */
export const int32 = (description: string): JSONSchemaProps => ({ type: 'integer', format: 'int32', description });
/** A boolean property. */
export const bool = (description: string): JSONSchemaProps => ({ type: 'boolean', description });

/** core/v1 ObjectReference (atomic, as Kubernetes marks it). */
export const ObjectReferenceSchema = defineSchema(`${CORE}.ObjectReference`, {
  type: 'object',
  description: 'Enough information to find a referenced object.',
  properties: {
    apiVersion: str('API version of the referent.'),
    fieldPath: str('Path to a part of the referent instead of the whole object, e.g. "spec.containers{name}".'),
    kind: str('Kind of the referent.'),
    name: str('Name of the referent.'),
    namespace: str('Namespace of the referent.'),
    resourceVersion: str('Specific resourceVersion of the referent, if any.'),
    uid: str('UID of the referent.'),
  },
  'x-kubernetes-map-type': 'atomic',
});

/** core/v1 LocalObjectReference: a name in the same namespace. */
export const LocalObjectReferenceSchema = defineSchema(`${CORE}.LocalObjectReference`, {
  type: 'object',
  description: 'Names an object in the same namespace.',
  properties: { name: { type: 'string', default: '', description: 'Name of the referent.' } },
  'x-kubernetes-map-type': 'atomic',
});
