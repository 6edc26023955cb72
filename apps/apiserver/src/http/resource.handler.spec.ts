/**
 * The one request path on real storage (LevelDB in a temp dir) through Fastify: a REST-only
 * kind served by it, subresources as declared, and the typed options' 400s.
 */
import { jest } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { StatusError, type KubeObject } from '@app/apimachinery';
import { openLocalStorage, StorageError, type MvccStorage } from '@app/storage';
import { GenericStore, KindRegistry, NO_ADMISSION, objectKey, statusSubresource, type KindDeclaration } from '@app/registry';
import { createMachinery, createWireCodecs } from '../wiring/machinery.js';
import { ResourceHandler } from './resource.handler.js';
import { parseRequestInfo } from './request-info.js';

const anySchema = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } as KindDeclaration['schema'];

/** A test-only review API: never stored, answers with the request and a status. */
const ECHO: KindDeclaration = {
  group: 'example.com',
  version: 'v1',
  kind: 'EchoReview',
  plural: 'echoreviews',
  singular: 'echoreview',
  namespaced: false,
  schema: anySchema,
  rest: { create: async (_ns, obj, ctx) => ({ ...obj, status: { user: ctx.user.username, echoed: obj.spec } }) },
};

const WIDGET: KindDeclaration = {
  group: 'example.com',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  singular: 'widget',
  namespaced: true,
  schema: anySchema,
  subresources: {
    status: statusSubresource(),
    scale: {
      verbs: ['get'],
      kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' },
      rest: { get: async (ns, name) => ({ apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name, namespace: ns }, spec: { replicas: 1 } }) },
    },
  },
};

let dir: string;
let storage: MvccStorage;
let close: () => Promise<void>;
let app: FastifyInstance;
let base: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'handler-spec-'));
  ({ storage, close } = await openLocalStorage({ dataDir: dir, sync: false, compactionIntervalMs: 0 }));
  const registry = new KindRegistry();
  registry.register(ECHO);
  registry.register(WIDGET);
  const machinery = createMachinery();
  const stores = new Map<KindDeclaration, GenericStore>();
  const handler = new ResourceHandler({
    registry,
    storeFor: (d) => stores.get(d) ?? stores.set(d, new GenericStore(d, { storage, machinery, admission: NO_ADMISSION })).get(d)!,
    codecs: createWireCodecs(registry),
    maxWatchSeconds: 60,
    bookmarkIntervalMs: 60_000,
  });
  app = Fastify();
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  app.all('/*', async (req, reply) => {
    const url = new URL(req.url, 'http://localhost');
    const query = Object.fromEntries(url.searchParams);
    const info = parseRequestInfo(req.method, url.pathname, query);
    try {
      await handler.handle(req, reply, info, query, { username: 'alice', groups: [] }, req.query as Record<string, unknown>);
    } catch (e) {
      if (!(e instanceof StatusError)) throw e;
      reply.code(e.code).send(e.toStatus());
    }
  });
  base = await app.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await app.close();
  await close();
  await rm(dir, { recursive: true, force: true });
});

