import type { KubeObject } from '@app/apimachinery';
import {
  AutoscalerMemory,
  durationMs,
  groupPods,
  hpaPodView,
  metricValues,
  perPodReplicas,
  podSamples,
  readyPodCount,
  resourceUtilizationReplicas,
  resourceValueReplicas,
  setCondition,
  usageRatioReplicas,
  type PodSample,
} from './hpa.logic.js';

const NOW = Date.parse('2026-01-01T01:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

/** A running pod, ready since long ago, requesting `cpu` per container. */
function pod(
  name: string,
  opts: { cpu?: string[]; phase?: string; ready?: string; started?: number; readySince?: number; deleted?: boolean } = {},
): KubeObject {
  const started = opts.started ?? NOW - 3_600_000;
  return {
    metadata: { name, ...(opts.deleted ? { deletionTimestamp: iso(NOW) } : {}) },
    spec: { containers: (opts.cpu ?? ['100m']).map((cpu, i) => ({ name: `c${i}`, resources: { requests: { cpu, memory: '64Mi' } } })) },
    status: {
      phase: opts.phase ?? 'Running',
      startTime: iso(started),
      conditions: [{ type: 'Ready', status: opts.ready ?? 'True', lastTransitionTime: iso(opts.readySince ?? started + 10_000) }],
    },
  } as KubeObject;
}
const samples = (entries: Record<string, number>): Map<string, PodSample> =>
  new Map(Object.entries(entries).map(([k, v]) => [k, { value: v, timestamp: NOW - 5_000, windowMs: 30_000 }]));

describe('the replica calculator', () => {
  it('scales by the ratio of utilization to the target, and not within the tolerance', () => {
    const pods = [pod('a'), pod('b'), pod('c')];
    // 100m each of 100m requested: 100% against 50% → twice the pods.
    expect(resourceUtilizationReplicas(3, 50, pods, samples({ a: 100, b: 100, c: 100 }), 'cpu', NOW)).toEqual({
      replicas: 6,
      utilization: 100,
      rawAverage: 100,
    });
    // 54% against 50%: within 10%.
    expect(resourceUtilizationReplicas(3, 50, pods, samples({ a: 54, b: 54, c: 54 }), 'cpu', NOW).replicas).toBe(3);
    // 20% against 50%: ceil(0.4 * 3) = 2.
    expect(resourceUtilizationReplicas(3, 50, pods, samples({ a: 20, b: 20, c: 20 }), 'cpu', NOW).replicas).toBe(2);
  });

  it('assumes a pod without a sample at its request when scaling down, idle when scaling up', () => {
    const pods = [pod('a'), pod('b'), pod('c'), pod('d')];
    // Down: a and b idle at 10%, c and d unknown → taken at 100%: (10+10+100+100)/4 = 55% of 50%: within tolerance.
    expect(resourceUtilizationReplicas(4, 50, pods, samples({ a: 10, b: 10 }), 'cpu', NOW).replicas).toBe(4);
    // Up: a and b at 200%, c and d unknown → idle: 100% of 50% over four pods = 8.
    expect(resourceUtilizationReplicas(4, 50, pods, samples({ a: 200, b: 200 }), 'cpu', NOW).replicas).toBe(8);
  });

  it('counts an unready pod as idle when scaling up, and ignores deleted and failed pods', () => {
    const pods = [pod('a'), pod('b', { ready: 'False' }), pod('gone', { deleted: true }), pod('dead', { phase: 'Failed' }), pod('new', { phase: 'Pending' })];
    const g = groupPods(pods, samples({ a: 300, b: 300, gone: 1000, dead: 1000 }), 'cpu', NOW);
    expect(g.ready).toBe(1);
    expect([...g.unready].sort()).toEqual(['b', 'new']);
    expect([...g.ignored].sort()).toEqual(['dead', 'gone']);
    // a at 300%: 3 pods' worth of 100%; with b and new taken as idle: (300+0+0)/3 = 100% of 100% → unchanged.
    expect(resourceUtilizationReplicas(3, 100, pods, samples({ a: 300, b: 300 }), 'cpu', NOW).replicas).toBe(3);
  });

  it('waits for a window after a young pod turns ready before counting its CPU', () => {
    const young = pod('y', { started: NOW - 60_000, readySince: NOW - 10_000 });
    // The sample (taken 5 s ago over 30 s) began before the pod was ready.
    expect(groupPods([young], samples({ y: 50 }), 'cpu', NOW).unready.has('y')).toBe(true);
    expect(groupPods([young], samples({ y: 50 }), 'memory', NOW).ready).toBe(1);
  });

  it('explains what it cannot compute', () => {
    expect(() => resourceUtilizationReplicas(1, 50, [], samples({}), 'cpu', NOW)).toThrow('no pods returned by selector while calculating replica count');
    expect(() => resourceUtilizationReplicas(1, 50, [pod('a', { ready: 'False' })], samples({ a: 1 }), 'cpu', NOW)).toThrow(
      'did not receive metrics for targeted pods (pods might be unready)',
    );
    const noRequest = pod('a');
    (noRequest.spec as { containers: { resources: unknown }[] }).containers[0]!.resources = {};
    expect(() => resourceUtilizationReplicas(1, 50, [noRequest], samples({ a: 1 }), 'cpu', NOW)).toThrow('missing request for cpu in container c0 of Pod a');
  });

  it('scales by average value against a target per pod', () => {
    const pods = [pod('a'), pod('b')];
    // 300m average against 100m → 6 pods; the average is reported.
    expect(resourceValueReplicas(2, 100, pods, samples({ a: 200, b: 400 }), 'cpu', NOW)).toEqual({ replicas: 6, rawAverage: 300 });
    expect(resourceValueReplicas(2, 100, pods, samples({ a: 95, b: 105 }), 'cpu', NOW).replicas).toBe(2);
  });

  it('reads PodMetrics: usage summed over containers, or one container, pods missing the resource left out', () => {
    const list = {
      items: [
        {
          metadata: { name: 'a' },
          timestamp: iso(NOW),
          window: '30s',
          containers: [
            { name: 'x', usage: { cpu: '150m' } },
            { name: 'y', usage: { cpu: '1' } },
          ],
        },
        { metadata: { name: 'b' }, timestamp: iso(NOW), window: '1m0s', containers: [{ name: 'x', usage: { memory: '1Ki' } }] },
      ],
    };
    expect(podSamples(list, 'cpu')).toEqual(new Map([['a', { value: 1150, timestamp: NOW, windowMs: 30_000 }]]));
    expect(podSamples(list, 'cpu', 'y').get('a')?.value).toBe(1000);
    expect(podSamples(list, 'memory').get('b')?.value).toBe(1_024_000);
    expect(durationMs('1m30.5s')).toBe(90_500);
  });
});

describe("the controller's copy of a pod", () => {
  it('keeps what the calculator reads, so its answers are those of the whole pod', () => {
    const full = (p: KubeObject): KubeObject => ({
      ...p,
      metadata: { ...p.metadata, namespace: 'ns', labels: { app: 'web' }, annotations: { big: 'x'.repeat(1000) }, uid: 'u' },
      spec: { ...(p.spec as object), nodeName: 'n1', volumes: [{ name: 'v' }] },
      status: {
        ...(p.status as object),
        podIP: '10.0.0.1',
        conditions: [{ type: 'PodScheduled', status: 'True' }, ...((p.status as { conditions: unknown[] }).conditions ?? [])],
      },
    });
    const pods = [
      full(pod('a', { cpu: ['100m', '50m'] })),
      full(pod('b', { ready: 'False', started: NOW - 60_000, readySince: NOW - 50_000 })),
      full(pod('c', { phase: 'Pending' })),
      full(pod('d', { deleted: true })),
      full(pod('e', { started: NOW - 120_000, readySince: NOW - 20_000 })),
    ];
    const views = pods.map(hpaPodView);
    const s = samples({ a: 300, b: 10, e: 90 });
    for (const target of [20, 50, 90])
      expect(resourceUtilizationReplicas(5, target, views, s, 'cpu', NOW)).toEqual(resourceUtilizationReplicas(5, target, pods, s, 'cpu', NOW));
    expect(resourceValueReplicas(5, 100, views, s, 'cpu', NOW)).toEqual(resourceValueReplicas(5, 100, pods, s, 'cpu', NOW));
    expect(readyPodCount(views)).toBe(readyPodCount(pods));
    expect(groupPods(views, s, 'cpu', NOW)).toEqual(groupPods(pods, s, 'cpu', NOW));
    // Only those fields: no annotations, node, volumes, addresses or other conditions.
    expect(views[0]).toEqual({
      metadata: { namespace: 'ns', name: 'a', labels: { app: 'web' } },
      spec: {
        containers: [
          { name: 'c0', resources: { requests: { cpu: '100m', memory: '64Mi' } } },
          { name: 'c1', resources: { requests: { cpu: '50m', memory: '64Mi' } } },
        ],
      },
      status: { phase: 'Running', startTime: iso(NOW - 3_600_000), conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: iso(NOW - 3_590_000) }] },
    });
    expect(views[3]!.metadata.deletionTimestamp).toBe(iso(NOW));
  });
});

