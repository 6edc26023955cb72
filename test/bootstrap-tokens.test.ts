/**
 * Bootstrap tokens end to end, against the real server started with
 * --enable-bootstrap-token-auth, --authorization-mode=RBAC and --anonymous-auth=true: token
 * Secrets created with kubectl authenticate (`kubectl auth whoami --token`), every broken one
 * is a 401, the token cleaner deletes expired Secrets, and a client without credentials reads
 * kube-public/cluster-info and verifies its jws-kubeconfig-<id> signature with the token. The
 * verification is written from RFC 7515 with node:crypto's HMAC (not with jose, not with the
 * server's signer).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import * as https from 'node:https';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { kubectl, request, startServer, type ServerHandle } from './support/server.js';

const SECRETS = '/api/v1/namespaces/kube-system/secrets';
const CLUSTER_INFO = '/api/v1/namespaces/kube-public/configmaps/cluster-info';

/** A bootstrap token Secret manifest (stringData, as `kubeadm token create` writes it). */
function tokenSecret(id: string, secret: string, data: Record<string, string> = {}): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `bootstrap-token-${id}`, namespace: 'kube-system' },
    type: 'bootstrap.kubernetes.io/token',
    stringData: { 'token-id': id, 'token-secret': secret, 'usage-bootstrap-authentication': 'true', ...data },
  });
}

/** Polls `check` every 100 ms until it returns true, at most `ms`; returns whether it did. */
async function eventually(check: () => Promise<boolean>, ms = 20_000): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** GET over HTTPS trusting only the cluster CA, with no client certificate and no token. */
function getWithoutCredentials(server: ServerHandle, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get(new URL(path, server.url), { ca: server.caPem, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
  });
}

/**
 * Verifies a detached JWS compact serialization (RFC 7515 section 7.1 with the payload left out,
 * appendix F) over `content` with HS256 (RFC 7518 section 3.2) keyed with `token`: the signing
 * input is ASCII(BASE64URL(header) || '.' || BASE64URL(payload)).
 */
function verifyDetachedJws(jws: string, content: string, token: string): { header: Record<string, unknown>; valid: boolean } {
  const parts = jws.split('.');
  if (parts.length !== 3 || parts[1] !== '') return { header: {}, valid: false };
  const [header, , signature] = parts as [string, string, string];
  const decoded = JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as Record<string, unknown>;
  const input = `${header}.${Buffer.from(content, 'utf8').toString('base64url')}`;
  const expected = createHmac('sha256', Buffer.from(token, 'utf8')).update(input, 'ascii').digest();
  const got = Buffer.from(signature, 'base64url');
  return { header: decoded, valid: decoded.alg === 'HS256' && got.length === expected.length && timingSafeEqual(got, expected) };
}

