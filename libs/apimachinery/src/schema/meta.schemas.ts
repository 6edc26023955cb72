/**
 * Schemas of meta/v1 types (k8s.io/apimachinery/pkg/apis/meta/v1) with Kubernetes' field names,
 * types and merge extensions, and short descriptions of our own (kubectl explain prints them).
 * Each is registered under its Kubernetes OpenAPI definition name so the publisher emits `$ref`s
 * like kube-apiserver does. They are shared objects: treat them as read-only.
 */
import type { JSONSchemaProps } from './schema.types.js';
import { defineSchema, fieldOf } from './schema.names.js';

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';

const str = (description: string): JSONSchemaProps => ({ type: 'string', description });
const int64 = (description: string): JSONSchemaProps => ({ type: 'integer', format: 'int64', description });
const int32 = (description: string): JSONSchemaProps => ({ type: 'integer', format: 'int32', description });
const bool = (description: string): JSONSchemaProps => ({ type: 'boolean', description });
const stringMap = (description: string): JSONSchemaProps => ({ type: 'object', additionalProperties: { type: 'string', default: '' }, description });

/** Shared `apiVersion` property of every object root. */
export const apiVersionProperty: JSONSchemaProps = str('Versioned schema of this representation of an object (group/version).');
/** Shared `kind` property of every object root. */
export const kindProperty: JSONSchemaProps = str('REST resource this object represents, in CamelCase.');

/** metav1.Time: RFC 3339 timestamp with second precision, serialized as a string. */
export const TimeSchema = defineSchema(`${META}.Time`, {
  type: 'string',
  format: 'date-time',
  description: 'A timestamp in RFC 3339 form, second precision.',
});

/** metav1.MicroTime: RFC 3339 timestamp with microsecond precision. */
export const MicroTimeSchema = defineSchema(`${META}.MicroTime`, {
  type: 'string',
  format: 'date-time',
  description: 'A timestamp in RFC 3339 form, microsecond precision.',
});

/** metav1.FieldsV1: the set of fields a manager owns, in the structured-merge-diff JSON form. */
export const FieldsV1Schema = defineSchema(`${META}.FieldsV1`, {
  type: 'object',
  description: 'Set of field paths in the FieldsV1 JSON encoding (keys like "f:metadata", "k:{...}", "v:...").',
  'x-kubernetes-preserve-unknown-fields': true,
});

/** metav1.ManagedFieldsEntry. */
export const ManagedFieldsEntrySchema = defineSchema(`${META}.ManagedFieldsEntry`, {
  type: 'object',
  description: 'Records which fields a manager set, through which operation and API version.',
  properties: {
    apiVersion: str('API version of the object the field set refers to.'),
    fieldsType: str('Format of the fields field; only "FieldsV1" exists.'),
    fieldsV1: fieldOf(FieldsV1Schema, { description: 'The fields owned by this manager.' }),
    manager: str('Name of the workflow that manages these fields.'),
    operation: str('Apply or Update: the kind of request that set the fields.'),
    subresource: str('Subresource the request went to, empty for the main resource.'),
    time: fieldOf(TimeSchema, { description: 'When the fields were last changed by this entry.' }),
  },
});

/** metav1.OwnerReference (atomic map: owner references are replaced whole). */
export const OwnerReferenceSchema = defineSchema(`${META}.OwnerReference`, {
  type: 'object',
  description: 'Identifies an owning object; the owner and the dependent are in the same namespace or the owner is cluster-scoped.',
  required: ['apiVersion', 'kind', 'name', 'uid'],
  properties: {
    apiVersion: str('API version of the owner.'),
    blockOwnerDeletion: bool('When true and foreground deletion is used, the owner is not removed before this dependent.'),
    controller: bool('True when the owner is the managing controller.'),
    kind: str('Kind of the owner.'),
    name: str('Name of the owner.'),
    uid: str('UID of the owner.'),
  },
  'x-kubernetes-map-type': 'atomic',
});

