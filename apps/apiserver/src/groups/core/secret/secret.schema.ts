/**
 * Schema of core/v1 Secret (k8s.io/api/core/v1 types.go).
 */
import { defineSchema, objectRootSchema } from '@app/apimachinery';
import { bool, CORE, gvk, str } from '../core.schema.js';

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
