/**
 * StatefulSet validation (pkg/apis/apps/validation ValidateStatefulSet,
 * ValidateStatefulSetUpdate, ValidateStatefulSetStatusUpdate), with Kubernetes' messages and
 * field paths. Unlike a ReplicaSet's, the template is checked only for its labels, annotations,
 * restartPolicy and activeDeadlineSeconds: kube does not run the Pod spec validation on a
 * StatefulSet's template (its volumes may name claims of volumeClaimTemplates). serviceName
 * may be empty. Pure.
 */
import { isDeepStrictEqual } from 'node:util';
import { goMap, validateAnnotations, validateLabels, type FieldError, type KubeObject, type LabelSelector } from '@app/apimachinery';
import { asMap } from '../../core/core.helpers.js';
import {
  collisionCountNotDecremented,
  intOrPercentValue,
  isInt,
  nonNegative,
  notMoreThan100Percent,
  positiveIntOrPercent,
  validateSelectorAndTemplate,
} from '../workload.validation.js';

type Obj = Record<string, unknown>;

/** The spec fields an update may change (ValidateStatefulSetUpdate); any other change is forbidden. */
export const STATEFULSET_MUTABLE_FIELDS: readonly string[] = [
  'replicas',
  'ordinals',
  'template',
  'updateStrategy',
  'persistentVolumeClaimRetentionPolicy',
  'minReadySeconds',
];

const set = (v: unknown): boolean => v !== undefined && v !== null;

/** validateRollingUpdateStatefulSet. */
function validateRollingUpdate(ru: Obj, path: string): FieldError[] {
  const errs = nonNegative(ru.partition, `${path}.partition`);
  if (set(ru.maxUnavailable)) {
    const mu = ru.maxUnavailable;
    errs.push(...positiveIntOrPercent(mu, `${path}.maxUnavailable`));
    if (intOrPercentValue(mu) === 0) errs.push({ type: 'FieldValueInvalid', field: `${path}.maxUnavailable`, value: mu, detail: 'cannot be 0' });
    errs.push(...notMoreThan100Percent(mu, `${path}.maxUnavailable`));
  }
  return errs;
}

/** The updateStrategy part of ValidateStatefulSetSpec. */
function validateUpdateStrategy(us: Obj, path: string): FieldError[] {
  switch (us.type) {
    case undefined:
    case null:
    case '':
      return [{ type: 'FieldValueRequired', field: path, detail: '' }];
    case 'OnDelete':
      return set(us.rollingUpdate)
        ? [{ type: 'FieldValueInvalid', field: `${path}.rollingUpdate`, value: us.rollingUpdate, detail: "only allowed for updateStrategy 'RollingUpdate'" }]
        : [];
    case 'RollingUpdate':
      return set(us.rollingUpdate) ? validateRollingUpdate(asMap(us.rollingUpdate), `${path}.rollingUpdate`) : [];
    default:
      return [{ type: 'FieldValueInvalid', field: path, value: us, detail: "must be 'RollingUpdate' or 'OnDelete'" }];
  }
}

/** ValidatePersistentVolumeClaimRetentionPolicy. */
function validateRetentionPolicy(policy: unknown, path: string): FieldError[] {
  if (!set(policy)) return [];
  const p = asMap(policy);
  const errs: FieldError[] = [];
  for (const f of ['whenDeleted', 'whenScaled']) {
    if (p[f] !== 'Retain' && p[f] !== 'Delete') {
      errs.push({ type: 'FieldValueNotSupported', field: `${path}.${f}`, value: p[f] ?? '', detail: 'supported values: "Retain", "Delete"' });
    }
  }
  return errs;
}

