/**
 * The RBAC bootstrap policy is reconciled at every start: a bootstrap role or binding that lost
 * rules or subjects gets them back (and keeps what was added), unless it is annotated
 * rbac.authorization.kubernetes.io/autoupdate=false. A bootstrap binding whose roleRef changed is
 * recreated.
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

it('recreates a bootstrap binding whose roleRef was changed (deleted and created again), and leaves one annotated autoupdate=false', async () => {
  const swap = async (name: string, annotations?: Record<string, string>): Promise<string> => {
    expect((await request(server, 'DELETE', `${CRB}/${name}`)).status).toBe(200);
    const r = await request(server, 'POST', CRB, {
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name, ...(annotations ? { annotations } : {}) },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
        subjects: [{ kind: 'User', name: 'bob', apiGroup: 'rbac.authorization.k8s.io' }],
      },
    });
    expect(r.status).toBe(201);
    return r.json<{ metadata: { uid: string } }>().metadata.uid;
  };
  const swappedUid = await swap('system:public-info-viewer');
  await swap('system:discovery', { 'rbac.authorization.kubernetes.io/autoupdate': 'false' });

  await server.restart();

  const recreated = (await request(server, 'GET', `${CRB}/system:public-info-viewer`)).json<{ metadata: { uid: string }; roleRef: Obj; subjects: Obj[] }>();
  expect(recreated.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:public-info-viewer' });
  expect(recreated.subjects).toEqual([
    { kind: 'Group', name: 'system:authenticated', apiGroup: 'rbac.authorization.k8s.io' },
    { kind: 'Group', name: 'system:unauthenticated', apiGroup: 'rbac.authorization.k8s.io' },
  ]);
  expect(recreated.metadata.uid).not.toBe(swappedUid);
  expect(server.stderr).toContain('recreated clusterrolebindings system:public-info-viewer');
  const kept = (await request(server, 'GET', `${CRB}/system:discovery`)).json<{ roleRef: Obj }>();
  expect(kept.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' });
});
