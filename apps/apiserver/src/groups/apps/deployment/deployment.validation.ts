/**
 * Deployment validation (pkg/apis/apps/validation ValidateDeployment, ValidateDeploymentUpdate,
 * ValidateDeploymentStatus and the apps/v1 strategy's immutable selector), with Kubernetes'
 * messages and field paths. The pod template goes through the Pod's spec validation at
 * `spec.template.spec`. A missing spec.selector or spec.template is reported by the schema
 * (DeploymentSpec requires both), so not again here. Pure: no storage, no clock.
 */
import { isDeepStrictEqual } from 'node:util';
import {
  labelSelectorFromStruct,
  validateAnnotations,
  validateLabels,
  validateLabelSelector,
  type FieldError,
  type KubeObject,
  type LabelSelector,
  type LabelSelectorStruct,
} from '@app/apimachinery';
import { asMap } from '../../core/core.helpers.js';
import { validatePodSpec } from '../../core/pod/pod.validation.js';

type Obj = Record<string, unknown>;

const NON_NEGATIVE = 'must be greater than or equal to 0';
// validation.IsValidPercent.
const PERCENT = /^[0-9]+%$/;
const PERCENT_MSG = "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

/** ValidateNonnegativeField for an optional integer. */
function nonNegative(v: unknown, field: string): FieldError[] {
  return isInt(v) && v < 0 ? [{ type: 'FieldValueInvalid', field, value: v, detail: NON_NEGATIVE }] : [];
}

/** getIntOrPercentValue: the number of a valid percentage, an integer as is, else 0 (IntValue of a non-number string). */
function intOrPercentValue(v: unknown): number {
  if (typeof v === 'string') return PERCENT.test(v) ? Number(v.slice(0, -1)) : /^-?\d+$/.test(v) ? Number(v) : 0;
  return isInt(v) ? v : 0;
}

/** ValidatePositiveIntOrPercent: a string must be a percentage, a number not negative. */
function positiveIntOrPercent(v: unknown, field: string): FieldError[] {
  if (typeof v === 'string') return PERCENT.test(v) ? [] : [{ type: 'FieldValueInvalid', field, value: v, detail: PERCENT_MSG }];
  return nonNegative(v, field);
}

/** ValidateRollingUpdateDeployment. */
function validateRollingUpdate(ru: Obj, path: string): FieldError[] {
  const errs = [...positiveIntOrPercent(ru.maxUnavailable, `${path}.maxUnavailable`), ...positiveIntOrPercent(ru.maxSurge, `${path}.maxSurge`)];
  if (intOrPercentValue(ru.maxUnavailable) === 0 && intOrPercentValue(ru.maxSurge) === 0) {
    errs.push({ type: 'FieldValueInvalid', field: `${path}.maxUnavailable`, value: ru.maxUnavailable ?? 0, detail: 'may not be 0 when `maxSurge` is 0' });
  }
  // IsNotMoreThan100Percent: only maxUnavailable is bounded; a surge may exceed 100%.
  const mu = ru.maxUnavailable;
  if (typeof mu === 'string' && PERCENT.test(mu) && intOrPercentValue(mu) > 100) {
    errs.push({ type: 'FieldValueInvalid', field: `${path}.maxUnavailable`, value: mu, detail: 'must not be greater than 100%' });
  }
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

/**
 * ValidatePodTemplateSpecForReplicaSet: the template's labels match the selector (unless it
 * selects everything), its metadata and spec are valid, it restarts Always and sets no
 * activeDeadlineSeconds.
 */
function validateTemplate(template: unknown, selector: LabelSelector, path: string): FieldError[] {
  if (template === undefined || template === null) return [];
  const t = asMap(template);
  const meta = asMap(t.metadata);
  const spec = asMap(t.spec);
  const errs: FieldError[] = [];
  if (!selector.isEmpty() && !selector.matches(asMap(meta.labels) as Record<string, string>)) {
    errs.push({ type: 'FieldValueInvalid', field: `${path}.metadata.labels`, value: meta.labels ?? {}, detail: '`selector` does not match template `labels`' });
  }
  errs.push(...validateLabels(meta.labels, `${path}.metadata.labels`), ...validateAnnotations(meta.annotations, `${path}.metadata.annotations`));
  errs.push(...validatePodSpec(spec, `${path}.spec`));
  if (spec.restartPolicy !== 'Always') {
    errs.push({ type: 'FieldValueNotSupported', field: `${path}.spec.restartPolicy`, value: spec.restartPolicy ?? '', detail: 'supported values: "Always"' });
  }
  if (spec.activeDeadlineSeconds !== undefined && spec.activeDeadlineSeconds !== null) {
    errs.push({
      type: 'FieldValueInvalid',
      field: `${path}.spec.activeDeadlineSeconds`,
      value: spec.activeDeadlineSeconds,
      detail: 'activeDeadlineSeconds in ReplicaSet is not Supported',
    });
  }
  return errs;
}

/** ValidateDeploymentSpec at `spec` (defaults applied). */
export function validateDeploymentSpec(spec: Obj): FieldError[] {
  const errs = nonNegative(spec.replicas, 'spec.replicas');
  const sel = spec.selector;
  if (sel !== undefined && sel !== null) {
    errs.push(...validateLabelSelector(sel, 'spec.selector'));
    const s = asMap(sel);
    const n = Object.keys(asMap(s.matchLabels)).length + (Array.isArray(s.matchExpressions) ? s.matchExpressions.length : 0);
    if (n === 0) errs.push({ type: 'FieldValueInvalid', field: 'spec.selector', value: sel, detail: 'empty selector is invalid for deployment' });
  }
  let selector: LabelSelector | undefined;
  try {
    selector = labelSelectorFromStruct((sel ?? undefined) as LabelSelectorStruct | undefined);
  } catch {
    errs.push({ type: 'FieldValueInvalid', field: 'spec.selector', value: sel, detail: 'invalid label selector' });
  }
  if (selector) errs.push(...validateTemplate(spec.template, selector, 'spec.template'));
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
  const errs = validateDeployment(d);
  const sel = asMap(d.spec).selector;
  if (!isDeepStrictEqual(sel ?? null, asMap(old.spec).selector ?? null)) {
    errs.push({ type: 'FieldValueInvalid', field: 'spec.selector', value: sel ?? null, detail: 'field is immutable' });
  }
  return errs;
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
  const next = asMap(d.status).collisionCount;
  const prev = asMap(old.status).collisionCount;
  if (isInt(prev) && (!isInt(next) || next < prev)) {
    errs.push({ type: 'FieldValueInvalid', field: 'status.collisionCount', value: next ?? null, detail: 'cannot be decremented' });
  }
  return errs;
}
