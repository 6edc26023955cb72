/**
 * The review APIs end to end under --authorization-mode=RBAC with a static token file:
 * `kubectl auth whoami` (SelfSubjectReview), `kubectl auth can-i` (SelfSubjectAccessReview)
 * before and after a RoleBinding, `--as` impersonation, `auth can-i --list`
 * (SelfSubjectRulesReview), SubjectAccessReview, LocalSubjectAccessReview and TokenReview over
 * raw HTTPS, and kubectl's captured protobuf request bodies.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueClientCertificate, writeKubeconfig } from '@app/pki';
import { kubectl, repoRoot, request, startServer, waitFor, type ServerHandle } from './support/server.js';

interface Review {
  status?: Record<string, unknown>;
}

describe('review APIs', () => {
  let server: ServerHandle;
  let alice: string;
  let tokenKubeconfig: string;
  let dir: string;

  const asAlice = (args: string[]) => kubectl(server, ['--kubeconfig', alice, ...args], { expectFail: 'any' });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kapi-review-'));
    const tokens = join(dir, 'tokens.csv');
    await writeFile(tokens, 'review-token,token-user,uid-9,"dev,qa"\n');
    server = await startServer({ args: ['--authorization-mode=RBAC', `--token-auth-file=${tokens}`] });
    const id = await issueClientCertificate(join(server.dataDir, 'pki'), 'alice', ['dev']);
    alice = join(server.harnessDir, 'alice.kubeconfig');
    const caPem = await readFile(join(server.dataDir, 'pki', 'ca.crt'), 'utf8');
    await writeKubeconfig(alice, { server: server.url, caPem, certPem: id.certPem, keyPem: id.keyPem });
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
    await kubectl(server, ['create', 'namespace', 'team']);
  });

  afterAll(async () => {
    await server?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('kubectl auth whoami answers the admin certificate and a static-token user', async () => {
    const admin = JSON.parse((await kubectl(server, ['auth', 'whoami', '-o', 'json'])).stdout) as {
      apiVersion: string;
      status: { userInfo: { groups: string[] } };
    };
    expect(admin.apiVersion).toBe('authentication.k8s.io/v1');
    expect(admin.status.userInfo.groups).toContain('system:masters');
    const r = await request(server, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      identity: 'anonymous',
      token: 'review-token',
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    expect(r.status).toBe(201);
    expect(r.json<Review>().status).toEqual({ userInfo: { username: 'token-user', uid: 'uid-9', groups: ['dev', 'qa', 'system:authenticated'] } });
    const cli = await kubectl(server, ['--kubeconfig', tokenKubeconfig, '--token', 'review-token', 'auth', 'whoami']);
    expect(cli.stdout).toMatch(/^Username\s+token-user$/m);
    expect(cli.stdout).toMatch(/^UID\s+uid-9$/m);
    const beta = await request(server, 'POST', '/apis/authentication.k8s.io/v1beta1/selfsubjectreviews', {
      token: 'review-token',
      identity: 'anonymous',
      body: { apiVersion: 'authentication.k8s.io/v1beta1', kind: 'SelfSubjectReview' },
    });
    expect(beta.json<{ apiVersion: string } & Review>()).toMatchObject({
      apiVersion: 'authentication.k8s.io/v1beta1',
      status: { userInfo: { username: 'token-user' } },
    });
  });

  it('kubectl auth can-i says no, then yes after kubectl create rolebinding; --as asks for another user', async () => {
    const no = await asAlice(['auth', 'can-i', 'get', 'configmaps', '-n', 'team']);
    expect(no.stdout.trim()).toBe('no');
    expect(no.code).toBe(1);
    expect((await kubectl(server, ['auth', 'can-i', '*', '*'])).stdout.trim()).toBe('yes');
    expect((await kubectl(server, ['auth', 'can-i', 'get', 'configmaps', '-n', 'team', '--as', 'alice'], { expectFail: 'any' })).stdout.trim()).toBe('no');
    await kubectl(server, ['create', 'role', 'cm-reader', '-n', 'team', '--verb=get,list', '--resource=configmaps']);
    await kubectl(server, ['create', 'rolebinding', 'alice-cm', '-n', 'team', '--role=cm-reader', '--user=alice']);
    await waitFor('alice can get configmaps', async () =>
      (await asAlice(['auth', 'can-i', 'get', 'configmaps', '-n', 'team'])).stdout.trim() === 'yes' ? true : undefined,
    );
    expect((await kubectl(server, ['auth', 'can-i', 'get', 'configmaps', '-n', 'team', '--as', 'alice'])).stdout.trim()).toBe('yes');
    expect((await asAlice(['auth', 'can-i', 'delete', 'configmaps', '-n', 'team'])).stdout.trim()).toBe('no');
    expect((await asAlice(['auth', 'can-i', 'get', 'configmaps', '-n', 'default'])).stdout.trim()).toBe('no');
  });

  it('kubectl auth can-i --list lists the rules of the namespace', async () => {
    await waitFor('alice-cm bound', async () =>
      (await asAlice(['auth', 'can-i', 'get', 'configmaps', '-n', 'team'])).stdout.trim() === 'yes' ? true : undefined,
    );
    const list = await asAlice(['auth', 'can-i', '--list', '-n', 'team']);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^configmaps\s+\[\]\s+\[\]\s+\[get list\]/m);
    expect(list.stdout).toMatch(/selfsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]/);
    expect((await asAlice(['auth', 'can-i', '--list', '-n', 'default'])).stdout).not.toMatch(/^configmaps\s/m);
  });

  it('SubjectAccessReview and LocalSubjectAccessReview answer for the user of the spec', async () => {
    await waitFor('alice-cm bound', async () =>
      (await asAlice(['auth', 'can-i', 'get', 'configmaps', '-n', 'team'])).stdout.trim() === 'yes' ? true : undefined,
    );
    const spec = { user: 'alice', groups: ['dev'], resourceAttributes: { namespace: 'team', verb: 'list', resource: 'configmaps' } };
    const sar = await request(server, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec },
    });
    expect(sar.status).toBe(201);
    // The reason names the binding that allows, as kube-apiserver's RBAC does.
    expect(sar.json<Review>().status).toEqual({ allowed: true, reason: 'RBAC: allowed by RoleBinding "alice-cm/team" of Role "cm-reader" to User "alice"' });
    const other = await request(server, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { ...spec, user: 'bob', groups: [] } },
    });
    expect(other.json<Review>().status).toMatchObject({ allowed: false });
    const bad = await request(server, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: 'alice' } },
    });
    expect(bad.status).toBe(422);
    expect(bad.body).toContain('exactly one of nonResourceAttributes or resourceAttributes must be specified');
    const local = await request(server, 'POST', '/apis/authorization.k8s.io/v1/namespaces/team/localsubjectaccessreviews', {
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', spec },
    });
    expect(local.status).toBe(201);
    expect(local.json<Review>().status).toMatchObject({ allowed: true });
    const mismatch = await request(server, 'POST', '/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews', {
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', spec },
    });
    expect(mismatch.status).toBe(422);
    expect(mismatch.body).toContain('must match metadata.namespace');
    // Creating reviews is authorized like any create: alice may not ask about others.
    const forbidden = await kubectl(server, ['--kubeconfig', alice, 'create', '--raw', '/apis/authorization.k8s.io/v1/subjectaccessreviews', '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec }),
      expectFail: true,
    });
    expect(forbidden.stderr).toContain('cannot create resource "subjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope');
  });

  it('TokenReview authenticates a token through the authenticator chain', async () => {
    const review = (token: string) =>
      request(server, 'POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token, audiences: ['api'] } },
      });
    const good = await review('review-token');
    expect(good.status).toBe(201);
    expect(good.json<Review>().status).toEqual({
      authenticated: true,
      user: { username: 'token-user', uid: 'uid-9', groups: ['dev', 'qa', 'system:authenticated'] },
      audiences: ['api'],
    });
    const badToken = await review('not-a-token');
    expect(badToken.json<Review>().status).toMatchObject({ authenticated: false });
  });

  it('accepts the protobuf bodies kubectl sends', async () => {
    const fixture = (name: string) => readFile(join(repoRoot(), 'libs/apimachinery/src/protobuf/fixtures', name));
    const post = async (path: string, name: string) =>
      request(server, 'POST', path, {
        body: await fixture(name),
        headers: { 'content-type': 'application/vnd.kubernetes.protobuf', accept: 'application/json' },
      });
    const ssar = await post('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', 'ssar-get-pods.bin');
    expect(ssar.status).toBe(201);
    expect(ssar.json<Review & { spec: unknown }>()).toMatchObject({
      spec: { resourceAttributes: { verb: 'get', resource: 'pods' } },
      status: { allowed: true },
    });
    const nonResource = await post('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', 'ssar-nonresource.bin');
    expect(nonResource.json<Review>().status).toMatchObject({ allowed: true });
    const rules = await post('/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', 'selfsubjectrulesreview.bin');
    expect(rules.status).toBe(201);
    expect(rules.json<Review>().status).toMatchObject({
      incomplete: false,
      resourceRules: expect.arrayContaining([{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }]),
    });
    const who = await post('/apis/authentication.k8s.io/v1/selfsubjectreviews', 'selfsubjectreview.bin');
    expect(who.status).toBe(201);
    expect(who.json<Review>().status).toMatchObject({ userInfo: { groups: expect.arrayContaining(['system:masters']) } });
  });
});
