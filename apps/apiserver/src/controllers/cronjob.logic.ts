/**
 * The pure parts of the CronJob controller (kube-controller-manager's cronjob controller v2):
 * which scheduled time is due, the Job made for it, which finished Jobs the history limits
 * drop. Times are milliseconds since the epoch.
 */
import { DateTime } from 'luxon';
import type { KubeObject } from '@app/apimachinery';
import { asMap } from '../groups/core/core.helpers.js';
import { parseCronSchedule, type CronSchedule } from '../groups/batch/cronjob/cronjob.schedule.js';
import { newControllerRef } from './disruption.logic.js';

/** The annotation a CronJob's Job carries: its scheduled time, in the CronJob's time zone. */
export const SCHEDULED_TIMESTAMP_ANNOTATION = 'batch.kubernetes.io/cronjob-scheduled-timestamp';
/** More missed times than this since the last one, and the controller warns. */
export const TOO_MANY_MISSED = 100;

const time = (v: unknown): number | undefined => {
  const t = typeof v === 'string' ? Date.parse(v) : NaN;
  return Number.isFinite(t) ? t : undefined;
};

/** A CronJob's schedule in its time zone (spec.timeZone, else a TZ= prefix, else the process's); an error text when it does not parse. */
export function scheduleOf(cronJob: KubeObject): CronSchedule | string {
  const spec = asMap(cronJob.spec);
  const tz = typeof spec.timeZone === 'string' && spec.timeZone !== '' ? spec.timeZone : undefined;
  return parseCronSchedule(String(spec.schedule ?? ''), tz ?? 'system');
}

export interface DueTime {
  /** The most recent scheduled time not after now, since the last one (or creation); undefined when none. */
  mostRecent?: number;
  /** About how many scheduled times have passed since the last one. */
  missed: number;
}

/**
 * The scheduled time a sync at `now` acts on (mostRecentScheduleTime): the latest activation
 * after the last scheduled time (or the creation), and no earlier than startingDeadlineSeconds
 * before now when `withDeadline`. Throws when two consecutive activations are under a second
 * apart or the schedule has none.
 */
export function dueTime(cronJob: KubeObject, now: number, schedule: CronSchedule, withDeadline: boolean): DueTime {
  const spec = asMap(cronJob.spec);
  let earliest = time(asMap(cronJob.status).lastScheduleTime) ?? time(cronJob.metadata.creationTimestamp) ?? now;
  if (withDeadline && typeof spec.startingDeadlineSeconds === 'number') earliest = Math.max(earliest, now - spec.startingDeadlineSeconds * 1000);
  const t1 = schedule.next(earliest);
  if (t1 === undefined) throw new Error('the schedule has no activation within five years');
  if (now < t1) return { missed: 0 };
  const t2 = schedule.next(t1);
  if (t2 === undefined || now < t2) return { mostRecent: t1, missed: 1 };
  const interval = Math.round((t2 - t1) / 1000);
  if (interval < 1) throw new Error('time difference between two schedules is less than 1 second');
  const missed = Math.floor((now - t1) / 1000 / interval) + 1;
  // The latest activation not after now: searched forward from ever earlier starts, so an
  // irregular schedule (weekdays only, one month of the year) costs no more than a regular one.
  for (const back of [3_600_000, 86_400_000, 8 * 86_400_000, 32 * 86_400_000, 367 * 86_400_000, Infinity]) {
    let t = schedule.next(Math.max(t1 - 1, now - back));
    let last: number | undefined;
    while (t !== undefined && t <= now) {
      last = t;
      t = schedule.next(t);
    }
    if (last !== undefined) return { mostRecent: last, missed };
  }
  return { mostRecent: t1, missed };
}

/** When to look at the CronJob again: just after its next activation after now. */
export function nextCheck(now: number, schedule: CronSchedule): number | undefined {
  const t = schedule.next(now);
  return t === undefined ? undefined : t + 100;
}

