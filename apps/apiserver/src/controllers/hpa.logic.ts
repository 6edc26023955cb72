/**
 * The rules of the HorizontalPodAutoscaler controller (kube's podautoscaler package), pure: how
 * many replicas a resource metric asks for (replica_calculator.go), and how a recommendation is
 * stabilized and rate-limited before it is applied (horizontal.go), with kube's reasons and
 * messages. Quantities are in milli-units (a CPU core is 1000, a byte of memory 1000).
 */
import { parseQuantity, type KubeObject } from '@app/apimachinery';
import { asMap } from '../groups/core/core.helpers.js';

type Obj = Record<string, unknown>;

/** How far from 1 the usage ratio must be before the replica count changes (--horizontal-pod-autoscaler-tolerance). */
export const TOLERANCE = 0.1;
/** A pod this young may still be starting: its CPU sample counts only once it is ready and a window old (--horizontal-pod-autoscaler-cpu-initialization-period). */
export const CPU_INITIALIZATION_PERIOD_MS = 5 * 60_000;
/** A pod not ready this soon after its start has never been ready (--horizontal-pod-autoscaler-initial-readiness-delay). */
export const INITIAL_READINESS_DELAY_MS = 30_000;
/** How long a lower recommendation waits before the scale goes down, without a behavior (--horizontal-pod-autoscaler-downscale-stabilization). */
export const DOWNSCALE_STABILIZATION_MS = 5 * 60_000;

/** One pod's sample from the resource metrics API. */
export interface PodSample {
  /** Usage in milli-units. */
  value: number;
  /** When the sample was taken (ms since the epoch), and over how long (ms). */
  timestamp: number;
  windowMs: number;
}

/** A quantity in milli-units; NaN when it does not parse. */
export function milli(q: unknown): number {
  if (typeof q !== 'string' && typeof q !== 'number') return NaN;
  try {
    return Number(parseQuantity(String(q)).milliValue());
  } catch {
    return NaN;
  }
}

