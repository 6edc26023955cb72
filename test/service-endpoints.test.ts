/**
 * The endpoints and endpointslice controllers end to end with real kubectl: a Deployment
 * exposed by `kubectl expose` gets an Endpoints object and EndpointSlices listing its pods as
 * they get an IP and become ready (written here through the pods' status, as a kubelet would),
 * shown by `get endpoints`, `get endpointslices` and `describe service`; they follow pods that
 * go, are set right when edited or deleted by hand, and go away with the Service.
 */
import { jest } from '@jest/globals';
import { kubectl, startServer, waitFor, type ServerHandle } from './support/server.js';

jest.setTimeout(180_000);

let server: ServerHandle;
const NS = 'shop';
const TRIGGER = 'endpoints.kubernetes.io/last-change-trigger-time';

beforeAll(async () => {
  server = await startServer();
  await kubectl(server, ['create', 'namespace', NS]);
});

afterAll(async () => {
  await server?.cleanup();
});

type Obj = Record<string, unknown>;
const k = (args: string[], opts: { input?: string; expectFail?: boolean } = {}) => kubectl(server, [...args, '-n', NS], opts);
const json = async (args: string[]): Promise<Obj> => JSON.parse((await k([...args, '-o', 'json'])).stdout) as Obj;
const items = async (args: string[]): Promise<Obj[]> => (await json(args)).items as Obj[];
const slices = (svc: string) => items(['get', 'endpointslices', '-l', `kubernetes.io/service-name=${svc}`]);

/** Writes a pod's status as a kubelet would: running, an IP, ready or not (since `since`, when given). */
async function podUp(name: string, ip: string, ready: boolean, since?: string): Promise<void> {
  const ready_ = { type: 'Ready', status: ready ? 'True' : 'False', ...(since ? { lastTransitionTime: since } : {}) };
  const status = { phase: 'Running', podIP: ip, podIPs: [{ ip }], conditions: [ready_] };
  await k(['patch', 'pod', name, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })]);
}

