/**
 * Schema of core/v1 ConfigMap (k8s.io/api/core/v1 types.go).
 */
import { defineSchema, objectRootSchema } from '@app/apimachinery';
import { bool, CORE, gvk } from '../core.schema.js';

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
