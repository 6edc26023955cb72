/**
 * Schema of apps/v1 DaemonSet: spec and status derived from the protobuf messages with the core
 * and apps overlays (the pod template is core's PodTemplateSpec, so it gets a Pod's defaults).
 */
import { defineSchema, fieldOf, objectRootSchema, protoSchema, type JSONSchemaProps } from '@app/apimachinery';
import { CORE_OVERLAYS } from '../../core/core.overlays.js';
import { APPS_OVERLAYS } from '../apps.overlays.js';

const message = (name: string): JSONSchemaProps => protoSchema(`k8s.io.api.apps.v1.${name}`, CORE_OVERLAYS, APPS_OVERLAYS);

/** apps/v1 DaemonSet (namespaced). */
export const DaemonSetSchema: JSONSchemaProps = defineSchema(
  'io.k8s.api.apps.v1.DaemonSet',
  objectRootSchema({ group: 'apps', version: 'v1', kind: 'DaemonSet' }, 'One pod of a template on each eligible node.', {
    spec: fieldOf(message('DaemonSetSpec'), { description: 'The desired pod and how to update it.' }),
    status: fieldOf(message('DaemonSetStatus'), { description: 'What the controller last observed; read-only.' }),
  }),
);
