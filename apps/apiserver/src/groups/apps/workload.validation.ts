/**
 * Validation shared by the apps/v1 workloads that own pods through a template (Deployment,
 * ReplicaSet): pkg/apis/apps/validation's selector checks and ValidatePodTemplateSpecForReplicaSet,
 * with Kubernetes' messages and field paths. Pure: no storage, no clock.
 */
import { isDeepStrictEqual } from 'node:util';
import {
  goLabelSelector,
  goMap,
  labelSelectorFromStruct,
  validateAnnotations,
  validateLabels,
  validateLabelSelector,
  type FieldError,
  type LabelSelector,
  type LabelSelectorStruct,
} from '@app/apimachinery';
import { asMap } from '../core/core.helpers.js';
import { validatePodSpec } from '../core/pod/pod.validation.js';

const NON_NEGATIVE = 'must be greater than or equal to 0';

/** Whether `v` is an integer number. */
export const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

/** ValidateNonnegativeField for an optional integer. */
export function nonNegative(v: unknown, field: string): FieldError[] {
  return isInt(v) && v < 0 ? [{ type: 'FieldValueInvalid', field, value: v, detail: NON_NEGATIVE }] : [];
}

/**
 * The status checks ReplicaSet and ReplicationController share (ValidateReplicaSetStatus,
 * ValidateReplicationControllerStatus) at `status`: each of `counts` not negative, the labelled,
 * ready and available counts not above replicas, available not above ready.
 */
export function validateReplicaCounts(status: Record<string, unknown>, counts: readonly string[]): FieldError[] {
  const errs: FieldError[] = [];
  for (const f of counts) errs.push(...nonNegative(status[f], `status.${f}`));
  const n = (f: string): number => (isInt(status[f]) ? status[f] : 0);
  const gtReplicas = 'cannot be greater than status.replicas';
  for (const f of ['fullyLabeledReplicas', 'readyReplicas', 'availableReplicas']) {
    if (n(f) > n('replicas')) errs.push({ type: 'FieldValueInvalid', field: `status.${f}`, value: n(f), detail: gtReplicas });
  }
  if (n('availableReplicas') > n('readyReplicas')) {
    errs.push({ type: 'FieldValueInvalid', field: 'status.availableReplicas', value: n('availableReplicas'), detail: 'cannot be greater than readyReplicas' });
  }
  return errs;
}

/** validation.IsValidPercent's pattern. */
export const PERCENT = /^[0-9]+%$/;
const PERCENT_MSG = "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";

/** getIntOrPercentValue: the number of a valid percentage, an integer as is, else 0 (IntValue of a non-number string). */
export function intOrPercentValue(v: unknown): number {
  if (typeof v === 'string') return PERCENT.test(v) ? Number(v.slice(0, -1)) : /^-?\d+$/.test(v) ? Number(v) : 0;
  return isInt(v) ? v : 0;
}

/** ValidatePositiveIntOrPercent: a string must be a percentage, a number not negative. */
export function positiveIntOrPercent(v: unknown, field: string): FieldError[] {
  if (typeof v === 'string') return PERCENT.test(v) ? [] : [{ type: 'FieldValueInvalid', field, value: v, detail: PERCENT_MSG }];
  return nonNegative(v, field);
}

/** IsNotMoreThan100Percent: a percentage may not exceed 100%. */
export function notMoreThan100Percent(v: unknown, field: string): FieldError[] {
  return typeof v === 'string' && PERCENT.test(v) && intOrPercentValue(v) > 100
    ? [{ type: 'FieldValueInvalid', field, value: v, detail: 'must not be greater than 100%' }]
    : [];
}

/**
 * ValidatePodTemplateSpecForReplicaSet: the template's labels match the selector (unless it
 * selects everything), its metadata and spec are valid, it restarts Always and sets no
 * activeDeadlineSeconds. A missing template is the schema's to report.
 */
