/**
 * Rules of batch/v1 Job and CronJob as stored kinds (no controllers): defaults
 * (pkg/apis/batch/v1 defaults.go and the pod template's core defaults), the selector the job
 * strategy generates, validation (pkg/apis/batch/validation) and kubectl's columns (printJob,
 * printCronJob).
 */
import type { RowGroup } from './conformance.types.js';

const NS = 'cf-batch';
const JOBS = `/apis/batch/v1/namespaces/${NS}/jobs`;
const CRONJOBS = `/apis/batch/v1/namespaces/${NS}/cronjobs`;
const MERGE = { 'content-type': 'application/merge-patch+json' };
const TABLE = 'application/json;as=Table;g=meta.k8s.io;v=v1';

type Obj = Record<string, unknown>;
/** A pod template of one busybox container restarting Never; `podSpec` adds or replaces fields. */
const template = (podSpec: Obj = {}) => ({ spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox:1.36' }], ...podSpec } });
/** A Job named `name`; `spec` and `podSpec` add or replace fields. */
const job = (name: string, spec: Obj = {}, podSpec: Obj = {}) => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name },
  spec: { template: template(podSpec), ...spec },
});
/** A CronJob named `name` on `schedule`; `spec` adds or replaces fields. */
const cronJob = (name: string, schedule: string, spec: Obj = {}, podSpec: Obj = {}) => ({
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: { name },
  spec: { schedule, jobTemplate: { spec: { template: template(podSpec) } }, ...spec },
});

