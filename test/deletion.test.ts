/**
 * Deletion of an object (conventions "Deletion of an object"; resources doc "Delete response
 * bodies"): finalizers and Terminating, the shared finalizer list, preconditions, 200 vs 202
 * and Status vs object bodies, deletecollection with selectors, dry run and propagation.
 * Driven against a started server, with real kubectl where a user would use it.
 */
import { kubectl, request, startServer, type HttpResponse, type ServerHandle, waitFor } from './support/server.js';

let server: ServerHandle;
const NS = 'del';

beforeAll(async () => {
  server = await startServer();
  await kubectl(server, ['create', 'ns', NS]);
});

afterAll(async () => {
  await server?.cleanup();
});

const k = (args: string[], opts: { input?: string; expectFail?: boolean } = {}) => kubectl(server, args, opts);

interface Obj {
  kind?: string;
  metadata: {
    name: string;
    uid: string;
    resourceVersion: string;
    finalizers?: string[];
    deletionTimestamp?: string;
    deletionGracePeriodSeconds?: number;
    ownerReferences?: Array<{ uid: string }>;
    labels?: Record<string, string>;
  };
  data?: Record<string, string>;
}

const cmPath = (name = '') => `/api/v1/namespaces/${NS}/configmaps${name ? `/${name}` : ''}`;

async function createCm(name: string, extra: Record<string, unknown> = {}, data: Record<string, string> = { a: '1' }): Promise<Obj> {
  const r = await request(server, 'POST', cmPath(), { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...extra }, data } });
  expect(r.status).toBe(201);
  return r.json<Obj>();
}

async function get(path: string): Promise<HttpResponse> {
  return request(server, 'GET', path);
}

