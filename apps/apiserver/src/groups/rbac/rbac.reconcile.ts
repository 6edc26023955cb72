/**
 * Reconciliation of the bootstrap policy at start (kube-apiserver's rbac/bootstrap-roles hook,
 * k8s.io/component-helpers auth/rbac/reconciliation): a bootstrap role or binding that already
 * exists gains what this version's policy has and it lacks, and loses nothing. Roles: the
 * missing rules (the policy's rules broken down to single verbs and resources that no existing
 * rule covers, appended), the missing aggregation selectors, labels and annotations. Bindings:
 * the missing subjects, labels and annotations; a binding whose roleRef differs is recreated as
 * the policy has it (a binding's roleRef cannot change), as kube does. An object annotated
 * `rbac.authorization.kubernetes.io/autoupdate: "false"` is the administrator's and is left
 * alone.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '@app/apimachinery';
import type { InitialReconcile } from '@app/registry';
import { uncoveredRules, type PolicyRule } from '@app/authz';

type Obj = Record<string, unknown>;
const asMap = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});

/** The annotation that opts an object out of reconciliation (value "false"). */
export const AUTOUPDATE_ANNOTATION = 'rbac.authorization.kubernetes.io/autoupdate';

function protectedObject(o: KubeObject): boolean {
  return (o.metadata.annotations as Record<string, string> | undefined)?.[AUTOUPDATE_ANNOTATION] === 'false';
}

/** Labels and annotations of `wanted` missing from `next`, added in place; whether any was. */
function mergeMeta(next: KubeObject, wanted: KubeObject): boolean {
  let changed = false;
  for (const field of ['labels', 'annotations'] as const) {
    const want = asMap(wanted.metadata[field]);
    const missing = Object.entries(want).filter(([k]) => !(k in asMap(next.metadata[field])));
    if (!missing.length) continue;
    next.metadata[field] = { ...asMap(next.metadata[field]), ...Object.fromEntries(missing) };
    changed = true;
  }
  return changed;
}

/** A bootstrap ClusterRole or Role brought up to `wanted`, or undefined when nothing is missing. */
export function reconcileRole(existing: KubeObject, wanted: KubeObject): InitialReconcile | undefined {
  if (protectedObject(existing)) return undefined;
  const next = structuredClone(existing);
  let changed = mergeMeta(next, wanted);
  const wantAgg = asMap(wanted.aggregationRule).clusterRoleSelectors;
  if (Array.isArray(wantAgg)) {
    const have = Array.isArray(asMap(existing.aggregationRule).clusterRoleSelectors) ? (asMap(existing.aggregationRule).clusterRoleSelectors as unknown[]) : [];
    const missing = wantAgg.filter((s) => !have.some((h) => isDeepStrictEqual(h, s)));
    if (missing.length) {
      next.aggregationRule = { ...asMap(existing.aggregationRule), clusterRoleSelectors: [...have, ...missing] };
      changed = true;
    }
  } else {
    // An aggregated role's rules are the aggregation controller's.
    const missing = uncoveredRules((existing.rules as PolicyRule[] | undefined) ?? [], (wanted.rules as PolicyRule[] | undefined) ?? []);
    if (missing.length) {
      next.rules = [...((existing.rules as PolicyRule[] | undefined) ?? []), ...missing];
      changed = true;
    }
  }
  return changed ? { update: next } : undefined;
}

/**
 * A bootstrap ClusterRoleBinding or RoleBinding brought up to `wanted`, or undefined when nothing
 * is missing; with another roleRef, `wanted` itself, recreated in its place.
 */
export function reconcileBinding(existing: KubeObject, wanted: KubeObject): InitialReconcile | undefined {
  if (protectedObject(existing)) return undefined;
  const have = asMap(existing.roleRef);
  const want = asMap(wanted.roleRef);
  if (have.kind !== want.kind || have.name !== want.name || (have.apiGroup ?? '') !== (want.apiGroup ?? 'rbac.authorization.k8s.io'))
    return { recreate: wanted };
  const next = structuredClone(existing);
  let changed = mergeMeta(next, wanted);
  const subjects = Array.isArray(existing.subjects) ? (existing.subjects as Obj[]) : [];
  const same = (a: Obj, b: Obj) => a.kind === b.kind && a.name === b.name && (a.namespace ?? '') === (b.namespace ?? '');
  const missing = (Array.isArray(wanted.subjects) ? (wanted.subjects as Obj[]) : []).filter((s) => !subjects.some((h) => same(h, s)));
  if (missing.length) {
    next.subjects = [...subjects, ...missing];
    changed = true;
  }
  return changed ? { update: next } : undefined;
}
