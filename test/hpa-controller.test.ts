/**
 * The HorizontalPodAutoscaler controller end to end: `kubectl autoscale` a Deployment whose pods
 * the test runs (it plays their kubelet through /status), with the resource metrics API served
 * by the metrics-server stand-in (test/support/metrics-standin.ts) behind the aggregation layer.
 *
 * Checked: below minReplicas the target is scaled up at once, without metrics; without a
 * resource metrics API the HPA says why (ScalingActive False, FailedGetResourceMetric) and
 * `kubectl get hpa` shows `<unknown>`; with it, the pods' CPU against their requests sets the
 * replicas (scaled up, twice the pods at 100% of a 50% target), unready new pods do not make it
 * scale further, a behavior's scale-down policy limits the rate (ScalingLimited), a Pods metric
 * of the custom metrics API and an External metric of the external metrics API (served by the
 * same stand-in) each propose replicas and the higher wins, and a target that does not exist is
 * reported (AbleToScale False, FailedGetScale).
 */
import { jest } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { releaseOutsideAddresses, waitFor } from './support/net.helper.js';
import { apiService, availableWhen, standInObjects, startMetricsStandIn, type MetricsStandIn } from './support/metrics-standin.js';
import { kubectl, request, startServer, type ServerHandle } from './support/server.js';

jest.setTimeout(180_000);

type Obj = Record<string, unknown>;
interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}
interface Hpa {
  metadata: { generation?: number };
  status?: { currentReplicas?: number; desiredReplicas?: number; currentMetrics?: Obj[]; conditions?: Condition[]; lastScaleTime?: string };
}
interface Pod {
  metadata: { name: string; labels?: Record<string, string> };
  status?: Obj;
}

const NS = 'autoscaled';
let server: ServerHandle;
let standIn: MetricsStandIn;
let dir: string;

const k = (args: string[], input?: string) => kubectl(server, args, input === undefined ? {} : { input });
const hpa = async (name: string): Promise<Hpa> =>
  (await request(server, 'GET', `/apis/autoscaling/v2/namespaces/${NS}/horizontalpodautoscalers/${name}`)).json() as Hpa;
const condition = (h: Hpa, type: string) => h.status?.conditions?.find((c) => c.type === type);
const waitHpa = (name: string, what: string, check: (h: Hpa) => boolean) =>
  waitFor(
    what,
    async () => {
      const h = await hpa(name);
      return check(h) ? h : undefined;
    },
    60_000,
  );
const replicas = async (deployment: string): Promise<number> =>
  ((await request(server, 'GET', `/apis/apps/v1/namespaces/${NS}/deployments/${deployment}`)).json() as { spec: { replicas: number } }).spec.replicas;
const pods = async (app: string): Promise<Pod[]> =>
  ((await request(server, 'GET', `/api/v1/namespaces/${NS}/pods?labelSelector=app%3D${app}`)).json() as { items: Pod[] }).items;
const events = async (name: string): Promise<string[]> =>
  (
    (await request(server, 'GET', `/api/v1/namespaces/${NS}/events?fieldSelector=involvedObject.name%3D${name}`)).json() as {
      items: { reason: string; message: string }[];
    }
  ).items.map((e) => `${e.reason}: ${e.message}`);
/**
 * The Events of `name` (as `reason: message`) once one is `line`, or starts with it when `prefix`
 * (the recorder writes Events on its own, after what they tell of).
 */
const eventSeen = (name: string, line: string, prefix = false): Promise<string[]> =>
  waitFor(`the Event "${line}" of ${name}`, async () => {
    const all = await events(name);
    return all.some((e) => (prefix ? e.startsWith(line) : e === line)) ? all : undefined;
  });

/** A Deployment of `replicas` pods labelled app=<name>, its container with `resources`. */
const deployment = (name: string, replicas: number, resources: Obj = {}) =>
  k(
    ['apply', '-n', NS, '-f', '-'],
    JSON.stringify({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name },
      spec: {
        replicas,
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'nginx', resources }] } },
      },
    }),
  );

/** Plays the kubelet: the pod runs, started ten minutes ago and ready since (past the CPU initialization period). */
async function run(pod: Pod): Promise<void> {
  const cur = (await request(server, 'GET', `/api/v1/namespaces/${NS}/pods/${pod.metadata.name}`)).json() as Pod;
  const started = new Date(Date.now() - 600_000).toISOString().replace(/\.\d+Z$/, 'Z');
  cur.status = {
    ...cur.status,
    phase: 'Running',
    startTime: started,
    conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date(Date.now() - 590_000).toISOString().replace(/\.\d+Z$/, 'Z') }],
  };
  const r = await request(server, 'PUT', `/api/v1/namespaces/${NS}/pods/${pod.metadata.name}/status`, { body: cur });
  if (r.status !== 200) throw new Error(`pod status: ${r.status} ${r.body}`);
}

