/**
 * Binding pods to nodes end to end, as a scheduler does: the pods' `binding` subresource (JSON
 * and protobuf bodies) and the legacy namespaced `bindings` resource set spec.nodeName, merge the
 * Binding's annotations and make PodScheduled True; a second binding, a terminating pod and a
 * gated pod are 409 with kube's messages; validation (target kind and name, the name in the URL)
 * and a missing pod are refused; a dry run writes nothing; RBAC asks for `create` on
 * `pods/binding` (or `bindings`); discovery and kubectl list both.
 */
import { jest } from '@jest/globals';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeProtobuf, type JsonObject } from '@app/apimachinery';
import { kubectl, request, startServer, type ServerHandle } from './support/server.js';

jest.setTimeout(180_000);

let server: ServerHandle;

beforeAll(async () => {
  server = await startServer();
  for (const ns of ['bind-a', 'bind-rbac']) {
    const r = await request(server, 'POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });
    if (r.status !== 201) throw new Error(`creating namespace ${ns}: ${r.status} ${r.body}`);
  }
});

afterAll(async () => {
  await server?.cleanup();
});

type Obj = Record<string, unknown>;
const PODS = (ns: string) => `/api/v1/namespaces/${ns}/pods`;
const binding = (name: string, target: Obj, meta: Obj = {}) => ({ apiVersion: 'v1', kind: 'Binding', metadata: { name, ...meta }, target });
const bind = (ns: string, name: string, body: unknown, opts: { query?: string; headers?: Record<string, string> } = {}) =>
  request(server, 'POST', `${PODS(ns)}/${name}/binding${opts.query ?? ''}`, { body, ...(opts.headers ? { headers: opts.headers } : {}) });

async function pod(ns: string, name: string, spec: Obj = {}, meta: Obj = {}): Promise<Obj> {
  const r = await request(server, 'POST', PODS(ns), {
    body: { apiVersion: 'v1', kind: 'Pod', metadata: { name, ...meta }, spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec } },
  });
  expect(r.status).toBe(201);
  return r.json() as Obj;
}
const getPod = async (ns: string, name: string): Promise<Obj> => (await request(server, 'GET', `${PODS(ns)}/${name}`)).json() as Obj;
const nodeOf = (p: Obj): unknown => (p.spec as Obj).nodeName;
const conditions = (p: Obj): Obj[] => (((p.status as Obj).conditions ?? []) as Obj[]) ?? [];

