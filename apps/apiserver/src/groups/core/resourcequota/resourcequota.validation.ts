/**
 * ResourceQuota validation (pkg/apis/core/validation ValidateResourceQuota*, with the helpers of
 * pkg/apis/core/helper): resource names a quota may limit, non-negative quantities (whole
 * numbers for the object counts), scopes and scope selectors that fit the limited resources,
 * and scopes that never change after creation.
 */
import { isDeepStrictEqual } from 'node:util';
import { goSlice, goStruct, isQualifiedName, parseQuantity, type FieldError, type GoValue } from '@app/apimachinery';
import { asMap, mapsOf } from '../core.helpers.js';

/** Resource names Kubernetes knows (helper.IsStandardResourceName, without the hugepages prefix). */
const STANDARD_RESOURCES = new Set([
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'pods',
  'resourcequotas',
  'services',
  'replicationcontrollers',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
  'storage',
  'requests.storage',
  'services.nodeports',
  'services.loadbalancers',
]);

/** Resource names the quota system tracks (helper.IsStandardQuotaResourceName): all the standard ones but `storage`. */
const STANDARD_QUOTA_RESOURCES = new Set([...STANDARD_RESOURCES].filter((r) => r !== 'storage'));

/** Resources counted in whole units (helper.IsIntegerResourceName, without extended resources). */
const INTEGER_RESOURCES = new Set([
  'pods',
  'resourcequotas',
  'services',
  'replicationcontrollers',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
  'services.nodeports',
  'services.loadbalancers',
]);

/** The scopes a quota may name (helper.IsStandardResourceQuotaScope; VolumeAttributesClass is behind a gate that is off in 1.33). */
export const QUOTA_SCOPES: readonly string[] = ['Terminating', 'NotTerminating', 'BestEffort', 'NotBestEffort', 'PriorityClass', 'CrossNamespacePodAffinity'];

const POD_COMPUTE = new Set(['cpu', 'memory', 'limits.cpu', 'limits.memory', 'requests.cpu', 'requests.memory']);

const isHugePagesQuotaName = (n: string) => n.startsWith('hugepages-') || n.startsWith('requests.hugepages-');
const isStandardQuotaResource = (n: string) => STANDARD_QUOTA_RESOURCES.has(n) || isHugePagesQuotaName(n);

/** Whether a resource is native (unqualified, or under kubernetes.io/): helper.IsNativeResource. */
export function isNativeResource(name: string): boolean {
  return !name.includes('/') || name.includes('kubernetes.io/');
}

/** helper.IsExtendedResourceName: a qualified, non-native name without the requests. prefix. */
function isExtendedResourceName(name: string): boolean {
  if (isNativeResource(name) || name.startsWith('requests.')) return false;
  return isQualifiedName(`requests.${name}`).length === 0;
}

/** helper.IsResourceQuotaScopeValidForResource. */
function scopeFitsResource(scope: string, resource: string): boolean {
  switch (scope) {
    case 'Terminating':
    case 'NotTerminating':
    case 'NotBestEffort':
    case 'PriorityClass':
    case 'CrossNamespacePodAffinity':
      return resource === 'pods' || POD_COMPUTE.has(resource);
    case 'BestEffort':
      return resource === 'pods';
    default:
      return true;
  }
}

/** ValidateResourceQuotaResourceName. */
function validateResourceName(name: string, path: string): FieldError[] {
  const errs: FieldError[] = isQualifiedName(name).map((detail) => ({ type: 'FieldValueInvalid' as const, field: path, value: name, detail }));
  if (errs.length) return errs;
  if (!name.includes('/')) {
    if (!STANDARD_RESOURCES.has(name) && !isHugePagesQuotaName(name)) {
      return [{ type: 'FieldValueInvalid', field: path, value: name, detail: 'must be a standard resource type or fully qualified' }];
    }
    if (!isStandardQuotaResource(name)) return [{ type: 'FieldValueInvalid', field: path, value: name, detail: 'must be a standard resource for quota' }];
  }
  return [];
}

/** ValidateResourceQuantityValue: not negative, whole for the counted resources. */
function validateQuantity(name: string, raw: unknown, path: string): FieldError[] {
  let q;
  try {
    q = parseQuantity(String(raw));
  } catch {
    return [{ type: 'FieldValueInvalid', field: path, value: raw, detail: 'must be a valid resource quantity' }];
  }
  const errs: FieldError[] = [];
  if (q.nanos < 0n) errs.push({ type: 'FieldValueInvalid', field: path, value: q.toString(), detail: 'must be greater than or equal to 0' });
  if ((INTEGER_RESOURCES.has(name) || isExtendedResourceName(name)) && q.milliValue() % 1000n !== 0n) {
    errs.push({ type: 'FieldValueInvalid', field: path, value: q.toString(), detail: 'must be an integer' });
  }
  return errs;
}

/** Names and quantities of one resource list (spec.hard, status.hard, status.used). */
function validateResourceList(list: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(asMap(list)).sort(([a], [b]) => a.localeCompare(b))) {
    errs.push(...validateResourceName(k, `${path}[${k}]`), ...validateQuantity(k, v, `${path}[${k}]`));
  }
  return errs;
}

const CONFLICTING: ReadonlyArray<[string, string]> = [
  ['BestEffort', 'NotBestEffort'],
  ['Terminating', 'NotTerminating'],
];

