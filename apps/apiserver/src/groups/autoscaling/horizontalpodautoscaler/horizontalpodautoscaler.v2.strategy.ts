/**
 * autoscaling/v2 HorizontalPodAutoscaler rules (pkg/apis/autoscaling/validation): the replica
 * bounds and scale target of v1, each metric with exactly its source and a sane target, and the
 * scaling behaviour's windows and policies. Also kubectl's TARGETS cell for v2 metrics.
 */
import { parseQuantity, type FieldError, type KubeObject } from '@app/apimachinery';
import type { Strategy } from '@app/registry';
import { asMap } from '../../core/core.helpers.js';
import { defaultHorizontalPodAutoscalerV2 } from './horizontalpodautoscaler.defaults.js';
import { validateHorizontalPodAutoscaler } from './horizontalpodautoscaler.strategy.js';

const SOURCES: Record<string, string> = { ContainerResource: 'containerResource', External: 'external', Object: 'object', Pods: 'pods', Resource: 'resource' };
const supported = (vals: readonly string[]) => `supported values: ${vals.map((v) => JSON.stringify(v)).join(', ')}`;

function positive(q: unknown): boolean {
  try {
    return parseQuantity(String(q)).nanos > 0n;
  } catch {
    return false;
  }
}

function validateTarget(t: Record<string, unknown>, at: string, resource: boolean, errs: FieldError[]): void {
  const type = typeof t.type === 'string' ? t.type : '';
  if (!type) errs.push({ type: 'FieldValueRequired', field: `${at}.type`, detail: 'must specify a metric target type' });
  else if (!['Utilization', 'Value', 'AverageValue'].includes(type)) {
    errs.push({ type: 'FieldValueInvalid', field: `${at}.type`, value: type, detail: 'must be either Utilization, Value, or AverageValue' });
  }
  for (const f of ['value', 'averageValue']) {
    if (t[f] !== undefined && t[f] !== null && !positive(t[f]))
      errs.push({ type: 'FieldValueInvalid', field: `${at}.${f}`, value: t[f], detail: 'must be positive' });
  }
  const u = t.averageUtilization;
  if (typeof u === 'number' && u < 1) errs.push({ type: 'FieldValueInvalid', field: `${at}.averageUtilization`, value: u, detail: 'must be greater than 0' });
  if (resource) {
    const hasU = u !== undefined && u !== null;
    const hasV = t.averageValue !== undefined && t.averageValue !== null;
    if (!hasU && !hasV)
      errs.push({ type: 'FieldValueRequired', field: `${at}.averageUtilization`, detail: 'must set either a target raw value or a target utilization' });
    if (hasU && hasV)
      errs.push({ type: 'FieldValueForbidden', field: `${at}.averageValue`, detail: 'may not set both a target raw value and a target utilization' });
  }
}

function validateMetric(m: Record<string, unknown>, at: string, errs: FieldError[]): void {
  const type = typeof m.type === 'string' ? m.type : '';
  if (!type) {
    errs.push({ type: 'FieldValueRequired', field: `${at}.type`, detail: 'must specify a metric source type' });
    return;
  }
  const field = SOURCES[type];
  if (!field) {
    errs.push({ type: 'FieldValueInvalid', field: `${at}.type`, value: type, detail: 'must be either External, Object, Pods, Resource or ContainerResource' });
    return;
  }
  for (const other of Object.values(SOURCES)) {
    if (other !== field && m[other] !== undefined && m[other] !== null)
      errs.push({ type: 'FieldValueForbidden', field: `${at}.${other}`, detail: 'must populate the given metric source only' });
  }
  if (m[field] === undefined || m[field] === null) {
    errs.push({ type: 'FieldValueRequired', field: `${at}.${field}`, detail: 'must populate information for the given metric source' });
    return;
  }
  const s = asMap(m[field]);
  const sat = `${at}.${field}`;
  if (field === 'resource' || field === 'containerResource') {
    if (!s.name) errs.push({ type: 'FieldValueRequired', field: `${sat}.name`, detail: 'must specify a resource name' });
    if (field === 'containerResource' && !s.container) errs.push({ type: 'FieldValueRequired', field: `${sat}.container`, detail: 'must specify a container' });
  } else {
    if (!asMap(s.metric).name) errs.push({ type: 'FieldValueRequired', field: `${sat}.metric.name`, detail: 'must specify a metric name' });
    if (field === 'object') {
      const d = asMap(s.describedObject);
      for (const f of ['kind', 'name']) if (!d[f]) errs.push({ type: 'FieldValueRequired', field: `${sat}.describedObject.${f}`, detail: '' });
    }
  }
  validateTarget(asMap(s.target), `${sat}.target`, field === 'resource' || field === 'containerResource', errs);
}

