import type { KubeObject } from '@app/apimachinery';
import { convertHorizontalPodAutoscaler as convert, HPA_ANNOTATIONS } from './horizontalpodautoscaler.conversion.js';

const cpu = (u: number) => ({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: u } } });
const mem = { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '500Mi' } } };
const ref = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };
const v2 = (metrics: unknown[], extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'autoscaling/v2',
  kind: 'HorizontalPodAutoscaler',
  metadata: { name: 'web', labels: { a: 'b' } },
  spec: { scaleTargetRef: ref, minReplicas: 1, maxReplicas: 5, metrics, ...extra },
  status: {
    currentReplicas: 2,
    desiredReplicas: 3,
    currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 40 } } }],
    conditions: [{ type: 'AbleToScale', status: 'True', reason: 'ReadyForNewScale' }],
  },
});

describe('HorizontalPodAutoscaler conversion', () => {
  it('puts the CPU target in the v1 field and the rest of v2 in annotations', () => {
    const behavior = { scaleDown: { stabilizationWindowSeconds: 60, policies: [{ type: 'Pods', value: 1, periodSeconds: 30 }] } };
    const v1 = convert(v2([cpu(70), mem], { behavior }), 'v1');
    const ann = v1.metadata.annotations as Record<string, string>;
    expect(v1.spec).toEqual({ scaleTargetRef: ref, minReplicas: 1, maxReplicas: 5, targetCPUUtilizationPercentage: 70 });
    expect(v1.status).toEqual({ currentReplicas: 2, desiredReplicas: 3, currentCPUUtilizationPercentage: 40 });
    expect(JSON.parse(ann[HPA_ANNOTATIONS.metrics])).toEqual([mem]);
    expect(JSON.parse(ann[HPA_ANNOTATIONS.behavior])).toEqual(behavior);
    expect(JSON.parse(ann[HPA_ANNOTATIONS.conditions])).toEqual([{ type: 'AbleToScale', status: 'True', reason: 'ReadyForNewScale' }]);
  });
  it('round-trips v2 -> v1 -> v2 and v1 -> v2 -> v1 without loss, metric order included', () => {
    const behavior = {
      scaleUp: { stabilizationWindowSeconds: 0, selectPolicy: 'Min', policies: [{ type: 'Pods', value: 2, periodSeconds: 60 }] },
      scaleDown: { stabilizationWindowSeconds: 300, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 10, periodSeconds: 60 }] },
    };
    for (const o of [v2([cpu(70), mem]), v2([mem, cpu(70)]), v2([mem]), v2([cpu(10)], { behavior })]) {
      expect(convert(convert(o, 'v1'), 'v2')).toEqual(structuredClone(o));
    }
    const v1: KubeObject = {
      apiVersion: 'autoscaling/v1',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'web', annotations: { note: 'x' } },
      spec: { scaleTargetRef: ref, minReplicas: 2, maxReplicas: 4, targetCPUUtilizationPercentage: 50 },
      status: { currentReplicas: 0, desiredReplicas: 0 },
    };
    expect(convert(convert(v1, 'v2'), 'v1')).toEqual(v1);
    expect(convert(v1, 'v2').spec).toEqual({ scaleTargetRef: ref, minReplicas: 2, maxReplicas: 4, metrics: [cpu(50)] });
  });
  it("stores what a v1 client writes with v2's defaults: 80% CPU without metrics, a whole behavior", () => {
    const bare = convert(v2([]), 'v1');
    expect((bare.spec as Record<string, unknown>).targetCPUUtilizationPercentage).toBeUndefined();
    expect((convert(bare, 'v2').spec as { metrics: unknown[] }).metrics).toEqual([cpu(80)]);
    const partial = convert(v2([cpu(10)], { behavior: { scaleUp: { selectPolicy: 'Min' } } }), 'v1');
    expect((convert(partial, 'v2').spec as { behavior: unknown }).behavior).toEqual({
      scaleUp: {
        stabilizationWindowSeconds: 0,
        selectPolicy: 'Min',
        policies: [
          { type: 'Pods', value: 4, periodSeconds: 15 },
          { type: 'Percent', value: 100, periodSeconds: 15 },
        ],
      },
      scaleDown: { selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
    });
  });
  it('follows a v1 client changing or removing the CPU target', () => {
    const v1 = convert(v2([mem, cpu(70)]), 'v1');
    (v1.spec as Record<string, unknown>).targetCPUUtilizationPercentage = 90;
    expect((convert(v1, 'v2').spec as { metrics: unknown[] }).metrics).toEqual([mem, cpu(90)]);
    delete (v1.spec as Record<string, unknown>).targetCPUUtilizationPercentage;
    expect((convert(v1, 'v2').spec as { metrics: unknown[] }).metrics).toEqual([mem]);
  });
});
