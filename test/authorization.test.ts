/**
 * The authorizer port end to end: with --authorization-mode=AlwaysDeny a user outside
 * system:masters is refused with kube-apiserver's Forbidden wording (through kubectl and raw
 * HTTPS, impersonation included), while system:masters keeps every right.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { issueClientCertificate } from '@app/pki';
import { writeKubeconfig } from '@app/pki';
import { kubectl, startServer, type ServerHandle } from './support/server.js';

describe('authorization', () => {
  let server: ServerHandle;
  let aliceConfig: string;

  beforeAll(async () => {
    server = await startServer({ args: ['--authorization-mode=AlwaysDeny'] });
    const alice = await issueClientCertificate(join(server.dataDir, 'pki'), 'alice', ['dev']);
    aliceConfig = join(server.harnessDir, 'alice.kubeconfig');
    const caPem = await readFile(join(server.dataDir, 'pki', 'ca.crt'), 'utf8');
    await writeKubeconfig(aliceConfig, { server: server.url, caPem, certPem: alice.certPem, keyPem: alice.keyPem });
  });

  afterAll(async () => {
    await server?.cleanup();
  });

  it('refuses a user the modes deny with the Forbidden message kubectl prints', async () => {
    // Discovery is denied too (AlwaysDeny has no system:discovery), so kubectl asks by path.
    const r = await kubectl(server, ['--kubeconfig', aliceConfig, 'get', '--raw', '/api/v1/namespaces/default/configmaps'], { expectFail: true });
    expect(r.stderr).toContain(
      'Error from server (Forbidden): configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "default": Everything is forbidden.',
    );
  });

  it('lets system:masters through whatever the modes say', async () => {
    const r = await kubectl(server, ['get', 'configmaps', '-n', 'default', '-o', 'name']);
    expect(r.code).toBe(0);
  });

  it('checks impersonation with the impersonate verb', async () => {
    const r = await kubectl(server, ['--kubeconfig', aliceConfig, 'get', '--raw', '/api/v1/namespaces', '--as', 'bob'], { expectFail: true });
    expect(r.stderr).toContain('users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope');
  });
});
