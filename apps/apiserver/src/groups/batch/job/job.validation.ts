/**
 * Job validation (pkg/apis/batch/validation ValidateJob, ValidateJobSpec, ValidateJobSpecUpdate,
 * ValidateJobStatus), with Kubernetes' messages and field paths. The pod template goes through
 * the Pod's spec validation at `<path>.template.spec`. A missing template is reported by the
 * schema (JobSpec requires it). Pure: no storage, no clock.
 */
import { isDeepStrictEqual } from 'node:util';
import {
  goMap,
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
import { CONTROLLER_UID_LABEL, JOB_NAME_LABEL, LEGACY_CONTROLLER_UID_LABEL, LEGACY_JOB_NAME_LABEL } from './job.labels.js';

type Obj = Record<string, unknown>;

const NON_NEGATIVE = 'must be greater than or equal to 0';
const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);
const isSet = (v: unknown): boolean => v !== undefined && v !== null;

/** ValidateNonnegativeField for an optional integer. */
function nonNegative(v: unknown, field: string): FieldError[] {
  return isInt(v) && v < 0 ? [{ type: 'FieldValueInvalid', field, value: v, detail: NON_NEGATIVE }] : [];
}

/** The template checks of validateJobSpec: metadata, the Pod's spec rules, and a restartPolicy of OnFailure or Never. */
function validateTemplate(spec: Obj, path: string): FieldError[] {
  const t = asMap(spec.template);
  const meta = asMap(t.metadata);
  const ps = asMap(t.spec);
  const errs = [...validateLabels(meta.labels, `${path}.metadata.labels`), ...validateAnnotations(meta.annotations, `${path}.metadata.annotations`)];
  errs.push(...validatePodSpec(ps, `${path}.spec`));
  const rp = ps.restartPolicy;
  // The Pod default fills in Always when restartPolicy is unset, so both mean "not chosen".
  if (rp === 'Always' || rp === undefined || rp === null || rp === '') {
    errs.push({ type: 'FieldValueRequired', field: `${path}.spec.restartPolicy`, detail: 'valid values: "OnFailure", "Never"' });
  } else if (rp !== 'OnFailure' && rp !== 'Never') {
    errs.push({ type: 'FieldValueNotSupported', field: `${path}.spec.restartPolicy`, value: rp, detail: 'supported values: "OnFailure", "Never"' });
  } else if (isSet(spec.podFailurePolicy) && rp !== 'Never') {
    errs.push({
      type: 'FieldValueInvalid',
      field: `${path}.spec.restartPolicy`,
      value: rp,
      detail: 'only "Never" is supported when podFailurePolicy is specified',
    });
  }
  return errs;
}

/**
 * validateJobSpec at `path` (defaults applied): the checks shared by a Job and a CronJob's
 * jobTemplate; the selector is checked by validateJob only.
 */
export function validateJobSpecFields(spec: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const f of [
    'parallelism',
    'completions',
    'activeDeadlineSeconds',
    'backoffLimit',
    'ttlSecondsAfterFinished',
    'backoffLimitPerIndex',
    'maxFailedIndexes',
  ]) {
    errs.push(...nonNegative(spec[f], `${path}.${f}`));
  }
  if (isSet(spec.maxFailedIndexes) && !isSet(spec.backoffLimitPerIndex)) {
    errs.push({ type: 'FieldValueRequired', field: `${path}.backoffLimitPerIndex`, detail: 'when maxFailedIndexes is specified' });
  }
  const mode = spec.completionMode;
  if (isSet(mode) && mode !== 'NonIndexed' && mode !== 'Indexed') {
    errs.push({ type: 'FieldValueNotSupported', field: `${path}.completionMode`, value: mode, detail: 'supported values: "NonIndexed", "Indexed"' });
  }
  if (mode === 'Indexed' && !isSet(spec.completions)) {
    errs.push({ type: 'FieldValueRequired', field: `${path}.completions`, detail: 'when completion mode is Indexed' });
  }
  if (mode !== 'Indexed') {
    for (const f of ['backoffLimitPerIndex', 'maxFailedIndexes']) {
      if (isSet(spec[f])) errs.push({ type: 'FieldValueInvalid', field: `${path}.${f}`, value: spec[f], detail: 'requires indexed completion mode' });
    }
    if (isSet(spec.successPolicy)) {
      errs.push({ type: 'FieldValueInvalid', field: `${path}.successPolicy`, value: spec.successPolicy, detail: 'requires indexed completion mode' });
    }
  }
  const prp = spec.podReplacementPolicy;
  if (isSet(prp)) {
    // With a podFailurePolicy only Failed is allowed.
    const allowed = isSet(spec.podFailurePolicy) ? ['Failed'] : ['Failed', 'TerminatingOrFailed'];
    if (!allowed.includes(String(prp))) {
      const detail = `supported values: ${allowed.map((v) => JSON.stringify(v)).join(', ')}`;
      errs.push({ type: 'FieldValueNotSupported', field: `${path}.podReplacementPolicy`, value: prp, detail });
    }
  }
  errs.push(...validateTemplate(spec, `${path}.template`));
  return errs;
}