/** The scopes as a field error prints them (the internal type's slice; nil when absent). */
const goScopes = (v: unknown): GoValue => goSlice(Array.isArray(v) ? v : undefined, '[]core.ResourceQuotaScope');

/** A scope selector as a field error prints it (`%#v` of the internal ScopeSelector). */
const goScopeSelector = (v: unknown): GoValue => {
  const exprs = mapsOf(asMap(v).matchExpressions).map((req) =>
    goStruct('core.ScopedResourceSelectorRequirement', [
      ['ScopeName', req.scopeName],
      ['Operator', req.operator],
      ['Values', goSlice(Array.isArray(req.values) ? req.values : undefined)],
    ]),
  );
  const list = Array.isArray(asMap(v).matchExpressions) ? exprs : undefined;
  return goStruct('core.ScopeSelector', [['MatchExpressions', goSlice(list, '[]core.ScopedResourceSelectorRequirement')]]);
};

/** validateResourceQuotaScopes. */
function validateScopes(spec: Record<string, unknown>): FieldError[] {
  const scopes = Array.isArray(spec.scopes) ? spec.scopes.map(String) : [];
  if (scopes.length === 0) return [];
  const hard = Object.keys(asMap(spec.hard)).sort();
  const errs: FieldError[] = [];
  const bad = (detail: string) => errs.push({ type: 'FieldValueInvalid', field: 'spec.scopes', value: goScopes(spec.scopes), detail });
  for (const scope of scopes) {
    if (!QUOTA_SCOPES.includes(scope)) bad('unsupported scope');
    for (const k of hard) if (isStandardQuotaResource(k) && !scopeFitsResource(scope, k)) bad('unsupported scope applied to resource');
  }
  for (const [a, b] of CONFLICTING) if (scopes.includes(a) && scopes.includes(b)) bad('conflicting scopes');
  return errs;
}

/** validateScopeSelector / validateScopedResourceSelectorRequirement. */
function validateScopeSelector(spec: Record<string, unknown>): FieldError[] {
  if (spec.scopeSelector === undefined || spec.scopeSelector === null) return [];
  const path = 'spec.scopeSelector.matchExpressions';
  const hard = Object.keys(asMap(spec.hard)).sort();
  const errs: FieldError[] = [];
  const names = new Set<string>();
  for (const req of mapsOf(asMap(spec.scopeSelector).matchExpressions)) {
    const scope = String(req.scopeName ?? '');
    const op = String(req.operator ?? '');
    const values = Array.isArray(req.values) ? req.values : [];
    if (!QUOTA_SCOPES.includes(scope)) errs.push({ type: 'FieldValueInvalid', field: `${path}.scopeName`, value: scope, detail: 'unsupported scope' });
    for (const k of hard) {
      if (isStandardQuotaResource(k) && !scopeFitsResource(scope, k)) {
        errs.push({ type: 'FieldValueInvalid', field: path, value: goScopeSelector(spec.scopeSelector), detail: 'unsupported scope applied to resource' });
      }
    }
    if (['BestEffort', 'NotBestEffort', 'Terminating', 'NotTerminating'].includes(scope) && op !== 'Exists') {
      errs.push({
        type: 'FieldValueInvalid',
        field: `${path}.operator`,
        value: op,
        detail:
          "must be 'Exist' only operator when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort and ResourceQuotaScopeNotBestEffort",
      });
    }
    if (op === 'In' || op === 'NotIn') {
      if (values.length === 0) {
        errs.push({
          type: 'FieldValueRequired',
          field: `${path}.values`,
          detail: "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
        });
      }
    } else if (op === 'Exists' || op === 'DoesNotExist') {
      if (values.length !== 0) {
        errs.push({
          type: 'FieldValueInvalid',
          field: `${path}.values`,
          value: goSlice(values),
          detail: "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
        });
      }
    } else errs.push({ type: 'FieldValueInvalid', field: `${path}.operator`, value: op, detail: 'not a valid selector operator' });
    names.add(scope);
  }
  for (const [a, b] of CONFLICTING) {
    if (names.has(a) && names.has(b)) errs.push({ type: 'FieldValueInvalid', field: path, value: goScopes(spec.scopes), detail: 'conflicting scopes' });
  }
  return errs;
}

/** ValidateResourceQuotaSpec. */
export function validateResourceQuotaSpec(spec: Record<string, unknown>): FieldError[] {
  return [...validateResourceList(spec.hard, 'spec.hard'), ...validateScopes(spec), ...validateScopeSelector(spec)];
}

/** ValidateResourceQuotaStatus. */
export function validateResourceQuotaStatus(status: Record<string, unknown>): FieldError[] {
  return [...validateResourceList(status.hard, 'status.hard'), ...validateResourceList(status.used, 'status.used')];
}

/** ValidateResourceQuotaUpdate's spec rules: the spec, and scopes that do not change (as a set). */
export function validateResourceQuotaUpdate(spec: Record<string, unknown>, oldSpec: Record<string, unknown>): FieldError[] {
  const errs = validateResourceQuotaSpec(spec);
  const set = (v: unknown) => [...new Set(Array.isArray(v) ? v.map(String) : [])].sort();
  if (!isDeepStrictEqual(set(spec.scopes), set(oldSpec.scopes))) {
    errs.push({ type: 'FieldValueInvalid', field: 'spec.scopes', value: goScopes(spec.scopes), detail: 'field is immutable' });
  }
  return errs;
}
