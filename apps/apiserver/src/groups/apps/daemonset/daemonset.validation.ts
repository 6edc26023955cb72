/**
 * DaemonSet validation (pkg/apis/apps/validation ValidateDaemonSet, ValidateDaemonSetUpdate,
 * ValidateDaemonSetStatusUpdate and the apps/v1 strategy's immutable selector), with
 * Kubernetes' messages and field paths. The pod template goes through the Pod's spec validation
 * at `spec.template.spec`. Pure.
 */
import {
  goLabelSelector,
  goMap,
  labelSelectorFromStruct,
  validateAnnotations,
  validateLabels,
  validateLabelSelector,
  type FieldError,
  type KubeObject,
  type LabelSelectorStruct,
} from '@app/apimachinery';
import { asMap } from '../../core/core.helpers.js';
import { validatePodSpec } from '../../core/pod/pod.validation.js';
import {
  collisionCountNotDecremented,
  immutableSelector,
  intOrPercentValue,
  nonNegative,
  notMoreThan100Percent,
  positiveIntOrPercent,
} from '../workload.validation.js';

type Obj = Record<string, unknown>;

/** ValidateRollingUpdateDaemonSet: exactly one of maxUnavailable and maxSurge is non-zero. */
function validateRollingUpdate(ru: Obj, path: string): FieldError[] {
  const mu = ru.maxUnavailable;
  const ms = ru.maxSurge;
  const errs = [
    ...positiveIntOrPercent(mu, `${path}.maxUnavailable`),
    ...positiveIntOrPercent(ms, `${path}.maxSurge`),
    ...notMoreThan100Percent(mu, `${path}.maxUnavailable`),
    ...notMoreThan100Percent(ms, `${path}.maxSurge`),
  ];
  const hasUnavailable = intOrPercentValue(mu) !== 0;
  const hasSurge = intOrPercentValue(ms) !== 0;
  if (hasUnavailable && hasSurge) {
    errs.push({ type: 'FieldValueInvalid', field: `${path}.maxSurge`, value: ms, detail: 'may not be set when maxUnavailable is non-zero' });
  } else if (!hasUnavailable && !hasSurge) {
    errs.push({ type: 'FieldValueRequired', field: `${path}.maxUnavailable`, detail: 'cannot be 0 when maxSurge is 0' });
  }
  return errs;
}

/** ValidateDaemonSetUpdateStrategy. */
function validateUpdateStrategy(us: Obj, path: string): FieldError[] {
  switch (us.type) {
    case 'OnDelete':
      return [];
    case 'RollingUpdate':
      return us.rollingUpdate === undefined || us.rollingUpdate === null
        ? [{ type: 'FieldValueRequired', field: `${path}.rollingUpdate`, detail: '' }]
        : validateRollingUpdate(asMap(us.rollingUpdate), `${path}.rollingUpdate`);
    default:
      return [{ type: 'FieldValueNotSupported', field: path, value: us, detail: 'supported values: "RollingUpdate", "OnDelete"' }];
  }
}

/** ValidateDaemonSetSpec at `spec` (defaults applied). */
export function validateDaemonSetSpec(spec: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const sel = spec.selector;
  if (sel !== undefined && sel !== null) errs.push(...validateLabelSelector(sel, 'spec.selector'));
  const t = asMap(spec.template);
  const meta = asMap(t.metadata);
  const podSpec = asMap(t.spec);
  try {
    if (sel !== undefined && sel !== null && !labelSelectorFromStruct(sel as LabelSelectorStruct).matches(asMap(meta.labels) as Record<string, string>)) {
      errs.push({
        type: 'FieldValueInvalid',
        field: 'spec.template.metadata.labels',
        value: goMap(meta.labels),
        detail: '`selector` does not match template `labels`',
      });
    }
  } catch {
    // An unconvertible selector is reported by validateLabelSelector.
  }
  if (sel !== undefined && sel !== null) {
    const s = asMap(sel);
    const n = Object.keys(asMap(s.matchLabels)).length + (Array.isArray(s.matchExpressions) ? s.matchExpressions.length : 0);
    if (n === 0)
      errs.push({ type: 'FieldValueInvalid', field: 'spec.selector', value: goLabelSelector(sel), detail: 'empty selector is invalid for daemonset' });
  }
  // ValidatePodTemplateSpec.
  errs.push(...validateLabels(meta.labels, 'spec.template.metadata.labels'), ...validateAnnotations(meta.annotations, 'spec.template.metadata.annotations'));
  errs.push(...validatePodSpec(podSpec, 'spec.template.spec'));
  if (podSpec.restartPolicy !== 'Always') {
    errs.push({
      type: 'FieldValueNotSupported',
      field: 'spec.template.spec.restartPolicy',
      value: podSpec.restartPolicy ?? '',
      detail: 'supported values: "Always"',
    });
  }
  if (podSpec.activeDeadlineSeconds !== undefined && podSpec.activeDeadlineSeconds !== null) {
    errs.push({
      type: 'FieldValueForbidden',
      field: 'spec.template.spec.activeDeadlineSeconds',
      detail: 'activeDeadlineSeconds in DaemonSet is not Supported',
    });
  }
  errs.push(...nonNegative(spec.minReadySeconds, 'spec.minReadySeconds'));
  errs.push(...validateUpdateStrategy(asMap(spec.updateStrategy), 'spec.updateStrategy'));
  errs.push(...nonNegative(spec.revisionHistoryLimit, 'spec.revisionHistoryLimit'));
  return errs;
}

/** ValidateDaemonSet without ObjectMeta (the store validates metadata). */
export function validateDaemonSet(ds: KubeObject): FieldError[] {
  return validateDaemonSetSpec(asMap(ds.spec));
}

/** ValidateDaemonSetUpdate plus the apps/v1 rule that spec.selector never changes. */
export function validateDaemonSetUpdate(ds: KubeObject, old: KubeObject): FieldError[] {
  return [...immutableSelector(ds.spec, old.spec), ...validateDaemonSet(ds)];
}

/** validateDaemonSetStatus at `status`: every count not negative. */
export function validateDaemonSetStatus(status: Obj): FieldError[] {
  const errs: FieldError[] = [];
  for (const f of [
    'currentNumberScheduled',
    'numberMisscheduled',
    'desiredNumberScheduled',
    'numberReady',
    'observedGeneration',
    'updatedNumberScheduled',
    'numberAvailable',
    'numberUnavailable',
    'collisionCount',
  ]) {
    errs.push(...nonNegative(status[f], `status.${f}`));
  }
  return errs;
}

/** ValidateDaemonSetStatusUpdate: a valid status whose collisionCount never goes down. */
export function validateDaemonSetStatusUpdate(ds: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateDaemonSetStatus(asMap(ds.status));
  errs.push(...collisionCountNotDecremented(ds.status, old.status));
  return errs;
}
