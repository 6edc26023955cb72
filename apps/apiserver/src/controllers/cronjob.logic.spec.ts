import type { KubeObject } from '@app/apimachinery';
import { parseCronSchedule, type CronSchedule } from '../groups/batch/cronjob/cronjob.schedule.js';
import { dueTime, jobForCronJob, jobName, jobsBeyondHistory, nextCheck, rfc1123z, SCHEDULED_TIMESTAMP_ANNOTATION } from './cronjob.logic.js';

const at = (iso: string): number => Date.parse(iso);
const iso = (t: number | undefined): string | undefined => (t === undefined ? undefined : new Date(t).toISOString());
const sched = (s: string, zone = 'UTC'): CronSchedule => {
  const p = parseCronSchedule(s, zone);
  if (typeof p === 'string') throw new Error(p);
  return p;
};
/** The first n activations after an instant. */
const run = (s: CronSchedule, from: string, n: number): (string | undefined)[] => {
  const out: (string | undefined)[] = [];
  let t: number | undefined = at(from);
  for (let i = 0; i < n && t !== undefined; i++) out.push(iso((t = s.next(t))));
  return out;
};

const cronJob = (spec: Record<string, unknown>, status: Record<string, unknown> = {}, created = '2026-01-01T00:00:00Z'): KubeObject => ({
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: { name: 'nightly', namespace: 'ops', uid: 'cj-uid', creationTimestamp: created },
  spec: { schedule: '*/5 * * * *', jobTemplate: { spec: { template: { spec: { containers: [] } } } }, ...spec },
  status,
});

describe('cron schedules: next activation', () => {
  it('steps through minutes, hours, days and months on the wall clock', () => {
    expect(run(sched('*/15 * * * *'), '2026-03-01T10:07:30Z', 3)).toEqual(['2026-03-01T10:15:00.000Z', '2026-03-01T10:30:00.000Z', '2026-03-01T10:45:00.000Z']);
    expect(run(sched('0 9 * * 1-5'), '2026-03-06T10:00:00Z', 2)).toEqual(['2026-03-09T09:00:00.000Z', '2026-03-10T09:00:00.000Z']); // Friday, then Monday
    expect(run(sched('30 23 31 * *'), '2026-03-31T23:30:00Z', 2)).toEqual(['2026-05-31T23:30:00.000Z', '2026-07-31T23:30:00.000Z']);
    expect(run(sched('@yearly'), '2026-06-01T00:00:00Z', 1)).toEqual(['2027-01-01T00:00:00.000Z']);
    expect(run(sched('@hourly'), '2026-06-01T00:00:00Z', 1)).toEqual(['2026-06-01T01:00:00.000Z']);
    expect(run(sched('0 0 29 feb *'), '2026-01-01T00:00:00Z', 1)).toEqual(['2028-02-29T00:00:00.000Z']);
    expect(sched('0 0 31 2 *').next(at('2026-01-01T00:00:00Z'))).toBeUndefined();
  });

  it('combines day of month and day of week as robfig does', () => {
    // Both restricted: either may match (the 13th, and every Friday).
    expect(run(sched('0 0 13 * 5'), '2026-03-01T00:00:00Z', 3)).toEqual(['2026-03-06T00:00:00.000Z', '2026-03-13T00:00:00.000Z', '2026-03-20T00:00:00.000Z']);
    // A `*` day of week: the day of month must match.
    expect(run(sched('0 0 13 * *'), '2026-03-01T00:00:00Z', 1)).toEqual(['2026-03-13T00:00:00.000Z']);
    // A stepped `*/2` is no star: either matches (odd days, and Sundays).
    expect(run(sched('0 0 */2 * 0'), '2026-03-02T00:00:00Z', 2)).toEqual(['2026-03-03T00:00:00.000Z', '2026-03-05T00:00:00.000Z']);
  });

  it('reads the fields in the schedule’s time zone, across daylight saving changes', () => {
    expect(run(sched('0 9 * * *', 'America/New_York'), '2026-03-07T00:00:00Z', 2)).toEqual(['2026-03-07T14:00:00.000Z', '2026-03-08T13:00:00.000Z']);
    // 02:30 does not exist in Berlin on 2026-03-29: that day has no run.
    expect(run(sched('30 2 * * *', 'Europe/Berlin'), '2026-03-28T12:00:00Z', 2)).toEqual(['2026-03-30T00:30:00.000Z', '2026-03-31T00:30:00.000Z']);
    const prefixed = parseCronSchedule('CRON_TZ=Asia/Tokyo 0 0 * * *');
    expect(typeof prefixed === 'string' ? prefixed : iso(prefixed.next(at('2026-03-01T00:00:00Z')))).toBe('2026-03-01T15:00:00.000Z');
    expect(parseCronSchedule('TZ=Mars/Olympus 0 0 * * *')).toBe('provided bad location Mars/Olympus: unknown time zone Mars/Olympus');
  });

  it('runs @every at a constant delay in whole seconds', () => {
    expect(run(sched('@every 90s'), '2026-03-01T00:00:00.400Z', 2)).toEqual(['2026-03-01T00:01:30.000Z', '2026-03-01T00:03:00.000Z']);
    expect(run(sched('@every 10ms'), '2026-03-01T00:00:00Z', 1)).toEqual(['2026-03-01T00:00:01.000Z']);
  });
});

