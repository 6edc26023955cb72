/**
 * Service-account tokens end to end on one real server: `kubectl create token` (kubectl 1.32
 * sends the TokenRequest in protobuf; 1.29 in JSON) and `kubectl auth whoami --token`; audiences
 * and durations; forged, expired and misdirected tokens refused with 401; tokens of deleted
 * service accounts and bound Secrets revoked; legacy Secret tokens filled in by the controller
 * and revoked with their Secret; the `default` service account and `kube-root-ca.crt` in every
 * namespace, restored after deletion or edits; under RBAC, bindings to a service account and
 * its impersonation refused until granted.
 */
import { createHmac } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importPKCS8, SignJWT } from 'jose';
import { encodeProtobuf } from '@app/apimachinery';
import { kubectl, request, startServer, waitFor, type ServerHandle } from './support/server.js';

const ISSUER = 'https://kubernetes.default.svc.cluster.local';
const NS = 'tokens';

interface Claims {
  iss: string;
  aud: string[];
  exp: number;
  iat: number;
  sub: string;
  'kubernetes.io'?: { namespace: string; serviceaccount: { name: string; uid: string }; secret?: { name: string; uid: string } };
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as Claims;

describe('service-account tokens', () => {
  let server: ServerHandle;
  let tokenKubeconfig: string;
  let saKeyPem: string;
  let saPubPem: string;

  /** The user a token authenticates as (SelfSubjectReview), or the HTTP status when refused. */
  const whoami = async (token: string): Promise<{ username: string; groups: string[]; extra?: Record<string, string[]> } | number> => {
    const r = await request(server, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      identity: 'anonymous',
      token,
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    if (r.status !== 201) return r.status;
    return r.json<{ status: { userInfo: { username: string; groups: string[]; extra?: Record<string, string[]> } } }>().status.userInfo;
  };
  const createToken = async (args: string[]) => (await kubectl(server, ['create', 'token', '-n', NS, ...args])).stdout.trim();
  const refused = async (token: string) => {
    const r = await request(server, 'GET', `/api/v1/namespaces/${NS}/configmaps`, { identity: 'anonymous', token });
    expect(r.status).toBe(401);
    expect(r.json<{ kind: string; reason: string }>()).toMatchObject({ kind: 'Status', reason: 'Unauthorized' });
  };

  beforeAll(async () => {
    server = await startServer({ args: ['--authorization-mode=AlwaysAllow'] });
    saKeyPem = await readFile(join(server.dataDir, 'pki', 'sa.key'), 'utf8');
    saPubPem = await readFile(join(server.dataDir, 'pki', 'sa.pub'), 'utf8');
    const caPem = await readFile(join(server.dataDir, 'pki', 'ca.crt'), 'utf8');
    tokenKubeconfig = join(server.harnessDir, 'token.kubeconfig');
    await writeFile(
      tokenKubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        `clusters: [{name: kapi, cluster: {server: "${server.url}", certificate-authority-data: ${Buffer.from(caPem).toString('base64')}}}]`,
        'users: [{name: nobody, user: {}}]',
        'contexts: [{name: kapi, context: {cluster: kapi, user: nobody}}]',
        'current-context: kapi',
      ].join('\n'),
    );
    await kubectl(server, ['create', 'namespace', NS]);
    await kubectl(server, ['create', 'serviceaccount', 'app', '-n', NS]);
  });

  afterAll(async () => {
    await server?.cleanup();
  });

  it('a namespace gets the default service account and kube-root-ca.crt, restored when deleted or edited', async () => {
    const caPem = await readFile(join(server.dataDir, 'pki', 'ca.crt'), 'utf8');
    const sa = async () => request(server, 'GET', `/api/v1/namespaces/${NS}/serviceaccounts/default`);
    const cm = async () => request(server, 'GET', `/api/v1/namespaces/${NS}/configmaps/kube-root-ca.crt`);
    const first = await waitFor('default service account', async () =>
      (await sa()).status === 200 ? (await sa()).json<{ metadata: { uid: string } }>() : undefined,
    );
    await waitFor('kube-root-ca.crt', async () => (await cm()).status === 200);
    expect((await cm()).json<{ data: Record<string, string> }>().data).toEqual({ 'ca.crt': caPem });
    await kubectl(server, ['delete', 'serviceaccount', 'default', '-n', NS]);
    await kubectl(server, ['delete', 'configmap', 'kube-root-ca.crt', '-n', NS]);
    await waitFor('default re-created', async () => {
      const r = await sa();
      return r.status === 200 && r.json<{ metadata: { uid: string } }>().metadata.uid !== first.metadata.uid;
    });
    await waitFor('kube-root-ca.crt re-created', async () => (await cm()).status === 200);
    await kubectl(server, ['patch', 'configmap', 'kube-root-ca.crt', '-n', NS, '--type=merge', '-p', '{"data":{"ca.crt":"forged","extra":"x"}}']);
    await waitFor('kube-root-ca.crt restored', async () => JSON.stringify((await cm()).json<{ data: unknown }>().data) === JSON.stringify({ 'ca.crt': caPem }));
  });

  it('kubectl create token (protobuf from 1.32, JSON from 1.29) and auth whoami --token show the service account', async () => {
    const token = await createToken(['app']);
    const c = claimsOf(token);
    expect(c).toMatchObject({ iss: ISSUER, aud: [ISSUER], sub: `system:serviceaccount:${NS}:app` });
    expect(c.exp - c.iat).toBe(3600);
    const json = (await kubectl(server, ['create', 'token', 'app', '-n', NS], { bin: '/usr/lib/google-cloud-sdk/bin/kubectl.1.29' })).stdout.trim();
    expect(claimsOf(json).sub).toBe(`system:serviceaccount:${NS}:app`);
    const out = await kubectl(server, ['--kubeconfig', tokenKubeconfig, '--token', token, 'auth', 'whoami', '-o', 'json']);
    const user = JSON.parse(out.stdout) as { status: { userInfo: { username: string; groups: string[]; extra: Record<string, string[]> } } };
    expect(user.status.userInfo.username).toBe(`system:serviceaccount:${NS}:app`);
    expect(user.status.userInfo.groups).toEqual(['system:serviceaccounts', `system:serviceaccounts:${NS}`, 'system:authenticated']);
    expect(user.status.userInfo.extra['authentication.kubernetes.io/credential-id']).toEqual([`JTI=${(claimsOf(token) as unknown as { jti: string }).jti}`]);
  });

  it('honours --audience and --duration; a token for another audience is refused by the API', async () => {
    const vault = await createToken(['app', '--audience', 'vault', '--duration', '20m']);
    expect(claimsOf(vault).aud).toEqual(['vault']);
    expect(claimsOf(vault).exp - claimsOf(vault).iat).toBe(1200);
    await refused(vault);
    // A TokenReview for that audience accepts it (how another service checks the tokens it is given).
    const review = async (audiences?: string[]) =>
      (
        await request(server, 'POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
          body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: vault, audiences } },
        })
      ).json<{ status: { authenticated: boolean; user?: { username?: string } } }>().status;
    expect(await review(['vault'])).toMatchObject({ authenticated: true, user: { username: `system:serviceaccount:${NS}:app` } });
    expect((await review()).authenticated).toBe(false);
    const both = await createToken(['app', '--audience', 'vault', '--audience', ISSUER]);
    expect(typeof (await whoami(both))).toBe('object');
    const short = await kubectl(server, ['create', 'token', 'app', '-n', NS, '--duration', '5m'], { expectFail: true });
    expect(short.stderr).toContain('spec.expirationSeconds: Invalid value: 300: may not specify a duration less than 10 minutes');
  });

  it('takes a protobuf TokenRequest body', async () => {
    const body = encodeProtobuf(
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', metadata: {}, spec: { audiences: ['pb'], expirationSeconds: 1800 } },
      'k8s.io.api.authentication.v1.TokenRequest',
    );
    const r = await request(server, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts/app/token`, {
      body: Buffer.from(body),
      headers: { 'content-type': 'application/vnd.kubernetes.protobuf', accept: 'application/vnd.kubernetes.protobuf, application/json' },
    });
    expect(r.status).toBe(201);
    const out = r.json<{ spec: { audiences: string[]; expirationSeconds: number }; status: { token: string; expirationTimestamp: string } }>();
    expect(out.spec).toMatchObject({ audiences: ['pb'], expirationSeconds: 1800 });
    const c = claimsOf(out.status.token);
    expect(c.aud).toEqual(['pb']);
    expect(new Date(out.status.expirationTimestamp).getTime() / 1000).toBe(c.exp);
  });

  it('answers 404 for a missing service account and 400 for a kind tokens cannot be bound to', async () => {
    const missing = await kubectl(server, ['create', 'token', 'nobody', '-n', NS], { expectFail: true });
    expect(missing.stderr).toContain('serviceaccounts "nobody" not found');
    const r = await request(server, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts/app/token`, {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { boundObjectRef: { apiVersion: 'v1', kind: 'ConfigMap', name: 'x' } } },
    });
    expect(r.status).toBe(400);
    expect(r.json<{ message: string }>().message).toContain('supported kinds are Pod, Secret');
  });

  it('refuses a tampered payload, alg none, HS256 keyed with the public key, an expired token, another issuer and another audience', async () => {
    const good = await createToken(['app']);
    const [h, p, s] = good.split('.');
    const claims = claimsOf(good);
    await refused(`${h}.${b64({ ...claims, sub: 'system:serviceaccount:kube-system:admin' })}.${s}`);
    await refused(`${b64({ alg: 'none', typ: 'JWT' })}.${p}.`);
    const hs = `${b64({ alg: 'HS256', typ: 'JWT' })}.${p}`;
    await refused(`${hs}.${createHmac('sha256', saPubPem).update(hs).digest('base64url')}`);
    const key = await importPKCS8(saKeyPem, 'ES256');
    const sign = (over: Record<string, unknown>, iat: number, exp: number) =>
      new SignJWT({ ...claims, ...over, iat, exp, nbf: iat }).setProtectedHeader({ alg: 'ES256' }).sign(key);
    const now = Math.floor(Date.now() / 1000);
    expect(typeof (await whoami(await sign({}, now, now + 600)))).toBe('object');
    await refused(await sign({}, now - 7200, now - 3600));
    await refused(await sign({ iss: 'https://evil.example' }, now, now + 600));
    await refused(await sign({ aud: ['someone-else'] }, now, now + 600));
  });

  it('revokes the token of a deleted service account and of a deleted or re-created bound Secret', async () => {
    await kubectl(server, ['create', 'serviceaccount', 'short-lived', '-n', NS]);
    const saToken = await createToken(['short-lived']);
    expect(typeof (await whoami(saToken))).toBe('object');
    await kubectl(server, ['delete', 'serviceaccount', 'short-lived', '-n', NS]);
    await waitFor('token of the deleted service account refused', async () => (await whoami(saToken)) === 401);

    await kubectl(server, ['create', 'secret', 'generic', 'anchor', '-n', NS, '--from-literal=k=v']);
    const bound = await createToken(['app', '--bound-object-kind', 'Secret', '--bound-object-name', 'anchor']);
    expect(claimsOf(bound)['kubernetes.io']?.secret?.name).toBe('anchor');
    expect(typeof (await whoami(bound))).toBe('object');
    await kubectl(server, ['delete', 'secret', 'anchor', '-n', NS]);
    await waitFor('token of the deleted Secret refused', async () => (await whoami(bound)) === 401);
    await kubectl(server, ['create', 'secret', 'generic', 'anchor', '-n', NS, '--from-literal=k=v']);
    await waitFor('re-created Secret seen', async () => (await request(server, 'GET', `/api/v1/namespaces/${NS}/secrets/anchor`)).status === 200);
    expect(await whoami(bound)).toBe(401);
    const missing = await kubectl(server, ['create', 'token', 'app', '-n', NS, '--bound-object-kind', 'Secret', '--bound-object-name', 'nope'], {
      expectFail: true,
    });
    expect(missing.stderr).toContain('secrets "nope" not found');
  });

  it('fills a legacy token Secret, whose token works until the Secret is deleted; a Secret of a deleted account goes', async () => {
    await kubectl(server, ['create', 'serviceaccount', 'legacy', '-n', NS]);
    const secret = (name: string, sa: string) =>
      kubectl(server, ['apply', '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name, namespace: NS, annotations: { 'kubernetes.io/service-account.name': sa } },
          type: 'kubernetes.io/service-account-token',
        }),
      });
    await secret('legacy-token', 'legacy');
    const filled = await waitFor('legacy token filled in', async () => {
      const r = await request(server, 'GET', `/api/v1/namespaces/${NS}/secrets/legacy-token`);
      const o = r.json<{ data?: Record<string, string>; metadata: { annotations: Record<string, string> } }>();
      return o.data?.token ? o : undefined;
    });
    const dec = (k: string) => Buffer.from(filled.data![k], 'base64').toString();
    expect(dec('namespace')).toBe(NS);
    expect(dec('ca.crt')).toBe(await readFile(join(server.dataDir, 'pki', 'ca.crt'), 'utf8'));
    const sa = (await request(server, 'GET', `/api/v1/namespaces/${NS}/serviceaccounts/legacy`)).json<{ metadata: { uid: string } }>();
    expect(filled.metadata.annotations['kubernetes.io/service-account.uid']).toBe(sa.metadata.uid);
    const token = dec('token');
    expect(claimsOf(token).iss).toBe('kubernetes/serviceaccount');
    expect(await whoami(token)).toMatchObject({ username: `system:serviceaccount:${NS}:legacy` });
    await kubectl(server, ['delete', 'secret', 'legacy-token', '-n', NS]);
    await waitFor('legacy token refused', async () => (await whoami(token)) === 401);

    await secret('orphan-token', 'legacy');
    await waitFor('second legacy token filled in', async () => {
      const r = await request(server, 'GET', `/api/v1/namespaces/${NS}/secrets/orphan-token`);
      return !!r.json<{ data?: Record<string, string> }>().data?.token;
    });
    await kubectl(server, ['delete', 'serviceaccount', 'legacy', '-n', NS]);
    await waitFor(
      'Secret of the deleted account deleted',
      async () => (await request(server, 'GET', `/api/v1/namespaces/${NS}/secrets/orphan-token`)).status === 404,
    );
  });
});

