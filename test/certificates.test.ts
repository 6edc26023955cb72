/**
 * certificates.k8s.io/v1 CertificateSigningRequest end to end, on a server started with
 * --authorization-mode=RBAC: a request made by `openssl req -new` is created with kubectl,
 * approved with `kubectl certificate approve`, signed by the csrsigning controller with the
 * cluster CA; the certificate passes `openssl verify` and logs in (`kubectl auth whoami` shows the
 * request's CN and O). Each signer rule broken ends in a Failed condition, a node-agent client
 * request is approved automatically, approval without `approve` on the signer is 403, and the
 * create-time validation answers with Kubernetes' messages.
 */
import { jest } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { issueClientCertificate, writeKubeconfig } from '@app/pki';
import { kubectl, request, startServer, waitFor, type ServerHandle } from './support/server.js';

jest.setTimeout(180_000);

let server: ServerHandle;
let caFile: string;
let caPem: string;

beforeAll(async () => {
  server = await startServer({ args: ['--authorization-mode=RBAC'] });
  caFile = join(server.dataDir, 'pki', 'ca.crt');
  caPem = await readFile(caFile, 'utf8');
});

afterAll(async () => {
  await server?.cleanup();
});

const k = (args: string[], opts: { input?: string; expectFail?: boolean } = {}) => kubectl(server, args, opts);

let n = 0;
/** A key and a request made by openssl; returns the key file and the request PEM. */
function opensslRequest(subj: string, extra: string[] = []): { keyFile: string; pem: string } {
  const keyFile = join(server.harnessDir, `key${n++}.pem`);
  execFileSync('openssl', ['genrsa', '-out', keyFile, '2048'], { stdio: 'ignore' });
  const pem = execFileSync('openssl', ['req', '-new', '-key', keyFile, '-subj', subj, ...extra], { encoding: 'utf8' });
  return { keyFile, pem };
}

function csrYaml(name: string, pem: string, signerName: string, usages: string[], expirationSeconds?: number): string {
  return [
    'apiVersion: certificates.k8s.io/v1',
    'kind: CertificateSigningRequest',
    'metadata:',
    `  name: ${name}`,
    'spec:',
    `  request: ${Buffer.from(pem).toString('base64')}`,
    `  signerName: ${signerName}`,
    ...(expirationSeconds !== undefined ? [`  expirationSeconds: ${expirationSeconds}`] : []),
    '  usages:',
    ...usages.map((u) => `  - ${u}`),
    '',
  ].join('\n');
}

async function csrJson(
  name: string,
): Promise<{ spec: Record<string, unknown>; status?: { certificate?: string; conditions?: Array<Record<string, string>> } }> {
  return JSON.parse((await k(['get', 'csr', name, '-o', 'json'])).stdout);
}

