/**
 * The HorizontalPodAutoscaler controller (kube-controller-manager's horizontal-pod-autoscaler):
 * every 15 s (`KAPI_HPA_SYNC_PERIOD_MS`) each HPA reads its target's `scale` subresource, and
 * unless the target's replicas are outside minReplicas..maxReplicas (then it is brought inside
 * at once) or zero (autoscaling disabled), computes the replicas each metric asks for: Resource
 * and ContainerResource metrics from the resource metrics API (`metrics.k8s.io/v1beta1`
 * PodMetrics, served by an aggregated server such as metrics-server), by utilization of the
 * pods' requests or by average value, with kube's replica calculator (tolerance, pods without a
 * sample, unready pods). The highest proposal is stabilized and rate-limited (without
 * `behavior`: the highest recommendation of five minutes, at most double; with it: both rules'
 * windows and policies), and written to the target's scale. The status (currentReplicas,
 * desiredReplicas, currentMetrics, lastScaleTime, the AbleToScale / ScalingActive /
 * ScalingLimited conditions) and Events (SuccessfulRescale, FailedGetScale,
 * FailedGetResourceMetric, FailedComputeMetricsReplicas, ...) carry kube's reasons and messages.
 * Pods and Object metrics come from the custom metrics API (`custom.metrics.k8s.io`, v1beta2 or v1beta1),
 * External ones from the external metrics API (`external.metrics.k8s.io/v1beta1`), through the
 * aggregation layer too.
 */
import { isDeepStrictEqual } from 'node:util';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { labelSelectorFromStruct, parseLabelSelector, Quantity, StatusError, type KubeObject, type LabelSelectorStruct } from '@app/apimachinery';
import { collectionPrefix, KindRegistry, type KindDeclaration } from '@app/registry';
import type { Storage, StorageEvent } from '@app/storage';
import { envInt } from '../config/env.js';
import { asMap } from '../groups/core/core.helpers.js';
import { AGGREGATOR, type Aggregator } from '../http/aggregator.port.js';
import { STORAGE, STORES, type StoreFactory } from '../tokens.js';
import { ManagedController } from './controller.runner.js';
import { EventRecorder } from './event.recorder.js';
import {
  AutoscalerMemory,
  hpaPodView,
  podSamples,
  resourceUtilizationReplicas,
  resourceValueReplicas,
  metricValues,
  milli,
  perPodReplicas,
  setCondition,
  usageRatioReplicas,
  type HpaCondition,
  type PodSample,
  type ScalingRules,
} from './hpa.logic.js';
import { KindController } from './kind.controller.js';

type Obj = Record<string, unknown>;
const USER = 'horizontal-pod-autoscaler';
const rfc3339 = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');
const codeOf = (e: unknown): number | undefined => (e as { code?: number }).code;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Why one metric gave no proposal: the ScalingActive condition's reason and the error. */
class MetricError extends Error {
  constructor(
    readonly reason: string,
    /** The error as the condition and the Event name it (before the metric's own prefix). */
    readonly inner: string,
    message: string,
  ) {
    super(message);
  }
}

/** What one metric proposes, and its entry of status.currentMetrics. */
interface Proposal {
  replicas: number;
  name: string;
  status: Obj;
}

@ManagedController({ name: 'horizontal-pod-autoscaler' })
@Injectable()
export class HorizontalPodAutoscalerRunner extends KindController {
  private readonly memory = new AutoscalerMemory();
  /** The generation of each HPA at its last sync: a spec change is synced at once, the controller's own status writes are not. */
  private readonly synced = new Map<string, number>();

  constructor(
    registry: KindRegistry,
    @Inject(STORAGE) storage: Storage,
    @Inject(STORES) stores: StoreFactory,
    recorder: EventRecorder,
    @Optional() @Inject(AGGREGATOR) private readonly aggregator?: Aggregator,
  ) {
    super(registry, storage, stores, recorder, USER);
  }

  /** The pods (the fields the replica calculation reads), from a watch-fed copy while this node leads. */
  private readonly pods = this.collection(() => this.decl('', 'pods'), 'horizontal-pod-autoscaler: pods', hpaPodView);

  private period(): number {
    return envInt('KAPI_HPA_SYNC_PERIOD_MS') ?? 15_000;
  }