/** The stand-in reports `cpu` for each named pod. */
const usage = (names: string[], cpu: string) =>
  standIn.setPodMetrics(
    names.map((name) => ({
      metadata: { name, namespace: NS },
      timestamp: new Date().toISOString(),
      window: '30s',
      containers: [{ name: 'app', usage: { cpu, memory: '10Mi' } }],
    })),
  );

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hpa-'));
  standIn = await startMetricsStandIn(dir, NS, '198.18.0.4');
  const ext = standIn.pkiDir;
  server = await startServer({
    args: [`--proxy-client-cert-file=${join(ext, 'admin.crt')}`, `--proxy-client-key-file=${join(ext, 'admin.key')}`, '--enable-aggregator-routing=true'],
    env: { KAPI_HPA_SYNC_PERIOD_MS: '1000' },
  });
  await k(['create', 'namespace', NS]);
  await deployment('web', 1, { requests: { cpu: '100m' } });
});

afterAll(async () => {
  await server?.cleanup();
  await standIn?.close();
  releaseOutsideAddresses();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('HorizontalPodAutoscaler controller', () => {
  it('scales a target below minReplicas up at once, and says why it cannot compute more without a metrics API', async () => {
    await k(['autoscale', 'deployment', 'web', '-n', NS, '--min=2', '--max=6', '--cpu-percent=50']);
    await waitFor('web scaled to 2', async () => (await replicas('web')) === 2 || undefined, 30_000);
    const h = await waitHpa('web', 'ScalingActive False', (x) => condition(x, 'ScalingActive')?.status === 'False' && x.status?.currentReplicas === 2);
    expect(condition(h, 'AbleToScale')).toMatchObject({ status: 'True' });
    expect(condition(h, 'ScalingActive')).toMatchObject({
      reason: 'FailedGetResourceMetric',
      message:
        'the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)',
    });
    const ev = await eventSeen(
      'web',
      'FailedComputeMetricsReplicas: invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value',
      true,
    );
    expect(ev).toContain('SuccessfulRescale: New size: 2; reason: Current number of replicas below Spec.MinReplicas');
    expect((await k(['get', 'hpa', 'web', '-n', NS])).stdout).toMatch(/web\s+Deployment\/web\s+cpu: <unknown>\/50%\s+2\s+6\s+2\s/);
    const described = (await k(['describe', 'hpa', 'web', '-n', NS])).stdout;
    expect(described).toMatch(/ScalingActive\s+False\s+FailedGetResourceMetric\s+the HPA was unable to compute the replica count/);
    expect(described).toMatch(/Normal\s+SuccessfulRescale\s+.*New size: 2; reason: Current number of replicas below Spec.MinReplicas/);
  });

  it('scales by the pods CPU against their requests once the resource metrics API answers', async () => {
    for (const [path, body] of standInObjects(standIn)) {
      const r = await request(server, 'POST', path, { body });
      if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${r.body}`);
    }
    await availableWhen(server, 'v1beta1.metrics.k8s.io', 'True');
    const first = await waitFor('two pods of web', async () => {
      const ps = await pods('web');
      return ps.length === 2 ? ps : undefined;
    });
    for (const p of first) await run(p);
    // 100m of 100m requested: 100% of the 50% target, twice the pods.
    usage(
      first.map((p) => p.metadata.name),
      '100m',
    );
    await waitFor('web scaled to 4', async () => (await replicas('web')) === 4 || undefined, 30_000);
    const h = await waitHpa('web', 'the metric in the status', (x) => x.status?.desiredReplicas === 4 && x.status?.currentReplicas === 4);
    expect(h.status?.currentMetrics).toEqual([{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 100, averageValue: '100m' } } }]);
    expect(condition(h, 'ScalingActive')).toMatchObject({
      status: 'True',
      reason: 'ValidMetricFound',
      message: 'the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)',
    });
    expect(h.status?.lastScaleTime).toBeDefined();
    await eventSeen('web', 'SuccessfulRescale: New size: 4; reason: cpu resource utilization (percentage of request) above target');
    // The two new pods are Pending (unready): counted as idle, they hold the count at 4.
    await new Promise((r) => setTimeout(r, 3000));
    expect(await replicas('web')).toBe(4);
    expect((await k(['get', 'hpa', 'web', '-n', NS])).stdout).toMatch(/cpu: 100%\/50%\s+2\s+6\s+4\s/);
  });

  it('limits the rate of a scale down by its behavior', async () => {
    const running = (await pods('web')).filter((p) => p.status?.phase === 'Running');
    await k([
      'patch',
      'hpa',
      'web',
      '-n',
      NS,
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { behavior: { scaleDown: { stabilizationWindowSeconds: 0, policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }] } } } }),
    ]);
    // 10% against 50%: the utilization asks for one pod, the policy allows one fewer a minute.
    usage(
      running.map((p) => p.metadata.name),
      '10m',
    );
    await waitFor('web scaled to 3', async () => (await replicas('web')) === 3 || undefined, 30_000);
    const h = await waitHpa('web', 'ScalingLimited', (x) => condition(x, 'ScalingLimited')?.status === 'True');
    expect(condition(h, 'ScalingLimited')).toMatchObject({
      reason: 'ScaleDownLimit',
      message: 'the desired replica count is decreasing faster than the maximum scale rate',
    });
    await new Promise((r) => setTimeout(r, 3000));
    expect(await replicas('web')).toBe(3);
    await eventSeen('web', 'SuccessfulRescale: New size: 3; reason: All metrics below target');
  });

  it('scales by a pods metric of the custom metrics API and an external metric, the higher proposal winning', async () => {
    const api = (group: string, version: string) => ({
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: `${group}/${version}`,
      resources: [{ name: '*', namespaced: true, kind: 'MetricValueList', verbs: ['get'] }],
    });
    standIn.answer('/apis/custom.metrics.k8s.io/v1beta2', api('custom.metrics.k8s.io', 'v1beta2'));
    standIn.answer('/apis/external.metrics.k8s.io/v1beta1', api('external.metrics.k8s.io', 'v1beta1'));
    const service = { namespace: 'kube-system', name: 'metrics', port: 443 };
    for (const [version, group] of [
      ['v1beta2', 'custom.metrics.k8s.io'],
      ['v1beta1', 'external.metrics.k8s.io'],
    ] as const) {
      const r = await request(server, 'POST', '/apis/apiregistration.k8s.io/v1/apiservices', { body: apiService(version, group, service, standIn.caPem) });
      if (r.status !== 201) throw new Error(`APIService: ${r.status} ${r.body}`);
      await availableWhen(server, `${version}.${group}`, 'True');
    }
    await deployment('worker', 2);
    const ps = await waitFor('two pods of worker', async () => {
      const list = await pods('worker');
      return list.length === 2 ? list : undefined;
    });
    for (const p of ps) await run(p);
    const now = new Date().toISOString();
    // 20 requests a second per pod against 10: four pods; a queue of 90 against 30 per replica: three.
    standIn.answer(`/apis/custom.metrics.k8s.io/v1beta2/namespaces/${NS}/pods/*/requests_per_second`, {
      kind: 'MetricValueList',
      apiVersion: 'custom.metrics.k8s.io/v1beta2',
      metadata: {},
      items: ps.map((p) => ({
        describedObject: { kind: 'Pod', namespace: NS, name: p.metadata.name, apiVersion: '/v1' },
        metric: { name: 'requests_per_second' },
        timestamp: now,
        windowSeconds: 30,
        value: '20',
      })),
    });
    standIn.answer(`/apis/external.metrics.k8s.io/v1beta1/namespaces/${NS}/queue_depth`, {
      kind: 'ExternalMetricValueList',
      apiVersion: 'external.metrics.k8s.io/v1beta1',
      metadata: {},
      items: [
        { metricName: 'queue_depth', metricLabels: { queue: 'a' }, timestamp: now, value: '50' },
        { metricName: 'queue_depth', metricLabels: { queue: 'b' }, timestamp: now, value: '40' },
      ],
    });
    await k(
      ['apply', '-n', NS, '-f', '-'],
      JSON.stringify({
        apiVersion: 'autoscaling/v2',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'worker' },
        spec: {
          scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'worker' },
          minReplicas: 1,
          maxReplicas: 10,
          metrics: [
            { type: 'Pods', pods: { metric: { name: 'requests_per_second' }, target: { type: 'AverageValue', averageValue: '10' } } },
            { type: 'External', external: { metric: { name: 'queue_depth' }, target: { type: 'AverageValue', averageValue: '30' } } },
          ],
        },
      }),
    );
    await waitFor('worker scaled to 4', async () => (await replicas('worker')) === 4 || undefined, 30_000);
    const h = await waitHpa('worker', 'both metrics in the status', (x) => x.status?.currentReplicas === 4 && (x.status?.currentMetrics?.length ?? 0) === 2);
    // The queue per replica of the scale's status: 90 over 2, 3 or 4 replicas, as the Deployment's status has caught up.
    expect(h.status?.currentMetrics?.[1]).toEqual({
      type: 'External',
      external: { metric: { name: 'queue_depth' }, current: { averageValue: expect.stringMatching(/^(45|30|22500m)$/) } },
    });
    expect(h.status?.currentMetrics?.[0]).toMatchObject({ type: 'Pods', pods: { metric: { name: 'requests_per_second' } } });
    await eventSeen('worker', 'SuccessfulRescale: New size: 4; reason: pods metric requests_per_second above target');
    expect(condition(h, 'ScalingActive')).toMatchObject({ status: 'True', reason: 'ValidMetricFound' });
    expect((await k(['get', 'hpa', 'worker', '-n', NS])).stdout).toMatch(/worker\s+Deployment\/worker\s+20\/10, (45|30|22500m)\/30 \(avg\)\s+1\s+10\s+4\s/);
    // The paths asked: the pods metric with the target's selector.
    expect(
      standIn.seen.some((x) => x.url.startsWith(`/apis/custom.metrics.k8s.io/v1beta2/namespaces/${NS}/pods/*/requests_per_second?labelSelector=app%3Dworker`)),
    ).toBe(true);

    // An adapter that serves the custom metrics API at v1beta1 only: the controller reads that
    // version (its items name the metric and the window as v1beta1 does).
    standIn.answer('/apis/custom.metrics.k8s.io/v1beta1', api('custom.metrics.k8s.io', 'v1beta1'));
    const gone = await request(server, 'DELETE', '/apis/apiregistration.k8s.io/v1/apiservices/v1beta2.custom.metrics.k8s.io');
    if (gone.status !== 200) throw new Error(`APIService delete: ${gone.status} ${gone.body}`);
    const r = await request(server, 'POST', '/apis/apiregistration.k8s.io/v1/apiservices', {
      body: apiService('v1beta1', 'custom.metrics.k8s.io', service, standIn.caPem),
    });
    if (r.status !== 201) throw new Error(`APIService: ${r.status} ${r.body}`);
    await availableWhen(server, 'v1beta1.custom.metrics.k8s.io', 'True');
    standIn.answer(`/apis/custom.metrics.k8s.io/v1beta1/namespaces/${NS}/pods/*/requests_per_second`, {
      kind: 'MetricValueList',
      apiVersion: 'custom.metrics.k8s.io/v1beta1',
      metadata: {},
      items: ps.map((p) => ({
        describedObject: { kind: 'Pod', namespace: NS, name: p.metadata.name, apiVersion: '/v1' },
        metricName: 'requests_per_second',
        timestamp: new Date().toISOString(),
        window: 30,
        value: '25',
      })),
    });
    await waitHpa(
      'worker',
      'the pods metric read at v1beta1',
      (x) => ((x.status?.currentMetrics?.[0]?.pods as Obj | undefined)?.current as Obj | undefined)?.averageValue === '25',
    );
    expect(
      standIn.seen.some((x) => x.url.startsWith(`/apis/custom.metrics.k8s.io/v1beta1/namespaces/${NS}/pods/*/requests_per_second?labelSelector=app%3Dworker`)),
    ).toBe(true);
  });

  it('reports a target it cannot scale', async () => {
    await k(
      ['apply', '-n', NS, '-f', '-'],
      JSON.stringify({
        apiVersion: 'autoscaling/v2',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'orphan' },
        spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'nope' }, maxReplicas: 3 },
      }),
    );
    const h = await waitHpa('orphan', 'FailedGetScale', (x) => condition(x, 'AbleToScale')?.status === 'False');
    expect(condition(h, 'AbleToScale')).toMatchObject({
      reason: 'FailedGetScale',
      message: `the HPA controller was unable to get the target's current scale: deployments.apps "nope" not found`,
    });
    await eventSeen('orphan', 'FailedGetScale: deployments.apps "nope" not found');
  });
});