describe('finalizers and Terminating', () => {
  it('a delete with finalizers marks the object Terminating; it stays readable with both deletion fields', async () => {
    const created = await createCm('held', { finalizers: ['example.com/a', 'example.com/b'] });
    const d = await request(server, 'DELETE', cmPath('held'));
    expect(d.status).toBe(200);
    expect(d.json()).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'held', kind: 'configmaps', uid: created.metadata.uid } });
    const g = await get(cmPath('held'));
    expect(g.status).toBe(200);
    const o = g.json<Obj>();
    expect(o.metadata.deletionTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(o.metadata.deletionGracePeriodSeconds).toBe(0);
    expect(o.metadata.finalizers).toEqual(['example.com/a', 'example.com/b']);
    // kubectl sees it too.
    const kg = await k(['get', 'cm', 'held', '-n', NS, '-o', 'jsonpath={.metadata.deletionTimestamp}']);
    expect(kg.stdout).toBe(o.metadata.deletionTimestamp);
  });

  it('the deletionTimestamp is immutable: neither a second delete nor an update moves it', async () => {
    const before = (await get(cmPath('held'))).json<Obj>();
    await new Promise((r) => setTimeout(r, 1100));
    const again = await request(server, 'DELETE', cmPath('held'));
    expect(again.status).toBe(200);
    const put = { ...before, metadata: { ...before.metadata, deletionTimestamp: '2000-01-01T00:00:00Z', deletionGracePeriodSeconds: 30 }, data: { a: '2' } };
    const u = await request(server, 'PUT', cmPath('held'), { body: put });
    expect(u.status).toBe(200);
    const after = u.json<Obj>();
    expect(after.data).toEqual({ a: '2' });
    expect(after.metadata.deletionTimestamp).toBe(before.metadata.deletionTimestamp);
    expect(after.metadata.deletionGracePeriodSeconds).toBe(0);
  });

  it('the finalizer list is shared and reorderable, but gains no new entry once terminating (422, Kubernetes message)', async () => {
    const cur = (await get(cmPath('held'))).json<Obj>();
    const reordered = await request(server, 'PUT', cmPath('held'), {
      body: { ...cur, metadata: { ...cur.metadata, finalizers: ['example.com/b', 'example.com/a'] } },
    });
    expect(reordered.status).toBe(200);
    expect(reordered.json<Obj>().metadata.finalizers).toEqual(['example.com/b', 'example.com/a']);
    const add = await k(
      [
        'patch',
        'cm',
        'held',
        '-n',
        NS,
        '--type=json',
        '-p',
        '[{"op":"add","path":"/metadata/finalizers/-","value":"example.com/z"},{"op":"add","path":"/metadata/finalizers/-","value":"example.com/c"}]',
      ],
      { expectFail: true },
    );
    expect(add.stderr).toContain(
      'The ConfigMap "held" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/c", "example.com/z"}',
    );
    const raw = await request(server, 'PATCH', cmPath('held'), {
      body: { metadata: { finalizers: ['example.com/a', 'example.com/b', 'example.com/c'] } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(raw.status).toBe(422);
    expect(raw.json()).toMatchObject({ reason: 'Invalid', details: { causes: [{ reason: 'FieldValueForbidden', field: 'metadata.finalizers' }] } });
  });

  it('removing finalizers one by one: the object is removed with the last one', async () => {
    await k(['patch', 'cm', 'held', '-n', NS, '--type=json', '-p', '[{"op":"remove","path":"/metadata/finalizers/0"}]']);
    const still = await get(cmPath('held'));
    expect(still.status).toBe(200);
    expect(still.json<Obj>().metadata.finalizers).toEqual(['example.com/a']);
    const last = await k(['patch', 'cm', 'held', '-n', NS, '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
    expect(last.stdout).toContain('configmap/held patched');
    expect((await get(cmPath('held'))).status).toBe(404);
  });

  it('kubectl delete of an object with a finalizer waits until a finalizer holder removes it', async () => {
    await createCm('waited', { finalizers: ['example.com/hold'] });
    const del = k(['delete', 'cm', 'waited', '-n', NS, '--timeout=30s']);
    await waitFor('terminating', async () => (await get(cmPath('waited'))).json<Obj>().metadata.deletionTimestamp !== undefined);
    await request(server, 'PATCH', cmPath('waited'), { body: { metadata: { finalizers: null } }, headers: { 'content-type': 'application/merge-patch+json' } });
    const r = await del;
    expect(r.stdout).toContain('configmap "waited" deleted');
    expect((await get(cmPath('waited'))).status).toBe(404);
  });
});

describe('preconditions', () => {
  it('a wrong uid is 409 with Kubernetes message; nothing is deleted', async () => {
    const o = await createCm('pre');
    const r = await request(server, 'DELETE', cmPath('pre'), { body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'not-the-uid' } } });
    expect(r.status).toBe(409);
    expect(r.json()).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'Conflict',
      code: 409,
      message: `Operation cannot be fulfilled on configmaps "pre": Precondition failed: UID in precondition: not-the-uid, UID in object meta: ${o.metadata.uid}`,
    });
    expect((await get(cmPath('pre'))).status).toBe(200);
  });

  it('a stale resourceVersion is 409 with Kubernetes message', async () => {
    const o = (await get(cmPath('pre'))).json<Obj>();
    const r = await request(server, 'DELETE', cmPath('pre'), { body: { preconditions: { resourceVersion: '1' } } });
    expect(r.status).toBe(409);
    expect(r.json<{ message: string }>().message).toBe(
      `Operation cannot be fulfilled on configmaps "pre": Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: ${o.metadata.resourceVersion}`,
    );
  });

  it('matching preconditions delete', async () => {
    const o = (await get(cmPath('pre'))).json<Obj>();
    const r = await request(server, 'DELETE', cmPath('pre'), { body: { preconditions: { uid: o.metadata.uid, resourceVersion: o.metadata.resourceVersion } } });
    expect(r.status).toBe(200);
    expect((await get(cmPath('pre'))).status).toBe(404);
  });

  it('preconditions also guard the Terminating path', async () => {
    await createCm('pre-fin', { finalizers: ['example.com/x'] });
    const r = await request(server, 'DELETE', cmPath('pre-fin'), { body: { preconditions: { uid: 'nope' } } });
    expect(r.status).toBe(409);
    expect((await get(cmPath('pre-fin'))).json<Obj>().metadata.deletionTimestamp).toBeUndefined();
    await request(server, 'PATCH', cmPath('pre-fin'), {
      body: { metadata: { finalizers: null } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
  });

  it('rejects orphanDependents together with propagationPolicy (422, DeleteOptions validation)', async () => {
    await createCm('both');
    const r = await request(server, 'DELETE', cmPath('both'), { body: { orphanDependents: true, propagationPolicy: 'Background' } });
    expect(r.status).toBe(422);
    expect(r.json<{ message: string }>().message).toBe(
      'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Background": orphanDependents and deletionPropagation cannot be both set',
    );
  });
});

describe('delete response bodies: Status vs object, 200 vs 202', () => {
  it('ConfigMap: 200 Status when removed at once', async () => {
    const o = await createCm('body1');
    const r = await request(server, 'DELETE', cmPath('body1'));
    expect(r.status).toBe(200);
    expect(r.json()).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { name: 'body1', kind: 'configmaps', uid: o.metadata.uid },
    });
  });

  it('ConfigMap: 202 Status only when not removed at once and orphanDependents=false', async () => {
    await createCm('body2', { finalizers: ['example.com/x'] });
    const r = await request(server, 'DELETE', cmPath('body2'), { body: { orphanDependents: false } });
    expect(r.status).toBe(202);
    expect(r.json()).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'body2', kind: 'configmaps' } });
    // orphanDependents=false on an object removed at once is a plain 200.
    await createCm('body3');
    const r3 = await request(server, 'DELETE', `${cmPath('body3')}?orphanDependents=false`);
    expect(r3.status).toBe(200);
    await request(server, 'PATCH', cmPath('body2'), { body: { metadata: { finalizers: null } }, headers: { 'content-type': 'application/merge-patch+json' } });
    expect((await get(cmPath('body2'))).status).toBe(404);
  });

  it('ServiceAccount (listed with the object as body): the deleted object, or its Terminating state', async () => {
    const sa = `/api/v1/namespaces/${NS}/serviceaccounts`;
    expect((await request(server, 'POST', sa, { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot' } } })).status).toBe(201);
    const r = await request(server, 'DELETE', `${sa}/robot`);
    expect(r.status).toBe(200);
    expect(r.json()).toMatchObject({ kind: 'ServiceAccount', metadata: { name: 'robot' } });
    expect(
      (await request(server, 'POST', sa, { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot2', finalizers: ['example.com/x'] } } }))
        .status,
    ).toBe(201);
    const t = await request(server, 'DELETE', `${sa}/robot2`, { body: { orphanDependents: false } });
    expect(t.status).toBe(202);
    const body = t.json<Obj>();
    expect(body.kind).toBe('ServiceAccount');
    expect(body.metadata.deletionTimestamp).toBeDefined();
    await request(server, 'PATCH', `${sa}/robot2`, { body: { metadata: { finalizers: null } }, headers: { 'content-type': 'application/merge-patch+json' } });
  });

  it('Namespace: 200 Status while it terminates', async () => {
    await k(['create', 'ns', 'body-ns']);
    const r = await request(server, 'DELETE', '/api/v1/namespaces/body-ns');
    expect(r.status).toBe(200);
    expect(r.json()).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'body-ns', kind: 'namespaces' } });
  });
});

describe('deletecollection', () => {
  beforeAll(async () => {
    for (const [name, tier] of [
      ['web-1', 'web'],
      ['web-2', 'web'],
      ['db-1', 'db'],
      ['db-2', 'db'],
    ]) {
      await createCm(`dc-${name}`, { labels: { tier, set: 'dc' } });
    }
  });

  const names = async (): Promise<string[]> =>
    (await get(`${cmPath()}?labelSelector=set%3Ddc`))
      .json<{ items: Obj[] }>()
      .items.map((i) => i.metadata.name)
      .sort();

  it('dry run deletes nothing and changes no resourceVersion', async () => {
    const before = (await get(`${cmPath()}?labelSelector=set%3Ddc`)).json<{ items: Obj[]; metadata: { resourceVersion: string } }>();
    const r = await request(server, 'DELETE', `${cmPath()}?labelSelector=tier%3Dweb&dryRun=All`);
    expect(r.status).toBe(200);
    expect(r.json()).toMatchObject({ kind: 'Status', status: 'Success' });
    const after = (await get(`${cmPath()}?labelSelector=set%3Ddc`)).json<{ items: Obj[] }>();
    expect(after.items.map((i) => i.metadata.resourceVersion)).toEqual(before.items.map((i) => i.metadata.resourceVersion));
  });

  it('deletes only what the label selector matches', async () => {
    const r = await request(server, 'DELETE', `${cmPath()}?labelSelector=tier%3Dweb`);
    expect(r.status).toBe(200);
    expect(await names()).toEqual(['dc-db-1', 'dc-db-2']);
  });

  it('deletes only what the field selector matches', async () => {
    const r = await request(server, 'DELETE', `${cmPath()}?fieldSelector=metadata.name%3Ddc-db-2`);
    expect(r.status).toBe(200);
    expect(await names()).toEqual(['dc-db-1']);
    const bad = await request(server, 'DELETE', `${cmPath()}?fieldSelector=spec.nope%3Dx`);
    expect(bad.status).toBe(400);
  });

  it('kubectl delete -l removes the selected objects', async () => {
    const r = await k(['delete', 'cm', '-n', NS, '-l', 'tier=db']);
    expect(r.stdout).toContain('configmap "dc-db-1" deleted');
    expect(await names()).toEqual([]);
  });

  it('propagation applies to every object: Orphan keeps dependents and strips their references', async () => {
    const o1 = await createCm('dc-owner-1', { labels: { set: 'owners' } });
    const o2 = await createCm('dc-owner-2', { labels: { set: 'owners' } });
    const ref = (o: Obj) => ({ apiVersion: 'v1', kind: 'ConfigMap', name: o.metadata.name, uid: o.metadata.uid });
    await createCm('dc-dep', { ownerReferences: [ref(o1), ref(o2)] });
    const r = await request(server, 'DELETE', `${cmPath()}?labelSelector=set%3Downers`, { body: { propagationPolicy: 'Orphan' } });
    expect(r.status).toBe(200);
    await waitFor('owners gone', async () => (await get(cmPath('dc-owner-1'))).status === 404 && (await get(cmPath('dc-owner-2'))).status === 404);
    const dep = await get(cmPath('dc-dep'));
    expect(dep.status).toBe(200);
    expect(dep.json<Obj>().metadata.ownerReferences).toBeUndefined();
  });

  it('dry run with Foreground propagation never triggers the garbage collector', async () => {
    const o = await createCm('dry-owner', { labels: { set: 'dry' } });
    await createCm('dry-dep', { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'dry-owner', uid: o.metadata.uid, blockOwnerDeletion: true }] });
    const r = await request(server, 'DELETE', `${cmPath()}?labelSelector=set%3Ddry&dryRun=All&propagationPolicy=Foreground`);
    expect(r.status).toBe(200);
    const dry = await k(['delete', 'cm', 'dry-owner', '-n', NS, '--cascade=foreground', '--dry-run=server']);
    expect(dry.stdout).toContain('configmap "dry-owner" deleted (server dry run)');
    await new Promise((res) => setTimeout(res, 1500));
    const owner = (await get(cmPath('dry-owner'))).json<Obj>();
    expect(owner.metadata.resourceVersion).toBe(o.metadata.resourceVersion);
    expect(owner.metadata.finalizers).toBeUndefined();
    expect((await get(cmPath('dry-dep'))).status).toBe(200);
  });
});