/**
 * validateGeneratedSelector: unless manualSelector is true, the template carries the labels the
 * server generated from the Job's uid and name, and the selector selects them.
 */
function validateGeneratedSelector(job: KubeObject, selector: LabelSelector | undefined): FieldError[] {
  const spec = asMap(job.spec);
  if (spec.manualSelector === true || !isSet(spec.selector)) return [];
  const errs: FieldError[] = [];
  const uid = String(job.metadata.uid ?? '');
  const name = String(job.metadata.name ?? '');
  if (!uid) errs.push({ type: 'FieldValueRequired', field: 'metadata.uid', detail: '' });
  const labels = asMap(asMap(asMap(spec.template).metadata).labels);
  const expected: Record<string, string> = {
    [LEGACY_CONTROLLER_UID_LABEL]: uid,
    [LEGACY_JOB_NAME_LABEL]: name,
    [CONTROLLER_UID_LABEL]: uid,
    [JOB_NAME_LABEL]: name,
  };
  for (const [key, want] of Object.entries(expected)) {
    const field = `spec.template.metadata.labels[${key}]`;
    if (!(key in labels)) errs.push({ type: 'FieldValueRequired', field, detail: want });
    else if (labels[key] !== want) errs.push({ type: 'FieldValueInvalid', field, value: labels, detail: `must be '${want}'` });
  }
  if (selector && !selector.matches(expected)) {
    errs.push({ type: 'FieldValueInvalid', field: 'spec.selector', value: spec.selector, detail: '`selector` not auto-generated' });
  }
  return errs;
}

/** ValidateJob without ObjectMeta (the store validates metadata). */
export function validateJob(job: KubeObject): FieldError[] {
  const spec = asMap(job.spec);
  const errs: FieldError[] = [];
  const sel = spec.selector;
  let selector: LabelSelector | undefined;
  if (!isSet(sel)) {
    errs.push({ type: 'FieldValueRequired', field: 'spec.selector', detail: '' });
  } else {
    errs.push(...validateLabelSelector(sel, 'spec.selector'));
    try {
      selector = labelSelectorFromStruct(sel as LabelSelectorStruct);
    } catch {
      selector = undefined;
    }
  }
  errs.unshift(...validateGeneratedSelector(job, selector));
  errs.push(...validateJobSpecFields(spec, 'spec'));
  const labels = asMap(asMap(spec.template).metadata).labels;
  if (selector && !selector.matches(asMap(labels) as Record<string, string>)) {
    errs.push({
      type: 'FieldValueInvalid',
      field: 'spec.template.metadata.labels',
      value: goMap(labels),
      detail: '`selector` does not match template `labels`',
    });
  }
  return errs;
}

/** Fields of a JobSpec that never change once the Job exists (ValidateJobSpecUpdate). */
const IMMUTABLE = ['selector', 'template', 'completionMode', 'podFailurePolicy', 'backoffLimitPerIndex', 'managedBy', 'successPolicy'];

/**
 * ValidateJobUpdate: a valid Job whose selector, template, completionMode, podFailurePolicy,
 * backoffLimitPerIndex, managedBy and successPolicy are unchanged, and whose completions change
 * only for an elastic Indexed Job (completions kept equal to parallelism). Kubernetes also lets
 * the scheduling directives of a suspended Job's template change; this server does not.
 */
export function validateJobUpdate(job: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateJob(job);
  const spec = asMap(job.spec);
  const prev = asMap(old.spec);
  for (const f of IMMUTABLE) {
    if (!isDeepStrictEqual(spec[f] ?? null, prev[f] ?? null)) {
      errs.push({ type: 'FieldValueInvalid', field: `spec.${f}`, value: spec[f] ?? null, detail: 'field is immutable' });
    }
  }
  if (!isDeepStrictEqual(spec.completions ?? null, prev.completions ?? null)) {
    const elastic = spec.completionMode === 'Indexed' && isInt(spec.completions) && spec.completions === spec.parallelism;
    if (!elastic) errs.push({ type: 'FieldValueInvalid', field: 'spec.completions', value: spec.completions ?? null, detail: 'field is immutable' });
  }
  return errs;
}

/** ValidateJobStatus's counters at `status`: none negative. */
export function validateJobStatus(status: Obj): FieldError[] {
  const errs: FieldError[] = [];
  for (const f of ['active', 'succeeded', 'failed', 'ready', 'terminating']) errs.push(...nonNegative(status[f], `status.${f}`));
  return errs;
}

/** The /status update of a Job: a valid status. */
export function validateJobStatusUpdate(job: KubeObject): FieldError[] {
  return validateJobStatus(asMap(job.status));
}