/** A Go duration as metrics-server writes `window` ("30s", "1m0s", "15.5s"), in ms; 0 when absent. */
export function durationMs(v: unknown): number {
  if (typeof v !== 'string') return 0;
  let total = 0;
  const re = /(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/g;
  for (const m of v.matchAll(re)) {
    const n = Number(m[1]);
    total += m[2] === 'h' ? n * 3_600_000 : m[2] === 'm' ? n * 60_000 : m[2] === 's' ? n * 1000 : m[2] === 'ms' ? n : n / 1000;
  }
  return total;
}

/**
 * The samples of a PodMetricsList for `resource` (kube's resource metrics client): a pod's usage
 * summed over its containers, or the one named `container`; a pod missing the resource in any
 * counted container has no sample.
 */
export function podSamples(list: unknown, resource: string, container?: string): Map<string, PodSample> {
  const out = new Map<string, PodSample>();
  const items = Array.isArray(asMap(list).items) ? (asMap(list).items as unknown[]).map(asMap) : [];
  for (const item of items) {
    const name = asMap(item.metadata).name;
    if (typeof name !== 'string') continue;
    const containers = Array.isArray(item.containers) ? item.containers.map(asMap) : [];
    let sum = 0;
    let found = false;
    let missing = false;
    for (const c of containers) {
      if (container !== undefined && c.name !== container) continue;
      const v = milli(asMap(c.usage)[resource]);
      if (!Number.isFinite(v)) {
        missing = true;
        break;
      }
      sum += v;
      found = true;
    }
    if (missing || (container !== undefined && !found)) continue;
    out.set(name, { value: sum, timestamp: Date.parse(String(item.timestamp ?? '')) || 0, windowMs: durationMs(item.window) });
  }
  return out;
}

const podCondition = (pod: KubeObject, type: string): Obj | undefined => {
  const list = asMap(pod.status).conditions;
  return Array.isArray(list) ? list.map(asMap).find((c) => c.type === type) : undefined;
};

/**
 * What the controller keeps of a pod in its watch-fed copy: the fields the replica calculator
 * reads (labels for the selector, deletion, phase, start time, the Ready condition, and each
 * container's requests).
 */
export function hpaPodView(pod: KubeObject): KubeObject {
  const m = pod.metadata;
  const spec = asMap(pod.spec);
  const status = asMap(pod.status);
  const containers = Array.isArray(spec.containers)
    ? spec.containers.map(asMap).map((c) => ({ name: c.name, resources: { requests: asMap(asMap(c.resources).requests) } }))
    : [];
  const ready = podCondition(pod, 'Ready');
  return {
    metadata: {
      namespace: m.namespace,
      name: m.name,
      ...(m.labels ? { labels: m.labels } : {}),
      ...(m.deletionTimestamp ? { deletionTimestamp: m.deletionTimestamp } : {}),
    },
    spec: { containers },
    status: {
      ...(status.phase !== undefined ? { phase: status.phase } : {}),
      ...(status.startTime !== undefined ? { startTime: status.startTime } : {}),
      ...(ready ? { conditions: [{ type: 'Ready', status: ready.status, lastTransitionTime: ready.lastTransitionTime }] } : {}),
    },
  };
}

/** The pods of a target sorted as kube's groupPods sorts them: counted (ready), unready, without a sample, and ignored (deleted or failed). */
export interface PodGroups {
  ready: number;
  unready: Set<string>;
  missing: Set<string>;
  ignored: Set<string>;
}

export function groupPods(pods: readonly KubeObject[], samples: ReadonlyMap<string, PodSample>, resource: string, now: number): PodGroups {
  const g: PodGroups = { ready: 0, unready: new Set(), missing: new Set(), ignored: new Set() };
  for (const pod of pods) {
    const name = String(pod.metadata.name ?? '');
    const phase = asMap(pod.status).phase;
    if (pod.metadata.deletionTimestamp || phase === 'Failed') {
      g.ignored.add(name);
      continue;
    }
    // Pending pods are unready: they get no sample's benefit when scaling up.
    if (phase === 'Pending') {
      g.unready.add(name);
      continue;
    }
    const sample = samples.get(name);
    if (!sample) {
      g.missing.add(name);
      continue;
    }
    if (resource === 'cpu') {
      const ready = podCondition(pod, 'Ready');
      const start = Date.parse(String(asMap(pod.status).startTime ?? ''));
      let unready: boolean;
      if (!ready || !Number.isFinite(start)) unready = true;
      else {
        const transition = Date.parse(String(ready.lastTransitionTime ?? '')) || 0;
        if (start + CPU_INITIALIZATION_PERIOD_MS > now) {
          // Still starting: the sample counts once the pod is ready and a window has passed since.
          unready = ready.status === 'False' || sample.timestamp < transition + sample.windowMs;
        } else {
          // Not ready, and never was since it started.
          unready = ready.status === 'False' && start + INITIAL_READINESS_DELAY_MS > transition;
        }
      }
      if (unready) {
        g.unready.add(name);
        continue;
      }
    }
    g.ready++;
  }
  return g;
}

/** The sum of the requests of `resource` of each pod's containers (or the one named), milli-units; throws kube's message for a container without one. */
export function podRequests(pods: readonly KubeObject[], resource: string, container?: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const pod of pods) {
    const spec = asMap(pod.spec);
    const containers = Array.isArray(spec.containers) ? spec.containers.map(asMap) : [];
    let sum = 0;
    for (const c of containers) {
      if (container !== undefined && c.name !== container) continue;
      const v = milli(asMap(asMap(c.resources).requests)[resource]);
      if (!Number.isFinite(v)) throw new Error(`missing request for ${resource} in container ${String(c.name)} of Pod ${String(pod.metadata.name)}`);
      sum += v;
    }
    out.set(String(pod.metadata.name ?? ''), sum);
  }
  return out;
}

/** GetResourceUtilizationRatio: usage over requests of the pods with samples, as a ratio to the target and as a percentage; the average usage per pod. */
export function utilizationRatio(
  samples: ReadonlyMap<string, number>,
  requests: ReadonlyMap<string, number>,
  target: number,
): { ratio: number; utilization: number; rawAverage: number } {
  let used = 0;
  let requested = 0;
  let counted = 0;
  for (const [name, v] of samples) {
    const r = requests.get(name);
    if (r === undefined) continue;
    used += v;
    requested += r;
    counted++;
  }
  if (requested === 0) throw new Error('no metrics returned matched known pods');
  const utilization = Math.trunc((used * 100) / requested);
  return { ratio: utilization / target, utilization, rawAverage: Math.trunc(used / counted) };
}

