/**
 * Stored values that do not decode into objects (written around the API: through the etcd API,
 * or a damaged disk), as Kubernetes handles them: a GET of one is a 500 naming its storage key,
 * a LIST that meets any is a 500 StorageReadError naming every such key (kubectl shows it), a
 * watch that meets one ends with an ERROR naming it, and a DELETE with
 * ignoreStoreReadErrorWithClusterBreakingPotential removes one for a user allowed the verb
 * `unsafe-delete-ignore-read-errors`, after which the collection reads again. An object of the
 * kind with a field its Go type cannot hold (`"data": {"k": 1}`) counts as undecodable too, as
 * Kubernetes' decoder refuses it. The values are written with etcdctl into the store the server runs on: the built-in store's etcd endpoint, or
 * the external etcd when the suite runs on one (KAPI_TEST_STORAGE=etcd3).
 */
import { startEtcd, type EtcdCluster } from './support/etcd.js';
import { prerequisite } from './support/prereq.js';
import { run } from './support/run.js';
import { etcdServerArgs, getFreePorts, kubectl, request, startServer, testStorage, waitFor, type HttpResponse, type ServerHandle } from './support/server.js';

const NS = 'default';
const CM = `/api/v1/namespaces/${NS}/configmaps`;
// On an external etcd the server runs with a prefix of its own (--etcd-prefix), and errors name
// the etcd key under it.
const ETCD_PREFIX = '/kapi-corrupt';
const STORED = (path: string) => `${testStorage() === 'etcd3' ? ETCD_PREFIX : '/registry'}/${path}`;
const KEY = (name: string) => STORED(`core/configmaps/${NS}/${name}`);

interface Status {
  code: number;
  reason?: string;
  message?: string;
  details?: { name?: string; kind?: string; group?: string; causes?: { reason?: string; message?: string; field?: string }[] };
}

