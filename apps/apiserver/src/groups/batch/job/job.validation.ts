/**
 * Job validation (pkg/apis/batch/validation ValidateJob, ValidateJobSpec, ValidateJobSpecUpdate,
 * ValidateJobStatus), with Kubernetes' messages and field paths. The pod template goes through
 * the Pod's spec validation at `<path>.template.spec`. A missing template is reported by the
 * schema (JobSpec requires it). Pure: no storage, no clock.
 */
import { isDeepStrictEqual } from 'node:util';
import {
  GoValue,
  goMap,
  isQualifiedName,
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

const MAX_POLICY_RULES = 20;
const MAX_EXIT_CODES = 255;
const MAX_CONDITION_PATTERNS = 20;
/** The longest `succeededIndexes` of a success policy rule, in characters. */
const MAX_SUCCEEDED_INDEXES = 64 * 1024;

const tooMany = (field: string, n: number, max: number): FieldError => ({
  type: 'FieldValueTooMany',
  field,
  value: n,
  detail: `${n}: must have at most ${max} items`,
});
const notSupported = (field: string, value: unknown, values: string[]): FieldError => ({
  type: 'FieldValueNotSupported',
  field,
  value,
  detail: `supported values: ${values.map((v) => JSON.stringify(v)).join(', ')}`,
});
/** field.Required with kube's `valid values: %q` of a sorted list. */
const requiredOneOf = (field: string, values: string[]): FieldError => ({
  type: 'FieldValueRequired',
  field,
  detail: `valid values: [${values.map((v) => JSON.stringify(v)).join(' ')}]`,
});

/** validatePodFailurePolicy: at most 20 rules, each with a known action and exactly one kind of requirement. */
function validatePodFailurePolicy(spec: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const rules = Array.isArray(asMap(spec.podFailurePolicy).rules) ? (asMap(spec.podFailurePolicy).rules as unknown[]) : [];
  if (rules.length > MAX_POLICY_RULES) errs.push(tooMany(`${path}.rules`, rules.length, MAX_POLICY_RULES));
  const podSpec = asMap(asMap(spec.template).spec);
  const names = new Set([podSpec.containers, podSpec.initContainers].flatMap((list) => (Array.isArray(list) ? list.map((c) => asMap(c).name) : [])));
  rules.forEach((r, i) => {
    const rule = asMap(r);
    const at = `${path}.rules[${i}]`;
    const action = rule.action;
    const actions = ['Count', 'FailIndex', 'FailJob', 'Ignore'];
    if (!isSet(action) || action === '') errs.push(requiredOneOf(`${at}.action`, actions));
    else if (action === 'FailIndex') {
      if (!isSet(spec.backoffLimitPerIndex))
        errs.push({ type: 'FieldValueInvalid', field: `${at}.action`, value: action, detail: 'requires the backoffLimitPerIndex to be set' });
    } else if (!actions.includes(String(action))) errs.push(notSupported(`${at}.action`, action, actions));
    const onExit = isSet(rule.onExitCodes) ? asMap(rule.onExitCodes) : undefined;
    const patterns = Array.isArray(rule.onPodConditions) ? rule.onPodConditions.map(asMap) : [];
    if (onExit) {
      const ep = `${at}.onExitCodes`;
      const op = onExit.operator;
      if (!isSet(op) || op === '') errs.push(requiredOneOf(`${ep}.operator`, ['In', 'NotIn']));
      else if (op !== 'In' && op !== 'NotIn') errs.push(notSupported(`${ep}.operator`, op, ['In', 'NotIn']));
      if (isSet(onExit.containerName) && !names.has(onExit.containerName))
        errs.push({
          type: 'FieldValueInvalid',
          field: `${ep}.containerName`,
          value: onExit.containerName,
          detail: 'must be one of the container or initContainer names in the pod template',
        });
      const values = Array.isArray(onExit.values) ? (onExit.values as unknown[]) : [];
      if (values.length === 0)
        errs.push({
          type: 'FieldValueInvalid',
          field: `${ep}.values`,
          value: new GoValue(Array.isArray(onExit.values) ? '[]int32{}' : '[]int32(nil)'),
          detail: 'at least one value is required',
        });
      else if (values.length > MAX_EXIT_CODES) errs.push(tooMany(`${ep}.values`, values.length, MAX_EXIT_CODES));
      const seen = new Set<unknown>();
      let ordered = true;
      values.forEach((v, j) => {
        if (op === 'In' && v === 0)
          errs.push({ type: 'FieldValueInvalid', field: `${ep}.values[${j}]`, value: 0, detail: 'must not be 0 for the In operator' });
        if (seen.has(v)) errs.push({ type: 'FieldValueDuplicate', field: `${ep}.values[${j}]`, value: v, detail: '' });
        else seen.add(v);
        if (j > 0 && Number(values[j - 1]) > Number(v)) ordered = false;
      });
      if (!ordered)
        errs.push({ type: 'FieldValueInvalid', field: `${ep}.values`, value: new GoValue(`[]int32{${values.join(', ')}}`), detail: 'must be ordered' });
    }
    if (patterns.length > 0) {
      const pp = `${at}.onPodConditions`;
      if (patterns.length > MAX_CONDITION_PATTERNS) errs.push(tooMany(pp, patterns.length, MAX_CONDITION_PATTERNS));
      const statuses = ['False', 'True', 'Unknown'];
      patterns.forEach((p, j) => {
        const type = String(p.type ?? '');
        for (const m of isQualifiedName(type)) errs.push({ type: 'FieldValueInvalid', field: `${pp}[${j}].type`, value: type, detail: m });
        if (!isSet(p.status) || p.status === '') errs.push(requiredOneOf(`${pp}[${j}].status`, statuses));
        else if (!statuses.includes(String(p.status))) errs.push(notSupported(`${pp}[${j}].status`, p.status, statuses));
      });
    }
    if (onExit && patterns.length > 0)
      errs.push({ type: 'FieldValueInvalid', field: at, detail: 'specifying both OnExitCodes and OnPodConditions is not supported' });
    if (!onExit && patterns.length === 0)
      errs.push({ type: 'FieldValueInvalid', field: at, detail: 'specifying one of OnExitCodes and OnPodConditions is required' });
  });
  return errs;
}

/** validateSuccessPolicy of an Indexed Job: 1 to 20 rules, each naming indexes (well formed) or a count (within them and the completions). */
function validateSuccessPolicy(policy: Obj, completions: number, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const rules = Array.isArray(policy.rules) ? (policy.rules as unknown[]) : [];
  if (rules.length === 0)
    errs.push({ type: 'FieldValueRequired', field: `${path}.rules`, detail: 'at least one rules must be specified when the successPolicy is specified' });
  if (rules.length > MAX_POLICY_RULES) errs.push(tooMany(`${path}.rules`, rules.length, MAX_POLICY_RULES));
  rules.forEach((r, i) => {
    const rule = asMap(r);
    const at = `${path}.rules[${i}]`;
    if (!isSet(rule.succeededCount) && !isSet(rule.succeededIndexes))
      errs.push({ type: 'FieldValueRequired', field: at, detail: 'at least one of succeededCount or succeededIndexes must be specified' });
    let total = 0;
    if (typeof rule.succeededIndexes === 'string') {
      const text = rule.succeededIndexes;
      if (text.length > MAX_SUCCEEDED_INDEXES)
        errs.push({ type: 'FieldValueTooLong', field: `${at}.succeededIndexes`, detail: `may not be more than ${MAX_SUCCEEDED_INDEXES} bytes` });
      const parsed = validateIndexesFormat(text, completions);
      if ('error' in parsed)
        errs.push({ type: 'FieldValueInvalid', field: `${at}.succeededIndexes`, value: text, detail: `error parsing succeededIndexes: ${parsed.error}` });
      else total = parsed.total;
    }
    if (isInt(rule.succeededCount)) {
      const count = rule.succeededCount;
      const field = `${at}.succeededCount`;
      errs.push(...nonNegative(count, field));
      if (count > completions)
        errs.push({
          type: 'FieldValueInvalid',
          field,
          value: count,
          detail: `must be less than or equal to ${completions} (the number of specified completions)`,
        });
      if (isSet(rule.succeededIndexes) && count > total)
        errs.push({
          type: 'FieldValueInvalid',
          field,
          value: count,
          detail: `must be less than or equal to ${total} (the number of indexes in the specified succeededIndexes field)`,
        });
    }
  });
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
  } else if (isSet(spec.successPolicy) && isInt(spec.completions)) {
    errs.push(...validateSuccessPolicy(asMap(spec.successPolicy), spec.completions, `${path}.successPolicy`));
  }
  if (isSet(spec.podFailurePolicy)) errs.push(...validatePodFailurePolicy(spec, `${path}.podFailurePolicy`));
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

/**
 * validateIndexesFormat: "0-2,5,7-8", each index below `completions`, in increasing order; the
 * number of indexes, or kube's message for the first fault.
 */
export function validateIndexesFormat(text: string, completions: number): { total: number } | { error: string } {
  if (text === '') return { total: 0 };
  let last: number | undefined;
  let total = 0;
  for (const interval of text.split(',')) {
    const r = parseIndexInterval(interval, completions);
    if ('error' in r) return r;
    if (last !== undefined && last >= r.from) return { error: `non-increasing order, previous: ${last}, current: ${r.from}` };
    total += r.to - r.from + 1;
    last = r.to;
  }
  return { total };
}

function parseIndexInterval(interval: string, completions: number): { from: number; to: number } | { error: string } {
  const parts = interval.split('-');
  if (parts.length > 2)
    return { error: `the fragment ${JSON.stringify(interval)} violates the requirement that an index interval can have at most two parts separated by '-'` };
  const bounds: number[] = [];
  for (const part of parts) {
    // strconv.Atoi: an optional sign and decimal digits.
    if (!/^[+-]?\d+$/.test(part)) return { error: `cannot convert string to integer for index: ${JSON.stringify(part)}` };
    const n = Number(part);
    if (n >= completions) return { error: `too large index: ${JSON.stringify(part)}` };
    bounds.push(n);
  }
  const [from, to = from] = bounds as [number, number?];
  if (parts.length === 2 && from >= to) return { error: `non-increasing order, previous: ${from}, current: ${to}` };
  return { from, to };
}

/** The lowest index both lists hold, as kube's validateFailedIndexesNotOverlapCompleted reports it; faulty intervals are skipped. */
function firstOverlap(completed: string, failed: string, completions: number): number | undefined {
  const indexes = (text: string): Set<number> => {
    const out = new Set<number>();
    if (text === '') return out;
    for (const interval of text.split(',')) {
      const r = parseIndexInterval(interval, completions);
      if ('error' in r) continue;
      for (let i = r.from; i <= r.to; i++) out.add(i);
    }
    return out;
  };
  const done = indexes(completed);
  let lowest: number | undefined;
  for (const i of indexes(failed)) if (done.has(i) && (lowest === undefined || i < lowest)) lowest = i;
  return lowest;
}

const conditionTrue = (status: Obj, type: string): boolean =>
  Array.isArray(status.conditions) && status.conditions.some((c) => asMap(c).type === type && asMap(c).status === 'True');
const invalid = (field: string, detail: string, value?: unknown): FieldError => ({ type: 'FieldValueInvalid', field, value, detail });

/** ValidateJobStatus's counters at `status`: none negative, and no uid twice (or empty) in uncountedTerminatedPods. */
export function validateJobStatus(status: Obj): FieldError[] {
  const errs: FieldError[] = [];
  for (const f of ['active', 'succeeded', 'failed', 'ready', 'terminating']) errs.push(...nonNegative(status[f], `status.${f}`));
  const uncounted = asMap(status.uncountedTerminatedPods);
  const seen = new Set<unknown>();
  for (const list of ['succeeded', 'failed']) {
    const uids = Array.isArray(uncounted[list]) ? (uncounted[list] as unknown[]) : [];
    uids.forEach((uid, i) => {
      const field = `status.uncountedTerminatedPods.${list}[${i}]`;
      if (uid === '') errs.push(invalid(field, 'must not be empty', ''));
      else if (seen.has(uid)) errs.push({ type: 'FieldValueDuplicate', field, value: uid, detail: '' });
      else seen.add(uid);
    });
  }
  return errs;
}

/**
 * The /status update of a Job (ValidateJobUpdateStatus with the options of kube's status strategy
 * while JobManagedBy is on, as in 1.32): a valid status whose transitions make sense to the Job's
 * readers: a terminal condition (Complete, Failed, FailureTarget, SuccessCriteriaMet) is never
 * taken back, counters do not go down, Complete comes with a completionTime and never with Failed
 * or FailureTarget, a finished Job has no active or uncounted pods and a startTime, indexes are
 * well formed. Most rules apply only when the fields they read change, so a status already at odds
 * with one (after a spec change) can still be updated otherwise.
 */
export function validateJobStatusUpdate(job: KubeObject, old: KubeObject = job): FieldError[] {
  const spec = asMap(job.spec);
  const status = asMap(job.status);
  const was = asMap(old.status);
  const errs = validateJobStatus(status);
  const has = (st: Obj, type: string) => conditionTrue(st, type);
  const complete = has(status, 'Complete');
  const failedCond = has(status, 'Failed');
  const finished = complete || failedCond;
  const time = (v: unknown) => (typeof v === 'string' ? Date.parse(v) : NaN);
  const changed = (f: string) =>
    f === 'startTime' || f === 'completionTime'
      ? isSet(status[f]) !== isSet(was[f]) || (isSet(status[f]) && time(status[f]) !== time(was[f]))
      : !isDeepStrictEqual(status[f] ?? null, was[f] ?? null);
  const finishedChanged = finished !== (has(was, 'Complete') || has(was, 'Failed'));
  const completeChanged = complete !== has(was, 'Complete');
  const failedChanged = failedCond !== has(was, 'Failed');
  const targetChanged = has(status, 'FailureTarget') !== has(was, 'FailureTarget');
  const indexed = spec.completionMode === 'Indexed';
  const completions = isInt(spec.completions) ? spec.completions : undefined;
  const completedIndexes = typeof status.completedIndexes === 'string' ? status.completedIndexes : '';
  const failedIndexes = typeof status.failedIndexes === 'string' ? status.failedIndexes : undefined;

  if ((completeChanged || failedChanged) && complete && failedCond)
    errs.push(invalid('status.conditions', 'cannot set Complete=True and Failed=true conditions'));
  if ((completeChanged || targetChanged) && complete && has(status, 'FailureTarget'))
    errs.push(invalid('status.conditions', 'cannot set Complete=True and FailureTarget=true conditions'));
  if ((completeChanged || changed('completionTime')) && isSet(status.completionTime) && !complete)
    errs.push(invalid('status.completionTime', 'cannot set completionTime when there is no Complete=True condition', status.completionTime));
  if ((completeChanged || changed('completionTime')) && !isSet(status.completionTime) && complete)
    errs.push({ type: 'FieldValueRequired', field: 'status.completionTime', detail: 'completionTime is required for Complete jobs' });
  if ((changed('startTime') || changed('completionTime')) && time(status.completionTime) < time(status.startTime))
    errs.push(invalid('status.completionTime', 'completionTime cannot be set before startTime', status.completionTime));
  if ((finishedChanged || changed('active')) && finished && isInt(status.active) && status.active > 0)
    errs.push(invalid('status.active', 'active>0 is invalid for finished job', status.active));
  if ((finishedChanged || changed('startTime')) && finished && !isSet(status.startTime))
    errs.push({ type: 'FieldValueRequired', field: 'status.startTime', detail: 'startTime is required for finished job' });
  const uncounted = asMap(status.uncountedTerminatedPods);
  const uncountedCount = ['succeeded', 'failed'].reduce((n, k) => n + (Array.isArray(uncounted[k]) ? (uncounted[k] as unknown[]).length : 0), 0);
  if ((finishedChanged || changed('uncountedTerminatedPods')) && finished && uncountedCount > 0)
    errs.push(invalid('status.uncountedTerminatedPods', 'uncountedTerminatedPods needs to be empty for finished job', status.uncountedTerminatedPods));
  if (changed('completedIndexes') && completions !== undefined) {
    const r = validateIndexesFormat(completedIndexes, completions);
    if ('error' in r) errs.push(invalid('status.completedIndexes', `error parsing completedIndexes: ${r.error}`, completedIndexes));
  }
  if (changed('failedIndexes') && completions !== undefined && isSet(spec.backoffLimitPerIndex) && failedIndexes !== undefined) {
    const r = validateIndexesFormat(failedIndexes, completions);
    if ('error' in r) errs.push(invalid('status.failedIndexes', `error parsing failedIndexes: ${r.error}`, failedIndexes));
  }
  if (changed('completedIndexes') && completedIndexes !== '' && !indexed)
    errs.push(invalid('status.completedIndexes', 'cannot set non-empty completedIndexes when non-indexed completion mode', completedIndexes));
  if (changed('failedIndexes') && !isSet(spec.backoffLimitPerIndex) && failedIndexes !== undefined)
    errs.push(invalid('status.failedIndexes', 'cannot set non-null failedIndexes when backoffLimitPerIndex is null', failedIndexes));
  if ((changed('failedIndexes') || changed('completedIndexes')) && completions !== undefined && failedIndexes !== undefined) {
    const at = firstOverlap(completedIndexes, failedIndexes, completions);
    if (at !== undefined) errs.push(invalid('status.failedIndexes', `failedIndexes and completedIndexes overlap at index: ${at}`, failedIndexes));
  }
  const met = has(status, 'SuccessCriteriaMet');
  if (met && failedCond) errs.push(invalid('status.conditions', 'cannot set SuccessCriteriaMet=True and Failed=true conditions'));
  if (met && has(status, 'FailureTarget')) errs.push(invalid('status.conditions', 'cannot set SuccessCriteriaMet=True and FailureTarget=true conditions'));
  if (isSet(spec.successPolicy) && !met && complete)
    errs.push(invalid('status.conditions', 'cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True'));

  // The transitions.
  for (const type of ['Failed', 'Complete', 'FailureTarget']) {
    if (has(was, type) && !has(status, type)) errs.push(invalid('status.conditions', `cannot disable the terminal ${type}=True condition`));
  }
  const count = (st: Obj, f: string) => (isInt(st[f]) ? st[f] : 0);
  if (count(status, 'failed') < count(was, 'failed')) errs.push(invalid('status.failed', 'cannot decrease the failed counter', count(status, 'failed')));
  // An Indexed Job with completions equal to parallelism may be scaled down, and its count with it.
  const elastic = indexed && isSet(spec.completions) && spec.completions === spec.parallelism;
  if (!elastic && count(status, 'succeeded') < count(was, 'succeeded'))
    errs.push(invalid('status.succeeded', 'cannot decrease the succeeded counter', count(status, 'succeeded')));
  if (isSet(status.completionTime) && isSet(was.completionTime) && changed('completionTime'))
    errs.push(invalid('status.completionTime', 'completionTime cannot be mutated', status.completionTime));
  if (isSet(was.startTime) && changed('startTime') && spec.suspend !== true)
    errs.push({ type: 'FieldValueRequired', field: 'status.startTime', detail: 'startTime cannot be removed for unsuspended job' });
  if (has(was, 'SuccessCriteriaMet') && !met) errs.push(invalid('status.conditions', 'cannot disable the SuccessCriteriaMet=True condition'));
  if (has(was, 'Complete') && !has(was, 'SuccessCriteriaMet') && met)
    errs.push(invalid('status.conditions', 'cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions'));
  return errs;
}
