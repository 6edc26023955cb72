/**
 * PodDisruptionBudgets end to end: the disruption controller computes a budget's status from its
 * pods (ready ones count; a controller's scale for percentages and maxUnavailable), and the
 * pods' eviction subresource spends it. Real kubectl: `create pdb`, the columns, `drain` held
 * back by a budget and let through once the budget is relaxed; the unhealthy-pod policies; a
 * dry-run eviction spending nothing; a budget over a pod whose controller has no scale failing
 * safe; and the budget's validation messages. Pods are stored only, so the tests make them Running and
 * Ready through /status, as a kubelet would.
 */
import { jest } from '@jest/globals';
import { kubectl, request, startServer, waitFor, type ServerHandle } from './support/server.js';

jest.setTimeout(180_000);

let server: ServerHandle;

beforeAll(async () => {
  server = await startServer();
});

afterAll(async () => {
  await server?.cleanup();
});

type Obj = Record<string, unknown>;
const k = (args: string[], opts: { input?: string; expectFail?: boolean } = {}) => kubectl(server, args, opts);
const PODS = (ns: string) => `/api/v1/namespaces/${ns}/pods`;
const PDBS = (ns: string) => `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`;

async function namespace(ns: string): Promise<void> {
  expect((await request(server, 'POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } })).status).toBe(201);
}

/** Creates a pod and makes it Running (and Ready unless `ready` is false) through /status. */
async function runningPod(ns: string, name: string, labels: Record<string, string>, opts: { node?: string; ready?: boolean; meta?: Obj } = {}): Promise<void> {
  const body = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels, ...opts.meta },
    spec: { containers: [{ name: 'c', image: 'nginx' }], ...(opts.node ? { nodeName: opts.node } : {}) },
  };
  const created = await request(server, 'POST', PODS(ns), { body });
  expect(created.status).toBe(201);
  const pod = created.json() as Obj;
  const ready = opts.ready ?? true;
  pod.status = { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] };
  expect((await request(server, 'PUT', `${PODS(ns)}/${name}/status`, { body: pod })).status).toBe(200);
}

async function budget(ns: string, name: string): Promise<Obj> {
  return (await request(server, 'GET', `${PDBS(ns)}/${name}`)).json() as Obj;
}

/** Waits until the budget's status (observed at its generation) has the given fields. */
async function statusOf(ns: string, name: string, want: Obj): Promise<Obj> {
  let last: Obj | undefined;
  try {
    return await waitFor(`status ${JSON.stringify(want)} of ${ns}/${name}`, async () => {
      const b = await budget(ns, name);
      const s = (b.status ?? {}) as Obj;
      last = s;
      const meta = b.metadata as Obj;
      if (s.observedGeneration !== meta.generation) return false;
      return Object.entries(want).every(([f, v]) => JSON.stringify(s[f]) === JSON.stringify(v)) ? s : false;
    });
  } catch (e) {
    const pods = (await request(server, 'GET', PODS(ns))).json() as { items: { metadata: Obj; status: Obj }[] };
    const seen = pods.items.map((p) => `${p.metadata.name as string}:${p.status.phase as string}`).join(' ');
    throw new Error(`${(e as Error).message}; last status ${JSON.stringify(last)}; pods ${seen}`, { cause: e });
  }
}

const evict = (ns: string, name: string, deleteOptions: Obj = {}) =>
  request(server, 'POST', `${PODS(ns)}/${name}/eviction`, { body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name }, deleteOptions } });

