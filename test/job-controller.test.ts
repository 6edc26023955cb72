/**
 * The Job controller through kubectl: a Job gets its pods (from its template, with the tracking
 * finalizer), counts them when something writes their phase (nothing runs pods here, so the test
 * plays the kubelet through `/status`), completes (`kubectl wait --for=condition=complete`
 * returns) or fails past its backoff limit (replacing failed pods after a back-off that doubles),
 * runs Indexed Jobs index by index (and completes one by its success policy, or fails one on its
 * failed indexes with backoffLimitPerIndex), replaces terminating pods by its
 * podReplacementPolicy, leaves a Job managed by another controller alone, is suspended and
 * resumed, is deleted after its time to live, and lets its pods go when it is deleted.
 */
import { eventsOnceSeen } from './support/kubectl.helper.js';
import { waitFor } from './support/net.helper.js';
import { type ServerHandle, kubectl, request, startServer } from './support/server.js';

const NS = 'default';

interface Pod {
  metadata: {
    name: string;
    uid: string;
    creationTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
    ownerReferences?: { kind: string; name: string }[];
  };
  spec: { hostname?: string };
  status?: Record<string, unknown>;
}
interface Job {
  status?: {
    active?: number;
    succeeded?: number;
    failed?: number;
    terminating?: number;
    completedIndexes?: string;
    failedIndexes?: string;
    startTime?: string;
    completionTime?: string;
    conditions?: { type: string; status: string; reason?: string; lastTransitionTime?: string }[];
  };
}