/** A real HTTP request to the test server. */
async function json(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, body?: unknown): Promise<{ statusCode: number; json<T>(): T }> {
  const r = await fetch(base + url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { statusCode: r.status, json: <T>() => JSON.parse(text) as T };
}

describe('ResourceHandler', () => {
  it('serves a REST-only kind on the same path: create answers 201 from its handler, nothing is stored', async () => {
    const r = await json('POST', '/apis/example.com/v1/echoreviews', { apiVersion: 'example.com/v1', kind: 'EchoReview', spec: { q: 1 } });
    expect(r.statusCode).toBe(201);
    expect(r.json<KubeObject>()).toMatchObject({ kind: 'EchoReview', status: { user: 'alice', echoed: { q: 1 } } });
    expect((await storage.list('/registry/example.com/', { consistency: { mode: 'MostRecent' } })).items).toEqual([]);
    const list = await json('GET', '/apis/example.com/v1/echoreviews');
    expect(list.statusCode).toBe(405);
  });

  it('serves declared subresources only: status on the object, scale through its REST handler, others 404', async () => {
    const created = await json('POST', '/apis/example.com/v1/namespaces/a/widgets', {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w' },
      spec: { n: 1 },
    });
    expect(created.statusCode).toBe(201);
    const cur = created.json<KubeObject>();
    const status = await json('PUT', '/apis/example.com/v1/namespaces/a/widgets/w/status', { ...cur, spec: { n: 9 }, status: { ok: true } });
    expect(status.statusCode).toBe(200);
    expect(status.json<KubeObject>()).toMatchObject({ spec: { n: 1 }, status: { ok: true } });
    const scale = await json('GET', '/apis/example.com/v1/namespaces/a/widgets/w/scale');
    expect(scale.json<KubeObject>()).toMatchObject({ kind: 'Scale', spec: { replicas: 1 } });
    expect((await json('PUT', '/apis/example.com/v1/namespaces/a/widgets/w/finalize', cur)).statusCode).toBe(404);
    expect((await json('PUT', '/apis/example.com/v1/namespaces/a/widgets/w/scale', cur)).statusCode).toBe(405);
  });

  it('answers options that do not decode with 400 and refused option values with 422, once', async () => {
    const bad = await json('GET', '/apis/example.com/v1/namespaces/a/widgets/w?resourceVersion=abc');
    expect(bad.statusCode).toBe(400);
    expect(bad.json<{ message: string }>().message).toBe('resourceVersion: Invalid value: must be a non-negative integer');
    const match = await json('GET', '/apis/example.com/v1/namespaces/a/widgets?resourceVersionMatch=NotOlderThan');
    expect(match.statusCode).toBe(400);
    expect(match.json<{ message: string }>().message).toContain('resourceVersionMatch is forbidden unless resourceVersion is provided');
    const dry = await json('POST', '/apis/example.com/v1/namespaces/a/widgets?dryRun=Some', { metadata: { name: 'x' } });
    expect(dry.statusCode).toBe(422);
    expect(dry.json<{ message: string }>().message).toBe('CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: "Some": supported values: "All"');
  });

  it("reads a watch's initial state a page at a time, later pages at the first one's revision, sized to the objects", async () => {
    const names = Array.from({ length: 1100 }, (_, i) => `p${String(i).padStart(4, '0')}`);
    for (let i = 0; i < names.length; i += 100) {
      const created = await Promise.all(
        names
          .slice(i, i + 100)
          .map((n) => json('POST', '/apis/example.com/v1/namespaces/paged/widgets', { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: n } })),
      );
      expect(created.map((r) => r.statusCode)).toEqual(created.map(() => 201));
    }
    const realList = storage.list.bind(storage);
    const reads = jest.spyOn(storage, 'list');
    try {
      for (const query of ['', '&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true']) {
        reads.mockClear();
        const res = await fetch(`${base}/apis/example.com/v1/namespaces/paged/widgets?watch=1&timeoutSeconds=1${query}`);
        const events = (await res.text())
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => JSON.parse(l) as { type: string; object: KubeObject });
        const added = events.filter((e) => e.type === 'ADDED');
        expect(added.map((e) => e.object.metadata.name)).toEqual(names);
        const rv = added[0]!.object.metadata.resourceVersion;
        // The end of the initial state (streaming list) is marked after its last page.
        const end = events.findIndex(
          (e) => e.type === 'BOOKMARK' && (e.object.metadata.annotations as Record<string, string> | undefined)?.['k8s.io/initial-events-end'] === 'true',
        );
        expect(end).toBe(query === '' ? -1 : names.length);
        const calls = reads.mock.calls.map(([, o]) => ({ limit: o.limit, consistency: o.consistency }));
        // A first page of 50, then pages of 500 (small objects).
        expect(calls.map((c) => c.limit)).toEqual([50, 500, 500, 500]);
        expect(calls[0]!.consistency.mode).toBe('MostRecent');
        const revision = (calls[1]!.consistency as { revision: number }).revision;
        expect(calls.slice(1).map((c) => c.consistency)).toEqual([
          { mode: 'Exact', revision },
          { mode: 'Exact', revision },
          { mode: 'Exact', revision },
        ]);
        expect(revision).toBeGreaterThanOrEqual(Number(rv));
      }
      // A later page whose revision was compacted meanwhile (a client slower than the
      // compaction interval): the first page, then the 410 of a watch whose position is gone.
      reads.mockClear();
      reads.mockImplementation((prefix, o) => {
        if (reads.mock.calls.length === 2) return Promise.reject(new StorageError('Compacted', prefix, 'compacted'));
        return realList(prefix, o);
      });
      const res = await fetch(`${base}/apis/example.com/v1/namespaces/paged/widgets?watch=1&timeoutSeconds=5`);
      const events = (await res.text())
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as { type: string; object: KubeObject & { code?: number; reason?: string; message?: string } });
      expect(events.slice(0, -1).map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(names.slice(0, 50).map((n) => `ADDED ${n}`));
      // The watch's position: the first page's revision (nothing was written since).
      const rv = storage.currentRevision();
      expect(events.at(-1)!.type).toBe('ERROR');
      expect(events.at(-1)!.object).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' });
      expect(events.at(-1)!.object.message).toMatch(new RegExp(`^too old resource version: ${rv} \\(\\d+\\)$`));
    } finally {
      reads.mockRestore();
    }
  });

  it("sizes later pages of a watch's initial state to about half the slow-watcher bound: large objects come a few at a time", async () => {
    const big = 'x'.repeat(200_000);
    const names = Array.from({ length: 80 }, (_, i) => `b${String(i).padStart(2, '0')}`);
    for (const n of names) {
      const r = await json('POST', '/apis/example.com/v1/namespaces/large/widgets', {
        apiVersion: 'example.com/v1',
        kind: 'Widget',
        metadata: { name: n, annotations: { big } },
      });
      expect(r.statusCode).toBe(201);
    }
    const reads = jest.spyOn(storage, 'list');
    try {
      const res = await fetch(`${base}/apis/example.com/v1/namespaces/large/widgets?watch=1&timeoutSeconds=1`);
      const added = (await res.text())
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as { type: string; object: KubeObject })
        .filter((e) => e.type === 'ADDED');
      expect(added.map((e) => e.object.metadata.name)).toEqual(names);
      // 4 MiB (half the 8 MiB bound) of objects of about 200 KB: about 20 a page after the first.
      const limits = reads.mock.calls.map(([, o]) => o.limit);
      expect(limits[0]).toBe(50);
      expect(limits.slice(1).every((l) => l !== undefined && l >= 18 && l <= 21)).toBe(true);
      expect(limits.length).toBe(3);
    } finally {
      reads.mockRestore();
    }
  });

  it('a watch narrowed to one object, by a field selector on metadata.name or by its URL, reads and watches that key alone', async () => {
    for (const [ns, url] of [
      ['single', (p: string) => `${p}?watch=1&timeoutSeconds=1&fieldSelector=metadata.name%3Dn`],
      ['single-url', (p: string) => `${p}/n?watch=1&timeoutSeconds=1`],
    ] as const) {
      const path = `/apis/example.com/v1/namespaces/${ns}/widgets`;
      for (const n of ['n', 'n-1', 'm'])
        expect((await json('POST', path, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: n } })).statusCode).toBe(201);
      const reads = jest.spyOn(storage, 'list');
      const watches = jest.spyOn(storage, 'watch');
      try {
        const res = await fetch(`${base}${url(path)}`);
        const text = res.text();
        for (const n of ['n-1', 'n', 'm']) expect((await json('DELETE', `${path}/${n}`)).statusCode).toBe(200);
        const events = (await text)
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => JSON.parse(l) as { type: string; object: KubeObject });
        expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED n', 'DELETED n']);
        const key = objectKey(WIDGET, ns, 'n');
        expect(reads.mock.calls.map(([, o]) => o.key)).toEqual([key]);
        expect(watches.mock.calls.map(([o]) => ({ key: o.key, recursive: o.recursive }))).toEqual([{ key, recursive: false }]);
      } finally {
        reads.mockRestore();
        watches.mockRestore();
      }
    }
  });

  it('answers 405 for a method the path has no route for, 404 for a path that names nothing', async () => {
    const post = await json('POST', '/apis/example.com/v1/namespaces/a/widgets/w', { metadata: { name: 'other' } });
    expect(post.statusCode).toBe(405);
    expect(post.json<{ message: string }>().message).toBe('the server does not allow this method on the requested resource');
    expect((await json('PUT', '/apis/example.com/v1/namespaces/a/widgets', {})).statusCode).toBe(405);
    expect((await json('PATCH', '/apis/example.com/v1/namespaces/a/widgets', {})).statusCode).toBe(405);
    expect((await json('DELETE', '/apis/example.com/v1/widgets')).statusCode).toBe(405);
    expect((await json('POST', '/apis/example.com/v1/widgets', {})).statusCode).toBe(405);
    expect((await json('GET', '/apis/example.com/v1/widgets/w')).statusCode).toBe(404);
  });
});
