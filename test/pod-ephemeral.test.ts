/**
 * Ephemeral containers end to end: `kubectl debug` adds one to a pod through its
 * `ephemeralcontainers` subresource (a strategic merge patch), with its target container and
 * defaults; a second is added beside it. Kube's rules: existing ones may be neither changed nor
 * removed, names are unique among all containers, a target must be a container of the pod,
 * ports, probes and resources are refused, none can be set on create or through the pod's own
 * update; the subresource changes nothing else of the pod; RBAC asks for `patch` on
 * `pods/ephemeralcontainers`; discovery lists it.
 */
import { jest } from '@jest/globals';
import { createOrThrow, kubectl, request, startServer, type ServerHandle } from './support/server.js';
import { grantRole } from './support/rbac.helper.js';

jest.setTimeout(180_000);

type Obj = Record<string, unknown>;
const NS = 'debugging';
const PODS = `/api/v1/namespaces/${NS}/pods`;
let server: ServerHandle;

const getPod = async (name: string): Promise<Obj> => (await request(server, 'GET', `${PODS}/${name}`)).json() as Obj;
const ephemeralOf = (p: Obj): Obj[] => ((p.spec as Obj).ephemeralContainers ?? []) as Obj[];
const patchEphemeral = (name: string, body: unknown, type = 'application/strategic-merge-patch+json') =>
  request(server, 'PATCH', `${PODS}/${name}/ephemeralcontainers`, { body: JSON.stringify(body), headers: { 'content-type': type } });
const causes = (r: { json: <T>() => T }): string[] =>
  (r.json<{ details?: { causes?: { field: string; message: string }[] } }>().details?.causes ?? []).map((c) => `${c.field}: ${c.message}`);

beforeAll(async () => {
  server = await startServer();
  const created = (path: string, body: Obj) => createOrThrow(server, path, body);
  await created('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  await created(PODS, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'app', labels: { app: 'web' } },
    spec: { containers: [{ name: 'web', image: 'nginx:1.27' }], initContainers: [{ name: 'setup', image: 'busybox:1.36' }] },
  });
  // Someone who may read pods and their ephemeral containers but not add any.
  await grantRole(server, {
    namespace: NS,
    name: 'look',
    rules: [{ apiGroups: [''], resources: ['pods', 'pods/ephemeralcontainers'], verbs: ['get', 'list'] }],
    subject: { kind: 'User', name: 'looker' },
    probe: { path: PODS, headers: { 'Impersonate-User': 'looker' } },
  });
});

afterAll(async () => {
  await server?.cleanup();
});

