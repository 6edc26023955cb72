/**
 * CustomResourceDefinitions on three nodes (and, with KAPI_TEST_STORAGE=etcd3, three API
 * servers on one etcd): a definition written through one node is served by every node, objects
 * written through one are listed and watched through the others, and deleting the definition
 * through a third removes its objects and the resource everywhere.
 */
import { jest } from '@jest/globals';
import { startThreeNodeCluster, type TestCluster } from './support/cluster.helper.js';
import { waitFor } from './support/net.helper.js';
import { kubectl, request, type ServerHandle } from './support/server.js';

jest.setTimeout(180_000);

type Obj = Record<string, unknown>;
let cluster: TestCluster;

const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'backups.ops.example.com' },
  spec: {
    group: 'ops.example.com',
    scope: 'Namespaced',
    names: { plural: 'backups', kind: 'Backup' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { target: { type: 'string' } } } } } },
        additionalPrinterColumns: [{ name: 'Target', type: 'string', jsonPath: '.spec.target' }],
      },
    ],
  },
};
const PATH = '/apis/ops.example.com/v1/namespaces/default/backups';
const backup = (name: string, target: string) => ({ apiVersion: 'ops.example.com/v1', kind: 'Backup', metadata: { name }, spec: { target } });

beforeAll(async () => {
  cluster = await startThreeNodeCluster('kapi-crd-cluster-', []);
}, 120_000);

afterAll(async () => {
  await cluster?.cleanup();
});

it('a definition made through one node is served, written, listed and watched through every node, and removed through any', async () => {
  const [n1, n2, n3] = cluster.nodes as [ServerHandle, ServerHandle, ServerHandle];
  expect((await request(n1, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: CRD })).status).toBe(201);
  for (const node of [n1, n2, n3]) {
    await waitFor(`backups served by ${node.url}`, async () => (await request(node, 'GET', PATH)).status === 200, 30_000);
  }
  await kubectl(n2, ['wait', '--for', 'condition=established', '--timeout=30s', 'crd/backups.ops.example.com']);

  // A watch through n3 from the (empty) list's revision sees the writes made through n1 and n2.
  const list = (await request(n3, 'GET', PATH)).json<{ metadata: { resourceVersion: string } }>();
  const watch = request(n3, 'GET', `${PATH}?watch=true&resourceVersion=${list.metadata.resourceVersion}&timeoutSeconds=5`, { timeoutMs: 20_000 });
  expect((await request(n1, 'POST', PATH, { body: backup('nightly', 'db') })).status).toBe(201);
  expect((await request(n2, 'POST', PATH, { body: backup('weekly', 'files') })).status).toBe(201);
  const events = (await watch).body
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; object: Obj });
  expect(events.map((e) => `${e.type} ${(e.object.metadata as Obj).name}`)).toEqual(['ADDED nightly', 'ADDED weekly']);

  const table = (await kubectl(n3, ['get', 'backups'])).stdout;
  expect(table).toMatch(/^NAME\s+TARGET\n/);
  expect(table).toMatch(/nightly\s+db\n/);
  expect(table).toMatch(/weekly\s+files\n/);

  await kubectl(n3, ['delete', 'crd', 'backups.ops.example.com', '--timeout=60s']);
  for (const node of [n1, n2, n3]) {
    await waitFor(`backups no longer served by ${node.url}`, async () => (await request(node, 'GET', PATH)).status === 404, 30_000);
    expect((await request(node, 'GET', '/apis')).json<{ groups: Obj[] }>().groups.map((g) => g.name)).not.toContain('ops.example.com');
  }
  // Recreated, the resource starts empty: the objects went with the definition.
  expect((await request(n2, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: CRD })).status).toBe(201);
  await waitFor('backups served again by n1', async () => (await request(n1, 'GET', PATH)).status === 200, 30_000);
  expect((await request(n1, 'GET', PATH)).json<{ items: unknown[] }>().items).toEqual([]);
});