/** metav1.ObjectMeta, with the merge markers Kubernetes declares on it. */
export const ObjectMetaSchema = defineSchema(`${META}.ObjectMeta`, {
  type: 'object',
  description: 'Metadata every persisted resource carries.',
  properties: {
    annotations: stringMap('Unstructured key/value data for tools; not used for selection.'),
    creationTimestamp: fieldOf(TimeSchema, { description: 'Server time at creation. Read-only.' }),
    deletionGracePeriodSeconds: int64('Seconds the object is given to terminate before removal. Read-only.'),
    deletionTimestamp: fieldOf(TimeSchema, { description: 'When deletion was requested; set by the server. Read-only.' }),
    finalizers: {
      type: 'array',
      description: 'Entries that must be removed before the object is deleted from storage.',
      items: { type: 'string', default: '' },
      'x-kubernetes-list-type': 'set',
      'x-kubernetes-patch-strategy': 'merge',
    },
    generateName: str('Prefix from which the server builds a unique name when name is empty.'),
    generation: int64('Sequence number of the desired state, bumped by the server. Read-only.'),
    labels: stringMap('Key/value pairs used to select and organize objects.'),
    managedFields: {
      type: 'array',
      description: 'Field ownership records kept by server-side apply.',
      items: ManagedFieldsEntrySchema,
      'x-kubernetes-list-type': 'atomic',
    },
    name: str('Unique name within a namespace; cannot be updated.'),
    namespace: str('Namespace the object lives in; empty for cluster-scoped objects.'),
    ownerReferences: {
      type: 'array',
      description: 'Objects this object depends on; garbage collection removes it when they are gone.',
      items: OwnerReferenceSchema,
      'x-kubernetes-list-map-keys': ['uid'],
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-patch-merge-key': 'uid',
      'x-kubernetes-patch-strategy': 'merge',
    },
    resourceVersion: str('Opaque version of this object for optimistic concurrency and watches. Read-only.'),
    selfLink: str('Deprecated and unset.'),
    uid: str('Unique id of this object in time and space; set by the server. Read-only.'),
  },
});

/** metav1.ListMeta. */
export const ListMetaSchema = defineSchema(`${META}.ListMeta`, {
  type: 'object',
  description: 'Metadata of a list of objects.',
  properties: {
    continue: str('Token to fetch the next chunk of a paginated list; empty on the last chunk.'),
    remainingItemCount: int64('Approximate number of items after this chunk, when known.'),
    resourceVersion: str('Store revision the list was read at.'),
    selfLink: str('Deprecated and unset.'),
  },
});

/** metav1.StatusCause. */
export const StatusCauseSchema = defineSchema(`${META}.StatusCause`, {
  type: 'object',
  description: 'One reason an operation failed.',
  properties: {
    field: str('Path of the field that caused the error, e.g. "spec.containers[0].name".'),
    message: str('Human-readable explanation.'),
    reason: str('Machine-readable cause, e.g. FieldValueRequired.'),
  },
});

/** metav1.StatusDetails. */
export const StatusDetailsSchema = defineSchema(`${META}.StatusDetails`, {
  type: 'object',
  description: 'Extra data about a Status, depending on its reason.',
  properties: {
    causes: { type: 'array', description: 'Individual causes of the error.', items: StatusCauseSchema, 'x-kubernetes-list-type': 'atomic' },
    group: str('Group of the resource the status is about.'),
    kind: str('Kind (or resource) the status is about.'),
    name: str('Name of the object the status is about.'),
    retryAfterSeconds: int32('Seconds the client should wait before retrying.'),
    uid: str('UID of the object the status is about.'),
  },
});

/** metav1.Status. */
export const StatusSchema = defineSchema(`${META}.Status`, {
  type: 'object',
  description: 'Result of a call that does not return an object.',
  properties: {
    apiVersion: apiVersionProperty,
    code: int32('HTTP status code of this result.'),
    details: fieldOf(StatusDetailsSchema, { description: 'Reason-specific details.' }),
    kind: kindProperty,
    message: str('Human-readable description of the result.'),
    metadata: fieldOf(ListMetaSchema, { description: 'Standard list metadata.' }),
    reason: str('Machine-readable reason, e.g. NotFound; empty when none applies.'),
    status: str('"Success" or "Failure".'),
  },
  'x-kubernetes-group-version-kind': [{ group: '', version: 'v1', kind: 'Status' }],
});

/** metav1.Preconditions. */
export const PreconditionsSchema = defineSchema(`${META}.Preconditions`, {
  type: 'object',
  description: 'Conditions that must hold before an operation runs.',
  properties: {
    resourceVersion: str('Required resourceVersion of the target.'),
    uid: str('Required UID of the target.'),
  },
});

/** metav1.DeleteOptions. */
export const DeleteOptionsSchema = defineSchema(`${META}.DeleteOptions`, {
  type: 'object',
  description: 'Options of a delete request.',
  properties: {
    apiVersion: apiVersionProperty,
    dryRun: {
      type: 'array',
      description: 'When present, changes are not persisted; "All" runs every stage.',
      items: { type: 'string', default: '' },
      'x-kubernetes-list-type': 'atomic',
    },
    gracePeriodSeconds: int64('Seconds before the object is deleted; zero means now.'),
    ignoreStoreReadErrorWithClusterBreakingPotential: bool(
      'Remove an object whose stored data cannot be decoded, without reading it: finalizers, preconditions and admission are skipped. Needs the unsafe-delete-ignore-read-errors verb; refused for an object that reads.',
    ),
    kind: kindProperty,
    orphanDependents: bool('Deprecated: use propagationPolicy. Whether dependents are orphaned.'),
    preconditions: fieldOf(PreconditionsSchema, { description: 'Must be fulfilled before deletion proceeds.' }),
    propagationPolicy: str('Garbage collection mode: Orphan, Background or Foreground.'),
  },
});

