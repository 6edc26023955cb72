/**
 * Schema of core/v1 PersistentVolume: spec and status derived from the protobuf messages with
 * the core overlays (schema.proto.ts).
 */
import { defineSchema, fieldOf, objectRootSchema, protoSchema, type JSONSchemaProps } from '@app/apimachinery';
import { CORE_OVERLAYS } from '../core.overlays.js';

/** core/v1 PersistentVolumeSpec. */
export const PersistentVolumeSpecSchema: JSONSchemaProps = protoSchema('k8s.io.api.core.v1.PersistentVolumeSpec', CORE_OVERLAYS);

/** core/v1 PersistentVolume (cluster-scoped). */
export const PersistentVolumeSchema: JSONSchemaProps = defineSchema(
  'io.k8s.api.core.v1.PersistentVolume',
  objectRootSchema(
    { group: '', version: 'v1', kind: 'PersistentVolume' },
    'A piece of storage provisioned by an administrator or a provisioner, which claims bind to.',
    {
      spec: fieldOf(PersistentVolumeSpecSchema, { description: 'What the volume is: capacity, access modes, source.' }),
      status: fieldOf(protoSchema('k8s.io.api.core.v1.PersistentVolumeStatus', CORE_OVERLAYS), { description: 'Current state of the volume; read-only.' }),
    },
  ),
);
