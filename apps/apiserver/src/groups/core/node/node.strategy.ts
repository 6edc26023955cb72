/**
 * Node behaviour (pkg/registry/core/node strategy.go, pkg/apis/core/validation ValidateNode):
 * status may be set on create (a node agent registers with it) and changes only through
 * /status afterwards; taints are qualified keys with label values, a known effect and unique
 * by key and effect; podCIDRs are CIDRs, at most two, and neither they nor providerID change
 * once set.
 */
import { isQualifiedName, isValidLabelValue, type FieldError, type KubeObject } from '@app/apimachinery';
import { STATUS_STRATEGY, type Strategy, type SubresourceStrategy } from '@app/registry';
import { isIP } from 'node:net';
import { asMap } from '../core.helpers.js';

/** The taint effects (core/v1 TaintEffect). */
export const TAINT_EFFECTS: readonly string[] = ['NoExecute', 'NoSchedule', 'PreferNoSchedule'];

/** The taint TaintNodesByCondition puts on a new node until it reports Ready. */
export const NOT_READY_TAINT = { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' } as const;

/** validateNodeTaints. */
export function validateTaints(taints: unknown, field: string): FieldError[] {
  if (!Array.isArray(taints)) return [];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  taints.forEach((t: Record<string, unknown>, i) => {
    const p = `${field}[${i}]`;
    const key = typeof t.key === 'string' ? t.key : '';
    for (const m of isQualifiedName(key)) errs.push({ type: 'FieldValueInvalid', field: `${p}.key`, value: key, detail: m });
    if (typeof t.value === 'string')
      for (const m of isValidLabelValue(t.value)) errs.push({ type: 'FieldValueInvalid', field: `${p}.value`, value: t.value, detail: m });
    const effect = t.effect;
    if (effect === undefined || effect === '') errs.push({ type: 'FieldValueRequired', field: `${p}.effect`, detail: '' });
    else if (typeof effect === 'string' && !TAINT_EFFECTS.includes(effect)) {
      errs.push({
        type: 'FieldValueNotSupported',
        field: `${p}.effect`,
        value: effect,
        detail: `supported values: ${TAINT_EFFECTS.map((e) => `"${e}"`).join(', ')}`,
      });
    }
    const id = `${key}:${String(effect)}`;
    if (seen.has(id)) errs.push({ type: 'FieldValueDuplicate', field: p, value: t, detail: 'taints must be unique by key and effect pair' });
    seen.add(id);
  });
  return errs;
}

function isCidr(s: string): boolean {
  const slash = s.indexOf('/');
  if (slash < 0) return false;
  const ip = s.slice(0, slash);
  const bits = s.slice(slash + 1);
  const v = isIP(ip);
  return v !== 0 && /^\d+$/.test(bits) && Number(bits) <= (v === 4 ? 32 : 128);
}

/** ValidateNode (spec part). */
export function validateNode(node: KubeObject): FieldError[] {
  const spec = asMap(node.spec);
  const errs = validateTaints(spec.taints, 'spec.taints');
  const cidrs = Array.isArray(spec.podCIDRs) ? (spec.podCIDRs as string[]) : [];
  cidrs.forEach((c, i) => {
    if (!isCidr(String(c))) errs.push({ type: 'FieldValueInvalid', field: `spec.podCIDRs[${i}]`, value: c, detail: 'must be a valid CIDR' });
  });
  if (cidrs.length > 2)
    errs.push({ type: 'FieldValueInvalid', field: 'spec.podCIDRs', value: cidrs, detail: 'may specify no more than one CIDR for each IP family' });
  if (cidrs.length === 2 && isIP(cidrs[0]!.split('/')[0]!) === isIP(cidrs[1]!.split('/')[0]!)) {
    errs.push({ type: 'FieldValueInvalid', field: 'spec.podCIDRs', value: cidrs, detail: 'may specify no more than one CIDR for each IP family' });
  }
  if (typeof spec.podCIDR === 'string' && spec.podCIDR !== '' && !isCidr(spec.podCIDR)) {
    errs.push({ type: 'FieldValueInvalid', field: 'spec.podCIDR', value: spec.podCIDR, detail: 'must be a valid CIDR' });
  }
  return errs;
}

/** ValidateNodeUpdate: podCIDRs and providerID may only go from empty to set. */
export function validateNodeUpdate(node: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateNode(node);
  const spec = asMap(node.spec);
  const oldSpec = asMap(old.spec);
  const oldCidrs = Array.isArray(oldSpec.podCIDRs) ? (oldSpec.podCIDRs as string[]) : [];
  if (oldCidrs.length > 0 && JSON.stringify(oldCidrs) !== JSON.stringify(spec.podCIDRs ?? [])) {
    errs.push({ type: 'FieldValueForbidden', field: 'spec.podCIDRs', detail: 'node updates may not change podCIDR except from "" to valid' });
  }
  if (oldSpec.providerID && oldSpec.providerID !== spec.providerID) {
    errs.push({ type: 'FieldValueForbidden', field: 'spec.providerID', detail: 'node updates may only set providerID except from "" to valid' });
  }
  return errs;
}

/** podCIDR mirrors the first of podCIDRs (the internal type has only podCIDRs). */
function syncPodCidr(node: KubeObject): void {
  const spec = asMap(node.spec);
  if (Array.isArray(spec.podCIDRs) && spec.podCIDRs.length > 0) spec.podCIDR = spec.podCIDRs[0];
  else if (typeof spec.podCIDR === 'string' && spec.podCIDR !== '') spec.podCIDRs = [spec.podCIDR];
}

/** The Node strategy. */
export const nodeStrategy: Strategy = {
  prepareForCreate: (node) => syncPodCidr(node),
  prepareForUpdate(node, old) {
    if (old.status === undefined) delete node.status;
    else node.status = structuredClone(old.status);
    syncPodCidr(node);
  },
  validate: validateNode,
  validateUpdate: validateNodeUpdate,
};

/** /status: status, labels and annotations change; spec stays. */
export const nodeStatusStrategy: SubresourceStrategy = {
  prepareForUpdate: STATUS_STRATEGY.prepareForUpdate,
  validateUpdate: (node, old) => validateNodeUpdate(node, old),
};

/**
 * kubectl's STATUS cell: Ready when the Ready condition is True, NotReady when it is anything
 * else (False or Unknown), Unknown when there is none; then SchedulingDisabled.
 */
export function nodeStatusCell(node: KubeObject): string {
  const conds = asMap(node.status).conditions;
  const ready = Array.isArray(conds) ? (conds as Array<Record<string, unknown>>).find((c) => c.type === 'Ready') : undefined;
  const parts = [ready === undefined ? 'Unknown' : ready.status === 'True' ? 'Ready' : 'NotReady'];
  if (asMap(node.spec).unschedulable === true) parts.push('SchedulingDisabled');
  return parts.join(',');
}

/** kubectl's ROLES cell: node-role.kubernetes.io/<role> label keys and the kubernetes.io/role label value. */
export function nodeRolesCell(node: KubeObject): string {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(node.metadata.labels ?? {})) {
    if (k.startsWith('node-role.kubernetes.io/') && k.length > 'node-role.kubernetes.io/'.length) roles.add(k.slice('node-role.kubernetes.io/'.length));
    else if (k === 'kubernetes.io/role' && v !== '') roles.add(String(v));
  }
  return roles.size === 0 ? '<none>' : [...roles].sort().join(',');
}

/** The first address of `type` in status.addresses, or <none>. */
export function nodeAddressCell(node: KubeObject, type: string): string {
  const addrs = asMap(node.status).addresses;
  const a = Array.isArray(addrs) ? (addrs as Array<Record<string, unknown>>).find((x) => x.type === type) : undefined;
  return typeof a?.address === 'string' ? a.address : '<none>';
}
