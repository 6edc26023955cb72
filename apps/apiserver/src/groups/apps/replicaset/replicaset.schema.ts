/**
 * Schema of apps/v1 ReplicaSet: spec and status derived from the protobuf messages with the core
 * and apps overlays (the pod template is core's PodTemplateSpec, so it gets a Pod's defaults).
 */
import { defineSchema, fieldOf, objectRootSchema, protoSchema, type JSONSchemaProps } from '@app/apimachinery';
import { CORE_OVERLAYS } from '../../core/core.overlays.js';
import { APPS_OVERLAYS } from '../apps.overlays.js';

const message = (name: string): JSONSchemaProps => protoSchema(`k8s.io.api.apps.v1.${name}`, CORE_OVERLAYS, APPS_OVERLAYS);

/** apps/v1 ReplicaSet (namespaced). */
export const ReplicaSetSchema: JSONSchemaProps = defineSchema(
  'io.k8s.api.apps.v1.ReplicaSet',
  objectRootSchema({ group: 'apps', version: 'v1', kind: 'ReplicaSet' }, 'Keeps a number of identical pods, selected by labels, in existence.', {
    spec: fieldOf(message('ReplicaSetSpec'), { description: 'The desired pods.' }),
    status: fieldOf(message('ReplicaSetStatus'), { description: 'What the controller last observed; read-only.' }),
  }),
);
