/**
 * Schemas of the core/v1 kinds we serve (Namespace, ConfigMap, Secret, ServiceAccount, Event),
 * with Kubernetes' field names, types and merge extensions and short descriptions of our own.
 * Each root carries apiVersion, kind, metadata and x-kubernetes-group-version-kind; shared
 * types are registered under their Kubernetes definition names (io.k8s.api.core.v1.*) so the
 * OpenAPI documents match kube-apiserver's.
 */
import { defineSchema, fieldOf, MicroTimeSchema, objectRootSchema, TimeSchema, type JSONSchemaProps } from '@app/apimachinery';

const CORE = 'io.k8s.api.core.v1';
const gvk = (kind: string) => ({ group: '', version: 'v1', kind });

const str = (description: string): JSONSchemaProps => ({ type: 'string', description });
const int32 = (description: string): JSONSchemaProps => ({ type: 'integer', format: 'int32', description });
const bool = (description: string): JSONSchemaProps => ({ type: 'boolean', description });

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

/** core/v1 ConfigMap. */
export const ConfigMapSchema = defineSchema(
  `${CORE}.ConfigMap`,
  objectRootSchema(gvk('ConfigMap'), 'Non-confidential configuration data for pods to consume.', {
    binaryData: {
      type: 'object',
      description: 'Binary values (base64 in JSON); keys must not also appear in data.',
      additionalProperties: { type: 'string', format: 'byte' },
    },
    data: {
      type: 'object',
      description: 'UTF-8 configuration values; keys are alphanumerics, "-", "_" or ".".',
      additionalProperties: { type: 'string', default: '' },
    },
    immutable: bool('When true, data and binaryData cannot be changed (only metadata can).'),
  }),
);

/** core/v1 Secret. */
export const SecretSchema = defineSchema(
  `${CORE}.Secret`,
  objectRootSchema(gvk('Secret'), 'Confidential data such as passwords, tokens or keys.', {
    data: {
      type: 'object',
      description: 'Secret values, base64-encoded in JSON; keys are alphanumerics, "-", "_" or ".".',
      additionalProperties: { type: 'string', format: 'byte' },
    },
    immutable: bool('When true, data cannot be changed (only metadata can).'),
    stringData: {
      type: 'object',
      description: 'Write-only plain-text values merged into data on write; wins over data on the same key. Never returned.',
      additionalProperties: { type: 'string', default: '' },
    },
    type: str('Kind of secret, used to check its content (e.g. Opaque, kubernetes.io/tls).'),
  }),
);

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

/** core/v1 EventSource. */
export const EventSourceSchema = defineSchema(`${CORE}.EventSource`, {
  type: 'object',
  description: 'The component that reported an event.',
  properties: {
    component: str('Component that produced the event.'),
    host: str('Node the event came from.'),
  },
});

/** core/v1 EventSeries. */
export const EventSeriesSchema = defineSchema(`${CORE}.EventSeries`, {
  type: 'object',
  description: 'Data about a series of repeated events.',
  properties: {
    count: int32('Occurrences in the series so far.'),
    lastObservedTime: fieldOf(MicroTimeSchema, { description: 'Time of the last occurrence.' }),
  },
});

/** core/v1 Event. */
export const EventSchema = defineSchema(
  `${CORE}.Event`,
  objectRootSchema(
    gvk('Event'),
    'A report of something that happened in the cluster.',
    {
      action: str('What was done, or failed, about the regarding object.'),
      count: int32('How many times the event occurred.'),
      eventTime: fieldOf(MicroTimeSchema, { description: 'When the event was first observed.' }),
      firstTimestamp: fieldOf(TimeSchema, { description: 'When the event was first recorded.' }),
      involvedObject: fieldOf(ObjectReferenceSchema, { description: 'The object this event is about.', default: {} }),
      lastTimestamp: fieldOf(TimeSchema, { description: 'When the most recent occurrence was recorded.' }),
      message: str('Human-readable description of the event.'),
      reason: str('Short machine-readable reason for the transition, in CamelCase.'),
      related: fieldOf(ObjectReferenceSchema, { description: 'A second object involved, if any.' }),
      reportingComponent: { type: 'string', default: '', description: 'Controller that emitted the event, e.g. kubernetes.io/kubelet.' },
      reportingInstance: { type: 'string', default: '', description: 'Instance of the controller, e.g. the kubelet host name.' },
      series: fieldOf(EventSeriesSchema, { description: 'Data about the series this event belongs to, if any.' }),
      source: fieldOf(EventSourceSchema, { description: 'Component reporting the event.', default: {} }),
      type: str('Normal or Warning (others may be added).'),
    },
    { required: ['metadata', 'involvedObject'] },
  ),
);

/** Every core/v1 root schema defined here, by kind. */
export const coreV1Schemas: Readonly<Record<string, JSONSchemaProps>> = {
  Namespace: NamespaceSchema,
  ConfigMap: ConfigMapSchema,
  Secret: SecretSchema,
  ServiceAccount: ServiceAccountSchema,
  Event: EventSchema,
};