  protected override reset(): void {
    this.memory.clear();
    this.synced.clear();
  }

  private hpas(): KindDeclaration | undefined {
    return this.registry.lookup('autoscaling', 'v2', 'horizontalpodautoscalers') as KindDeclaration | undefined;
  }

  protected kindsServed(): boolean {
    return this.hpas() !== undefined && this.decl('', 'pods') !== undefined;
  }

  protected watchPrefixes(): string[] {
    return [collectionPrefix(this.hpas()!, '')];
  }

  protected relist(): Promise<number> {
    return this.listAndQueue(this.hpas()!);
  }

  protected onEvent(e: StorageEvent): void {
    const key = `${e.object.metadata.namespace ?? ''}/${e.object.metadata.name}`;
    if (e.type === 'DELETED') {
      this.memory.forget(key);
      this.synced.delete(key);
      this.cancelRequeue(key);
      return;
    }
    if (this.synced.get(key) !== e.object.metadata.generation) this.queue.add(key);
  }

  protected async process(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    let hpa: KubeObject;
    try {
      hpa = await this.stores.storeFor(this.hpas()!).get(ns, name);
    } catch (e) {
      if (codeOf(e) !== 404) throw e;
      this.memory.forget(key);
      this.synced.delete(key);
      return;
    }
    if (hpa.metadata.deletionTimestamp) return;
    this.synced.set(key, hpa.metadata.generation as number);
    try {
      await this.reconcile(key, hpa);
    } catch (e) {
      if (codeOf(e) !== 409) throw e;
    } finally {
      this.requeueAfter(key, this.period());
    }
  }

