/**
 * The Node authorization mode end to end (`--authorization-mode=Node,RBAC`, kubeadm's setting):
 * kubelets with client certificates of system:node:<name> in system:nodes read the Secrets and
 * ConfigMaps of the pods bound to their node and no others, keep their own Lease, and do the
 * rest of a kubelet's work under the system:node role's rules; the graph follows pods as they
 * come and go.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { issueClientCertificate, writeKubeconfig } from '@app/pki';
import { kubectl, request, startServer, waitFor, type ServerHandle } from './support/server.js';

describe('Node authorization', () => {
  let server: ServerHandle;
  const kubelet: Record<string, { kubeconfig: string; id: { certPem: string; keyPem: string } }> = {};

  beforeAll(async () => {
    server = await startServer({ args: ['--authorization-mode=Node,RBAC'] });
    const caPem = await readFile(join(server.dataDir, 'pki', 'ca.crt'), 'utf8');
    for (const n of ['n1', 'n2']) {
      const id = await issueClientCertificate(join(server.dataDir, 'pki'), `system:node:${n}`, ['system:nodes']);
      const kubeconfig = join(server.harnessDir, `${n}.kubeconfig`);
      await writeKubeconfig(kubeconfig, { server: server.url, caPem, certPem: id.certPem, keyPem: id.keyPem });
      kubelet[n] = { kubeconfig, id };
    }
    await kubectl(server, ['create', 'secret', 'generic', 'mounted', '--from-literal=k=v']);
    await kubectl(server, ['create', 'secret', 'generic', 'unrelated', '--from-literal=k=v']);
    await kubectl(server, ['create', 'configmap', 'settings', '--from-literal=a=b']);
    await kubectl(server, ['create', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web', namespace: 'default' },
        spec: {
          nodeName: 'n1',
          containers: [{ name: 'c', image: 'nginx', envFrom: [{ configMapRef: { name: 'settings' } }] }],
          volumes: [{ name: 'creds', secret: { secretName: 'mounted' } }],
        },
      }),
    });
  });

  afterAll(async () => {
    await server?.cleanup();
  });

  const as = (n: string, args: string[]) => kubectl(server, ['--kubeconfig', kubelet[n]!.kubeconfig, ...args], { expectFail: 'any' });

  it('lets a kubelet read what the pods bound to its node use, and nothing else of those kinds', async () => {
    const got = await waitFor('n1 reads the mounted secret', async () => {
      const r = await as('n1', ['get', 'secret', 'mounted', '-o', 'jsonpath={.data.k}']);
      return r.code === 0 ? r : undefined;
    });
    expect(got.stdout).toBe('dg==');
    expect((await as('n1', ['get', 'configmap', 'settings'])).code).toBe(0);
    // A kubelet's reflector watches one object through a metadata.name field selector.
    expect((await as('n1', ['get', 'secrets', '--field-selector', 'metadata.name=mounted'])).code).toBe(0);
    const other = await as('n1', ['get', 'secret', 'unrelated']);
    expect(other.stderr).toContain(
      `Error from server (Forbidden): secrets "unrelated" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "default": no relationship found between node 'n1' and this object`,
    );
    expect((await as('n1', ['get', 'secrets'])).stderr).toContain('User "system:node:n1" cannot list resource "secrets"');
    // Another node reaches nothing of that pod.
    expect((await as('n2', ['get', 'secret', 'mounted'])).stderr).toContain("no relationship found between node 'n2' and this object");
    // Service-account tokens for the pods' accounts only.
    expect((await as('n1', ['create', 'token', 'default'])).code).toBe(0);
    expect((await as('n2', ['create', 'token', 'default'])).code).not.toBe(0);
  });

  it('keeps a kubelet to its own Lease and lets it do the rest of its work under the system:node rules', async () => {
    const lease = (name: string) => ({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name, namespace: 'kube-node-lease' },
      spec: { holderIdentity: name, leaseDurationSeconds: 40 },
    });
    const path = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases';
    expect((await request(server, 'POST', path, { identity: kubelet.n1!.id, body: lease('n1') })).status).toBe(201);
    expect((await request(server, 'POST', path, { identity: kubelet.n2!.id, body: lease('n2') })).status).toBe(201);
    const theirs = await request(server, 'GET', `${path}/n2`, { identity: kubelet.n1!.id });
    expect(theirs.status).toBe(403);
    expect(theirs.json()).toMatchObject({ message: expect.stringContaining('can only access node lease with the same name as the requesting node') });
    expect((await as('n1', ['get', 'pods', '-A'])).code).toBe(0);
    expect((await as('n1', ['delete', 'namespace', 'default'])).stderr).toContain('User "system:node:n1" cannot delete resource "namespaces"');
  });

  it('follows the pods: once the pod is gone, so is the access', async () => {
    await kubectl(server, ['delete', 'pod', 'web', '--grace-period=0', '--force']);
    const refused = await waitFor('n1 refused the secret', async () => {
      const r = await as('n1', ['get', 'secret', 'mounted']);
      return r.code !== 0 ? r : undefined;
    });
    expect(refused.stderr).toContain("no relationship found between node 'n1' and this object");
  });
});
