/**
 * PodDisruptionBudget validation (pkg/apis/policy/validation ValidatePodDisruptionBudget and
 * ValidatePodDisruptionBudgetStatusUpdate), with Kubernetes' messages and field paths. Pure.
 */
import { validateConditions, validateLabelSelector, type FieldError, type KubeObject } from '@app/apimachinery';
import { asMap } from '../../core/core.helpers.js';
import { nonNegative, notMoreThan100Percent, positiveIntOrPercent } from '../../apps/workload.validation.js';
import { UNHEALTHY_POD_EVICTION_POLICIES } from './pdb.schema.js';

const set = (v: unknown): boolean => v !== undefined && v !== null;

/** Whether a selector holds a value that is not a label value (kept on update, as kube allows). */
function hasInvalidLabelValues(selector: unknown): boolean {
  return validateLabelSelector(selector, 's').some((e) => e.field.includes('.values'));
}

/** ValidatePodDisruptionBudgetSpec. */
export function validatePodDisruptionBudgetSpec(spec: Record<string, unknown>, allowInvalidLabelValues = false): FieldError[] {
  const errs: FieldError[] = [];
  if (set(spec.minAvailable) && set(spec.maxUnavailable)) {
    errs.push({ type: 'FieldValueInvalid', field: 'spec', value: spec, detail: 'minAvailable and maxUnavailable cannot be both set' });
  }
  for (const f of ['minAvailable', 'maxUnavailable'] as const) {
    if (!set(spec[f])) continue;
    errs.push(...positiveIntOrPercent(spec[f], `spec.${f}`), ...notMoreThan100Percent(spec[f], `spec.${f}`));
  }
  errs.push(...validateLabelSelector(spec.selector, 'spec.selector', { allowInvalidLabelValueInSelector: allowInvalidLabelValues }));
  const policy = spec.unhealthyPodEvictionPolicy;
  if (set(policy) && !UNHEALTHY_POD_EVICTION_POLICIES.includes(String(policy))) {
    errs.push({
      type: 'FieldValueNotSupported',
      field: 'spec.unhealthyPodEvictionPolicy',
      value: policy,
      detail: `supported values: ${UNHEALTHY_POD_EVICTION_POLICIES.map((p) => `"${p}"`).join(', ')}`,
    });
  }
  return errs;
}

/** Create: the spec. */
export function validatePodDisruptionBudget(pdb: KubeObject): FieldError[] {
  return validatePodDisruptionBudgetSpec(asMap(pdb.spec));
}

/** Update: the spec (mutable), with the old selector's invalid label values still accepted. */
export function validatePodDisruptionBudgetUpdate(pdb: KubeObject, old: KubeObject): FieldError[] {
  return validatePodDisruptionBudgetSpec(asMap(pdb.spec), hasInvalidLabelValues(asMap(old.spec).selector));
}

/** ValidatePodDisruptionBudgetStatusUpdate (policy/v1): the conditions and non-negative counters. */
export function validatePodDisruptionBudgetStatus(pdb: KubeObject): FieldError[] {
  const status = asMap(pdb.status);
  const errs = validateConditions(status.conditions, 'status.conditions');
  for (const f of ['disruptionsAllowed', 'currentHealthy', 'desiredHealthy', 'expectedPods']) errs.push(...nonNegative(status[f], `status.${f}`));
  return errs;
}
