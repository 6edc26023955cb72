/**
 * ReplicaSet validation (pkg/apis/apps/validation ValidateReplicaSet, ValidateReplicaSetUpdate,
 * ValidateReplicaSetStatus and the apps/v1 strategy's immutable selector), with Kubernetes'
 * messages and field paths. The template is validated only when present (kube validates its zero
 * value, so an absent one fails there on its labels and containers but is accepted here). Pure.
 */
import type { FieldError, KubeObject } from '@app/apimachinery';
import { asMap } from '../../core/core.helpers.js';
import { immutableSelector, nonNegative, validateReplicaCounts, validateSelectorAndTemplate } from '../workload.validation.js';

type Obj = Record<string, unknown>;

/** ValidateReplicaSetSpec at `spec` (defaults applied). */
export function validateReplicaSetSpec(spec: Obj): FieldError[] {
  return [...nonNegative(spec.replicas, 'spec.replicas'), ...nonNegative(spec.minReadySeconds, 'spec.minReadySeconds'), ...validateSelectorAndTemplate(spec)];
}

/** ValidateReplicaSet without ObjectMeta (the store validates metadata). */
export function validateReplicaSet(rs: KubeObject): FieldError[] {
  return validateReplicaSetSpec(asMap(rs.spec));
}

/** ValidateReplicaSetUpdate plus the apps/v1 rule that spec.selector never changes. */
export function validateReplicaSetUpdate(rs: KubeObject, old: KubeObject): FieldError[] {
  return [...validateReplicaSet(rs), ...immutableSelector(rs.spec, old.spec)];
}

/** ValidateReplicaSetStatus at `status`. */
export function validateReplicaSetStatus(status: Obj): FieldError[] {
  return validateReplicaCounts(status, ['replicas', 'fullyLabeledReplicas', 'readyReplicas', 'availableReplicas', 'terminatingReplicas', 'observedGeneration']);
}

/** ValidateReplicaSetStatusUpdate. */
export function validateReplicaSetStatusUpdate(rs: KubeObject): FieldError[] {
  return validateReplicaSetStatus(asMap(rs.status));
}
