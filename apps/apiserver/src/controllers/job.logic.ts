/**
 * The computation of the Job controller (kube-controller-manager's job controller): the pods a
 * Job should have now, the pod it creates from its template (with the tracking finalizer, and in
 * Indexed mode its completion index), the completion indexes as kube spells them ("0-2,5"), and
 * when a Job is complete or has failed. Pure: job.controller.ts does the reads and writes.
 */
import type { KubeObject } from '@app/apimachinery';
import { asMap } from '../groups/core/core.helpers.js';
import { newControllerRef } from './disruption.logic.js';

/** Keeps a finished pod until the controller has counted it. */
export const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';
/** An Indexed Job's pod's index (annotation and label). */
export const COMPLETION_INDEX = 'batch.kubernetes.io/job-completion-index';
/** How many times a pod's index had failed before the pod was created (backoffLimitPerIndex). */
export const INDEX_FAILURE_COUNT = 'batch.kubernetes.io/job-index-failure-count';
/** How many failures of the index a podFailurePolicy's Ignore rule let go before the pod was created. */
export const INDEX_IGNORED_FAILURE_COUNT = 'batch.kubernetes.io/job-index-ignored-failure-count';

type Obj = Record<string, unknown>;
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** A Job condition. */
export interface JobCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastProbeTime?: string;
  lastTransitionTime?: string;
}

/** The Job's conditions. */
export function conditionsOf(job: KubeObject): JobCondition[] {
  const c = asMap(job.status).conditions;
  return (Array.isArray(c) ? c : []).map((x) => ({ ...(asMap(x) as unknown as JobCondition) }));
}

/** Whether the Job has finished: a Complete or Failed condition that is True. */
export function isFinished(job: KubeObject): boolean {
  return conditionsOf(job).some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
}

/** The terminal condition a Job's decision asks for: `Complete` or `Failed`, with its reason and message. */
export interface JobVerdict {
  type: 'Complete' | 'Failed';
  reason: string;
  message: string;
}

/**
 * The verdict an earlier sync recorded as an interim condition (SuccessCriteriaMet first, then
 * FailureTarget, as kube reads them), still waiting for its terminal condition; undefined when
 * there is none or the Job has finished.
 */
export function recordedVerdict(job: KubeObject): JobVerdict | undefined {
  if (isFinished(job)) return undefined;
  const conditions = conditionsOf(job);
  for (const [interim, type] of [
    ['SuccessCriteriaMet', 'Complete'],
    ['FailureTarget', 'Failed'],
  ] as const) {
    const c = conditions.find((x) => x.type === interim && x.status === 'True');
    if (c) return { type, reason: c.reason ?? '', message: c.message ?? '' };
  }
  return undefined;
}

/** Whether the Job runs in Indexed completion mode. */
export function isIndexed(job: KubeObject): boolean {
  return asMap(job.spec).completionMode === 'Indexed';
}

/** A pod's completion index, undefined when it has none (or not a valid one). */
export function podIndex(pod: KubeObject): number | undefined {
  const v = asMap(pod.metadata.annotations)[COMPLETION_INDEX];
  if (typeof v !== 'string' || !/^(0|[1-9]\d{0,8})$/.test(v)) return undefined;
  return Number(v);
}

/** Parses completedIndexes ("1,3-5") into a set; what cannot be read is left out. */
export function parseIndexes(text: unknown): Set<number> {
  const out = new Set<number>();
  if (typeof text !== 'string') return out;
  for (const part of text.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) continue;
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    for (let i = from; i <= to && i - from < 1_000_000; i++) out.add(i);
  }
  return out;
}

