/**
 * Schema of autoscaling/v2 HorizontalPodAutoscaler (k8s.io/api/autoscaling/v2 types.go, the
 * fields of Kubernetes 1.32), registered under its definition names.
 */
import { defineSchema, fieldOf, LabelSelectorSchema, objectRootSchema, TimeSchema, type JSONSchemaProps } from '@app/apimachinery';
import { int32, str } from '../../core/core.schema.js';

const AS = 'io.k8s.api.autoscaling.v2';
const quantity = (description: string): JSONSchemaProps => ({ 'x-kubernetes-int-or-string': true, description: `${description} (a Quantity).` });
const obj = (name: string, description: string, properties: Record<string, JSONSchemaProps>, required?: string[]): JSONSchemaProps =>
  defineSchema(`${AS}.${name}`, { type: 'object', description, properties, ...(required ? { required } : {}) });
const list = (description: string, items: JSONSchemaProps, mapKeys?: string[]): JSONSchemaProps => ({
  type: 'array',
  description,
  items,
  ...(mapKeys ? { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': mapKeys } : { 'x-kubernetes-list-type': 'atomic' }),
});

const ref = obj(
  'CrossVersionObjectReference',
  'Names the referred resource.',
  { apiVersion: str('API version of the referent.'), kind: str('Kind of the referent.'), name: str('Name of the referent.') },
  ['kind', 'name'],
);
const identifier = obj(
  'MetricIdentifier',
  'Names a metric.',
  { name: str('The metric name.'), selector: fieldOf(LabelSelectorSchema, { description: 'Selects the metric series; nil: the metric name alone.' }) },
  ['name'],
);
const target = obj(
  'MetricTarget',
  'The target value, average value or average utilization of a metric.',
  {
    averageUtilization: int32('Target average over all pods, in percent of the requested resource (Resource metrics).'),
    averageValue: quantity('Target average over all pods'),
    type: str('Utilization, Value or AverageValue.'),
    value: quantity('Target value of the metric'),
  },
  ['type'],
);
const current = obj('MetricValueStatus', 'The current value of a metric.', {
  averageUtilization: int32('Current average over all pods, in percent of the requested resource.'),
  averageValue: quantity('Current average over all pods'),
  value: quantity('Current value'),
});
const sources = {
  containerResource: obj(
    'ContainerResourceMetricSource',
    'A resource metric of one container of each pod.',
    { container: str('The container.'), name: str('The resource, e.g. cpu.'), target: fieldOf(target, { description: 'The target.' }) },
    ['name', 'target', 'container'],
  ),
  external: obj(
    'ExternalMetricSource',
    'A metric not tied to any cluster object.',
    { metric: fieldOf(identifier, { description: 'The metric.' }), target: fieldOf(target, { description: 'The target.' }) },
    ['metric', 'target'],
  ),
  object: obj(
    'ObjectMetricSource',
    'A metric of one cluster object.',
    {
      describedObject: fieldOf(ref, { description: 'The object.' }),
      metric: fieldOf(identifier, { description: 'The metric.' }),
      target: fieldOf(target, { description: 'The target.' }),
    },
    ['describedObject', 'target', 'metric'],
  ),
  pods: obj(
    'PodsMetricSource',
    'A metric averaged over the scaled pods.',
    { metric: fieldOf(identifier, { description: 'The metric.' }), target: fieldOf(target, { description: 'The target.' }) },
    ['metric', 'target'],
  ),
  resource: obj(
    'ResourceMetricSource',
    'A resource metric (cpu, memory) of the scaled pods.',
    { name: str('The resource, e.g. cpu.'), target: fieldOf(target, { description: 'The target.' }) },
    ['name', 'target'],
  ),
};
const statuses = {
  containerResource: obj(
    'ContainerResourceMetricStatus',
    'Current value of a container resource metric.',
    { container: str('The container.'), current: fieldOf(current, { description: 'The current value.' }), name: str('The resource.') },
    ['name', 'current', 'container'],
  ),
  external: obj(
    'ExternalMetricStatus',
    'Current value of an external metric.',
    { current: fieldOf(current, { description: 'The current value.' }), metric: fieldOf(identifier, { description: 'The metric.' }) },
    ['metric', 'current'],
  ),
  object: obj(
    'ObjectMetricStatus',
    'Current value of an object metric.',
    {
      current: fieldOf(current, { description: 'The current value.' }),
      describedObject: fieldOf(ref, { description: 'The object.' }),
      metric: fieldOf(identifier, { description: 'The metric.' }),
    },
    ['metric', 'current', 'describedObject'],
  ),
  pods: obj(
    'PodsMetricStatus',
    'Current value of a pods metric.',
    { current: fieldOf(current, { description: 'The current value.' }), metric: fieldOf(identifier, { description: 'The metric.' }) },
    ['metric', 'current'],
  ),
  resource: obj(
    'ResourceMetricStatus',
    'Current value of a resource metric.',
    { current: fieldOf(current, { description: 'The current value.' }), name: str('The resource.') },
    ['name', 'current'],
  ),
};
const metricSpec = obj(
  'MetricSpec',
  'One metric to scale on: the field named by type is set.',
  {
    containerResource: fieldOf(sources.containerResource, { description: 'For type ContainerResource.' }),
    external: fieldOf(sources.external, { description: 'For type External.' }),
    object: fieldOf(sources.object, { description: 'For type Object.' }),
    pods: fieldOf(sources.pods, { description: 'For type Pods.' }),
    resource: fieldOf(sources.resource, { description: 'For type Resource.' }),
    type: str('ContainerResource, External, Object, Pods or Resource.'),
  },
  ['type'],
);
const metricStatus = obj(
  'MetricStatus',
  'The last read state of one metric.',
  {
    containerResource: fieldOf(statuses.containerResource, { description: 'For type ContainerResource.' }),
    external: fieldOf(statuses.external, { description: 'For type External.' }),
    object: fieldOf(statuses.object, { description: 'For type Object.' }),
    pods: fieldOf(statuses.pods, { description: 'For type Pods.' }),
    resource: fieldOf(statuses.resource, { description: 'For type Resource.' }),
    type: str('ContainerResource, External, Object, Pods or Resource.'),
  },
  ['type'],
);
const policy = obj(
  'HPAScalingPolicy',
  'One scaling policy: at most value pods or percent per period.',
  { periodSeconds: int32('Window the policy holds over, 1-1800 seconds.'), type: str('Pods or Percent.'), value: int32('Amount of change allowed; positive.') },
  ['type', 'value', 'periodSeconds'],
);
const rules = obj('HPAScalingRules', 'Scaling behaviour in one direction.', {
  policies: list('Policies; at least one when selectPolicy is not Disabled.', policy),
  selectPolicy: str('Max, Min or Disabled; default Max.'),
  stabilizationWindowSeconds: int32('Past recommendations considered, 0-3600 seconds.'),
});
const behavior = obj('HorizontalPodAutoscalerBehavior', 'Scaling behaviour up and down.', {
  scaleDown: fieldOf(rules, { description: 'Scaling down.' }),
  scaleUp: fieldOf(rules, { description: 'Scaling up.' }),
});
const condition = obj(
  'HorizontalPodAutoscalerCondition',
  'A condition of the autoscaler.',
  {
    lastTransitionTime: fieldOf(TimeSchema, { description: 'When the condition last changed status.' }),
    message: str('Human-readable details.'),
    reason: str('CamelCase reason.'),
    status: str('True, False or Unknown.'),
    type: str('ScalingActive, AbleToScale or ScalingLimited.'),
  },
  ['type', 'status'],
);

/** autoscaling/v2 HorizontalPodAutoscalerSpec. */
export const HorizontalPodAutoscalerSpecV2Schema = obj(
  'HorizontalPodAutoscalerSpec',
  'The desired behaviour of the autoscaler.',
  {
    behavior: fieldOf(behavior, { description: 'Scaling behaviour; nil: the defaults.' }),
    maxReplicas: int32('Upper limit of pods; at least minReplicas.'),
    metrics: list('Metrics to scale on; the largest recommendation wins.', metricSpec),
    minReplicas: { ...int32('Lower limit of pods; default 1.'), default: 1 },
    scaleTargetRef: fieldOf(ref, { description: 'The resource scaled.' }),
  },
  ['scaleTargetRef', 'maxReplicas'],
);

/** autoscaling/v2 HorizontalPodAutoscalerStatus. */
export const HorizontalPodAutoscalerStatusV2Schema = obj('HorizontalPodAutoscalerStatus', 'The observed state of the autoscaler.', {
  conditions: list('Conditions of the autoscaler.', condition, ['type']),
  currentMetrics: list('The last read state of the metrics.', metricStatus),
  currentReplicas: int32('Pods managed by the autoscaler as last seen.'),
  desiredReplicas: int32('Pods the autoscaler last asked for.'),
  lastScaleTime: fieldOf(TimeSchema, { description: 'When the autoscaler last changed the pod count.' }),
  observedGeneration: { type: 'integer', format: 'int64', description: 'The most recent generation observed.' },
});

/** autoscaling/v2 HorizontalPodAutoscaler (namespaced). */
export const HorizontalPodAutoscalerV2Schema: JSONSchemaProps = defineSchema(
  `${AS}.HorizontalPodAutoscaler`,
  objectRootSchema({ group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler' }, 'Configuration of a horizontal pod autoscaler.', {
    spec: fieldOf(HorizontalPodAutoscalerSpecV2Schema, { description: 'Behaviour of the autoscaler.' }),
    status: fieldOf(HorizontalPodAutoscalerStatusV2Schema, { description: 'Current information about the autoscaler.' }),
  }),
);
