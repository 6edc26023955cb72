/**
 * In-place pod resize end to end: `kubectl patch --subresource resize` (a strategic merge patch)
 * and `kubectl replace --subresource resize` change the CPU and memory of a running pod's
 * containers through its `resize` subresource. The pod's own update still refuses them; the
 * subresource keeps everything else as stored and refuses what kube refuses (the QoS class
 * changing, removed limits, other resources, reordered containers); the namespace's
 * ResourceQuota charges what a resize adds and its LimitRange bounds the result; RBAC asks for
 * `patch` on `pods/resize`; discovery lists it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { createOrThrow, kubectl, request, startServer, waitFor, type ServerHandle } from './support/server.js';
import { grantRole } from './support/rbac.helper.js';

jest.setTimeout(180_000);

type Obj = Record<string, unknown>;
const NS = 'resizing';
const PODS = `/api/v1/namespaces/${NS}/pods`;
let server: ServerHandle;

const getPod = async (name: string): Promise<Obj> => (await request(server, 'GET', `${PODS}/${name}`)).json() as Obj;
const containersOf = (p: Obj): Obj[] => (p.spec as Obj).containers as Obj[];
const resizePatch = (name: string, patch: unknown, expectFail = false) =>
  kubectl(server, ['patch', 'pod', name, '-n', NS, '--subresource', 'resize', '-p', JSON.stringify(patch)], { expectFail });

beforeAll(async () => {
  server = await startServer();
  const created = (path: string, body: Obj) => createOrThrow(server, path, body);
  await created('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  await created(PODS, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'app', labels: { app: 'web' } },
    spec: {
      containers: [
        {
          name: 'web',
          image: 'nginx:1.27',
          resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
          resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'NotRequired' }],
        },
      ],
    },
  });
  await created(PODS, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'fixed' },
    spec: { containers: [{ name: 'db', image: 'postgres:17', resources: { limits: { cpu: '1', memory: '1Gi' } } }] },
  });
  // Someone who may patch pods, and read but not patch their resize subresource.
  await grantRole(server, {
    namespace: NS,
    name: 'edit-pods',
    rules: [
      { apiGroups: [''], resources: ['pods', 'pods/resize'], verbs: ['get', 'list'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['patch'] },
    ],
    subject: { kind: 'User', name: 'editor' },
    probe: { path: PODS, headers: { 'Impersonate-User': 'editor' } },
  });
});

afterAll(async () => {
  await server?.cleanup();
});

describe('pods/resize', () => {
  it('kubectl patch --subresource resize changes CPU and memory in place; the pod keeps its uid and the rest', async () => {
    const before = await getPod('app');
    const r = await resizePatch('app', {
      spec: { containers: [{ name: 'web', resources: { requests: { cpu: '200m' }, limits: { cpu: '800m', memory: '512Mi' } } }] },
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('pod/app patched');
    const after = await getPod('app');
    expect(containersOf(after)[0]!.resources).toEqual({ requests: { cpu: '200m', memory: '128Mi' }, limits: { cpu: '800m', memory: '512Mi' } });
    expect((after.metadata as Obj).uid).toBe((before.metadata as Obj).uid);
    expect((after.metadata as Obj).generation).toBe(((before.metadata as Obj).generation as number) + 1);
    expect(after.status).toEqual(before.status);

    // The pod's own update still refuses a change of resources.
    const viaPod = await kubectl(
      server,
      ['patch', 'pod', 'app', '-n', NS, '-p', '{"spec":{"containers":[{"name":"web","resources":{"requests":{"cpu":"300m"}}}]}}'],
      {
        expectFail: true,
      },
    );
    expect(viaPod.stderr).toContain('pod updates may not change fields other than');

    // GET answers the pod.
    const got = await kubectl(server, ['get', 'pod', 'app', '-n', NS, '--subresource', 'resize', '-o', 'jsonpath={.spec.containers[0].resources.limits.cpu}']);
    expect(got.stdout).toBe('800m');
  });

  it('kubectl replace --subresource resize takes a whole pod and keeps all but the resources as stored', async () => {
    const p = await getPod('app');
    const body = structuredClone(p);
    const web = containersOf(body)[0]!;
    web.resources = { requests: { cpu: '250m', memory: '128Mi' }, limits: { cpu: '800m', memory: '512Mi' } };
    web.image = 'nginx:1.28';
    (body.metadata as Obj).labels = { app: 'changed' };
    const file = join(server.harnessDir, 'resize.json');
    writeFileSync(file, JSON.stringify(body));
    const r = await kubectl(server, ['replace', '--subresource', 'resize', '-f', file]);
    expect(r.code).toBe(0);
    const after = await getPod('app');
    expect(containersOf(after)[0]).toMatchObject({ image: 'nginx:1.27', resources: { requests: { cpu: '250m' } } });
    expect((after.metadata as Obj).labels).toEqual({ app: 'web' });
  });

  it('refuses a change of QoS class, removed limits, other resources and reordered containers', async () => {
    const qos = await resizePatch('fixed', { spec: { containers: [{ name: 'db', resources: { limits: { cpu: '2' } } }] } }, true);
    expect(qos.stderr).toContain('The Pod "fixed" is invalid: spec: Invalid value: "Guaranteed": Pod QOS Class may not change as a result of resizing');

    const removed = await resizePatch('app', { spec: { containers: [{ name: 'web', resources: { limits: { memory: null } } }] } }, true);
    expect(removed.stderr).toContain('spec.containers[0].resources.limits: Forbidden: resource limits cannot be removed');

    const other = await resizePatch('app', { spec: { containers: [{ name: 'web', resources: { limits: { 'ephemeral-storage': '1Gi' } } }] } }, true);
    expect(other.stderr).toContain('spec: Forbidden: only cpu and memory resources are mutable');

    const above = await resizePatch('app', { spec: { containers: [{ name: 'web', resources: { requests: { cpu: '2' } } }] } }, true);
    expect(above.stderr).toContain('spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 800m');

    // A JSON patch can rename a container (a strategic merge patch finds containers by name).
    const p = await getPod('app');
    const two = await request(server, 'PATCH', `${PODS}/app/resize`, {
      body: JSON.stringify([{ op: 'add', path: '/spec/containers/0/name', value: 'renamed' }]),
      headers: { 'content-type': 'application/json-patch+json' },
    });
    expect(two.status).toBe(422);
    expect(two.json<Obj>().message).toContain('spec.containers[0].name: Forbidden: containers may not be renamed or reordered on resize');
    expect(await getPod('app')).toEqual(p);
  });

  it("is charged to the namespace's quota by what it adds, and held to its LimitRange", async () => {
    const ns = 'resize-bounded';
    await createOrThrow(server, '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await createOrThrow(server, `/api/v1/namespaces/${ns}/limitranges`, {
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'bounds' },
      spec: { limits: [{ type: 'Container', max: { cpu: '1' } }] },
    });
    await createOrThrow(server, `/api/v1/namespaces/${ns}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'w' },
      spec: { containers: [{ name: 'c', image: 'nginx:1.27', resources: { requests: { cpu: '200m' }, limits: { cpu: '800m' } } }] },
    });
    await createOrThrow(server, `/api/v1/namespaces/${ns}/resourcequotas`, {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'cpu' },
      spec: { hard: { 'requests.cpu': '500m' } },
    });
    const used = async (): Promise<string | undefined> =>
      (((await request(server, 'GET', `/api/v1/namespaces/${ns}/resourcequotas/cpu`)).json<Obj>().status as Obj | undefined)?.used as Obj | undefined)?.[
        'requests.cpu'
      ] as string | undefined;
    await waitFor('the quota to count the pod', async () => (await used()) === '200m');
    const patch = (cpu: Obj) =>
      kubectl(
        server,
        ['patch', 'pod', 'w', '-n', ns, '--subresource', 'resize', '-p', JSON.stringify({ spec: { containers: [{ name: 'c', resources: cpu }] } })],
        {
          expectFail: true,
        },
      );

    const grown = await kubectl(server, [
      'patch',
      'pod',
      'w',
      '-n',
      ns,
      '--subresource',
      'resize',
      '-p',
      '{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"400m"}}}]}}',
    ]);
    expect(grown.code).toBe(0);
    expect(await used()).toBe('400m');
    const over = await patch({ requests: { cpu: '600m' } });
    expect(over.stderr).toContain(
      'pods "w" is forbidden: exceeded quota: cpu, requested: requests.cpu=200m, used: requests.cpu=400m, limited: requests.cpu=500m',
    );
    const above = await patch({ limits: { cpu: '2' } });
    expect(above.stderr).toContain('pods "w" is forbidden: maximum cpu usage per Container is 1, but limit is 2');
    const w = await request(server, 'GET', `/api/v1/namespaces/${ns}/pods/w`);
    expect(containersOf(w.json<Obj>())[0]!.resources).toEqual({ requests: { cpu: '400m' }, limits: { cpu: '800m' } });
  });

  it('asks for patch on pods/resize, and discovery lists it', async () => {
    const r = await kubectl(
      server,
      [
        'patch',
        'pod',
        'app',
        '-n',
        NS,
        '--subresource',
        'resize',
        '--as=editor',
        '-p',
        '{"spec":{"containers":[{"name":"web","resources":{"requests":{"cpu":"300m"}}}]}}',
      ],
      { expectFail: true },
    );
    expect(r.stderr).toContain('User "editor" cannot patch resource "pods/resize" in API group "" in the namespace "resizing"');
    const list = (await request(server, 'GET', '/api/v1')).json<{ resources: { name: string; kind: string; verbs: string[] }[] }>();
    expect(list.resources.find((x) => x.name === 'pods/resize')).toMatchObject({ kind: 'Pod', verbs: ['get', 'patch', 'update'] });
  });
});
