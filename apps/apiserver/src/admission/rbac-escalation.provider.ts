/**
 * RBAC privilege escalation prevention (kube's policy-based RBAC storage): creating or changing
 * a Role or ClusterRole needs the permissions it grants or the `escalate` verb on it; creating
 * or changing a binding needs the permissions of the role it names or the `bind` verb on that
 * role. system:masters is exempt. It runs whatever the authorization mode, as in kube-apiserver,
 * as the last validating step of the chain; an update that leaves the rules (roles) or roleRef
 * and subjects (bindings) as they were is not checked again.
 */
import { Inject, Injectable } from '@nestjs/common';
import { Errors } from '@app/apimachinery';
import { PRIVILEGED_GROUP, type UserInfo } from '@app/auth';
import { AUTHORIZER, escalationMessage, uncoveredRules, type Authorizer, type PolicyRule } from '@app/authz';
import type { Admission, AdmissionAttributes } from '@app/registry';
import { RbacPolicyWatcher } from '../pipeline/rbac-policy.watcher.js';
import { AdmissionPlugin } from './admission.plugin.js';

const GROUP = 'rbac.authorization.k8s.io';
const ROLE_RESOURCES: Record<string, string> = { Role: 'roles', ClusterRole: 'clusterroles' };

/** The escalation check, after every other admission plugin. */
@AdmissionPlugin({ name: 'RBACEscalationPrevention', order: 10_000, required: true })
@Injectable()
export class RbacEscalationPlugin implements Admission {
  constructor(
    @Inject(AUTHORIZER) private readonly authorizer: Authorizer,
    private readonly rbac: RbacPolicyWatcher,
  ) {}

  async admit(): Promise<void> {}

  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.decl.group !== GROUP || a.subresource !== '' || (a.operation !== 'CREATE' && a.operation !== 'UPDATE') || !a.object) return;
    const user = a.ctx.user;
    if (user.groups.includes(PRIVILEGED_GROUP)) return;
    const obj = a.object;
    const old = a.oldObject;
    const same = (f: string) => old !== undefined && JSON.stringify(old[f] ?? null) === JSON.stringify(obj[f] ?? null);
    const gr = { group: GROUP, resource: a.decl.plural };
    const name = obj.metadata.name ?? a.name;
    if (a.decl.kind === 'Role' || a.decl.kind === 'ClusterRole') {
      if (same('rules')) return;
      if (await this.allowed(user, 'escalate', a.decl.plural, a.namespace, name)) return;
      const missing = uncoveredRules(this.rbac.policy.rulesFor(user, a.namespace), (obj.rules as PolicyRule[] | undefined) ?? []);
      if (missing.length > 0) throw Errors.forbidden(gr, name, escalationMessage(user, missing));
      return;
    }
    if (same('roleRef') && same('subjects')) return;
    const ref = (obj.roleRef ?? {}) as { kind?: string; name?: string };
    const resource = ROLE_RESOURCES[ref.kind ?? ''];
    if (!resource) return;
    if (await this.allowed(user, 'bind', resource, a.namespace, ref.name ?? '')) return;
    const rules = this.rbac.policy.roleRules(ref.kind ?? '', ref.name ?? '', a.namespace);
    if (rules === undefined) {
      // GetRoleReferenceRules answers with the role lister's NotFound.
      throw Errors.notFound({ group: GROUP, resource: ref.kind === 'Role' ? 'role' : 'clusterrole' }, ref.name ?? '');
    }
    const missing = uncoveredRules(this.rbac.policy.rulesFor(user, a.namespace), rules);
    if (missing.length > 0) throw Errors.forbidden(gr, name, escalationMessage(user, missing));
  }

  private async allowed(user: UserInfo, verb: string, resource: string, namespace: string, name: string): Promise<boolean> {
    const d = await this.authorizer.authorize({
      user,
      verb,
      isResourceRequest: true,
      path: '',
      apiGroup: GROUP,
      apiVersion: 'v1',
      resource,
      subresource: '',
      namespace,
      name,
    });
    return d.decision === 'Allow';
  }
}
