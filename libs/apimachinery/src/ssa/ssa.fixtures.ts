/**
 * Schemas shaped like Kubernetes' own (ConfigMap, a Deployment subset, a custom resource) for
 * the server-side apply unit tests. Test support only: not exported from the library.
 */
import { ObjectMetaSchema } from '../schema/meta.schemas.js';
import type { JSONSchemaProps } from '../schema/schema.types.js';

const str: JSONSchemaProps = { type: 'string' };
const int: JSONSchemaProps = { type: 'integer' };
const meta: JSONSchemaProps = { allOf: [ObjectMetaSchema], description: 'Standard object metadata.' };
const stringMap: JSONSchemaProps = { type: 'object', additionalProperties: { type: 'string' } };

/** core/v1 ConfigMap. */
export const configMapSchema: JSONSchemaProps = {
  type: 'object',
  properties: {
    apiVersion: str,
    kind: str,
    metadata: meta,
    data: stringMap,
    binaryData: { type: 'object', additionalProperties: { type: 'string', format: 'byte' } },
    immutable: { type: 'boolean' },
  },
};

/** core/v1 Container (subset) with its real merge markers. */
export const containerSchema: JSONSchemaProps = {
  type: 'object',
  required: ['name'],
  properties: {
    name: str,
    image: str,
    args: { type: 'array', items: str, 'x-kubernetes-list-type': 'atomic' },
    ports: {
      type: 'array',
      items: { type: 'object', properties: { containerPort: int, protocol: { type: 'string', default: 'TCP' }, name: str } },
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['containerPort', 'protocol'],
    },
    // No list-type: strategic merge markers only (patchMergeKey fallback, rule 6).
    env: {
      type: 'array',
      items: { type: 'object', properties: { name: str, value: str } },
      'x-kubernetes-patch-strategy': 'merge',
      'x-kubernetes-patch-merge-key': 'name',
    },
    resources: { type: 'object', properties: { limits: stringMap, requests: stringMap } },
  },
};

/** apps/v1 Deployment (subset). */
export const deploymentSchema: JSONSchemaProps = {
  type: 'object',
  properties: {
    apiVersion: str,
    kind: str,
    metadata: meta,
    spec: {
      type: 'object',
      properties: {
        replicas: int,
        paused: { type: 'boolean' },
        selector: { type: 'object', properties: { matchLabels: stringMap }, 'x-kubernetes-map-type': 'atomic' },
        template: {
          type: 'object',
          properties: {
            metadata: meta,
            spec: {
              type: 'object',
              properties: {
                containers: { type: 'array', items: containerSchema, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] },
                nodeSelector: { ...stringMap, 'x-kubernetes-map-type': 'atomic' },
                tolerations: { type: 'array', items: { type: 'object', properties: { key: str, value: str } }, 'x-kubernetes-list-type': 'atomic' },
              },
            },
          },
        },
      },
    },
    status: { type: 'object', properties: { replicas: int, readyReplicas: int } },
  },
};

/** A custom resource whose `spec.config` map type is given (rule 7 flips it). */
export function widgetSchema(configType: 'atomic' | 'granular'): JSONSchemaProps {
  return {
    type: 'object',
    properties: {
      apiVersion: str,
      kind: str,
      metadata: { type: 'object' },
      spec: {
        type: 'object',
        properties: {
          config: { type: 'object', properties: { a: int, b: int, c: int }, 'x-kubernetes-map-type': configType },
          tags: { type: 'array', items: str, 'x-kubernetes-list-type': 'set' },
          owners: { type: 'array', items: str },
          free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        },
      },
    },
  };
}

/** A custom resource without a structural schema: unstructured (rule 6). */
export const unstructuredSchema: JSONSchemaProps = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