/**
 * The replicas after the first guess, adjusted for pods without samples (assumed at the target
 * or above when scaling down, idle when scaling up) and unready pods (idle when scaling up), as
 * kube's replica calculator does; unchanged when that adjustment flips the direction or lands
 * within the tolerance.
 */
function adjusted(
  current: number,
  ratio: number,
  readyCount: number,
  g: PodGroups,
  values: Map<string, number>,
  missingValue: (name: string, down: boolean) => number,
  recompute: (values: Map<string, number>) => number,
): number {
  const scaleUpWithUnready = g.unready.size > 0 && ratio > 1;
  if (!scaleUpWithUnready && g.missing.size === 0) {
    if (Math.abs(1 - ratio) <= TOLERANCE) return current;
    return Math.ceil(ratio * readyCount);
  }
  if (g.missing.size > 0) {
    if (ratio < 1) for (const name of g.missing) values.set(name, missingValue(name, true));
    else if (ratio > 1) for (const name of g.missing) values.set(name, 0);
  }
  if (scaleUpWithUnready) for (const name of g.unready) values.set(name, 0);
  const next = recompute(values);
  if (Math.abs(1 - next) <= TOLERANCE || (ratio < 1 && next > 1) || (ratio > 1 && next < 1)) return current;
  const proposal = Math.ceil(next * values.size);
  if ((next < 1 && proposal > current) || (next > 1 && proposal < current)) return current;
  return proposal;
}

/** What a resource metric proposes. */
export interface ResourceProposal {
  replicas: number;
  /** Utilization targets: the current average utilization, percent of requests. */
  utilization?: number;
  /** The current average usage per pod, milli-units. */
  rawAverage: number;
}

/** Samples of the pods that count: those not ignored, and not unready. */
function countedSamples(samples: ReadonlyMap<string, PodSample>, g: PodGroups): Map<string, number> {
  const out = new Map<string, number>();
  for (const [name, s] of samples) if (!g.ignored.has(name) && !g.unready.has(name)) out.set(name, s.value);
  return out;
}

/** The pods grouped and the samples that count; throws when there are no pods, or no sample counts. */
function counted(
  pods: readonly KubeObject[],
  samples: ReadonlyMap<string, PodSample>,
  resource: string,
  now: number,
): { g: PodGroups; values: Map<string, number> } {
  if (pods.length === 0) throw new Error('no pods returned by selector while calculating replica count');
  const g = groupPods(pods, samples, resource, now);
  const values = countedSamples(samples, g);
  if (values.size === 0) throw new Error('did not receive metrics for targeted pods (pods might be unready)');
  return { g, values };
}

/** GetResourceReplicas: the replicas that bring the average utilization (percent of requests) to `target`. */
export function resourceUtilizationReplicas(
  current: number,
  target: number,
  pods: readonly KubeObject[],
  samples: ReadonlyMap<string, PodSample>,
  resource: string,
  now: number,
  container?: string,
): ResourceProposal {
  const { g, values } = counted(pods, samples, resource, now);
  const requests = podRequests(pods, resource, container);
  const first = utilizationRatio(values, requests, target);
  const fallback = Math.max(100, target);
  const replicas = adjusted(
    current,
    first.ratio,
    g.ready,
    g,
    values,
    (name) => ((requests.get(name) ?? 0) * fallback) / 100,
    (v) => utilizationRatio(v, requests, target).ratio,
  );
  return { replicas, utilization: first.utilization, rawAverage: first.rawAverage };
}

/** GetRawResourceReplicas: the replicas that bring the average usage per pod to `target` (milli-units). */
export function resourceValueReplicas(
  current: number,
  target: number,
  pods: readonly KubeObject[],
  samples: ReadonlyMap<string, PodSample>,
  resource: string,
  now: number,
): ResourceProposal {
  const { g, values } = counted(pods, samples, resource, now);
  // GetMetricUsageRatio: the average usage per pod (an integer, as kube's) over the target.
  const averageOf = (v: Map<string, number>): number => {
    let sum = 0;
    for (const x of v.values()) sum += x;
    return Math.trunc(sum / v.size);
  };
  const rawAverage = averageOf(values);
  const replicas = adjusted(
    current,
    rawAverage / target,
    g.ready,
    g,
    values,
    () => target,
    (v) => averageOf(v) / target,
  );
  return { replicas, rawAverage };
}

