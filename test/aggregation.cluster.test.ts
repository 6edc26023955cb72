/**
 * The aggregation layer on three nodes: a remote APIService created through one node is marked
 * Available by the node running the controllers, and every node lists its group in aggregated
 * discovery and passes requests on to its server (the metrics stand-in of
 * test/support/metrics-standin.ts), so load-balanced clients see one API.
 */
import { jest } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startThreeNodeCluster, type TestCluster } from './support/cluster.helper.js';
import { availableWhen, standInObjects, startMetricsStandIn, type MetricsStandIn } from './support/metrics-standin.js';
import { releaseOutsideAddresses, waitFor } from './support/net.helper.js';
import { kubectl, request } from './support/server.js';

jest.setTimeout(180_000);

type Obj = Record<string, unknown>;
const NS = 'aggregated-cluster';
const AGGREGATED = { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' };

let cluster: TestCluster;
let standIn: MetricsStandIn;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'aggregation-cluster-'));
  standIn = await startMetricsStandIn(dir, NS, '198.18.0.3');
  const ext = standIn.pkiDir;
  cluster = await startThreeNodeCluster('kapi-aggregation-cluster-', [
    `--proxy-client-cert-file=${join(ext, 'admin.crt')}`,
    `--proxy-client-key-file=${join(ext, 'admin.key')}`,
  ]);
  const n1 = cluster.nodes[0]!;
  for (const [path, body] of [
    ['/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }] as [string, Obj],
    ...standInObjects(standIn),
  ]) {
    const r = await request(n1, 'POST', path, { body });
    if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${r.body}`);
  }
}, 120_000);

afterAll(async () => {
  await cluster?.cleanup();
  await standIn?.close();
  releaseOutsideAddresses();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('an APIService made through one node is Available, discovered and served through every node', async () => {
  const [n1, n2, n3] = cluster.nodes as [TestCluster['nodes'][0], TestCluster['nodes'][0], TestCluster['nodes'][0]];
  expect(await availableWhen(n2, 'v1beta1.metrics.k8s.io', 'True')).toMatchObject({ reason: 'Passed' });
  for (const node of [n1, n2, n3]) {
    await waitFor(
      `metrics.k8s.io in the aggregated discovery of ${node.url}`,
      async () => {
        const items = (await request(node, 'GET', '/apis', { headers: AGGREGATED })).json<{ items: Obj[] }>().items ?? [];
        const g = items.find((i) => (i.metadata as Obj).name === 'metrics.k8s.io');
        return ((g?.versions as Obj[] | undefined)?.[0]?.resources as unknown[] | undefined)?.length === 2;
      },
      40_000,
    );
    const r = await request(node, 'GET', `/apis/metrics.k8s.io/v1beta1/namespaces/${NS}/pods`);
    expect([r.status, r.json<Obj>().kind]).toEqual([200, 'PodMetricsList']);
  }
  expect((await kubectl(n3, ['top', 'pod', '-n', NS])).stdout).toMatch(/busy\s+123m\s+45Mi/);
});
