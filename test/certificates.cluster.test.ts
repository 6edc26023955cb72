/**
 * CSR signing in a cluster of three real nodes sharing one PKI: a request created through one
 * node and approved through another is signed exactly once, by the node holding the
 * kube-system/kube-controller-manager Lease (the elected controller manager), with the
 * cluster CA; every node reads the issued certificate, which passes `openssl verify`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPki } from '@app/pki';
import { getFreePort, request, startServer, waitFor, type ServerHandle } from './support/server.js';

const NAMES = ['n1', 'n2', 'n3'];
const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';

interface Csr {
  metadata: { name: string };
  status?: { certificate?: string; conditions?: Array<Record<string, string>> };
}

describe('CSR signing in a 3-node cluster', () => {
  let dir: string;
  const nodes: ServerHandle[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kapi-csr-cluster-'));
    await createPki({ outDir: join(dir, 'pki'), hosts: ['127.0.0.1'] });
    const ports = new Map<string, number>();
    for (const n of NAMES) ports.set(n, await getFreePort());
    const initial = NAMES.map((n) => `${n}=127.0.0.1:${ports.get(n)}`).join(',');
    const args = (n: string) => ['--name', n, '--pki-dir', join(dir, 'pki'), '--listen-peer-port', String(ports.get(n)), '--initial-cluster', initial];
    nodes.push(...(await Promise.all(NAMES.map((n) => startServer({ args: args(n), dataDir: join(dir, n), readyTimeoutMs: 40_000 })))));
  }, 60_000);

  afterAll(async () => {
    for (const h of nodes) await h.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  it('is signed once, by the Lease holder, and read on every node', async () => {
    const key = join(dir, 'req.key');
    execFileSync('openssl', ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', key]);
    const pem = execFileSync('openssl', ['req', '-new', '-key', key, '-subj', '/O=ops/CN=erin'], { encoding: 'utf8' });
    const created = await request(nodes[1]!, 'POST', CSRS, {
      body: {
        apiVersion: 'certificates.k8s.io/v1',
        kind: 'CertificateSigningRequest',
        metadata: { name: 'erin' },
        spec: { request: Buffer.from(pem).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'] },
      },
    });
    expect(created.status).toBe(201);
    const got = (await request(nodes[2]!, 'GET', `${CSRS}/erin`)).json<Csr>();
    const approved = await request(nodes[2]!, 'PUT', `${CSRS}/erin/approval`, {
      body: { ...got, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'Test', message: 'approved through n3' }] } },
    });
    expect(approved.status).toBe(200);

    const certs = await Promise.all(
      nodes.map((n, i) =>
        waitFor(`the certificate on ${NAMES[i]}`, async () => (await request(n, 'GET', `${CSRS}/erin`)).json<Csr>().status?.certificate, 30_000),
      ),
    );
    expect(new Set(certs).size).toBe(1);
    const certFile = join(dir, 'erin.crt');
    await writeFile(certFile, Buffer.from(certs[0]!, 'base64'));
    expect(execFileSync('openssl', ['verify', '-CAfile', join(dir, 'pki', 'ca.crt'), certFile], { encoding: 'utf8' })).toContain(': OK');

    const lease = (await request(nodes[0]!, 'GET', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager')).json<{
      spec: { holderIdentity: string };
    }>();
    const holder = lease.spec.holderIdentity.split('_')[0];
    const signers = NAMES.filter((_, i) => nodes[i]!.stderr.includes('csrsigning: erin: issued'));
    expect(signers).toEqual([holder]);
  });
});
