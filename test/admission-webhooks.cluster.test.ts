/**
 * Admission webhooks across a cluster of three real nodes: a ValidatingWebhookConfiguration
 * written through one node is in force on every node (each keeps its own watch-fed copy of the
 * configurations), and its deletion through another node lifts it everywhere.
 */
import { readFile } from 'node:fs/promises';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { startThreeNodeCluster, type TestCluster } from './support/cluster.helper.js';
import { kubectl, request, waitFor, type ServerHandle } from './support/server.js';

type Obj = Record<string, unknown>;

describe('admission webhooks in a 3-node cluster', () => {
  let cluster: TestCluster;
  let hooks: https.Server;
  const callers = new Set<string>();

  beforeAll(async () => {
    cluster = await startThreeNodeCluster('kapi-webhooks-cluster-', []);
    // The webhook serves with the cluster PKI's serving certificate (it covers 127.0.0.1).
    const pki = join(cluster.dir, 'pki');
    hooks = https.createServer(
      { cert: await readFile(join(pki, 'apiserver.crt'), 'utf8'), key: await readFile(join(pki, 'apiserver.key'), 'utf8') },
      (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { apiVersion: string; request: { uid: string; object: Obj } };
          const name = String((review.request.object.metadata as Obj).name);
          callers.add(name);
          const allowed = !name.startsWith('denied-');
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              apiVersion: review.apiVersion,
              kind: 'AdmissionReview',
              response: { uid: review.request.uid, allowed, ...(allowed ? {} : { status: { code: 403, message: 'names starting with denied- are refused' } }) },
            }),
          );
        });
      },
    );
    await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
  }, 90_000);

  afterAll(async () => {
    hooks?.closeAllConnections();
    await new Promise<void>((resolve) => (hooks ? hooks.close(() => resolve()) : resolve()));
    await cluster?.cleanup();
  });

  it('a configuration written through one node is called by every node, and its deletion through another lifts it', async () => {
    const [n1, n2, n3] = [cluster.nodes[0]!, cluster.nodes[1]!, cluster.nodes[2]!];
    const caBundle = Buffer.from(await readFile(join(cluster.dir, 'pki', 'ca.crt'), 'utf8')).toString('base64');
    const config = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'names' },
      webhooks: [
        {
          name: 'names.example.com',
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
          clientConfig: { url: `https://127.0.0.1:${(hooks.address() as AddressInfo).port}/`, caBundle },
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    };
    expect((await request(n1, 'POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', { body: config })).status).toBe(201);
    const create = (on: ServerHandle, name: string) => request(on, 'POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name } } });
    for (const [i, node] of [n1, n2, n3].entries()) {
      let k = 0;
      const refused = await waitFor(`the webhook in force on n${i + 1}`, async () => {
        const r = await create(node, `denied-${i}-${k++}`);
        return r.status === 403 ? r : undefined;
      });
      expect(refused.json<Obj>().message).toBe('admission webhook "names.example.com" denied the request: names starting with denied- are refused');
      expect((await create(node, `allowed-${i}`)).status).toBe(201);
      expect(callers.has(`allowed-${i}`)).toBe(true);
    }
    await kubectl(n3, ['delete', 'validatingwebhookconfiguration', 'names']);
    for (const [i, node] of [n1, n2, n3].entries()) {
      let k = 0;
      await waitFor(`the webhook lifted on n${i + 1}`, async () => (await create(node, `denied-after-${i}-${k++}`)).status === 201);
    }
  });
});
