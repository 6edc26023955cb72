/**
 * Service-account tokens across a cluster of three real nodes sharing one PKI (so one
 * service-account key): a token made through one node authenticates on the other two (each
 * checks it against its own watch-fed copy of the service accounts), and deleting the service
 * account through a third node revokes it on all of them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPki } from '@app/pki';
import { getFreePort, kubectl, request, startServer, waitFor, type ServerHandle } from './support/server.js';

const NAMES = ['n1', 'n2', 'n3'];

describe('service-account tokens in a 3-node cluster', () => {
  let dir: string;
  const nodes: ServerHandle[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kapi-sa-cluster-'));
    await createPki({ outDir: join(dir, 'pki'), hosts: ['127.0.0.1'] });
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
      '--authorization-mode=AlwaysAllow',
    ];
    nodes.push(...(await Promise.all(NAMES.map((n) => startServer({ args: args(n), dataDir: join(dir, n), readyTimeoutMs: 40_000 })))));
  }, 60_000);

  afterAll(async () => {
    for (const h of nodes) await h.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  /** The user name a token authenticates as on `on`, or the HTTP status. */
  const whoami = async (on: ServerHandle, token: string): Promise<string | number> => {
    const r = await request(on, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      identity: 'anonymous',
      token,
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    return r.status === 201 ? r.json<{ status: { userInfo: { username: string } } }>().status.userInfo.username : r.status;
  };

  it('a token made through one node authenticates on the others; deleting its account through a third revokes it everywhere', async () => {
    await kubectl(nodes[0]!, ['create', 'serviceaccount', 'robot', '-n', 'default']);
    const token = (await kubectl(nodes[0]!, ['create', 'token', 'robot', '-n', 'default'])).stdout.trim();
    for (const [i, n] of nodes.entries()) {
      await waitFor(`token accepted on ${NAMES[i]}`, async () => (await whoami(n, token)) === 'system:serviceaccount:default:robot');
    }
    expect(await Promise.all(nodes.map((n) => whoami(n, token)))).toEqual(Array(3).fill('system:serviceaccount:default:robot'));
    await kubectl(nodes[2]!, ['delete', 'serviceaccount', 'robot', '-n', 'default']);
    for (const [i, n] of nodes.entries()) await waitFor(`token refused on ${NAMES[i]}`, async () => (await whoami(n, token)) === 401);
    expect(await Promise.all(nodes.map((n) => whoami(n, token)))).toEqual([401, 401, 401]);
  });
});