describe('pods/ephemeralcontainers', () => {
  it('kubectl debug adds an ephemeral container aimed at a container of the pod; a second one is added beside it', async () => {
    const before = await getPod('app');
    const r = await kubectl(server, ['debug', 'app', '-n', NS, '--image=busybox', '--target=web', '-c', 'dbg']);
    expect(r.code).toBe(0);
    const p = await getPod('app');
    expect(ephemeralOf(p)).toEqual([
      expect.objectContaining({ name: 'dbg', image: 'busybox', targetContainerName: 'web', imagePullPolicy: 'Always', terminationMessagePolicy: 'File' }),
    ]);
    // The pod's generation follows its spec; nothing else changed.
    expect((p.metadata as Obj).generation).toBe(((before.metadata as Obj).generation as number) + 1);
    expect((p.spec as Obj).containers).toEqual((before.spec as Obj).containers);
    expect((p.metadata as Obj).labels).toEqual({ app: 'web' });

    // Without -c, kubectl names it debugger-<random>.
    await kubectl(server, ['debug', 'app', '-n', NS, '--image=busybox:1.36']);
    const both = ephemeralOf(await getPod('app'));
    expect(both.map((c) => c.name)).toEqual(['dbg', expect.stringMatching(/^debugger-/)]);
    expect(both[1]).toMatchObject({ image: 'busybox:1.36', imagePullPolicy: 'IfNotPresent' });

    // GET answers the pod.
    const got = await request(server, 'GET', `${PODS}/app/ephemeralcontainers`);
    expect(got.json<Obj>()).toMatchObject({ kind: 'Pod', metadata: { name: 'app' } });
  });

  it('refuses changing or removing one, duplicate names, unknown targets and the fields that serve', async () => {
    const p = await getPod('app');
    const current = ephemeralOf(p);
    const changed = await patchEphemeral('app', { spec: { ephemeralContainers: [{ name: 'dbg', image: 'alpine' }] } });
    expect(changed.status).toBe(422);
    expect(changed.json<Obj>().message).toContain('spec.ephemeralContainers[dbg]: Forbidden: existing ephemeral containers "dbg" may not be changed');

    const removed = await request(server, 'PUT', `${PODS}/app/ephemeralcontainers`, {
      body: { ...p, spec: { ...(p.spec as Obj), ephemeralContainers: current.slice(1) } },
    });
    expect(removed.status).toBe(422);
    expect(causes(removed)).toContain('spec.ephemeralContainers: Forbidden: existing ephemeral containers "dbg" may not be removed\n');

    // A merge patch replaces the list: the existing two first, then four new ones.
    const bad = await patchEphemeral(
      'app',
      {
        spec: {
          ephemeralContainers: [
            ...current,
            { name: 'web', image: 'busybox' },
            { name: 'aim', image: 'busybox', targetContainerName: 'nowhere' },
            { name: 'serve', image: 'busybox', ports: [{ containerPort: 80 }], resources: { limits: { cpu: '1' } } },
            { name: 'mount', image: 'busybox', volumeMounts: [{ name: 'v', mountPath: '/v', subPath: 'x' }] },
          ],
        },
      },
      'application/merge-patch+json',
    );
    expect(bad.status).toBe(422);
    expect(causes(bad)).toEqual(
      expect.arrayContaining([
        'spec.ephemeralContainers[2].name: Duplicate value: "web"',
        'spec.ephemeralContainers[3].targetContainerName: Not found: "nowhere"',
        'spec.ephemeralContainers[4].ports: Forbidden: cannot be set for an Ephemeral Container',
        'spec.ephemeralContainers[4].resources: Forbidden: cannot be set for an Ephemeral Container',
        'spec.ephemeralContainers[5].volumeMounts[0].subPath: Forbidden: cannot be set for an Ephemeral Container',
      ]),
    );
    expect(ephemeralOf(await getPod('app'))).toEqual(current);
  });

  it('cannot set them on create or through the pod itself, and changes nothing else through the subresource', async () => {
    const create = await request(server, 'POST', PODS, {
      body: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'born' },
        spec: { containers: [{ name: 'c', image: 'nginx' }], ephemeralContainers: [{ name: 'e', image: 'busybox' }] },
      },
    });
    expect(create.status).toBe(422);
    expect(causes(create)).toContain('spec.ephemeralContainers: Forbidden: cannot be set on create');

    const p = await getPod('app');
    const viaPod = await request(server, 'PUT', `${PODS}/app`, {
      body: { ...p, spec: { ...(p.spec as Obj), ephemeralContainers: [...ephemeralOf(p), { name: 'sneak', image: 'busybox' }] } },
    });
    expect(viaPod.status).toBe(422);
    expect(viaPod.json<Obj>().message).toContain('pod updates may not change fields other than');

    // Through the subresource, labels and containers are kept as stored.
    const ok = await patchEphemeral(
      'app',
      {
        metadata: { labels: { app: 'changed' } },
        spec: { containers: [{ name: 'web', image: 'nginx:2' }], ephemeralContainers: [...ephemeralOf(p), { name: 'third', image: 'busybox' }] },
      },
      'application/merge-patch+json',
    );
    expect(ok.status).toBe(200);
    const after = await getPod('app');
    expect((after.metadata as Obj).labels).toEqual({ app: 'web' });
    expect(((after.spec as Obj).containers as Obj[])[0]!.image).toBe('nginx:1.27');
    expect(ephemeralOf(after).map((c) => c.name)).toContain('third');
  });

  it('asks for patch on pods/ephemeralcontainers, and discovery lists it', async () => {
    const r = await kubectl(server, ['debug', 'app', '-n', NS, '--image=busybox', '--as=looker'], { expectFail: true });
    expect(r.stderr).toContain('User "looker" cannot patch resource "pods/ephemeralcontainers" in API group "" in the namespace "debugging"');
    const list = (await request(server, 'GET', '/api/v1')).json<{ resources: { name: string; kind: string; verbs: string[] }[] }>();
    expect(list.resources.find((x) => x.name === 'pods/ephemeralcontainers')).toMatchObject({ kind: 'Pod', verbs: ['get', 'patch', 'update'] });
  });
});