/** The deterministic name of the Job for a scheduled time (the minutes since the epoch). */
export function jobName(cronJob: KubeObject, scheduled: number): string {
  return `${cronJob.metadata.name}-${Math.floor(scheduled / 60_000)}`;
}

/** A time as Go's RFC3339 prints it in a zone (`Z` for a zero offset). */
function rfc3339In(t: number, zone: string): string {
  const d = DateTime.fromMillis(t, { zone });
  return d.offset === 0
    ? d
        .toUTC()
        .toISO({ suppressMilliseconds: true })!
        .replace(/\.\d+Z$/, 'Z')
    : d.toISO({ suppressMilliseconds: true })!;
}

/** A time as Go's RFC1123Z prints it in UTC (`Mon, 02 Jan 2006 15:04:05 +0000`). */
export function rfc1123z(t: number): string {
  return DateTime.fromMillis(t, { zone: 'UTC' }).toFormat("ccc, dd LLL yyyy HH:mm:ss '+0000'", { locale: 'en-US' });
}

/** getJobFromTemplate2: the Job a CronJob runs at a scheduled time, owned by it. */
export function jobForCronJob(cronJob: KubeObject, scheduled: number): KubeObject {
  const spec = asMap(cronJob.spec);
  const template = asMap(spec.jobTemplate);
  const meta = asMap(template.metadata);
  const tz = typeof spec.timeZone === 'string' && spec.timeZone !== '' ? spec.timeZone : 'UTC';
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: jobName(cronJob, scheduled),
      namespace: cronJob.metadata.namespace,
      labels: { ...asMap(meta.labels) } as Record<string, string>,
      annotations: { ...asMap(meta.annotations), [SCHEDULED_TIMESTAMP_ANNOTATION]: rfc3339In(scheduled, tz) } as Record<string, string>,
      ownerReferences: [newControllerRef(cronJob, 'batch/v1', 'CronJob')],
    },
    spec: structuredClone(asMap(template.spec)),
  };
}

/** The condition that finished a Job (Complete or Failed, status True), if any. */
export function finishedCondition(job: KubeObject): 'Complete' | 'Failed' | undefined {
  const conditions = Array.isArray(asMap(job.status).conditions) ? (asMap(job.status).conditions as unknown[]) : [];
  for (const c of conditions.map(asMap)) if ((c.type === 'Complete' || c.type === 'Failed') && c.status === 'True') return c.type;
  return undefined;
}

/** The reference status.active keeps to a Job. */
export function jobRef(job: KubeObject): Record<string, unknown> {
  return {
    kind: 'Job',
    namespace: job.metadata.namespace,
    name: job.metadata.name,
    uid: job.metadata.uid,
    apiVersion: 'batch/v1',
    resourceVersion: job.metadata.resourceVersion,
  };
}

/**
 * The finished Jobs the history limits drop (cleanupFinishedJobs): the oldest by start time
 * (Jobs never started last), beyond successfulJobsHistoryLimit of the succeeded and
 * failedJobsHistoryLimit of the failed.
 */
export function jobsBeyondHistory(cronJob: KubeObject, jobs: KubeObject[]): KubeObject[] {
  const spec = asMap(cronJob.spec);
  const byStart = (a: KubeObject, b: KubeObject): number => {
    const sa = time(asMap(a.status).startTime);
    const sb = time(asMap(b.status).startTime);
    if (sa === undefined || sb === undefined) return sa === sb ? String(a.metadata.name).localeCompare(String(b.metadata.name)) : sa === undefined ? 1 : -1;
    return sa - sb || String(a.metadata.name).localeCompare(String(b.metadata.name));
  };
  const drop: KubeObject[] = [];
  for (const [kind, limit] of [
    ['Complete', spec.successfulJobsHistoryLimit],
    ['Failed', spec.failedJobsHistoryLimit],
  ] as const) {
    if (typeof limit !== 'number') continue;
    const finished = jobs.filter((j) => finishedCondition(j) === kind).sort(byStart);
    drop.push(...finished.slice(0, Math.max(0, finished.length - limit)));
  }
  return drop;
}
