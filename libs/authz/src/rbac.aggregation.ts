/**
 * ClusterRole aggregation (pkg/controller/clusterroleaggregation): a ClusterRole with an
 * aggregationRule gets, in place of its rules, the rules of every other ClusterRole matching
 * one of its selectors, selector by selector, roles by name, each distinct rule once.
 */
import { labelSelectorFromStruct, type LabelSelectorStruct } from '@app/apimachinery';
import type { RbacObject } from './rbac.policy.js';
import type { PolicyRule } from './rbac.rules.js';

const FIELDS = ['verbs', 'apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'] as const;

/** A rule's identity for comparison: absent and empty lists are the same (Semantic.DeepEqual). */
export function ruleKey(r: PolicyRule): string {
  return JSON.stringify(FIELDS.map((f) => r[f] ?? []));
}

/** Whether two rule lists are equal, element by element. */
export function sameRules(a: readonly PolicyRule[] | null | undefined, b: readonly PolicyRule[] | null | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  return x.length === y.length && x.every((r, i) => ruleKey(r) === ruleKey(y[i]));
}

/** The rules an aggregated ClusterRole should have; undefined when `role` has no aggregationRule. */
export function aggregatedRules(role: RbacObject, clusterRoles: readonly RbacObject[]): PolicyRule[] | undefined {
  const agg = role.aggregationRule as { clusterRoleSelectors?: LabelSelectorStruct[] } | null | undefined;
  if (!agg) return undefined;
  const out: PolicyRule[] = [];
  const seen = new Set<string>();
  const byName = [...clusterRoles].sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
  for (const sel of agg.clusterRoleSelectors ?? []) {
    let selector;
    try {
      selector = labelSelectorFromStruct(sel);
    } catch {
      continue;
    }
    for (const other of byName) {
      if (other.metadata.name === role.metadata.name || !selector.matches(other.metadata.labels ?? {})) continue;
      for (const r of other.rules ?? []) {
        const k = ruleKey(r);
        if (seen.has(k)) continue;
        seen.add(k);
        out.push(r);
      }
    }
  }
  return out;
}
