/**
 * Job behaviour as a stored kind (pkg/registry/batch/job, no controller): SetDefaults_Job, the
 * selector and pod labels the server generates on create unless manualSelector is true, status
 * emptied on create and written through /status only.
 */
import type { KubeObject } from '@app/apimachinery';
import { STATUS_STRATEGY, type Strategy, type SubresourceStrategy } from '@app/registry';
import { defaultContainers } from '../../core/pod/pod.strategy.js';
import { CONTROLLER_UID_LABEL, JOB_NAME_LABEL, LEGACY_CONTROLLER_UID_LABEL, LEGACY_JOB_NAME_LABEL } from './job.labels.js';
import { validateJob, validateJobStatusUpdate, validateJobUpdate } from './job.validation.js';
import { withPodSpecWarnings } from '../../core/pod/pod.warnings.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const unset = (v: unknown): boolean => v === undefined || v === null;

/** Largest int32: backoffLimit's default when backoffLimitPerIndex is set. */
const MAX_INT32 = 2147483647;

/**
 * SetDefaults_Job on `spec`: completions and parallelism 1 when both are unset (else parallelism
 * 1 alone), backoffLimit 6 (MaxInt32 with backoffLimitPerIndex), completionMode NonIndexed,
 * suspend false, podReplacementPolicy TerminatingOrFailed (Failed with a podFailurePolicy), and
 * the pod template's container defaults. manualSelector stays unset.
 */
export function defaultJobSpec(spec: Obj): void {
  if (unset(spec.completions) && unset(spec.parallelism)) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  if (unset(spec.parallelism)) spec.parallelism = 1;
  if (unset(spec.backoffLimit)) spec.backoffLimit = unset(spec.backoffLimitPerIndex) ? 6 : MAX_INT32;
  if (unset(spec.completionMode)) spec.completionMode = 'NonIndexed';
  if (unset(spec.suspend)) spec.suspend = false;
  if (unset(spec.podReplacementPolicy)) spec.podReplacementPolicy = unset(spec.podFailurePolicy) ? 'TerminatingOrFailed' : 'Failed';
  if (isObj(spec.template)) defaultContainers(spec.template);
}

/** SetDefaults_Job on a Job. */
export function defaultJob(job: KubeObject): void {
  if (!isObj(job.spec)) return;
  defaultJobSpec(job.spec);
  // A podFailurePolicy's pod condition pattern matches a True condition unless it says otherwise.
  const rules = isObj(job.spec.podFailurePolicy) ? job.spec.podFailurePolicy.rules : undefined;
  for (const rule of Array.isArray(rules) ? rules : []) {
    const patterns = isObj(rule) ? rule.onPodConditions : undefined;
    for (const p of Array.isArray(patterns) ? patterns : []) if (isObj(p) && (unset(p.status) || p.status === '')) p.status = 'True';
  }
}

/**
 * generateSelector: the template gets the job-name and controller-uid labels (both prefixed and
 * legacy; a label the user set is kept, and validation refuses it if it differs), and the
 * selector matches the prefixed controller-uid label. Needs metadata.uid, so it runs after the
 * store assigned it.
 */
export function generateSelector(job: KubeObject): void {
  if (!isObj(job.spec)) return;
  const spec = job.spec;
  if (!isObj(spec.template)) spec.template = {};
  const template = spec.template as Obj;
  if (!isObj(template.metadata)) template.metadata = {};
  const meta = template.metadata as Obj;
  if (!isObj(meta.labels)) meta.labels = {};
  const labels = meta.labels as Obj;
  const name = String(job.metadata.name ?? '');
  const uid = String(job.metadata.uid ?? '');
  for (const key of [LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL]) labels[key] ??= name;
  for (const key of [LEGACY_CONTROLLER_UID_LABEL, CONTROLLER_UID_LABEL]) labels[key] ??= uid;
  if (!isObj(spec.selector)) spec.selector = {};
  const selector = spec.selector as Obj;
  if (!isObj(selector.matchLabels)) selector.matchLabels = {};
  (selector.matchLabels as Obj)[CONTROLLER_UID_LABEL] ??= uid;
}

/** The Job strategy. */
export const jobStrategy: Strategy = withPodSpecWarnings(
  {
    prepareForCreate(job) {
      defaultJob(job);
      if (!isObj(job.spec) || job.spec.manualSelector !== true) generateSelector(job);
      job.status = {};
    },
    prepareForUpdate(job) {
      defaultJob(job);
    },
    validate: validateJob,
    validateUpdate: validateJobUpdate,
  },
  ['spec', 'template', 'spec'],
);

/** /status: only status (and labels, annotations) change, its counters not negative. */
export const jobStatusStrategy: SubresourceStrategy = {
  prepareForUpdate: STATUS_STRATEGY.prepareForUpdate,
  validateUpdate: validateJobStatusUpdate,
};
