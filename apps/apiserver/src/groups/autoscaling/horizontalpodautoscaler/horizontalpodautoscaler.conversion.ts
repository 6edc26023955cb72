/**
 * Conversion of HorizontalPodAutoscaler between autoscaling/v1 and v2 (stored at v2, as
 * Kubernetes stores it). v1 carries only a CPU utilization target; everything else of v2 rides
 * in the annotations Kubernetes uses for it (`autoscaling.alpha.kubernetes.io/metrics`,
 * `.../current-metrics`, `.../conditions`, `.../behavior`; here holding the v2 JSON), so a round
 * trip through either version keeps every field, the order of metrics included.
 */
import type { KubeObject } from '@app/apimachinery';
import type { Conversion } from '@app/registry';
import { defaultHorizontalPodAutoscalerV2 } from './horizontalpodautoscaler.defaults.js';

/** The annotations holding v2-only fields on a v1 object. */
export const HPA_ANNOTATIONS = {
  metrics: 'autoscaling.alpha.kubernetes.io/metrics',
  currentMetrics: 'autoscaling.alpha.kubernetes.io/current-metrics',
  conditions: 'autoscaling.alpha.kubernetes.io/conditions',
  behavior: 'autoscaling.alpha.kubernetes.io/behavior',
} as const;

type Obj = Record<string, unknown>;
const asObj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});

/** Index of the metric giving CPU utilization (Resource cpu, target or current utilization). */
function cpuIndex(metrics: Obj[], field: 'target' | 'current'): number {
  return metrics.findIndex((m) => {
    const r = asObj(m.resource);
    return (
      m.type === 'Resource' &&
      r.name === 'cpu' &&
      typeof asObj(r[field]).averageUtilization === 'number' &&
      (field === 'current' || asObj(r.target).type === 'Utilization')
    );
  });
}

function readAnnotation(ann: Record<string, string>, key: string): unknown {
  const v = ann[key];
  delete ann[key];
  if (v === undefined) return undefined;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return undefined;
  }
}

/** v2 -> v1: the CPU metric to its field, the rest to annotations. */
function toV1(obj: KubeObject): KubeObject {
  const out = structuredClone(obj);
  out.apiVersion = 'autoscaling/v1';
  const spec = asObj(out.spec);
  const status = out.status === undefined ? undefined : asObj(out.status);
  const ann: Record<string, string> = { ...(out.metadata.annotations ?? {}) };
  const metrics = Array.isArray(spec.metrics) ? (spec.metrics as Obj[]) : [];
  delete spec.metrics;
  const ci = cpuIndex(metrics, 'target');
  if (ci >= 0) spec.targetCPUUtilizationPercentage = asObj(asObj(metrics[ci].resource).target).averageUtilization;
  // The CPU metric in first place is the v1 field alone; elsewhere the list keeps it, so the order survives.
  const rest = ci === 0 ? metrics.slice(1) : metrics;
  if (rest.length) ann[HPA_ANNOTATIONS.metrics] = JSON.stringify(rest);
  if (spec.behavior !== undefined) {
    ann[HPA_ANNOTATIONS.behavior] = JSON.stringify(spec.behavior);
    delete spec.behavior;
  }
  if (status) {
    const cur = Array.isArray(status.currentMetrics) ? (status.currentMetrics as Obj[]) : [];
    delete status.currentMetrics;
    const cc = cpuIndex(cur, 'current');
    if (cc >= 0) status.currentCPUUtilizationPercentage = asObj(asObj(cur[cc].resource).current).averageUtilization;
    const restCur = cc === 0 ? cur.slice(1) : cur;
    if (restCur.length) ann[HPA_ANNOTATIONS.currentMetrics] = JSON.stringify(restCur);
    if (status.conditions !== undefined) {
      ann[HPA_ANNOTATIONS.conditions] = JSON.stringify(status.conditions);
      delete status.conditions;
    }
  }
  if (Object.keys(ann).length) out.metadata.annotations = ann;
  return out;
}

/** v1 -> v2: the annotations back to fields, the CPU target to its metric. */
function toV2(obj: KubeObject): KubeObject {
  const out = structuredClone(obj);
  out.apiVersion = 'autoscaling/v2';
  const spec = asObj(out.spec);
  const status = out.status === undefined ? undefined : asObj(out.status);
  const hadAnnotations = out.metadata.annotations !== undefined;
  const ann: Record<string, string> = { ...(out.metadata.annotations ?? {}) };
  const metrics = (readAnnotation(ann, HPA_ANNOTATIONS.metrics) as Obj[] | undefined) ?? [];
  const cpu = spec.targetCPUUtilizationPercentage;
  delete spec.targetCPUUtilizationPercentage;
  const ci = cpuIndex(metrics, 'target');
  if (typeof cpu === 'number') {
    if (ci >= 0) asObj(asObj(metrics[ci].resource).target).averageUtilization = cpu;
    else metrics.unshift({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: cpu } } });
  } else if (ci >= 0) metrics.splice(ci, 1); // a v1 client removed the CPU target
  if (metrics.length) spec.metrics = metrics;
  const behavior = readAnnotation(ann, HPA_ANNOTATIONS.behavior);
  if (behavior !== undefined) spec.behavior = behavior;
  const cur = (readAnnotation(ann, HPA_ANNOTATIONS.currentMetrics) as Obj[] | undefined) ?? [];
  const conditions = readAnnotation(ann, HPA_ANNOTATIONS.conditions);
  if (status) {
    const cc = status.currentCPUUtilizationPercentage;
    delete status.currentCPUUtilizationPercentage;
    const ci2 = cpuIndex(cur, 'current');
    if (typeof cc === 'number') {
      if (ci2 >= 0) asObj(asObj(cur[ci2].resource).current).averageUtilization = cc;
      else cur.unshift({ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: cc } } });
    } else if (ci2 >= 0) cur.splice(ci2, 1);
    if (cur.length) status.currentMetrics = cur;
    if (conditions !== undefined) status.conditions = conditions;
  }
  if (Object.keys(ann).length || (hadAnnotations && Object.keys(out.metadata.annotations ?? {}).length === 0)) out.metadata.annotations = ann;
  else delete out.metadata.annotations;
  // What a v1 client writes is stored with v2's defaults, as Kubernetes decodes it at v2: without
  // a CPU target nor other metrics, it aims at 80% CPU (and reads back so at v1).
  defaultHorizontalPodAutoscalerV2(out);
  return out;
}

/** Converts a HorizontalPodAutoscaler of either served version to `to`; the input is not changed. */
export function convertHorizontalPodAutoscaler(obj: KubeObject, to: string): KubeObject {
  const from = obj.apiVersion === 'autoscaling/v1' ? 'v1' : 'v2';
  if (from === to) return obj;
  return to === 'v1' ? toV1(obj) : toV2(obj);
}

/** The HorizontalPodAutoscaler conversion (stored at v2). */
export const HPA_CONVERSION: Conversion = { storageVersion: 'v2', convert: convertHorizontalPodAutoscaler };
