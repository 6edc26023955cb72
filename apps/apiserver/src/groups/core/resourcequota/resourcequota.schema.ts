/** Schema of core/v1 ResourceQuota: spec and status derived from the protobuf messages with the core overlays. */
import { defineSchema, fieldOf, objectRootSchema, protoSchema, type JSONSchemaProps } from '@app/apimachinery';
import { CORE_OVERLAYS } from '../core.overlays.js';

/** core/v1 ResourceQuota. */
export const ResourceQuotaSchema: JSONSchemaProps = defineSchema(
  'io.k8s.api.core.v1.ResourceQuota',
  objectRootSchema({ group: '', version: 'v1', kind: 'ResourceQuota' }, 'Aggregate limits on what the objects of one namespace may consume.', {
    spec: fieldOf(protoSchema('k8s.io.api.core.v1.ResourceQuotaSpec', CORE_OVERLAYS), { description: 'The limits to enforce.' }),
    status: fieldOf(protoSchema('k8s.io.api.core.v1.ResourceQuotaStatus', CORE_OVERLAYS), {
      description: 'The limits enforced and the usage observed; written by the quota controller and admission.',
    }),
  }),
);
