/**
 * ResourceQuota end to end with real kubectl: `kubectl create quota`, the resourcequota
 * controller filling status (hard from spec, used counted from the namespace, the root CA
 * config map included), `get quota` columns and `describe quota`; the ResourceQuota admission
 * plugin refusing pods past the quota with Kubernetes' 403 message, a pod without the requests a
 * quota limits, usage given back after a delete, a BestEffort-scoped quota, config map counting,
 * dry runs that charge nothing, and concurrent creates that never overspend.
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
const k = (args: string[], opts: { input?: string; expectFail?: boolean } = {}) => kubectl(server, args, opts);

async function namespace(ns: string): Promise<void> {
  expect((await request(server, 'POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } })).status).toBe(201);
}

/** A pod manifest; `cpu` sets the container's cpu request. */
const podYaml = (name: string, cpu?: string) => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
spec:
  containers:
  - name: c
    image: nginx
${cpu ? `    resources:\n      requests:\n        cpu: ${cpu}\n` : ''}`;

async function used(ns: string, name: string): Promise<Obj | undefined> {
  const r = await request(server, 'GET', `/api/v1/namespaces/${ns}/resourcequotas/${name}`);
  return ((r.json() as Obj).status as Obj | undefined)?.used as Obj | undefined;
}

/** Waits until the quota's status.used has the given values. */
async function usedIs(ns: string, name: string, want: Obj): Promise<Obj> {
  return waitFor(`used ${JSON.stringify(want)} of ${ns}/${name}`, async () => {
    const u = await used(ns, name);
    return u && Object.entries(want).every(([r, v]) => u[r] === v) ? u : false;
  });
}

describe('ResourceQuota', () => {
  it('is created with kubectl, filled in by the controller, and shown by get and describe', async () => {
    await namespace('rq-a');
    expect((await k(['-n', 'rq-a', 'create', 'quota', 'q', '--hard=pods=2,requests.cpu=1,count/configmaps=3'])).stdout).toContain('resourcequota/q created');
    // The namespace's kube-root-ca.crt config map counts, as in Kubernetes.
    await waitFor('root CA config map', async () => (await request(server, 'GET', '/api/v1/namespaces/rq-a/configmaps/kube-root-ca.crt')).status === 200);
    expect(await usedIs('rq-a', 'q', { pods: '0', 'requests.cpu': '0', 'count/configmaps': '1' })).toEqual({
      pods: '0',
      'requests.cpu': '0',
      'count/configmaps': '1',
    });
    const table = (await k(['-n', 'rq-a', 'get', 'quota'])).stdout;
    expect(table).toMatch(/^NAME\s+AGE\s+REQUEST\s+LIMIT\s*$/m);
    expect(table).toMatch(/^q\s+\S+\s+count\/configmaps: 1\/3, pods: 0\/2, requests\.cpu: 0\/1\s*$/m);
    const described = (await k(['-n', 'rq-a', 'describe', 'quota', 'q'])).stdout;
    expect(described).toMatch(/^Name:\s+q$/m);
    expect(described).toMatch(/^Namespace:\s+rq-a$/m);
    expect(described).toMatch(/^Resource\s+Used\s+Hard$/m);
    expect(described).toMatch(/^count\/configmaps\s+1\s+3$/m);
    expect(described).toMatch(/^pods\s+0\s+2$/m);
    expect(described).toMatch(/^requests\.cpu\s+0\s+1$/m);
    const explained = (await k(['explain', 'resourcequota.spec'])).stdout;
    expect(explained).toMatch(/scopeSelector/);
  });

  it('charges pods and refuses the one past the quota with 403 and Kubernetes message', async () => {
    await k(['-n', 'rq-a', 'create', '-f', '-'], { input: podYaml('p1', '200m') });
    await k(['-n', 'rq-a', 'create', '-f', '-'], { input: podYaml('p2', '300m') });
    expect(await used('rq-a', 'q')).toMatchObject({ pods: '2', 'requests.cpu': '500m' });
    const refused = await k(['-n', 'rq-a', 'create', '-f', '-'], { input: podYaml('p3', '100m'), expectFail: true });
    expect(refused.stderr).toContain(
      'Error from server (Forbidden): error when creating "STDIN": pods "p3" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2',
    );
    const raw = await request(server, 'POST', '/api/v1/namespaces/rq-a/pods', {
      body: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p4' },
        spec: { containers: [{ name: 'c', image: 'nginx', resources: { requests: { cpu: '1' } } }] },
      },
    });
    expect(raw.status).toBe(403);
    expect(raw.json()).toMatchObject({
      kind: 'Status',
      reason: 'Forbidden',
      code: 403,
      message: 'pods "p4" is forbidden: exceeded quota: q, requested: pods=1,requests.cpu=1, used: pods=2,requests.cpu=500m, limited: pods=2,requests.cpu=1',
    });
  });

  it('gives usage back after a delete', async () => {
    await k(['-n', 'rq-a', 'delete', 'pod', 'p1', '--wait=false']);
    await usedIs('rq-a', 'q', { pods: '1', 'requests.cpu': '300m' });
    await k(['-n', 'rq-a', 'create', '-f', '-'], { input: podYaml('p3', '100m') });
    expect(await used('rq-a', 'q')).toMatchObject({ pods: '2', 'requests.cpu': '400m' });
  });

  it('counts config maps, and checks dry runs without charging them', async () => {
    await k(['-n', 'rq-a', 'create', 'configmap', 'cm1']);
    expect((await k(['-n', 'rq-a', 'create', 'configmap', 'cm2', '--dry-run=server'])).stdout).toContain('configmap/cm2 created (server dry run)');
    expect(await used('rq-a', 'q')).toMatchObject({ 'count/configmaps': '2' });
    await k(['-n', 'rq-a', 'create', 'configmap', 'cm2']);
    const refused = await k(['-n', 'rq-a', 'create', 'configmap', 'cm3'], { expectFail: true });
    expect(refused.stderr).toContain(
      // kubectl create configmap words a server error its own way.
      'error: failed to create configmap: configmaps "cm3" is forbidden: exceeded quota: q, requested: count/configmaps=1, used: count/configmaps=3, limited: count/configmaps=3',
    );
    const dry = await k(['-n', 'rq-a', 'create', 'configmap', 'cm3', '--dry-run=server'], { expectFail: true });
    expect(dry.stderr).toContain('exceeded quota: q, requested: count/configmaps=1');
  });

  it('refuses a pod without the requests a quota limits', async () => {
    await namespace('rq-b');
    await k(['-n', 'rq-b', 'create', 'quota', 'cpu', '--hard=requests.cpu=1']);
    await usedIs('rq-b', 'cpu', { 'requests.cpu': '0' });
    const refused = await k(['-n', 'rq-b', 'create', '-f', '-'], { input: podYaml('bare'), expectFail: true });
    expect(refused.stderr).toContain('pods "bare" is forbidden: failed quota: cpu: must specify requests.cpu for: c');
    await k(['-n', 'rq-b', 'create', '-f', '-'], { input: podYaml('sized', '250m') });
    expect(await used('rq-b', 'cpu')).toEqual({ 'requests.cpu': '250m' });
  });

  it('applies a BestEffort quota to best-effort pods only', async () => {
    await namespace('rq-c');
    expect((await k(['-n', 'rq-c', 'create', 'quota', 'be', '--hard=pods=1', '--scopes=BestEffort'])).stdout).toContain('resourcequota/be created');
    await usedIs('rq-c', 'be', { pods: '0' });
    await k(['-n', 'rq-c', 'create', '-f', '-'], { input: podYaml('be1') });
    const refused = await k(['-n', 'rq-c', 'create', '-f', '-'], { input: podYaml('be2'), expectFail: true });
    expect(refused.stderr).toContain('pods "be2" is forbidden: exceeded quota: be, requested: pods=1, used: pods=1, limited: pods=1');
    await k(['-n', 'rq-c', 'create', '-f', '-'], { input: podYaml('burstable', '100m') });
    expect(await used('rq-c', 'be')).toEqual({ pods: '1' });
    const described = (await k(['-n', 'rq-c', 'describe', 'quota', 'be'])).stdout;
    expect(described).toMatch(/^Scopes:\s+BestEffort$/m);
  });

  it('never lets concurrent creates spend the same unit twice', async () => {
    await namespace('rq-d');
    await k(['-n', 'rq-d', 'create', 'quota', 'three', '--hard=count/secrets=3']);
    await usedIs('rq-d', 'three', { 'count/secrets': '0' });
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        request(server, 'POST', '/api/v1/namespaces/rq-d/secrets', { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: `s${i}` } } }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(3);
    expect(results.filter((r) => r.status === 403)).toHaveLength(5);
    expect(await used('rq-d', 'three')).toEqual({ 'count/secrets': '3' });
  });

  it('keeps status out of spec writes and validates with Kubernetes messages', async () => {
    const body = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'bad' }, spec: { hard: { pods: '1500m', foo: '1' } } };
    const r = await request(server, 'POST', '/api/v1/namespaces/rq-a/resourcequotas', { body });
    expect(r.status).toBe(422);
    expect((r.json() as Obj).message).toBe(
      'ResourceQuota "bad" is invalid: [spec.hard[foo]: Invalid value: "foo": must be a standard resource type or fully qualified, spec.hard[pods]: Invalid value: "1500m": must be an integer]',
    );
    const created = await request(server, 'POST', '/api/v1/namespaces/rq-a/resourcequotas', {
      body: { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'st' }, spec: { hard: { services: '1' } }, status: { used: { services: '9' } } },
    });
    expect(created.status).toBe(201);
    expect((created.json() as Obj).status).toEqual({});
  });
});
