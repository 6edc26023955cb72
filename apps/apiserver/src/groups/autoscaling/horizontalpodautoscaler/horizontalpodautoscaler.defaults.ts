/**
 * autoscaling/v2 HorizontalPodAutoscaler defaults that a schema default cannot express
 * (SetDefaults_HorizontalPodAutoscaler): without metrics, a CPU utilization target of 80%;
 * a behavior that is given gets every unset part of both scaling rules (scale up: no
 * stabilization window, the larger of 4 pods or 100% per 15 s; scale down: 100% per 15 s,
 * its window left to the controller's flag). minReplicas (1) is a schema default.
 */
import type { KubeObject } from '@app/apimachinery';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The CPU utilization a HorizontalPodAutoscaler without metrics aims at. */
export const DEFAULT_CPU_UTILIZATION = 80;

const scaleUpDefaults = (): Obj => ({
  stabilizationWindowSeconds: 0,
  selectPolicy: 'Max',
  policies: [
    { type: 'Pods', value: 4, periodSeconds: 15 },
    { type: 'Percent', value: 100, periodSeconds: 15 },
  ],
});
const scaleDownDefaults = (): Obj => ({ selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] });

/** The defaults with every field `given` sets in their place. */
function rules(given: unknown, defaults: Obj): Obj {
  if (!isObj(given)) return defaults;
  const out = { ...defaults };
  for (const f of ['stabilizationWindowSeconds', 'selectPolicy', 'policies']) if (given[f] !== undefined && given[f] !== null) out[f] = given[f];
  return out;
}

/** Applies the v2 defaults to `hpa` in place. */
export function defaultHorizontalPodAutoscalerV2(hpa: KubeObject): void {
  if (!isObj(hpa.spec)) return;
  const spec = hpa.spec;
  if (!Array.isArray(spec.metrics) || spec.metrics.length === 0) {
    spec.metrics = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: DEFAULT_CPU_UTILIZATION } } }];
  }
  if (isObj(spec.behavior)) {
    spec.behavior.scaleUp = rules(spec.behavior.scaleUp, scaleUpDefaults());
    spec.behavior.scaleDown = rules(spec.behavior.scaleDown, scaleDownDefaults());
  }
}
