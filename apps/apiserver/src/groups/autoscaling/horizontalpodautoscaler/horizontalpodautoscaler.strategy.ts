/**
 * HorizontalPodAutoscaler rules (pkg/apis/autoscaling/validation, on the v1 fields; the CPU
 * target is reported at the path of the internal form it converts to, as kube-apiserver does),
 * and its strategy (pkg/registry/autoscaling/horizontalpodautoscaler): status starts empty.
 */
import type { FieldError, KubeObject } from '@app/apimachinery';
import type { Strategy } from '@app/registry';
import { asMap } from '../../core/core.helpers.js';

/** path.IsValidPathSegmentName's messages for a reference name or kind. */
function pathSegmentErrors(v: string): string[] {
  if (v === '.' || v === '..') return [`may not be '${v}'`];
  const out: string[] = [];
  for (const c of ['/', '%']) if (v.includes(c)) out.push(`may not contain '${c}'`);
  return out;
}

/** ValidateCrossVersionObjectReference. */
function validateReference(ref: Record<string, unknown>, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const f of ['kind', 'name']) {
    const v = typeof ref[f] === 'string' ? (ref[f] as string) : '';
    if (!v) errs.push({ type: 'FieldValueRequired', field: `${path}.${f}`, detail: '' });
    else for (const m of pathSegmentErrors(v)) errs.push({ type: 'FieldValueInvalid', field: `${path}.${f}`, value: v, detail: m });
  }
  return errs;
}

/** ValidateHorizontalPodAutoscaler's spec rules. */
export function validateHorizontalPodAutoscaler(hpa: KubeObject): FieldError[] {
  const spec = asMap(hpa.spec);
  const errs: FieldError[] = [];
  const min = typeof spec.minReplicas === 'number' ? spec.minReplicas : undefined;
  const max = typeof spec.maxReplicas === 'number' ? spec.maxReplicas : 0;
  if (min !== undefined && min < 1)
    errs.push({ type: 'FieldValueInvalid', field: 'spec.minReplicas', value: min, detail: 'must be greater than or equal to 1' });
  if (max < 1) errs.push({ type: 'FieldValueInvalid', field: 'spec.maxReplicas', value: max, detail: 'must be greater than 0' });
  if (min !== undefined && max < min)
    errs.push({ type: 'FieldValueInvalid', field: 'spec.maxReplicas', value: max, detail: 'must be greater than or equal to `minReplicas`' });
  errs.push(...validateReference(asMap(spec.scaleTargetRef), 'spec.scaleTargetRef'));
  const cpu = spec.targetCPUUtilizationPercentage;
  if (typeof cpu === 'number' && cpu < 1) {
    errs.push({ type: 'FieldValueInvalid', field: 'spec.metrics[0].resource.target.averageUtilization', value: cpu, detail: 'must be greater than 0' });
  }
  return errs;
}

/** The HorizontalPodAutoscaler strategy. */
export const horizontalPodAutoscalerStrategy: Strategy = {
  prepareForCreate(hpa) {
    // The empty internal status, as v1 encodes it (the replica counts are not omitempty).
    hpa.status = { currentReplicas: 0, desiredReplicas: 0 };
  },
  validate: validateHorizontalPodAutoscaler,
  validateUpdate: (hpa) => validateHorizontalPodAutoscaler(hpa),
};

/** kubectl's TARGETS cell for the v1 CPU target: `cpu: <current>/<target>%`, `<none>` without one. */
export function hpaTargets(hpa: KubeObject): string {
  const target = asMap(hpa.spec).targetCPUUtilizationPercentage;
  if (typeof target !== 'number') return '<none>';
  const current = asMap(hpa.status).currentCPUUtilizationPercentage;
  return `cpu: ${typeof current === 'number' ? `${current}%` : '<unknown>'}/${target}%`;
}
