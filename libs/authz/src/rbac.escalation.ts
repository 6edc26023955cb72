/**
 * Privilege escalation prevention (pkg/registry/rbac/validation): a user may only grant, in a
 * Role, a ClusterRole or through a binding, rules it already holds, unless it may `escalate`
 * (roles) or `bind` (bindings). `uncoveredRules` is kube's Covers: the requested rules broken
 * down to one verb, group, resource and name each, minus those some held rule covers.
 */
import type { UserInfo } from '@app/auth';
import { RBAC_ALL, type PolicyRule } from './rbac.rules.js';

/** BreakdownRule: one rule per group, resource, verb and (when listed) name; per URL and verb for non-resource rules. */
export function breakdownRule(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  const verbs = rule.verbs ?? [];
  for (const group of rule.apiGroups ?? []) {
    for (const resource of rule.resources ?? []) {
      for (const verb of verbs) {
        const names = rule.resourceNames ?? [];
        if (names.length === 0) out.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
        else for (const name of names) out.push({ apiGroups: [group], resources: [resource], resourceNames: [name], verbs: [verb] });
      }
    }
  }
  for (const url of rule.nonResourceURLs ?? []) for (const verb of verbs) out.push({ nonResourceURLs: [url], verbs: [verb] });
  return out;
}

const hasAll = (owner: readonly string[], wanted: readonly string[]): boolean => owner.includes(RBAC_ALL) || wanted.every((w) => owner.includes(w));

function resourcesCovered(owner: readonly string[], wanted: readonly string[]): boolean {
  if (owner.includes(RBAC_ALL)) return true;
  return wanted.every((w) => {
    if (owner.includes(w)) return true;
    const slash = w.indexOf('/');
    return slash >= 0 && owner.includes(`${RBAC_ALL}/${w.slice(slash + 1)}`);
  });
}

function urlsCovered(owner: readonly string[], wanted: readonly string[]): boolean {
  return wanted.every((w) => owner.some((o) => o === RBAC_ALL || o === w || (o.endsWith(RBAC_ALL) && w.startsWith(o.slice(0, -1)))));
}

/** ruleCovers: whether `owner` allows everything `sub` allows. */
export function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const ownerNames = owner.resourceNames ?? [];
  return (
    hasAll(owner.verbs ?? [], sub.verbs ?? []) &&
    hasAll(owner.apiGroups ?? [], sub.apiGroups ?? []) &&
    resourcesCovered(owner.resources ?? [], sub.resources ?? []) &&
    urlsCovered(owner.nonResourceURLs ?? [], sub.nonResourceURLs ?? []) &&
    // A rule limited to names never covers one for every name.
    (ownerNames.length === 0 || ((sub.resourceNames ?? []).length > 0 && (sub.resourceNames ?? []).every((n) => ownerNames.includes(n))))
  );
}

/** Covers: the broken-down parts of `requested` that no rule of `held` covers. */
export function uncoveredRules(held: readonly PolicyRule[], requested: readonly PolicyRule[]): PolicyRule[] {
  return requested.flatMap(breakdownRule).filter((part) => !held.some((h) => ruleCovers(h, part)));
}

const goQuote = (xs: readonly string[]): string => `[${xs.map((x) => JSON.stringify(x)).join(' ')}]`;

/** PolicyRule.CompactString: `{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}`. */
export function compactString(r: PolicyRule): string {
  const parts: string[] = [];
  if (r.apiGroups?.length) parts.push(`APIGroups:${goQuote(r.apiGroups)}`);
  if (r.resources?.length) parts.push(`Resources:${goQuote(r.resources)}`);
  if (r.nonResourceURLs?.length) parts.push(`NonResourceURLs:${goQuote(r.nonResourceURLs)}`);
  if (r.resourceNames?.length) parts.push(`ResourceNames:${goQuote(r.resourceNames)}`);
  if (r.verbs?.length) parts.push(`Verbs:${goQuote(r.verbs)}`);
  return `{${parts.join(', ')}}`;
}

/** CompactRules: broken-down rules of one group and resource (without names) merged into one with all their verbs. */
export function compactRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  const simple = new Map<string, PolicyRule>();
  for (const r of rules) {
    const isSimple = r.apiGroups?.length === 1 && r.resources?.length === 1 && !r.resourceNames?.length && !r.nonResourceURLs?.length;
    if (!isSimple) {
      out.push(r);
      continue;
    }
    const key = JSON.stringify([r.apiGroups![0], r.resources![0]]);
    const merged = simple.get(key);
    if (merged) merged.verbs = [...merged.verbs!, ...(r.verbs ?? [])];
    else {
      const copy = { apiGroups: [...r.apiGroups!], resources: [...r.resources!], verbs: [...(r.verbs ?? [])] };
      simple.set(key, copy);
      out.push(copy);
    }
  }
  return out;
}

/** ConfirmNoEscalation's message for the rules `user` does not hold (one line per compacted rule, sorted). */
export function escalationMessage(user: UserInfo, missing: readonly PolicyRule[]): string {
  const lines = [...new Set(compactRules(missing).map(compactString))].sort();
  return `user ${JSON.stringify(user.username)} (groups=${goQuote(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${lines.join('\n')}`;
}
