import type { AuthorizationAttributes, Authorizer } from './authorizer.port.js';
import { AlwaysAllowAuthorizer, AlwaysDenyAuthorizer, AuthorizerUnion, authorizerForModes } from './authorizer.modes.js';
import { forbiddenError, forbiddenMessage } from './forbidden.message.js';

const attrs = (over: Partial<AuthorizationAttributes> = {}): AuthorizationAttributes => ({
  user: { username: 'alice', groups: [] },
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

describe('authorization modes', () => {
  it('AlwaysAllow allows and AlwaysDeny denies', async () => {
    expect((await new AlwaysAllowAuthorizer().authorize()).decision).toBe('Allow');
    expect((await new AlwaysDenyAuthorizer().authorize()).decision).toBe('Deny');
  });

  it('a union takes the first Allow or Deny and denies when nobody has an opinion', async () => {
    const none: Authorizer = { authorize: () => ({ decision: 'NoOpinion', reason: 'no rule' }) };
    expect((await new AuthorizerUnion([none, new AlwaysAllowAuthorizer()]).authorize(attrs())).decision).toBe('Allow');
    expect((await new AuthorizerUnion([new AlwaysDenyAuthorizer(), new AlwaysAllowAuthorizer()]).authorize(attrs())).decision).toBe('Deny');
    expect(await new AuthorizerUnion([none]).authorize(attrs())).toEqual({ decision: 'NoOpinion', reason: 'no rule' });
  });

  it('a union answers synchronously while its modes do, and goes on after a mode that answers with a promise', async () => {
    const none: Authorizer = { authorize: () => ({ decision: 'NoOpinion', reason: 'sync' }) };
    const later = (decision: 'NoOpinion' | 'Deny', reason: string): Authorizer => ({ authorize: () => Promise.resolve({ decision, reason }) });
    expect(new AuthorizerUnion([none, new AlwaysAllowAuthorizer()]).authorize(attrs())).toEqual({ decision: 'Allow' });
    expect(await new AuthorizerUnion([none, later('NoOpinion', 'async'), new AlwaysAllowAuthorizer()]).authorize(attrs())).toEqual({ decision: 'Allow' });
    expect(await new AuthorizerUnion([none, later('NoOpinion', 'async'), none]).authorize(attrs())).toEqual({
      decision: 'NoOpinion',
      reason: 'sync\nasync\nsync',
    });
    expect(await new AuthorizerUnion([later('Deny', 'no'), new AlwaysAllowAuthorizer()]).authorize(attrs())).toEqual({ decision: 'Deny', reason: 'no' });
  });

  it('builds the --authorization-mode list behind system:masters, and refuses a mode it does not have', async () => {
    expect((await authorizerForModes(['AlwaysDeny', 'AlwaysAllow']).authorize(attrs())).decision).toBe('Deny');
    const admin = attrs({ user: { username: 'admin', groups: ['system:masters'] } });
    expect((await authorizerForModes(['AlwaysDeny']).authorize(admin)).decision).toBe('Allow');
    expect(() => authorizerForModes(['Keystone'])).toThrow(/--authorization-mode: unsupported mode "Keystone"/);
    expect(() => authorizerForModes(['ABAC'])).toThrow("--authorization-mode: ABAC's authorization policy file not passed");
    expect(() => authorizerForModes(['Node'])).toThrow('--authorization-mode: Node needs the node graph of the server');
    expect(() => authorizerForModes(['Webhook'])).toThrow('Webhook needs --authorization-webhook-config-file');
  });
});

describe('forbidden message', () => {
  it('words resource, subresource, cluster-scoped and non-resource requests as kube-apiserver does', () => {
    expect(forbiddenMessage(attrs())).toBe('User "alice" cannot get resource "pods" in API group "" in the namespace "ns"');
    expect(forbiddenMessage(attrs({ subresource: 'status', namespace: '', apiGroup: 'apps', resource: 'deployments' }))).toBe(
      'User "alice" cannot get resource "deployments/status" in API group "apps" at the cluster scope',
    );
    expect(forbiddenMessage(attrs({ isResourceRequest: false, verb: 'get', path: '/metrics' }))).toBe('User "alice" cannot get path "/metrics"');
  });

  it('is a 403 Forbidden Status naming the resource', () => {
    const e = forbiddenError(attrs(), 'no RBAC policy matched');
    expect(e.toStatus()).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'pods "p" is forbidden: User "alice" cannot get resource "pods" in API group "" in the namespace "ns": no RBAC policy matched',
      reason: 'Forbidden',
      details: { name: 'p', kind: 'pods' },
      code: 403,
    });
    expect(forbiddenError(attrs({ isResourceRequest: false, path: '/metrics', resource: '' })).message).toBe(
      'forbidden: User "alice" cannot get path "/metrics"',
    );
  });
});
