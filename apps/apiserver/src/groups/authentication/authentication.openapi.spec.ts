import { OpenAPIPublisher } from '@app/apimachinery';
import { AUTHORIZATION_KINDS } from '../authorization/authorization.module.js';
import { AUTHENTICATION_KINDS } from './authentication.module.js';

describe('review kinds in OpenAPI', () => {
  it('build the v2 and v3 documents (each shared definition is one schema)', () => {
    const p = new OpenAPIPublisher([], { title: 'Kubernetes', version: 'v1.32.0' });
    p.setKinds([...AUTHORIZATION_KINDS, ...AUTHENTICATION_KINDS]);
    const get = (path: string) => p.handle({ path, hash: undefined, ifNoneMatch: undefined, accept: 'application/json' });
    expect(get('/openapi/v2').body.toString()).toContain('io.k8s.api.authentication.v1.TokenReview');
    expect(get('/openapi/v3/apis/authentication.k8s.io/v1').body.toString()).toContain('io.k8s.api.authentication.v1.UserInfo');
    expect(get('/openapi/v3/apis/authorization.k8s.io/v1').body.toString()).toContain('io.k8s.api.authorization.v1.SubjectAccessReviewStatus');
  });
});
