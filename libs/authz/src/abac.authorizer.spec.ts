import { describe, expect, it } from '@jest/globals';
import type { UserInfo } from '@app/auth';
import { AbacAuthorizer, AbacPolicyError, parseAbacPolicyFile } from './abac.authorizer.js';
import { nonResourceAttributes, type AuthorizationAttributes } from './authorizer.port.js';

const v1 = (spec: Record<string, unknown>) => JSON.stringify({ apiVersion: 'abac.authorization.kubernetes.io/v1beta1', kind: 'Policy', spec });
const user = (username: string, ...groups: string[]): UserInfo => ({ username, groups: [...groups, 'system:authenticated'] });
const res = (u: UserInfo, verb: string, resource: string, namespace = '', apiGroup = '', subresource = ''): AuthorizationAttributes => ({
  user: u,
  verb,
  isResourceRequest: true,
  path: '',
  apiGroup,
  apiVersion: 'v1',
  resource,
  subresource,
  namespace,
  name: '',
});
const authorizer = (...lines: string[]) => new AbacAuthorizer(parseAbacPolicyFile('/etc/abac.jsonl', lines.join('\n')).policies);
const allowed = (a: AbacAuthorizer, attrs: AuthorizationAttributes) => a.authorize(attrs).decision === 'Allow';

describe('parseAbacPolicyFile', () => {
  it('reads v1beta1 and unversioned lines, skipping blank lines and comments', () => {
    const text = [
      '# the admins',
      v1({ user: 'alice', namespace: '*', resource: '*', apiGroup: '*' }),
      '',
      '   ',
      '{"user":"bob","readonly":true}',
      '  # indented',
    ].join('\n');
    const { policies, unversioned } = parseAbacPolicyFile('/p', text);
    expect(unversioned).toBe(1);
    expect(policies).toEqual([
      { user: 'alice', group: '', readonly: false, apiGroup: '*', resource: '*', namespace: '*', nonResourcePath: '' },
      // v0: empty namespace and resource are wildcards (and then non-resource paths too), any API group.
      { user: 'bob', group: '', readonly: true, apiGroup: '*', resource: '*', namespace: '*', nonResourcePath: '*' },
    ]);
  });

  it('converts as kube does: `*` subjects are every authenticated user; v0 without a subject is too', () => {
    const { policies } = parseAbacPolicyFile(
      '/p',
      [v1({ user: '*', resource: 'pods' }), v1({ group: '*', nonResourcePath: '/version' }), '{"resource":"pods","namespace":"ns1"}', '{"group":"*"}'].join(
        '\n',
      ),
    );
    expect(policies.map((p) => [p.user, p.group, p.namespace, p.resource, p.apiGroup, p.nonResourcePath])).toEqual([
      ['', 'system:authenticated', '', 'pods', '', ''],
      ['', 'system:authenticated', '', '', '', '/version'],
      ['', 'system:authenticated', 'ns1', 'pods', '*', ''],
      ['', 'system:authenticated', '*', '*', '*', '*'],
    ]);
  });

  it('names the file, the line and the problem', () => {
    const fail = (text: string): unknown => {
      try {
        parseAbacPolicyFile('/etc/abac.jsonl', text);
        return 'parsed';
      } catch (e) {
        return e instanceof AbacPolicyError ? e.message : e;
      }
    };
    expect(fail(`# c\n${v1({ user: 'a' })}\n{"user": }`) as string).toMatch(/^error reading policy file \/etc\/abac.jsonl, line 3: \{"user": \}: /);
    expect(fail('{"apiVersion":"v1","kind":"ConfigMap"}')).toBe(
      'error reading policy file /etc/abac.jsonl, line 1: {"apiVersion":"v1","kind":"ConfigMap"}: no kind "ConfigMap" is registered for version "v1"',
    );
    expect(fail(v1({ readonly: 'yes' }))).toContain('readonly: expected a boolean, got "yes"');
    expect(fail(v1({ user: 7 }))).toContain('user: expected a string, got 7');
    expect(fail('[1]')).toContain('a policy must be a JSON object');
  });
});

