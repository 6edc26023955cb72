/**
 * autoscaling HorizontalPodAutoscaler at v2 (preferred, stored) and v1 (namespaced, +status),
 * with kubectl's columns NAME
 * REFERENCE TARGETS MINPODS MAXPODS REPLICAS AGE (printHorizontalPodAutoscaler).
 */
import { statusSubresource, type KindDeclaration } from '@app/registry';
import { asMap } from '../../core/core.helpers.js';
import { HorizontalPodAutoscalerSchema } from './horizontalpodautoscaler.schema.js';
import { horizontalPodAutoscalerStrategy, hpaTargets } from './horizontalpodautoscaler.strategy.js';
import { HPA_CONVERSION } from './horizontalpodautoscaler.conversion.js';
import { HorizontalPodAutoscalerV2Schema } from './horizontalpodautoscaler.v2.schema.js';
import { horizontalPodAutoscalerV2Strategy, hpaTargetsV2 } from './horizontalpodautoscaler.v2.strategy.js';

/** The autoscaling/v1 HorizontalPodAutoscaler declaration (stored at v2). */
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
  conversion: HPA_CONVERSION,
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

/** The autoscaling/v2 HorizontalPodAutoscaler declaration (preferred and stored), v1's columns. */
export const horizontalPodAutoscalerV2Kind: KindDeclaration = {
  ...horizontalPodAutoscalerKind,
  version: 'v2',
  schema: HorizontalPodAutoscalerV2Schema,
  protobufMessage: 'k8s.io.api.autoscaling.v2.HorizontalPodAutoscaler',
  strategy: horizontalPodAutoscalerV2Strategy,
  tableColumns: horizontalPodAutoscalerKind.tableColumns!.map((c) => (c.name === 'Targets' ? { ...c, cell: hpaTargetsV2 } : c)),
};