/** The group. */
export const BATCH: RowGroup = {
  name: 'batch/v1 Job and CronJob',
  namespace: NS,
  rows: [
    {
      id: 'batch-1',
      rule: "A Job gets Kubernetes' defaults, a selector on its uid and the generated pod labels, generation 1 and an empty status",
      source: 'upstream pkg/apis/batch/v1 defaults.go (SetDefaults_Job); pkg/registry/batch/job strategy.go (generateSelector)',
      upstream:
        '201: completions 1, parallelism 1, backoffLimit 6, completionMode NonIndexed, suspend false, podReplacementPolicy TerminatingOrFailed, no manualSelector; selector batch.kubernetes.io/controller-uid=<uid>; template labels controller-uid, batch.kubernetes.io/controller-uid, job-name, batch.kubernetes.io/job-name',
      req: { method: 'POST', path: JOBS, body: job('j1') },
      expect: {
        status: 201,
        body: {
          metadata: { generation: 1 },
          spec: {
            completions: 1,
            parallelism: 1,
            backoffLimit: 6,
            completionMode: 'NonIndexed',
            suspend: false,
            podReplacementPolicy: 'TerminatingOrFailed',
            template: {
              metadata: { labels: { 'job-name': 'j1', 'batch.kubernetes.io/job-name': 'j1' } },
              spec: { restartPolicy: 'Never', dnsPolicy: 'ClusterFirst', containers: [{ imagePullPolicy: 'IfNotPresent' }] },
            },
          },
          status: {},
        },
        absent: ['spec.manualSelector'],
        text: /"selector":\{"matchLabels":\{"batch\.kubernetes\.io\/controller-uid":"[0-9a-f-]{36}"\}\}/,
      },
    },
    {
      id: 'batch-2',
      rule: 'Parallelism alone defaults no completions; a podFailurePolicy makes podReplacementPolicy default to Failed',
      source: 'upstream pkg/apis/batch/v1 defaults.go (SetDefaults_Job)',
      upstream: '201: parallelism 3 and no completions; then podReplacementPolicy Failed',
      req: { method: 'POST', path: JOBS, body: job('j2', { parallelism: 3 }) },
      expect: { status: 201, body: { spec: { parallelism: 3, backoffLimit: 6 } }, absent: ['spec.completions'] },
      then: [
        {
          req: { method: 'POST', path: JOBS, body: job('j2b', { podFailurePolicy: { rules: [] } }) },
          expect: { status: 201, body: { spec: { podReplacementPolicy: 'Failed', completions: 1 } } },
        },
      ],
    },
    {
      id: 'batch-3',
      rule: 'The pod template restarts OnFailure or Never',
      source: 'upstream pkg/apis/batch/validation (validateJobSpec)',
      upstream: '422 Invalid "spec.template.spec.restartPolicy: Required value: valid values: \\"OnFailure\\", \\"Never\\""',
      req: { method: 'POST', path: JOBS, body: job('j3', {}, { restartPolicy: 'Always' }) },
      expect: {
        status: 422,
        reason: 'Invalid',
        message: 'Job.batch "j3" is invalid: spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
      },
    },
    {
      id: 'batch-4',
      rule: 'A manual selector must match the template labels',
      source: 'upstream pkg/apis/batch/validation (ValidateJobSpec)',
      upstream: '422 Invalid "spec.template.metadata.labels: Invalid value: map[string]string{\\"app\\":\\"x\\"}: `selector` does not match template `labels`"',
      req: {
        method: 'POST',
        path: JOBS,
        body: job('j4', { manualSelector: true, selector: { matchLabels: { app: 'j4' } }, template: { metadata: { labels: { app: 'x' } }, ...template() } }),
      },
      expect: {
        status: 422,
        reason: 'Invalid',
        message:
          'Job.batch "j4" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"x"}: `selector` does not match template `labels`',
      },
    },
    {
      id: 'batch-5',
      rule: 'The template and completions of a Job cannot change',
      source: 'upstream pkg/apis/batch/validation (ValidateJobSpecUpdate)',
      upstream: '422 Invalid "spec.template: Invalid value: ...: field is immutable"; the same for spec.completions',
      setup: [{ method: 'POST', path: JOBS, body: job('j5') }],
      req: { method: 'PATCH', path: `${JOBS}/j5`, body: { spec: { template: { spec: { activeDeadlineSeconds: 5 } } } }, headers: MERGE },
      expect: { status: 422, reason: 'Invalid', message: /^Job\.batch "j5" is invalid: spec\.template: Invalid value: .*: field is immutable$/ },
      then: [
        {
          req: { method: 'PATCH', path: `${JOBS}/j5`, body: { spec: { completions: 2 } }, headers: MERGE },
          expect: { status: 422, message: 'Job.batch "j5" is invalid: spec.completions: Invalid value: 2: field is immutable' },
        },
        {
          req: { method: 'PATCH', path: `${JOBS}/j5`, body: { spec: { suspend: true } }, headers: MERGE },
          expect: { status: 200, body: { metadata: { generation: 2 }, spec: { suspend: true } } },
        },
      ],
    },
    {
      id: 'batch-6',
      rule: "kubectl's Job columns: STATUS from the conditions (Running without any), COMPLETIONS succeeded/completions, DURATION, AGE; -o wide adds CONTAINERS, IMAGES, SELECTOR",
      source: 'upstream pkg/printers/internalversion printers.go (printJob)',
      upstream:
        '200 Table with columns Name, Status, Completions, Duration, Age, Containers, Images, Selector; cells ["j6","Running","0/1","","<age>","main","busybox:1.36","batch.kubernetes.io/controller-uid=<uid>"]',
      setup: [{ method: 'POST', path: JOBS, body: job('j6') }],
      req: { method: 'GET', path: `${JOBS}/j6`, headers: { accept: TABLE } },
      expect: {
        status: 200,
        body: {
          kind: 'Table',
          columnDefinitions: [
            { name: 'Name' },
            { name: 'Status', type: 'string' },
            { name: 'Completions', type: 'string' },
            { name: 'Duration', type: 'string' },
            { name: 'Age' },
            { name: 'Containers', priority: 1 },
            { name: 'Images', priority: 1 },
            { name: 'Selector', priority: 1 },
          ],
        },
        // DURATION: empty until the Job controller has written the start time.
        text: /"cells":\["j6","Running","0\/1","(\d+s)?","\d+s","main","busybox:1\.36","batch\.kubernetes\.io\/controller-uid=[0-9a-f-]{36}"\]/,
      },
      then: [
        // Suspended first: the status validation lets the start time of a suspended Job change only.
        { req: { method: 'PATCH', path: `${JOBS}/j6`, body: { spec: { suspend: true } }, headers: MERGE }, expect: { status: 200 } },
        {
          req: {
            method: 'PATCH',
            path: `${JOBS}/j6/status`,
            body: {
              status: {
                active: 0,
                ready: 0,
                terminating: 0,
                succeeded: 1,
                startTime: '2026-01-01T00:00:00Z',
                completionTime: '2026-01-01T00:00:42Z',
                conditions: [{ type: 'Complete', status: 'True' }],
              },
            },
            headers: MERGE,
          },
          expect: { status: 200, body: { status: { succeeded: 1 } } },
        },
        { req: { method: 'GET', path: `${JOBS}/j6`, headers: { accept: TABLE } }, expect: { status: 200, text: /"cells":\["j6","Complete","1\/1","42s",/ } },
      ],
    },
    {
      id: 'batch-7',
      rule: "A CronJob gets Kubernetes' defaults; its jobTemplate gets only the pod template's defaults",
      source: 'upstream pkg/apis/batch/v1 defaults.go (SetDefaults_CronJob)',
      upstream:
        '201: concurrencyPolicy Allow, suspend false, successfulJobsHistoryLimit 3, failedJobsHistoryLimit 1; jobTemplate.spec without completions or backoffLimit',
      req: { method: 'POST', path: CRONJOBS, body: cronJob('c7', '*/5 * * * *') },
      expect: {
        status: 201,
        body: {
          metadata: { generation: 1 },
          spec: {
            concurrencyPolicy: 'Allow',
            suspend: false,
            successfulJobsHistoryLimit: 3,
            failedJobsHistoryLimit: 1,
            jobTemplate: { spec: { template: { spec: { dnsPolicy: 'ClusterFirst', containers: [{ imagePullPolicy: 'IfNotPresent' }] } } } },
          },
          status: {},
        },
        absent: ['spec.jobTemplate.spec.completions', 'spec.jobTemplate.spec.backoffLimit', 'spec.jobTemplate.spec.selector'],
      },
    },
    {
      id: 'batch-8',
      rule: 'The schedule is a cron expression (5 fields or a descriptor) without a TZ prefix',
      source: 'upstream pkg/apis/batch/validation (validateScheduleFormat)',
      upstream:
        '422 Invalid "spec.schedule: Invalid value: \\"TZ=UTC 0 * * * *\\": cannot use TZ or CRON_TZ in schedule, use timeZone field instead"; 5 fields expected; @hourly accepted',
      req: { method: 'POST', path: CRONJOBS, body: cronJob('c8', 'TZ=UTC 0 * * * *') },
      expect: {
        status: 422,
        reason: 'Invalid',
        message:
          'CronJob.batch "c8" is invalid: spec.schedule: Invalid value: "TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead',
      },
      then: [
        {
          req: { method: 'POST', path: CRONJOBS, body: cronJob('c8', '0 * * *') },
          expect: {
            status: 422,
            message: 'CronJob.batch "c8" is invalid: spec.schedule: Invalid value: "0 * * *": expected exactly 5 fields, found 4: [0 * * *]',
          },
        },
        { req: { method: 'POST', path: CRONJOBS, body: cronJob('c8', '@hourly', { timeZone: 'Europe/Berlin' }) }, expect: { status: 201 } },
        {
          req: { method: 'POST', path: CRONJOBS, body: cronJob('c8b', '@hourly', { timeZone: 'Mars/Olympus' }) },
          expect: { status: 422, message: 'CronJob.batch "c8b" is invalid: spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus' },
        },
      ],
    },
    {
      id: 'batch-9',
      rule: "The jobTemplate is validated like a Job's spec, and may not carry a selector",
      source: 'upstream pkg/apis/batch/validation (ValidateJobTemplateSpec)',
      upstream:
        '422 Invalid "spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: \\"OnFailure\\", \\"Never\\""; "spec.jobTemplate.spec.selector: Invalid value: ...: `selector` will be auto-generated"',
      req: { method: 'POST', path: CRONJOBS, body: cronJob('c9', '@daily', {}, { restartPolicy: 'Always' }) },
      expect: {
        status: 422,
        reason: 'Invalid',
        message: 'CronJob.batch "c9" is invalid: spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
      },
      then: [
        {
          req: {
            method: 'POST',
            path: CRONJOBS,
            body: {
              ...cronJob('c9', '@daily'),
              spec: { schedule: '@daily', jobTemplate: { spec: { selector: { matchLabels: { a: 'b' } }, template: template() } } },
            },
          },
          expect: {
            status: 422,
            message: /^CronJob\.batch "c9" is invalid: spec\.jobTemplate\.spec\.selector: Invalid value: .*: `selector` will be auto-generated$/,
          },
        },
      ],
    },
    {
      id: 'batch-10',
      rule: "kubectl's CronJob columns: SCHEDULE, TIMEZONE, SUSPEND, ACTIVE, LAST SCHEDULE, AGE; -o wide adds CONTAINERS, IMAGES, SELECTOR",
      source: 'upstream pkg/printers/internalversion printers.go (printCronJob)',
      upstream:
        '200 Table with columns Name, Schedule, Timezone, Suspend, Active, Last Schedule, Age, Containers, Images, Selector; cells ["c10","0 3 * * *","<none>","False",0,"<none>","<age>","main","busybox:1.36","<none>"]',
      setup: [{ method: 'POST', path: CRONJOBS, body: cronJob('c10', '0 3 * * *') }],
      req: { method: 'GET', path: `${CRONJOBS}/c10`, headers: { accept: TABLE } },
      expect: {
        status: 200,
        body: {
          kind: 'Table',
          columnDefinitions: [
            { name: 'Name' },
            { name: 'Schedule' },
            { name: 'Timezone' },
            { name: 'Suspend' },
            { name: 'Active' },
            { name: 'Last Schedule' },
            { name: 'Age' },
            { name: 'Containers', priority: 1 },
            { name: 'Images', priority: 1 },
            { name: 'Selector', priority: 1 },
          ],
        },
        text: /"cells":\["c10","0 3 \* \* \*","<none>","False",0,"<none>","\d+s","main","busybox:1\.36","<none>"\]/,
      },
    },
  ],
};
