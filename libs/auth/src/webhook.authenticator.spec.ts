import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseWebhookKubeconfig, userFromTokenReview, WebhookTokenAuthenticator } from './webhook.authenticator.js';

const bearer = (t: string) => ({ headers: { authorization: `Bearer ${t}` } });

describe('webhook token authentication', () => {
  it('reads the service, its CA and the client certificate from a kubeconfig (inline data or files)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wh-'));
    writeFileSync(join(dir, 'ca.pem'), 'CA');
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const text = [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{name: remote, cluster: {server: "https://127.0.0.1:9443/authn", certificate-authority: ca.pem}}]',
      `users: [{name: api, user: {client-certificate-data: ${b64('CERT')}, client-key-data: ${b64('KEY')}}}]`,
      'contexts: [{name: webhook, context: {cluster: remote, user: api}}]',
      'current-context: webhook',
    ].join('\n');
    expect(parseWebhookKubeconfig(text, dir)).toEqual({ server: 'https://127.0.0.1:9443/authn', caPem: 'CA', certPem: 'CERT', keyPem: 'KEY' });
    expect(() => parseWebhookKubeconfig('clusters: [{name: r, cluster: {server: "http://x"}}]', dir)).toThrow('no https server URL');
    expect(() => parseWebhookKubeconfig('current-context: nope\ncontexts: []', dir)).toThrow('has no context named "nope"');
  });

  it('maps a TokenReview status to a user; audiences must intersect when both sides name some', () => {
    const status = { authenticated: true, user: { username: 'jane', uid: '42', groups: ['dev'], extra: { scopes: ['a'] } } };
    expect(userFromTokenReview(status, [])).toEqual({ username: 'jane', uid: '42', groups: ['dev'], extra: { scopes: ['a'] } });
    expect(userFromTokenReview({ ...status, audiences: ['api'] }, ['api', 'other'])).toMatchObject({ username: 'jane' });
    expect(userFromTokenReview({ ...status, audiences: ['elsewhere'] }, ['api'])).toBeUndefined();
    expect(userFromTokenReview({ ...status, audiences: ['elsewhere'] }, [])).toMatchObject({ username: 'jane' });
    expect(userFromTokenReview({ authenticated: false, error: 'no' }, [])).toBeUndefined();
    expect(userFromTokenReview({ authenticated: true, user: {} }, [])).toBeUndefined();
  });

  it('posts a TokenReview of its version and caches both answers for the TTL', async () => {
    let now = 1_000;
    const posted: Array<{ apiVersion: string; spec: { token: string; audiences?: string[] } }> = [];
    const a = new WebhookTokenAuthenticator({
      version: 'v1beta1',
      cacheTtlMs: 120_000,
      audiences: ['api'],
      now: () => now,
      post: (review) => {
        const r = review as (typeof posted)[number];
        posted.push(r);
        const ok = r.spec.token === 'good';
        return Promise.resolve({
          status: 200,
          body: { apiVersion: r.apiVersion, kind: 'TokenReview', status: ok ? { authenticated: true, user: { username: 'jane' } } : { authenticated: false } },
        });
      },
    });
    expect(await a.authenticate(bearer('good'))).toEqual({ username: 'jane', groups: [] });
    expect(await a.authenticate(bearer('bad'))).toBeUndefined();
    expect(await a.authenticate(bearer('good'))).toEqual({ username: 'jane', groups: [] });
    expect(await a.authenticate(bearer('bad'))).toBeUndefined();
    expect(posted.map((p) => p.spec.token)).toEqual(['good', 'bad']);
    expect(posted[0]).toMatchObject({ apiVersion: 'authentication.k8s.io/v1beta1', kind: 'TokenReview', spec: { audiences: ['api'] } });
    now += 120_001;
    await a.authenticate(bearer('good'));
    expect(posted).toHaveLength(3);
    expect(await a.authenticate({ headers: {} })).toBeUndefined();
  });

  it('a failing webhook or an answer of another version is a 401, not cached', async () => {
    let calls = 0;
    const a = new WebhookTokenAuthenticator({
      version: 'v1',
      cacheTtlMs: 120_000,
      post: () => {
        calls++;
        return Promise.resolve({
          status: 200,
          body: { apiVersion: 'authentication.k8s.io/v1beta1', kind: 'TokenReview', status: { authenticated: true, user: { username: 'x' } } },
        });
      },
    });
    await expect(a.authenticate(bearer('t'))).rejects.toMatchObject({ code: 401 });
    await expect(a.authenticate(bearer('t'))).rejects.toMatchObject({ code: 401 });
    expect(calls).toBe(2);
  });
});