describe('Job controller', () => {
  let server: ServerHandle;
  const k = (args: string[], opts: { input?: string; expectFail?: boolean } = {}) => kubectl(server, args, opts);
  const podsOf = async (job: string): Promise<Pod[]> =>
    (JSON.parse((await k(['get', 'pods', '-n', NS, '-l', `batch.kubernetes.io/job-name=${job}`, '-o', 'json'])).stdout) as { items: Pod[] }).items;
  const waitPods = (job: string, n: number, check: (ps: Pod[]) => boolean = () => true) =>
    waitFor(`${n} pods of ${job}`, async () => {
      const ps = await podsOf(job);
      return ps.length === n && check(ps) ? ps : undefined;
    });
  const job = async (name: string): Promise<Job> => (await request(server, 'GET', `/apis/batch/v1/namespaces/${NS}/jobs/${name}`)).json() as Job;
  const waitJob = (name: string, check: (j: Job) => boolean, what: string) =>
    waitFor(what, async () => {
      const j = await job(name);
      return check(j) ? j : undefined;
    });
  /** Plays the kubelet: the pod ends in `phase`. */
  const finish = async (pod: Pod, phase: 'Succeeded' | 'Failed', more: Record<string, unknown> = {}) => {
    const cur = (await request(server, 'GET', `/api/v1/namespaces/${NS}/pods/${pod.metadata.name}`)).json() as Pod;
    cur.status = { ...cur.status, phase, ...more };
    expect((await request(server, 'PUT', `/api/v1/namespaces/${NS}/pods/${pod.metadata.name}/status`, { body: cur })).status).toBe(200);
  };
  const condition = (j: Job, type: string) => j.status?.conditions?.find((c) => c.type === type);

  beforeAll(async () => {
    // A failed pod's replacement waits 1 s, then 2 s, ... (kube's 10 s, shortened).
    server = await startServer({ env: { KAPI_JOB_POD_FAILURE_BACKOFF_MS: '1000' } });
  });

  afterAll(async () => {
    await server?.cleanup();
  });

  it('runs a Job to completion: a pod, counted once it succeeds, and kubectl wait returns', async () => {
    await k(['create', 'job', 'hello', '-n', NS, '--image=busybox', '--', 'echo', 'hi']);
    const [pod] = await waitPods('hello', 1);
    expect(pod!.metadata.name).toMatch(/^hello-[a-z0-9]{5}$/);
    expect(pod!.metadata.finalizers).toEqual(['batch.kubernetes.io/job-tracking']);
    expect(pod!.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Job', name: 'hello' });
    const running = await waitJob('hello', (j) => j.status?.active === 1, 'one active pod');
    expect(running.status).toMatchObject({ active: 1, ready: 0, terminating: 0, uncountedTerminatedPods: {} });
    expect(running.status?.startTime).toBeDefined();
    expect((await k(['get', 'job', 'hello', '-n', NS])).stdout).toMatch(/^hello\s+Running\s+0\/1\s+/m);

    await finish(pod!, 'Succeeded');
    const wait = await k(['wait', '--for=condition=complete', 'job/hello', '-n', NS, '--timeout=20s']);
    expect(wait.stdout).toContain('job.batch/hello condition met');
    const done = await job('hello');
    expect(done.status).toMatchObject({ succeeded: 1, uncountedTerminatedPods: {} });
    expect(done.status?.active ?? 0).toBe(0);
    expect(done.status?.completionTime).toBeDefined();
    expect(condition(done, 'SuccessCriteriaMet')).toMatchObject({ status: 'True', reason: 'CompletionsReached' });
    expect(condition(done, 'Complete')).toMatchObject({ status: 'True', reason: 'CompletionsReached' });
    // Counted: the pod's tracking finalizer is gone.
    await waitFor('the finalizer removed', async () => ((await podsOf('hello'))[0]?.metadata.finalizers ?? []).length === 0 || undefined);
    expect((await k(['get', 'job', 'hello', '-n', NS])).stdout).toMatch(/^hello\s+Complete\s+1\/1\s+/m);
  });

  it('fails a Job past its backoff limit, replacing failed pods until then', async () => {
    await k(['apply', '-n', NS, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'flaky' },
        spec: { backoffLimit: 1, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
      }),
    });
    const [first] = await waitPods('flaky', 1);
    await finish(first!, 'Failed');
    // One failure is within the limit: a replacement.
    const pods = await waitPods('flaky', 2);
    const second = pods.find((p) => p.metadata.uid !== first!.metadata.uid)!;
    await finish(second, 'Failed');
    await k(['wait', '--for=condition=failed', 'job/flaky', '-n', NS, '--timeout=20s']);
    const failed = await job('flaky');
    expect(failed.status?.failed).toBe(2);
    expect(condition(failed, 'Failed')).toMatchObject({ status: 'True', reason: 'BackoffLimitExceeded' });
    expect(condition(failed, 'FailureTarget')).toMatchObject({ status: 'True', reason: 'BackoffLimitExceeded' });
  });

  it('waits before replacing a failed pod, twice as long after each failure since the last success', async () => {
    await k(['create', 'job', 'crashy', '-n', NS, '--image=busybox']);
    /** Fails the pod as a kubelet reports it, its container finished now (to the second); returns that time. */
    const crash = async (pod: Pod): Promise<number> => {
      const at = Math.floor(Date.now() / 1000) * 1000;
      const finishedAt = new Date(at).toISOString().replace('.000Z', 'Z');
      const terminated = { exitCode: 1, reason: 'Error', startedAt: finishedAt, finishedAt };
      await finish(pod, 'Failed', {
        containerStatuses: [{ name: 'kubectl-create', image: 'busybox', imageID: '', ready: false, restartCount: 0, state: { terminated } }],
      });
      return at;
    };
    const [first] = await waitPods('crashy', 1);
    const failedAt = await crash(first!);
    const second = (await waitPods('crashy', 2)).find((p) => p.metadata.uid !== first!.metadata.uid)!;
    // Created no earlier than a second after the failure (timestamps are to the second).
    expect(Date.parse(second.metadata.creationTimestamp!) - failedAt).toBeGreaterThanOrEqual(1000);
    const failedAgainAt = await crash(second);
    const third = (await waitPods('crashy', 3)).find((p) => ![first!.metadata.uid, second.metadata.uid].includes(p.metadata.uid))!;
    expect(Date.parse(third.metadata.creationTimestamp!) - failedAgainAt).toBeGreaterThanOrEqual(2000);
    await k(['delete', 'job', 'crashy', '-n', NS]);
  });

  it('applies the podFailurePolicy: an ignored failure does not count, a FailJob exit code fails the Job', async () => {
    await k(['apply', '-n', NS, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'strict' },
        spec: {
          backoffLimit: 0,
          podFailurePolicy: {
            rules: [
              { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] },
              { action: 'FailJob', onExitCodes: { containerName: 'main', operator: 'In', values: [42] } },
            ],
          },
          template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox' }] } },
        },
      }),
    });
    const [first] = await waitPods('strict', 1);
    // Evicted: ignored, so backoffLimit 0 is not exceeded and a replacement comes.
    await finish(first!, 'Failed', { conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI' }] });
    const pods = await waitPods('strict', 2);
    const second = pods.find((p) => p.metadata.uid !== first!.metadata.uid)!;
    expect(condition(await job('strict'), 'Failed')).toBeUndefined();
    await waitFor('the ignored pod released', async () => {
      const p = (await podsOf('strict')).find((x) => x.metadata.uid === first!.metadata.uid);
      return p && !p.metadata.finalizers?.length ? true : undefined;
    });
    expect((await job('strict')).status?.failed).toBeUndefined();

    await finish(second, 'Failed', {
      containerStatuses: [
        { name: 'main', ready: false, restartCount: 0, image: 'busybox', imageID: '', state: { terminated: { exitCode: 42, reason: 'Error' } } },
      ],
    });
    await k(['wait', '--for=condition=failed', 'job/strict', '-n', NS, '--timeout=20s']);
    const failed = await job('strict');
    const message = `Container main for pod ${NS}/${second.metadata.name} failed with exit code 42 matching FailJob rule at index 1`;
    expect(condition(failed, 'Failed')).toMatchObject({ status: 'True', reason: 'PodFailurePolicy', message });
    expect(condition(failed, 'FailureTarget')).toMatchObject({ status: 'True', reason: 'PodFailurePolicy', message });
    expect(failed.status?.failed).toBe(1);
  });

  it('runs an Indexed Job index by index within its parallelism', async () => {
    await k(['apply', '-n', NS, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'shards' },
        spec: {
          completions: 3,
          parallelism: 2,
          completionMode: 'Indexed',
          template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
        },
      }),
    });
    const pods = await waitPods('shards', 2);
    const byIndex = new Map(pods.map((p) => [p.metadata.annotations?.['batch.kubernetes.io/job-completion-index'], p]));
    expect([...byIndex.keys()].sort()).toEqual(['0', '1']);
    expect(byIndex.get('0')!.metadata.name).toMatch(/^shards-0-[a-z0-9]{5}$/);
    expect(byIndex.get('0')!.spec.hostname).toBe('shards-0');
    expect(byIndex.get('1')!.metadata.labels?.['batch.kubernetes.io/job-completion-index']).toBe('1');
    await finish(byIndex.get('0')!, 'Succeeded');
    const next = await waitPods('shards', 3, (ps) => ps.some((p) => p.metadata.annotations?.['batch.kubernetes.io/job-completion-index'] === '2'));
    expect(next).toHaveLength(3);
    await waitJob('shards', (j) => j.status?.completedIndexes === '0' && j.status?.succeeded === 1, 'index 0 completed');
    for (const p of next) if (p.metadata.annotations?.['batch.kubernetes.io/job-completion-index'] !== '0') await finish(p, 'Succeeded');
    const done = await waitJob('shards', (j) => condition(j, 'Complete')?.status === 'True', 'the Indexed Job complete');
    expect(done.status).toMatchObject({ succeeded: 3, completedIndexes: '0-2' });
  });

  it('completes an Indexed Job once its success policy is met, and deletes the pods still running', async () => {
    await k(['apply', '-n', NS, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'leader' },
        spec: {
          completions: 3,
          parallelism: 3,
          completionMode: 'Indexed',
          successPolicy: { rules: [{ succeededIndexes: '0' }] },
          template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
        },
      }),
    });
    const pods = await waitPods('leader', 3);
    const index = (p: Pod) => p.metadata.annotations?.['batch.kubernetes.io/job-completion-index'];
    // Index 1 succeeding meets no rule.
    await finish(
      pods.find((p) => index(p) === '1')!,
      'Succeeded',
    );
    await waitJob('leader', (j) => j.status?.completedIndexes === '1', 'index 1 completed');
    expect(condition(await job('leader'), 'Complete')).toBeUndefined();
    await finish(
      pods.find((p) => index(p) === '0')!,
      'Succeeded',
    );
    const done = await waitJob('leader', (j) => condition(j, 'Complete')?.status === 'True', 'the Job complete by its success policy');
    for (const type of ['SuccessCriteriaMet', 'Complete']) {
      expect(condition(done, type)).toMatchObject({ status: 'True', reason: 'SuccessPolicy', message: 'Matched rules at index 0' });
    }
    expect(done.status).toMatchObject({ succeeded: 2, completedIndexes: '0-1' });
    expect(done.status?.completionTime).toBeDefined();
    // Index 2 never ran to its end: its pod is deleted.
    await waitFor('the pod of index 2 gone', async () => !(await podsOf('leader')).some((p) => index(p) === '2') || undefined);
    expect((await k(['get', 'job', 'leader', '-n', NS])).stdout).toMatch(/leader\s+Complete\s/);
  });

  it('replaces a terminating pod at once and counts it failed, or with podReplacementPolicy Failed waits for it to be gone and does not', async () => {
    // Bound to a node of their own, so the pod collector leaves the terminating pods to this test.
    await k(['create', '-f', '-'], { input: 'apiVersion: v1\nkind: Node\nmetadata:\n  name: job-node\n' });
    for (const [name, policy] of [
      ['eager', 'TerminatingOrFailed'],
      ['patient', 'Failed'],
    ]) {
      await k(['apply', '-n', NS, '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'batch/v1',
          kind: 'Job',
          metadata: { name },
          spec: {
            podReplacementPolicy: policy,
            template: { spec: { nodeName: 'job-node', restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
          },
        }),
      });
      const [pod] = await waitPods(name!, 1);
      // A finalizer of someone else's keeps the deleted pod terminating.
      await k(['patch', 'pod', pod!.metadata.name, '-n', NS, '--type=json', '-p', '[{"op":"add","path":"/metadata/finalizers/-","value":"example.com/hold"}]']);
      await k(['delete', 'pod', pod!.metadata.name, '-n', NS, '--wait=false']);
    }
    const eager = await waitJob('eager', (j) => j.status?.failed === 1 && j.status?.active === 1, 'eager: a replacement and one failure');
    expect(eager.status).toMatchObject({ terminating: 1 });
    expect(await podsOf('eager')).toHaveLength(2);
    const patient = await waitJob('patient', (j) => j.status?.terminating === 1, 'patient: one terminating');
    await new Promise((r) => setTimeout(r, 1000));
    expect([(await podsOf('patient')).length, (await job('patient')).status?.active, (await job('patient')).status?.failed]).toEqual([1, 0, undefined]);
    expect(patient.status?.failed).toBeUndefined();
    const [held] = await podsOf('patient');
    await k(['patch', 'pod', held!.metadata.name, '-n', NS, '--type=json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]']);
    const replaced = await waitJob('patient', (j) => j.status?.active === 1, 'patient: a replacement once the pod is gone');
    expect(replaced.status?.failed).toBeUndefined();
    expect(replaced.status).toMatchObject({ terminating: 0 });
    for (const p of await podsOf('eager')) {
      if (p.metadata.finalizers?.includes('example.com/hold'))
        await k(['patch', 'pod', p.metadata.name, '-n', NS, '--type=json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]']);
    }
    await k(['delete', 'job', 'eager', 'patient', '-n', NS]);
  });

  it('holds the terminal condition of a finishing Job until its terminating pods are gone, failing or succeeding', async () => {
    await k(['create', '-f', '-'], { input: 'apiVersion: v1\nkind: Node\nmetadata:\n  name: drain-node\n' });
    const template = { spec: { nodeName: 'drain-node', restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } };
    const hold = (pod: Pod) =>
      k(['patch', 'pod', pod.metadata.name, '-n', NS, '--type=json', '-p', '[{"op":"add","path":"/metadata/finalizers/-","value":"example.com/hold"}]']);
    const release = (pod: Pod) => k(['patch', 'pod', pod.metadata.name, '-n', NS, '--type=json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]']);
    const index = (p: Pod) => p.metadata.annotations?.['batch.kubernetes.io/job-completion-index'];

    // Failing: past its backoff limit, the Job is FailureTarget while its other pod terminates.
    await k(['apply', '-n', NS, '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'draining' }, spec: { parallelism: 2, backoffLimit: 0, template } }),
    });
    const [a, b] = await waitPods('draining', 2);
    await hold(b!);
    await finish(a!, 'Failed');
    const target = await waitJob('draining', (j) => condition(j, 'FailureTarget')?.status === 'True' && j.status?.terminating === 1, 'draining: FailureTarget');
    expect(condition(target, 'FailureTarget')).toMatchObject({ reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' });
    expect(condition(target, 'Failed')).toBeUndefined();
    expect(target.status?.active ?? 0).toBe(0);
    expect((await k(['get', 'job', 'draining', '-n', NS])).stdout).toMatch(/^draining\s+FailureTarget\s/m);
    // Still terminating a second later: still no Failed.
    await new Promise((r) => setTimeout(r, 1000));
    const held = (await podsOf('draining')).find((p) => p.metadata.uid === b!.metadata.uid);
    expect(held?.metadata.finalizers).toEqual(['example.com/hold']);
    expect(condition(await job('draining'), 'Failed')).toBeUndefined();
    await release(b!);
    await k(['wait', '--for=condition=failed', 'job/draining', '-n', NS, '--timeout=20s']);
    const failed = await job('draining');
    // The deleted pod of a failing Job counts as failed, as kube counts it.
    expect(failed.status).toMatchObject({ failed: 2, terminating: 0, active: 0 });
    expect(condition(failed, 'Failed')).toMatchObject({ status: 'True', reason: 'BackoffLimitExceeded' });

    // Succeeding by its success policy: SuccessCriteriaMet at once, Complete once index 1's pod is gone.
    await k(['apply', '-n', NS, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'settling' },
        spec: { completions: 2, parallelism: 2, completionMode: 'Indexed', successPolicy: { rules: [{ succeededIndexes: '0' }] }, template },
      }),
    });
    const pods = await waitPods('settling', 2);
    await hold(pods.find((p) => index(p) === '1')!);
    await finish(
      pods.find((p) => index(p) === '0')!,
      'Succeeded',
    );
    const met = await waitJob(
      'settling',
      (j) => condition(j, 'SuccessCriteriaMet')?.status === 'True' && j.status?.terminating === 1,
      'settling: SuccessCriteriaMet',
    );
    expect(condition(met, 'Complete')).toBeUndefined();
    expect(met.status?.completionTime).toBeUndefined();
    await new Promise((r) => setTimeout(r, 1000));
    expect(condition(await job('settling'), 'Complete')).toBeUndefined();
    await release(pods.find((p) => index(p) === '1')!);
    await k(['wait', '--for=condition=complete', 'job/settling', '-n', NS, '--timeout=20s']);
    const done = await job('settling');
    // The pod deleted after success is not a failure.
    expect(done.status).toMatchObject({ succeeded: 1, completedIndexes: '0', terminating: 0 });
    expect(done.status?.failed).toBeUndefined();
    expect(Date.parse(done.status!.completionTime!)).toBeGreaterThanOrEqual(Date.parse(condition(met, 'SuccessCriteriaMet')!.lastTransitionTime!));
    const events = (
      await eventsOnceSeen(server, NS, 'involvedObject.name=settling', (out) => out.split(' ').includes('Completed'), '{.items[*].reason}')
    ).split(' ');
    expect(events.filter((r) => r === 'Completed')).toHaveLength(1);
    await k(['delete', 'job', 'draining', 'settling', '-n', NS]);
  });

  it('limits failures per index: a failed index gets no more pods, and the Job fails on its failed indexes or past maxFailedIndexes', async () => {
    const indexedJob = (name: string, extra: Record<string, unknown>) =>
      k(['apply', '-n', NS, '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'batch/v1',
          kind: 'Job',
          metadata: { name },
          spec: {
            completions: 2,
            parallelism: 2,
            completionMode: 'Indexed',
            backoffLimitPerIndex: 1,
            ...extra,
            template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
          },
        }),
      });
    const index = (p: Pod) => p.metadata.annotations?.['batch.kubernetes.io/job-completion-index'];
    const failures = (p: Pod) => p.metadata.annotations?.['batch.kubernetes.io/job-index-failure-count'];
    const live = (ps: Pod[], i: string) => ps.find((p) => index(p) === i && !['Failed', 'Succeeded'].includes(String(p.status?.phase)));

    await indexedJob('per-index', {});
    let pods = await waitPods('per-index', 2);
    expect(pods.map(failures)).toEqual(['0', '0']);
    // Index 0 fails once: within its limit, a new pod counts the failure.
    await finish(live(pods, '0')!, 'Failed');
    pods = await waitPods('per-index', 3, (ps) => live(ps, '0') !== undefined);
    expect(failures(live(pods, '0')!)).toBe('1');
    // Twice: the index fails, and gets no more pods.
    await finish(live(pods, '0')!, 'Failed');
    // The index is recorded failed with the uncounted pod, the count follows once its finalizer is gone.
    const failedOnce = await waitJob('per-index', (j) => j.status?.failedIndexes === '0' && j.status?.failed === 2, 'index 0 failed, 2 failures counted');
    expect(condition(failedOnce, 'Failed')).toBeUndefined();
    // Index 1 succeeds: every index is done, one failed, so the Job fails.
    await finish(live(await podsOf('per-index'), '1')!, 'Succeeded');
    const failed = await waitJob('per-index', (j) => condition(j, 'Failed')?.status === 'True', 'the Job failed on its failed indexes');
    expect(condition(failed, 'Failed')).toMatchObject({ reason: 'FailedIndexes', message: 'Job has failed indexes' });
    expect(failed.status).toMatchObject({ completedIndexes: '1', succeeded: 1, failed: 2 });
    expect((await podsOf('per-index')).filter((p) => index(p) === '0')).toHaveLength(2);

    // With maxFailedIndexes 0 the first failed index fails the Job, and the other index's pod goes.
    await indexedJob('capped', { maxFailedIndexes: 0 });
    pods = await waitPods('capped', 2);
    await finish(live(pods, '0')!, 'Failed');
    pods = await waitPods('capped', 3, (ps) => live(ps, '0') !== undefined);
    await finish(live(pods, '0')!, 'Failed');
    const strict = await waitJob('capped', (j) => condition(j, 'Failed')?.status === 'True', 'the Job failed past maxFailedIndexes');
    expect(condition(strict, 'Failed')).toMatchObject({
      reason: 'MaxFailedIndexesExceeded',
      message: 'Job has exceeded the specified maximal number of failed indexes',
    });
    await waitFor('the pod of index 1 gone', async () => live(await podsOf('capped'), '1') === undefined || undefined);
  });

  it('leaves a Job whose managedBy names another controller to it', async () => {
    const jobYaml = (name: string, managedBy?: string) =>
      JSON.stringify({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name },
        spec: { ...(managedBy ? { managedBy } : {}), template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
      });
    await k(['apply', '-n', NS, '-f', '-'], { input: jobYaml('elsewhere', 'example.com/batch') });
    await k(['apply', '-n', NS, '-f', '-'], { input: jobYaml('here', 'kubernetes.io/job-controller') });
    // The controller takes Jobs in the order it sees them: once the second has its pod, it has
    // looked at the first.
    await waitPods('here', 1);
    expect(await podsOf('elsewhere')).toEqual([]);
    expect((await job('elsewhere')).status?.startTime).toBeUndefined();
    await k(['delete', 'job', 'elsewhere', 'here', '-n', NS]);
  });

  it('a suspended Job has no pods until resumed', async () => {
    await k(['create', 'job', 'later', '-n', NS, '--image=busybox']);
    await waitPods('later', 1);
    await k(['patch', 'job', 'later', '-n', NS, '--type=merge', '-p', '{"spec":{"suspend":true}}']);
    const suspended = await waitJob('later', (j) => condition(j, 'Suspended')?.status === 'True', 'the Suspended condition');
    expect(suspended.status?.startTime).toBeUndefined();
    await waitPods('later', 0);
    await k(['patch', 'job', 'later', '-n', NS, '--type=merge', '-p', '{"spec":{"suspend":false}}']);
    await waitPods('later', 1);
    const resumed = await waitJob('later', (j) => condition(j, 'Suspended')?.status === 'False', 'the Suspended condition False');
    expect(condition(resumed, 'Suspended')).toMatchObject({ reason: 'JobResumed' });
  });

  it('deletes a finished Job after its time to live, and a deleted Job lets its pods go', async () => {
    await k(['apply', '-n', NS, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'short' },
        spec: { ttlSecondsAfterFinished: 1, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
      }),
    });
    const [pod] = await waitPods('short', 1);
    await finish(pod!, 'Succeeded');
    await waitFor('the Job deleted', async () =>
      (await request(server, 'GET', `/apis/batch/v1/namespaces/${NS}/jobs/short`)).status === 404 ? true : undefined,
    );
    await waitPods('short', 0);

    // kubectl delete: the pods still running go too (their tracking finalizer removed).
    await k(['create', 'job', 'gone', '-n', NS, '--image=busybox']);
    await waitPods('gone', 1);
    expect((await k(['delete', 'job', 'gone', '-n', NS])).stdout).toContain('job.batch "gone" deleted');
    expect(await waitPods('gone', 0)).toEqual([]);
  });
});
