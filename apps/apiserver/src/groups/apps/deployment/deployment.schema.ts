/**
 * Schema of apps/v1 Deployment: spec and status derived from the protobuf messages with the core
 * and apps overlays (the pod template is core's PodTemplateSpec, so it gets a Pod's defaults).
 */
import { defineSchema, fieldOf, objectRootSchema, protoSchema, type JSONSchemaProps } from '@app/apimachinery';
import { CORE_OVERLAYS } from '../../core/core.overlays.js';
import { APPS_OVERLAYS } from '../apps.overlays.js';

const message = (name: string): JSONSchemaProps => protoSchema(`k8s.io.api.apps.v1.${name}`, CORE_OVERLAYS, APPS_OVERLAYS);

/** apps/v1 Deployment (namespaced). */
export const DeploymentSchema: JSONSchemaProps = defineSchema(
  'io.k8s.api.apps.v1.Deployment',
  objectRootSchema({ group: 'apps', version: 'v1', kind: 'Deployment' }, 'Declarative updates of a set of identical pods (through ReplicaSets).', {
    spec: fieldOf(message('DeploymentSpec'), { description: 'The desired pods and how to roll out changes to them.' }),
    status: fieldOf(message('DeploymentStatus'), { description: 'What the controller last observed; read-only.' }),
  }),
);
