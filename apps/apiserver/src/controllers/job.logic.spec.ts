import type { KubeObject } from '@app/apimachinery';
import {
  managedElsewhere,
  backoffRemainingMs,
  indexBackoffRemainingMs,
  nextBackoffRecord,
  podFinishedAt,
  failsIndex,
  indexFailureCounts,
  lastFailedPodOfIndex,
  onlyReplaceFailedPods,
  podTerminating,
  recordedVerdict,
  successPolicyMatch,
  completionsReached,
  formatIndexes,
  indexesToStart,
  matchPodFailurePolicy,
  parseIndexes,
  podForJob,
  statusCounts,
  wantedActive,
  withCondition,
} from './job.logic.js';

const job = (spec: Record<string, unknown>): KubeObject =>
  ({
    metadata: { name: 'j', namespace: 'ns', uid: 'job-uid' },
    spec: {
      template: {
        metadata: { labels: { 'batch.kubernetes.io/job-name': 'j' } },
        spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] },
      },
      ...spec,
    },
  }) as KubeObject;

describe('job logic', () => {
  it('reads the verdict an interim condition recorded until the terminal condition is there', () => {
    const withConditions = (...conditions: Record<string, unknown>[]): KubeObject => ({ ...job({}), status: { conditions } }) as KubeObject;
    expect(recordedVerdict(job({}))).toBeUndefined();
    expect(recordedVerdict(withConditions({ type: 'FailureTarget', status: 'True', reason: 'DeadlineExceeded', message: 'late' }))).toEqual({
      type: 'Failed',
      reason: 'DeadlineExceeded',
      message: 'late',
    });
    expect(recordedVerdict(withConditions({ type: 'SuccessCriteriaMet', status: 'True', reason: 'SuccessPolicy', message: 'm' }))).toEqual({
      type: 'Complete',
      reason: 'SuccessPolicy',
      message: 'm',
    });
    // SuccessCriteriaMet is read first, as kube does; a False interim condition decides nothing.
    expect(
      recordedVerdict(withConditions({ type: 'FailureTarget', status: 'True', reason: 'r' }, { type: 'SuccessCriteriaMet', status: 'True', reason: 's' }))
        ?.type,
    ).toBe('Complete');
    expect(recordedVerdict(withConditions({ type: 'FailureTarget', status: 'False' }))).toBeUndefined();
    // Finished: nothing pending.
    expect(recordedVerdict(withConditions({ type: 'FailureTarget', status: 'True' }, { type: 'Failed', status: 'True' }))).toBeUndefined();
  });

  it('spells completed indexes as kube does, and reads them back', () => {
    expect(formatIndexes([5, 0, 1, 2, 7, 8])).toBe('0-2,5,7-8');
    expect(formatIndexes([])).toBe('');
    expect([...parseIndexes('0-2,5,7-8')].sort((a, b) => a - b)).toEqual([0, 1, 2, 5, 7, 8]);
    expect(parseIndexes('x,3')).toEqual(new Set([3]));
  });

  it('wants parallelism pods, no more than the completions missing; a work queue none after a success', () => {
    expect(wantedActive(job({ completions: 5, parallelism: 2 }), 0)).toBe(2);
    expect(wantedActive(job({ completions: 5, parallelism: 2 }), 4)).toBe(1);
    expect(wantedActive(job({ completions: 5, parallelism: 2 }), 5)).toBe(0);
    expect(wantedActive(job({ parallelism: 3 }), 0)).toBe(3);
    expect(wantedActive(job({ parallelism: 3 }), 1)).toBe(0);
  });

  it('starts the lowest indexes neither succeeded nor running, within parallelism', () => {
    const indexed = job({ completionMode: 'Indexed', completions: 5, parallelism: 2 });
    expect(indexesToStart(indexed, new Set(), new Set())).toEqual([0, 1]);
    expect(indexesToStart(indexed, new Set([0]), new Set([1]))).toEqual([2]);
    expect(indexesToStart(indexed, new Set([0, 2, 3, 4]), new Set([1]))).toEqual([]);
  });

  it('is complete with its completions, its indexes, or (a work queue) one success and nothing active', () => {
    expect(completionsReached(job({ completions: 2 }), 2, new Set(), 0)).toBe(true);
    expect(completionsReached(job({ completions: 2 }), 1, new Set(), 0)).toBe(false);
    expect(completionsReached(job({ completionMode: 'Indexed', completions: 2 }), 2, new Set([0]), 0)).toBe(false);
    expect(completionsReached(job({ completionMode: 'Indexed', completions: 2 }), 2, new Set([0, 1]), 0)).toBe(true);
    expect(completionsReached(job({ parallelism: 2 }), 1, new Set(), 1)).toBe(false);
    expect(completionsReached(job({ parallelism: 2 }), 1, new Set(), 0)).toBe(true);
  });

  it('makes pods with the tracking finalizer, owned by the Job; Indexed ones carry their index', () => {
    const p = podForJob(job({}));
    expect(p.metadata).toEqual({
      generateName: 'j-',
      namespace: 'ns',
      labels: { 'batch.kubernetes.io/job-name': 'j' },
      finalizers: ['batch.kubernetes.io/job-tracking'],
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'j', uid: 'job-uid', controller: true, blockOwnerDeletion: true }],
    });
    const i = podForJob(job({ completionMode: 'Indexed' }), 3);
    expect(i.metadata.generateName).toBe('j-3-');
    expect(i.metadata.labels).toMatchObject({ 'batch.kubernetes.io/job-completion-index': '3' });
    expect(i.metadata.annotations).toEqual({ 'batch.kubernetes.io/job-completion-index': '3' });
    expect((i.spec as { hostname: string }).hostname).toBe('j-3');
  });

  it('sets conditions keeping the transition time while the status stays, and leaves zero counts out', () => {
    const first = withCondition([], { type: 'Suspended', status: 'True', reason: 'JobSuspended', message: 'Job suspended' }, 'T1');
    expect(first).toEqual([
      { type: 'Suspended', status: 'True', reason: 'JobSuspended', message: 'Job suspended', lastProbeTime: 'T1', lastTransitionTime: 'T1' },
    ]);
    expect(withCondition(first, { type: 'Suspended', status: 'True', reason: 'JobSuspended', message: 'Job suspended' }, 'T2')).toBe(first);
    const resumed = withCondition(first, { type: 'Suspended', status: 'False', reason: 'JobResumed', message: 'Job resumed' }, 'T3');
    expect(resumed[0]).toMatchObject({ status: 'False', lastTransitionTime: 'T3' });
    expect(statusCounts({ active: 0, succeeded: 0, failed: 2, completedIndexes: '' })).toEqual({ active: 0, failed: 2 });
  });
  it('matches failed pods against the podFailurePolicy rules in order', () => {
    const job = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'j' },
      spec: {
        podFailurePolicy: {
          rules: [
            { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] },
            { action: 'FailJob', onExitCodes: { containerName: 'main', operator: 'In', values: [42] } },
            { action: 'Count', onExitCodes: { operator: 'NotIn', values: [1, 2] } },
          ],
        },
      },
    } as KubeObject;
    const failed = (status: Record<string, unknown>): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'ns' },
      status: { phase: 'Failed', ...status },
    });
    const exited = (name: string, exitCode: number) => ({ containerStatuses: [{ name, state: { terminated: { exitCode } } }] });
    expect(matchPodFailurePolicy(job, failed({ conditions: [{ type: 'DisruptionTarget', status: 'True' }] }))).toEqual({
      action: 'Ignore',
      message: 'Pod ns/p has condition DisruptionTarget matching Ignore rule at index 0',
    });
    expect(matchPodFailurePolicy(job, failed(exited('main', 42)))).toEqual({
      action: 'FailJob',
      message: 'Container main for pod ns/p failed with exit code 42 matching FailJob rule at index 1',
    });
    // Another container's 42 is not the FailJob rule's; NotIn [1, 2] counts it.
    expect(matchPodFailurePolicy(job, failed(exited('side', 42)))?.action).toBe('Count');
    expect(matchPodFailurePolicy(job, failed(exited('main', 1)))).toBeUndefined();
    // Exit code 0 never matches, and a pod that has not failed is not judged.
    expect(matchPodFailurePolicy(job, failed(exited('main', 0)))).toBeUndefined();
    expect(matchPodFailurePolicy(job, { ...failed(exited('main', 42)), status: { phase: 'Running', ...exited('main', 42) } })).toBeUndefined();
  });
  it('matches the first rule of a success policy that the succeeded indexes meet', () => {
    const policy = (rules: unknown[]) => job({ completionMode: 'Indexed', completions: 10, parallelism: 10, successPolicy: { rules } });
    const done = (...xs: number[]) => new Set(xs);
    // succeededIndexes alone: every one of them.
    expect(successPolicyMatch(policy([{ succeededIndexes: '0,2-3' }]), done(0, 2))).toBeUndefined();
    expect(successPolicyMatch(policy([{ succeededIndexes: '0,2-3' }]), done(0, 2, 3, 7))).toBe('Matched rules at index 0');
    // With succeededCount: that many of them.
    expect(successPolicyMatch(policy([{ succeededIndexes: '0-4', succeededCount: 2 }]), done(1, 8, 9))).toBeUndefined();
    expect(successPolicyMatch(policy([{ succeededIndexes: '0-4', succeededCount: 2 }]), done(1, 4, 9))).toBe('Matched rules at index 0');
    // succeededCount alone: that many indexes in all; the first rule met wins.
    const two = policy([{ succeededIndexes: '5' }, { succeededCount: 3 }, { succeededCount: 1 }]);
    expect(successPolicyMatch(two, done(1, 2, 3))).toBe('Matched rules at index 1');
    expect(successPolicyMatch(two, done(1))).toBe('Matched rules at index 2');
    // Indexes beyond completions do not count; a rule of only such indexes never matches.
    expect(successPolicyMatch(policy([{ succeededIndexes: '8-12' }]), done(8, 9))).toBe('Matched rules at index 0');
    expect(successPolicyMatch(policy([{ succeededIndexes: '10-12' }]), done(1, 2))).toBeUndefined();
    // No succeeded index, no policy, or a NonIndexed Job: nothing.
    expect(successPolicyMatch(policy([{ succeededCount: 1 }]), done())).toBeUndefined();
    expect(successPolicyMatch(job({ completionMode: 'Indexed', completions: 2 }), done(0, 1))).toBeUndefined();
    expect(successPolicyMatch(job({ completions: 2, successPolicy: { rules: [{ succeededCount: 1 }] } }), done(0))).toBeUndefined();
  });
  it('replaces only failed pods with podReplacementPolicy Failed or a podFailurePolicy, and tells terminating pods', () => {
    expect(onlyReplaceFailedPods(job({ podReplacementPolicy: 'TerminatingOrFailed' }))).toBe(false);
    expect(onlyReplaceFailedPods(job({ podReplacementPolicy: 'Failed' }))).toBe(true);
    expect(onlyReplaceFailedPods(job({ podFailurePolicy: { rules: [] } }))).toBe(true);
    const p = (phase: string, deleting: boolean): KubeObject => ({
      metadata: { name: 'p', ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
      status: { phase },
    });
    expect([p('Running', true), p('Pending', true), p('Failed', true), p('Succeeded', true), p('Running', false)].map(podTerminating)).toEqual([
      true,
      true,
      false,
      false,
      false,
    ]);
  });
  it('fails an index past backoffLimitPerIndex or by FailIndex, and carries the counts to its next pod', () => {
    const j = job({ completionMode: 'Indexed', completions: 3, parallelism: 3, backoffLimitPerIndex: 1 });
    const failedPod = (name: string, index: number, counts: Record<string, string>, created: string): KubeObject => ({
      metadata: {
        name,
        uid: name,
        creationTimestamp: created,
        annotations: { 'batch.kubernetes.io/job-completion-index': String(index), ...counts },
      },
      status: { phase: 'Failed' },
    });
    const first = failedPod('a', 0, { 'batch.kubernetes.io/job-index-failure-count': '0' }, '2026-01-01T00:00:00Z');
    const second = failedPod('b', 0, { 'batch.kubernetes.io/job-index-failure-count': '1' }, '2026-01-01T00:01:00Z');
    expect(failsIndex(j, first, undefined)).toBe(false);
    expect(failsIndex(j, second, undefined)).toBe(true);
    expect(failsIndex(j, first, { action: 'FailIndex', message: '' })).toBe(true);
    // The next pod of index 0 counts the latest failure; an ignored one goes to the other count.
    expect(indexFailureCounts([first], 0, () => undefined)).toEqual({ failures: 1, ignored: 0 });
    expect(indexFailureCounts([second, first], 0, () => undefined)).toEqual({ failures: 2, ignored: 0 });
    expect(indexFailureCounts([first], 0, () => ({ action: 'Ignore', message: '' }))).toEqual({ failures: 0, ignored: 1 });
    expect(indexFailureCounts([first], 1, () => undefined)).toEqual({ failures: 0, ignored: 0 });
  });
  it('backs off replacements: failures since the last success, 10 s doubled up to 10 minutes, from the last failure', () => {
    const at = (iso: string) => Date.parse(iso);
    const done = (phase: string, finishedAt: string): KubeObject => ({
      metadata: { name: finishedAt, creationTimestamp: '2026-01-01T00:00:00Z' },
      status: { phase, containerStatuses: [{ name: 'c', state: { terminated: { exitCode: 1, finishedAt } } }] },
    });
    // When a pod finished: its containers, else Ready turning False, else its deletion, else its creation.
    expect(podFinishedAt(done('Failed', '2026-01-01T00:05:00Z'))).toBe(at('2026-01-01T00:05:00Z'));
    const readyFalse: KubeObject = {
      metadata: { name: 'r', creationTimestamp: '2026-01-01T00:00:00Z' },
      status: { phase: 'Failed', conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: '2026-01-01T00:03:00Z' }] },
    };
    expect(podFinishedAt(readyFalse)).toBe(at('2026-01-01T00:03:00Z'));
    expect(podFinishedAt({ metadata: { name: 'd', deletionTimestamp: '2026-01-01T00:02:00Z', deletionGracePeriodSeconds: 30 } })).toBe(
      at('2026-01-01T00:01:30Z'),
    );
    expect(podFinishedAt({ metadata: { name: 'c', creationTimestamp: '2026-01-01T00:01:00Z' } })).toBe(at('2026-01-01T00:01:00Z'));

    let r = nextBackoffRecord(undefined, [], [done('Failed', '2026-01-01T00:01:00Z')]);
    expect(r).toEqual({ failures: 1, lastFailure: at('2026-01-01T00:01:00Z') });
    r = nextBackoffRecord(r, [], [done('Failed', '2026-01-01T00:03:00Z'), done('Failed', '2026-01-01T00:02:00Z')]);
    expect(r).toEqual({ failures: 3, lastFailure: at('2026-01-01T00:03:00Z') });
    // A success counts only the failures after it.
    expect(nextBackoffRecord(r, [done('Succeeded', '2026-01-01T00:04:00Z')], [done('Failed', '2026-01-01T00:05:00Z')])).toEqual({
      failures: 1,
      lastFailure: at('2026-01-01T00:05:00Z'),
    });
    expect(nextBackoffRecord(r, [done('Succeeded', '2026-01-01T00:04:00Z')], [])).toEqual({ failures: 0 });

    const t = at('2026-01-01T00:10:00Z');
    expect(backoffRemainingMs(0, t, t, 10_000)).toBe(0);
    expect(backoffRemainingMs(1, t, t + 4_000, 10_000)).toBe(6_000);
    expect(backoffRemainingMs(3, t, t, 10_000)).toBe(40_000);
    expect(backoffRemainingMs(20, t, t, 10_000)).toBe(600_000);
    expect(backoffRemainingMs(1, t, t + 60_000, 10_000)).toBe(0);

    // Per index: the index's latest failed pod's counts, plus its own failure.
    const failedOf = (index: number, count: string, finishedAt: string): KubeObject => {
      const p = done('Failed', finishedAt);
      return {
        ...p,
        metadata: {
          ...p.metadata,
          annotations: { 'batch.kubernetes.io/job-completion-index': String(index), 'batch.kubernetes.io/job-index-failure-count': count },
        },
      };
    };
    const pods = [failedOf(0, '0', '2026-01-01T00:09:00Z'), failedOf(0, '1', '2026-01-01T00:10:00Z')];
    expect(indexBackoffRemainingMs(pods, 0, t, 10_000)).toBe(20_000);
    expect(indexBackoffRemainingMs(pods, 1, t, 10_000)).toBe(0);
  });
  it("finds an index's latest failed pod: most failures recorded, the later finished on a tie", () => {
    const pod = (name: string, index: number, phase: string, counts: [string, string], finishedAt: string): KubeObject => ({
      metadata: {
        name,
        creationTimestamp: '2026-01-01T00:00:00Z',
        annotations: {
          'batch.kubernetes.io/job-completion-index': String(index),
          'batch.kubernetes.io/job-index-failure-count': counts[0],
          'batch.kubernetes.io/job-index-ignored-failure-count': counts[1],
        },
      },
      status: { phase, containerStatuses: [{ name: 'c', state: { terminated: { exitCode: 1, finishedAt } } }] },
    });
    const early = pod('early', 0, 'Failed', ['1', '0'], '2026-01-01T00:01:00Z');
    const late = pod('late', 0, 'Failed', ['0', '1'], '2026-01-01T00:02:00Z');
    const most = pod('most', 0, 'Failed', ['1', '1'], '2026-01-01T00:00:30Z');
    const running = pod('running', 0, 'Running', ['5', '0'], '2026-01-01T00:03:00Z');
    const other = pod('other', 1, 'Failed', ['7', '0'], '2026-01-01T00:04:00Z');
    // Ignored failures count too; on equal counts the later finished pod wins, in any order.
    expect(lastFailedPodOfIndex([late, early], 0)?.metadata.name).toBe('late');
    expect(lastFailedPodOfIndex([early, late], 0)?.metadata.name).toBe('late');
    expect(lastFailedPodOfIndex([late, most, early, running, other], 0)?.metadata.name).toBe('most');
    expect(lastFailedPodOfIndex([running, other], 0)).toBeUndefined();
    // Both the new pod's counts and its back-off follow that pod.
    expect(indexFailureCounts([early, late], 0, () => undefined)).toEqual({ failures: 1, ignored: 1 });
    expect(indexBackoffRemainingMs([early, late], 0, Date.parse('2026-01-01T00:02:00Z'), 10_000)).toBe(20_000);
  });
  it('leaves a Job managed by another controller alone', () => {
    expect(managedElsewhere(job({}))).toBe(false);
    expect(managedElsewhere(job({ managedBy: 'kubernetes.io/job-controller' }))).toBe(false);
    expect(managedElsewhere(job({ managedBy: 'kueue.x-k8s.io/multikueue' }))).toBe(true);
  });
});
