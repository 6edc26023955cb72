/**
 * Schema of core/v1 PersistentVolumeClaim: spec and status derived from the protobuf messages
 * with the core overlays (schema.proto.ts).
 */
import { defineSchema, fieldOf, objectRootSchema, protoSchema, type JSONSchemaProps } from '@app/apimachinery';
import { CORE_OVERLAYS } from '../core.overlays.js';

/** core/v1 PersistentVolumeClaim. */
export const PersistentVolumeClaimSchema: JSONSchemaProps = defineSchema(
  'io.k8s.api.core.v1.PersistentVolumeClaim',
  objectRootSchema({ group: '', version: 'v1', kind: 'PersistentVolumeClaim' }, "A user's request for, and claim to, a persistent volume.", {
    spec: fieldOf(protoSchema('k8s.io.api.core.v1.PersistentVolumeClaimSpec', CORE_OVERLAYS), { description: 'What the claim asks for.' }),
    status: fieldOf(protoSchema('k8s.io.api.core.v1.PersistentVolumeClaimStatus', CORE_OVERLAYS), { description: 'Current state of the claim; read-only.' }),
  }),
);
