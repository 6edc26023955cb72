/**
 * RBAC across a cluster of three real nodes with --authorization-mode=RBAC: a RoleBinding
 * written through one node reaches the policy of every node (each keeps its own, fed by its
 * storage watch), so a user it grants is allowed on all three; deleting it revokes everywhere.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPki, issueClientCertificate } from '@app/pki';
import { getFreePort, kubectl, request, startServer, waitFor, type ServerHandle } from './support/server.js';

const NAMES = ['n1', 'n2', 'n3'];

describe('RBAC in a 3-node cluster', () => {
  let dir: string;
  const nodes: ServerHandle[] = [];
  let alice: { certPem: string; keyPem: string };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kapi-rbac-cluster-'));
    await createPki({ outDir: join(dir, 'pki'), hosts: ['127.0.0.1'] });
    alice = await issueClientCertificate(join(dir, 'pki'), 'alice', ['dev']);
    const ports = new Map<string, number>();
    for (const n of NAMES) ports.set(n, await getFreePort());
    const initial = NAMES.map((n) => `${n}=127.0.0.1:${ports.get(n)}`).join(',');
    const args = (n: string) => [
      '--name',
      n,
      '--pki-dir',
      join(dir, 'pki'),
      '--listen-peer-port',
      String(ports.get(n)),
      '--initial-cluster',
      initial,
      '--authorization-mode=RBAC',
    ];
    nodes.push(...(await Promise.all(NAMES.map((n) => startServer({ args: args(n), dataDir: join(dir, n), readyTimeoutMs: 40_000 })))));
  }, 60_000);

  afterAll(async () => {
    for (const h of nodes) await h.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  const aliceLists = (on: ServerHandle) => request(on, 'GET', '/api/v1/namespaces/default/configmaps', { identity: alice });

  it('a RoleBinding made on one node allows the user on every node, and its deletion revokes everywhere', async () => {
    for (const n of nodes) {
      const r = await aliceLists(n);
      expect(r.status).toBe(403);
      expect(r.json<{ message: string }>().message).toBe(
        'configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "default"',
      );
    }
    await kubectl(nodes[0]!, ['create', 'role', 'cm-reader', '-n', 'default', '--verb=list', '--resource=configmaps']);
    await kubectl(nodes[0]!, ['create', 'rolebinding', 'alice-cm', '-n', 'default', '--role=cm-reader', '--user=alice']);
    for (const [i, n] of nodes.entries()) await waitFor(`alice allowed on ${NAMES[i]}`, async () => (await aliceLists(n)).status === 200);
    await kubectl(nodes[2]!, ['delete', 'rolebinding', 'alice-cm', '-n', 'default']);
    for (const [i, n] of nodes.entries()) await waitFor(`alice refused again on ${NAMES[i]}`, async () => (await aliceLists(n)).status === 403);
  });
});
