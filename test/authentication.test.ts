/**
 * The authentication methods end to end, against real processes: static token file, an
 * authenticating front proxy (its own CA), an OIDC provider and a TokenReview webhook started
 * here on 127.0.0.1 with TLS, and --anonymous-auth. The servers run with
 * --authorization-mode=AlwaysDeny, so the identity a request got shows in the 403 message
 * (`User "x" cannot ...`); the main one with --anonymous-auth=false, so a request that no
 * method authenticated is a 401 there.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { base64url, exportJWK, exportSPKI, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose';
import { ensurePki, issueClientCertificate } from '@app/pki';
import { kubectl, request, startServer, type ServerHandle } from './support/server.js';

const NAMESPACES = '/api/v1/namespaces';

/** An HTTPS server on 127.0.0.1 answering with `handle`; resolves once it listens. */
async function listen(
  tls: https.ServerOptions,
  handle: (path: string, body: string, req: import('node:http').IncomingMessage) => { status: number; body: unknown },
): Promise<{ server: https.Server; url: string }> {
  const server = https.createServer(tls, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const out = handle(req.url ?? '/', Buffer.concat(chunks).toString('utf8'), req);
      res.writeHead(out.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(out.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `https://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const close = (s?: https.Server): Promise<void> => new Promise((resolve) => (s ? s.close(() => resolve()) : resolve()));

describe('authentication', () => {
  let dir: string;
  let server: ServerHandle;
  let idp: { server: https.Server; url: string };
  let webhook: { server: https.Server; url: string };
  let proxy: { certPem: string; keyPem: string };
  let strangerProxy: { certPem: string; keyPem: string };
  /** The front proxy's CA (the --requestheader-client-ca-file). */
  let proxyCaCert: string;
  let tokenKubeconfig: string;
  let signingKey: CryptoKey;
  let publicPem: string;
  const webhookCalls = new Map<string, number>();
  /** Credentials the tests sent, none of which may show in the server's output. */
  const sent: string[] = ['static-good', 'static-bad', 'webhook-good', 'webhook-denied', 'webhook-flaky', 'webhook-broken'];

  const sign = (claims: JWTPayload, opts: { alg?: string; key?: CryptoKey | Uint8Array; exp?: number } = {}): Promise<string> => {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ iss: idp.url, aud: 'kapi', ...claims })
      .setProtectedHeader({ alg: opts.alg ?? 'RS256', kid: 'k1' })
      .setIssuedAt(now - 60)
      .setExpirationTime(opts.exp ?? now + 600)
      .sign(opts.key ?? signingKey);
  };
  /** The identity of a request through raw HTTPS, read from AlwaysDeny's answer; `401` when refused by authentication. */
  const identityOf = async (opts: Parameters<typeof request>[3], path = NAMESPACES): Promise<string> => {
    const r = await request(server, 'GET', path, opts);
    if (r.status === 401) return '401';
    expect(r.status).toBe(403);
    return /User "([^"]*)"/.exec(r.json<{ message: string }>().message)![1]!;
  };
  const tokenCli = (token: string, args: string[] = ['get', '--raw', NAMESPACES]) =>
    kubectl({ kubeconfig: tokenKubeconfig, kubectlCacheDir: server.kubectlCacheDir, homeDir: server.homeDir }, ['--token', token, ...args], {
      expectFail: 'any',
    });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kapi-authn-'));
    // The identity provider's and webhook's TLS, and the front proxy's client CA: two CAs of their own.
    const idpPki = await ensurePki(join(dir, 'idp'), { hosts: ['127.0.0.1'] });
    const proxyPki = await ensurePki(join(dir, 'proxy'), { hosts: ['127.0.0.1'] });
    proxyCaCert = proxyPki.caCert;
    proxy = await issueClientCertificate(proxyPki.dir, 'front-proxy');
    strangerProxy = await issueClientCertificate(proxyPki.dir, 'someone-else');
    const tls = { cert: await readFile(idpPki.servingCert, 'utf8'), key: await readFile(idpPki.servingKey, 'utf8') };

    const keys = await generateKeyPair('RS256', { extractable: true });
    signingKey = keys.privateKey;
    publicPem = await exportSPKI(keys.publicKey);
    const jwk = { ...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    idp = await listen(tls, (path) => {
      if (path === '/.well-known/openid-configuration') return { status: 200, body: { issuer: idp.url, jwks_uri: `${idp.url}/keys` } };
      if (path === '/keys') return { status: 200, body: { keys: [jwk] } };
      return { status: 404, body: {} };
    });

    const webhookCa = await readFile(idpPki.caCert, 'utf8');
    webhook = await listen({ ...tls, ca: webhookCa, requestCert: true, rejectUnauthorized: true }, (_path, body) => {
      const review = JSON.parse(body) as { apiVersion: string; spec: { token: string } };
      const calls = (webhookCalls.get(review.spec.token) ?? 0) + 1;
      webhookCalls.set(review.spec.token, calls);
      // webhook-flaky fails twice (transient: retried), webhook-broken always with a 503 (final).
      if (review.spec.token === 'webhook-flaky' && calls <= 2) return { status: 500, body: { message: 'try again' } };
      if (review.spec.token === 'webhook-broken') return { status: 503, body: { message: 'down for maintenance' } };
      const username = { 'webhook-good': 'webhook-user', 'webhook-flaky': 'flaky-user' }[review.spec.token];
      return {
        status: 200,
        body: {
          apiVersion: review.apiVersion,
          kind: 'TokenReview',
          status: username ? { authenticated: true, user: { username, groups: ['wh'] } } : { authenticated: false, error: 'unknown token' },
        },
      };
    });
    const apiClient = await issueClientCertificate(idpPki.dir, 'kube-apiserver');
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const webhookConfig = join(dir, 'webhook.kubeconfig');
    await writeFile(
      webhookConfig,
      [
        'apiVersion: v1',
        'kind: Config',
        `clusters: [{name: authn, cluster: {server: "${webhook.url}/authenticate", certificate-authority: idp/ca.crt}}]`,
        `users: [{name: apiserver, user: {client-certificate-data: ${b64(apiClient.certPem)}, client-key-data: ${b64(apiClient.keyPem)}}}]`,
        'contexts: [{name: webhook, context: {cluster: authn, user: apiserver}}]',
        'current-context: webhook',
      ].join('\n'),
    );
    const tokens = join(dir, 'tokens.csv');
    await writeFile(tokens, 'static-good,static-user,uid-1,"dev,qa"\n');

    server = await startServer({
      args: [
        '--authorization-mode=AlwaysDeny',
        '--anonymous-auth=false',
        `--token-auth-file=${tokens}`,
        `--requestheader-client-ca-file=${proxyPki.caCert}`,
        '--requestheader-allowed-names=front-proxy',
        '--requestheader-username-headers=X-Remote-User',
        '--requestheader-group-headers=X-Remote-Group',
        '--requestheader-extra-headers-prefix=X-Remote-Extra-',
        `--oidc-issuer-url=${idp.url}`,
        '--oidc-client-id=kapi',
        '--oidc-groups-claim=groups',
        `--oidc-ca-file=${idpPki.caCert}`,
        `--authentication-token-webhook-config-file=${webhookConfig}`,
        '--authentication-token-webhook-cache-ttl=3s',
      ],
    });
    tokenKubeconfig = join(server.harnessDir, 'token.kubeconfig');
    await writeFile(
      tokenKubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        `clusters: [{name: kapi, cluster: {server: "${server.url}", certificate-authority-data: ${b64(server.caPem)}}}]`,
        'users: [{name: nobody, user: {}}]',
        'contexts: [{name: kapi, context: {cluster: kapi, user: nobody}}]',
        'current-context: kapi',
      ].join('\n'),
    );
  });

  afterAll(async () => {
    await server?.cleanup();
    await close(idp?.server);
    await close(webhook?.server);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  describe('static token file', () => {
    it('a listed token is its user, through kubectl and raw HTTPS', async () => {
      const r = await tokenCli('static-good');
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('User "static-user" cannot list resource "namespaces" in API group "" at the cluster scope');
      expect(await identityOf({ identity: 'anonymous', token: 'static-good' })).toBe('static-user');
    });

    it('an unknown token is a 401, never a fallback to anonymous, and the token is not echoed', async () => {
      const r = await tokenCli('static-bad');
      expect(r.stderr).toContain('Unauthorized');
      const raw = await request(server, 'GET', '/version', { identity: 'anonymous', token: 'static-bad' });
      expect(raw.status).toBe(401);
      expect(raw.body).not.toContain('static-bad');
    });
  });

  describe('authenticating proxy', () => {
    const headers = { 'X-Remote-User': 'proxied-user', 'X-Remote-Group': 'team-a' };

    it("honours the headers on a connection with the proxy's client certificate", async () => {
      expect(await identityOf({ identity: proxy, headers })).toBe('proxied-user');
    });

    it('ignores them without it, or from a certificate of the CA whose name is not allowed', async () => {
      expect(await identityOf({ identity: 'anonymous', headers })).toBe('401');
      expect(await identityOf({ identity: strangerProxy, headers })).toBe('401');
      // The admin's certificate is the cluster CA's: the admin, not the named user.
      expect((await request(server, 'GET', NAMESPACES, { headers })).status).toBe(200);
    });

    it("the proxy's certificate alone is no user (it chains to the proxy CA, not the client CA)", async () => {
      expect(await identityOf({ identity: proxy })).toBe('401');
    });

    describe('with --requestheader-uid-headers (the RemoteRequestHeaderUID feature gate)', () => {
      let uidServer: ServerHandle;
      const review = async (s: ServerHandle, h: Record<string, string>) => {
        const r = await request(s, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
          identity: proxy,
          headers: h,
          body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
        });
        expect(r.status).toBe(201);
        return r.json<{ status: { userInfo: Record<string, unknown> } }>().status.userInfo;
      };
      beforeAll(async () => {
        uidServer = await startServer({
          args: [
            '--feature-gates=RemoteRequestHeaderUID=true',
            `--requestheader-client-ca-file=${proxyCaCert}`,
            '--requestheader-allowed-names=front-proxy',
            '--requestheader-username-headers=X-Remote-User',
            '--requestheader-uid-headers=X-Remote-Uid',
            '--requestheader-group-headers=X-Remote-Group',
          ],
        });
      });
      afterAll(async () => {
        await uidServer?.cleanup();
      });

      it("takes the user's UID from the header the proxy sets (SelfSubjectReview shows it)", async () => {
        expect(await review(uidServer, { ...headers, 'X-Remote-Uid': 'uid-42' })).toEqual({
          username: 'proxied-user',
          uid: 'uid-42',
          groups: ['team-a', 'system:authenticated'],
        });
        // Without the header the user has no UID; the servers without the flag never read one.
        expect((await review(uidServer, headers)).uid).toBeUndefined();
        expect(await identityOf({ identity: proxy, headers: { ...headers, 'X-Remote-Uid': 'uid-42' } })).toBe('proxied-user');
      });
    });
  });

  describe('OIDC', () => {
    it('a good id_token is its prefixed subject, through kubectl and raw HTTPS', async () => {
      const token = await sign({ sub: 'alice', groups: ['dev'] });
      sent.push(token);
      const r = await tokenCli(token);
      expect(r.stderr).toContain(`User "${idp.url}#alice" cannot list resource "namespaces"`);
      expect(await identityOf({ identity: 'anonymous', token })).toBe(`${idp.url}#alice`);
    });

    it('expired, wrong audience, tampered, alg none and HS256 with the public key are 401', async () => {
      const now = Math.floor(Date.now() / 1000);
      const good = await sign({ sub: 'alice' });
      const [h, , s] = good.split('.');
      const bad = [
        await sign({ sub: 'alice' }, { exp: now - 30 }),
        await sign({ sub: 'alice', aud: 'someone-else' }),
        `${h}.${base64url.encode(JSON.stringify({ iss: idp.url, aud: 'kapi', sub: 'mallory', exp: now + 600 }))}.${s}`,
        `${base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${base64url.encode(JSON.stringify({ iss: idp.url, aud: 'kapi', sub: 'alice', exp: now + 600 }))}.`,
        await sign({ sub: 'alice' }, { alg: 'HS256', key: new TextEncoder().encode(publicPem) }),
      ];
      for (const token of bad) expect(await identityOf({ identity: 'anonymous', token })).toBe('401');
      const r = await tokenCli(bad[0]!);
      expect(r.stderr).toContain('Unauthorized');
    });
  });

  describe('webhook', () => {
    it("an allowed token is the webhook's user; a denied one is 401; both answers are cached for the TTL", async () => {
      expect(await identityOf({ identity: 'anonymous', token: 'webhook-good' })).toBe('webhook-user');
      expect(await identityOf({ identity: 'anonymous', token: 'webhook-good' })).toBe('webhook-user');
      expect(await identityOf({ identity: 'anonymous', token: 'webhook-denied' })).toBe('401');
      expect(await identityOf({ identity: 'anonymous', token: 'webhook-denied' })).toBe('401');
      expect(webhookCalls.get('webhook-good')).toBe(1);
      expect(webhookCalls.get('webhook-denied')).toBe(1);
      // Past the TTL (3s) the webhook is asked again.
      const deadline = Date.now() + 20_000;
      while (webhookCalls.get('webhook-good') === 1 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 250));
        expect(await identityOf({ identity: 'anonymous', token: 'webhook-good' })).toBe('webhook-user');
      }
      expect(webhookCalls.get('webhook-good')).toBe(2);
    });

    it('through kubectl', async () => {
      const r = await tokenCli('webhook-good');
      expect(r.stderr).toContain('User "webhook-user" cannot list resource "namespaces"');
    });

    it('a 500 is retried with backoff; a 503 without Retry-After is final', async () => {
      expect(await identityOf({ identity: 'anonymous', token: 'webhook-flaky' })).toBe('flaky-user');
      expect(webhookCalls.get('webhook-flaky')).toBe(3);
      expect(await identityOf({ identity: 'anonymous', token: 'webhook-broken' })).toBe('401');
      expect(webhookCalls.get('webhook-broken')).toBe(1);
    });
  });

  it("no credential used above appears in the server's output", () => {
    const out = server.stdout + server.stderr;
    expect(sent.length).toBeGreaterThan(4);
    for (const secret of sent) expect(out).not.toContain(secret);
  });
});