describe('the pods/binding subresource', () => {
  it('binds a pod: nodeName, merged annotations, PodScheduled True, a Status of Success', async () => {
    const before = await pod('bind-a', 'p1', {}, { annotations: { keep: 'k', over: 'old' } });
    const r = await bind('bind-a', 'p1', binding('p1', { kind: 'Node', name: 'node-1' }, { annotations: { over: 'new', 'scheduler.example/reason': 'fit' } }));
    expect(r.status).toBe(201);
    expect(r.json()).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
    const p = await getPod('bind-a', 'p1');
    expect(nodeOf(p)).toBe('node-1');
    expect((p.metadata as Obj).annotations).toEqual({ keep: 'k', over: 'new', 'scheduler.example/reason': 'fit' });
    expect(conditions(p)).toEqual([expect.objectContaining({ type: 'PodScheduled', status: 'True', lastTransitionTime: expect.any(String) })]);
    expect((p.status as Obj).phase).toBe('Pending');
    expect(Number((p.metadata as Obj).resourceVersion)).toBeGreaterThan(Number((before.metadata as Obj).resourceVersion));
    const pb = await request(server, 'GET', `${PODS('bind-a')}/p1`, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    expect([pb.status, pb.headers['content-type']]).toEqual([200, 'application/vnd.kubernetes.protobuf']);
    // The pod is found by its node, as a kubelet watches for it.
    const byNode = (await request(server, 'GET', `${PODS('bind-a')}?fieldSelector=spec.nodeName%3Dnode-1`)).json() as { items: Obj[] };
    expect(byNode.items.map((i) => (i.metadata as Obj).name)).toEqual(['p1']);
  });

  it('refuses a second binding with 409 and kube message', async () => {
    const r = await bind('bind-a', 'p1', binding('p1', { name: 'node-2' }));
    expect(r.status).toBe(409);
    expect(r.json()).toMatchObject({
      status: 'Failure',
      reason: 'Conflict',
      message: 'Operation cannot be fulfilled on pods/binding "p1": pod p1 is already assigned to node "node-1"',
      details: { name: 'p1', kind: 'pods/binding' },
    });
    expect(nodeOf(await getPod('bind-a', 'p1'))).toBe('node-1');
  });

  it('refuses a gated pod and a terminating one with 409', async () => {
    await pod('bind-a', 'gated', { schedulingGates: [{ name: 'example.com/wait' }] });
    const gated = await bind('bind-a', 'gated', binding('gated', { name: 'node-1' }));
    expect([gated.status, (gated.json() as Obj).message]).toEqual([
      409,
      'Operation cannot be fulfilled on pods/binding "gated": pod gated has non-empty .spec.schedulingGates',
    ]);
    await pod('bind-a', 'leaving', {}, { finalizers: ['example.com/hold'] });
    expect((await request(server, 'DELETE', `${PODS('bind-a')}/leaving`)).status).toBe(200);
    const leaving = await bind('bind-a', 'leaving', binding('leaving', { name: 'node-1' }));
    expect([leaving.status, (leaving.json() as Obj).message]).toEqual([
      409,
      'Operation cannot be fulfilled on pods/binding "leaving": pod leaving is being deleted, cannot be assigned to a host',
    ]);
    const p = await getPod('bind-a', 'leaving');
    expect(nodeOf(p)).toBeUndefined();
    await request(server, 'PATCH', `${PODS('bind-a')}/leaving`, {
      body: { metadata: { finalizers: null } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
  });

  it('validates the Binding: target kind (422 NotSupported), target name (422 Required), the name in the URL (400)', async () => {
    await pod('bind-a', 'v1');
    const kind = await bind('bind-a', 'v1', binding('v1', { kind: 'Pod', name: 'node-1' }));
    expect(kind.status).toBe(422);
    expect(kind.json()).toMatchObject({
      reason: 'Invalid',
      message: 'Binding "v1" is invalid: target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>"',
      details: { name: 'v1', kind: 'Binding', causes: [{ reason: 'FieldValueNotSupported', field: 'target.kind' }] },
    });
    const name = await bind('bind-a', 'v1', binding('v1', { kind: 'Node' }));
    expect(name.status).toBe(422);
    expect(name.json()).toMatchObject({
      message: 'Binding "v1" is invalid: target.name: Required value',
      details: { causes: [{ reason: 'FieldValueRequired', field: 'target.name' }] },
    });
    const mismatch = await bind('bind-a', 'v1', binding('other', { name: 'node-1' }));
    expect(mismatch.status).toBe(400);
    expect(mismatch.json()).toMatchObject({ reason: 'BadRequest', message: 'name in URL does not match name in Binding object' });
    expect(nodeOf(await getPod('bind-a', 'v1'))).toBeUndefined();
  });

  it('answers 404 for a pod that does not exist', async () => {
    const r = await bind('bind-a', 'ghost', binding('ghost', { name: 'node-1' }));
    expect(r.status).toBe(404);
    expect(r.json()).toMatchObject({ reason: 'NotFound', message: 'pods "ghost" not found' });
  });

  it('writes nothing on a dry run', async () => {
    const before = await pod('bind-a', 'dry');
    const r = await bind('bind-a', 'dry', binding('dry', { name: 'node-1' }), { query: '?dryRun=All' });
    expect(r.status).toBe(201);
    const p = await getPod('bind-a', 'dry');
    expect(nodeOf(p)).toBeUndefined();
    expect(conditions(p)).toEqual([]);
    expect((p.metadata as Obj).resourceVersion).toBe((before.metadata as Obj).resourceVersion);
  });

  it('checks the Binding uid as a precondition (409 for another pod uid)', async () => {
    const created = await pod('bind-a', 'uid');
    const stale = await bind('bind-a', 'uid', binding('uid', { name: 'node-1' }, { uid: '00000000-0000-0000-0000-000000000000' }));
    expect(stale.status).toBe(409);
    expect((stale.json() as Obj).message).toContain('Precondition failed: UID in precondition: 00000000-0000-0000-0000-000000000000');
    const ok = await bind('bind-a', 'uid', binding('uid', { name: 'node-1' }, { uid: (created.metadata as Obj).uid }));
    expect(ok.status).toBe(201);
  });

  it('takes a protobuf body, as client-go sends it', async () => {
    await pod('bind-a', 'pb');
    const body = Buffer.from(encodeProtobuf(binding('pb', { kind: 'Node', name: 'node-pb' }) as JsonObject, 'k8s.io.api.core.v1.Binding'));
    const r = await bind('bind-a', 'pb', body, {
      headers: { 'content-type': 'application/vnd.kubernetes.protobuf', accept: 'application/vnd.kubernetes.protobuf, application/json' },
    });
    expect(r.status).toBe(201);
    expect((r.json() as Obj).status).toBe('Success');
    expect(nodeOf(await getPod('bind-a', 'pb'))).toBe('node-pb');
  });
});

describe('the bindings resource', () => {
  it('binds the pod its metadata.name names', async () => {
    await pod('bind-a', 'legacy');
    const r = await request(server, 'POST', '/api/v1/namespaces/bind-a/bindings', {
      body: binding('legacy', { kind: 'Node', name: 'node-3' }, { annotations: { a: 'b' } }),
    });
    expect(r.status).toBe(201);
    expect(r.json()).toMatchObject({ kind: 'Status', status: 'Success' });
    const p = await getPod('bind-a', 'legacy');
    expect(nodeOf(p)).toBe('node-3');
    expect((p.metadata as Obj).annotations).toEqual({ a: 'b' });
    const again = await request(server, 'POST', '/api/v1/namespaces/bind-a/bindings', { body: binding('legacy', { name: 'node-4' }) });
    expect([again.status, (again.json() as Obj).message]).toEqual([
      409,
      'Operation cannot be fulfilled on pods/binding "legacy": pod legacy is already assigned to node "node-3"',
    ]);
    const invalid = await request(server, 'POST', '/api/v1/namespaces/bind-a/bindings', { body: binding('legacy', { kind: 'Service', name: 'x' }) });
    expect(invalid.status).toBe(422);
    expect((invalid.json() as Obj).message).toBe('Binding "legacy" is invalid: target.kind: Unsupported value: "Service": supported values: "Node", "<empty>"');
    expect((await request(server, 'GET', '/api/v1/namespaces/bind-a/bindings')).status).toBe(405);
  });

  it('is created with kubectl and listed by kubectl api-resources with pods/binding in discovery', async () => {
    await pod('bind-a', 'kc');
    const manifest = join(server.harnessDir, 'binding-kc.json');
    writeFileSync(manifest, JSON.stringify(binding('kc', { kind: 'Node', name: 'node-k' })));
    // Client-side validation of a create-only kind asks for CustomResourceDefinitions, which are not served.
    await kubectl(server, ['-n', 'bind-a', 'create', '--validate=false', '-f', manifest]);
    expect(nodeOf(await getPod('bind-a', 'kc'))).toBe('node-k');
    const resources = await kubectl(server, ['api-resources', '--api-group=', '--namespaced=true', '-o', 'wide']);
    expect(resources.stdout).toMatch(/^bindings\s+v1\s+true\s+Binding\s+create\s*$/m);
    const list = (await request(server, 'GET', '/api/v1')).json() as { resources: Obj[] };
    expect(list.resources.find((r) => r.name === 'pods/binding')).toEqual({
      name: 'pods/binding',
      singularName: '',
      namespaced: true,
      kind: 'Binding',
      verbs: ['create'],
    });
    expect(list.resources.find((r) => r.name === 'bindings')).toMatchObject({
      name: 'bindings',
      singularName: 'binding',
      namespaced: true,
      kind: 'Binding',
      verbs: ['create'],
    });
    const agg = (
      await request(server, 'GET', '/api', { headers: { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' } })
    ).json() as { items: Array<{ versions: Array<{ resources: Obj[] }> }> };
    const res = agg.items[0]!.versions[0]!.resources;
    expect((res.find((r) => r.resource === 'pods')!.subresources as Obj[]).find((s) => s.subresource === 'binding')).toEqual({
      subresource: 'binding',
      responseKind: { group: '', version: 'v1', kind: 'Binding' },
      verbs: ['create'],
    });
    expect(res.find((r) => r.resource === 'bindings')).toMatchObject({
      resource: 'bindings',
      scope: 'Namespaced',
      singularResource: 'binding',
      verbs: ['create'],
    });
  });
});

describe('authorization', () => {
  it('asks for create on pods/binding (subresource) and on bindings (resource)', async () => {
    const asBinder = { 'Impersonate-User': 'binder' };
    await pod('bind-rbac', 'r1');
    await pod('bind-rbac', 'r2');
    const denied = await bind('bind-rbac', 'r1', binding('r1', { name: 'node-1' }), { headers: asBinder });
    expect(denied.status).toBe(403);
    expect((denied.json() as Obj).message).toBe(
      'pods "r1" is forbidden: User "binder" cannot create resource "pods/binding" in API group "" in the namespace "bind-rbac"',
    );
    const deniedLegacy = await request(server, 'POST', '/api/v1/namespaces/bind-rbac/bindings', { body: binding('r2', { name: 'node-1' }), headers: asBinder });
    expect(deniedLegacy.status).toBe(403);
    const role = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'binder' },
      rules: [{ apiGroups: [''], resources: ['pods/binding', 'bindings'], verbs: ['create'] }],
    };
    expect((await request(server, 'POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/bind-rbac/roles', { body: role })).status).toBe(201);
    const rb = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'binder' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'binder' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'binder' }],
    };
    expect((await request(server, 'POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/bind-rbac/rolebindings', { body: rb })).status).toBe(201);
    let allowed = denied;
    for (let i = 0; i < 100 && allowed.status === 403; i++) {
      await new Promise((r) => setTimeout(r, 100));
      allowed = await bind('bind-rbac', 'r1', binding('r1', { name: 'node-1' }), { headers: asBinder });
    }
    expect(allowed.status).toBe(201);
    const legacy = await request(server, 'POST', '/api/v1/namespaces/bind-rbac/bindings', { body: binding('r2', { name: 'node-2' }), headers: asBinder });
    expect(legacy.status).toBe(201);
    expect(nodeOf(await getPod('bind-rbac', 'r2'))).toBe('node-2');
    // The grant is for binding only: the pod itself stays out of reach.
    expect((await request(server, 'GET', `${PODS('bind-rbac')}/r1`, { headers: asBinder })).status).toBe(403);
  });
});
