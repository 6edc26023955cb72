import type { AuthorizationAttributes } from './authorizer.port.js';
import { authorizerForModes } from './authorizer.modes.js';
import { RBACAuthorizer } from './rbac.authorizer.js';
import { RbacPolicy, type RbacObject } from './rbac.policy.js';
import { nonResourceURLMatches, resourceMatches, ruleAllows, type PolicyRule } from './rbac.rules.js';

const attrs = (over: Partial<AuthorizationAttributes> = {}): AuthorizationAttributes => ({
  user: { username: 'alice', groups: ['devs', 'system:authenticated'] },
  verb: 'get',
  isResourceRequest: true,
  path: '/api/v1/namespaces/ns/pods/p',
  apiGroup: '',
  apiVersion: 'v1',
  resource: 'pods',
  subresource: '',
  namespace: 'ns',
  name: 'p',
  ...over,
});
const empty = () => ({ Role: [], ClusterRole: [], RoleBinding: [], ClusterRoleBinding: [] });
const role = (name: string, namespace: string | undefined, rules: PolicyRule[]): RbacObject => ({ metadata: { name, namespace }, rules });
const binding = (name: string, namespace: string | undefined, kind: string, roleName: string, subjects: RbacObject['subjects']): RbacObject => ({
  metadata: { name, namespace },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name: roleName },
  subjects,
});

describe('RBAC rules', () => {
  it('matches verbs, groups, resources and names, with * everywhere', () => {
    const rule: PolicyRule = { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] };
    expect(ruleAllows(attrs(), rule)).toBe(true);
    expect(ruleAllows(attrs({ verb: 'delete' }), rule)).toBe(false);
    expect(ruleAllows(attrs({ apiGroup: 'apps' }), rule)).toBe(false);
    expect(ruleAllows(attrs({ resource: 'secrets' }), rule)).toBe(false);
    expect(ruleAllows(attrs({ verb: 'delete', apiGroup: 'apps', resource: 'x' }), { verbs: ['*'], apiGroups: ['*'], resources: ['*'] })).toBe(true);
    expect(ruleAllows(attrs(), { ...rule, resourceNames: ['q'] })).toBe(false);
    expect(ruleAllows(attrs({ name: 'q' }), { ...rule, resourceNames: ['q'] })).toBe(true);
  });

  it('names a subresource as resource/subresource; pods does not cover pods/log', () => {
    expect(resourceMatches({ resources: ['pods'] }, 'pods', 'log')).toBe(false);
    expect(resourceMatches({ resources: ['pods/log'] }, 'pods', 'log')).toBe(true);
    expect(resourceMatches({ resources: ['pods/log'] }, 'pods', '')).toBe(false);
    expect(resourceMatches({ resources: ['*/scale'] }, 'deployments', 'scale')).toBe(true);
    expect(resourceMatches({ resources: ['*'] }, 'pods', 'status')).toBe(true);
  });

  it('matches non-resource URLs exactly or by a trailing * prefix', () => {
    expect(nonResourceURLMatches({ nonResourceURLs: ['/healthz'] }, '/healthz')).toBe(true);
    expect(nonResourceURLMatches({ nonResourceURLs: ['/healthz'] }, '/healthz/etcd')).toBe(false);
    expect(nonResourceURLMatches({ nonResourceURLs: ['/healthz/*'] }, '/healthz/etcd')).toBe(true);
    expect(nonResourceURLMatches({ nonResourceURLs: ['/api*'] }, '/apis/apps')).toBe(true);
    expect(nonResourceURLMatches({ nonResourceURLs: ['*'] }, '/anything')).toBe(true);
    const na = attrs({ isResourceRequest: false, path: '/version', verb: 'get', resource: '', namespace: '' });
    expect(ruleAllows(na, { verbs: ['get'], nonResourceURLs: ['/version'] })).toBe(true);
    expect(ruleAllows(na, { verbs: ['get'], apiGroups: ['*'], resources: ['*'] })).toBe(false);
  });
});

