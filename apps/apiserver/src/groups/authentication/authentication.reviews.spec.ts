import { Errors } from '@app/apimachinery';
import { selfSubjectReviewKind } from './selfsubjectreview/selfsubjectreview.kind.js';
import { AuthenticationPorts, tokenReviewKind } from './tokenreview/tokenreview.kind.js';

const ctx = {
  user: { username: 'alice', uid: 'u1', groups: ['dev', 'system:authenticated'], extra: { scopes: ['a'] } },
  dryRun: false,
  warnings: [],
  now: () => new Date(),
};
const tr = (spec: object) => ({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', metadata: {}, spec });

describe('authentication reviews', () => {
  it('SelfSubjectReview answers the requesting user at v1 and v1beta1', async () => {
    for (const v of ['v1', 'v1beta1'] as const) {
      const r = await selfSubjectReviewKind(v).rest!.create('', { apiVersion: `authentication.k8s.io/${v}`, kind: 'SelfSubjectReview', metadata: {} }, ctx);
      expect(r.status).toEqual({ userInfo: { username: 'alice', uid: 'u1', groups: ['dev', 'system:authenticated'], extra: { scopes: ['a'] } } });
    }
  });

  it('TokenReview authenticates spec.token as a bearer token through the authenticator', async () => {
    const ports = new AuthenticationPorts();
    ports.authenticator = {
      authenticate: (req) => {
        if (req.headers.authorization === 'Bearer good') return { username: 'bob', groups: ['g'] };
        if (req.headers.authorization === 'Bearer bad') throw Errors.unauthorized();
        return undefined;
      },
    };
    const kind = tokenReviewKind(ports);
    expect((await kind.rest!.create('', tr({ token: 'good', audiences: ['api'] }), ctx)).status).toEqual({
      authenticated: true,
      user: { username: 'bob', groups: ['g'] },
      audiences: ['api'],
    });
    expect((await kind.rest!.create('', tr({ token: 'bad' }), ctx)).status).toMatchObject({ authenticated: false, error: expect.any(String) });
    expect((await kind.rest!.create('', tr({ token: 'other' }), ctx)).status).toEqual({ authenticated: false, user: {} });
    await expect(kind.rest!.create('', tr({}), ctx)).rejects.toThrow('token is required for TokenReview in authentication.k8s.io');
  });
});
