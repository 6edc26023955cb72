/**
 * The RBAC authorization mode (plugin/pkg/auth/authorizer/rbac): allows a request when a rule
 * of a role bound to the user, or to one of its groups, allows it. ClusterRoleBindings apply
 * everywhere; a RoleBinding applies in its own namespace only, whether it grants a Role of
 * that namespace or a ClusterRole. Otherwise it has no opinion (and the union denies).
 */
import type { AuthorizationAttributes, AuthorizationDecision, Authorizer } from './authorizer.port.js';
import type { RbacPolicy, SubjectGrants } from './rbac.policy.js';
import { ruleAllows, type PolicyRule } from './rbac.rules.js';

// kube-apiserver's RBAC gives no reason for no opinion, so the Forbidden message ends at the request.
const NO_OPINION: AuthorizationDecision = Object.freeze({ decision: 'NoOpinion' });

/**
 * The allow decisions by reason, made once: an allowed request returns a shared frozen object
 * naming the binding that allowed it, and allocates nothing.
 */
const allowDecisions = new Map<string, AuthorizationDecision>();
function allowBy(reason: string): AuthorizationDecision {
  let d = allowDecisions.get(reason);
  if (!d) {
    if (allowDecisions.size >= 10_000) allowDecisions.clear();
    allowDecisions.set(reason, (d = Object.freeze(reason ? { decision: 'Allow', reason } : { decision: 'Allow' })));
  }
  return d;
}

/** The index of the first of `rules` that allows `a`, or -1. */
function firstAllowing(a: AuthorizationAttributes, rules: readonly PolicyRule[] | undefined): number {
  if (rules === undefined) return -1;
  for (let i = 0; i < rules.length; i++) if (ruleAllows(a, rules[i]!)) return i;
  return -1;
}

/** The reason of the grant of one subject that allows `a`, or undefined; `namespace` '' looks at cluster-wide grants only. */
function allowingReason(g: SubjectGrants, a: AuthorizationAttributes, namespace: string): string | undefined {
  let i = firstAllowing(a, g.cluster);
  if (i >= 0) return g.clusterReasons[i] ?? '';
  if (namespace === '') return undefined;
  i = firstAllowing(a, g.byNamespace.get(namespace));
  return i >= 0 ? (g.reasonsByNamespace.get(namespace)?.[i] ?? '') : undefined;
}

/**
 * The RBAC authorizer over an in-memory policy: looks up the compiled grants of the user name
 * and of each group (RbacPolicy.grantsOfUser / grantsOfGroup), never the list of bindings.
 * Non-resource requests are matched against cluster-wide grants only, as in Kubernetes.
 */
export class RBACAuthorizer implements Authorizer {
  constructor(private readonly policy: RbacPolicy) {}

  authorize(a: AuthorizationAttributes): AuthorizationDecision {
    const namespace = a.isResourceRequest ? a.namespace : '';
    let reason = allowingReason(this.policy.grantsOfUser(a.user.username), a, namespace);
    const groups = a.user.groups;
    for (let i = 0; reason === undefined && i < groups.length; i++) reason = allowingReason(this.policy.grantsOfGroup(groups[i]!), a, namespace);
    return reason === undefined ? NO_OPINION : allowBy(reason);
  }
}