  /** reconcileAutoscaler: one look at the HPA's target and metrics, and the status written when it changed. */
  private async reconcile(key: string, hpa: KubeObject): Promise<void> {
    const spec = asMap(hpa.spec);
    const before = asMap(hpa.status);
    const now = new Date();
    const stamp = rfc3339(now);
    let conditions = (Array.isArray(before.conditions) ? before.conditions.map(asMap) : []) as unknown as HpaCondition[];
    const set = (type: string, status: string, reason: string, message: string) => {
      conditions = setCondition(conditions, { type, status, reason, message }, stamp);
    };
    const writeStatus = async (status: Obj): Promise<void> => {
      const next = { ...status, conditions };
      if (isDeepStrictEqual(JSON.parse(JSON.stringify(before)), JSON.parse(JSON.stringify(next)))) return;
      try {
        await this.stores
          .storeFor(this.hpas()!)
          .update(
            hpa.metadata.namespace ?? '',
            hpa.metadata.name ?? '',
            { ...hpa, status: next },
            { ctx: this.ctx(), fieldValidation: 'Ignore', subresource: 'status', fieldManager: USER },
          );
      } catch (e) {
        if (codeOf(e) !== 409 && codeOf(e) !== 404) throw e;
      }
    };
    const keep = {
      ...(before.lastScaleTime !== undefined ? { lastScaleTime: before.lastScaleTime } : {}),
      ...(before.observedGeneration !== undefined ? { observedGeneration: before.observedGeneration } : {}),
    };

    // The target's scale.
    const ref = asMap(spec.scaleTargetRef);
    let scale: KubeObject;
    let scaleDecl: KindDeclaration;
    try {
      scaleDecl = this.targetKind(ref);
      scale = await scaleDecl.subresources!.scale!.rest!.get!(hpa.metadata.namespace ?? '', String(ref.name ?? ''), this.ctx());
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      this.events.record(hpa, 'Warning', 'FailedGetScale', '%v', message);
      set('AbleToScale', 'False', 'FailedGetScale', `the HPA controller was unable to get the target's current scale: ${message}`);
      await writeStatus({ ...keep, currentReplicas: num(before.currentReplicas), desiredReplicas: num(before.desiredReplicas), ...metricsOf(before) });
      return;
    }
    set('AbleToScale', 'True', 'SucceededGetScale', "the HPA controller was able to get the target's current scale");
    const current = num(asMap(scale.spec).replicas);
    const min = typeof spec.minReplicas === 'number' ? spec.minReplicas : 1;
    const max = num(spec.maxReplicas);
    this.memory.initial(key, current, now.getTime());

    let desired: number;
    let rescaleReason = '';
    let rescale = true;
    let metricStatuses: Obj[] | undefined = Array.isArray(before.currentMetrics) ? (before.currentMetrics as Obj[]) : undefined;
    if (current === 0 && min !== 0) {
      desired = 0;
      rescale = false;
      set('ScalingActive', 'False', 'ScalingDisabled', 'scaling is disabled since the replica count of the target is zero');
    } else if (current > max) {
      rescaleReason = 'Current number of replicas above Spec.MaxReplicas';
      desired = max;
    } else if (current < min) {
      rescaleReason = 'Current number of replicas below Spec.MinReplicas';
      desired = min;
    } else {
      const computed = await this.computeReplicas(hpa, scale, current, now, set);
      metricStatuses = computed.statuses;
      if (computed.error !== undefined) {
        await writeStatus({ ...keep, currentReplicas: current, desiredReplicas: num(before.desiredReplicas), currentMetrics: metricStatuses });
        this.events.record(hpa, 'Warning', 'FailedComputeMetricsReplicas', '%v', computed.error);
        return;
      }
      desired = computed.replicas;
      if (desired > current) rescaleReason = `${computed.metric} above target`;
      if (desired < current) rescaleReason = 'All metrics below target';
      const behavior = asMap(spec.behavior);
      const normalized =
        spec.behavior === undefined || spec.behavior === null
          ? this.memory.normalize(key, current, desired, min, max, now.getTime())
          : this.memory.normalizeWithBehavior(
              key,
              current,
              desired,
              min,
              max,
              asMap(behavior.scaleUp) as ScalingRules,
              asMap(behavior.scaleDown) as ScalingRules,
              now.getTime(),
            );
      set('AbleToScale', 'True', normalized.ableToScale.reason, normalized.ableToScale.message);
      set('ScalingLimited', normalized.limited.status, normalized.limited.reason, normalized.limited.message);
      desired = normalized.replicas;
      rescale = desired !== current;
    }

    let lastScaleTime = keep.lastScaleTime;
    if (rescale) {
      try {
        await scaleDecl.subresources!.scale!.rest!.update!(
          hpa.metadata.namespace ?? '',
          String(ref.name ?? ''),
          { ...scale, spec: { replicas: desired } },
          this.ctx(),
        );
      } catch (e) {
        const message = e instanceof Error ? e.message : String(e);
        set('AbleToScale', 'False', 'FailedUpdateScale', `the HPA controller was unable to update the target scale: ${message}`);
        this.events.record(hpa, 'Warning', 'FailedRescale', 'New size: %d; reason: %s; error: %v', desired, rescaleReason, message);
        await writeStatus({
          ...keep,
          currentReplicas: current,
          desiredReplicas: num(before.desiredReplicas),
          ...(metricStatuses ? { currentMetrics: metricStatuses } : {}),
        });
        return;
      }
      set('AbleToScale', 'True', 'SucceededRescale', `the HPA controller was able to update the target scale to ${desired}`);
      this.events.record(hpa, 'Normal', 'SuccessfulRescale', 'New size: %d; reason: %s', desired, rescaleReason);
      const behavior = spec.behavior === undefined || spec.behavior === null ? undefined : asMap(spec.behavior);
      this.memory.scaled(key, behavior as { scaleUp?: ScalingRules; scaleDown?: ScalingRules } | undefined, current, desired, now.getTime());
      lastScaleTime = stamp;
    }
    await writeStatus({
      ...(lastScaleTime !== undefined ? { lastScaleTime } : {}),
      ...(keep.observedGeneration !== undefined ? { observedGeneration: keep.observedGeneration } : {}),
      currentReplicas: current,
      desiredReplicas: desired,
      ...(metricStatuses ? { currentMetrics: metricStatuses } : {}),
    });
  }