describe('bootstrap tokens', () => {
  let server: ServerHandle;
  let tokenKubeconfig: string;
  const sent: string[] = [];

  const create = async (id: string, secret: string, data: Record<string, string> = {}) => {
    sent.push(secret);
    await kubectl(server, ['apply', '-f', '-'], { input: tokenSecret(id, secret, data) });
  };
  /** `kubectl auth whoami --token` with a kubeconfig that has the CA and nothing else. */
  const whoami = (token: string) =>
    kubectl(
      { kubeconfig: tokenKubeconfig, kubectlCacheDir: server.kubectlCacheDir, homeDir: server.homeDir },
      ['--token', token, 'auth', 'whoami', '-o', 'json'],
      {
        expectFail: 'any',
      },
    );
  const status = async (token: string) => (await request(server, 'GET', '/api', { identity: 'anonymous', token })).status;

  beforeAll(async () => {
    server = await startServer({ args: ['--enable-bootstrap-token-auth', '--authorization-mode=RBAC', '--anonymous-auth=true'] });
    tokenKubeconfig = join(server.harnessDir, 'token.kubeconfig');
    await writeFile(
      tokenKubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        `clusters: [{name: kapi, cluster: {server: "${server.url}", certificate-authority-data: ${Buffer.from(server.caPem).toString('base64')}}}]`,
        'users: [{name: nobody, user: {}}]',
        'contexts: [{name: kapi, context: {cluster: kapi, user: nobody}}]',
        'current-context: kapi',
      ].join('\n'),
    );
  });

  afterAll(async () => {
    await server?.cleanup();
  });

  it('kubectl auth whoami with a token shows system:bootstrap:<id>, system:bootstrappers and the extra groups', async () => {
    await create('abc123', '0123456789abcdef', { 'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token' });
    const r = await whoami('abc123.0123456789abcdef');
    expect(r.code).toBe(0);
    const info = (JSON.parse(r.stdout) as { status: { userInfo: { username: string; groups: string[] } } }).status.userInfo;
    expect(info.username).toBe('system:bootstrap:abc123');
    expect(info.groups).toEqual(['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token', 'system:authenticated']);
    // A TokenReview of the token gives the same user; of a wrong secret, none.
    const review = async (token: string) =>
      (
        await request(server, 'POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
          body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
        })
      ).json<{ status: { authenticated?: boolean; user?: { username: string } } }>().status;
    expect(await review('abc123.0123456789abcdef')).toMatchObject({ authenticated: true, user: { username: 'system:bootstrap:abc123' } });
    expect((await review('abc123.0123456789abcdee')).authenticated).toBeFalsy();
    // RBAC then decides as for anyone: the bootstrap user may not list Secrets.
    const denied = await request(server, 'GET', SECRETS, { identity: 'anonymous', token: 'abc123.0123456789abcdef' });
    expect(denied.status).toBe(403);
    expect(denied.json<{ message: string }>().message).toContain('User "system:bootstrap:abc123" cannot list resource "secrets"');
  });

  it('a wrong secret, an expired token, usage-bootstrap-authentication not "true" and a bad extra group are 401, not anonymous', async () => {
    await create('bad001', 'aaaaaaaaaaaaaaaa', { expiration: '2020-01-01T00:00:00Z' });
    await create('bad002', 'bbbbbbbbbbbbbbbb', { 'usage-bootstrap-authentication': 'false' });
    await create('bad003', 'cccccccccccccccc', { 'auth-extra-groups': 'system:bootstrappers:ok,system:masters' });
    await create('good01', 'dddddddddddddddd');
    expect(await status('good01.dddddddddddddddd')).toBe(200);
    for (const token of [
      'good01.ddddddddddddddde',
      'bad001.aaaaaaaaaaaaaaaa',
      'bad002.bbbbbbbbbbbbbbbb',
      'bad003.cccccccccccccccc',
      'nosuch.dddddddddddddddd',
    ]) {
      expect(await status(token)).toBe(401);
    }
    const cli = await whoami('bad003.cccccccccccccccc');
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toContain('Unauthorized');
  });

  it('a deleted token Secret stops authenticating at once', async () => {
    await create('gone01', 'eeeeeeeeeeeeeeee');
    expect(await status('gone01.eeeeeeeeeeeeeeee')).toBe(200);
    await kubectl(server, ['delete', 'secret', '-n', 'kube-system', 'bootstrap-token-gone01']);
    expect(await eventually(async () => (await status('gone01.eeeeeeeeeeeeeeee')) === 401, 2000)).toBe(true);
  });

  it('the token cleaner deletes an expired token Secret, and one that expires later at its expiration', async () => {
    await create('old001', 'ffffffffffffffff', { expiration: '2020-01-01T00:00:00Z' });
    const soon = new Date(Date.now() + 3000).toISOString().replace(/\.\d+Z$/, 'Z');
    await create('soon01', 'gggggggggggggggg', { expiration: soon });
    const exists = async (id: string) => (await request(server, 'GET', `${SECRETS}/bootstrap-token-${id}`)).status === 200;
    expect(await eventually(async () => !(await exists('old001')))).toBe(true);
    expect(await status('soon01.gggggggggggggggg')).toBe(200);
    expect(await eventually(async () => !(await exists('soon01')))).toBe(true);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(soon));
    expect(await status('soon01.gggggggggggggggg')).toBe(401);
    // Tokens without an expiration stay.
    expect(await exists('good01')).toBe(true);
  });

  it('a client without credentials reads cluster-info and verifies the signature of a signing token; it goes with the token', async () => {
    const token = 'sign01.hhhhhhhhhhhhhhhh';
    await create('sign01', 'hhhhhhhhhhhhhhhh', { 'usage-bootstrap-signing': 'true' });
    await create('nosign', 'iiiiiiiiiiiiiiii', { 'usage-bootstrap-signing': 'false' });
    let data: Record<string, string> = {};
    const read = async () => {
      const r = await getWithoutCredentials(server, CLUSTER_INFO);
      expect(r.status).toBe(200);
      data = (JSON.parse(r.body) as { data: Record<string, string> }).data;
      return data;
    };
    expect(await eventually(async () => (await read())['jws-kubeconfig-sign01'] !== undefined)).toBe(true);
    expect(data['jws-kubeconfig-nosign']).toBeUndefined();

    const kubeconfig = parseYaml(data.kubeconfig!) as {
      clusters: Array<{ cluster: { server: string; 'certificate-authority-data': string } }>;
      users?: unknown;
    };
    expect(kubeconfig.clusters).toHaveLength(1);
    expect(kubeconfig.clusters[0]!.cluster.server).toBe(server.url);
    expect(Buffer.from(kubeconfig.clusters[0]!.cluster['certificate-authority-data'], 'base64').toString('utf8')).toBe(server.caPem);
    expect(kubeconfig.users ?? null).toBeNull();

    const ok = verifyDetachedJws(data['jws-kubeconfig-sign01']!, data.kubeconfig!, token);
    expect(ok.header).toEqual({ alg: 'HS256', kid: 'sign01' });
    expect(ok.valid).toBe(true);
    expect(verifyDetachedJws(data['jws-kubeconfig-sign01']!, data.kubeconfig!, 'sign01.hhhhhhhhhhhhhhhi').valid).toBe(false);
    expect(verifyDetachedJws(data['jws-kubeconfig-sign01']!, `${data.kubeconfig!} `, token).valid).toBe(false);

    // Other objects stay closed to a client without credentials.
    expect((await getWithoutCredentials(server, '/api/v1/namespaces/kube-public/configmaps')).status).toBe(403);

    await kubectl(server, ['delete', 'secret', '-n', 'kube-system', 'bootstrap-token-sign01']);
    expect(await eventually(async () => (await read())['jws-kubeconfig-sign01'] === undefined)).toBe(true);
  });

  it('a changed kubeconfig is signed again', async () => {
    await create('sign02', 'jjjjjjjjjjjjjjjj', { 'usage-bootstrap-signing': 'true' });
    const get = async () => (JSON.parse((await getWithoutCredentials(server, CLUSTER_INFO)).body) as { data: Record<string, string> }).data;
    expect(await eventually(async () => (await get())['jws-kubeconfig-sign02'] !== undefined)).toBe(true);
    const edited = `${(await get()).kubeconfig}# edited\n`;
    await kubectl(server, ['patch', 'configmap', '-n', 'kube-public', 'cluster-info', '--type=merge', '-p', JSON.stringify({ data: { kubeconfig: edited } })]);
    expect(
      await eventually(async () => {
        const d = await get();
        return d.kubeconfig === edited && verifyDetachedJws(d['jws-kubeconfig-sign02']!, edited, 'sign02.jjjjjjjjjjjjjjjj').valid;
      }),
    ).toBe(true);
  });

  it('never writes a token secret to its output', () => {
    for (const s of sent) {
      expect(server.stdout).not.toContain(s);
      expect(server.stderr).not.toContain(s);
    }
  });
});