describe('the CronJob controller’s due time', () => {
  it('is the latest activation since the last scheduled time, with the count of those missed', () => {
    const s = sched('*/5 * * * *');
    expect(dueTime(cronJob({}, { lastScheduleTime: '2026-03-01T10:00:00Z' }), at('2026-03-01T10:04:59Z'), s, true)).toEqual({ missed: 0 });
    expect(dueTime(cronJob({}, { lastScheduleTime: '2026-03-01T10:00:00Z' }), at('2026-03-01T10:05:01Z'), s, true)).toEqual({
      mostRecent: at('2026-03-01T10:05:00Z'),
      missed: 1,
    });
    expect(dueTime(cronJob({}, { lastScheduleTime: '2026-03-01T10:00:00Z' }), at('2026-03-01T11:02:00Z'), s, true)).toEqual({
      mostRecent: at('2026-03-01T11:00:00Z'),
      missed: 12,
    });
    // Never run: counted from the creation.
    expect(dueTime(cronJob({}, {}, '2026-03-01T09:58:00Z'), at('2026-03-01T10:01:00Z'), s, true).mostRecent).toBe(at('2026-03-01T10:00:00Z'));
  });

  it('looks no further back than startingDeadlineSeconds', () => {
    const s = sched('*/5 * * * *');
    const cj = cronJob({ startingDeadlineSeconds: 60 }, { lastScheduleTime: '2026-03-01T10:00:00Z' });
    expect(dueTime(cj, at('2026-03-01T11:02:00Z'), s, true)).toEqual({ missed: 0 });
    expect(dueTime(cj, at('2026-03-01T11:00:30Z'), s, true)).toEqual({ mostRecent: at('2026-03-01T11:00:00Z'), missed: 1 });
    expect(dueTime(cj, at('2026-03-01T11:02:00Z'), s, false).mostRecent).toBe(at('2026-03-01T11:00:00Z'));
  });

  it('finds the latest activation of an irregular schedule, far back', () => {
    const weekdays = sched('0 9 * * 1-5');
    // Sunday noon, last run a month ago: the latest is Friday 09:00.
    const due = dueTime(cronJob({}, { lastScheduleTime: '2026-02-06T09:00:00Z' }), at('2026-03-08T12:00:00Z'), weekdays, true);
    expect(iso(due.mostRecent)).toBe('2026-03-06T09:00:00.000Z');
    expect(due.missed).toBeGreaterThan(20);
    const yearly = sched('0 0 1 1 *');
    expect(iso(dueTime(cronJob({}, {}, '2020-06-01T00:00:00Z'), at('2026-03-08T12:00:00Z'), yearly, true).mostRecent)).toBe('2026-01-01T00:00:00.000Z');
  });

  it('refuses a schedule that never fires', () => {
    expect(() => dueTime(cronJob({ schedule: '0 0 31 2 *' }), at('2026-03-08T12:00:00Z'), sched('0 0 31 2 *'), true)).toThrow(
      'no activation within five years',
    );
  });

  it('checks again just after the next activation', () => {
    expect(nextCheck(at('2026-03-01T10:02:00Z'), sched('*/5 * * * *'))).toBe(at('2026-03-01T10:05:00Z') + 100);
  });
});