describe('a Service with a selector', () => {
  let pods: string[] = [];

  it('gets an Endpoints object and a placeholder slice at once, before any pod has an IP', async () => {
    await k(['create', 'deployment', 'web', '--image=nginx', '--replicas=2', '--port=8080']);
    pods = await waitFor('two pods', async () => {
      const names = (await items(['get', 'pods', '-l', 'app=web'])).map((p) => (p.metadata as Obj).name as string);
      return names.length === 2 ? names.sort() : undefined;
    });
    expect((await k(['expose', 'deployment', 'web', '--port=80', '--target-port=8080'])).stdout).toContain('service/web exposed');
    const ep = await waitFor('the Endpoints', async () => (await k(['get', 'endpoints', 'web', '--ignore-not-found', '-o', 'json'])).stdout || undefined);
    expect(JSON.parse(ep)).toMatchObject({ metadata: { name: 'web', labels: { app: 'web' } } });
    expect(JSON.parse(ep).subsets ?? []).toEqual([]);
    const placeholder = await waitFor('the placeholder slice', async () => ((await slices('web')).length === 1 ? (await slices('web'))[0] : undefined));
    expect(placeholder).toMatchObject({
      addressType: 'IPv4',
      metadata: {
        generateName: 'web-',
        labels: { app: 'web', 'kubernetes.io/service-name': 'web', 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: 'web', controller: true, blockOwnerDeletion: true }],
      },
    });
    expect(placeholder.endpoints ?? []).toEqual([]);
    expect((await k(['describe', 'service', 'web'])).stdout).toMatch(/^Endpoints:\s*$/m);
    // The first write for a new Service says when the Service was made.
    const created = ((await json(['get', 'service', 'web'])).metadata as Obj).creationTimestamp;
    expect(JSON.parse(ep).metadata.annotations).toEqual({ [TRIGGER]: created });
    expect((placeholder.metadata as Obj).annotations).toEqual({ [TRIGGER]: created });
  });

  it('lists pods as they get an IP, ready ones as addresses, the others as not ready', async () => {
    const [a, b] = pods as [string, string];
    await podUp(a, '10.244.1.11', true);
    await podUp(b, '10.244.1.12', false);
    const row = await waitFor('the ready pod in get endpoints', async () => {
      const out = (await k(['get', 'endpoints', 'web', '--no-headers'])).stdout;
      return /10\.244\.1\.11:8080/.test(out) ? out : undefined;
    });
    expect(row).toMatch(/^web\s+10\.244\.1\.11:8080\s+\d+s$/m);
    const ep = await json(['get', 'endpoints', 'web']);
    expect(ep.subsets).toEqual([
      {
        addresses: [{ ip: '10.244.1.11', targetRef: { kind: 'Pod', namespace: NS, name: a, uid: expect.any(String) } }],
        notReadyAddresses: [{ ip: '10.244.1.12', targetRef: { kind: 'Pod', namespace: NS, name: b, uid: expect.any(String) } }],
        ports: [{ port: 8080, protocol: 'TCP' }],
      },
    ]);

    const slice = await waitFor('both pods in the slice', async () => {
      const [s] = await slices('web');
      return s && Array.isArray(s.endpoints) && s.endpoints.length === 2 ? s : undefined;
    });
    expect(slice.ports).toEqual([{ name: '', port: 8080, protocol: 'TCP' }]);
    expect(slice.endpoints).toEqual([
      { addresses: ['10.244.1.11'], conditions: { ready: true, serving: true, terminating: false }, targetRef: expect.objectContaining({ name: a }) },
      { addresses: ['10.244.1.12'], conditions: { ready: false, serving: false, terminating: false }, targetRef: expect.objectContaining({ name: b }) },
    ]);
    const sliceRow = (await k(['get', 'endpointslices', '-l', 'kubernetes.io/service-name=web', '--no-headers'])).stdout;
    expect(sliceRow).toMatch(/^web-[a-z0-9]{5}\s+IPv4\s+8080\s+10\.244\.1\.11,10\.244\.1\.12\s+\d+s$/m);
    expect((await k(['describe', 'service', 'web'])).stdout).toMatch(/^Endpoints:\s+10\.244\.1\.11:8080$/m);

    // Ready since a time of its own: the write that follows carries that time.
    await podUp(b, '10.244.1.12', true, '2026-11-01T10:00:00Z');
    await waitFor('both ready', async () => /10\.244\.1\.11:8080,10\.244\.1\.12:8080/.test((await k(['get', 'endpoints', 'web', '--no-headers'])).stdout));
    expect(((await json(['get', 'endpoints', 'web'])).metadata as Obj).annotations).toEqual({ [TRIGGER]: '2026-11-01T10:00:00Z' });
    await waitFor('the slice written for the same change', async () => {
      const [s] = await slices('web');
      return ((s?.metadata as Obj | undefined)?.annotations as Obj | undefined)?.[TRIGGER] === '2026-11-01T10:00:00Z';
    });
  });

  it('follows a pod that leaves (its labels, its deletion), and a changed target port', async () => {
    const [a, b] = pods as [string, string];
    // Relabelled out of the selector: the ReplicaSet releases it and the Service drops it.
    await k(['label', 'pod', a, 'app=retired', '--overwrite']);
    await waitFor('only b', async () => {
      const out = (await k(['get', 'endpoints', 'web', '--no-headers'])).stdout;
      return /^web\s+10\.244\.1\.12:8080\s/m.test(out);
    });
    await waitFor('only b in the slice', async () => {
      const [s] = await slices('web');
      return s && Array.isArray(s.endpoints) && s.endpoints.length === 1 && (s.endpoints[0] as Obj).addresses?.toString() === '10.244.1.12';
    });
    const before = (await slices('web'))[0]!;

    await k(['patch', 'service', 'web', '--type=json', '-p', '[{"op":"replace","path":"/spec/ports/0/targetPort","value":9090}]']);
    await waitFor('the new port', async () => /^web\s+10\.244\.1\.12:9090\s/m.test((await k(['get', 'endpoints', 'web', '--no-headers'])).stdout));
    const after = await waitFor('the slice on the new port', async () => {
      const [s] = await slices('web');
      return s && JSON.stringify(s.ports).includes('9090') ? s : undefined;
    });
    // The slice is rewritten in place rather than replaced.
    expect((after.metadata as Obj).name).toBe((before.metadata as Obj).name);

    await k(['delete', 'pod', b, '--wait=false']);
    await waitFor('no address', async () => {
      const ep = await json(['get', 'endpoints', 'web']);
      return ((ep.subsets as unknown[] | undefined) ?? []).length === 0;
    });
    await waitFor('the slice without endpoints', async () => {
      const all = await slices('web');
      return all.length === 1 && ((all[0]!.endpoints as unknown[] | undefined) ?? []).length === 0;
    });
  });

  it('sets right what is edited or deleted by hand', async () => {
    const name = (await slices('web'))[0]!.metadata as Obj;
    await k(['label', 'endpointslice', String(name.name), 'app=tampered', '--overwrite']);
    await waitFor(
      'the label restored',
      async () => (await k(['get', 'endpointslice', String(name.name), '-o', 'jsonpath={.metadata.labels.app}'])).stdout === 'web',
    );
    await k(['delete', 'endpointslice', String(name.name)]);
    const again = await waitFor('a slice again', async () => ((await slices('web')).length === 1 ? (await slices('web'))[0] : undefined));
    expect((again.metadata as Obj).name).not.toBe(name.name);
    expect((again.metadata as Obj).labels).toMatchObject({ app: 'web', 'kubernetes.io/service-name': 'web' });
    await k(['delete', 'endpoints', 'web']);
    await waitFor(
      'the Endpoints again',
      async () => (await k(['get', 'endpoints', 'web', '--ignore-not-found', '-o', 'name'])).stdout.trim() === 'endpoints/web',
    );
  });

  it('labels the Endpoints and slices of a headless Service, and names pods by hostname under their subdomain', async () => {
    await k(['create', 'service', 'clusterip', 'db', '--clusterip=None', '--tcp=5432:5432']);
    await k(['patch', 'service', 'db', '--type=json', '-p', '[{"op":"replace","path":"/spec/selector","value":{"role":"db"}}]']);
    await k(['run', 'db-0', '--image=postgres', '--labels=role=db', '--overrides', JSON.stringify({ spec: { hostname: 'db-0', subdomain: 'db' } })]);
    await podUp('db-0', '10.244.2.5', true);
    const ep = await waitFor('the headless Endpoints', async () => {
      const o = JSON.parse((await k(['get', 'endpoints', 'db', '--ignore-not-found', '-o', 'json'])).stdout || '{}') as Obj;
      return Array.isArray(o.subsets) && o.subsets.length ? o : undefined;
    });
    expect((ep.metadata as Obj).labels).toMatchObject({ 'service.kubernetes.io/headless': '' });
    expect(ep.subsets).toEqual([
      { addresses: [expect.objectContaining({ ip: '10.244.2.5', hostname: 'db-0' })], ports: [{ name: '5432-5432', port: 5432, protocol: 'TCP' }] },
    ]);
    const [s] = await slices('db');
    expect((s!.metadata as Obj).labels).toMatchObject({ 'service.kubernetes.io/headless': '' });
  });

  it('leaves Services without a selector to their own Endpoints, and removes what a deleted Service had', async () => {
    await k(['create', 'service', 'clusterip', 'manual', '--tcp=80:80']);
    await k(['patch', 'service', 'manual', '--type=json', '-p', '[{"op":"remove","path":"/spec/selector"}]']);
    await k(['apply', '-f', '-'], {
      input: 'apiVersion: v1\nkind: Endpoints\nmetadata:\n  name: manual\nsubsets:\n- addresses:\n  - ip: 10.9.0.1\n  ports:\n  - port: 80\n',
    });
    // The mirroring controller's slice, not this controller's.
    const mirrored = await waitFor('the mirrored slice', async () => (await slices('manual'))[0]);
    expect((mirrored.metadata as Obj).labels).toMatchObject({ 'endpointslice.kubernetes.io/managed-by': 'endpointslicemirroring-controller.k8s.io' });
    expect((await k(['get', 'endpoints', 'manual', '-o', 'jsonpath={.subsets[0].addresses[0].ip}'])).stdout).toBe('10.9.0.1');

    await k(['delete', 'service', 'web', 'db', 'manual']);
    for (const svc of ['web', 'db', 'manual']) {
      await waitFor(`no Endpoints ${svc}`, async () => (await k(['get', 'endpoints', svc, '--ignore-not-found', '-o', 'name'])).stdout.trim() === '');
      await waitFor(`no slices of ${svc}`, async () => (await slices(svc)).length === 0);
    }
  });
});
