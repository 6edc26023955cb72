/**
 * Events of the built-in controllers, end to end: the disruption controller records Kubernetes'
 * NoPods and CalculateExpectedPodCountFailed Events about a budget, a repeat raises the count
 * of the one Event instead of adding another (client-go's correlator), `kubectl describe pdb`
 * shows them, and UnmanagedPods when a scale-based budget selects pods without a controller; the
 * endpointslicemirroring controller records TooManyAddressesToMirror about an Endpoints subset
 * beyond 1000 addresses; the garbage collector records OwnerRefInvalidNamespace about a
 * dependent whose owner reference names an object of another namespace.
 */
import { jest } from '@jest/globals';
import { kubectl, request, startServer, waitFor, type ServerHandle } from './support/server.js';

jest.setTimeout(180_000);

let server: ServerHandle;

beforeAll(async () => {
  server = await startServer();
});

afterAll(async () => {
  await server?.cleanup();
});

type Obj = Record<string, unknown>;
const PDBS = (ns: string) => `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`;
const EVENTS = (ns: string) => `/api/v1/namespaces/${ns}/events`;

async function namespace(ns: string): Promise<void> {
  expect((await request(server, 'POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } })).status).toBe(201);
}

async function create(path: string, body: Obj): Promise<Obj> {
  const res = await request(server, 'POST', path, { body });
  expect(res.status).toBe(201);
  return res.json() as Obj;
}

/** The Events of a namespace about the named object with the given reason. */
async function eventsFor(ns: string, name: string, reason: string): Promise<Obj[]> {
  const sel = encodeURIComponent(`involvedObject.name=${name},reason=${reason}`);
  const res = await request(server, 'GET', `${EVENTS(ns)}?fieldSelector=${sel}`);
  expect(res.status).toBe(200);
  return (res.json() as { items: Obj[] }).items;
}

async function eventFor(ns: string, name: string, reason: string, minCount = 1): Promise<Obj> {
  return waitFor(`${reason} event about ${ns}/${name} with count >= ${minCount}`, async () => {
    const items = await eventsFor(ns, name, reason);
    return items.find((e) => (e.count as number) >= minCount);
  });
}

describe('controller events', () => {
  it('records NoPods about a budget selecting no pods, and counts repeats in that one Event', async () => {
    await namespace('ev-a');
    const pdb = await create(PDBS('ev-a'), {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'web' },
      spec: { minAvailable: 1, selector: { matchLabels: { app: 'web' } } },
    });
    const meta = pdb.metadata as Obj;
    const first = await eventFor('ev-a', 'web', 'NoPods');
    expect(first).toMatchObject({
      type: 'Normal',
      reason: 'NoPods',
      message: 'No matching pods found',
      source: { component: 'controllermanager' },
      reportingComponent: 'controllermanager',
      involvedObject: { kind: 'PodDisruptionBudget', apiVersion: 'policy/v1', name: 'web', namespace: 'ev-a', uid: meta.uid },
    });
    expect((first.metadata as Obj).name).toMatch(/^web\.[0-9a-f]{12,}$/);
    expect(typeof first.firstTimestamp).toBe('string');
    expect(typeof first.lastTimestamp).toBe('string');
    const count = first.count as number;

    // Each sync records it again: a pod the budget does not select queues the namespace's budgets.
    await create('/api/v1/namespaces/ev-a/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'other', labels: { app: 'other' } },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    });
    const again = await eventFor('ev-a', 'web', 'NoPods', count + 1);
    expect((again.metadata as Obj).name).toBe((first.metadata as Obj).name);
    expect(again.firstTimestamp).toBe(first.firstTimestamp);
    expect(await eventsFor('ev-a', 'web', 'NoPods')).toHaveLength(1);

    const described = (await kubectl(server, ['-n', 'ev-a', 'describe', 'pdb', 'web'])).stdout;
    const events = described.slice(described.indexOf('Events:'));
    expect(events).toMatch(/Type\s+Reason\s+Age\s+From\s+Message/);
    expect(events).toMatch(/Normal\s+NoPods\s+.*controllermanager\s+No matching pods found/);
  });

  it('records CalculateExpectedPodCountFailed when a pod controller has no scale', async () => {
    await namespace('ev-b');
    const owner = await create('/api/v1/namespaces/ev-b/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner' } });
    await create('/api/v1/namespaces/ev-b/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'p',
        labels: { app: 'db' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: (owner.metadata as Obj).uid, controller: true }],
      },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    });
    await create(PDBS('ev-b'), {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'db' },
      spec: { minAvailable: '50%', selector: { matchLabels: { app: 'db' } } },
    });
    const e = await eventFor('ev-b', 'db', 'CalculateExpectedPodCountFailed');
    expect(e).toMatchObject({
      type: 'Warning',
      message: 'Failed to calculate the number of expected pods: configmaps does not implement the scale subresource',
      source: { component: 'controllermanager' },
    });
    expect(await eventsFor('ev-b', 'db', 'NoPods')).toHaveLength(0);
    const described = (await kubectl(server, ['-n', 'ev-b', 'describe', 'pdb', 'db'])).stdout;
    expect(described).toMatch(/Warning\s+CalculateExpectedPodCountFailed\s+.*Failed to calculate the number of expected pods/);
  });

  it('records UnmanagedPods when a maxUnavailable budget selects a pod without a controller', async () => {
    await namespace('ev-d');
    await create('/api/v1/namespaces/ev-d/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'bare', labels: { app: 'bare' } },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    });
    await create(PDBS('ev-d'), {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'bare' },
      spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'bare' } } },
    });
    const e = await eventFor('ev-d', 'bare', 'UnmanagedPods');
    expect(e).toMatchObject({
      type: 'Warning',
      message:
        'Pods selected by this PodDisruptionBudget (selector: &LabelSelector{MatchLabels:map[string]string{app: bare,},MatchExpressions:[]LabelSelectorRequirement{},}) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set ".spec.minAvailable" field of the PDB to an integer value.',
    });
  });

  it('records TooManyAddressesToMirror about an Endpoints subset beyond 1000 addresses', async () => {
    await namespace('ev-e');
    await create('/api/v1/namespaces/ev-e/services', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'big' },
      spec: { ports: [{ port: 80 }] },
    });
    const addresses = Array.from({ length: 1002 }, (_, i) => ({ ip: `10.1.${Math.floor(i / 250)}.${(i % 250) + 1}` }));
    await create('/api/v1/namespaces/ev-e/endpoints', {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'big' },
      subsets: [{ addresses, ports: [{ port: 80 }] }],
    });
    const e = await eventFor('ev-e', 'big', 'TooManyAddressesToMirror');
    expect(e).toMatchObject({
      type: 'Warning',
      message: 'A max of 1000 addresses can be mirrored to EndpointSlices per Endpoints subset. 2 addresses were skipped',
      source: { component: 'endpoint-slice-mirroring-controller' },
      involvedObject: { kind: 'Endpoints', apiVersion: 'v1', name: 'big', namespace: 'ev-e' },
    });
  });

  it('records OwnerRefInvalidNamespace about a dependent whose owner lives in another namespace', async () => {
    await namespace('ev-c1');
    await namespace('ev-c2');
    const owner = await create('/api/v1/namespaces/ev-c1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner' } });
    const uid = (owner.metadata as Obj).uid as string;
    // Let the collector see the owner before the dependent.
    await waitFor('the garbage collector to see the owner', async () => {
      const m = await request(server, 'GET', '/metrics');
      const rev = /kapi_garbage_collector_processed_revision (\d+)/.exec(String(m.body))?.[1];
      return Number(rev) >= Number((owner.metadata as Obj).resourceVersion);
    });
    const dep = await create('/api/v1/namespaces/ev-c2/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'dep', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid }] },
    });
    const e = await eventFor('ev-c2', 'dep', 'OwnerRefInvalidNamespace');
    expect(e).toMatchObject({
      type: 'Warning',
      message: `ownerRef [v1/ConfigMap, namespace: ev-c2, name: owner, uid: ${uid}] does not exist in namespace "ev-c2"`,
      source: { component: 'garbage-collector-controller' },
      involvedObject: { kind: 'ConfigMap', apiVersion: 'v1', name: 'dep', namespace: 'ev-c2', uid: (dep.metadata as Obj).uid },
    });
  });
});