  /** The served kind of a scaleTargetRef, with a `scale` subresource; throws kube's mapping errors. */
  private targetKind(ref: Obj): KindDeclaration {
    const apiVersion = String(ref.apiVersion ?? '');
    const kind = String(ref.kind ?? '');
    const parts = apiVersion.split('/');
    if (parts.length > 2 || apiVersion === '') throw new Error(`unexpected GroupVersion string: ${apiVersion}`);
    const [group, version] = parts.length === 2 ? [parts[0]!, parts[1]!] : ['', parts[0]!];
    const decl =
      (this.registry.lookupKind(group, version, kind) as KindDeclaration | undefined) ??
      (this.registry.all().find((d) => d.group === group && d.kind === kind) as KindDeclaration | undefined);
    if (!decl) throw new Error(`no matches for kind "${kind}" in group "${group}"`);
    if (!decl.subresources?.scale?.rest?.get || !decl.subresources.scale.rest.update)
      throw new Error(`${decl.plural}${group ? `.${group}` : ''} "${String(ref.name ?? '')}" has no scale subresource`);
    return decl;
  }

  /**
   * computeReplicasForMetrics: each metric's proposal, the highest counting; an error (kube's
   * "invalid metrics" message) when every metric failed, or some did and the rest would scale
   * down.
   */
  private async computeReplicas(
    hpa: KubeObject,
    scale: KubeObject,
    current: number,
    now: Date,
    set: (type: string, status: string, reason: string, message: string) => void,
  ): Promise<{ replicas: number; metric: string; statuses: Obj[]; error?: string }> {
    const metrics = Array.isArray(asMap(hpa.spec).metrics) ? (asMap(hpa.spec).metrics as unknown[]).map(asMap) : [];
    const selectorText = asMap(scale.status).selector;
    if (typeof selectorText !== 'string' || selectorText === '') {
      this.events.record(hpa, 'Warning', 'SelectorRequired', 'selector is required');
      set('ScalingActive', 'False', 'InvalidSelector', "the HPA target's scale is missing a selector");
      return { replicas: 0, metric: '', statuses: [], error: 'selector is required' };
    }
    let selector: ReturnType<typeof parseLabelSelector>;
    try {
      selector = parseLabelSelector(selectorText);
    } catch (e) {
      const message = `couldn't convert selector into a corresponding internal selector object: ${(e as Error).message}`;
      this.events.record(hpa, 'Warning', 'InvalidSelector', '%v', message);
      set('ScalingActive', 'False', 'InvalidSelector', message);
      return { replicas: 0, metric: '', statuses: [], error: message };
    }
    const ns = hpa.metadata.namespace ?? '';
    let pods: KubeObject[] | undefined;
    const podsOf = async (): Promise<KubeObject[]> => {
      if (pods) return pods;
      const all = await this.pods.inNamespace(ns);
      pods = all.filter((p) => selector.matches(asMap(p.metadata.labels) as Record<string, string>));
      return pods;
    };
    const statuses: Obj[] = [];
    let replicas = 0;
    let metric = '';
    let invalid = 0;
    let first: MetricError | undefined;
    for (const m of metrics) {
      try {
        const p = await this.proposal(hpa, scale, m, current, selectorText, podsOf, now);
        statuses.push(p.status);
        if (replicas === 0 || p.replicas > replicas) {
          replicas = p.replicas;
          metric = p.name;
        }
      } catch (e) {
        if (!(e instanceof MetricError)) throw e;
        statuses.push({ type: '' });
        this.events.record(hpa, 'Warning', e.reason, '%v', e.inner);
        first ??= e;
        invalid++;
      }
    }
    if (first && (invalid >= metrics.length || replicas < current)) {
      set('ScalingActive', 'False', first.reason, `the HPA was unable to compute the replica count: ${first.inner}`);
      return { replicas: -1, metric: '', statuses, error: `invalid metrics (${invalid} invalid out of ${metrics.length}), first error is: ${first.message}` };
    }
    set('ScalingActive', 'True', 'ValidMetricFound', `the HPA was able to successfully calculate a replica count from ${metric}`);
    return { replicas, metric, statuses };
  }