describe('custom and external metrics', () => {
  it('scales a value target by the ready pods, a per-pod target by the scale status', () => {
    const pods = [pod('a'), pod('b'), pod('c', { phase: 'Pending' }), pod('d', { ready: 'False' })];
    expect(readyPodCount(pods)).toBe(2);
    expect(() => readyPodCount([])).toThrow('no pods returned by selector while calculating replica count');
    // 3x the target: three times the two ready pods; within 10%: unchanged; from zero: the ratio alone.
    expect(usageRatioReplicas(4, 3, () => pods)).toBe(6);
    expect(usageRatioReplicas(4, 1.05, () => pods)).toBe(4);
    expect(usageRatioReplicas(0, 2.2, () => [])).toBe(3);
    // 90 against 30 per replica with 2 replicas: 3, reported as 45 per replica.
    expect(perPodReplicas(2, 90_000, 30_000)).toEqual({ replicas: 3, average: 45_000 });
    expect(perPodReplicas(3, 92_000, 30_000)).toEqual({ replicas: 3, average: 30_667 });
  });

  it('reads a MetricValueList by described object', () => {
    const list = {
      items: [
        { describedObject: { kind: 'Pod', name: 'a' }, value: '1500m', timestamp: iso(NOW), windowSeconds: 60 },
        { describedObject: { name: 'b' }, value: 'x' },
      ],
    };
    expect(metricValues(list)).toEqual(new Map([['a', { value: 1500, timestamp: NOW, windowMs: 60_000 }]]));
    // v1beta1 names the window `window`.
    const v1beta1 = { items: [{ describedObject: { kind: 'Pod', name: 'a' }, metricName: 'm', value: '2', timestamp: iso(NOW), window: 30 }] };
    expect(metricValues(v1beta1)).toEqual(new Map([['a', { value: 2000, timestamp: NOW, windowMs: 30_000 }]]));
  });
});

