/**
 * How one RBAC PolicyRule matches a request (plugin/pkg/auth/authorizer/rbac RuleAllows):
 * verbs, apiGroups, resources (`res/sub` names a subresource, `*` every resource, `*\/sub` a
 * subresource of every resource) and resourceNames for resource requests; verbs and
 * nonResourceURLs (a trailing `*` matches any suffix) for the rest.
 */
import type { AuthorizationAttributes } from './authorizer.port.js';

/** rbac/v1 PolicyRule. */
export interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

/** The wildcard of every list of a rule (rbacv1.VerbAll, APIGroupAll, ResourceAll, NonResourceAll). */
export const RBAC_ALL = '*';

/** VerbMatches. */
export function verbMatches(rule: PolicyRule, verb: string): boolean {
  return (rule.verbs ?? []).some((v) => v === RBAC_ALL || v === verb);
}

/** APIGroupMatches. */
export function apiGroupMatches(rule: PolicyRule, group: string): boolean {
  return (rule.apiGroups ?? []).some((g) => g === RBAC_ALL || g === group);
}

/** ResourceMatches: `resource`, `resource/subresource`, `*`, or `*\/subresource`. */
export function resourceMatches(rule: PolicyRule, resource: string, subresource: string): boolean {
  const combined = subresource ? `${resource}/${subresource}` : resource;
  return (rule.resources ?? []).some((r) => {
    if (r === RBAC_ALL || r === combined) return true;
    return subresource !== '' && r === `${RBAC_ALL}/${subresource}`;
  });
}

/** ResourceNameMatches: an empty list allows every name; otherwise the request must name one of them. */
export function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(name);
}

/** NonResourceURLMatches: exact, `*`, or a prefix ending in `*`. */
export function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  return (rule.nonResourceURLs ?? []).some((u) => u === RBAC_ALL || u === path || (u.endsWith(RBAC_ALL) && path.startsWith(u.slice(0, -1))));
}

/** RuleAllows: whether `rule` allows the request. */
export function ruleAllows(a: AuthorizationAttributes, rule: PolicyRule): boolean {
  if (a.isResourceRequest) {
    return (
      verbMatches(rule, a.verb) && apiGroupMatches(rule, a.apiGroup) && resourceMatches(rule, a.resource, a.subresource) && resourceNameMatches(rule, a.name)
    );
  }
  return verbMatches(rule, a.verb) && nonResourceURLMatches(rule, a.path);
}