  /** One metric's proposal; throws MetricError. */
  private async proposal(
    hpa: KubeObject,
    scale: KubeObject,
    m: Obj,
    current: number,
    selector: string,
    podsOf: () => Promise<KubeObject[]>,
    now: Date,
  ): Promise<Proposal> {
    const type = String(m.type ?? '');
    if (type === 'Resource' || type === 'ContainerResource') {
      const src = asMap(type === 'Resource' ? m.resource : m.containerResource);
      const resource = String(src.name ?? '');
      const container = type === 'ContainerResource' ? String(src.container ?? '') : undefined;
      const target = asMap(src.target);
      const reason = type === 'Resource' ? 'FailedGetResourceMetric' : 'FailedGetContainerResourceMetric';
      const outer = type === 'Resource' ? `failed to get ${resource} resource metric value` : `failed to get ${resource} container metric value`;
      const fail = (inner: string): never => {
        throw new MetricError(reason, inner, `${outer}: ${inner}`);
      };
      const utilization = typeof target.averageUtilization === 'number' ? target.averageUtilization : undefined;
      const value = target.averageValue !== undefined && target.averageValue !== null ? milli(target.averageValue) : undefined;
      if (utilization === undefined && value === undefined)
        fail('invalid resource metric source: neither an average utilization target nor an average value (usage) target was set');
      const what = utilization !== undefined ? 'utilization' : 'usage';
      let samples: Map<string, PodSample>;
      try {
        samples = await this.podMetrics(hpa.metadata.namespace ?? '', selector, resource, container);
      } catch (e) {
        return fail(`failed to get ${resource} ${what}: unable to get metrics for resource ${resource}: ${(e as Error).message}`);
      }
      const pods = await podsOf();
      const nowMs = now.getTime();
      try {
        const at = utilization !== undefined ? 'averageUtilization' : undefined;
        const p =
          utilization !== undefined
            ? resourceUtilizationReplicas(current, utilization, pods, samples, resource, nowMs, container)
            : resourceValueReplicas(current, value!, pods, samples, resource, nowMs);
        const currentValue: Obj = {
          ...(at ? { averageUtilization: p.utilization } : {}),
          averageValue: Quantity.fromMilli(p.rawAverage).toString(),
        };
        const name =
          utilization !== undefined
            ? `${resource} resource utilization (percentage of request)`
            : type === 'Resource'
              ? `${resource} resource`
              : `${resource} container resource`;
        const status =
          type === 'Resource'
            ? { type, resource: { name: resource, current: currentValue } }
            : { type, containerResource: { name: resource, container, current: currentValue } };
        return {
          replicas: p.replicas,
          name: type === 'ContainerResource' && utilization !== undefined ? `${resource} container resource utilization (percentage of request)` : name,
          status,
        };
      } catch (e) {
        return fail(`failed to get ${resource} ${what}: ${(e as Error).message}`);
      }
    }
    const ns = hpa.metadata.namespace ?? '';
    const src = asMap(m[type.charAt(0).toLowerCase() + type.slice(1)]);
    const metric = asMap(src.metric);
    const metricName = String(metric.name ?? '');
    const metricSelector = isObj(metric.selector) ? labelSelectorFromStruct(metric.selector as LabelSelectorStruct).toString() : '';
    const target = asMap(src.target);
    const targetValue = target.value !== undefined && target.value !== null ? milli(target.value) : undefined;
    const targetAverage = target.averageValue !== undefined && target.averageValue !== null ? milli(target.averageValue) : undefined;
    const metricStatus = { name: metricName, ...(isObj(metric.selector) ? { selector: metric.selector } : {}) };
    const q = (params: Record<string, string>) => {
      const parts = Object.entries(params).filter(([, v]) => v !== '');
      return parts.length ? `?${parts.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')}` : '';
    };
    if (type === 'Pods') {
      const fail = (inner: string): never => {
        throw new MetricError('FailedGetPodsMetric', inner, `failed to get pods metric value: ${inner}`);
      };
      if (targetAverage === undefined) return fail('invalid pods metric source: no average value target was set');
      let values: Map<string, PodSample>;
      try {
        const cv = this.customMetricsVersion();
        const list = await this.remoteJson(
          'custom.metrics.k8s.io',
          cv,
          `/apis/custom.metrics.k8s.io/${cv}/namespaces/${encodeURIComponent(ns)}/pods/*/${encodeURIComponent(metricName)}${q({ labelSelector: selector, metricLabelSelector: metricSelector })}`,
          'custom metrics API',
          `get pods.custom.metrics.k8s.io *`,
        );
        values = metricValues(list);
        if (values.size === 0) throw new Error('no metrics returned from custom metrics API');
      } catch (e) {
        return fail(`unable to get metric ${metricName}: ${(e as Error).message}`);
      }
      try {
        const p = resourceValueReplicas(current, targetAverage, await podsOf(), values, '', now.getTime());
        return {
          replicas: p.replicas,
          name: `pods metric ${metricName}`,
          status: { type, pods: { metric: metricStatus, current: { averageValue: Quantity.fromMilli(p.rawAverage).toString() } } },
        };
      } catch (e) {
        return fail((e as Error).message);
      }
    }
    if (type === 'Object') {
      const described = asMap(src.describedObject);
      const kind = String(described.kind ?? '');
      const objName = String(described.name ?? '');
      const fail = (inner: string): never => {
        throw new MetricError('FailedGetObjectMetric', inner, `failed to get object metric value: ${inner}`);
      };
      if (targetValue === undefined && targetAverage === undefined)
        return fail('invalid object metric source: neither a value target nor an average value target was set');
      let usage: number;
      try {
        const cv = this.customMetricsVersion();
        const path = this.objectMetricPath(cv, ns, described, metricName) + q({ metricLabelSelector: metricSelector });
        const list = await this.remoteJson(
          'custom.metrics.k8s.io',
          cv,
          path,
          'custom metrics API',
          `get ${kind.toLowerCase()}s.custom.metrics.k8s.io ${objName}`,
        );
        const items = Array.isArray(asMap(list).items) ? (asMap(list).items as unknown[]).map(asMap) : [];
        if (items.length === 0) throw new Error('no metrics returned from custom metrics API');
        usage = milli(items[0]!.value);
        if (!Number.isFinite(usage)) throw new Error('the custom metrics API returned a value that is not a quantity');
      } catch (e) {
        return fail(`unable to get metric ${metricName}: ${kind} on ${ns} ${objName}/${(e as Error).message}`);
      }
      const statusReplicas = num(asMap(scale.status).replicas);
      try {
        if (targetValue !== undefined) {
          const ps = await podsOf();
          const replicas = usageRatioReplicas(current, usage / targetValue, () => ps);
          return {
            replicas,
            name: `${kind} metric ${metricName}`,
            status: { type, object: { describedObject: described, metric: metricStatus, current: { value: Quantity.fromMilli(usage).toString() } } },
          };
        }
        const p = perPodReplicas(statusReplicas, usage, targetAverage!);
        return {
          replicas: p.replicas,
          name: `${kind} metric ${metricName}`,
          status: { type, object: { describedObject: described, metric: metricStatus, current: { averageValue: Quantity.fromMilli(p.average).toString() } } },
        };
      } catch (e) {
        return fail((e as Error).message);
      }
    }
    if (type === 'External') {
      const fail = (inner: string): never => {
        throw new MetricError('FailedGetExternalMetric', inner, `failed to get external metric value: ${inner}`);
      };
      if (targetValue === undefined && targetAverage === undefined)
        return fail('invalid external metric source: neither a value target nor an average value target was set');
      let total = 0;
      try {
        const list = await this.remoteJson(
          'external.metrics.k8s.io',
          'v1beta1',
          `/apis/external.metrics.k8s.io/v1beta1/namespaces/${encodeURIComponent(ns)}/${encodeURIComponent(metricName)}${q({ labelSelector: metricSelector })}`,
          'external metrics API',
          `get ${metricName}.external.metrics.k8s.io`,
        );
        const items = Array.isArray(asMap(list).items) ? (asMap(list).items as unknown[]).map(asMap) : [];
        if (items.length === 0) throw new Error('no metrics returned from external metrics API');
        for (const item of items) {
          const v = milli(item.value);
          if (Number.isFinite(v)) total += v;
        }
      } catch (e) {
        return fail(`unable to get external metric ${ns}/${metricName}/${metricSelector || '&LabelSelector{}'}: ${(e as Error).message}`);
      }
      const name = `external metric ${metricName}(${metricSelector})`;
      try {
        if (targetValue !== undefined) {
          const ps = await podsOf();
          const replicas = usageRatioReplicas(current, total / targetValue, () => ps);
          return { replicas, name, status: { type, external: { metric: metricStatus, current: { value: Quantity.fromMilli(total).toString() } } } };
        }
        const p = perPodReplicas(num(asMap(scale.status).replicas), total, targetAverage!);
        return {
          replicas: p.replicas,
          name,
          status: { type, external: { metric: metricStatus, current: { averageValue: Quantity.fromMilli(p.average).toString() } } },
        };
      } catch (e) {
        return fail((e as Error).message);
      }
    }
    throw new MetricError('InvalidMetricSourceType', `unknown metric source type "${type}"`, `unknown metric source type "${type}"`);
  }