describe('stored values that do not decode', () => {
  let server: ServerHandle | undefined;
  let etcd: EtcdCluster | undefined;
  let clientUrl = '';
  let have = false;

  /** etcdctl put into the store the server runs on. */
  const putRaw = async (key: string, value: string): Promise<void> => {
    if (etcd) {
      await etcd.etcdctl(['put', key, value]);
      return;
    }
    const r = await run('etcdctl', ['--endpoints', clientUrl, 'put', key], { ETCDCTL_API: '3' }, value, 30_000);
    if (r.code !== 0) throw new Error(`etcdctl put ${key} exited ${r.code}: ${r.stderr}`);
  };
  const status = (r: HttpResponse): Status => r.json<Status>();
  const asBob = { 'Impersonate-User': 'bob' };

  beforeAll(async () => {
    have = prerequisite('etcdctl', 'values written around the API with etcdctl (test/corrupt-objects.test.ts)');
    if (!have) return;
    if (testStorage() === 'etcd3') {
      etcd = await startEtcd({ members: 1 });
      server = await startServer({ args: etcdServerArgs(['--etcd-prefix', ETCD_PREFIX], etcd) });
    } else {
      const [port] = await getFreePorts(1);
      clientUrl = `http://127.0.0.1:${port}`;
      server = await startServer({ args: ['--storage-backend', 'builtin', '--listen-client-urls', clientUrl] });
    }
  }, 90_000);

  afterAll(async () => {
    await server?.cleanup();
    await etcd?.cleanup();
  });

  it('are named by GET, LIST and watch, and removed by an unsafe DELETE the user is allowed', async () => {
    if (!have) return;
    const s = server!;
    for (const name of ['good-1', 'good-2']) {
      const r = await request(s, 'POST', CM, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { app: 'x' } }, data: { k: name } } });
      expect(r.status).toBe(201);
    }
    const before = (await request(s, 'GET', CM)).json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
    // A watch from before the damage: it ends with an ERROR naming the key it could not decode.
    const watch = request(s, 'GET', `${CM}?watch=1&resourceVersion=${before}&timeoutSeconds=20`, { timeoutMs: 30_000 });

    await putRaw(KEY('broken-a'), 'not json {');
    await putRaw(KEY('broken-b'), '{"kind":"ConfigMap","data":{}}');

    const events = (await watch).body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; object: Status });
    expect(events.at(-1)?.type).toBe('ERROR');
    expect(events.at(-1)?.object.code).toBe(500);
    expect(events.at(-1)?.object.message).toContain(`StorageError: corrupt object, Code: 7, Key: ${KEY('broken-a')}`);

    // GET: 500 naming the key, in Kubernetes' words.
    const get = await request(s, 'GET', `${CM}/broken-a`);
    expect(get.status).toBe(500);
    expect(status(get).reason).toBe('InternalError');
    expect(status(get).message).toContain(`Internal error occurred: StorageError: corrupt object, Code: 7, Key: ${KEY('broken-a')}, ResourceVersion: 0`);
    expect(status(get).message).toContain('not valid JSON');
    expect(status(await request(s, 'GET', `${CM}/broken-b`)).message).toContain('not a JSON object with metadata');

    // LIST: one StorageReadError naming every undecodable key it read: with a label selector
    // (all keys are read), a page of one (the first key at least; a backend that reads on to
    // fill the page names the second too), a list narrowed to one by name.
    const cases: [string, string[]][] = [
      ['', ['broken-a', 'broken-b']],
      ['?labelSelector=app%3Dx', ['broken-a', 'broken-b']],
      ['?limit=1', ['broken-a']],
      ['?fieldSelector=metadata.name%3Dbroken-b', ['broken-b']],
    ];
    for (const [q, names] of cases) {
      const list = await request(s, 'GET', `${CM}${q}`);
      expect([q, list.status]).toEqual([q, 500]);
      const st = status(list);
      expect(st.reason).toBe('StorageReadError');
      expect(st.message).toBe('failed to read one or more configmaps from the storage');
      expect(st.details?.kind).toBe('configmaps');
      const fields = (st.details?.causes ?? []).map((c) => c.field);
      expect([q, q === '?limit=1' ? fields.slice(0, 1) : fields]).toEqual([q, names.map(KEY)]);
      for (const c of st.details?.causes ?? []) {
        expect(c.reason).toBe('UnexpectedServerResponse');
        expect(c.message).toContain(`Key: ${c.field}`);
      }
    }
    const all = await request(s, 'GET', '/api/v1/configmaps');
    expect(status(all).reason).toBe('StorageReadError');
    const got = await kubectl(s, ['get', 'configmaps', '-n', NS], { expectFail: true });
    expect(got.stderr).toContain('failed to read one or more configmaps from the storage');

    // A plain DELETE cannot read the object either.
    const plain = await request(s, 'DELETE', `${CM}/broken-a`);
    expect(plain.status).toBe(500);
    expect(status(plain).message).toContain(`Key: ${KEY('broken-a')}`);

    // The option is only for objects that do not decode: 422 on one that does, which stays.
    const readable = await request(s, 'DELETE', `${CM}/good-1?ignoreStoreReadErrorWithClusterBreakingPotential=true`);
    expect(readable.status).toBe(422);
    expect(status(readable).message).toBe(
      'configmaps "good-1" is invalid: ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: is exclusively used to delete corrupt object(s), try again by removing this option',
    );
    expect((await request(s, 'GET', `${CM}/good-1`)).status).toBe(200);
    // Nor is it taken on a collection (by query or in a body): 422, and nothing is deleted.
    for (const opts of [
      { query: '?ignoreStoreReadErrorWithClusterBreakingPotential=true' },
      { query: '', body: { kind: 'DeleteOptions', apiVersion: 'v1', ignoreStoreReadErrorWithClusterBreakingPotential: true } },
    ]) {
      const coll = await request(s, 'DELETE', `${CM}${opts.query}`, opts.body ? { body: opts.body } : {});
      expect(coll.status).toBe(422);
      expect(status(coll)).toMatchObject({
        reason: 'Invalid',
        message:
          'DeleteOptions.meta.k8s.io "" is invalid: ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: is not allowed with DELETECOLLECTION, try again after removing the option',
        details: { group: 'meta.k8s.io', kind: 'DeleteOptions', causes: [{ field: 'ignoreStoreReadErrorWithClusterBreakingPotential' }] },
      });
      expect(status(coll).details).not.toHaveProperty('name');
    }
    expect((await request(s, 'GET', `${CM}/good-1`)).status).toBe(200);
    expect((await request(s, 'GET', `${CM}/broken-a`)).status).toBe(500);

    // A user allowed to delete configmaps but not the unsafe verb is refused before anything is read.
    const role = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'cm-deleter' },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'delete'] }],
    };
    expect((await request(s, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, { body: role })).status).toBe(201);
    const binding = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'bob-cm-deleter' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cm-deleter' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'bob' }],
    };
    expect((await request(s, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, { body: binding })).status).toBe(201);
    await waitFor('bob may get configmaps', async () => (await request(s, 'GET', `${CM}/good-2`, { headers: asBob })).status === 200);
    const refused = await request(s, 'DELETE', `${CM}/broken-a?ignoreStoreReadErrorWithClusterBreakingPotential=true`, { headers: asBob });
    expect(refused.status).toBe(403);
    expect(status(refused).message).toContain('configmaps "broken-a" is forbidden: not permitted to do "unsafe-delete-ignore-read-errors"');

    // Granted the verb, bob removes it (the option in the query); the admin removes the other
    // (the option in a DeleteOptions body). Each answer is a Success Status naming the object.
    role.rules[0]!.verbs.push('unsafe-delete-ignore-read-errors');
    expect((await request(s, 'PUT', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles/cm-deleter`, { body: role })).status).toBe(200);
    const deleted = await waitFor('bob may delete unsafely', async () => {
      const r = await request(s, 'DELETE', `${CM}/broken-a?ignoreStoreReadErrorWithClusterBreakingPotential=true`, { headers: asBob });
      return r.status === 403 ? undefined : r;
    });
    expect(deleted.status).toBe(200);
    expect(deleted.json<{ status: string; details: { name: string } }>()).toMatchObject({ status: 'Success', details: { name: 'broken-a' } });
    expect((await request(s, 'GET', `${CM}/broken-a`)).status).toBe(404);
    const dry = await request(s, 'DELETE', `${CM}/broken-b?dryRun=All`, {
      body: { kind: 'DeleteOptions', apiVersion: 'v1', ignoreStoreReadErrorWithClusterBreakingPotential: true },
    });
    expect(dry.status).toBe(200);
    expect((await request(s, 'GET', `${CM}/broken-b`)).status).toBe(500);
    const body = await request(s, 'DELETE', `${CM}/broken-b`, {
      body: { kind: 'DeleteOptions', apiVersion: 'v1', ignoreStoreReadErrorWithClusterBreakingPotential: true },
    });
    expect(body.status).toBe(200);

    // The collection reads again, through the API and kubectl.
    const list = await request(s, 'GET', CM);
    expect(list.status).toBe(200);
    const names = list.json<{ items: { metadata: { name: string } }[] }>().items.map((i) => i.metadata.name);
    expect(names).toEqual(expect.arrayContaining(['good-1', 'good-2']));
    expect(names.filter((n) => n.startsWith('broken'))).toEqual([]);
    const ok = await kubectl(s, ['get', 'configmaps', '-n', NS, '-o', 'name']);
    expect(ok.stdout).toContain('configmap/good-1');
  }, 120_000);

  it("count an object of another kind under a kind's keys as undecodable, and one without kind or apiVersion as the kind's own", async () => {
    if (!have) return;
    const s = server!;
    const from = (await request(s, 'GET', CM)).json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
    const watch = request(s, 'GET', `${CM}?watch=1&resourceVersion=${from}&timeoutSeconds=20`, { timeoutMs: 30_000 });
    await putRaw(KEY('a-secret'), JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'a-secret', namespace: NS }, data: {} }));
    await putRaw(KEY('other-group'), JSON.stringify({ apiVersion: 'apps/v1', kind: 'ConfigMap', metadata: { name: 'other-group', namespace: NS } }));
    await putRaw(KEY('bare'), JSON.stringify({ metadata: { name: 'bare', namespace: NS }, data: { k: 'v' } }));
    const last = JSON.parse((await watch).body.trim().split('\n').at(-1)!) as { type: string; object: Status };
    expect(last.type).toBe('ERROR');
    expect(last.object.message).toContain(
      `Key: ${KEY('a-secret')}, ResourceVersion: 0, AdditionalErrorMsg: object not decodable: the stored object is apiVersion v1, kind Secret`,
    );
    const get = await request(s, 'GET', `${CM}/a-secret`);
    expect(get.status).toBe(500);
    expect(status(get).message).toContain(
      `Key: ${KEY('a-secret')}, ResourceVersion: 0, AdditionalErrorMsg: object not decodable: the stored object is apiVersion v1, kind Secret, not a ConfigMap`,
    );
    const list = await request(s, 'GET', CM);
    expect(status(list).reason).toBe('StorageReadError');
    expect((status(list).details?.causes ?? []).map((c) => c.field)).toEqual([KEY('a-secret'), KEY('other-group')]);
    // The server's own readers leave such values out and go on: the garbage collector (which
    // watches every key) collects a dependent, and the RBAC policy takes a new grant while a
    // Role record does not decode either.
    const RBAC = `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}`;
    await putRaw(STORED(`rbac.authorization.k8s.io/roles/${NS}/broken-role`), 'not json');
    const owner = await request(s, 'POST', `/api/v1/namespaces/${NS}/secrets`, { body: { metadata: { name: 'gc-owner' } } });
    expect(owner.status).toBe(201);
    const { uid } = owner.json<{ metadata: { uid: string } }>().metadata;
    const dependent = { metadata: { name: 'gc-dep', ownerReferences: [{ apiVersion: 'v1', kind: 'Secret', name: 'gc-owner', uid }] } };
    expect((await request(s, 'POST', `/api/v1/namespaces/${NS}/secrets`, { body: dependent })).status).toBe(201);
    expect((await request(s, 'DELETE', `/api/v1/namespaces/${NS}/secrets/gc-owner`)).status).toBe(200);
    await waitFor('the dependent collected', async () => (await request(s, 'GET', `/api/v1/namespaces/${NS}/secrets/gc-dep`)).status === 404, 30_000);
    const role = { metadata: { name: 'secret-reader' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }] };
    expect((await request(s, 'POST', `${RBAC}/roles`, { body: role })).status).toBe(201);
    const binding = {
      metadata: { name: 'carol-reads' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'secret-reader' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'carol' }],
    };
    expect((await request(s, 'POST', `${RBAC}/rolebindings`, { body: binding })).status).toBe(201);
    expect((await request(s, 'POST', `/api/v1/namespaces/${NS}/secrets`, { body: { metadata: { name: 'readable' } } })).status).toBe(201);
    await waitFor(
      'carol may read secrets',
      async () => (await request(s, 'GET', `/api/v1/namespaces/${NS}/secrets/readable`, { headers: { 'Impersonate-User': 'carol' } })).status === 200,
      30_000,
    );
    expect((await request(s, 'GET', `${RBAC}/roles`)).status).toBe(500);
    expect((await request(s, 'DELETE', `${RBAC}/roles/broken-role?ignoreStoreReadErrorWithClusterBreakingPotential=true`)).status).toBe(200);

    // No write through the API can take it for a ConfigMap either.
    const patch = await request(s, 'PATCH', `${CM}/a-secret`, { body: { data: { x: 'y' } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(patch.status).toBe(500);
    expect(status(patch).message).toContain(`Key: ${KEY('a-secret')}`);
    for (const name of ['a-secret', 'other-group']) {
      const del = await request(s, 'DELETE', `${CM}/${name}?ignoreStoreReadErrorWithClusterBreakingPotential=true`);
      expect([name, del.status]).toEqual([name, 200]);
    }
    const after = await request(s, 'GET', CM);
    expect(after.status).toBe(200);
    expect(after.json<{ items: { kind?: string; metadata: { name: string } }[] }>().items.map((i) => i.metadata.name)).toContain('bare');
    expect((await request(s, 'GET', `${CM}/bare`)).json<{ kind: string; apiVersion: string }>()).toMatchObject({ kind: 'ConfigMap', apiVersion: 'v1' });
  }, 90_000);

  it("count an object of the kind that the kind's Go type cannot hold (a field of the wrong type) as undecodable", async () => {
    if (!have) return;
    const s = server!;
    const from = (await request(s, 'GET', CM)).json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
    const watch = request(s, 'GET', `${CM}?watch=1&resourceVersion=${from}&timeoutSeconds=20`, { timeoutMs: 30_000 });
    await putRaw(KEY('typed-wrong'), JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'typed-wrong', namespace: NS }, data: { k: 1 } }));
    const why = `Key: ${KEY('typed-wrong')}, ResourceVersion: 0, AdditionalErrorMsg: object not decodable: json: cannot unmarshal number into Go struct field ConfigMap.data of type string`;
    const last = JSON.parse((await watch).body.trim().split('\n').at(-1)!) as { type: string; object: Status };
    expect(last.type).toBe('ERROR');
    expect(last.object.message).toContain(why);
    // GET in JSON and in protobuf (the answer is a Status either way), LIST and kubectl.
    const get = await request(s, 'GET', `${CM}/typed-wrong`);
    expect(get.status).toBe(500);
    expect(status(get).message).toContain(why);
    const proto = await request(s, 'GET', `${CM}/typed-wrong`, { headers: { Accept: 'application/vnd.kubernetes.protobuf' } });
    expect(proto.status).toBe(500);
    expect(proto.body).toContain(why);
    const list = await request(s, 'GET', CM);
    expect(status(list).reason).toBe('StorageReadError');
    expect((status(list).details?.causes ?? []).map((c) => c.field)).toEqual([KEY('typed-wrong')]);
    const got = await kubectl(s, ['get', 'configmap', 'typed-wrong', '-n', NS], { expectFail: true });
    expect(got.stderr).toContain('cannot unmarshal number into Go struct field ConfigMap.data of type string');
    // Only the unsafe DELETE removes it.
    expect((await request(s, 'DELETE', `${CM}/typed-wrong`)).status).toBe(500);
    expect((await request(s, 'DELETE', `${CM}/typed-wrong?ignoreStoreReadErrorWithClusterBreakingPotential=true`)).status).toBe(200);
    expect((await request(s, 'GET', `${CM}/typed-wrong`)).status).toBe(404);
    expect((await request(s, 'GET', CM)).status).toBe(200);
  }, 90_000);
});