describe('RBAC authorizer', () => {
  const reader: PolicyRule = { verbs: ['get'], apiGroups: [''], resources: ['pods'] };

  it('names the ClusterRoleBinding and a service account subject in the reason of an allow', () => {
    const p = new RbacPolicy();
    const a = new RBACAuthorizer(p);
    p.set('ClusterRole', { metadata: { name: 'view' }, rules: [reader] });
    p.set(
      'ClusterRoleBinding',
      binding('viewers', '', 'ClusterRole', 'view', [
        { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'devs' },
        { kind: 'ServiceAccount', name: 'bot', namespace: 'ci' },
      ]),
    );
    p.set('RoleBinding', binding('local', 'ns', 'ClusterRole', 'view', [{ kind: 'ServiceAccount', name: 'helper' }]));
    expect(a.authorize(attrs({ user: { username: 'x', groups: ['devs'] } })).reason).toBe(
      'RBAC: allowed by ClusterRoleBinding "viewers" of ClusterRole "view" to Group "devs"',
    );
    expect(a.authorize(attrs({ user: { username: 'system:serviceaccount:ci:bot', groups: [] } })).reason).toBe(
      'RBAC: allowed by ClusterRoleBinding "viewers" of ClusterRole "view" to ServiceAccount "bot/ci"',
    );
    expect(a.authorize(attrs({ user: { username: 'system:serviceaccount:ns:helper', groups: [] } })).reason).toBe(
      'RBAC: allowed by RoleBinding "local/ns" of ClusterRole "view" to ServiceAccount "helper/ns"',
    );
    // The same decision object every time: an allow allocates nothing.
    expect(a.authorize(attrs({ user: { username: 'x', groups: ['devs'] } }))).toBe(a.authorize(attrs({ user: { username: 'x', groups: ['devs'] } })));
  });

  it('allows through a RoleBinding of a Role only in its namespace, and forgets a deleted binding', () => {
    const p = new RbacPolicy();
    const a = new RBACAuthorizer(p);
    expect(a.authorize(attrs()).decision).toBe('NoOpinion');
    p.set('Role', role('reader', 'ns', [reader]));
    const rb = binding('rb', 'ns', 'Role', 'reader', [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' }]);
    p.set('RoleBinding', rb);
    // The reason names the binding, as kube-apiserver's RBAC does.
    expect(a.authorize(attrs())).toEqual({ decision: 'Allow', reason: 'RBAC: allowed by RoleBinding "rb/ns" of Role "reader" to User "alice"' });
    expect(a.authorize(attrs({ namespace: 'other' })).decision).toBe('NoOpinion');
    expect(a.authorize(attrs({ namespace: '' })).decision).toBe('NoOpinion');
    expect(a.authorize(attrs({ user: { username: 'bob', groups: [] } })).decision).toBe('NoOpinion');
    p.delete('RoleBinding', rb);
    expect(a.authorize(attrs()).decision).toBe('NoOpinion');
  });

  it('scopes a ClusterRole granted by a RoleBinding to the binding namespace; a ClusterRoleBinding applies everywhere', () => {
    const p = new RbacPolicy();
    const a = new RBACAuthorizer(p);
    p.replace({
      ...empty(),
      ClusterRole: [role('pod-reader', undefined, [reader]), role('health', undefined, [{ verbs: ['get'], nonResourceURLs: ['/healthz/*'] }])],
      RoleBinding: [binding('rb', 'ns', 'ClusterRole', 'pod-reader', [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'devs' }])],
    });
    expect(a.authorize(attrs()).decision).toBe('Allow');
    expect(a.authorize(attrs({ namespace: 'other' })).decision).toBe('NoOpinion');
    const health = attrs({ isResourceRequest: false, path: '/healthz/ping', resource: '', namespace: '' });
    expect(a.authorize(health).decision).toBe('NoOpinion');
    p.set('ClusterRoleBinding', binding('crb', undefined, 'ClusterRole', 'health', [{ kind: 'Group', name: 'system:authenticated' }]));
    expect(a.authorize(health).decision).toBe('Allow');
    p.set('ClusterRoleBinding', binding('crb2', undefined, 'ClusterRole', 'pod-reader', [{ kind: 'User', name: 'alice' }]));
    expect(a.authorize(attrs({ namespace: 'other' })).decision).toBe('Allow');
  });

  it('matches ServiceAccount subjects to their user name, defaulting to the binding namespace', () => {
    const p = new RbacPolicy();
    const a = new RBACAuthorizer(p);
    p.set('Role', role('reader', 'ns', [reader]));
    p.set('RoleBinding', binding('rb', 'ns', 'Role', 'reader', [{ kind: 'ServiceAccount', name: 'builder' }]));
    expect(a.authorize(attrs({ user: { username: 'system:serviceaccount:ns:builder', groups: [] } })).decision).toBe('Allow');
    expect(a.authorize(attrs({ user: { username: 'system:serviceaccount:other:builder', groups: [] } })).decision).toBe('NoOpinion');
  });

  it('a binding to a missing role grants nothing; rulesFor lists the granted rules', () => {
    const p = new RbacPolicy();
    p.set('ClusterRoleBinding', binding('crb', undefined, 'ClusterRole', 'missing', [{ kind: 'User', name: 'alice' }]));
    expect(new RBACAuthorizer(p).authorize(attrs()).decision).toBe('NoOpinion');
    p.set('ClusterRole', role('missing', undefined, [reader]));
    expect(p.rulesFor(attrs().user, 'ns')).toEqual([reader]);
  });

  it('indexes grants by subject and recompiles them when a role or binding changes', () => {
    const p = new RbacPolicy();
    const a = new RBACAuthorizer(p);
    p.set('ClusterRole', role('r', undefined, [reader]));
    p.set('RoleBinding', binding('rb', 'ns', 'ClusterRole', 'r', [{ kind: 'Group', name: 'devs' }]));
    const before = p.grantsOfGroup('devs');
    expect(before.cluster).toEqual([]);
    expect(before.byNamespace.get('ns')).toEqual([reader]);
    // Asked again without a change: the same compiled object, nothing rebuilt.
    expect(p.grantsOfGroup('devs')).toBe(before);
    expect(p.grantsOfUser('alice').cluster).toEqual([]);
    expect(a.authorize(attrs()).decision).toBe('Allow');
    expect(a.authorize(attrs({ verb: 'list' })).decision).toBe('NoOpinion');
    // A change to the role reaches the subjects bound to it at once.
    p.set('ClusterRole', role('r', undefined, [{ ...reader, verbs: ['list'] }]));
    expect(p.grantsOfGroup('devs')).not.toBe(before);
    expect(a.authorize(attrs()).decision).toBe('NoOpinion');
    expect(a.authorize(attrs({ verb: 'list' })).decision).toBe('Allow');
    // So does a role deleted, and a binding replaced by one naming another subject.
    p.delete('ClusterRole', role('r', undefined, []));
    expect(a.authorize(attrs({ verb: 'list' })).decision).toBe('NoOpinion');
    p.set('ClusterRole', role('r', undefined, [reader]));
    p.set('RoleBinding', binding('rb', 'ns', 'ClusterRole', 'r', [{ kind: 'User', name: 'bob' }]));
    expect(a.authorize(attrs()).decision).toBe('NoOpinion');
    expect(a.authorize(attrs({ user: { username: 'bob', groups: [] } })).decision).toBe('Allow');
    // A relist replaces everything.
    p.replace(empty());
    expect(a.authorize(attrs({ user: { username: 'bob', groups: [] } })).decision).toBe('NoOpinion');
  });

  it('is the RBAC mode of --authorization-mode, behind system:masters', async () => {
    const p = new RbacPolicy();
    const union = authorizerForModes(['RBAC'], { rbac: p });
    expect((await union.authorize(attrs())).decision).toBe('NoOpinion');
    expect((await union.authorize(attrs({ user: { username: 'root', groups: ['system:masters'] } }))).decision).toBe('Allow');
    expect(() => authorizerForModes(['RBAC'])).toThrow(/RBAC needs the RBAC policy/);
  });
});
