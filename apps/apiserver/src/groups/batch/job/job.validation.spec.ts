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
  it('refuses negative status counters', () => {
    expect(messages(validateJobStatusUpdate({ metadata: {}, status: { succeeded: -1 } }))).toEqual(['status.succeeded: must be greater than or equal to 0']);
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
