/**
 * The HTTPS port with the operator's certificates (kube-apiserver's --tls-cert-file,
 * --tls-private-key-file and --client-ca-file): the server presents the given certificate,
 * reloads it when the files change, authenticates users by client certificates of the given CA
 * beside the cluster CA's admin, and refuses to start on a key that does not match.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { ensurePki, issueClientCertificate, writeKubeconfig } from '@app/pki';
import { getFreePort, kubectl, runServerToExit, startServer, waitFor, type ServerHandle } from './support/server.js';

/** The certificate the server presents on a fresh TLS connection, as its SHA-256 fingerprint. */
function presented(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }, () => {
      resolve(s.getPeerCertificate().fingerprint256);
      s.destroy();
    });
    s.once('error', reject);
  });
}
const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;

describe('serving and client certificates from files', () => {
  let dir: string;
  let server: ServerHandle;
  let operator: Awaited<ReturnType<typeof ensurePki>>;
  const certFile = () => join(dir, 'serving.crt');
  const keyFile = () => join(dir, 'serving.key');

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kapi-serving-tls-'));
    operator = await ensurePki(join(dir, 'operator'), { hosts: ['127.0.0.1'] });
    // The serving certificate, then the CA that signed it (so the admin kubeconfig can trust it).
    await writeFile(certFile(), (await readFile(operator.servingCert, 'utf8')) + (await readFile(operator.caCert, 'utf8')));
    await writeFile(keyFile(), await readFile(operator.servingKey, 'utf8'));
    server = await startServer({
      args: [`--tls-cert-file=${certFile()}`, `--tls-private-key-file=${keyFile()}`, `--client-ca-file=${operator.caCert}`],
    });
  });

  afterAll(async () => {
    await server?.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  it("presents the operator's certificate, and the admin kubeconfig trusts it", async () => {
    expect(await presented(server.port)).toBe(fingerprint(await readFile(operator.servingCert, 'utf8')));
    const admin = await kubectl(server, [
      '--kubeconfig',
      join(server.dataDir, 'admin.kubeconfig'),
      'auth',
      'whoami',
      '-o',
      'jsonpath={.status.userInfo.username}',
    ]);
    expect(admin.stdout).toBe('kubernetes-admin');
  });

  it('gives pods the CA bundle that verifies it: kube-root-ca.crt and service-account token Secrets', async () => {
    const published = await waitFor('kube-root-ca.crt published', async () => {
      const r = await kubectl(server, ['get', 'configmap', 'kube-root-ca.crt', '-n', 'default', '-o', 'jsonpath={.data.ca\\.crt}'], { expectFail: 'any' });
      return r.code === 0 && r.stdout.includes('BEGIN CERTIFICATE') ? r.stdout : undefined;
    });
    const clusterCa = await readFile(join(server.dataDir, 'pki', 'ca.crt'), 'utf8');
    const operatorCa = await readFile(operator.caCert, 'utf8');
    expect(published).toContain(clusterCa.trim());
    expect(published).toContain(operatorCa.trim());
    // What a pod does with it: verify the served certificate.
    await new Promise<void>((resolve, reject) => {
      const s = connect({ host: '127.0.0.1', port: server.port, ca: published, ALPNProtocols: ['http/1.1'] }, () => {
        s.destroy();
        resolve();
      });
      s.once('error', reject);
    });
    await kubectl(server, ['create', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'kubernetes.io/service-account-token',
        metadata: { name: 'default-token', namespace: 'default', annotations: { 'kubernetes.io/service-account.name': 'default' } },
      }),
    });
    const tokenCa = await waitFor('the token Secret filled in', async () => {
      const r = await kubectl(server, ['get', 'secret', 'default-token', '-o', 'jsonpath={.data.ca\\.crt}']);
      return r.stdout ? Buffer.from(r.stdout, 'base64').toString('utf8') : undefined;
    });
    expect(tokenCa).toBe(published);
  });

  it("authenticates a user by a client certificate of --client-ca-file's CA", async () => {
    const dana = await issueClientCertificate(operator.dir, 'dana', ['ops']);
    const kubeconfig = join(dir, 'dana.kubeconfig');
    await writeKubeconfig(kubeconfig, { server: server.url, caPem: await readFile(operator.caCert, 'utf8'), certPem: dana.certPem, keyPem: dana.keyPem });
    const who = await kubectl(server, ['--kubeconfig', kubeconfig, 'auth', 'whoami', '-o', 'json']);
    expect(JSON.parse(who.stdout).status.userInfo).toMatchObject({ username: 'dana', groups: ['ops', 'system:authenticated'] });
  });

  it('serves a renewed certificate without a restart once both files change', async () => {
    const renewed = await ensurePki(join(dir, 'renewed'), { hosts: ['127.0.0.1'] });
    await writeFile(keyFile(), await readFile(renewed.servingKey, 'utf8'));
    await writeFile(certFile(), await readFile(renewed.servingCert, 'utf8'));
    const want = fingerprint(await readFile(renewed.servingCert, 'utf8'));
    await waitFor('the renewed certificate served', async () => ((await presented(server.port)) === want ? true : undefined));
    expect(await presented(server.port)).toBe(want);
  });

  it('refuses to start on a key that is not the certificate’s, naming both flags', async () => {
    const other = await ensurePki(join(dir, 'other'), { hosts: ['127.0.0.1'] });
    const port = await getFreePort();
    const args = [
      '--data-dir',
      join(dir, 'refused'),
      '--secure-port',
      String(port),
      `--tls-cert-file=${operator.servingCert}`,
      `--tls-private-key-file=${other.servingKey}`,
    ];
    const r = await runServerToExit(args);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`--tls-cert-file=${operator.servingCert}, --tls-private-key-file=${other.servingKey}`);
  });
});
