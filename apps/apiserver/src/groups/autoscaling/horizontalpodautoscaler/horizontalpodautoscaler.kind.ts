/**
 * autoscaling/v1 HorizontalPodAutoscaler (namespaced, +status), with kubectl's columns NAME
 * REFERENCE TARGETS MINPODS MAXPODS REPLICAS AGE (printHorizontalPodAutoscaler).
 */
import { statusSubresource, type KindDeclaration } from '@app/registry';
import { asMap } from '../../core/core.helpers.js';
import { HorizontalPodAutoscalerSchema } from './horizontalpodautoscaler.schema.js';
import { horizontalPodAutoscalerStrategy, hpaTargets } from './horizontalpodautoscaler.strategy.js';

/** The HorizontalPodAutoscaler declaration. */
export const horizontalPodAutoscalerKind: KindDeclaration = {
  group: 'autoscaling',
  version: 'v1',
  kind: 'HorizontalPodAutoscaler',
  plural: 'horizontalpodautoscalers',
  singular: 'horizontalpodautoscaler',
  shortNames: ['hpa'],
  categories: ['all'],
  namespaced: true,
  schema: HorizontalPodAutoscalerSchema,
  protobufMessage: 'k8s.io.api.autoscaling.v1.HorizontalPodAutoscaler',
  strategy: horizontalPodAutoscalerStrategy,
  subresources: { status: statusSubresource() },
  tableColumns: [
    {
      name: 'Reference',
      type: 'string',
      priority: 0,
      description: 'The scaled resource',
      cell: (o) => {
        const ref = asMap(asMap(o.spec).scaleTargetRef);
        return `${String(ref.kind ?? '')}/${String(ref.name ?? '')}`;
      },
    },
    { name: 'Targets', type: 'string', priority: 0, description: 'Current and target metric values', cell: hpaTargets },
    {
      name: 'MinPods',
      type: 'string',
      priority: 0,
      description: 'Lower limit of pods',
      cell: (o) => {
        const v = asMap(o.spec).minReplicas;
        return typeof v === 'number' ? String(v) : '<unset>';
      },
    },
    { name: 'MaxPods', type: 'integer', priority: 0, description: 'Upper limit of pods', cell: (o) => asMap(o.spec).maxReplicas ?? 0 },
    { name: 'Replicas', type: 'integer', priority: 0, description: 'Current number of pods', cell: (o) => asMap(o.status).currentReplicas ?? 0 },
  ],
};