  /**
   * The version of the custom metrics API to read: the group's preferred version among those the
   * controller speaks (v1beta2, v1beta1; their MetricValueLists carry the same fields it reads),
   * as kube's client chooses by discovery; v1beta2 while none is registered.
   */
  private customMetricsVersion(): string {
    const group = this.aggregator?.remoteGroups().find((g) => g.name === 'custom.metrics.k8s.io');
    return group?.versions.find((v) => v.version === 'v1beta2' || v.version === 'v1beta1')?.version ?? 'v1beta2';
  }

  /** The custom metrics API's path of a metric of one object (`namespaces/<ns>/metrics/<metric>` for the namespace itself). */
  private objectMetricPath(metricsVersion: string, ns: string, described: Obj, metric: string): string {
    const base = `/apis/custom.metrics.k8s.io/${metricsVersion}/namespaces/${encodeURIComponent(ns)}`;
    const kind = String(described.kind ?? '');
    const apiVersion = String(described.apiVersion ?? 'v1');
    const [group, version] = apiVersion.includes('/') ? (apiVersion.split('/') as [string, string]) : ['', apiVersion];
    if (group === '' && kind === 'Namespace') return `${base}/metrics/${encodeURIComponent(metric)}`;
    const decl = (this.registry.lookupKind(group, version, kind) ?? this.registry.all().find((d) => d.group === group && d.kind === kind)) as
      KindDeclaration | undefined;
    if (!decl)
      throw new MetricError(
        'FailedGetObjectMetric',
        `no matches for kind "${kind}" in group "${group}"`,
        `failed to get object metric value: no matches for kind "${kind}" in group "${group}"`,
      );
    const resource = group ? `${decl.plural}.${group}` : decl.plural;
    return `${base}/${resource}/${encodeURIComponent(String(described.name ?? ''))}/${encodeURIComponent(metric)}`;
  }