describe('PodDisruptionBudget', () => {
  it('is created with kubectl, computed from its ready pods, and listed with its columns', async () => {
    await namespace('pdb-a');
    expect((await k(['-n', 'pdb-a', 'create', 'pdb', 'web', '--selector=app=web', '--min-available=2'])).stdout).toContain(
      'poddisruptionbudget.policy/web created',
    );
    for (const n of ['w1', 'w2', 'w3']) await runningPod('pdb-a', n, { app: 'web' });
    await runningPod('pdb-a', 'w4', { app: 'web' }, { ready: false });
    await runningPod('pdb-a', 'other', { app: 'other' });
    const s = await statusOf('pdb-a', 'web', { expectedPods: 4, currentHealthy: 3, desiredHealthy: 2, disruptionsAllowed: 1 });
    expect(s.conditions).toEqual([expect.objectContaining({ type: 'DisruptionAllowed', status: 'True', reason: 'SufficientPods', observedGeneration: 1 })]);
    expect(s.disruptedPods).toBeUndefined();
    const table = (await k(['-n', 'pdb-a', 'get', 'pdb'])).stdout;
    expect(table).toMatch(/^NAME\s+MIN AVAILABLE\s+MAX UNAVAILABLE\s+ALLOWED DISRUPTIONS\s+AGE$/m);
    expect(table).toMatch(/^web\s+2\s+N\/A\s+1\s+\d+s$/m);
    const explain = (await k(['explain', 'pdb.spec.unhealthyPodEvictionPolicy'])).stdout;
    expect(explain).toMatch(/FIELD:\s+unhealthyPodEvictionPolicy <string>/);

    // One eviction is allowed; it is recorded until the controller sees the pod gone.
    expect((await evict('pdb-a', 'w1')).status).toBe(201);
    expect((await request(server, 'GET', `${PODS('pdb-a')}/w1`)).status).toBe(404);
    await statusOf('pdb-a', 'web', { expectedPods: 3, currentHealthy: 2, disruptionsAllowed: 0 });
    const refused = await evict('pdb-a', 'w2');
    expect(refused.status).toBe(429);
    expect(refused.json()).toMatchObject({
      reason: 'TooManyRequests',
      message: "Cannot evict pod as it would violate the pod's disruption budget.",
      details: { causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget web needs 2 healthy pods and has 2 currently' }] },
    });
    // The unready pod goes without spending the budget (IfHealthyBudget, the default, while it holds).
    expect((await evict('pdb-a', 'w4')).status).toBe(201);
    // A pod no budget selects is evicted at once.
    expect((await evict('pdb-a', 'other')).status).toBe(201);
  });

  it('holds kubectl drain back until the budget is relaxed', async () => {
    await namespace('pdb-b');
    await request(server, 'POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'pdb-node' } } });
    await runningPod('pdb-b', 'db-0', { app: 'db' }, { node: 'pdb-node' });
    await runningPod('pdb-b', 'db-1', { app: 'db' }, { node: 'pdb-node' });
    await runningPod('pdb-b', 'db-2', { app: 'db' }, { node: 'elsewhere' });
    await k(['-n', 'pdb-b', 'create', 'pdb', 'db', '--selector=app=db', '--min-available=3']);
    await statusOf('pdb-b', 'db', { currentHealthy: 3, disruptionsAllowed: 0 });

    const blocked = await k(['drain', 'pdb-node', '--ignore-daemonsets', '--force', '--timeout=3s'], { expectFail: true });
    expect(blocked.stdout + blocked.stderr).toContain("Cannot evict pod as it would violate the pod's disruption budget.");
    expect((await request(server, 'GET', `${PODS('pdb-b')}/db-0`)).status).toBe(200);
    expect((await request(server, 'GET', `${PODS('pdb-b')}/db-1`)).status).toBe(200);

    await k(['-n', 'pdb-b', 'patch', 'pdb', 'db', '--type=merge', '-p', '{"spec":{"minAvailable":1}}']);
    expect((await budget('pdb-b', 'db')).metadata).toMatchObject({ generation: 2 });
    await statusOf('pdb-b', 'db', { desiredHealthy: 1, disruptionsAllowed: 2 });
    const drained = await k(['drain', 'pdb-node', '--ignore-daemonsets', '--force', '--timeout=60s']);
    expect(drained.stdout).toContain('pod/db-0 evicted');
    expect(drained.stdout).toContain('pod/db-1 evicted');
    expect(drained.stdout).toContain('node/pdb-node drained');
    await statusOf('pdb-b', 'db', { expectedPods: 1, currentHealthy: 1, disruptionsAllowed: 0 });
    expect((await request(server, 'GET', `${PODS('pdb-b')}/db-2`)).status).toBe(200);
  });

  it('lets AlwaysAllow evict an unready pod at zero allowed, spends nothing on a dry run, and marks the pod', async () => {
    await namespace('pdb-c');
    await runningPod('pdb-c', 'a1', { app: 'a' });
    await runningPod('pdb-c', 'a2', { app: 'a' }, { ready: false });
    // A finalizer keeps the evicted pod visible, to see the condition the eviction gave it.
    await runningPod('pdb-c', 'a3', { app: 'a' }, { meta: { finalizers: ['example.com/hold'] } });
    const pdb = {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'a' },
      spec: { selector: { matchLabels: { app: 'a' } }, maxUnavailable: 0 },
    };
    expect((await request(server, 'POST', PDBS('pdb-c'), { body: pdb })).status).toBe(201);
    await statusOf('pdb-c', 'a', { disruptionsAllowed: 0 });
    expect((await evict('pdb-c', 'a2')).status).toBe(429);

    await k(['-n', 'pdb-c', 'patch', 'pdb', 'a', '--type=merge', '-p', '{"spec":{"unhealthyPodEvictionPolicy":"AlwaysAllow"}}']);
    await statusOf('pdb-c', 'a', { disruptionsAllowed: 0 });
    expect((await evict('pdb-c', 'a2')).status).toBe(201);
    expect((await request(server, 'GET', `${PODS('pdb-c')}/a2`)).status).toBe(404);

    await k([
      '-n',
      'pdb-c',
      'patch',
      'pdb',
      'a',
      '--type=json',
      '-p',
      '[{"op":"remove","path":"/spec/maxUnavailable"},{"op":"add","path":"/spec/minAvailable","value":1}]',
    ]);
    const before = await statusOf('pdb-c', 'a', { disruptionsAllowed: 1 });
    const dry = await evict('pdb-c', 'a3', { dryRun: ['All'] });
    expect(dry.status).toBe(201);
    // The same as the query's dryRun=All.
    const dryQuery = await request(server, 'POST', `${PODS('pdb-c')}/a3/eviction?dryRun=All`, {
      body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'a3' } },
    });
    expect(dryQuery.status).toBe(201);
    expect(((await request(server, 'GET', `${PODS('pdb-c')}/a3`)).json() as { metadata: Obj }).metadata.deletionTimestamp).toBeUndefined();
    const after = (await budget('pdb-c', 'a')).status as Obj;
    expect(after.disruptionsAllowed).toBe(before.disruptionsAllowed);
    expect(after.disruptedPods).toBeUndefined();

    expect((await evict('pdb-c', 'a3')).status).toBe(201);
    const pod = (await request(server, 'GET', `${PODS('pdb-c')}/a3`)).json() as { metadata: Obj; status: { conditions: Obj[] } };
    expect(pod.metadata.deletionTimestamp).toBeDefined();
    expect(pod.status.conditions).toContainEqual(
      expect.objectContaining({ type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI', message: 'Eviction API: evicting' }),
    );
    // The pod is terminating now, so the controller dropped it from disruptedPods and counts it out.
    await statusOf('pdb-c', 'a', { currentHealthy: 1, disruptionsAllowed: 0 });
    await k(['-n', 'pdb-c', 'patch', 'pod', 'a3', '--type=json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]']);
  });

  it("counts a Deployment's scale for percentages and fails safe on a controller without a scale", async () => {
    await namespace('pdb-d');
    const dep = await request(server, 'POST', '/apis/apps/v1/namespaces/pdb-d/deployments', {
      body: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'api' },
        spec: {
          replicas: 4,
          // Paused: the deployment controller creates no ReplicaSet of its own, and takes the
          // one below (the same template) as its current one.
          paused: true,
          selector: { matchLabels: { app: 'api' } },
          template: { metadata: { labels: { app: 'api' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
        },
      },
    });
    expect(dep.status).toBe(201);
    const depUid = (dep.json() as { metadata: { uid: string } }).metadata.uid;
    const rs = await request(server, 'POST', '/apis/apps/v1/namespaces/pdb-d/replicasets', {
      body: {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: {
          name: 'api-1',
          labels: { app: 'api' },
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'api', uid: depUid, controller: true }],
        },
        spec: {
          replicas: 4,
          selector: { matchLabels: { app: 'api' } },
          template: { metadata: { labels: { app: 'api' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
        },
      },
    });
    expect(rs.status).toBe(201);
    const rsUid = (rs.json() as { metadata: { uid: string } }).metadata.uid;
    const owned = { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'api-1', uid: rsUid, controller: true }] };
    // Bound to a node: the ReplicaSet controller may have created pods of its own already, and
    // with too many pods it deletes unassigned ones first; an unbound pod of ours, still Pending
    // when it looks, would rank as the newest pending one and go instead.
    for (const n of ['api-a', 'api-b', 'api-c']) await runningPod('pdb-d', n, { app: 'api' }, { node: 'pdb-node', meta: owned });
    await k(['-n', 'pdb-d', 'create', 'pdb', 'api', '--selector=app=api', '--min-available=50%']);
    await statusOf('pdb-d', 'api', { expectedPods: 4, desiredHealthy: 2, currentHealthy: 3, disruptionsAllowed: 1 });
    await k(['-n', 'pdb-d', 'scale', 'deployment', 'api', '--replicas=6']);
    await statusOf('pdb-d', 'api', { expectedPods: 6, desiredHealthy: 3, disruptionsAllowed: 0 });

    // A pod controlled by a Job: a Job has no scale, so the budget cannot count it.
    const job = await request(server, 'POST', '/apis/batch/v1/namespaces/pdb-d/jobs', {
      body: {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'batch' },
        spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
      },
    });
    expect(job.status).toBe(201);
    const jobUid = (job.json() as { metadata: { uid: string } }).metadata.uid;
    // Bound to a node: the Job controller, finding it beside a pod of its own (both Pending for a
    // moment, before this one's status is written), deletes the unassigned pod first, not this one.
    await runningPod(
      'pdb-d',
      'api-x',
      { app: 'api' },
      { node: 'pdb-node', meta: { ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'batch', uid: jobUid, controller: true }] } },
    );
    const failed = await waitFor('SyncFailed', async () => {
      const s = (await budget('pdb-d', 'api')).status as { conditions?: Obj[]; disruptionsAllowed?: number };
      return s.conditions?.find((c) => c.reason === 'SyncFailed') ? s : false;
    });
    expect(failed.disruptionsAllowed).toBe(0);
    expect(failed.conditions).toEqual([
      expect.objectContaining({ type: 'DisruptionAllowed', status: 'False', message: 'jobs.batch does not implement the scale subresource' }),
    ]);
    const refused = await evict('pdb-d', 'api-a');
    expect(refused.status).toBe(429);
  });

  it("refuses invalid budgets with Kubernetes' messages", async () => {
    await namespace('pdb-e');
    const bad = async (spec: Obj) => {
      const r = await request(server, 'POST', PDBS('pdb-e'), {
        body: { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'bad' }, spec },
      });
      expect(r.status).toBe(422);
      return (r.json() as { message: string }).message;
    };
    expect(await bad({ minAvailable: 1, maxUnavailable: 1 })).toContain('minAvailable and maxUnavailable cannot be both set');
    expect(await bad({ maxUnavailable: '150%' })).toContain('spec.maxUnavailable: Invalid value: "150%": must not be greater than 100%');
    expect(await bad({ minAvailable: -1 })).toContain('spec.minAvailable: Invalid value: -1: must be greater than or equal to 0');
    expect(await bad({ minAvailable: 'half' })).toContain(
      'spec.minAvailable: Invalid value: "half": a valid percent string must be a numeric string followed by an ending \'%\'',
    );
    expect(await bad({ unhealthyPodEvictionPolicy: 'Never' })).toContain(
      'spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported values: "AlwaysAllow", "IfHealthyBudget"',
    );
    const r = await k(['-n', 'pdb-e', 'create', 'pdb', 'x', '--selector=app=x', '--min-available=1', '--max-unavailable=1'], { expectFail: true });
    expect(r.stderr).toContain('min-available and max-unavailable cannot be both specified');
  });
});
