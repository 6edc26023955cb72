/**
 * The RBAC bootstrap policy is reconciled at every start: a bootstrap role or binding that lost
 * rules or subjects gets them back (and keeps what was added), unless it is annotated
 * rbac.authorization.kubernetes.io/autoupdate=false.
 */
import { jest } from '@jest/globals';
import { request, startServer, type ServerHandle } from './support/server.js';

jest.setTimeout(120_000);

type Obj = Record<string, unknown>;
const CR = '/apis/rbac.authorization.k8s.io/v1/clusterroles';
const CRB = '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings';
let server: ServerHandle;

beforeAll(async () => {
  server = await startServer();
});

afterAll(async () => {
  await server?.cleanup();
});

async function put(path: string, edit: (o: Obj) => void): Promise<void> {
  const obj = (await request(server, 'GET', path)).json<Obj>();
  edit(obj);
  const r = await request(server, 'PUT', path, { body: obj });
  if (r.status !== 200) throw new Error(`PUT ${path}: ${r.status} ${r.body}`);
}

it('restores missing bootstrap rules and subjects at start, keeping additions, and leaves autoupdate=false alone', async () => {
  const discovery = (await request(server, 'GET', `${CR}/system:discovery`)).json<{ rules: Obj[] }>().rules;
  const extra = { nonResourceURLs: ['/custom'], verbs: ['get'] };
  await put(`${CR}/system:discovery`, (o) => {
    o.rules = [extra];
  });
  await put(`${CRB}/system:basic-user`, (o) => {
    o.subjects = [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' }];
  });
  await put(`${CR}/system:public-info-viewer`, (o) => {
    (o.metadata as Obj).annotations = { 'rbac.authorization.kubernetes.io/autoupdate': 'false' };
    o.rules = [];
  });

  await server.restart();

  const after = (await request(server, 'GET', `${CR}/system:discovery`)).json<{ rules: Obj[] }>().rules;
  expect(after[0]).toEqual(extra);
  // Every part of the policy's rules is allowed again (broken down to single verbs and paths).
  const urls = new Set(after.flatMap((r) => ((r.nonResourceURLs as string[] | undefined) ?? []).map((u) => `${u} ${(r.verbs as string[]).join(',')}`)));
  for (const r of discovery) for (const u of (r.nonResourceURLs as string[]) ?? []) for (const v of r.verbs as string[]) expect(urls).toContain(`${u} ${v}`);
  const subjects = (await request(server, 'GET', `${CRB}/system:basic-user`)).json<{ subjects: Obj[] }>().subjects;
  expect(subjects).toEqual([
    { kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' },
    { kind: 'Group', name: 'system:authenticated', apiGroup: 'rbac.authorization.k8s.io' },
  ]);
  expect((await request(server, 'GET', `${CR}/system:public-info-viewer`)).json<Obj>().rules).toEqual([]);
  expect(server.stderr).toContain('reconciled clusterroles system:discovery');
});