describe('normalizing a recommendation', () => {
  it('without a behavior: keeps the highest recommendation of five minutes, grows at most twice (at least 4), stays within bounds', () => {
    const m = new AutoscalerMemory();
    m.initial('k', 4, NOW);
    // Lower than the initial 4 within five minutes: stabilized at 4.
    expect(m.normalize('k', 4, 2, 1, 10, NOW + 60_000)).toMatchObject({ replicas: 4, ableToScale: { reason: 'ScaleDownStabilized' } });
    // Past five minutes, the 2 recorded a minute in still holds down at 2.
    expect(m.normalize('k', 4, 2, 1, 10, NOW + 400_000)).toMatchObject({
      replicas: 2,
      ableToScale: { reason: 'ReadyForNewScale' },
      limited: { status: 'False' },
    });
    const up = new AutoscalerMemory();
    expect(up.normalize('u', 2, 50, 1, 100, NOW)).toMatchObject({ replicas: 4, limited: { status: 'True', reason: 'ScaleUpLimit' } });
    expect(up.normalize('u', 3, 50, 1, 5, NOW)).toMatchObject({ replicas: 5, limited: { status: 'True', reason: 'TooManyReplicas' } });
  });

  it('with a behavior: the windows of both rules, then the rate of their policies', () => {
    const up = {
      stabilizationWindowSeconds: 0,
      selectPolicy: 'Max',
      policies: [
        { type: 'Pods', value: 4, periodSeconds: 15 },
        { type: 'Percent', value: 100, periodSeconds: 15 },
      ],
    };
    const down = { stabilizationWindowSeconds: 60, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }] };
    const m = new AutoscalerMemory();
    m.initial('k', 2, NOW);
    // 2 → 20: at most max(2+4, 2*2) = 6 in 15 s.
    const first = m.normalizeWithBehavior('k', 2, 20, 1, 30, up, down, NOW);
    expect(first).toMatchObject({ replicas: 6, limited: { status: 'True', reason: 'ScaleUpLimit' } });
    m.scaled('k', { scaleUp: up, scaleDown: down }, 2, 6, NOW);
    // Five seconds later the period still holds those 4: 6 is the limit again.
    expect(m.normalizeWithBehavior('k', 6, 20, 1, 30, up, down, NOW + 5_000).replicas).toBe(6);
    // After the period: from 6, up to 12.
    expect(m.normalizeWithBehavior('k', 6, 20, 1, 30, up, down, NOW + 20_000).replicas).toBe(12);
    // Down to 3 within the minute's window of higher recommendations: held at 12 (ScaleDownStabilized).
    expect(m.normalizeWithBehavior('k', 12, 3, 1, 30, up, down, NOW + 30_000)).toMatchObject({ replicas: 12, ableToScale: { reason: 'ScaleDownStabilized' } });
    // Once the window has passed, one pod a minute.
    expect(m.normalizeWithBehavior('k', 12, 3, 1, 30, up, down, NOW + 120_000)).toMatchObject({
      replicas: 11,
      limited: { status: 'True', reason: 'ScaleDownLimit' },
    });
    // A Disabled rule does not move.
    expect(m.normalizeWithBehavior('k', 11, 30, 1, 30, { ...up, selectPolicy: 'Disabled' }, down, NOW + 200_000).replicas).toBe(11);
  });

  it("keeps a condition's transition time while its status stays", () => {
    const once = setCondition([], { type: 'AbleToScale', status: 'True', reason: 'A', message: 'a' }, 't1');
    const again = setCondition(once, { type: 'AbleToScale', status: 'True', reason: 'B', message: 'b' }, 't2');
    expect(again).toEqual([{ type: 'AbleToScale', status: 'True', reason: 'B', message: 'b', lastTransitionTime: 't1' }]);
    expect(setCondition(again, { type: 'AbleToScale', status: 'False', reason: 'C', message: 'c' }, 't3')[0]!.lastTransitionTime).toBe('t3');
  });
});