export function validatePodTemplateForReplicaSet(template: unknown, selector: LabelSelector, path: string): FieldError[] {
  if (template === undefined || template === null) return [];
  const t = asMap(template);
  const meta = asMap(t.metadata);
  const spec = asMap(t.spec);
  const errs: FieldError[] = [];
  if (!selector.isEmpty() && !selector.matches(asMap(meta.labels) as Record<string, string>)) {
    errs.push({
      type: 'FieldValueInvalid',
      field: `${path}.metadata.labels`,
      value: goMap(meta.labels),
      detail: '`selector` does not match template `labels`',
    });
  }
  errs.push(...validateLabels(meta.labels, `${path}.metadata.labels`), ...validateAnnotations(meta.annotations, `${path}.metadata.annotations`));
  errs.push(...validatePodSpec(spec, `${path}.spec`));
  if (spec.restartPolicy !== 'Always') {
    errs.push({ type: 'FieldValueNotSupported', field: `${path}.spec.restartPolicy`, value: spec.restartPolicy ?? '', detail: 'supported values: "Always"' });
  }
  if (spec.activeDeadlineSeconds !== undefined && spec.activeDeadlineSeconds !== null) {
    errs.push({ type: 'FieldValueForbidden', field: `${path}.spec.activeDeadlineSeconds`, detail: 'activeDeadlineSeconds in ReplicaSet is not Supported' });
  }
  return errs;
}

/** How one workload kind words and checks its selector and template (validateSelectorAndTemplate). */
export interface SelectorRules {
  /** The kind named in "empty selector is invalid for <kind>" (ReplicaSet's says deployment, as kube's). */
  kind: string;
  /** The detail of a selector that does not convert (kube's StatefulSet gives none). */
  unconvertible: string;
  /** The template check, given the converted selector. */
  template(template: unknown, selector: LabelSelector, path: string): FieldError[];
}

/** Deployment's and ReplicaSet's rules. */
export const REPLICA_SET_SELECTOR_RULES: SelectorRules = {
  kind: 'deployment',
  unconvertible: 'invalid label selector',
  template: validatePodTemplateForReplicaSet,
};

/**
 * The selector and template part of ValidateDeploymentSpec, ValidateReplicaSetSpec and
 * ValidateStatefulSetSpec at `spec`: a valid, non-empty selector and a template valid for it.
 */
export function validateSelectorAndTemplate(spec: Record<string, unknown>, rules: SelectorRules = REPLICA_SET_SELECTOR_RULES): FieldError[] {
  const errs: FieldError[] = [];
  const sel = spec.selector;
  if (sel !== undefined && sel !== null) {
    errs.push(...validateLabelSelector(sel, 'spec.selector'));
    const s = asMap(sel);
    const n = Object.keys(asMap(s.matchLabels)).length + (Array.isArray(s.matchExpressions) ? s.matchExpressions.length : 0);
    if (n === 0)
      errs.push({ type: 'FieldValueInvalid', field: 'spec.selector', value: goLabelSelector(sel), detail: `empty selector is invalid for ${rules.kind}` });
  }
  let selector: LabelSelector | undefined;
  try {
    selector = labelSelectorFromStruct((sel ?? undefined) as LabelSelectorStruct | undefined);
  } catch {
    errs.push({ type: 'FieldValueInvalid', field: 'spec.selector', value: sel, detail: rules.unconvertible });
  }
  if (selector) errs.push(...rules.template(spec.template, selector, 'spec.template'));
  return errs;
}

/** kube's isDecremented check of status.collisionCount on a status update (a missing new value counts as 0). */
export function collisionCountNotDecremented(status: unknown, oldStatus: unknown): FieldError[] {
  const next = asMap(status).collisionCount;
  const prev = asMap(oldStatus).collisionCount;
  if (!isInt(prev) || (isInt(next) && next >= prev)) return [];
  return [{ type: 'FieldValueInvalid', field: 'status.collisionCount', value: isInt(next) ? next : 0, detail: 'cannot be decremented' }];
}

/** The apps/v1 strategies' rule that spec.selector never changes. */
export function immutableSelector(spec: unknown, oldSpec: unknown): FieldError[] {
  const sel = asMap(spec).selector;
  return isDeepStrictEqual(sel ?? null, asMap(oldSpec).selector ?? null)
    ? []
    : [{ type: 'FieldValueInvalid', field: 'spec.selector', value: sel ?? null, detail: 'field is immutable' }];
}
