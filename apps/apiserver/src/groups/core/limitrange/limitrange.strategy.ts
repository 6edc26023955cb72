/**
 * LimitRange validation (pkg/apis/core/validation ValidateLimitRange): one item per type,
 * no defaults for type Pod, a storage bound for type PersistentVolumeClaim, and for every
 * resource min <= defaultRequest <= default <= max and 1 <= maxLimitRequestRatio <= max/min;
 * Container items' defaults filled in from max and min first, as Kubernetes' defaulting does.
 */
import { parseQuantity, Quantity, type FieldError, type KubeObject } from '@app/apimachinery';
import type { Strategy } from '@app/registry';
import { asMap } from '../core.helpers.js';

type Quantities = Map<string, Quantity>;

function quantities(v: unknown, path: string, errs: FieldError[]): Quantities {
  const out: Quantities = new Map();
  for (const [k, raw] of Object.entries(asMap(v))) {
    try {
      out.set(k, parseQuantity(String(raw)));
    } catch {
      errs.push({ type: 'FieldValueInvalid', field: `${path}[${k}]`, value: raw, detail: 'must be a valid resource quantity' });
    }
  }
  return out;
}

/** Checks one item of spec.limits. */
function validateItem(item: Record<string, unknown>, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const max = quantities(item.max, `${path}.max`, errs);
  const min = quantities(item.min, `${path}.min`, errs);
  const def = quantities(item.default, `${path}.default`, errs);
  const defReq = quantities(item.defaultRequest, `${path}.defaultRequest`, errs);
  const ratio = quantities(item.maxLimitRequestRatio, `${path}.maxLimitRequestRatio`, errs);
  if (item.type === 'Pod') {
    if (def.size) errs.push({ type: 'FieldValueForbidden', field: `${path}.default`, detail: "may not be specified when `type` is 'Pod'" });
    if (defReq.size) errs.push({ type: 'FieldValueForbidden', field: `${path}.defaultRequest`, detail: "may not be specified when `type` is 'Pod'" });
  }
  if (item.type === 'PersistentVolumeClaim' && !min.has('storage') && !max.has('storage')) {
    errs.push({ type: 'FieldValueRequired', field: `${path}.limits`, detail: 'either minimum or maximum storage value is required, but neither was provided' });
  }
  const keys = new Set([...max.keys(), ...min.keys(), ...def.keys(), ...defReq.keys(), ...ratio.keys()]);
  const bad = (field: string, q: Quantity, detail: string) => errs.push({ type: 'FieldValueInvalid', field, value: q.toString(), detail });
  for (const k of keys) {
    const [mn, mx, d, dr, r] = [min.get(k), max.get(k), def.get(k), defReq.get(k), ratio.get(k)];
    if (mn && mx && mn.cmp(mx) > 0) bad(`${path}.min[${k}]`, mn, `min value ${mn} is greater than max value ${mx}`);
    if (dr && mn && mn.cmp(dr) > 0) bad(`${path}.defaultRequest[${k}]`, dr, `min value ${mn} is greater than default request value ${dr}`);
    if (dr && mx && dr.cmp(mx) > 0) bad(`${path}.defaultRequest[${k}]`, dr, `default request value ${dr} is greater than max value ${mx}`);
    if (dr && d && dr.cmp(d) > 0) bad(`${path}.defaultRequest[${k}]`, dr, `default request value ${dr} is greater than default limit value ${d}`);
    if (d && mn && mn.cmp(d) > 0) bad(`${path}.default[${k}]`, mn, `min value ${mn} is greater than default value ${d}`);
    if (d && mx && d.cmp(mx) > 0) bad(`${path}.default[${k}]`, mx, `default value ${d} is greater than max value ${mx}`);
    if (r && r.cmp(Quantity.fromInt(1)) < 0) bad(`${path}.maxLimitRequestRatio[${k}]`, r, `ratio ${r} is less than 1`);
    if (r && mn && mx) {
      const limit = Number(mx.milliValue()) / Number(mn.milliValue());
      const rv = Number(r.milliValue()) / 1000;
      if (rv > limit) bad(`${path}.maxLimitRequestRatio[${k}]`, r, `ratio ${r} is greater than max/min = ${limit.toFixed(6)}`);
    }
  }
  return errs;
}

/** ValidateLimitRange's spec rules. */
export function validateLimitRange(spec: Record<string, unknown>): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  const limits = Array.isArray(spec.limits) ? spec.limits : [];
  limits.forEach((it, i) => {
    const item = asMap(it);
    const path = `spec.limits[${i}]`;
    const type = String(item.type ?? '');
    if (seen.has(type)) errs.push({ type: 'FieldValueDuplicate', field: `${path}.type`, value: type, detail: '' });
    seen.add(type);
    errs.push(...validateItem(item, path));
  });
  return errs;
}

/**
 * SetDefaults_LimitRangeItem, for items of type Container: a resource with a max and no default
 * limit gets the max as its default limit; one with a default limit and no default request gets
 * the default limit as its default request; one with a min and still no default request gets
 * the min. Values are copied as written.
 */
export function defaultLimitRange(lr: KubeObject): void {
  const limits = Array.isArray(asMap(lr.spec).limits) ? (asMap(lr.spec).limits as unknown[]) : [];
  for (const it of limits) {
    if (!it || typeof it !== 'object' || Array.isArray(it)) continue;
    const item = it as Record<string, unknown>;
    if (item.type !== 'Container') continue;
    const def: Record<string, unknown> = { ...asMap(item.default) };
    const defReq: Record<string, unknown> = { ...asMap(item.defaultRequest) };
    for (const [k, v] of Object.entries(asMap(item.max))) if (!(k in def)) def[k] = v;
    for (const [k, v] of Object.entries(def)) if (!(k in defReq)) defReq[k] = v;
    for (const [k, v] of Object.entries(asMap(item.min))) if (!(k in defReq)) defReq[k] = v;
    if (Object.keys(def).length > 0) item.default = def;
    if (Object.keys(defReq).length > 0) item.defaultRequest = defReq;
  }
}

/** The LimitRange strategy. */
export const limitRangeStrategy: Strategy = {
  prepareForCreate: (lr) => defaultLimitRange(lr),
  prepareForUpdate: (lr) => defaultLimitRange(lr),
  validate: (lr) => validateLimitRange(asMap(lr.spec)),
  validateUpdate: (lr) => validateLimitRange(asMap(lr.spec)),
};
