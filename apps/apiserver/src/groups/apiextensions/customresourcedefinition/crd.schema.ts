/**
 * Schema of apiextensions.k8s.io/v1 CustomResourceDefinition with Kubernetes' field names and
 * types (k8s.io/apiextensions-apiserver apiextensions/v1 types.go). A version's
 * `schema.openAPIV3Schema` is kept as given (a JSON schema is a tree of any depth); the CRD's
 * strategy checks it (crd.validation.ts).
 */
import { defineSchema, fieldOf, objectRootSchema, TimeSchema, type JSONSchemaProps } from '@app/apimachinery';
import { bool, int32, str } from '../../core/core.schema.js';

const AX = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1';

const strings = (description: string): JSONSchemaProps => ({ type: 'array', description, items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic' });

/** apiextensions/v1 JSONSchemaProps: any JSON schema; checked by the CRD's validation. */
export const JSONSchemaPropsSchema: JSONSchemaProps = defineSchema(`${AX}.JSONSchemaProps`, {
  type: 'object',
  description: 'An OpenAPI v3 schema (the structural subset Kubernetes accepts for custom resources).',
  'x-kubernetes-preserve-unknown-fields': true,
});

/** apiextensions/v1 CustomResourceDefinitionNames. */
export const CRDNamesSchema: JSONSchemaProps = defineSchema(`${AX}.CustomResourceDefinitionNames`, {
  type: 'object',
  description: 'The names a custom resource is served under.',
  required: ['plural', 'kind'],
  properties: {
    categories: strings('Groups of resources the resource belongs to (`kubectl get all`).'),
    kind: str('The CamelCase kind of the objects.'),
    listKind: str('The kind of lists of the objects; default `<kind>List`.'),
    plural: str('The lowercase plural name, the URL path segment.'),
    shortNames: strings('Short lowercase aliases kubectl accepts.'),
    singular: str('The lowercase singular name; default the lowercase kind.'),
  },
});

/** apiextensions/v1 CustomResourceColumnDefinition. */
export const CRDColumnSchema: JSONSchemaProps = defineSchema(`${AX}.CustomResourceColumnDefinition`, {
  type: 'object',
  description: 'A column of the Table output of the custom resource.',
  required: ['name', 'type', 'jsonPath'],
  properties: {
    description: str('Human-readable description of the column.'),
    format: str('An OpenAPI format of the column (`name`, `date`, ...).'),
    jsonPath: str('A simple JSON path to the value, evaluated on each object.'),
    name: str('The column heading.'),
    priority: int32('0 shows the column by default; higher only with `-o wide`.'),
    type: str('integer, number, string, boolean or date.'),
  },
});

/** apiextensions/v1 CustomResourceSubresourceScale. */
export const CRDScaleSchema: JSONSchemaProps = defineSchema(`${AX}.CustomResourceSubresourceScale`, {
  type: 'object',
  description: 'Where the scale subresource finds the replica counts and the selector.',
  required: ['specReplicasPath', 'statusReplicasPath'],
  properties: {
    labelSelectorPath: str('JSON path under .spec or .status to the string form of the label selector.'),
    specReplicasPath: str('JSON path under .spec to the desired replica count.'),
    statusReplicasPath: str('JSON path under .status to the observed replica count.'),
  },
});

/** apiextensions/v1 CustomResourceSubresources. */
export const CRDSubresourcesSchema: JSONSchemaProps = defineSchema(`${AX}.CustomResourceSubresources`, {
  type: 'object',
  description: 'The subresources a custom resource version serves.',
  properties: {
    scale: fieldOf(CRDScaleSchema, { description: 'Serves /scale (autoscaling/v1 Scale).' }),
    status: {
      type: 'object',
      description: 'Serves /status: the main resource then ignores status, and /status everything else.',
      'x-kubernetes-preserve-unknown-fields': true,
    },
  },
});

/** apiextensions/v1 CustomResourceValidation. */
export const CRDValidationSchema: JSONSchemaProps = defineSchema(`${AX}.CustomResourceValidation`, {
  type: 'object',
  description: 'The schema of a custom resource version.',
  properties: {
    openAPIV3Schema: fieldOf(JSONSchemaPropsSchema, { description: 'The OpenAPI v3 schema objects are validated, pruned and defaulted with.' }),
  },
});

/** apiextensions/v1 SelectableField. */
export const CRDSelectableFieldSchema: JSONSchemaProps = defineSchema(`${AX}.SelectableField`, {
  type: 'object',
  description: 'A field usable in field selectors.',
  required: ['jsonPath'],
  properties: { jsonPath: str('Simple JSON path to a string, integer or boolean field.') },
});

/** apiextensions/v1 CustomResourceDefinitionVersion. */
export const CRDVersionSchema: JSONSchemaProps = defineSchema(`${AX}.CustomResourceDefinitionVersion`, {
  type: 'object',
  description: 'One version of the custom resource.',
  required: ['name', 'served', 'storage'],
  properties: {
    additionalPrinterColumns: { type: 'array', description: 'Columns of `kubectl get`.', items: CRDColumnSchema, 'x-kubernetes-list-type': 'atomic' },
    deprecated: bool('Requests to this version get a deprecation warning.'),
    deprecationWarning: str('The warning returned instead of the default one.'),
    name: str('The version name, e.g. v1 or v1beta1.'),
    schema: fieldOf(CRDValidationSchema, { description: 'The schema of the version.' }),
    selectableFields: { type: 'array', description: 'Fields usable in field selectors.', items: CRDSelectableFieldSchema, 'x-kubernetes-list-type': 'atomic' },
    served: bool('Whether the version is served.'),
    storage: bool('Whether objects are stored at this version; exactly one version has it.'),
    subresources: fieldOf(CRDSubresourcesSchema, { description: 'The subresources of the version.' }),
  },
});

/** apiextensions/v1 ServiceReference (conversion webhooks). */
export const CRDServiceReferenceSchema: JSONSchemaProps = defineSchema(`${AX}.ServiceReference`, {
  type: 'object',
  description: 'A Service answering webhook calls.',
  required: ['namespace', 'name'],
  properties: {
    name: str('Name of the service.'),
    namespace: str('Namespace of the service.'),
    path: str('URL path of the calls.'),
    port: { ...int32('Port of the service; default 443.'), default: 443 },
  },
});

/** apiextensions/v1 CustomResourceConversion. */
export const CRDConversionSchema: JSONSchemaProps = defineSchema(`${AX}.CustomResourceConversion`, {
  type: 'object',
  description: 'How objects are converted between versions.',
  required: ['strategy'],
  properties: {
    strategy: str('None: only apiVersion changes. Webhook: the webhook converts.'),
    webhook: {
      type: 'object',
      description: 'The conversion webhook.',
      required: ['conversionReviewVersions'],
      properties: {
        clientConfig: {
          type: 'object',
          description: 'How to reach the webhook.',
          properties: {
            caBundle: { type: 'string', format: 'byte', description: 'PEM CA bundle verifying the webhook.' },
            service: fieldOf(CRDServiceReferenceSchema, { description: 'The webhook as a Service.' }),
            url: str('The webhook as a URL.'),
          },
        },
        conversionReviewVersions: strings('ConversionReview versions the webhook accepts.'),
      },
    },
  },
});

/** apiextensions/v1 CustomResourceDefinitionSpec. */
export const CRDSpecSchema: JSONSchemaProps = defineSchema(`${AX}.CustomResourceDefinitionSpec`, {
  type: 'object',
  description: 'The custom resource to serve.',
  required: ['group', 'names', 'scope', 'versions'],
  properties: {
    conversion: fieldOf(CRDConversionSchema, { description: 'How objects are converted between versions.' }),
    group: str('The API group of the resource (a DNS subdomain with at least one dot).'),
    names: fieldOf(CRDNamesSchema, { description: 'The names of the resource.' }),
    preserveUnknownFields: bool('Must be false in apiextensions.k8s.io/v1: unknown fields are pruned.'),
    scope: str('Namespaced or Cluster.'),
    versions: { type: 'array', description: 'The versions of the resource.', items: CRDVersionSchema, 'x-kubernetes-list-type': 'atomic' },
  },
});

/** apiextensions/v1 CustomResourceDefinitionCondition. */
export const CRDConditionSchema: JSONSchemaProps = defineSchema(`${AX}.CustomResourceDefinitionCondition`, {
  type: 'object',
  description: 'One condition of a CustomResourceDefinition.',
  required: ['type', 'status'],
  properties: {
    lastTransitionTime: fieldOf(TimeSchema, { description: 'When the condition last changed status.' }),
    message: str('Human-readable details.'),
    reason: str('CamelCase reason of the last transition.'),
    status: str('True, False or Unknown.'),
    type: str('Established, NamesAccepted, NonStructuralSchema, Terminating or KubernetesAPIApprovalPolicyConformant.'),
  },
});

/** apiextensions/v1 CustomResourceDefinitionStatus. */
export const CRDStatusSchema: JSONSchemaProps = defineSchema(`${AX}.CustomResourceDefinitionStatus`, {
  type: 'object',
  description: 'Observed state of the CustomResourceDefinition.',
  properties: {
    acceptedNames: fieldOf(CRDNamesSchema, { description: 'The names the resource is served under.' }),
    conditions: {
      type: 'array',
      description: 'Current state of the definition.',
      items: CRDConditionSchema,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
    },
    storedVersions: strings('Every version objects have been stored at; removed only by the user.'),
  },
});

/** apiextensions/v1 CustomResourceDefinition. */
export const CRDSchema: JSONSchemaProps = defineSchema(
  `${AX}.CustomResourceDefinition`,
  objectRootSchema(
    { group: 'apiextensions.k8s.io', version: 'v1', kind: 'CustomResourceDefinition' },
    'A resource served by this server from its definition: `<plural>.<group>`.',
    {
      spec: fieldOf(CRDSpecSchema, { description: 'The resource to serve.' }),
      status: fieldOf(CRDStatusSchema, { description: 'Observed state of the definition.' }),
    },
    { required: ['spec'] },
  ),
);
