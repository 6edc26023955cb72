import { RbacPolicy } from './rbac.policy.js';
import { ruleResolverForModes } from './rules.resolver.js';

const alice = { username: 'alice', groups: ['devs'] };

describe('rule resolvers', () => {
  const policy = new RbacPolicy();
  policy.set('Role', { metadata: { name: 'reader', namespace: 'ns' }, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }] });
  policy.set('ClusterRole', { metadata: { name: 'health' }, rules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }] });
  policy.set('RoleBinding', {
    metadata: { name: 'rb', namespace: 'ns' },
    roleRef: { kind: 'Role', name: 'reader' },
    subjects: [{ kind: 'Group', name: 'devs' }],
  });
  policy.set('ClusterRoleBinding', {
    metadata: { name: 'crb' },
    roleRef: { kind: 'ClusterRole', name: 'health' },
    subjects: [{ kind: 'User', name: 'alice' }],
  });
  policy.set('ClusterRoleBinding', {
    metadata: { name: 'gone' },
    roleRef: { kind: 'ClusterRole', name: 'missing' },
    subjects: [{ kind: 'User', name: 'alice' }],
  });

  it('RBAC lists the rules of the cluster-wide bindings and those of the namespace, split by kind', () => {
    const r = ruleResolverForModes(['RBAC'], { rbac: policy }).rulesFor(alice, 'ns');
    expect(r.resourceRules).toEqual([{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]);
    expect(r.nonResourceRules).toEqual([{ verbs: ['get'], nonResourceURLs: ['/healthz'] }]);
    expect(r.errors).toEqual(['clusterrole.rbac.authorization.k8s.io "missing" not found']);
    expect(r.incomplete).toBe(false);
    expect(ruleResolverForModes(['RBAC'], { rbac: policy }).rulesFor(alice, 'other').resourceRules).toEqual([]);
  });

  it('AlwaysAllow grants everything; the union concatenates; a mode without a resolver is incomplete', () => {
    const r = ruleResolverForModes(['RBAC', 'AlwaysAllow'], { rbac: policy }).rulesFor(alice, 'other');
    expect(r.resourceRules).toEqual([{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }]);
    expect(r.nonResourceRules.at(-1)).toEqual({ verbs: ['*'], nonResourceURLs: ['*'] });
    expect(r.incomplete).toBe(false);
    expect(ruleResolverForModes(['Webhook']).rulesFor(alice, 'ns').incomplete).toBe(true);
    expect(ruleResolverForModes(['AlwaysDeny']).rulesFor(alice, 'ns')).toEqual({ resourceRules: [], nonResourceRules: [], incomplete: false, errors: [] });
  });
});
