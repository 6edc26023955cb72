/**
 * Schema of apiregistration.k8s.io/v1 APIService (k8s.io/kube-aggregator apiregistration/v1).
 */
import { defineSchema, fieldOf, objectRootSchema, TimeSchema, type JSONSchemaProps } from '@app/apimachinery';
import { bool, int32, str } from '../../core/core.schema.js';

const AR = 'io.k8s.kube-aggregator.pkg.apis.apiregistration.v1';

/** apiregistration/v1 ServiceReference. */
export const ServiceReferenceSchema: JSONSchemaProps = defineSchema(`${AR}.ServiceReference`, {
  type: 'object',
  description: 'The Service that serves an aggregated API.',
  properties: {
    name: str('Name of the service.'),
    namespace: str('Namespace of the service.'),
    port: { ...int32('HTTPS port of the service, 1-65535; default 443.'), default: 443 },
  },
});

/** apiregistration/v1 APIServiceSpec. */
export const APIServiceSpecSchema: JSONSchemaProps = defineSchema(`${AR}.APIServiceSpec`, {
  type: 'object',
  description: 'Where a group-version is served and how it is ordered in discovery.',
  required: ['groupPriorityMinimum', 'versionPriority'],
  properties: {
    caBundle: { type: 'string', format: 'byte', description: 'PEM CA bundle verifying the server; system roots when absent.' },
    group: str('The API group name.'),
    groupPriorityMinimum: int32("Priority of the group (higher first); 18000 for the platform's own groups, about 2000 for others."),
    insecureSkipTLSVerify: bool('Skips TLS verification of the server; discouraged.'),
    service: fieldOf(ServiceReferenceSchema, { description: 'The service answering for this group-version; null: served by this server.' }),
    version: str('The API version, e.g. v1.'),
    versionPriority: int32('Order of the version within its group (higher first); ties broken by Kubernetes version order.'),
  },
});

/** apiregistration/v1 APIServiceCondition. */
export const APIServiceConditionSchema: JSONSchemaProps = defineSchema(`${AR}.APIServiceCondition`, {
  type: 'object',
  description: 'One condition of an APIService.',
  required: ['type', 'status'],
  properties: {
    lastTransitionTime: fieldOf(TimeSchema, { description: 'When the condition last changed status.' }),
    message: str('Human-readable details.'),
    reason: str('CamelCase reason of the last transition.'),
    status: str('True, False or Unknown.'),
    type: str('The condition type, e.g. Available.'),
  },
});

/** apiregistration/v1 APIServiceStatus. */
export const APIServiceStatusSchema: JSONSchemaProps = defineSchema(`${AR}.APIServiceStatus`, {
  type: 'object',
  description: 'Observed state of the APIService.',
  properties: {
    conditions: {
      type: 'array',
      description: 'Current service state.',
      items: APIServiceConditionSchema,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
      'x-kubernetes-patch-strategy': 'merge',
      'x-kubernetes-patch-merge-key': 'type',
    },
  },
});

/** apiregistration/v1 APIService (cluster-scoped). */
export const APIServiceSchema: JSONSchemaProps = defineSchema(
  `${AR}.APIService`,
  objectRootSchema(
    { group: 'apiregistration.k8s.io', version: 'v1', kind: 'APIService' },
    'A server for a particular group-version; named <version>.<group>.',
    {
      spec: fieldOf(APIServiceSpecSchema, { description: 'Where and how the group-version is served.' }),
      status: fieldOf(APIServiceStatusSchema, { description: 'Whether the group-version is available.' }),
    },
  ),
);
