/**
 * Lease behaviour: Kubernetes' ValidateLeaseSpec (pkg/apis/coordination/validation).
 */
import type { FieldError, KubeObject } from '@app/apimachinery';
import type { Strategy } from '@app/registry';

/** The spec of a Lease as a plain object ({} when absent). */
export function leaseSpec(o: KubeObject): Record<string, unknown> {
  const s = o.spec;
  return s && typeof s === 'object' && !Array.isArray(s) ? (s as Record<string, unknown>) : {};
}

/** ValidateLeaseSpec: durations > 0, transitions >= 0, strategy and preferredHolder need each other. */
export function validateLease(o: KubeObject): FieldError[] {
  const s = leaseSpec(o);
  const errs: FieldError[] = [];
  const d = s.leaseDurationSeconds;
  if (d !== undefined && d !== null && (typeof d !== 'number' || d <= 0)) {
    errs.push({ type: 'FieldValueInvalid', field: 'spec.leaseDurationSeconds', value: d, detail: 'must be greater than 0' });
  }
  const t = s.leaseTransitions;
  if (t !== undefined && t !== null && (typeof t !== 'number' || t < 0)) {
    errs.push({ type: 'FieldValueInvalid', field: 'spec.leaseTransitions', value: t, detail: 'must be greater than or equal to 0' });
  }
  if (s.preferredHolder && !s.strategy) {
    errs.push({ type: 'FieldValueForbidden', field: 'spec.preferredHolder', detail: 'may only be specified if `strategy` is defined' });
  }
  return errs;
}

/** The Lease strategy. */
export const leaseStrategy: Strategy = {
  validate: validateLease,
  validateUpdate: validateLease,
};
