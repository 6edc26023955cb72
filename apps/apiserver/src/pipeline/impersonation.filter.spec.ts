import { StatusError } from '@app/apimachinery';
import type { UserInfo } from '@app/auth';
import type { AuthorizationAttributes, Authorizer } from '@app/authz';
import { impersonate, readImpersonation } from './impersonation.filter.js';

const alice: UserInfo = { username: 'alice', groups: ['system:authenticated'] };

/** An authorizer allowing only the `allowed` checks ("resource/subresource:namespace/name"). */
function allowing(...allowed: string[]): Authorizer & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    authorize(a: AuthorizationAttributes) {
      const key = `${a.resource}${a.subresource ? `/${a.subresource}` : ''}:${a.namespace ? `${a.namespace}/` : ''}${a.name}`;
      asked.push(`${a.verb} ${a.apiGroup}/${key}`);
      return allowed.includes(key) ? { decision: 'Allow' as const } : { decision: 'NoOpinion' as const };
    },
  };
}

describe('impersonation', () => {
  it('reads the headers, percent-decoding extra keys', () => {
    expect(readImpersonation({ accept: '*/*' })).toBeUndefined();
    expect(
      readImpersonation({
        'impersonate-user': 'bob',
        'impersonate-group': ['g1', 'g2'],
        'impersonate-uid': 'u-1',
        'impersonate-extra-example.com%2fscopes': ['a', 'b'],
      }),
    ).toEqual({ user: 'bob', groups: ['g1', 'g2'], uid: 'u-1', extra: { 'example.com/scopes': ['a', 'b'] } });
  });

  it('checks each part with the impersonate verb and acts as the user with system:authenticated', async () => {
    const authz = allowing('users:bob', 'groups:devs', 'userextras/scopes:read', 'uids:u-1');
    const user = await impersonate(alice, { user: 'bob', groups: ['devs'], uid: 'u-1', extra: { scopes: ['read'] } }, authz);
    expect(user).toEqual({ username: 'bob', uid: 'u-1', groups: ['devs', 'system:authenticated'], extra: { scopes: ['read'] } });
    expect(authz.asked).toEqual([
      'impersonate /users:bob',
      'impersonate /groups:devs',
      'impersonate authentication.k8s.io/userextras/scopes:read',
      'impersonate authentication.k8s.io/uids:u-1',
    ]);
  });

  it('checks a service account as serviceaccounts in its namespace and gives it its groups', async () => {
    const authz = allowing('serviceaccounts:ci/builder');
    const user = await impersonate(alice, { user: 'system:serviceaccount:ci:builder', groups: [], extra: {} }, authz);
    expect(user.groups).toEqual(['system:serviceaccounts', 'system:serviceaccounts:ci', 'system:authenticated']);
  });

  it('refuses with the Forbidden of the first denied check', async () => {
    const authz = allowing('users:bob');
    const err = await impersonate(alice, { user: 'bob', groups: ['system:masters'], extra: {} }, authz).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StatusError);
    expect((err as StatusError).code).toBe(403);
    expect((err as StatusError).message).toBe(
      'groups "system:masters" is forbidden: User "alice" cannot impersonate resource "groups" in API group "" at the cluster scope',
    );
  });

  it('refuses groups without a user with 400', async () => {
    const err = await impersonate(alice, { groups: ['devs'], extra: {} }, allowing()).catch((e: unknown) => e);
    expect((err as StatusError).code).toBe(400);
  });

  it('gives system:anonymous the unauthenticated group', async () => {
    const user = await impersonate(alice, { user: 'system:anonymous', groups: [], extra: {} }, allowing('users:system:anonymous'));
    expect(user.groups).toEqual(['system:unauthenticated']);
  });
});
