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

// The matchers run for every rule of every request: plain loops, no closures, no strings built
// unless a subresource is asked for.

/** Whether `list` holds `*` or `value`. */
function listMatches(list: readonly string[] | undefined, value: string): boolean {
  if (!list) return false;
  for (let i = 0; i < list.length; i++) {
    const v = list[i];
    if (v === RBAC_ALL || v === value) return true;
  }
  return false;
}

/** VerbMatches. */
export function verbMatches(rule: PolicyRule, verb: string): boolean {
  return listMatches(rule.verbs, verb);
}

/** APIGroupMatches. */
export function apiGroupMatches(rule: PolicyRule, group: string): boolean {
  return listMatches(rule.apiGroups, group);
}

/** ResourceMatches: `resource`, `resource/subresource`, `*`, or `*\/subresource`. */
export function resourceMatches(rule: PolicyRule, resource: string, subresource: string): boolean {
  const list = rule.resources;
  if (!list) return false;
  if (subresource === '') return listMatches(list, resource);
  const combined = `${resource}/${subresource}`;
  const anyOf = `${RBAC_ALL}/${subresource}`;
  for (let i = 0; i < list.length; i++) {
    const r = list[i];
    if (r === RBAC_ALL || r === combined || r === anyOf) return true;
  }
  return false;
}

/** ResourceNameMatches: an empty list allows every name; otherwise the request must name one of them. */
export function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  const names = rule.resourceNames;
  return !names || names.length === 0 || names.includes(name);
}

/** NonResourceURLMatches: exact, `*`, or a prefix ending in `*`. */
export function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  const list = rule.nonResourceURLs;
  if (!list) return false;
  for (let i = 0; i < list.length; i++) {
    const u = list[i]!;
    if (u === RBAC_ALL || u === path) return true;
    if (u.endsWith(RBAC_ALL) && path.length >= u.length - 1 && path.startsWith(u.slice(0, -1))) return true;
  }
  return false;
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