  /** A GET from a metrics API served through the aggregation layer, as JSON; throws kube's client messages. */
  private async remoteJson(group: string, version: string, path: string, api: string, what: string): Promise<unknown> {
    let answer: { status: number; body: Buffer };
    try {
      if (!this.aggregator) throw new StatusError(404, 'NotFound', 'the server could not find the requested resource');
      answer = await this.aggregator.getRemote(group, version, path, this.ctx().user);
    } catch (e) {
      const why =
        e instanceof StatusError && e.code === 404
          ? 'the server could not find the requested resource'
          : e instanceof StatusError && e.code === 503
            ? 'the server is currently unable to handle the request'
            : (e as Error).message;
      throw new Error(`unable to fetch metrics from ${api}: ${why} (${what})`, { cause: e });
    }
    if (answer.status === 404) throw new Error(`unable to fetch metrics from ${api}: the server could not find the requested resource (${what})`);
    if (answer.status < 200 || answer.status >= 300)
      throw new Error(`unable to fetch metrics from ${api}: an error on the server (${answer.status}) has prevented the request from succeeding (${what})`);
    try {
      return JSON.parse(answer.body.toString('utf8'));
    } catch (e) {
      throw new Error(`unable to fetch metrics from ${api}: the answer is not JSON (${what})`, { cause: e });
    }
  }

  /** The pods' samples of `resource` from metrics.k8s.io/v1beta1; throws kube's message. */
  private async podMetrics(ns: string, selector: string, resource: string, container?: string): Promise<Map<string, PodSample>> {
    const path = `/apis/metrics.k8s.io/v1beta1/namespaces/${encodeURIComponent(ns)}/pods?labelSelector=${encodeURIComponent(selector)}`;
    const list = await this.remoteJson('metrics.k8s.io', 'v1beta1', path, 'resource metrics API', 'get pods.metrics.k8s.io');
    if (!Array.isArray(asMap(list).items) || (asMap(list).items as unknown[]).length === 0) throw new Error('no metrics returned from resource metrics API');
    return podSamples(list, resource, container);
  }
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const metricsOf = (status: Obj): Obj => (Array.isArray(status.currentMetrics) ? { currentMetrics: status.currentMetrics } : {});