describe('CertificateSigningRequest', () => {
  it('issues a certificate for an openssl request approved with kubectl, which verifies and logs in', async () => {
    const { keyFile, pem } = opensslRequest('/O=dev/O=qa/CN=carol');
    const c = await k(['create', '-f', '-'], {
      input: csrYaml('carol', pem, 'kubernetes.io/kube-apiserver-client', ['digital signature', 'key encipherment', 'client auth'], 86400),
    });
    expect(c.stdout).toContain('certificatesigningrequest.certificates.k8s.io/carol created');
    const pending = await k(['get', 'csr', 'carol']);
    expect(pending.stdout).toMatch(/^NAME\s+AGE\s+SIGNERNAME\s+REQUESTOR\s+REQUESTEDDURATION\s+CONDITION$/m);
    expect(pending.stdout).toMatch(/^carol\s+\d+s\s+kubernetes\.io\/kube-apiserver-client\s+kubernetes-admin\s+24h\s+Pending$/m);
    const created = await csrJson('carol');
    expect(created.spec).toMatchObject({ username: 'kubernetes-admin', groups: expect.arrayContaining(['system:masters', 'system:authenticated']) });

    const described = await k(['describe', 'csr', 'carol']);
    expect(described.stdout).toMatch(/^Requesting User:\s+kubernetes-admin$/m);
    expect(described.stdout).toMatch(/^Signer:\s+kubernetes\.io\/kube-apiserver-client$/m);
    expect(described.stdout).toMatch(/^\s+Common Name:\s+carol$/m);
    expect(described.stdout).toMatch(/^\s+Organization:\s+dev$/m);

    const a = await k(['certificate', 'approve', 'carol']);
    expect(a.stdout).toContain('certificatesigningrequest.certificates.k8s.io/carol approved');
    const issued = await waitFor('the certificate of carol', async () => (await csrJson('carol')).status?.certificate, 30_000);
    expect((await k(['get', 'csr', 'carol'])).stdout).toMatch(/^carol\s+.*\s+Approved,Issued$/m);
    const approvedCond = (await csrJson('carol')).status?.conditions?.find((x) => x.type === 'Approved');
    expect(approvedCond).toMatchObject({ status: 'True', reason: 'KubectlApprove' });

    const certPem = Buffer.from(issued, 'base64').toString('utf8');
    expect(certPem).toMatch(/^-----BEGIN CERTIFICATE-----/);
    const certFile = join(server.harnessDir, 'carol.crt');
    await writeFile(certFile, certPem);
    expect(execFileSync('openssl', ['verify', '-CAfile', caFile, certFile], { encoding: 'utf8' })).toContain(`${certFile}: OK`);
    const text = execFileSync('openssl', ['x509', '-in', certFile, '-noout', '-text'], { encoding: 'utf8' });
    expect(text).toContain('TLS Web Client Authentication');
    expect(text).toContain('CA:FALSE');

    const kubeconfig = join(server.harnessDir, 'carol.kubeconfig');
    await writeKubeconfig(kubeconfig, { server: server.url, caPem, certPem, keyPem: await readFile(keyFile, 'utf8') });
    const who = await kubectl(server, ['--kubeconfig', kubeconfig, 'auth', 'whoami']);
    expect(who.stdout).toMatch(/^Username\s+carol$/m);
    expect(who.stdout).toMatch(/^Groups\s+\[dev qa system:authenticated\]$/m);
  });

  it('ends each broken signer rule in a Failed condition with the reason', async () => {
    const cases: Array<{ name: string; subj: string; extra?: string[]; signer: string; usages: string[]; message: string }> = [
      {
        name: 'bad-usage',
        subj: '/CN=x',
        signer: 'kubernetes.io/kube-apiserver-client',
        usages: ['client auth', 'server auth'],
        message: 'invalid usage for client certificate: server auth',
      },
      {
        name: 'no-client-auth',
        subj: '/CN=x',
        signer: 'kubernetes.io/kube-apiserver-client',
        usages: ['digital signature'],
        message: 'invalid usage for client certificate: missing client auth',
      },
      {
        name: 'ca-flag',
        subj: '/CN=x',
        extra: ['-addext', 'basicConstraints=critical,CA:TRUE'],
        signer: 'kubernetes.io/kube-apiserver-client',
        usages: ['client auth'],
        message: 'asks for a CA certificate',
      },
      {
        name: 'node-org',
        subj: '/O=dev/CN=system:node:n1',
        signer: 'kubernetes.io/kube-apiserver-client-kubelet',
        usages: ['digital signature', 'key encipherment', 'client auth'],
        message: 'subject organization is not system:nodes',
      },
      {
        name: 'node-cn',
        subj: '/O=system:nodes/CN=n1',
        signer: 'kubernetes.io/kube-apiserver-client-kubelet',
        usages: ['digital signature', 'key encipherment', 'client auth'],
        message: 'subject common name does not begin with system:node:',
      },
      {
        name: 'node-san',
        subj: '/O=system:nodes/CN=system:node:n1',
        extra: ['-addext', 'subjectAltName=DNS:n1.example'],
        signer: 'kubernetes.io/kube-apiserver-client-kubelet',
        usages: ['digital signature', 'key encipherment', 'client auth'],
        message: 'DNS subjectAltNames are not allowed',
      },
      {
        name: 'node-usages',
        subj: '/O=system:nodes/CN=system:node:n1',
        signer: 'kubernetes.io/kube-apiserver-client-kubelet',
        usages: ['client auth'],
        message: 'usages did not match',
      },
      {
        name: 'serving-no-san',
        subj: '/O=system:nodes/CN=system:node:n1',
        signer: 'kubernetes.io/kubelet-serving',
        usages: ['digital signature', 'key encipherment', 'server auth'],
        message: 'DNS or IP subjectAltName is required',
      },
      {
        name: 'serving-uri',
        subj: '/O=system:nodes/CN=system:node:n1',
        extra: ['-addext', 'subjectAltName=DNS:n1,URI:spiffe://x/y'],
        signer: 'kubernetes.io/kubelet-serving',
        usages: ['digital signature', 'key encipherment', 'server auth'],
        message: 'URI subjectAltNames are not allowed',
      },
      {
        name: 'serving-usages',
        subj: '/O=system:nodes/CN=system:node:n1',
        extra: ['-addext', 'subjectAltName=IP:10.0.0.7'],
        signer: 'kubernetes.io/kubelet-serving',
        usages: ['digital signature', 'client auth'],
        message: 'usages did not match',
      },
    ];
    for (const c of cases) {
      const { pem } = opensslRequest(c.subj, c.extra);
      await k(['create', '-f', '-'], { input: csrYaml(c.name, pem, c.signer, c.usages) });
      await k(['certificate', 'approve', c.name]);
    }
    for (const c of cases) {
      const failed = await waitFor(`Failed on ${c.name}`, async () => (await csrJson(c.name)).status?.conditions?.find((x) => x.type === 'Failed'), 30_000);
      expect({ name: c.name, reason: failed.reason, message: failed.message }).toEqual({
        name: c.name,
        reason: 'SignerValidationFailure',
        message: expect.stringContaining(c.message),
      });
      expect((await csrJson(c.name)).status?.certificate).toBeUndefined();
    }
    expect((await k(['get', 'csr', 'bad-usage'])).stdout).toMatch(/^bad-usage\s+.*\s+Approved,Failed$/m);
  });

  it('approves a node-agent client request automatically and signs it', async () => {
    const { pem } = opensslRequest('/O=system:nodes/CN=system:node:worker-1');
    await k(['create', '-f', '-'], {
      input: csrYaml('node-client', pem, 'kubernetes.io/kube-apiserver-client-kubelet', ['digital signature', 'key encipherment', 'client auth']),
    });
    const cert = await waitFor('node-client issued', async () => (await csrJson('node-client')).status?.certificate, 30_000);
    expect(cert.length).toBeGreaterThan(0);
    const cond = (await csrJson('node-client')).status?.conditions?.find((x) => x.type === 'Approved');
    expect(cond).toMatchObject({ status: 'True', reason: 'AutoApproved', message: 'Auto approving kubelet client certificate after SubjectAccessReview.' });
    // A client request is never approved automatically.
    expect((await k(['get', 'csr', 'bad-usage', '-o', 'jsonpath={.status.conditions[0].reason}'])).stdout).toBe('KubectlApprove');
  });

  it('approves the node client request of a bootstrapper bound to the built-in node-bootstrapper and nodeclient roles', async () => {
    const boot = await issueClientCertificate(join(server.dataDir, 'pki'), 'kubelet-bootstrap', ['system:bootstrappers']);
    const bootConfig = join(server.harnessDir, 'boot.kubeconfig');
    await writeKubeconfig(bootConfig, { server: server.url, caPem, certPem: boot.certPem, keyPem: boot.keyPem });
    await k(['create', 'clusterrolebinding', 'boot-csr', '--clusterrole=system:node-bootstrapper', '--group=system:bootstrappers']);
    await k([
      'create',
      'clusterrolebinding',
      'boot-autoapprove',
      '--clusterrole=system:certificates.k8s.io:certificatesigningrequests:nodeclient',
      '--group=system:bootstrappers',
    ]);
    const { pem } = opensslRequest('/O=system:nodes/CN=system:node:worker-2');
    await waitFor('the bootstrapper to create its request', async () => {
      const r = await kubectl(server, ['--kubeconfig', bootConfig, 'create', '-f', '-'], {
        input: csrYaml('worker-2', pem, 'kubernetes.io/kube-apiserver-client-kubelet', ['digital signature', 'key encipherment', 'client auth']),
        expectFail: 'any',
      });
      return r.code === 0 ? r : undefined;
    });
    const cert = await waitFor('worker-2 issued', async () => (await csrJson('worker-2')).status?.certificate, 30_000);
    expect(cert.length).toBeGreaterThan(0);
    const got = await csrJson('worker-2');
    expect(got.spec).toMatchObject({ username: 'kubelet-bootstrap', groups: ['system:bootstrappers', 'system:authenticated'] });
    expect(got.status?.conditions?.find((x) => x.type === 'Approved')).toMatchObject({ reason: 'AutoApproved' });
  });

  it('refuses approval (403) without approve on the signer, allows it with approve on <domain>/*', async () => {
    const bob = await issueClientCertificate(join(server.dataDir, 'pki'), 'bob', ['ops']);
    const bobConfig = join(server.harnessDir, 'bob.kubeconfig');
    await writeKubeconfig(bobConfig, { server: server.url, caPem, certPem: bob.certPem, keyPem: bob.keyPem });
    await k([
      'create',
      'clusterrole',
      'csr-approver',
      '--verb=get,list,watch,update',
      '--resource=certificatesigningrequests,certificatesigningrequests/approval',
    ]);
    await k(['create', 'clusterrolebinding', 'bob-csr', '--clusterrole=csr-approver', '--user=bob']);
    const { pem } = opensslRequest('/CN=dave');
    await k(['create', '-f', '-'], { input: csrYaml('dave', pem, 'kubernetes.io/kube-apiserver-client', ['client auth']) });
    const denied = await waitFor('bob to reach the approval check', async () => {
      const r = await kubectl(server, ['--kubeconfig', bobConfig, 'certificate', 'approve', 'dave'], { expectFail: 'any' });
      return r.stderr.includes('user not permitted') ? r : undefined;
    });
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toContain(
      'certificatesigningrequests.certificates.k8s.io "dave" is forbidden: user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client"',
    );
    expect((await csrJson('dave')).status?.conditions ?? []).toEqual([]);

    await k(['apply', '-f', '-'], {
      input: [
        'apiVersion: rbac.authorization.k8s.io/v1',
        'kind: ClusterRole',
        'metadata:',
        '  name: signer-approver',
        'rules:',
        '- apiGroups: [certificates.k8s.io]',
        '  resources: [signers]',
        '  resourceNames: ["kubernetes.io/*"]',
        '  verbs: [approve]',
        '',
      ].join('\n'),
    });
    await k(['create', 'clusterrolebinding', 'bob-signer', '--clusterrole=signer-approver', '--user=bob']);
    await waitFor('bob approves dave', async () => {
      const r = await kubectl(server, ['--kubeconfig', bobConfig, 'certificate', 'approve', 'dave'], { expectFail: 'any' });
      return r.code === 0 ? r : undefined;
    });
    await waitFor('dave issued', async () => (await csrJson('dave')).status?.certificate, 30_000);
  });

  it('denies with kubectl certificate deny: Denied, never signed', async () => {
    const { pem } = opensslRequest('/CN=frank');
    await k(['create', '-f', '-'], { input: csrYaml('frank', pem, 'kubernetes.io/kube-apiserver-client', ['client auth']) });
    expect((await k(['certificate', 'deny', 'frank'])).stdout).toContain('certificatesigningrequest.certificates.k8s.io/frank denied');
    // A later request of the same signer is issued: the signer has seen the denied one by then.
    const { pem: later } = opensslRequest('/CN=frank2');
    await k(['create', '-f', '-'], { input: csrYaml('frank2', later, 'kubernetes.io/kube-apiserver-client', ['client auth']) });
    await k(['certificate', 'approve', 'frank2']);
    await waitFor('frank2 issued', async () => (await csrJson('frank2')).status?.certificate, 30_000);
    const denied = await csrJson('frank');
    expect(denied.status?.certificate).toBeUndefined();
    expect(denied.status?.conditions).toEqual([expect.objectContaining({ type: 'Denied', status: 'True', reason: 'KubectlDeny' })]);
    expect((await k(['get', 'csr', 'frank'])).stdout).toMatch(/^frank\s+.*\s+Denied$/m);
  });

  it('answers create with the validation messages of the API', async () => {
    const { pem } = opensslRequest('/CN=eve');
    const legacy = await k(['create', '-f', '-'], { input: csrYaml('legacy', pem, 'kubernetes.io/legacy-unknown', ['client auth']), expectFail: true });
    expect(legacy.stderr).toContain(
      'spec.signerName: Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName is not allowed via this API version',
    );
    const short = await k(['create', '-f', '-'], {
      input: csrYaml('short', pem, 'kubernetes.io/kube-apiserver-client', ['client auth'], 599),
      expectFail: true,
    });
    expect(short.stderr).toContain('spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)');
    const usage = await k(['create', '-f', '-'], { input: csrYaml('usage', pem, 'kubernetes.io/kube-apiserver-client', ['flying']), expectFail: true });
    expect(usage.stderr).toContain('spec.usages[0]: Unsupported value: "flying"');
    const signer = await k(['create', '-f', '-'], { input: csrYaml('signer', pem, 'nodomain', ['client auth']), expectFail: true });
    expect(signer.stderr).toContain(
      `spec.signerName: Invalid value: "nodomain": must be a fully qualified domain and path of the form 'example.com/signer-name'`,
    );
    const notCsr = await k(['create', '-f', '-'], {
      input: csrYaml('not-csr', caPem, 'kubernetes.io/kube-apiserver-client', ['client auth']),
      expectFail: true,
    });
    expect(notCsr.stderr).toContain('spec.request: Invalid value: PEM block type must be CERTIFICATE REQUEST');
    const body = pem.split('\n').slice(1, -2).join('');
    const der = Buffer.from(body, 'base64');
    der[der.length - 5]! ^= 0xff;
    const forged = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
    const bad = await k(['create', '-f', '-'], { input: csrYaml('forged', forged, 'kubernetes.io/kube-apiserver-client', ['client auth']), expectFail: true });
    expect(bad.stderr).toContain(
      'The CertificateSigningRequest "forged" is invalid: spec.request: Invalid value: x509: signature of the certificate request does not verify',
    );
    const masters = opensslRequest('/O=system:masters/CN=mallory').pem;
    const m = await k(['create', '-f', '-'], { input: csrYaml('mallory', masters, 'kubernetes.io/kube-apiserver-client', ['client auth']), expectFail: true });
    expect(m.stderr).toContain('use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed');
  });

  it('keeps spec immutable, refuses removing an approval, and lists by spec.signerName', async () => {
    await k(['patch', 'csr', 'carol', '--type=merge', '-p', '{"spec":{"username":"someone-else"},"metadata":{"labels":{"a":"b"}}}']);
    const after = await csrJson('carol');
    expect(after.spec.username).toBe('kubernetes-admin');
    // kubectl refuses to deny an approved request itself; the server refuses it too.
    const path = '/apis/certificates.k8s.io/v1/certificatesigningrequests/carol/approval';
    const cur = (await request(server, 'GET', path)).json() as { status: { conditions: Array<Record<string, string>> } };
    const both = await request(server, 'PUT', path, {
      body: { ...cur, status: { ...cur.status, conditions: [...cur.status.conditions, { type: 'Denied', status: 'True', reason: 'No' }] } },
    });
    expect(both.status).toBe(422);
    expect((both.json() as { message: string }).message).toContain('status.conditions: Invalid value: Approved and Denied conditions are mutually exclusive');
    const removed = await request(server, 'PUT', path, { body: { ...cur, status: { ...cur.status, conditions: [] } } });
    expect(removed.status).toBe(422);
    expect((removed.json() as { message: string }).message).toContain('status.conditions: Forbidden: updates may not remove a condition of type "Approved"');
    const list = await k(['get', 'csr', '--field-selector=spec.signerName=kubernetes.io/kubelet-serving', '-o', 'name']);
    expect(list.stdout.trim().split('\n').sort()).toEqual([
      'certificatesigningrequest.certificates.k8s.io/serving-no-san',
      'certificatesigningrequest.certificates.k8s.io/serving-uri',
      'certificatesigningrequest.certificates.k8s.io/serving-usages',
    ]);
    const d = await k(['delete', 'csr', 'carol']);
    expect(d.stdout).toContain('certificatesigningrequest.certificates.k8s.io "carol" deleted');
  });
});