function validateRules(r: Record<string, unknown>, at: string, errs: FieldError[]): void {
  const w = r.stabilizationWindowSeconds;
  if (typeof w === 'number' && w < 0)
    errs.push({ type: 'FieldValueInvalid', field: `${at}.stabilizationWindowSeconds`, value: w, detail: 'must be greater than or equal to zero' });
  if (typeof w === 'number' && w > 3600)
    errs.push({ type: 'FieldValueInvalid', field: `${at}.stabilizationWindowSeconds`, value: w, detail: 'must be less than or equal to 3600' });
  const select = r.selectPolicy;
  if (select !== undefined && select !== null && !['Max', 'Min', 'Disabled'].includes(String(select))) {
    errs.push({ type: 'FieldValueNotSupported', field: `${at}.selectPolicy`, value: select, detail: supported(['Disabled', 'Max', 'Min']) });
  }
  const policies = Array.isArray(r.policies) ? r.policies.map(asMap) : [];
  if (policies.length === 0 && select !== 'Disabled')
    errs.push({ type: 'FieldValueRequired', field: `${at}.policies`, detail: 'must specify at least one Policy' });
  policies.forEach((p, i) => {
    const pat = `${at}.policies[${i}]`;
    if (p.type !== 'Pods' && p.type !== 'Percent')
      errs.push({ type: 'FieldValueNotSupported', field: `${pat}.type`, value: p.type ?? '', detail: supported(['Percent', 'Pods']) });
    const v = typeof p.value === 'number' ? p.value : 0;
    if (v <= 0) errs.push({ type: 'FieldValueInvalid', field: `${pat}.value`, value: v, detail: 'must be greater than zero' });
    const per = typeof p.periodSeconds === 'number' ? p.periodSeconds : 0;
    if (per <= 0) errs.push({ type: 'FieldValueInvalid', field: `${pat}.periodSeconds`, value: per, detail: 'must be greater than zero' });
    if (per > 1800) errs.push({ type: 'FieldValueInvalid', field: `${pat}.periodSeconds`, value: per, detail: 'must be less than or equal to 1800' });
  });
}

/** ValidateHorizontalPodAutoscaler on the v2 form. */
export function validateHorizontalPodAutoscalerV2(hpa: KubeObject): FieldError[] {
  const spec = asMap(hpa.spec);
  // The replica bounds and scale target are v1's rules; v2 has no CPU field to check there.
  const errs = validateHorizontalPodAutoscaler({ ...hpa, spec: { ...spec, targetCPUUtilizationPercentage: undefined } });
  (Array.isArray(spec.metrics) ? spec.metrics.map(asMap) : []).forEach((m, i) => validateMetric(m, `spec.metrics[${i}]`, errs));
  if (spec.behavior !== undefined && spec.behavior !== null) {
    const b = asMap(spec.behavior);
    for (const dir of ['scaleUp', 'scaleDown']) if (b[dir] !== undefined && b[dir] !== null) validateRules(asMap(b[dir]), `spec.behavior.${dir}`, errs);
  }
  return errs;
}

/** The v2 strategy: the v2 defaults; status starts empty. */
export const horizontalPodAutoscalerV2Strategy: Strategy = {
  prepareForCreate(hpa) {
    defaultHorizontalPodAutoscalerV2(hpa);
    hpa.status = { currentReplicas: 0, desiredReplicas: 0 };
  },
  prepareForUpdate: (hpa) => defaultHorizontalPodAutoscalerV2(hpa),
  validate: validateHorizontalPodAutoscalerV2,
  validateUpdate: (hpa) => validateHorizontalPodAutoscalerV2(hpa),
};

/** One metric's `current/target` as kubectl prints it (formatHPAMetrics). */
function metricCell(spec: Record<string, unknown>, current: Record<string, unknown> | undefined): string {
  const type = String(spec.type ?? '');
  const field = SOURCES[type];
  const s = asMap(spec[field]);
  const t = asMap(s.target);
  const cur = asMap(asMap(current?.[field]).current);
  const has = current !== undefined;
  const unknown = '<unknown>';
  if (field === 'resource' || field === 'containerResource') {
    const name = String(s.name ?? '');
    const label = field === 'containerResource' ? `${name} of container ${String(s.container ?? '')}` : name;
    if (typeof t.averageUtilization === 'number') {
      const c = has && typeof cur.averageUtilization === 'number' ? `${cur.averageUtilization}%` : unknown;
      return `${label}: ${c}/${t.averageUtilization}%`;
    }
    return `${label}: ${has && cur.averageValue !== undefined ? String(cur.averageValue) : unknown}/${String(t.averageValue ?? '')}`;
  }
  const value = t.type === 'AverageValue' ? t.averageValue : t.value;
  const curValue = t.type === 'AverageValue' ? cur.averageValue : cur.value;
  const c = has && curValue !== undefined ? String(curValue) : unknown;
  return `${c}/${String(value ?? '')}${t.type === 'AverageValue' && field !== 'pods' ? ' (avg)' : ''}`;
}

/** kubectl's TARGETS cell for v2 metrics: `<none>` without any, at most three then `+ N more...`. */
export function hpaTargetsV2(hpa: KubeObject): string {
  const metrics = Array.isArray(asMap(hpa.spec).metrics) ? (asMap(hpa.spec).metrics as unknown[]).map(asMap) : [];
  if (metrics.length === 0) return '<none>';
  const current = Array.isArray(asMap(hpa.status).currentMetrics) ? (asMap(hpa.status).currentMetrics as unknown[]).map(asMap) : [];
  const cells = metrics.map((m, i) => metricCell(m, current.length > i ? current[i] : undefined));
  return cells.length > 3 ? `${cells.slice(0, 3).join(', ')} + ${cells.length - 3} more...` : cells.join(', ');
}
