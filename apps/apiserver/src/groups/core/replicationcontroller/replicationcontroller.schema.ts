/**
 * Schema of core/v1 ReplicationController: spec and status derived from the protobuf messages
 * with the core overlays (the pod template is a PodTemplateSpec, so it gets a Pod's defaults).
 */
import { defineSchema, fieldOf, objectRootSchema, protoSchema, type JSONSchemaProps } from '@app/apimachinery';
import { CORE_OVERLAYS } from '../core.overlays.js';

const message = (name: string): JSONSchemaProps => protoSchema(`k8s.io.api.core.v1.${name}`, CORE_OVERLAYS);

/** core/v1 ReplicationController (namespaced). */
export const ReplicationControllerSchema: JSONSchemaProps = defineSchema(
  'io.k8s.api.core.v1.ReplicationController',
  objectRootSchema(
    { group: '', version: 'v1', kind: 'ReplicationController' },
    'Keeps a number of identical pods, selected by an equality-based label selector, in existence (the predecessor of ReplicaSet).',
    {
      spec: fieldOf(message('ReplicationControllerSpec'), { description: 'The desired pods.' }),
      status: fieldOf(message('ReplicationControllerStatus'), { description: 'What the controller last observed; read-only.' }),
    },
  ),
);