/** Spells a set of indexes as kube does: ascending, each run of consecutive indexes as "a-b", commas between. */
export function formatIndexes(indexes: Iterable<number>): string {
  const sorted = [...new Set(indexes)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(j === i ? String(sorted[i]) : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/** A pod that finished: Succeeded or Failed. */
export function podFinished(pod: KubeObject): 'Succeeded' | 'Failed' | undefined {
  const phase = asMap(pod.status).phase;
  return phase === 'Succeeded' || phase === 'Failed' ? phase : undefined;
}

export interface PolicyMatch {
  action: 'FailJob' | 'Ignore' | 'Count' | 'FailIndex';
  message: string;
}

/**
 * The first rule of the Job's podFailurePolicy a failed pod matches (matchPodFailurePolicy):
 * `onExitCodes` on a terminated container (init or main, the named one when given) with a
 * non-zero exit code In or NotIn the values; `onPodConditions` on a condition of the type with
 * the status (True by default). Undefined for a pod that has not failed or matches no rule.
 */
export function matchPodFailurePolicy(job: KubeObject, pod: KubeObject): PolicyMatch | undefined {
  const rules = asMap(asMap(job.spec).podFailurePolicy).rules;
  if (!Array.isArray(rules) || podFinished(pod) !== 'Failed') return undefined;
  const status = asMap(pod.status);
  const containers = [
    ...(Array.isArray(status.initContainerStatuses) ? status.initContainerStatuses : []),
    ...(Array.isArray(status.containerStatuses) ? status.containerStatuses : []),
  ].map(asMap);
  const where = `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
  for (const [i, raw] of rules.entries()) {
    const rule = asMap(raw);
    const action = String(rule.action) as PolicyMatch['action'];
    const onExit = asMap(rule.onExitCodes);
    if (rule.onExitCodes !== undefined) {
      const values = Array.isArray(onExit.values) ? (onExit.values as unknown[]) : [];
      for (const c of containers) {
        const code = asMap(asMap(c.state).terminated).exitCode;
        if (typeof code !== 'number' || code === 0) continue;
        if (typeof onExit.containerName === 'string' && onExit.containerName !== c.name) continue;
        if (values.includes(code) === (onExit.operator === 'In'))
          return { action, message: `Container ${String(c.name)} for pod ${where} failed with exit code ${code} matching ${action} rule at index ${i}` };
      }
    }
    const patterns = Array.isArray(rule.onPodConditions) ? rule.onPodConditions.map(asMap) : [];
    const conditions = (Array.isArray(status.conditions) ? status.conditions : []).map(asMap);
    for (const pattern of patterns) {
      const want = typeof pattern.status === 'string' ? pattern.status : 'True';
      if (conditions.some((c) => c.type === pattern.type && c.status === want))
        return { action, message: `Pod ${where} has condition ${String(pattern.type)} matching ${action} rule at index ${i}` };
    }
  }
  return undefined;
}

/** A pod that counts as active: not finished and not being deleted. */
export function podActive(pod: KubeObject): boolean {
  return podFinished(pod) === undefined && !pod.metadata.deletionTimestamp;
}

/** The value of `spec.managedBy` that names this controller (kube's batch.JobControllerName). */
export const JOB_CONTROLLER_NAME = 'kubernetes.io/job-controller';

/** Whether another controller manages the Job (`spec.managedBy` set to another name). */
export function managedElsewhere(job: KubeObject): boolean {
  const by = asMap(job.spec).managedBy;
  return typeof by === 'string' && by !== JOB_CONTROLLER_NAME;
}

/** Whether the Job limits failures per index (an Indexed Job with backoffLimitPerIndex). */
export function hasBackoffLimitPerIndex(job: KubeObject): boolean {
  return isIndexed(job) && typeof asMap(job.spec).backoffLimitPerIndex === 'number';
}

/** A count annotation of a pod (0 when absent or not a count). */
function countAnnotation(pod: KubeObject, key: string): number {
  const v = asMap(pod.metadata.annotations)[key];
  return typeof v === 'string' && /^\d{1,9}$/.test(v) ? Number(v) : 0;
}

/**
 * Whether a failed pod fails its index (kube's isIndexFailed): its podFailurePolicy verdict is
 * FailIndex, or its index has now failed more than backoffLimitPerIndex times.
 */
export function failsIndex(job: KubeObject, pod: KubeObject, verdict: PolicyMatch | undefined): boolean {
  if (verdict?.action === 'FailIndex') return true;
  return countAnnotation(pod, INDEX_FAILURE_COUNT) + 1 > num(asMap(job.spec).backoffLimitPerIndex);
}

/** The failures of its index a pod records (counted and ignored). */
function indexFailuresRecorded(pod: KubeObject): number {
  return countAnnotation(pod, INDEX_FAILURE_COUNT) + countAnnotation(pod, INDEX_IGNORED_FAILURE_COUNT);
}

/**
 * The latest failed pod of `index`: the one recording the most failures of its index (each
 * replacement carries its predecessor's count plus one), the later finished on a tie.
 */
export function lastFailedPodOfIndex(pods: KubeObject[], index: number): KubeObject | undefined {
  let last: KubeObject | undefined;
  for (const p of pods) {
    if (podIndex(p) !== index || podFinished(p) !== 'Failed') continue;
    if (!last) {
      last = p;
      continue;
    }
    const d = indexFailuresRecorded(p) - indexFailuresRecorded(last);
    if (d > 0 || (d === 0 && podFinishedAt(p) > podFinishedAt(last))) last = p;
  }
  return last;
}

/**
 * The failure counts a new pod of `index` starts with (kube's getNewIndexFailureCounts): those of
 * the index's latest failed pod, plus that pod's own failure (in the ignored count when the
 * podFailurePolicy let it go).
 */
export function indexFailureCounts(
  pods: KubeObject[],
  index: number,
  verdict: (p: KubeObject) => PolicyMatch | undefined,
): { failures: number; ignored: number } {
  const last = lastFailedPodOfIndex(pods, index);
  if (!last) return { failures: 0, ignored: 0 };
  const ignoredNow = verdict(last)?.action === 'Ignore';
  return {
    failures: countAnnotation(last, INDEX_FAILURE_COUNT) + (ignoredNow ? 0 : 1),
    ignored: countAnnotation(last, INDEX_IGNORED_FAILURE_COUNT) + (ignoredNow ? 1 : 0),
  };
}

/**
 * When a pod finished (kube's getFinishedTime), in ms: the last of its containers' finishedAt once
 * all have terminated, else when its Ready condition turned False, else its deletion time less
 * its grace period, else its creation.
 */
export function podFinishedAt(pod: KubeObject): number {
  const status = asMap(pod.status);
  const containers = Array.isArray(status.containerStatuses) ? status.containerStatuses : [];
  if (containers.length) {
    const ends = containers.map((c) => Date.parse(String(asMap(asMap(asMap(c).state).terminated).finishedAt ?? '')));
    if (ends.every((t) => Number.isFinite(t))) return Math.max(...ends);
  }
  const ready = (Array.isArray(status.conditions) ? status.conditions : []).map(asMap).find((c) => c.type === 'Ready');
  const readyFalse = ready?.status === 'False' ? Date.parse(String(ready.lastTransitionTime ?? '')) : NaN;
  if (Number.isFinite(readyFalse)) return readyFalse;
  const deleted = Date.parse(String(pod.metadata.deletionTimestamp ?? ''));
  if (Number.isFinite(deleted)) return deleted - num(pod.metadata.deletionGracePeriodSeconds) * 1000;
  return Date.parse(String(pod.metadata.creationTimestamp ?? '')) || 0;
}

/** A Job's failures since its last success, and when the last of them happened (ms). */
export interface BackoffRecord {
  failures: number;
  lastFailure?: number;
}

/** The record after the pods a sync found newly finished (kube's newBackoffRecord). */
export function nextBackoffRecord(prev: BackoffRecord | undefined, succeeded: KubeObject[], failed: KubeObject[]): BackoffRecord {
  const record: BackoffRecord = prev ? { ...prev } : { failures: 0 };
  const failTimes = failed.map(podFinishedAt).sort((a, b) => a - b);
  if (succeeded.length === 0) {
    if (failTimes.length === 0) return record;
    return { failures: record.failures + failTimes.length, lastFailure: failTimes[failTimes.length - 1] };
  }
  // A success starts over: only failures after the latest success count.
  const lastSuccess = Math.max(...succeeded.map(podFinishedAt));
  const after = failTimes.filter((t) => t > lastSuccess);
  return after.length ? { failures: after.length, lastFailure: after[after.length - 1] } : { failures: 0 };
}

/** The longest pause before a failed pod is replaced (kube's MaxJobPodFailureBackOff). */
export const MAX_POD_FAILURE_BACKOFF_MS = 600_000;

/** How long pod creation must still wait after `failures` failures, the last at `lastFailure`. */
export function backoffRemainingMs(failures: number, lastFailure: number | undefined, now: number, baseMs: number): number {
  if (failures <= 0 || lastFailure === undefined) return 0;
  const pause = Math.min(baseMs * 2 ** Math.min(failures - 1, 30), MAX_POD_FAILURE_BACKOFF_MS);
  return Math.max(0, lastFailure + pause - now);
}

/**
 * How long a new pod of `index` must still wait (backoffLimitPerIndex; kube's
 * getRemainingTimePerIndex): by the failures its latest failed pod records, plus that failure.
 */
export function indexBackoffRemainingMs(pods: KubeObject[], index: number, now: number, baseMs: number): number {
  const last = lastFailedPodOfIndex(pods, index);
  if (!last) return 0;
  return backoffRemainingMs(indexFailuresRecorded(last) + 1, podFinishedAt(last), now, baseMs);
}

/** A pod being deleted that has not finished. */
export function podTerminating(pod: KubeObject): boolean {
  return podFinished(pod) === undefined && !!pod.metadata.deletionTimestamp;
}

/**
 * Whether only failed pods are replaced (kube's onlyReplaceFailedPods): `podReplacementPolicy:
 * Failed`, or any Job with a `podFailurePolicy`. Such a Job waits for its terminating pods to be
 * gone before it replaces them, and does not count them as failed unless they end Failed.
 */
export function onlyReplaceFailedPods(job: KubeObject): boolean {
  const spec = asMap(job.spec);
  return spec.podReplacementPolicy === 'Failed' || (spec.podFailurePolicy !== undefined && spec.podFailurePolicy !== null);
}

/** Whether the pod still carries the tracking finalizer (it is not counted yet). */
export function hasTrackingFinalizer(pod: KubeObject): boolean {
  const f = pod.metadata.finalizers;
  return Array.isArray(f) && f.includes(JOB_TRACKING_FINALIZER);
}

/** The pod to create for the Job (in Indexed mode, for `index`); the server names it. */
export function podForJob(job: KubeObject, index?: number, counts?: { failures: number; ignored: number }): KubeObject {
  const template = asMap(asMap(job.spec).template);
  const meta = asMap(template.metadata);
  const name = job.metadata.name ?? '';
  const copy = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
  const labels = { ...(asMap(meta.labels) as Record<string, string>) };
  const annotations = { ...(asMap(meta.annotations) as Record<string, string>) };
  const spec = copy(asMap(template.spec));
  if (index !== undefined) {
    labels[COMPLETION_INDEX] = String(index);
    annotations[COMPLETION_INDEX] = String(index);
    // kube names an Indexed Job's pods' hosts after the Job and the index.
    spec.hostname ??= `${name}-${index}`;
    if (hasBackoffLimitPerIndex(job)) {
      annotations[INDEX_FAILURE_COUNT] = String(counts?.failures ?? 0);
      if (counts?.ignored) annotations[INDEX_IGNORED_FAILURE_COUNT] = String(counts.ignored);
    }
  }
  const finalizers = Array.isArray(meta.finalizers) ? [...(meta.finalizers as string[])] : [];
  if (!finalizers.includes(JOB_TRACKING_FINALIZER)) finalizers.push(JOB_TRACKING_FINALIZER);
  const metadata: KubeObject['metadata'] = {
    generateName: index === undefined ? `${name}-` : `${name}-${index}-`,
    namespace: job.metadata.namespace,
    labels,
    finalizers,
    ownerReferences: [newControllerRef(job, 'batch/v1', 'Job')],
  };
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec };
}

/**
 * How many pods should be active now (NonIndexed): parallelism, but no more than the completions
 * still missing; without completions (a work queue) none once one pod has succeeded.
 */
export function wantedActive(job: KubeObject, succeeded: number): number {
  const spec = asMap(job.spec);
  const parallelism = typeof spec.parallelism === 'number' ? spec.parallelism : 1;
  if (typeof spec.completions !== 'number') return succeeded > 0 ? 0 : parallelism;
  return Math.max(0, Math.min(parallelism, spec.completions - succeeded));
}

/**
 * The indexes to start pods for (Indexed): the lowest ones neither succeeded nor running, as
 * many as parallelism leaves room for.
 */
export function indexesToStart(job: KubeObject, succeeded: Set<number>, running: Set<number>, failed: ReadonlySet<number> = new Set()): number[] {
  const spec = asMap(job.spec);
  const completions = num(spec.completions);
  const parallelism = typeof spec.parallelism === 'number' ? spec.parallelism : 1;
  const room = Math.max(0, parallelism - running.size);
  const out: number[] = [];
  for (let i = 0; i < completions && out.length < room; i++) if (!succeeded.has(i) && !running.has(i) && !failed.has(i)) out.push(i);
  return out;
}

/** Whether the Job has all the completions it asks for (a work queue: one success and nothing active). */
export function completionsReached(job: KubeObject, succeeded: number, succeededIndexes: Set<number>, active: number): boolean {
  const spec = asMap(job.spec);
  if (isIndexed(job)) return succeededIndexes.size >= num(spec.completions);
  if (typeof spec.completions !== 'number') return succeeded > 0 && active === 0;
  return succeeded >= spec.completions;
}

/**
 * The message of the first rule of an Indexed Job's `successPolicy` that its succeeded indexes
 * meet (kube's matchSuccessPolicy), or undefined. A rule with `succeededIndexes` is met when all
 * of those indexes succeeded, or, with `succeededCount` too, that many of them; a rule with only
 * `succeededCount` when that many indexes succeeded in all. Indexes at or beyond `completions`
 * are not counted, and a rule whose indexes are all out of range never matches.
 */
export function successPolicyMatch(job: KubeObject, succeededIndexes: ReadonlySet<number>): string | undefined {
  const spec = asMap(job.spec);
  const rules = asMap(spec.successPolicy).rules;
  if (!isIndexed(job) || !Array.isArray(rules) || succeededIndexes.size === 0) return undefined;
  const completions = num(spec.completions);
  for (const [i, raw] of rules.entries()) {
    const rule = asMap(raw);
    const count = typeof rule.succeededCount === 'number' ? rule.succeededCount : undefined;
    if (typeof rule.succeededIndexes === 'string') {
      const required = [...parseIndexes(rule.succeededIndexes)].filter((x) => x < completions);
      if (required.length === 0) continue;
      const contained = required.filter((x) => succeededIndexes.has(x)).length;
      if (contained === required.length || (count !== undefined && contained >= count)) return `Matched rules at index ${i}`;
    } else if (count !== undefined && [...succeededIndexes].filter((x) => x < completions).length >= count) {
      return `Matched rules at index ${i}`;
    }
  }
  return undefined;
}

/** Sets a condition: replaced when its status, reason or message change (lastTransitionTime kept while the status stays). */
export function withCondition(conditions: JobCondition[], next: JobCondition, now: string): JobCondition[] {
  const cur = conditions.find((c) => c.type === next.type);
  if (cur && cur.status === next.status && cur.reason === next.reason && cur.message === next.message) return conditions;
  const stamped = { ...next, lastProbeTime: now, lastTransitionTime: cur && cur.status === next.status ? (cur.lastTransitionTime ?? now) : now };
  return cur ? conditions.map((c) => (c === cur ? stamped : c)) : [...conditions, stamped];
}

/** The status counts as written: zero counts of succeeded and failed left out, as kube omits them. */
export function statusCounts(status: Obj): Obj {
  const out: Obj = { ...status };
  for (const k of ['succeeded', 'failed']) if (!num(out[k])) delete out[k];
  if (out.completedIndexes === '') delete out.completedIndexes;
  return out;
}
