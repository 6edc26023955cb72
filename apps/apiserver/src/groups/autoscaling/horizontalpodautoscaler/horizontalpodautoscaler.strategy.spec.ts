import type { KubeObject } from '@app/apimachinery';
import type { RequestContext } from '@app/registry';
import { horizontalPodAutoscalerStrategy, hpaTargets } from './horizontalpodautoscaler.strategy.js';

const ctx: RequestContext = { user: { username: 'u', groups: [] }, dryRun: false, warnings: [], now: () => new Date() };
const hpa = (spec: Record<string, unknown>, status?: Record<string, unknown>): KubeObject => ({
  metadata: { name: 'web' },
  spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 5, ...spec },
  ...(status ? { status } : {}),
});
const msgs = (o: KubeObject) => horizontalPodAutoscalerStrategy.validate!(o, ctx).map((e) => `${e.field}: ${e.detail}`);

describe('HorizontalPodAutoscaler strategy', () => {
  it('accepts a valid autoscaler and starts its status empty', () => {
    const o = hpa({ targetCPUUtilizationPercentage: 80 }, { currentReplicas: 3, desiredReplicas: 3 });
    expect(msgs(o)).toEqual([]);
    horizontalPodAutoscalerStrategy.prepareForCreate!(o, ctx);
    expect(o.status).toEqual({ currentReplicas: 0, desiredReplicas: 0 });
  });
  it('checks replica bounds with Kubernetes messages', () => {
    expect(msgs(hpa({ minReplicas: 0, maxReplicas: -1 }))).toEqual([
      'spec.minReplicas: must be greater than or equal to 1',
      'spec.maxReplicas: must be greater than 0',
      'spec.maxReplicas: must be greater than or equal to `minReplicas`',
    ]);
    expect(msgs(hpa({ minReplicas: 4, maxReplicas: 2 }))).toEqual(['spec.maxReplicas: must be greater than or equal to `minReplicas`']);
  });
  it('requires the scale target kind and name, path-segment names, and a positive CPU target', () => {
    expect(msgs(hpa({ scaleTargetRef: { name: 'a/b' }, targetCPUUtilizationPercentage: 0 }))).toEqual([
      'spec.scaleTargetRef.kind: ',
      "spec.scaleTargetRef.name: may not contain '/'",
      'spec.metrics[0].resource.target.averageUtilization: must be greater than 0',
    ]);
  });
  it('prints TARGETS as kubectl does', () => {
    expect(hpaTargets(hpa({}))).toBe('<none>');
    expect(hpaTargets(hpa({ targetCPUUtilizationPercentage: 80 }))).toBe('cpu: <unknown>/80%');
    expect(hpaTargets(hpa({ targetCPUUtilizationPercentage: 80 }, { currentCPUUtilizationPercentage: 12 }))).toBe('cpu: 12%/80%');
  });
});
