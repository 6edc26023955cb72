/**
 * The RBAC authorization mode (plugin/pkg/auth/authorizer/rbac): allows a request when a rule
 * of a role bound to the user, or to one of its groups, allows it. ClusterRoleBindings apply
 * everywhere; a RoleBinding applies in its own namespace only, whether it grants a Role of
 * that namespace or a ClusterRole. Otherwise it has no opinion (and the union denies).
 */
import type { AuthorizationAttributes, AuthorizationDecision, Authorizer } from './authorizer.port.js';
import type { RbacPolicy } from './rbac.policy.js';
import { ruleAllows } from './rbac.rules.js';

/** The RBAC authorizer over an in-memory policy. */
export class RBACAuthorizer implements Authorizer {
  constructor(private readonly policy: RbacPolicy) {}

  authorize(a: AuthorizationAttributes): AuthorizationDecision {
    const namespace = a.isResourceRequest ? a.namespace : '';
    for (const b of this.policy.bindingsFor(a.user, namespace)) {
      const rules = this.policy.roleRules(b.roleKind, b.roleName, b.namespace);
      if (rules?.some((r) => ruleAllows(a, r))) return { decision: 'Allow' };
    }
    // kube-apiserver's RBAC gives no reason, so the Forbidden message ends at the request.
    return { decision: 'NoOpinion' };
  }
}
