import type { KubeObject } from '@app/apimachinery';
import { jobCompletionsCell, jobDurationCell, jobStatusCell } from './job.kind.js';
import { defaultJob, generateSelector } from './job.strategy.js';
import { validateJob, validateJobStatusUpdate, validateJobUpdate } from './job.validation.js';

type Obj = Record<string, unknown>;
const UID = '0f6c1a52-5a4e-4f6e-9d0b-2b1c4e7f9a10';

/** A Job as it reaches validation: strategy defaults and the generated selector applied. */
function job(spec: Obj = {}, podSpec: Obj = {}): KubeObject {
  const j: KubeObject = {
    metadata: { name: 'pi', namespace: 'ns', uid: UID },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'perl' }], ...podSpec } }, ...spec },
  };
  defaultJob(j);
  if ((j.spec as Obj).manualSelector !== true) generateSelector(j);
  return j;
}
// A copy in this realm (structuredClone's objects have another realm's prototypes under jest's VM, which isDeepStrictEqual tells apart).
const asObj = (v: unknown): Obj => v as Obj;
const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
const messages = (errs: { field: string; detail?: string }[]) => errs.map((e) => `${e.field}: ${e.detail ?? ''}`);

describe('Job defaults', () => {
  it('sets completions and parallelism 1 when both are unset, and the scalar defaults', () => {
    expect(job().spec).toMatchObject({
      completions: 1,
      parallelism: 1,
      backoffLimit: 6,
      completionMode: 'NonIndexed',
      suspend: false,
      podReplacementPolicy: 'TerminatingOrFailed',
    });
    expect(job().spec).not.toHaveProperty('manualSelector');
  });
  it('leaves completions unset when parallelism is set, and follows backoffLimitPerIndex and podFailurePolicy', () => {
    const spec = job({ parallelism: 4 }).spec as Obj;
    expect(spec.completions).toBeUndefined();
    expect(spec.parallelism).toBe(4);
    expect((job({ completions: 3 }).spec as Obj).parallelism).toBe(1);
    expect((job({ completionMode: 'Indexed', completions: 2, backoffLimitPerIndex: 1 }).spec as Obj).backoffLimit).toBe(2147483647);
    expect((job({ podFailurePolicy: { rules: [] } }).spec as Obj).podReplacementPolicy).toBe('Failed');
  });
  it('generates the selector on the uid and the four pod labels, keeping labels the user set', () => {
    const spec = job().spec as { selector: Obj; template: { metadata: { labels: Obj } } };
    expect(spec.selector).toEqual({ matchLabels: { 'batch.kubernetes.io/controller-uid': UID } });
    expect(spec.template.metadata.labels).toEqual({
      'batch.kubernetes.io/controller-uid': UID,
      'controller-uid': UID,
      'batch.kubernetes.io/job-name': 'pi',
      'job-name': 'pi',
    });
    const mine = job({
      template: { metadata: { labels: { 'job-name': 'other' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x' }] } },
    });
    expect((mine.spec as { template: { metadata: { labels: Obj } } }).template.metadata.labels['job-name']).toBe('other');
    expect(messages(validateJob(mine))).toContain("spec.template.metadata.labels[job-name]: must be 'pi'");
  });
  it('defaults the pod template containers like a Pod', () => {
    const c = ((job().spec as { template: { spec: { containers: Obj[] } } }).template.spec.containers[0] ?? {}) as Obj;
    expect(c.imagePullPolicy).toBe('Always');
  });
});

describe('Job validation', () => {
  it('accepts a defaulted Job', () => {
    expect(validateJob(job())).toEqual([]);
  });
  it("refuses restartPolicy Always or unset with Kubernetes' message, and an unknown one as unsupported", () => {
    expect(messages(validateJob(job({}, { restartPolicy: 'Always' })))).toEqual(['spec.template.spec.restartPolicy: valid values: "OnFailure", "Never"']);
    expect(validateJob(job({}, { restartPolicy: undefined }))[0]).toMatchObject({ type: 'FieldValueRequired' });
    expect(messages(validateJob(job({ podFailurePolicy: { rules: [] } }, { restartPolicy: 'OnFailure' })))).toEqual([
      'spec.template.spec.restartPolicy: only "Never" is supported when podFailurePolicy is specified',
    ]);
  });
  it('refuses negative counts and Indexed-only fields on a NonIndexed Job', () => {
    expect(messages(validateJob(job({ backoffLimit: -1, parallelism: -2 })))).toEqual([
      'spec.parallelism: must be greater than or equal to 0',
      'spec.backoffLimit: must be greater than or equal to 0',
    ]);
    expect(messages(validateJob(job({ backoffLimitPerIndex: 1 })))).toContain('spec.backoffLimitPerIndex: requires indexed completion mode');
    expect(messages(validateJob(job({ completionMode: 'Sometimes' })))).toContain('spec.completionMode: supported values: "NonIndexed", "Indexed"');
  });
  it('checks a manual selector against the template labels, and a generated one against the uid', () => {
    const manual = job({
      manualSelector: true,
      selector: { matchLabels: { app: 'a' } },
      template: { metadata: { labels: { app: 'b' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x' }] } },
    });
    expect(messages(validateJob(manual))).toEqual(['spec.template.metadata.labels: `selector` does not match template `labels`']);
    const forged = job();
    (forged.spec as { selector: Obj }).selector = { matchLabels: { 'batch.kubernetes.io/controller-uid': 'other' } };
    expect(messages(validateJob(forged))).toContain('spec.selector: `selector` not auto-generated');
  });
  it('keeps selector, template and completions immutable, but lets suspend change', () => {
    const old = job();
    const changed = clone(old);
    (changed.spec as Obj).completions = 2;
    (changed.spec as { template: { spec: Obj } }).template.spec.activeDeadlineSeconds = 5;
    expect(messages(validateJobUpdate(changed, old))).toEqual(['spec.template: field is immutable', 'spec.completions: field is immutable']);
    const suspended = clone(old);
    (suspended.spec as Obj).suspend = true;
    expect(validateJobUpdate(suspended, old)).toEqual([]);
  });
  it('lets an elastic Indexed Job change completions together with parallelism', () => {
    const old = job({ completionMode: 'Indexed', completions: 2, parallelism: 2 });
    const scaled = clone(old);
    Object.assign(scaled.spec as Obj, { completions: 4, parallelism: 4 });
    expect(validateJobUpdate(scaled, old)).toEqual([]);
  });
  it('checks a podFailurePolicy rule by rule', () => {
    const policy = (...rules: Obj[]) => messages(validateJob(job({ podFailurePolicy: { rules } })));
    expect(
      policy(
        { action: 'FailJob', onExitCodes: { containerName: 'c', operator: 'In', values: [1, 42] } },
        { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
      ),
    ).toEqual([]);
    expect(policy({ action: 'Retry', onExitCodes: { containerName: 'x', operator: 'Is', values: [0, 3, 3, 2] } })).toEqual([
      'spec.podFailurePolicy.rules[0].action: supported values: "Count", "FailIndex", "FailJob", "Ignore"',
      'spec.podFailurePolicy.rules[0].onExitCodes.operator: supported values: "In", "NotIn"',
      'spec.podFailurePolicy.rules[0].onExitCodes.containerName: must be one of the container or initContainer names in the pod template',
      'spec.podFailurePolicy.rules[0].onExitCodes.values[2]: ',
      'spec.podFailurePolicy.rules[0].onExitCodes.values: must be ordered',
    ]);
    // A pattern's status defaults to True.
    const defaulted = job({ podFailurePolicy: { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] }] } });
    expect((defaulted.spec as { podFailurePolicy: { rules: { onPodConditions: Obj[] }[] } }).podFailurePolicy.rules[0]!.onPodConditions[0]).toEqual({
      type: 'DisruptionTarget',
      status: 'True',
    });
    expect(validateJob(defaulted)).toEqual([]);
    expect(policy({ action: 'FailJob', onExitCodes: { operator: 'In', values: [0] } })).toEqual([
      'spec.podFailurePolicy.rules[0].onExitCodes.values[0]: must not be 0 for the In operator',
    ]);
    expect(policy({ action: 'FailIndex', onExitCodes: { operator: 'NotIn', values: [] } })).toEqual([
      'spec.podFailurePolicy.rules[0].action: requires the backoffLimitPerIndex to be set',
      'spec.podFailurePolicy.rules[0].onExitCodes.values: at least one value is required',
    ]);
    expect(policy({ onPodConditions: [{ type: 'bad type', status: 'Maybe' }] }, { action: 'Count' })).toEqual([
      'spec.podFailurePolicy.rules[0].action: valid values: ["Count" "FailIndex" "FailJob" "Ignore"]',
      expect.stringMatching(/^spec\.podFailurePolicy\.rules\[0\]\.onPodConditions\[0\]\.type: name part must consist of/),
      'spec.podFailurePolicy.rules[0].onPodConditions[0].status: supported values: "False", "True", "Unknown"',
      'spec.podFailurePolicy.rules[1]: specifying one of OnExitCodes and OnPodConditions is required',
    ]);
    expect(policy({ action: 'Count', onExitCodes: { operator: 'In', values: [1] }, onPodConditions: [{ type: 'Ready', status: 'False' }] })).toEqual([
      'spec.podFailurePolicy.rules[0]: specifying both OnExitCodes and OnPodConditions is not supported',
    ]);
    expect(policy(...Array.from({ length: 21 }, () => ({ action: 'Count', onExitCodes: { operator: 'In', values: [1] } })))).toEqual([
      'spec.podFailurePolicy.rules: 21: must have at most 20 items',
    ]);
  });
  it('checks a successPolicy against the completions', () => {
    const policy = (rules: Obj[]) => messages(validateJob(job({ completionMode: 'Indexed', completions: 5, parallelism: 5, successPolicy: { rules } })));
    expect(policy([{ succeededIndexes: '0,2-4', succeededCount: 3 }, { succeededCount: 5 }])).toEqual([]);
    expect(policy([])).toEqual(['spec.successPolicy.rules: at least one rules must be specified when the successPolicy is specified']);
    expect(policy([{}])).toEqual(['spec.successPolicy.rules[0]: at least one of succeededCount or succeededIndexes must be specified']);
    expect(policy([{ succeededIndexes: '1-5' }])).toEqual([
      'spec.successPolicy.rules[0].succeededIndexes: error parsing succeededIndexes: too large index: "5"',
    ]);
    expect(policy([{ succeededIndexes: '1-2', succeededCount: 3 }, { succeededCount: 6 }])).toEqual([
      'spec.successPolicy.rules[0].succeededCount: must be less than or equal to 2 (the number of indexes in the specified succeededIndexes field)',
      'spec.successPolicy.rules[1].succeededCount: must be less than or equal to 5 (the number of specified completions)',
    ]);
  });
  it('refuses negative status counters', () => {
    expect(messages(validateJobStatusUpdate({ metadata: {}, status: { succeeded: -1 } }))).toEqual(['status.succeeded: must be greater than or equal to 0']);
  });
  const withStatus = (j: KubeObject, status: Obj): KubeObject => ({ ...clone(j), status });
  const cond = (type: string, status = 'True') => ({ type, status });
  const START = '2026-01-01T00:00:00Z';
  it('lets the Job controller finish a Job in two steps, and refuses what a reader could not make sense of', () => {
    const running = withStatus(job(), { active: 1, startTime: START });
    const target = withStatus(job(), { active: 0, failed: 1, startTime: START, conditions: [cond('FailureTarget')] });
    const failed = withStatus(job(), { active: 0, failed: 1, startTime: START, conditions: [cond('FailureTarget'), cond('Failed')] });
    expect(validateJobStatusUpdate(target, running)).toEqual([]);
    expect(validateJobStatusUpdate(failed, target)).toEqual([]);
    const met = withStatus(job(), { succeeded: 1, startTime: START, conditions: [cond('SuccessCriteriaMet')] });
    const complete = withStatus(job(), {
      succeeded: 1,
      startTime: START,
      completionTime: '2026-01-01T00:00:09Z',
      conditions: [cond('SuccessCriteriaMet'), cond('Complete')],
    });
    expect(validateJobStatusUpdate(met, running)).toEqual([]);
    expect(validateJobStatusUpdate(complete, met)).toEqual([]);

    expect(messages(validateJobStatusUpdate(withStatus(job(), { ...asObj(failed.status), conditions: [] }), failed))).toEqual([
      'status.conditions: cannot disable the terminal Failed=True condition',
      'status.conditions: cannot disable the terminal FailureTarget=True condition',
    ]);
    expect(messages(validateJobStatusUpdate(withStatus(job(), { ...asObj(complete.status), conditions: [cond('Complete')] }), complete))).toEqual([
      'status.conditions: cannot disable the SuccessCriteriaMet=True condition',
    ]);
    expect(
      messages(validateJobStatusUpdate(withStatus(job(), { ...asObj(met.status), conditions: [cond('SuccessCriteriaMet'), cond('Complete')] }), met)),
    ).toEqual(['status.completionTime: completionTime is required for Complete jobs']);
    expect(
      messages(
        validateJobStatusUpdate(
          withStatus(job(), { active: 2, startTime: START, completionTime: '2025-12-31T00:00:00Z', conditions: [cond('Complete'), cond('Failed')] }),
          running,
        ),
      ),
    ).toEqual([
      'status.conditions: cannot set Complete=True and Failed=true conditions',
      'status.completionTime: completionTime cannot be set before startTime',
      'status.active: active>0 is invalid for finished job',
    ]);
    expect(
      messages(
        validateJobStatusUpdate(
          withStatus(job(), { failed: 1, uncountedTerminatedPods: { failed: ['a'] }, conditions: [cond('Failed')] }),
          withStatus(job(), {}),
        ),
      ),
    ).toEqual([
      'status.startTime: startTime is required for finished job',
      'status.uncountedTerminatedPods: uncountedTerminatedPods needs to be empty for finished job',
    ]);
    expect(
      messages(validateJobStatusUpdate(withStatus(job(), { conditions: [cond('SuccessCriteriaMet'), cond('FailureTarget')] }), withStatus(job(), {}))),
    ).toEqual(['status.conditions: cannot set SuccessCriteriaMet=True and FailureTarget=true conditions']);
    // Counters never go down, the start of a running Job and a completion time never move.
    expect(
      messages(
        validateJobStatusUpdate(
          withStatus(job(), { failed: 0, succeeded: 0, startTime: '2026-01-01T00:00:05Z' }),
          withStatus(job(), { failed: 2, succeeded: 1, startTime: START }),
        ),
      ),
    ).toEqual([
      'status.failed: cannot decrease the failed counter',
      'status.succeeded: cannot decrease the succeeded counter',
      'status.startTime: startTime cannot be removed for unsuspended job',
    ]);
    expect(validateJobStatusUpdate(withStatus(job({ suspend: true }), {}), withStatus(job({ suspend: true }), { startTime: START }))).toEqual([]);
    expect(messages(validateJobStatusUpdate(withStatus(job(), { ...asObj(complete.status), completionTime: '2026-01-01T00:00:10Z' }), complete))).toEqual([
      'status.completionTime: completionTime cannot be mutated',
    ]);
    // The same instant written another way is no change.
    expect(validateJobStatusUpdate(withStatus(job(), { ...asObj(complete.status), completionTime: '2026-01-01T00:00:09.000Z' }), complete)).toEqual([]);
  });
  it('checks the index lists a status update changes', () => {
    const indexed = job({ completionMode: 'Indexed', completions: 4, parallelism: 2, backoffLimitPerIndex: 1 });
    const at = (status: Obj) => messages(validateJobStatusUpdate(withStatus(indexed, status), withStatus(indexed, {})));
    expect(at({ completedIndexes: '0,2-3', failedIndexes: '1' })).toEqual([]);
    expect(at({ completedIndexes: '3,1' })).toEqual(['status.completedIndexes: error parsing completedIndexes: non-increasing order, previous: 3, current: 1']);
    expect(at({ completedIndexes: '0-4' })).toEqual(['status.completedIndexes: error parsing completedIndexes: too large index: "4"']);
    expect(at({ completedIndexes: 'x' })).toEqual(['status.completedIndexes: error parsing completedIndexes: cannot convert string to integer for index: "x"']);
    expect(at({ failedIndexes: '1-2-3' })).toEqual([
      `status.failedIndexes: error parsing failedIndexes: the fragment "1-2-3" violates the requirement that an index interval can have at most two parts separated by '-'`,
    ]);
    expect(at({ completedIndexes: '0-2', failedIndexes: '2-3' })).toEqual(['status.failedIndexes: failedIndexes and completedIndexes overlap at index: 2']);
    expect(messages(validateJobStatusUpdate(withStatus(job(), { completedIndexes: '0', failedIndexes: '' }), withStatus(job(), {})))).toEqual([
      'status.completedIndexes: cannot set non-empty completedIndexes when non-indexed completion mode',
      'status.failedIndexes: cannot set non-null failedIndexes when backoffLimitPerIndex is null',
    ]);
    // Unchanged lists are not checked again.
    expect(validateJobStatusUpdate(withStatus(indexed, { completedIndexes: '3,1', active: 1 }), withStatus(indexed, { completedIndexes: '3,1' }))).toEqual([]);
  });
  it('refuses a uid twice, or an empty one, among the uncounted pods', () => {
    expect(messages(validateJobStatusUpdate(withStatus(job(), { uncountedTerminatedPods: { succeeded: ['a', ''], failed: ['a'] } })))).toEqual([
      'status.uncountedTerminatedPods.succeeded[1]: must not be empty',
      'status.uncountedTerminatedPods.failed[0]: ',
    ]);
  });
});

describe("kubectl's Job columns", () => {
  const now = new Date('2026-01-01T00:01:00Z');
  it('reads STATUS from the conditions', () => {
    expect(jobStatusCell(job())).toBe('Running');
    expect(jobStatusCell({ ...job(), status: { conditions: [{ type: 'Complete', status: 'True' }] } })).toBe('Complete');
    expect(jobStatusCell({ ...job(), status: { conditions: [{ type: 'Failed', status: 'True' }] } })).toBe('Failed');
    expect(jobStatusCell({ ...job(), status: { conditions: [{ type: 'Suspended', status: 'True' }] } })).toBe('Suspended');
    expect(jobStatusCell({ ...job(), status: { conditions: [{ type: 'Complete', status: 'False' }] } })).toBe('Running');
  });
  it('shows COMPLETIONS against completions, or /1 (of parallelism) without them', () => {
    expect(jobCompletionsCell({ ...job({ completions: 3 }), status: { succeeded: 2 } })).toBe('2/3');
    expect(jobCompletionsCell(job({ parallelism: 1 }))).toBe('0/1');
    expect(jobCompletionsCell(job({ parallelism: 5 }))).toBe('0/1 of 5');
  });
  it('measures DURATION from startTime to completionTime or now', () => {
    expect(jobDurationCell(job(), now)).toBe('');
    expect(jobDurationCell({ ...job(), status: { startTime: '2026-01-01T00:00:00Z' } }, now)).toBe('60s');
    expect(jobDurationCell({ ...job(), status: { startTime: '2026-01-01T00:00:00Z', completionTime: '2026-01-01T00:00:07Z' } }, now)).toBe('7s');
  });
});
