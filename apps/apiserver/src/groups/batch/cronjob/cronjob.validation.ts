/**
 * CronJob validation (pkg/apis/batch/validation ValidateCronJobCreate, ValidateCronJobUpdate,
 * validateCronJobSpec, ValidateJobTemplateSpec), with Kubernetes' messages and field paths. The
 * jobTemplate's spec is checked as a Job's (job.validation.ts) except for the selector, which
 * the Job created from it gets generated. Pure: no storage, no clock.
 */
import type { FieldError, KubeObject } from '@app/apimachinery';
import { asMap } from '../../core/core.helpers.js';
import { validateJobSpecFields } from '../job/job.validation.js';
import { CONCURRENCY_POLICIES } from '../batch.overlays.js';
import { cronScheduleError } from './cronjob.schedule.js';

type Obj = Record<string, unknown>;

const NON_NEGATIVE = 'must be greater than or equal to 0';
const isSet = (v: unknown): boolean => v !== undefined && v !== null;
// The cronjob controller names a Job `<cronjob>-<11 characters>`, and a Job name is a DNS-1035 label of at most 63.
const MAX_NAME = 52;
// A tz database name component (https://data.iana.org/time-zones/theory.html#naming), with digits and + tolerated.
const TZ_PART = /^[A-Za-z.\-_0-9+]{1,14}$/;

function nonNegative(v: unknown, field: string): FieldError[] {
  return typeof v === 'number' && v < 0 ? [{ type: 'FieldValueInvalid', field, value: v, detail: NON_NEGATIVE }] : [];
}

/** validateScheduleFormat: a cron schedule, with no TZ unless the stored schedule already had one (and then no timeZone). */
export function validateSchedule(schedule: string, allowTZ: boolean, timeZone: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  const err = cronScheduleError(schedule);
  if (err) errs.push({ type: 'FieldValueInvalid', field, value: schedule, detail: err });
  if (schedule.includes('TZ')) {
    if (!allowTZ) errs.push({ type: 'FieldValueInvalid', field, value: schedule, detail: 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead' });
    else if (isSet(timeZone))
      errs.push({ type: 'FieldValueInvalid', field, value: schedule, detail: 'cannot use both timeZone field and TZ or CRON_TZ in schedule' });
  }
  return errs;
}

/** Whether the runtime's time zone database knows `tz` (Go's time.LoadLocation). */
function knownTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** validateTimeZone: unset, or an explicit tz database name. */
export function validateTimeZone(tz: unknown, field: string): FieldError[] {
  if (!isSet(tz)) return [];
  const s = String(tz);
  if (s === '') return [{ type: 'FieldValueInvalid', field, value: s, detail: 'timeZone must be nil or non-empty string' }];
  const unknown: FieldError = { type: 'FieldValueInvalid', field, value: s, detail: `unknown time zone ${s}` };
  for (const part of s.split('/')) if (part === '.' || part === '..' || part.startsWith('-') || !TZ_PART.test(part)) return [unknown];
  if (s === 'Local') {
    return [{ type: 'FieldValueInvalid', field, value: s, detail: 'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones' }];
  }
  return knownTimeZone(s) ? [] : [unknown];
}

/** ValidateJobTemplateSpec at `path`: a Job's spec without a selector of its own or manualSelector. */
export function validateJobTemplate(template: Obj, path: string): FieldError[] {
  const spec = asMap(template.spec);
  const errs = validateJobSpecFields(spec, `${path}.spec`);
  if (isSet(spec.selector)) {
    errs.push({ type: 'FieldValueInvalid', field: `${path}.spec.selector`, value: spec.selector, detail: '`selector` will be auto-generated' });
  }
  if (spec.manualSelector === true) {
    errs.push({ type: 'FieldValueNotSupported', field: `${path}.spec.manualSelector`, value: true, detail: 'supported values: "nil", "false"' });
  }
  return errs;
}

/** validateCronJobSpec at `spec`; `old` is the stored spec on update. */
export function validateCronJobSpec(spec: Obj, old?: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const schedule = typeof spec.schedule === 'string' ? spec.schedule : '';
  if (schedule === '') errs.push({ type: 'FieldValueRequired', field: 'spec.schedule', detail: '' });
  else errs.push(...validateSchedule(schedule, typeof old?.schedule === 'string' && old.schedule.includes('TZ'), spec.timeZone, 'spec.schedule'));
  errs.push(...nonNegative(spec.startingDeadlineSeconds, 'spec.startingDeadlineSeconds'));
  if (!old || (old.timeZone ?? null) !== (spec.timeZone ?? null)) errs.push(...validateTimeZone(spec.timeZone, 'spec.timeZone'));
  const cp = spec.concurrencyPolicy;
  if (cp === undefined || cp === null || cp === '') errs.push({ type: 'FieldValueRequired', field: 'spec.concurrencyPolicy', detail: '' });
  else if (!CONCURRENCY_POLICIES.includes(String(cp))) {
    const detail = `supported values: ${CONCURRENCY_POLICIES.map((v) => JSON.stringify(v)).join(', ')}`;
    errs.push({ type: 'FieldValueNotSupported', field: 'spec.concurrencyPolicy', value: cp, detail });
  }
  errs.push(...validateJobTemplate(asMap(spec.jobTemplate), 'spec.jobTemplate'));
  errs.push(...nonNegative(spec.successfulJobsHistoryLimit, 'spec.successfulJobsHistoryLimit'));
  errs.push(...nonNegative(spec.failedJobsHistoryLimit, 'spec.failedJobsHistoryLimit'));
  return errs;
}

/** ValidateCronJobCreate without ObjectMeta (the store validates metadata): also a name of at most 52 characters. */
export function validateCronJob(cj: KubeObject): FieldError[] {
  const errs = validateCronJobSpec(asMap(cj.spec));
  const name = String(cj.metadata.name ?? '');
  if (name.length > MAX_NAME)
    errs.push({ type: 'FieldValueInvalid', field: 'metadata.name', value: name, detail: `must be no more than ${MAX_NAME} characters` });
  return errs;
}

/** ValidateCronJobUpdate: the spec checked against the stored one (a TZ prefix already stored may stay). */
export function validateCronJobUpdate(cj: KubeObject, old: KubeObject): FieldError[] {
  return validateCronJobSpec(asMap(cj.spec), asMap(old.spec));
}
