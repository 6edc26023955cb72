import type { KubeObject } from '@app/apimachinery';
import { cronScheduleError } from './cronjob.schedule.js';
import { defaultCronJob } from './cronjob.strategy.js';
import { validateCronJob, validateCronJobUpdate } from './cronjob.validation.js';

type Obj = Record<string, unknown>;

/** A CronJob as it reaches validation: the schema defaults and the strategy's applied. */
function cronJob(spec: Obj = {}, podSpec: Obj = {}, name = 'hello'): KubeObject {
  const cj: KubeObject = {
    metadata: { name, namespace: 'ns' },
    spec: {
      schedule: '*/1 * * * *',
      concurrencyPolicy: 'Allow',
      suspend: false,
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 1,
      jobTemplate: { spec: { template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'c', image: 'busybox' }], ...podSpec } } } },
      ...spec,
    },
  };
  defaultCronJob(cj);
  return cj;
}
const messages = (errs: { field: string; detail?: string }[]) => errs.map((e) => `${e.field}: ${e.detail ?? ''}`);

describe('cron schedules (robfig/cron ParseStandard)', () => {
  it.each(['*/1 * * * *', '0 3 * * *', '0 0 1,15 * mon-fri', '5-10/2 0-23 ? JAN-dec SUN', '@hourly', '@daily', '@every 1h30m', ' 0 1 * * * '])(
    'accepts %p',
    (s) => {
      expect(cronScheduleError(s)).toBeUndefined();
    },
  );
  it.each([
    ['', 'empty spec string'],
    ['* * * *', 'expected exactly 5 fields, found 4: [* * * *]'],
    ['* * * * * *', 'expected exactly 5 fields, found 6: [* * * * * *]'],
    ['61 * * * *', 'end of range (61) above maximum (59): 61'],
    ['* * 0 * *', 'beginning of range (0) below minimum (1): 0'],
    ['5-2 * * * *', 'beginning of range (5) beyond end of range (2): 5-2'],
    ['*/0 * * * *', 'step of range should be a positive number: */0'],
    ['x * * * *', 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'],
    ['@fortnightly', 'unrecognized descriptor: @fortnightly'],
  ])('refuses %p: %s', (s, msg) => {
    expect(cronScheduleError(s)).toBe(msg);
  });
});

describe('CronJob defaults', () => {
  it("defaults the jobTemplate's pod containers but gives its JobSpec no Job defaults", () => {
    const spec = (cronJob().spec as { jobTemplate: { spec: Obj } }).jobTemplate.spec;
    expect(((spec.template as { spec: { containers: Obj[] } }).spec.containers[0] ?? {}).imagePullPolicy).toBe('Always');
    expect(spec.completions).toBeUndefined();
    expect(spec.backoffLimit).toBeUndefined();
  });
});

describe('CronJob validation', () => {
  it('accepts a defaulted CronJob', () => {
    expect(validateCronJob(cronJob())).toEqual([]);
    expect(validateCronJob(cronJob({ schedule: '@weekly', timeZone: 'America/New_York' }))).toEqual([]);
  });
  it('refuses a TZ or CRON_TZ prefix, pointing at timeZone', () => {
    for (const s of ['TZ=UTC 0 * * *  *', 'CRON_TZ=Europe/Paris 0 * * * *']) {
      expect(messages(validateCronJob(cronJob({ schedule: s })))).toEqual(['spec.schedule: cannot use TZ or CRON_TZ in schedule, use timeZone field instead']);
    }
  });
  it('lets a stored TZ prefix stay on update, but not together with timeZone', () => {
    const old = cronJob({ schedule: 'TZ=UTC 0 * * * *' });
    expect(validateCronJobUpdate(cronJob({ schedule: 'TZ=UTC 5 * * * *' }), old)).toEqual([]);
    expect(messages(validateCronJobUpdate(cronJob({ schedule: 'TZ=UTC 5 * * * *', timeZone: 'UTC' }), old))).toEqual([
      'spec.schedule: cannot use both timeZone field and TZ or CRON_TZ in schedule',
    ]);
  });
  it('requires a schedule and checks the time zone, the concurrency policy and the history limits', () => {
    expect(messages(validateCronJob(cronJob({ schedule: '' })))).toEqual(['spec.schedule: ']);
    expect(messages(validateCronJob(cronJob({ timeZone: 'Mars/Olympus' })))).toEqual(['spec.timeZone: unknown time zone Mars/Olympus']);
    expect(messages(validateCronJob(cronJob({ timeZone: '' })))).toEqual(['spec.timeZone: timeZone must be nil or non-empty string']);
    expect(messages(validateCronJob(cronJob({ concurrencyPolicy: 'Sometimes' })))).toEqual([
      'spec.concurrencyPolicy: supported values: "Allow", "Forbid", "Replace"',
    ]);
    expect(messages(validateCronJob(cronJob({ failedJobsHistoryLimit: -1 })))).toEqual(['spec.failedJobsHistoryLimit: must be greater than or equal to 0']);
  });
  it("validates the jobTemplate like a Job's spec, without a selector of its own", () => {
    expect(messages(validateCronJob(cronJob({}, { restartPolicy: 'Always' })))).toEqual([
      'spec.jobTemplate.spec.template.spec.restartPolicy: valid values: "OnFailure", "Never"',
    ]);
    const withSelector = cronJob();
    ((withSelector.spec as { jobTemplate: { spec: Obj } }).jobTemplate.spec as Obj).selector = { matchLabels: { a: 'b' } };
    expect(messages(validateCronJob(withSelector))).toEqual(['spec.jobTemplate.spec.selector: `selector` will be auto-generated']);
  });
  it('limits the name to 52 characters, leaving room for the suffix of the Jobs it creates', () => {
    expect(messages(validateCronJob(cronJob({}, {}, 'a'.repeat(53))))).toEqual(['metadata.name: must be no more than 52 characters']);
    expect(validateCronJob(cronJob({}, {}, 'a'.repeat(52)))).toEqual([]);
  });
});
