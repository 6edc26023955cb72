/**
 * Schema of autoscaling/v1 HorizontalPodAutoscaler (k8s.io/api/autoscaling/v1 types.go).
 */
import { defineSchema, fieldOf, objectRootSchema, TimeSchema, type JSONSchemaProps } from '@app/apimachinery';
import { int32, str } from '../../core/core.schema.js';

const AS = 'io.k8s.api.autoscaling.v1';

/** autoscaling/v1 CrossVersionObjectReference. */
export const CrossVersionObjectReferenceSchema: JSONSchemaProps = defineSchema(`${AS}.CrossVersionObjectReference`, {
  type: 'object',
  description: 'Names the scaled resource.',
  required: ['kind', 'name'],
  properties: {
    apiVersion: str('API version of the referent.'),
    kind: str('Kind of the referent, e.g. Deployment.'),
    name: str('Name of the referent.'),
  },
  'x-kubernetes-map-type': 'atomic',
});

/** autoscaling/v1 HorizontalPodAutoscalerSpec. */
export const HorizontalPodAutoscalerSpecSchema: JSONSchemaProps = defineSchema(`${AS}.HorizontalPodAutoscalerSpec`, {
  type: 'object',
  description: 'The desired behaviour of the autoscaler.',
  required: ['scaleTargetRef', 'maxReplicas'],
  properties: {
    maxReplicas: int32('Upper limit of pods the autoscaler may set; at least minReplicas.'),
    minReplicas: { ...int32('Lower limit of pods the autoscaler may set; default 1.'), default: 1 },
    scaleTargetRef: fieldOf(CrossVersionObjectReferenceSchema, { description: 'The resource scaled; it must have a scale subresource.' }),
    targetCPUUtilizationPercentage: int32('Target average CPU use over all pods, in percent of requested CPU; default: a policy chosen by the controller.'),
  },
});

/** autoscaling/v1 HorizontalPodAutoscalerStatus. */
export const HorizontalPodAutoscalerStatusSchema: JSONSchemaProps = defineSchema(`${AS}.HorizontalPodAutoscalerStatus`, {
  type: 'object',
  description: 'The observed state of the autoscaler.',
  required: ['currentReplicas', 'desiredReplicas'],
  properties: {
    currentCPUUtilizationPercentage: int32('Current average CPU use over all pods, in percent of requested CPU.'),
    currentReplicas: int32('Pods managed by the autoscaler as last seen.'),
    desiredReplicas: int32('Pods the autoscaler last asked for.'),
    lastScaleTime: fieldOf(TimeSchema, { description: 'When the autoscaler last changed the pod count.' }),
    observedGeneration: { type: 'integer', format: 'int64', description: 'The most recent generation observed by the autoscaler.' },
  },
});

/** autoscaling/v1 HorizontalPodAutoscaler (namespaced). */
export const HorizontalPodAutoscalerSchema: JSONSchemaProps = defineSchema(
  `${AS}.HorizontalPodAutoscaler`,
  objectRootSchema({ group: 'autoscaling', version: 'v1', kind: 'HorizontalPodAutoscaler' }, 'Configuration of a horizontal pod autoscaler.', {
    spec: fieldOf(HorizontalPodAutoscalerSpecSchema, { description: 'Behaviour of the autoscaler.' }),
    status: fieldOf(HorizontalPodAutoscalerStatusSchema, { description: 'Current information about the autoscaler.' }),
  }),
);
