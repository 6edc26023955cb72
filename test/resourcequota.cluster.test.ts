/**
 * ResourceQuota in a cluster of three real nodes: creates sent at the same time to all three
 * nodes spend a quota's last units exactly once (the admission plugin charges status.used by a
 * compare-and-swap on the quota's resourceVersion), and every node then reads the same usage,
 * which the resourcequota controller (on the Lease holder) agrees with.
 */
import { jest } from '@jest/globals';
import { startThreeNodeCluster, type TestCluster } from './support/cluster.helper.js';
import { request, waitFor } from './support/server.js';

jest.setTimeout(180_000);

let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startThreeNodeCluster('kapi-quota-cluster-', []);
}, 90_000);

afterAll(async () => {
  await cluster?.cleanup();
});

type Obj = Record<string, unknown>;
const CMS = '/api/v1/namespaces/rq-cluster/configmaps';
const QUOTA = '/api/v1/namespaces/rq-cluster/resourcequotas';

it('spends the last units of a quota once across three nodes', async () => {
  const [n1, n2, n3] = cluster.nodes as [(typeof cluster.nodes)[0], (typeof cluster.nodes)[0], (typeof cluster.nodes)[0]];
  expect((await request(n1, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'rq-cluster' } } })).status).toBe(201);
  await waitFor('kube-root-ca.crt', async () => (await request(n2, 'GET', `${CMS}/kube-root-ca.crt`)).status === 200, 30_000);
  const q = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'four' }, spec: { hard: { 'count/configmaps': '4' } } };
  expect((await request(n2, 'POST', QUOTA, { body: q })).status).toBe(201);
  const usedOn = async (node: typeof n1) => (((await request(node, 'GET', `${QUOTA}/four`)).json() as Obj).status as Obj | undefined)?.used as Obj | undefined;
  await waitFor('quota filled in', async () => (await usedOn(n3))?.['count/configmaps'] === '1', 30_000);

  const nodes = [n1, n2, n3];
  const results = await Promise.all(
    Array.from({ length: 12 }, (_, i) => request(nodes[i % 3]!, 'POST', CMS, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm${i}` } } })),
  );
  const statuses = results.map((r) => r.status);
  expect(statuses.filter((s) => s === 201)).toHaveLength(3);
  expect(statuses.filter((s) => s !== 201).every((s) => s === 403)).toBe(true);
  for (const node of nodes) expect(await usedOn(node)).toEqual({ 'count/configmaps': '4' });
  const listed = (await request(n1, 'GET', CMS)).json() as { items: unknown[] };
  expect(listed.items).toHaveLength(4);

  // A delete through one node gives the unit back; a create through another may spend it.
  const created = results.findIndex((r) => r.status === 201);
  expect((await request(n3, 'DELETE', `${CMS}/cm${created}`)).status).toBe(200);
  await waitFor('usage given back', async () => (await usedOn(n1))?.['count/configmaps'] === '3', 30_000);
  expect((await request(n2, 'POST', CMS, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'again' } } })).status).toBe(201);
});