describe('the Job of a scheduled time', () => {
  it('is named by the minute, owned by the CronJob, and carries the template and the scheduled time', () => {
    const t = at('2026-03-01T10:05:00Z');
    const cj = cronJob({
      timeZone: 'Europe/Berlin',
      jobTemplate: { metadata: { labels: { app: 'x' }, annotations: { a: 'b' } }, spec: { backoffLimit: 2, template: { spec: { containers: [] } } } },
    });
    const job = jobForCronJob(cj, t);
    expect(job.metadata.name).toBe(`nightly-${t / 60_000}`);
    expect(jobName(cj, t + 59_000)).toBe(job.metadata.name);
    expect(job.metadata.labels).toEqual({ app: 'x' });
    expect(job.metadata.annotations).toEqual({ a: 'b', [SCHEDULED_TIMESTAMP_ANNOTATION]: '2026-03-01T11:05:00+01:00' });
    expect(job.metadata.ownerReferences).toEqual([
      { apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly', uid: 'cj-uid', controller: true, blockOwnerDeletion: true },
    ]);
    expect(job.spec).toEqual({ backoffLimit: 2, template: { spec: { containers: [] } } });
    expect(jobForCronJob(cronJob({}), t).metadata.annotations).toEqual({ [SCHEDULED_TIMESTAMP_ANNOTATION]: '2026-03-01T10:05:00Z' });
  });

  it('prints times as Go’s RFC1123Z in UTC', () => {
    expect(rfc1123z(at('2026-03-01T10:05:00Z'))).toBe('Sun, 01 Mar 2026 10:05:00 +0000');
  });
});

describe('history limits', () => {
  const job = (name: string, condition: string | undefined, start?: string): KubeObject => ({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name },
    status: { ...(start ? { startTime: start } : {}), ...(condition ? { conditions: [{ type: condition, status: 'True' }] } : {}) },
  });
  it('drops the oldest finished Jobs beyond each limit, never-started ones last', () => {
    const jobs = [
      job('s3', 'Complete', '2026-03-01T03:00:00Z'),
      job('s1', 'Complete', '2026-03-01T01:00:00Z'),
      job('s0', 'Complete'),
      job('s2', 'Complete', '2026-03-01T02:00:00Z'),
      job('f1', 'Failed', '2026-03-01T01:00:00Z'),
      job('f2', 'Failed', '2026-03-01T02:00:00Z'),
      job('running', undefined, '2026-03-01T00:00:00Z'),
    ];
    const names = (cj: KubeObject) => jobsBeyondHistory(cj, jobs).map((j) => j.metadata.name);
    expect(names(cronJob({ successfulJobsHistoryLimit: 2, failedJobsHistoryLimit: 1 }))).toEqual(['s1', 's2', 'f1']);
    expect(names(cronJob({ successfulJobsHistoryLimit: 0, failedJobsHistoryLimit: 0 }))).toEqual(['s1', 's2', 's3', 's0', 'f1', 'f2']);
    expect(names(cronJob({}))).toEqual([]);
  });
});
