/**
 * Deployment validation (pkg/apis/apps/validation ValidateDeployment, ValidateDeploymentUpdate,
 * ValidateDeploymentStatus and the apps/v1 strategy's immutable selector), with Kubernetes'
 * messages and field paths. The pod template goes through the Pod's spec validation at
 * `spec.template.spec`. A missing spec.selector or spec.template is reported by the schema
 * (DeploymentSpec requires both), so not again here. Pure: no storage, no clock.
 */
import type { FieldError, KubeObject } from '@app/apimachinery';
import { asMap } from '../../core/core.helpers.js';
import {
  collisionCountNotDecremented,
  immutableSelector,
  intOrPercentValue,
  isInt,
  nonNegative,
  notMoreThan100Percent,
  positiveIntOrPercent,
  validateSelectorAndTemplate,
} from '../workload.validation.js';

type Obj = Record<string, unknown>;

/** ValidateRollingUpdateDeployment. */
function validateRollingUpdate(ru: Obj, path: string): FieldError[] {
  const errs = [...positiveIntOrPercent(ru.maxUnavailable, `${path}.maxUnavailable`), ...positiveIntOrPercent(ru.maxSurge, `${path}.maxSurge`)];
  if (intOrPercentValue(ru.maxUnavailable) === 0 && intOrPercentValue(ru.maxSurge) === 0) {
    errs.push({ type: 'FieldValueInvalid', field: `${path}.maxUnavailable`, value: ru.maxUnavailable ?? 0, detail: 'may not be 0 when `maxSurge` is 0' });
  }
  // IsNotMoreThan100Percent: only maxUnavailable is bounded; a surge may exceed 100%.
  errs.push(...notMoreThan100Percent(ru.maxUnavailable, `${path}.maxUnavailable`));
  return errs;
}

/** ValidateDeploymentStrategy. */
function validateStrategy(strategy: Obj, path: string): FieldError[] {
  switch (strategy.type) {
    case 'Recreate':
      return strategy.rollingUpdate === undefined || strategy.rollingUpdate === null
        ? []
        : [{ type: 'FieldValueForbidden', field: `${path}.rollingUpdate`, detail: "may not be specified when strategy `type` is 'Recreate'" }];
    case 'RollingUpdate':
      return strategy.rollingUpdate === undefined || strategy.rollingUpdate === null
        ? [{ type: 'FieldValueRequired', field: `${path}.rollingUpdate`, detail: 'this should be defaulted and never be nil' }]
        : validateRollingUpdate(asMap(strategy.rollingUpdate), `${path}.rollingUpdate`);
    default:
      return [{ type: 'FieldValueNotSupported', field: path, value: strategy, detail: 'supported values: "Recreate", "RollingUpdate"' }];
  }
}

/** ValidateDeploymentSpec at `spec` (defaults applied). */
export function validateDeploymentSpec(spec: Obj): FieldError[] {
  const errs = [...nonNegative(spec.replicas, 'spec.replicas'), ...validateSelectorAndTemplate(spec)];
  errs.push(...validateStrategy(asMap(spec.strategy), 'spec.strategy'));
  errs.push(...nonNegative(spec.minReadySeconds, 'spec.minReadySeconds'));
  errs.push(...nonNegative(spec.revisionHistoryLimit, 'spec.revisionHistoryLimit'));
  const pds = spec.progressDeadlineSeconds;
  if (isInt(pds)) {
    errs.push(...nonNegative(pds, 'spec.progressDeadlineSeconds'));
    const minReady = isInt(spec.minReadySeconds) ? spec.minReadySeconds : 0;
    if (pds <= minReady)
      errs.push({ type: 'FieldValueInvalid', field: 'spec.progressDeadlineSeconds', value: pds, detail: 'must be greater than minReadySeconds' });
  }
  return errs;
}

/** ValidateDeployment without ObjectMeta (the store validates metadata). */
export function validateDeployment(d: KubeObject): FieldError[] {
  return validateDeploymentSpec(asMap(d.spec));
}

/** ValidateDeploymentUpdate plus the apps/v1 rule that spec.selector never changes. */
export function validateDeploymentUpdate(d: KubeObject, old: KubeObject): FieldError[] {
  return [...validateDeployment(d), ...immutableSelector(d.spec, old.spec)];
}

/** ValidateDeploymentStatus at `status`. */
export function validateDeploymentStatus(status: Obj): FieldError[] {
  const errs: FieldError[] = [];
  for (const f of ['observedGeneration', 'replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas', 'unavailableReplicas', 'collisionCount']) {
    errs.push(...nonNegative(status[f], `status.${f}`));
  }
  const n = (f: string): number => (isInt(status[f]) ? status[f] : 0);
  const gtReplicas = 'cannot be greater than status.replicas';
  for (const f of ['updatedReplicas', 'readyReplicas', 'availableReplicas']) {
    if (n(f) > n('replicas')) errs.push({ type: 'FieldValueInvalid', field: `status.${f}`, value: n(f), detail: gtReplicas });
  }
  if (n('availableReplicas') > n('readyReplicas')) {
    errs.push({ type: 'FieldValueInvalid', field: 'status.availableReplicas', value: n('availableReplicas'), detail: 'cannot be greater than readyReplicas' });
  }
  return errs;
}

/** ValidateDeploymentStatusUpdate: a valid status whose collisionCount never goes down. */
export function validateDeploymentStatusUpdate(d: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateDeploymentStatus(asMap(d.status));
  errs.push(...collisionCountNotDecremented(d.status, old.status));
  return errs;
}
