import type { KubeObject } from '@app/apimachinery';
import type { RequestContext } from '@app/registry';
import { horizontalPodAutoscalerV2Strategy, hpaTargetsV2 } from './horizontalpodautoscaler.v2.strategy.js';

const ctx: RequestContext = { user: { username: 'u', groups: [] }, dryRun: false, warnings: [], now: () => new Date() };
const hpa = (spec: Record<string, unknown>, status?: Record<string, unknown>): KubeObject => ({
  metadata: { name: 'web' },
  spec: { scaleTargetRef: { kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 5, ...spec },
  ...(status ? { status } : {}),
});
const msgs = (o: KubeObject) => horizontalPodAutoscalerV2Strategy.validate!(o, ctx).map((e) => `${e.field}: ${e.detail}`);
const cpu = (target: Record<string, unknown>) => ({ type: 'Resource', resource: { name: 'cpu', target } });

describe('HorizontalPodAutoscaler v2 strategy', () => {
  it('defaults a CPU target of 80% when no metric is given, and fills a given behavior', () => {
    const created = hpa({ behavior: { scaleDown: { stabilizationWindowSeconds: 60 } } });
    horizontalPodAutoscalerV2Strategy.prepareForCreate!(created, ctx);
    const spec = created.spec as Record<string, unknown>;
    expect(spec.metrics).toEqual([cpu({ type: 'Utilization', averageUtilization: 80 })]);
    expect(spec.behavior).toEqual({
      scaleUp: {
        stabilizationWindowSeconds: 0,
        selectPolicy: 'Max',
        policies: [
          { type: 'Pods', value: 4, periodSeconds: 15 },
          { type: 'Percent', value: 100, periodSeconds: 15 },
        ],
      },
      scaleDown: { stabilizationWindowSeconds: 60, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
    });
    expect(hpaTargetsV2(created)).toBe('cpu: <unknown>/80%');
    // Given metrics are kept; an update without metrics gets the default again.
    const mem = { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '1Gi' } } };
    const kept = hpa({ metrics: [mem] });
    horizontalPodAutoscalerV2Strategy.prepareForCreate!(kept, ctx);
    expect((kept.spec as Record<string, unknown>).metrics).toEqual([mem]);
    const updated = hpa({});
    horizontalPodAutoscalerV2Strategy.prepareForUpdate!(updated, kept, ctx);
    expect((updated.spec as Record<string, unknown>).metrics).toEqual([cpu({ type: 'Utilization', averageUtilization: 80 })]);
  });
  it('accepts metrics and behaviour within the rules', () => {
    const behavior = { scaleDown: { stabilizationWindowSeconds: 300, policies: [{ type: 'Percent', value: 10, periodSeconds: 60 }] } };
    expect(msgs(hpa({ metrics: [cpu({ type: 'Utilization', averageUtilization: 80 })], behavior }))).toEqual([]);
  });
  it('checks each metric and its target with Kubernetes messages', () => {
    const metrics = [
      { type: 'Resource' },
      { type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '-1' } }, resource: {} },
      cpu({ type: 'Utilization', averageUtilization: 0, averageValue: '1' }),
      { type: 'Magic' },
    ];
    expect(msgs(hpa({ metrics }))).toEqual([
      'spec.metrics[0].resource: must populate information for the given metric source',
      'spec.metrics[1].resource: must populate the given metric source only',
      'spec.metrics[1].pods.target.averageValue: must be positive',
      'spec.metrics[2].resource.target.averageUtilization: must be greater than 0',
      'spec.metrics[2].resource.target.averageValue: may not set both a target raw value and a target utilization',
      'spec.metrics[3].type: must be either External, Object, Pods, Resource or ContainerResource',
    ]);
  });
  it('checks the scaling behaviour', () => {
    const behavior = {
      scaleUp: { stabilizationWindowSeconds: 4000, policies: [] },
      scaleDown: { selectPolicy: 'Disabled', policies: [{ type: 'Pods', value: 0, periodSeconds: 2000 }] },
    };
    expect(msgs(hpa({ behavior }))).toEqual([
      'spec.behavior.scaleUp.stabilizationWindowSeconds: must be less than or equal to 3600',
      'spec.behavior.scaleUp.policies: must specify at least one Policy',
      'spec.behavior.scaleDown.policies[0].value: must be greater than zero',
      'spec.behavior.scaleDown.policies[0].periodSeconds: must be less than or equal to 1800',
    ]);
  });
  it('prints TARGETS as kubectl does', () => {
    expect(hpaTargetsV2(hpa({}))).toBe('<none>');
    const metrics = [
      cpu({ type: 'Utilization', averageUtilization: 80 }),
      { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '500Mi' } } },
    ];
    expect(hpaTargetsV2(hpa({ metrics }))).toBe('cpu: <unknown>/80%, memory: <unknown>/500Mi');
    const status = {
      currentMetrics: [
        { type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 12 } } },
        { type: 'Resource', resource: { name: 'memory', current: { averageValue: '100Mi' } } },
      ],
    };
    expect(hpaTargetsV2(hpa({ metrics }, status))).toBe('cpu: 12%/80%, memory: 100Mi/500Mi');
  });
});
