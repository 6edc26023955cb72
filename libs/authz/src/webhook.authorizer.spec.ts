import { AuthorizerUnion } from './authorizer.modes.js';
import type { AuthorizationAttributes } from './authorizer.port.js';
import { subjectAccessReviewSpec, WebhookAuthorizer } from './webhook.authorizer.js';

const attrs = (over: Partial<AuthorizationAttributes> = {}): AuthorizationAttributes => ({
  user: { username: 'alice', uid: 'u1', groups: ['dev', 'system:authenticated'], extra: { scopes: ['a'] } },
  verb: 'get',
  isResourceRequest: true,
  path: '/apis/apps/v1/namespaces/ns/deployments/web/scale',
  apiGroup: 'apps',
  apiVersion: 'v1',
  resource: 'deployments',
  subresource: 'scale',
  namespace: 'ns',
  name: 'web',
  ...over,
});

describe('webhook authorizer', () => {
  it('asks with a SubjectAccessReview of the resource or non-resource attributes (v1beta1 names the groups group)', () => {
    expect(subjectAccessReviewSpec(attrs(), 'v1')).toEqual({
      resourceAttributes: { namespace: 'ns', verb: 'get', group: 'apps', version: 'v1', resource: 'deployments', subresource: 'scale', name: 'web' },
      user: 'alice',
      groups: ['dev', 'system:authenticated'],
      uid: 'u1',
      extra: { scopes: ['a'] },
    });
    const listed = subjectAccessReviewSpec(
      attrs({
        verb: 'list',
        name: '',
        subresource: '',
        fieldSelector: [
          { field: 'spec.nodeName', operator: '=', value: 'n1' },
          { field: 'status.phase', operator: '!=', value: 'Failed' },
        ],
      }),
      'v1',
    );
    expect(listed.resourceAttributes).toMatchObject({
      fieldSelector: {
        requirements: [
          { key: 'spec.nodeName', operator: 'In', values: ['n1'] },
          { key: 'status.phase', operator: 'NotIn', values: ['Failed'] },
        ],
      },
    });
    const labelled = subjectAccessReviewSpec(
      attrs({
        verb: 'list',
        labelSelector: [
          { key: 'app', operator: '=', values: ['web'] },
          { key: 'tier', operator: 'notin', values: ['a', 'b'] },
          { key: 'owner', operator: 'exists', values: [] },
          { key: 'legacy', operator: '!', values: [] },
          { key: 'size', operator: 'gt', values: ['3'] },
        ],
      }),
      'v1',
    );
    // As kube-apiserver sends them: metav1 operators, `gt` and `lt` left out.
    expect(labelled.resourceAttributes).toMatchObject({
      labelSelector: {
        requirements: [
          { key: 'app', operator: 'In', values: ['web'] },
          { key: 'tier', operator: 'NotIn', values: ['a', 'b'] },
          { key: 'owner', operator: 'Exists' },
          { key: 'legacy', operator: 'DoesNotExist' },
        ],
      },
    });
    expect(
      subjectAccessReviewSpec(attrs({ verb: 'list', labelSelector: [{ key: 'size', operator: 'lt', values: ['3'] }] }), 'v1').resourceAttributes,
    ).not.toHaveProperty('labelSelector');
    const nr = subjectAccessReviewSpec(attrs({ isResourceRequest: false, path: '/metrics', user: { username: 'bob', groups: ['x'] } }), 'v1beta1');
    expect(nr).toEqual({ nonResourceAttributes: { path: '/metrics', verb: 'get' }, user: 'bob', group: ['x'] });
  });

  const answering = (status: object, calls: unknown[], version = 'v1') => ({
    version: version as 'v1',
    authorizedTtlMs: 1000,
    unauthorizedTtlMs: 100,
    post: (review: unknown) => {
      calls.push(review);
      return Promise.resolve({ status: 200, body: { apiVersion: `authorization.k8s.io/${version}`, kind: 'SubjectAccessReview', status } });
    },
  });

  it('allows, denies or has no opinion as the review says, with its reason', async () => {
    const calls: unknown[] = [];
    expect(await new WebhookAuthorizer(answering({ allowed: true, reason: 'ok' }, calls)).authorize(attrs())).toEqual({ decision: 'Allow', reason: 'ok' });
    expect(await new WebhookAuthorizer(answering({ allowed: false, denied: true, reason: 'no' }, calls)).authorize(attrs())).toEqual({
      decision: 'Deny',
      reason: 'no',
    });
    expect(await new WebhookAuthorizer(answering({ allowed: false }, calls)).authorize(attrs())).toEqual({ decision: 'NoOpinion' });
    expect(calls[0]).toMatchObject({ apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: 'alice' } });
  });

  it('caches an allow for the authorized TTL and anything else for the unauthorized one, per spec', async () => {
    let now = 0;
    const calls: unknown[] = [];
    let allowed = true;
    const w = new WebhookAuthorizer({
      ...answering({}, calls),
      now: () => now,
      post: (review: unknown) => {
        calls.push(review);
        return Promise.resolve({ status: 200, body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', status: { allowed } } });
      },
    });
    await w.authorize(attrs());
    now = 999;
    expect((await w.authorize(attrs())).decision).toBe('Allow');
    expect(calls).toHaveLength(1);
    await w.authorize(attrs({ verb: 'list' }));
    expect(calls).toHaveLength(2);
    now = 1000;
    allowed = false;
    expect((await w.authorize(attrs())).decision).toBe('NoOpinion');
    expect(calls).toHaveLength(3);
    now = 1099;
    allowed = true;
    expect((await w.authorize(attrs())).decision).toBe('NoOpinion');
    now = 1100;
    expect((await w.authorize(attrs())).decision).toBe('Allow');
    expect(calls).toHaveLength(4);
  });

  it('reports a service it cannot use as an error, not remembered, which the union keeps when nothing allows', async () => {
    let calls = 0;
    const broken = new WebhookAuthorizer({
      version: 'v1',
      authorizedTtlMs: 1000,
      unauthorizedTtlMs: 1000,
      post: () => {
        calls++;
        return Promise.resolve({ status: 500, body: { message: 'boom' } });
      },
    });
    const d = await broken.authorize(attrs());
    expect(d).toEqual({
      decision: 'NoOpinion',
      error: 'the authorization webhook could not be consulted: it answered 500 without an authorization.k8s.io/v1 SubjectAccessReview',
    });
    await broken.authorize(attrs());
    expect(calls).toBe(2);
    const union = new AuthorizerUnion([{ authorize: () => ({ decision: 'NoOpinion', reason: 'rbac: nothing' }) }, broken]);
    expect(await union.authorize(attrs())).toEqual({ decision: 'NoOpinion', reason: 'rbac: nothing', error: d.error });
    const allowedFirst = new AuthorizerUnion([broken, { authorize: () => ({ decision: 'Allow' }) }]);
    expect(await allowedFirst.authorize(attrs())).toEqual({ decision: 'Allow' });
  });
});