describe('service-account tokens under --authorization-mode=RBAC', () => {
  let server: ServerHandle;
  beforeAll(async () => {
    server = await startServer({ args: ['--authorization-mode=RBAC'] });
    await kubectl(server, ['create', 'namespace', 'rbac-sa']);
    await kubectl(server, ['create', 'serviceaccount', 'reader', '-n', 'rbac-sa']);
  });
  afterAll(async () => {
    await server?.cleanup();
  });

  it('a RoleBinding naming the service account grants what its token may do', async () => {
    const token = (await kubectl(server, ['create', 'token', 'reader', '-n', 'rbac-sa'])).stdout.trim();
    const list = () => request(server, 'GET', '/api/v1/namespaces/rbac-sa/configmaps', { identity: 'anonymous', token });
    const denied = await list();
    expect(denied.status).toBe(403);
    expect(denied.json<{ message: string }>().message).toBe(
      'configmaps is forbidden: User "system:serviceaccount:rbac-sa:reader" cannot list resource "configmaps" in API group "" in the namespace "rbac-sa"',
    );
    await kubectl(server, ['create', 'role', 'cm-reader', '-n', 'rbac-sa', '--verb=list', '--resource=configmaps']);
    await kubectl(server, ['create', 'rolebinding', 'reader-cm', '-n', 'rbac-sa', '--role=cm-reader', '--serviceaccount=rbac-sa:reader']);
    await waitFor('the service account allowed', async () => (await list()).status === 200);
    // The group every service account of the namespace is in works as a subject too.
    await kubectl(server, ['create', 'rolebinding', 'all-sa-cm', '-n', 'default', '--clusterrole=view', '--group=system:serviceaccounts:rbac-sa']);
    await waitFor(
      'the namespace group allowed',
      async () => (await request(server, 'GET', '/api/v1/namespaces/default/configmaps', { identity: 'anonymous', token })).status === 200,
    );
  });
  it('refuses a service account impersonation until a ClusterRoleBinding grants the impersonate verb', async () => {
    await kubectl(server, ['create', 'serviceaccount', 'ci', '-n', 'rbac-sa']);
    const token = (await kubectl(server, ['create', 'token', 'ci', '-n', 'rbac-sa'])).stdout.trim();
    const asBob = () =>
      request(server, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
        identity: 'anonymous',
        token,
        headers: { 'impersonate-user': 'bob' },
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
      });
    const refused = await asBob();
    expect(refused.status).toBe(403);
    expect(refused.json<{ message: string }>().message).toBe(
      'users "bob" is forbidden: User "system:serviceaccount:rbac-sa:ci" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
    await kubectl(server, ['create', 'clusterrole', 'impersonate-bob', '--verb=impersonate', '--resource=users', '--resource-name=bob']);
    await kubectl(server, ['create', 'clusterrolebinding', 'ci-impersonates-bob', '--clusterrole=impersonate-bob', '--serviceaccount=rbac-sa:ci']);
    await waitFor('the impersonation granted', async () => (await asBob()).status === 201);
    expect((await asBob()).json<{ status: { userInfo: { username: string } } }>().status.userInfo.username).toBe('bob');
  });
});

describe('service-account flags at start', () => {
  it('fails closed on a key file without a key, and on a maximum expiration under an hour, naming the flag', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kapi-sa-flags-'));
    try {
      const notKey = join(dir, 'not-a-key.pem');
      await writeFile(notKey, 'not a key\n');
      const startError = async (args: string[]) => {
        try {
          const s = await startServer({ args, readyTimeoutMs: 15_000 });
          await s.cleanup();
          return '';
        } catch (e) {
          return (e as Error).message;
        }
      };
      expect(await startError([`--service-account-key-file=${notKey}`])).toContain(
        `--service-account-key-file=${notKey}: no PEM public key, private key or certificate found`,
      );
      expect(await startError(['--service-account-max-token-expiration=30m'])).toContain(
        '--service-account-max-token-expiration=30m: must be between 1 hour and 2^32 seconds',
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