/** A condition of the HPA's status, set as kube's setCondition: the transition time kept while the status stays. */
export interface HpaCondition {
  type: string;
  status: string;
  reason: string;
  message: string;
  lastTransitionTime?: string;
}

export function setCondition(conditions: HpaCondition[], next: Omit<HpaCondition, 'lastTransitionTime'>, now: string): HpaCondition[] {
  const cur = conditions.find((c) => c.type === next.type);
  const lastTransitionTime = cur && cur.status === next.status && cur.lastTransitionTime ? cur.lastTransitionTime : now;
  const stamped = { ...next, lastTransitionTime };
  return cur ? conditions.map((c) => (c === cur ? stamped : c)) : [...conditions, stamped];
}

/** A scaling rule of `spec.behavior` (defaults applied by the API). */
export interface ScalingRules {
  stabilizationWindowSeconds?: number;
  selectPolicy?: string;
  policies?: Array<{ type: string; value: number; periodSeconds: number }>;
}

interface Recommendation {
  replicas: number;
  at: number;
}
interface ScaleEvent {
  change: number;
  at: number;
  outdated: boolean;
}

/** The outcome of a normalization: the replicas, and the AbleToScale and ScalingLimited conditions it sets. */
export interface Normalized {
  replicas: number;
  ableToScale: { reason: string; message: string };
  limited: { status: 'True' | 'False'; reason: string; message: string };
}

/**
 * What the controller remembers of each HPA between syncs (kube keeps it in memory too): its
 * recent recommendations, for the stabilization windows, and its recent scale events, for the
 * rate of a behavior's policies. A controller that starts over starts with the current replicas
 * as the only recommendation.
 */
export class AutoscalerMemory {
  private readonly recommendations = new Map<string, Recommendation[]>();
  private readonly scaleUps = new Map<string, ScaleEvent[]>();
  private readonly scaleDowns = new Map<string, ScaleEvent[]>();

  forget(key: string): void {
    this.recommendations.delete(key);
    this.scaleUps.delete(key);
    this.scaleDowns.delete(key);
  }

  clear(): void {
    this.recommendations.clear();
    this.scaleUps.clear();
    this.scaleDowns.clear();
  }

  /** recordInitialRecommendation: the first sight of an HPA remembers its current replicas. */
  initial(key: string, current: number, now: number): void {
    if (!this.recommendations.has(key)) this.recommendations.set(key, [{ replicas: current, at: now }]);
  }

  /** Replaces the oldest sample past every window, else appends. */
  private record(key: string, replicas: number, now: number, old: number | undefined): void {
    const list = this.recommendations.get(key) ?? [];
    if (old !== undefined) list[old] = { replicas, at: now };
    else list.push({ replicas, at: now });
    this.recommendations.set(key, list);
  }

