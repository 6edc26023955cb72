/** Schema of core/v1 Pod: spec and status derived from the protobuf messages with the core overlays. */
import { defineSchema, fieldOf, objectRootSchema, protoSchema, type JSONSchemaProps } from '@app/apimachinery';
import { CORE_OVERLAYS } from '../core.overlays.js';

/** core/v1 Pod. */
export const PodSchema: JSONSchemaProps = defineSchema(
  'io.k8s.api.core.v1.Pod',
  objectRootSchema({ group: '', version: 'v1', kind: 'Pod' }, 'A group of containers that share volumes and a network identity, scheduled together.', {
    spec: fieldOf(protoSchema('k8s.io.api.core.v1.PodSpec', CORE_OVERLAYS), { description: 'What the pod runs.' }),
    status: fieldOf(protoSchema('k8s.io.api.core.v1.PodStatus', CORE_OVERLAYS), { description: 'Current state of the pod; read-only.' }),
  }),
);
