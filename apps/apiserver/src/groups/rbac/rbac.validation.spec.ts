import type { KubeObject } from '@app/apimachinery';
import { fieldErrorMessage } from '@app/apimachinery';
import { clusterRoleBindingStrategy } from './clusterrolebinding/clusterrolebinding.strategy.js';
import { clusterRoleStrategy } from './clusterrole/clusterrole.strategy.js';
import { roleStrategy } from './role/role.strategy.js';
import { roleBindingStrategy } from './rolebinding/rolebinding.strategy.js';
import type { RequestContext } from '@app/registry';
import { BINDING_COLUMNS } from './rbac.columns.js';

const ctx: RequestContext = { user: { username: 'u', groups: [] }, dryRun: false, warnings: [], now: () => new Date() };
const msgs = (errs: ReturnType<NonNullable<typeof roleStrategy.validate>>) => errs.map(fieldErrorMessage);

describe('RBAC validation', () => {
  it('checks rules as kube does: verbs, api groups and resources, non-resource URLs only cluster-wide', () => {
    const role = (rules: unknown[]): KubeObject => ({ metadata: { name: 'r', namespace: 'n' }, rules });
    expect(roleStrategy.validate!(role([{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]), ctx)).toEqual([]);
    expect(msgs(roleStrategy.validate!(role([{ verbs: [] }]), ctx))).toEqual([
      'rules[0].verbs: Required value: verbs must contain at least one value',
      'rules[0].apiGroups: Required value: resource rules must supply at least one api group',
      'rules[0].resources: Required value: resource rules must supply at least one resource',
    ]);
    expect(msgs(roleStrategy.validate!(role([{ verbs: ['get'], nonResourceURLs: ['/x'], resources: ['pods'] }]), ctx))).toEqual([
      'rules[0].nonResourceURLs: Invalid value: []string{"/x"}: namespaced rules cannot apply to non-resource URLs',
      'rules[0].nonResourceURLs: Invalid value: []string{"/x"}: rules cannot apply to both regular resources and non-resource URLs',
    ]);
    const cr = { metadata: { name: 'c' }, rules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }] };
    expect(clusterRoleStrategy.validate!(cr, ctx)).toEqual([]);
    expect(msgs(clusterRoleStrategy.validate!({ metadata: { name: 'c' }, aggregationRule: { clusterRoleSelectors: [] } }, ctx))).toEqual([
      'aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil',
    ]);
  });

  it('defaults the groups of roleRef, User and Group, and checks roleRef and subjects', () => {
    const rb: KubeObject = {
      metadata: { name: 'b', namespace: 'n' },
      roleRef: { kind: 'Role', name: 'r' },
      subjects: [
        { kind: 'User', name: 'alice' },
        { kind: 'ServiceAccount', name: 'sa' },
      ],
    };
    roleBindingStrategy.prepareForCreate!(rb, ctx);
    expect(rb.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' });
    expect((rb.subjects as Array<Record<string, unknown>>)[0].apiGroup).toBe('rbac.authorization.k8s.io');
    expect(roleBindingStrategy.validate!(rb, ctx)).toEqual([]);
    const crb: KubeObject = {
      metadata: { name: 'b' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: '' },
      subjects: [
        { kind: 'ServiceAccount', name: 'sa' },
        { kind: 'Robot', name: 'x' },
        { kind: 'Group', apiGroup: 'x', name: 'g' },
      ],
    };
    expect(msgs(clusterRoleBindingStrategy.validate!(crb, ctx))).toEqual([
      'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
      'roleRef.name: Required value',
      'subjects[0].namespace: Required value',
      'subjects[1].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"',
      'subjects[2].apiGroup: Unsupported value: "x": supported values: "rbac.authorization.k8s.io"',
    ]);
  });

  it('refuses a change of roleRef', () => {
    const old: KubeObject = { metadata: { name: 'b', namespace: 'n' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' } };
    const changed = { ...old, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'other' } };
    expect(msgs(roleBindingStrategy.validateUpdate!(changed, old, ctx))).toEqual([
      'roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"Role", Name:"other"}: cannot change roleRef',
    ]);
    expect(roleBindingStrategy.validateUpdate!(structuredClone(old), old, ctx)).toEqual([]);
  });

  it('shows the role and the subjects in the binding columns', () => {
    const b: KubeObject = {
      metadata: { name: 'b' },
      roleRef: { kind: 'ClusterRole', name: 'view' },
      subjects: [
        { kind: 'User', name: 'a' },
        { kind: 'Group', name: 'g' },
        { kind: 'ServiceAccount', namespace: 'n', name: 's' },
      ],
    };
    const now = new Date();
    expect(BINDING_COLUMNS.filter((c) => c.name !== 'Age').map((c) => c.cell(b, now))).toEqual(['ClusterRole/view', 'a', 'g', 'n/s']);
  });
});