  /** normalizeDesiredReplicas: an HPA without `behavior`: the highest recommendation of the last five minutes, then at most double (at least 4) and within min and max. */
  normalize(key: string, current: number, desired: number, min: number, max: number, now: number): Normalized {
    let highest = desired;
    let old: number | undefined;
    (this.recommendations.get(key) ?? []).forEach((r, i) => {
      if (r.at < now - DOWNSCALE_STABILIZATION_MS) old = i;
      else if (r.replicas > highest) highest = r.replicas;
    });
    this.record(key, desired, now, old);
    const ableToScale =
      highest !== desired
        ? { reason: 'ScaleDownStabilized', message: 'recent recommendations were higher than current one, applying the highest recent recommendation' }
        : { reason: 'ReadyForNewScale', message: 'recommended size matches current size' };
    const upLimit = Math.max(2 * current, 4);
    let allowedMax: number;
    let limit: { reason: string; message: string };
    if (max > upLimit) {
      allowedMax = upLimit;
      limit = { reason: 'ScaleUpLimit', message: 'the desired replica count is increasing faster than the maximum scale rate' };
    } else {
      allowedMax = max;
      limit = { reason: 'TooManyReplicas', message: 'the desired replica count is more than the maximum replica count' };
    }
    let replicas = highest;
    let reason = { reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range' };
    if (highest < min) {
      replicas = min;
      reason = { reason: 'TooFewReplicas', message: 'the desired replica count is less than the minimum replica count' };
    } else if (highest > allowedMax) {
      replicas = allowedMax;
      reason = limit;
    }
    return { replicas, ableToScale, limited: { status: replicas === highest ? 'False' : 'True', ...reason } };
  }

  /** normalizeDesiredReplicasWithBehaviors: the stabilization windows of both rules, then the rate their policies allow, within min and max. */
  normalizeWithBehavior(
    key: string,
    current: number,
    desired: number,
    min: number,
    max: number,
    up: ScalingRules,
    down: ScalingRules,
    now: number,
  ): Normalized {
    const upWindow = (up.stabilizationWindowSeconds ?? 0) * 1000;
    const downWindow = (down.stabilizationWindowSeconds ?? DOWNSCALE_STABILIZATION_MS / 1000) * 1000;
    let upRec = desired;
    let downRec = desired;
    let old: number | undefined;
    (this.recommendations.get(key) ?? []).forEach((r, i) => {
      if (r.at > now - upWindow) upRec = Math.min(r.replicas, upRec);
      if (r.at > now - downWindow) downRec = Math.max(r.replicas, downRec);
      if (r.at < now - upWindow && r.at < now - downWindow) old = i;
    });
    let stabilized = current;
    if (stabilized < upRec) stabilized = upRec;
    if (stabilized > downRec) stabilized = downRec;
    this.record(key, desired, now, old);
    const ableToScale =
      stabilized !== desired
        ? desired >= current
          ? { reason: 'ScaleUpStabilized', message: 'recent recommendations were lower than current one, applying the lowest recent recommendation' }
          : { reason: 'ScaleDownStabilized', message: 'recent recommendations were higher than current one, applying the highest recent recommendation' }
        : { reason: 'ReadyForNewScale', message: 'recommended size matches current size' };
    let replicas = stabilized;
    let reason = { reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range' };
    if (stabilized > current) {
      const limit = Math.max(this.upLimit(key, current, up, now), current);
      let allowed = max;
      let why = { reason: 'TooManyReplicas', message: 'the desired replica count is more than the maximum replica count' };
      if (max > limit) {
        allowed = limit;
        why = { reason: 'ScaleUpLimit', message: 'the desired replica count is increasing faster than the maximum scale rate' };
      }
      if (stabilized > allowed) [replicas, reason] = [allowed, why];
    } else if (stabilized < current) {
      const limit = Math.min(this.downLimit(key, current, down, now), current);
      let allowed = min;
      let why = { reason: 'TooFewReplicas', message: 'the desired replica count is less than the minimum replica count' };
      if (min < limit) {
        allowed = limit;
        why = { reason: 'ScaleDownLimit', message: 'the desired replica count is decreasing faster than the maximum scale rate' };
      }
      if (stabilized < allowed) [replicas, reason] = [allowed, why];
    }
    return { replicas, ableToScale, limited: { status: replicas === stabilized ? 'False' : 'True', ...reason } };
  }

  private changeIn(events: readonly ScaleEvent[] | undefined, periodSeconds: number, now: number): number {
    let sum = 0;
    for (const e of events ?? []) if (!e.outdated && e.at > now - periodSeconds * 1000) sum += e.change;
    return sum;
  }

  /** calculateScaleUpLimitWithScalingRules. */
  private upLimit(key: string, current: number, rules: ScalingRules, now: number): number {
    if (rules.selectPolicy === 'Disabled') return current;
    const pick = rules.selectPolicy === 'Min' ? Math.min : Math.max;
    let result = rules.selectPolicy === 'Min' ? Infinity : -Infinity;
    for (const p of rules.policies ?? []) {
      const start = current - this.changeIn(this.scaleUps.get(key), p.periodSeconds, now) + this.changeIn(this.scaleDowns.get(key), p.periodSeconds, now);
      const proposed = p.type === 'Pods' ? start + p.value : Math.ceil(start * (1 + p.value / 100));
      result = pick(result, proposed);
    }
    return Number.isFinite(result) ? result : current;
  }

  /** calculateScaleDownLimitWithBehaviors. */
  private downLimit(key: string, current: number, rules: ScalingRules, now: number): number {
    if (rules.selectPolicy === 'Disabled') return current;
    const pick = rules.selectPolicy === 'Min' ? Math.max : Math.min;
    let result = rules.selectPolicy === 'Min' ? -Infinity : Infinity;
    for (const p of rules.policies ?? []) {
      const start = current - this.changeIn(this.scaleUps.get(key), p.periodSeconds, now) + this.changeIn(this.scaleDowns.get(key), p.periodSeconds, now);
      const proposed = p.type === 'Pods' ? start - p.value : Math.trunc(start * (1 - p.value / 100));
      result = pick(result, proposed);
    }
    return Number.isFinite(result) ? result : current;
  }

  /** storeScaleEvent: a rescale is remembered for the rate of later ones; events older than the longest policy period are marked outdated and reused. */
  scaled(key: string, behavior: { scaleUp?: ScalingRules; scaleDown?: ScalingRules } | undefined, from: number, to: number, now: number): void {
    if (!behavior) return;
    const up = to > from;
    const rules = up ? behavior.scaleUp : behavior.scaleDown;
    const longest = Math.max(0, ...(rules?.policies ?? []).map((p) => p.periodSeconds)) * 1000;
    const map = up ? this.scaleUps : this.scaleDowns;
    const list = map.get(key) ?? [];
    let reused = false;
    for (let i = 0; i < list.length; i++) {
      if (list[i]!.at < now - longest) list[i]!.outdated = true;
      if (!reused && list[i]!.outdated) {
        list[i] = { change: Math.abs(to - from), at: now, outdated: false };
        reused = true;
      }
    }
    if (!reused) list.push({ change: Math.abs(to - from), at: now, outdated: false });
    map.set(key, list);
  }
}

/** getReadyPodsCount: the pods that run and are Ready; throws when the selector selects none. */
export function readyPodCount(pods: readonly KubeObject[]): number {
  if (pods.length === 0) throw new Error('no pods returned by selector while calculating replica count');
  return pods.filter((p) => asMap(p.status).phase === 'Running' && podCondition(p, 'Ready')?.status === 'True').length;
}

/**
 * getUsageRatioReplicaCount, for Object and External metrics with a Value target: the ready
 * pods scaled by the ratio of the metric to its target, unless within the tolerance; from zero
 * replicas, the ratio alone.
 */
export function usageRatioReplicas(current: number, ratio: number, pods: () => readonly KubeObject[]): number {
  if (current === 0) return Math.ceil(ratio);
  if (Math.abs(1 - ratio) <= TOLERANCE) return current;
  return Math.ceil(ratio * readyPodCount(pods()));
}

/**
 * GetObjectPerPodMetricReplicas and GetExternalPerPodMetricReplicas: a total against an average
 * target per replica of the scale's status; the usage reported is the total per replica.
 */
export function perPodReplicas(statusReplicas: number, total: number, targetAverage: number): { replicas: number; average: number } {
  let replicas = statusReplicas;
  const ratio = total / (targetAverage * replicas);
  if (Math.abs(1 - ratio) > TOLERANCE) replicas = Math.ceil(total / targetAverage);
  return { replicas, average: statusReplicas > 0 ? Math.ceil(total / statusReplicas) : total };
}

/** The values of a custom metrics MetricValueList (v1beta2, or v1beta1 whose window is `window`) by the name of the object each describes, milli-units. */
export function metricValues(list: unknown): Map<string, PodSample> {
  const out = new Map<string, PodSample>();
  const items = Array.isArray(asMap(list).items) ? (asMap(list).items as unknown[]).map(asMap) : [];
  for (const item of items) {
    const name = asMap(item.describedObject).name;
    const v = milli(item.value);
    if (typeof name !== 'string' || !Number.isFinite(v)) continue;
    out.set(name, { value: v, timestamp: Date.parse(String(item.timestamp ?? '')) || 0, windowMs: (Number(item.windowSeconds ?? item.window) || 0) * 1000 });
  }
  return out;
}