describe('authentication flags at start', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kapi-authn-flags-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a malformed token file stops the start, naming the flag and the line but not the token', async () => {
    const tokens = join(dir, 'tokens.csv');
    await writeFile(tokens, 'good-token,alice,u1\nsecret-token,bob\n');
    let message = '';
    try {
      const s = await startServer({ args: [`--token-auth-file=${tokens}`], readyTimeoutMs: 15_000 });
      await s.cleanup();
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain(`--token-auth-file=${tokens}: line 2: must have at least 3 columns`);
    expect(message).not.toContain('secret-token');
  });

  describe.each([
    ['false', { version: '401', api: '401' }],
    ['true', { version: 'system:anonymous', api: 'system:anonymous' }],
  ])('--anonymous-auth=%s', (value, want) => {
    let s: ServerHandle;
    beforeAll(async () => {
      const tokens = join(dir, `tokens-${value}.csv`);
      await writeFile(tokens, 'known-token,carol,u3\n');
      s = await startServer({ args: ['--authorization-mode=AlwaysDeny', `--anonymous-auth=${value}`, `--token-auth-file=${tokens}`] });
    });
    afterAll(async () => {
      await s?.cleanup();
    });

    it('decides which paths a request without credentials reaches; the authorizer still decides the rest', async () => {
      for (const [path, expected] of [
        ['/version', want.version],
        [NAMESPACES, want.api],
      ] as const) {
        const r = await request(s, 'GET', path, { identity: 'anonymous' });
        const who = r.status === 401 ? '401' : /User "([^"]*)"/.exec(r.json<{ message: string }>().message)?.[1];
        expect(r.status === 401 || r.status === 403).toBe(true);
        expect(who).toBe(expected);
      }
      // An invalid bearer token is a 401 whatever anonymous access allows; the admin (system:masters) is unaffected.
      expect((await request(s, 'GET', '/version', { identity: 'anonymous', token: 'unknown-token' })).status).toBe(401);
      expect((await request(s, 'GET', NAMESPACES)).status).toBe(200);
    });
  });

  describe.each([
    ['RBAC (the default)', [], { version: 200, api: 403, who: 'system:anonymous' }],
    ['AlwaysAllow', ['--authorization-mode=AlwaysAllow'], { version: 200, api: 401, who: undefined }],
  ])('--anonymous-auth not given, --authorization-mode %s', (_mode, args, want) => {
    let s: ServerHandle;
    beforeAll(async () => {
      s = await startServer({ args: [...args] });
    });
    afterAll(async () => {
      await s?.cleanup();
    });

    it('lets requests without credentials in as system:anonymous where RBAC limits them, and only to the public info paths under AlwaysAllow', async () => {
      const version = await request(s, 'GET', '/version', { identity: 'anonymous' });
      const api = await request(s, 'GET', NAMESPACES, { identity: 'anonymous' });
      const who = /User "([^"]*)" cannot list resource "namespaces"/.exec(api.json<{ message: string }>().message)?.[1];
      expect([version.status, api.status, who]).toEqual([want.version, want.api, want.who]);
    });
  });
});