/** ValidatePodTemplateSpecForStatefulSet plus the spec-level template rules. */
function validateTemplate(template: unknown, selector: LabelSelector, path: string): FieldError[] {
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
  // kube's paths here skip `metadata`: template.labels, template.annotations.
  errs.push(...validateLabels(meta.labels, `${path}.labels`), ...validateAnnotations(meta.annotations, `${path}.annotations`));
  if (spec.restartPolicy !== 'Always') {
    errs.push({ type: 'FieldValueNotSupported', field: `${path}.spec.restartPolicy`, value: spec.restartPolicy ?? '', detail: 'supported values: "Always"' });
  }
  if (set(spec.activeDeadlineSeconds)) {
    errs.push({ type: 'FieldValueForbidden', field: `${path}.spec.activeDeadlineSeconds`, detail: 'activeDeadlineSeconds in StatefulSet is not Supported' });
  }
  return errs;
}

/** ValidateStatefulSetSpec at `spec` (defaults applied). */
export function validateStatefulSetSpec(spec: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const pmp = spec.podManagementPolicy;
  if (pmp === undefined || pmp === null || pmp === '') errs.push({ type: 'FieldValueRequired', field: 'spec.podManagementPolicy', detail: '' });
  else if (pmp !== 'OrderedReady' && pmp !== 'Parallel')
    errs.push({ type: 'FieldValueInvalid', field: 'spec.podManagementPolicy', value: pmp, detail: "must be 'OrderedReady' or 'Parallel'" });
  errs.push(...validateUpdateStrategy(asMap(spec.updateStrategy), 'spec.updateStrategy'));
  errs.push(...validateRetentionPolicy(spec.persistentVolumeClaimRetentionPolicy, 'spec.persistentVolumeClaimRetentionPolicy'));
  errs.push(...nonNegative(spec.replicas, 'spec.replicas'), ...nonNegative(spec.minReadySeconds, 'spec.minReadySeconds'));
  if (set(spec.ordinals)) errs.push(...nonNegative(asMap(spec.ordinals).start, 'spec.ordinals.start'));
  errs.push(...validateSelectorAndTemplate(spec, { kind: 'statefulset', unconvertible: '', template: validateTemplate }));
  return errs;
}

/** ValidateStatefulSet without ObjectMeta (the store validates metadata). */
export function validateStatefulSet(sts: KubeObject): FieldError[] {
  return validateStatefulSetSpec(asMap(sts.spec));
}

/** ValidateStatefulSetUpdate: a valid spec that differs from the old one only in the mutable fields. */
export function validateStatefulSetUpdate(sts: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateStatefulSet(sts);
  const strip = (spec: unknown): Obj => {
    const s = { ...asMap(spec) };
    for (const f of STATEFULSET_MUTABLE_FIELDS) delete s[f];
    return s;
  };
  if (!isDeepStrictEqual(strip(sts.spec), strip(old.spec))) {
    errs.push({
      type: 'FieldValueForbidden',
      field: 'spec',
      detail:
        "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
    });
  }
  return errs;
}

/** ValidateStatefulSetStatus at `status`. */
export function validateStatefulSetStatus(status: Obj): FieldError[] {
  const errs: FieldError[] = [];
  for (const f of ['replicas', 'readyReplicas', 'currentReplicas', 'updatedReplicas', 'availableReplicas', 'observedGeneration', 'collisionCount']) {
    errs.push(...nonNegative(status[f], `status.${f}`));
  }
  const n = (f: string): number => (isInt(status[f]) ? status[f] : 0);
  for (const f of ['readyReplicas', 'currentReplicas', 'updatedReplicas', 'availableReplicas']) {
    if (n(f) > n('replicas')) errs.push({ type: 'FieldValueInvalid', field: `status.${f}`, value: n(f), detail: 'cannot be greater than status.replicas' });
  }
  if (n('availableReplicas') > n('readyReplicas')) {
    errs.push({
      type: 'FieldValueInvalid',
      field: 'status.availableReplicas',
      value: n('availableReplicas'),
      detail: 'cannot be greater than status.readyReplicas',
    });
  }
  return errs;
}

/** ValidateStatefulSetStatusUpdate: a valid status whose collisionCount never goes down. */
export function validateStatefulSetStatusUpdate(sts: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateStatefulSetStatus(asMap(sts.status));
  errs.push(...collisionCountNotDecremented(sts.status, old.status));
  return errs;
}
