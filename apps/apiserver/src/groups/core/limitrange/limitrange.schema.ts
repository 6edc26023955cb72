/** Schema of core/v1 LimitRange: spec derived from the protobuf messages with the core overlays. */
import { defineSchema, fieldOf, objectRootSchema, protoSchema, type JSONSchemaProps } from '@app/apimachinery';
import { CORE_OVERLAYS } from '../core.overlays.js';

/** core/v1 LimitRange. */
export const LimitRangeSchema: JSONSchemaProps = defineSchema(
  'io.k8s.api.core.v1.LimitRange',
  objectRootSchema({ group: '', version: 'v1', kind: 'LimitRange' }, 'Resource limits and defaults per kind of object in one namespace.', {
    spec: fieldOf(protoSchema('k8s.io.api.core.v1.LimitRangeSpec', CORE_OVERLAYS), { description: 'The limits enforced.' }),
  }),
);
