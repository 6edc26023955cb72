/**
 * What a user may do in a namespace, as rules (Kubernetes' authorizer.RuleResolver), for
 * SelfSubjectRulesReview. Each `--authorization-mode` that can list rules answers for itself;
 * the union concatenates them as kube-apiserver's union rule resolver does. The system:masters
 * authorizer is no rule resolver (kube-apiserver lists none for it either).
 */
import type { UserInfo } from '@app/auth';
import { nodeIdentity } from './node.authorizer.js';
import type { RbacPolicy } from './rbac.policy.js';
import { RBAC_ALL, type PolicyRule } from './rbac.rules.js';

/** authorization/v1 ResourceRule. */
export interface ResourceRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
}

/** authorization/v1 NonResourceRule. */
export interface NonResourceRule {
  verbs: string[];
  nonResourceURLs?: string[];
}

/** A resolver's answer: the rules, whether they may be incomplete, and evaluation errors. */
export interface ResolvedRules {
  resourceRules: ResourceRule[];
  nonResourceRules: NonResourceRule[];
  incomplete: boolean;
  errors: string[];
}

/** Lists the rules one mode grants `user` in `namespace`. */
export interface RuleResolver {
  rulesFor(user: UserInfo, namespace: string): ResolvedRules;
}

const some = (v: string[] | undefined): string[] | undefined => (v && v.length ? [...v] : undefined);

/** Splits policy rules into resource and non-resource rules as kube's RBAC RulesFor does. */
export function splitPolicyRules(rules: readonly PolicyRule[]): Pick<ResolvedRules, 'resourceRules' | 'nonResourceRules'> {
  const resourceRules: ResourceRule[] = [];
  const nonResourceRules: NonResourceRule[] = [];
  for (const r of rules) {
    if (r.resources?.length) {
      resourceRules.push({ verbs: [...(r.verbs ?? [])], apiGroups: some(r.apiGroups), resources: some(r.resources), resourceNames: some(r.resourceNames) });
    }
    if (r.nonResourceURLs?.length) nonResourceRules.push({ verbs: [...(r.verbs ?? [])], nonResourceURLs: [...r.nonResourceURLs] });
  }
  return { resourceRules, nonResourceRules };
}

/** The rules of the RBAC policy: cluster-wide bindings and those of `namespace`. */
export class RbacRuleResolver implements RuleResolver {
  constructor(private readonly policy: RbacPolicy) {}

  rulesFor(user: UserInfo, namespace: string): ResolvedRules {
    const errors: string[] = [];
    const rules: PolicyRule[] = [];
    for (const b of this.policy.bindingsFor(user, namespace)) {
      const r = this.policy.roleRules(b.roleKind, b.roleName, b.namespace);
      // kube's resolver reports a binding to a missing role as an error and goes on.
      if (!r) errors.push(`${b.roleKind.toLowerCase()}.rbac.authorization.k8s.io "${b.roleName}" not found`);
      else rules.push(...r);
    }
    return { ...splitPolicyRules(rules), incomplete: false, errors };
  }
}

/** AlwaysAllow: every verb on every resource and non-resource URL (as kube's alwaysAllowAuthorizer). */
export const ALWAYS_ALLOW_RULES: RuleResolver = {
  rulesFor: () => ({
    resourceRules: [{ verbs: [RBAC_ALL], apiGroups: [RBAC_ALL], resources: [RBAC_ALL] }],
    nonResourceRules: [{ verbs: [RBAC_ALL], nonResourceURLs: [RBAC_ALL] }],
    incomplete: false,
    errors: [],
  }),
};

/** AlwaysDeny: nothing, and complete. */
export const ALWAYS_DENY_RULES: RuleResolver = {
  rulesFor: () => ({ resourceRules: [], nonResourceRules: [], incomplete: false, errors: [] }),
};

/** Concatenates the answers of `resolvers` in order. */
export class RuleResolverUnion implements RuleResolver {
  constructor(private readonly resolvers: readonly RuleResolver[]) {}

  rulesFor(user: UserInfo, namespace: string): ResolvedRules {
    const out: ResolvedRules = { resourceRules: [], nonResourceRules: [], incomplete: false, errors: [] };
    for (const r of this.resolvers) {
      const a = r.rulesFor(user, namespace);
      out.resourceRules.push(...a.resourceRules);
      out.nonResourceRules.push(...a.nonResourceRules);
      out.incomplete ||= a.incomplete;
      out.errors.push(...a.errors);
    }
    return out;
  }
}

/**
 * The Node mode's rules: nothing for anyone but a node; a node's depend on its graph, so its
 * answer is incomplete, with kube's error.
 */
const NODE_RULES_RESOLVER: RuleResolver = {
  rulesFor: (user) =>
    nodeIdentity(user) === undefined
      ? { resourceRules: [], nonResourceRules: [], incomplete: false, errors: [] }
      : { resourceRules: [], nonResourceRules: [], incomplete: true, errors: ['node authorizer does not support user rule resolution'] },
};

/**
 * The rule resolver of an `--authorization-mode` list (the modes authorizerForModes accepts).
 * A mode without a resolver of its own makes the answer incomplete.
 */
export function ruleResolverForModes(modes: readonly string[], ctx: { rbac?: RbacPolicy; abac?: RuleResolver } = {}): RuleResolver {
  const INCOMPLETE: RuleResolver = { rulesFor: () => ({ resourceRules: [], nonResourceRules: [], incomplete: true, errors: [] }) };
  return new RuleResolverUnion(
    modes.map((m) => {
      if (m === 'AlwaysAllow') return ALWAYS_ALLOW_RULES;
      if (m === 'AlwaysDeny') return ALWAYS_DENY_RULES;
      if (m === 'RBAC' && ctx.rbac) return new RbacRuleResolver(ctx.rbac);
      if (m === 'ABAC' && ctx.abac) return ctx.abac;
      if (m === 'Node') return NODE_RULES_RESOLVER;
      return INCOMPLETE;
    }),
  );
}