describe('AbacAuthorizer', () => {
  const a = authorizer(
    v1({ user: 'admin', namespace: '*', resource: '*', apiGroup: '*', nonResourcePath: '*' }),
    v1({ user: 'scheduler', readonly: true, namespace: '*', resource: 'pods' }),
    v1({ user: 'alice', namespace: 'projectCaribou', resource: '*', apiGroup: '*' }),
    v1({ group: 'devs', namespace: 'dev', resource: 'deployments', apiGroup: 'apps' }),
    v1({ user: 'bob', nonResourcePath: '/logs/*' }),
    v1({ user: '*', readonly: true, nonResourcePath: '/version' }),
  );

  it('allows what a policy matches and has no opinion otherwise', () => {
    expect(allowed(a, res(user('admin'), 'delete', 'secrets', 'kube-system'))).toBe(true);
    expect(allowed(a, res(user('alice'), 'create', 'configmaps', 'projectCaribou'))).toBe(true);
    expect(a.authorize(res(user('alice'), 'create', 'configmaps', 'default'))).toEqual({ decision: 'NoOpinion', reason: 'No policy matched.' });
  });

  it('lets a readonly policy allow reads only', () => {
    for (const verb of ['get', 'list', 'watch']) expect(allowed(a, res(user('scheduler'), verb, 'pods', 'ns1'))).toBe(true);
    expect(allowed(a, res(user('scheduler'), 'create', 'pods', 'ns1'))).toBe(false);
    expect(allowed(a, res(user('scheduler'), 'get', 'secrets', 'ns1'))).toBe(false);
  });

  it('matches groups, API groups exactly, and a subresource as its resource', () => {
    expect(allowed(a, res(user('carol', 'devs'), 'update', 'deployments', 'dev', 'apps'))).toBe(true);
    expect(allowed(a, res(user('carol', 'devs'), 'update', 'deployments', 'dev', 'apps', 'scale'))).toBe(true);
    expect(allowed(a, res(user('carol', 'devs'), 'update', 'deployments', 'dev', 'extensions'))).toBe(false);
    expect(allowed(a, res(user('carol', 'ops'), 'update', 'deployments', 'dev', 'apps'))).toBe(false);
    // A policy of the core group (no apiGroup) does not match another group's resource of the same name.
    expect(allowed(authorizer(v1({ user: 'u', namespace: '*', resource: 'pods' })), res(user('u'), 'get', 'pods', 'x', 'metrics.k8s.io'))).toBe(false);
  });

  it('matches non-resource paths exactly, by a trailing *, or all, and never a resource request', () => {
    expect(allowed(a, nonResourceAttributes(user('bob'), 'get', '/logs/kube-apiserver.log'))).toBe(true);
    expect(allowed(a, nonResourceAttributes(user('bob'), 'get', '/logsx'))).toBe(false);
    expect(allowed(a, nonResourceAttributes(user('bob'), 'get', '/healthz'))).toBe(false);
    expect(allowed(a, nonResourceAttributes(user('anyone'), 'get', '/version'))).toBe(true);
    expect(allowed(a, nonResourceAttributes(user('anyone'), 'post', '/version'))).toBe(false);
    expect(allowed(a, nonResourceAttributes(user('admin'), 'post', '/anything'))).toBe(true);
    expect(allowed(a, res(user('bob'), 'get', 'logs', ''))).toBe(false);
  });

  it('does not match a user who is not authenticated against `*`', () => {
    const anonymous: UserInfo = { username: 'system:anonymous', groups: ['system:unauthenticated'] };
    expect(allowed(a, nonResourceAttributes(anonymous, 'get', '/version'))).toBe(false);
    const open = authorizer(v1({ group: 'system:unauthenticated', readonly: true, nonResourcePath: '*' }));
    expect(allowed(open, nonResourceAttributes(anonymous, 'get', '/healthz'))).toBe(true);
  });

  it('lists the rules of a user in a namespace as kube does', () => {
    expect(a.rulesFor(user('scheduler'), 'ns1')).toEqual({
      resourceRules: [{ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods'] }],
      // A policy without a namespace lists only for the empty namespace (kube's RulesFor).
      nonResourceRules: [],
      incomplete: false,
      errors: [],
    });
    expect(a.rulesFor(user('scheduler'), '').nonResourceRules).toEqual([{ verbs: ['get', 'list', 'watch'], nonResourceURLs: ['/version'] }]);
    expect(a.rulesFor(user('alice'), 'projectCaribou').resourceRules).toEqual([{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }]);
    expect(a.rulesFor(user('alice'), 'default').resourceRules).toEqual([]);
  });
});
