/**
 * Schema of apps/v1 Deployment: spec and status derived from the protobuf messages with the core
 * and apps overlays (the pod template is core's PodTemplateSpec, so it gets a Pod's defaults).
 */
import { defineSchema, fieldOf, objectRootSchema, protoSchema, type JSONSchemaProps, type SchemaOverlays } from '@app/apimachinery';
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

/** Descriptions of the autoscaling/v1 Scale messages. */
const SCALE_OVERLAYS: SchemaOverlays = {
  'k8s.io.api.autoscaling.v1.ScaleSpec': {
    description: 'The desired replica count.',
    fields: { replicas: { description: 'Desired number of instances of the scaled object.' } },
  },
  'k8s.io.api.autoscaling.v1.ScaleStatus': {
    description: 'The observed replica count.',
    required: ['replicas'],
    fields: {
      replicas: { description: 'Observed number of instances of the scaled object.' },
      selector: { description: 'Label query over the pods counted in replicas, in the label selector string syntax.' },
    },
  },
};

/** autoscaling/v1 Scale, the body of a `scale` subresource. */
export const ScaleSchema: JSONSchemaProps = defineSchema(
  'io.k8s.api.autoscaling.v1.Scale',
  objectRootSchema({ group: 'autoscaling', version: 'v1', kind: 'Scale' }, 'The replica count of a scalable resource.', {
    spec: fieldOf(protoSchema('k8s.io.api.autoscaling.v1.ScaleSpec', SCALE_OVERLAYS), { description: 'The desired replica count.' }),
    status: fieldOf(protoSchema('k8s.io.api.autoscaling.v1.ScaleStatus', SCALE_OVERLAYS), {
      description: 'The current replica count and pod selector; read-only.',
    }),
  }),
);
