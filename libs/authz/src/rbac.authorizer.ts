/**
 * The RBAC authorization mode (plugin/pkg/auth/authorizer/rbac): allows a request when a rule
 * of a role bound to the user, or to one of its groups, allows it. ClusterRoleBindings apply
 * everywhere; a RoleBinding applies in its own namespace only, whether it grants a Role of
 * that namespace or a ClusterRole. Otherwise it has no opinion (and the union denies).
 */
import type { AuthorizationAttributes, AuthorizationDecision, Authorizer } from './authorizer.port.js';
import type { RbacPolicy, SubjectGrants } from './rbac.policy.js';
import { ruleAllows, type PolicyRule } from './rbac.rules.js';

const ALLOW: AuthorizationDecision = Object.freeze({ decision: 'Allow' });
// kube-apiserver's RBAC gives no reason, so the Forbidden message ends at the request.
const NO_OPINION: AuthorizationDecision = Object.freeze({ decision: 'NoOpinion' });

function anyAllows(a: AuthorizationAttributes, rules: readonly PolicyRule[] | undefined): boolean {
  if (rules === undefined) return false;
  for (let i = 0; i < rules.length; i++) if (ruleAllows(a, rules[i]!)) return true;
  return false;
}

/** Whether the grants of one subject allow `a`; `namespace` '' looks at cluster-wide grants only. */
function grantsAllow(g: SubjectGrants, a: AuthorizationAttributes, namespace: string): boolean {
  return anyAllows(a, g.cluster) || (namespace !== '' && anyAllows(a, g.byNamespace.get(namespace)));
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
    if (grantsAllow(this.policy.grantsOfUser(a.user.username), a, namespace)) return ALLOW;
    const groups = a.user.groups;
    for (let i = 0; i < groups.length; i++) if (grantsAllow(this.policy.grantsOfGroup(groups[i]!), a, namespace)) return ALLOW;
    return NO_OPINION;
  }
}