/** metav1.LabelSelectorRequirement. */
export const LabelSelectorRequirementSchema = defineSchema(`${META}.LabelSelectorRequirement`, {
  type: 'object',
  description: 'A key, an operator and values relating them.',
  required: ['key', 'operator'],
  properties: {
    key: { type: 'string', description: 'Label key the selector applies to.', 'x-kubernetes-patch-merge-key': 'key', 'x-kubernetes-patch-strategy': 'merge' },
    operator: str('In, NotIn, Exists or DoesNotExist.'),
    values: {
      type: 'array',
      description: 'Values for In/NotIn (non-empty) or Exists/DoesNotExist (empty).',
      items: { type: 'string', default: '' },
      'x-kubernetes-list-type': 'atomic',
    },
  },
});

/** metav1.LabelSelector (atomic: replaced whole by merges). */
export const LabelSelectorSchema = defineSchema(`${META}.LabelSelector`, {
  type: 'object',
  description: 'Label query; requirements are ANDed; empty selects everything, null nothing.',
  properties: {
    matchExpressions: { type: 'array', description: 'Requirements on labels.', items: LabelSelectorRequirementSchema, 'x-kubernetes-list-type': 'atomic' },
    matchLabels: stringMap('Shorthand for In requirements with one value each.'),
  },
  'x-kubernetes-map-type': 'atomic',
});

/** metav1.Condition: the standard condition of API objects' status. */
export const ConditionSchema = defineSchema(`${META}.Condition`, {
  type: 'object',
  description: 'One aspect of the current state of an object.',
  required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
  // Kubernetes' ValidateCondition checks the others (as validation.conditions.ts does here) and
  // accepts a condition without a message.
  'x-kapi-required-unchecked': ['message'],
  properties: {
    lastTransitionTime: fieldOf(TimeSchema, { description: 'When the status last changed.' }),
    message: { type: 'string', description: 'Human-readable details.' },
    observedGeneration: { type: 'integer', format: 'int64', description: 'The metadata.generation the condition was set for.' },
    reason: { type: 'string', description: 'CamelCase reason of the last transition.' },
    status: { type: 'string', description: 'True, False or Unknown.' },
    type: { type: 'string', description: 'Type of the condition, in CamelCase.' },
  },
});

/** metav1.Patch: the body of a PATCH request (any of the patch content types). */
export const PatchSchema = defineSchema(`${META}.Patch`, {
  type: 'object',
  description: 'A patch body: JSON patch, merge patch, strategic merge patch or apply configuration.',
});

/** runtime.RawExtension: an embedded object of any kind. */
export const RawExtensionSchema = defineSchema('io.k8s.apimachinery.pkg.runtime.RawExtension', {
  type: 'object',
  description: 'An embedded object of any kind.',
  'x-kubernetes-preserve-unknown-fields': true,
});

/** metav1.WatchEvent. */
export const WatchEventSchema = defineSchema(`${META}.WatchEvent`, {
  type: 'object',
  description: 'One event of a watch stream.',
  required: ['type', 'object'],
  properties: {
    object: fieldOf(RawExtensionSchema, { description: 'The object (ADDED, MODIFIED, DELETED), a Status (ERROR) or a bookmark.' }),
    type: str('ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.'),
  },
});

/** util/intstr.IntOrString as Kubernetes publishes it. */
export const IntOrStringSchema = defineSchema('io.k8s.apimachinery.pkg.util.intstr.IntOrString', {
  type: 'string',
  format: 'int-or-string',
  description: 'An integer or a string.',
});

/**
 * Builds a kind's root schema: apiVersion, kind, metadata (ObjectMeta) plus `properties`, and
 * the `x-kubernetes-group-version-kind` extension that clients (kubectl explain) look for.
 */
export function objectRootSchema(
  gvk: { group: string; version: string; kind: string },
  description: string,
  properties: Record<string, JSONSchemaProps>,
  extra: Omit<JSONSchemaProps, 'properties'> = {},
): JSONSchemaProps {
  return {
    type: 'object',
    description,
    ...extra,
    properties: {
      apiVersion: apiVersionProperty,
      kind: kindProperty,
      metadata: fieldOf(ObjectMetaSchema, { description: "Standard object's metadata." }),
      ...properties,
    },
    'x-kubernetes-group-version-kind': [{ group: gvk.group, version: gvk.version, kind: gvk.kind }],
  };
}
