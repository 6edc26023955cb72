/**
 * The watch verb against a started server over raw HTTPS: the conventions' watch table (unset,
 * "0", non-zero), DELETED with the last state, BOOKMARK events and their timing, timeoutSeconds,
 * 410 for a compacted revision (HTTP 200 then an ERROR event, as kube-apiserver does), the
 * streaming-list mode (sendInitialEvents), selectors entering/leaving, future revisions, and the
 * slow-watcher policy. The bookmark interval and the per-watcher buffer bound are lowered through
 * the server's environment (KAPI_WATCH_BOOKMARK_INTERVAL_MS, KAPI_WATCH_MAX_BUFFER_BYTES).
 */
import { jest } from '@jest/globals';
import * as http2 from 'node:http2';
import * as https from 'node:https';
import { decodeWatchEventFrames, type ProtobufKinds } from '@app/apimachinery';
import { request, request2, startServer, waitFor, type ServerHandle } from './support/server.js';

jest.setTimeout(120_000);

interface Obj {
  kind?: string;
  apiVersion?: string;
  metadata: { name?: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  data?: Record<string, string>;
  code?: number;
  reason?: string;
  message?: string;
}
interface Ev {
  type: string;
  object: Obj;
}

/** One watch over HTTP/1.1: parsed events as they arrive, and how the stream ended. */
class WatchStream {
  readonly events: Ev[] = [];
  status = 0;
  headers: Record<string, string | string[] | undefined> = {};
  /** Resolves when the stream ends: complete = the server ended it cleanly (last chunk seen). */
  readonly done: Promise<{ complete: boolean; error?: string }>;
  private res: import('node:http').IncomingMessage | undefined;
  private req: import('node:http').ClientRequest;
  private waiters: Array<() => void> = [];
  private rest = '';

  constructor(server: ServerHandle, path: string) {
    let settle!: (v: { complete: boolean; error?: string }) => void;
    this.done = new Promise((r) => (settle = r));
    const u = new URL(path, server.url);
    this.req = https.request({
      host: u.hostname,
      port: u.port,
      path: u.pathname + u.search,
      method: 'GET',
      ca: server.caPem,
      cert: server.adminCertPem,
      key: server.adminKeyPem,
      agent: false,
    });
    this.req.on('error', (e) => settle({ complete: false, error: e.message }));
    this.req.on('response', (res) => {
      this.res = res;
      this.status = res.statusCode ?? 0;
      this.headers = res.headers;
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        this.rest += c;
        let i: number;
        while ((i = this.rest.indexOf('\n')) >= 0) {
          const line = this.rest.slice(0, i);
          this.rest = this.rest.slice(i + 1);
          if (line.trim()) this.events.push(JSON.parse(line) as Ev);
        }
        this.wake();
      });
      res.on('end', () => {
        settle({ complete: res.complete });
        this.wake();
      });
      res.on('error', (e) => settle({ complete: false, error: e.message }));
      res.on('aborted', () => settle({ complete: false, error: 'aborted' }));
      res.on('close', () => settle({ complete: res.complete }));
      this.wake();
    });
    this.req.end();
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Waits until at least `n` events arrived (or throws after `ms`). */
  async atLeast(n: number, ms = 15_000): Promise<Ev[]> {
    const deadline = Date.now() + ms;
    while (this.events.length < n) {
      if (Date.now() > deadline) throw new Error(`expected ${n} events, got ${this.events.length}: ${JSON.stringify(this.events.map((e) => e.type))}`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 100);
      });
    }
    return this.events;
  }

  /** Waits for the response headers. */
  async started(ms = 10_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (this.status === 0) {
      if (Date.now() > deadline) throw new Error('no response');
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  close(): void {
    this.req.destroy();
  }
}

const cm = (name: string, data: Record<string, string> = { v: '1' }, labels?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(labels ? { labels } : {}) },
  data,
});

/** The root-CA publisher's ConfigMap, which every namespace gets (as in Kubernetes). */
const ROOT_CA = 'kube-root-ca.crt';

/** Creates a namespace and waits for the root-CA publisher's ConfigMap in it, so later revisions see a settled namespace. */
async function mkns(s: ServerHandle, ns: string): Promise<void> {
  const r = await request(s, 'POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } });
  expect([201, 409]).toContain(r.status);
  await waitFor(`${ROOT_CA} in ${ns}`, async () => (await request(s, 'GET', `/api/v1/namespaces/${ns}/configmaps/${ROOT_CA}`)).status === 200);
}
async function create(s: ServerHandle, ns: string, body: unknown): Promise<number> {
  const r = await request(s, 'POST', `/api/v1/namespaces/${ns}/configmaps`, { body });
  expect(r.status).toBe(201);
  return Number(r.json<Obj>().metadata.resourceVersion);
}
async function patch(s: ServerHandle, ns: string, name: string, body: unknown): Promise<number> {
  const r = await request(s, 'PATCH', `/api/v1/namespaces/${ns}/configmaps/${name}`, { body, headers: { 'content-type': 'application/merge-patch+json' } });
  expect(r.status).toBe(200);
  return Number(r.json<Obj>().metadata.resourceVersion);
}
async function del(s: ServerHandle, ns: string, name: string): Promise<void> {
  expect((await request(s, 'DELETE', `/api/v1/namespaces/${ns}/configmaps/${name}`)).status).toBe(200);
}
async function listRv(s: ServerHandle, ns: string): Promise<number> {
  return Number((await request(s, 'GET', `/api/v1/namespaces/${ns}/configmaps`)).json<Obj>().metadata.resourceVersion);
}
const summary = (evs: Ev[]): string[] => evs.map((e) => `${e.type} ${e.object.metadata.name ?? ''}`.trim());

/**
 * A watch over HTTP/2 whose reader starts paused (resume() to read): HTTP/2 flow control keeps
 * the unread bytes in the server's stream queue (not in kernel socket buffers, which on
 * loopback can absorb tens of MiB), so the server's bounds apply at once.
 */
function pausedH2Watch(
  s: ServerHandle,
  path: string,
): { events: Ev[]; closed: () => { rstCode: number } | undefined; resume: () => void; destroy: () => void } {
  const session = http2.connect(s.url, { ca: s.caPem, cert: s.adminCertPem, key: s.adminKeyPem });
  const events: Ev[] = [];
  let closed: { rstCode: number } | undefined;
  let rest = '';
  const stream = session.request({ ':method': 'GET', ':path': path });
  stream.setEncoding('utf8');
  stream.pause();
  stream.on('data', (c: string) => {
    rest += c;
    let i: number;
    while ((i = rest.indexOf('\n')) >= 0) {
      const l = rest.slice(0, i);
      rest = rest.slice(i + 1);
      if (l.trim()) events.push(JSON.parse(l) as Ev);
    }
  });
  stream.on('error', () => undefined);
  stream.on('close', () => (closed = { rstCode: stream.rstCode ?? 0 }));
  return { events, closed: () => closed, resume: () => stream.resume(), destroy: () => session.destroy() };
}

describe('watch (one node)', () => {
  let server: ServerHandle;
  const streams: WatchStream[] = [];
  const watch = (path: string): WatchStream => {
    const w = new WatchStream(server, path);
    streams.push(w);
    return w;
  };

  beforeAll(async () => {
    server = await startServer({
      args: ['--compaction-interval', '0'],
      env: {
        KAPI_WATCH_BOOKMARK_INTERVAL_MS: '400',
        KAPI_WATCH_MAX_BUFFER_BYTES: String(1024 * 1024),
        KAPI_WATCH_SLOW_GRACE_MS: '1000',
        // Replays read 2 revisions at a time: every replay in this file runs in windows.
        KAPI_WATCH_WINDOW_REVISIONS: '2',
      },
    });
  });
  afterEach(() => {
    for (const w of streams.splice(0)) w.close();
  });
  afterAll(async () => {
    await server?.cleanup();
  });

  it('rv unset: HTTP 200 chunked JSON, synthetic ADDED for current state, then changes', async () => {
    await mkns(server, 'w1');
    await create(server, 'w1', cm('a'));
    await create(server, 'w1', cm('b'));
    const w = watch('/api/v1/namespaces/w1/configmaps?watch=true');
    await w.atLeast(3);
    expect(w.status).toBe(200);
    expect(w.headers['content-type']).toContain('application/json');
    expect(w.headers['transfer-encoding']).toBe('chunked');
    const rv = await patch(server, 'w1', 'a', { data: { v: '2' } });
    const evs = await w.atLeast(4);
    // Synthetic events come in key order.
    expect(summary(evs)).toEqual(['ADDED a', 'ADDED b', `ADDED ${ROOT_CA}`, 'MODIFIED a']);
    expect(evs[3]!.object.metadata.resourceVersion).toBe(String(rv));
    expect(evs[3]!.object.data).toEqual({ v: '2' });
  });

  it('rv "0": synthetic ADDED first, then changes', async () => {
    await mkns(server, 'w0');
    await create(server, 'w0', cm('a'));
    const w = watch('/api/v1/namespaces/w0/configmaps?watch=1&resourceVersion=0');
    await w.atLeast(2);
    await create(server, 'w0', cm('b'));
    expect(summary(await w.atLeast(3))).toEqual(['ADDED a', `ADDED ${ROOT_CA}`, 'ADDED b']);
  });

  it('rv non-zero: exactly the changes after it, no synthetic events; DELETED carries the last state at the deletion revision', async () => {
    await mkns(server, 'wn');
    const rvA = await create(server, 'wn', cm('a'));
    const rvA2 = await patch(server, 'wn', 'a', { data: { v: '2' } });
    const rvB = await create(server, 'wn', cm('b'));
    await del(server, 'wn', 'a');
    const rvDel = await listRv(server, 'wn');
    const w = watch(`/api/v1/namespaces/wn/configmaps?watch=1&resourceVersion=${rvA}`);
    const evs = await w.atLeast(3);
    expect(summary(evs)).toEqual(['MODIFIED a', 'ADDED b', 'DELETED a']);
    expect(evs.map((e) => Number(e.object.metadata.resourceVersion))).toEqual([rvA2, rvB, rvDel]);
    expect(evs[2]!.object.data).toEqual({ v: '2' });
    // Nothing else arrives.
    await new Promise((r) => setTimeout(r, 300));
    expect(w.events).toHaveLength(3);
  });

  it('a future rv waits (no 504): events start once the revision is passed, exactly after it', async () => {
    await mkns(server, 'wf');
    const cur = await listRv(server, 'wf');
    const w = watch(`/api/v1/namespaces/wf/configmaps?watch=1&resourceVersion=${cur + 2}&timeoutSeconds=20`);
    await w.started();
    expect(w.status).toBe(200);
    const rvs: number[] = [];
    for (const n of ['x1', 'x2', 'x3']) rvs.push(await create(server, 'wf', cm(n)));
    // Exactly the creates after the revision asked for: x3 alone, unless a write of the server's
    // own (a controller's Lease renewal) took a revision in between and moved x2 past it too.
    const after = rvs.map((rv, i) => ({ rv, name: `x${i + 1}` })).filter((c) => c.rv > cur + 2);
    expect(after.map((c) => c.name)).toContain('x3');
    const evs = await w.atLeast(after.length);
    expect(summary(evs)).toEqual(after.map((c) => `ADDED ${c.name}`));
    expect(evs.map((e) => Number(e.object.metadata.resourceVersion))).toEqual(after.map((c) => c.rv));
  });

  it('allowWatchBookmarks: BOOKMARKs (kind + metadata.resourceVersion only) periodically and before the timeout closes the stream', async () => {
    await mkns(server, 'wb');
    await mkns(server, 'other');
    const rv = await create(server, 'wb', cm('a'));
    const w = watch(`/api/v1/namespaces/wb/configmaps?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=2`);
    await w.started();
    // Writes elsewhere move the announced revision although no event is sent for them.
    const otherRv = await create(server, 'other', cm(`o-${Date.now()}`));
    const end = await w.done;
    // Ended by the server (timeoutSeconds), cleanly, after several bookmark periods.
    expect(end.complete).toBe(true);
    const bms = w.events.filter((e) => e.type === 'BOOKMARK');
    expect(w.events.every((e) => e.type === 'BOOKMARK')).toBe(true);
    expect(bms.length).toBeGreaterThanOrEqual(3); // ~every 400 ms plus the closing one
    for (const b of bms) {
      expect(b.object).toEqual({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: expect.any(String) } });
    }
    const rvs = bms.map((b) => Number(b.object.metadata.resourceVersion));
    expect([...rvs].sort((x, y) => x - y)).toEqual(rvs);
    expect(rvs[rvs.length - 1]).toBeGreaterThanOrEqual(otherRv);
  });

  it('no BOOKMARKs without allowWatchBookmarks; timeoutSeconds ends the stream cleanly', async () => {
    await mkns(server, 'wt');
    const rv = await create(server, 'wt', cm('a'));
    const t0 = Date.now();
    const w = watch(`/api/v1/namespaces/wt/configmaps?watch=1&resourceVersion=${rv}&timeoutSeconds=1`);
    const end = await w.done;
    expect(end.complete).toBe(true);
    // Not before the timeout (a lower bound only: load can make the end later, never earlier).
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
    expect(w.events).toEqual([]);
  });

  it('sendInitialEvents=true + NotOlderThan: initial ADDED, then a BOOKMARK annotated k8s.io/initial-events-end, then changes', async () => {
    await mkns(server, 'ws');
    await create(server, 'ws', cm('a'));
    const rvB = await create(server, 'ws', cm('b'));
    for (const rvq of ['', `&resourceVersion=${rvB}`, '&resourceVersion=0']) {
      const w = watch(`/api/v1/namespaces/ws/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true${rvq}`);
      const evs = await w.atLeast(4);
      expect(summary(evs.slice(0, 3))).toEqual(['ADDED a', 'ADDED b', `ADDED ${ROOT_CA}`]);
      expect(evs[3]!.type).toBe('BOOKMARK');
      expect(evs[3]!.object.metadata.annotations).toEqual({ 'k8s.io/initial-events-end': 'true' });
      expect(Number(evs[3]!.object.metadata.resourceVersion)).toBeGreaterThanOrEqual(rvB);
      w.close();
    }
    const w = watch('/api/v1/namespaces/ws/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true');
    await w.atLeast(4);
    await create(server, 'ws', cm('c'));
    const evs = await w.atLeast(5);
    expect(summary(evs.filter((e) => e.type !== 'BOOKMARK'))).toEqual(['ADDED a', 'ADDED b', `ADDED ${ROOT_CA}`, 'ADDED c']);
  });

  it('sendInitialEvents=false from rv N: only later changes; invalid streaming-list combinations are 400', async () => {
    await mkns(server, 'wsf');
    const rv = await create(server, 'wsf', cm('a'));
    const w = watch(`/api/v1/namespaces/wsf/configmaps?watch=1&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&resourceVersion=${rv}`);
    await w.started();
    await create(server, 'wsf', cm('b'));
    expect(summary(await w.atLeast(1))).toEqual(['ADDED b']);
    const bad = [
      'watch=1&sendInitialEvents=true', // needs resourceVersionMatch=NotOlderThan
      'watch=1&resourceVersionMatch=NotOlderThan&resourceVersion=1', // match needs sendInitialEvents
      'watch=1&sendInitialEvents=true&resourceVersionMatch=Exact&resourceVersion=1',
    ];
    for (const q of bad) {
      const r = await request(server, 'GET', `/api/v1/namespaces/wsf/configmaps?${q}`);
      expect(r.status).toBe(400);
      expect(r.json<Obj>()).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
      expect(r.json<Obj>().message).toContain('resourceVersionMatch');
    }
  });

  it('label selectors: entering the selection is ADDED, leaving it DELETED (previous content, new revision); field selectors filter', async () => {
    await mkns(server, 'wl');
    const rv0 = await create(server, 'wl', cm('a', { v: '1' }, { app: 'x' }));
    await create(server, 'wl', cm('b', { v: '1' }, { app: 'y' }));
    const w = watch(`/api/v1/namespaces/wl/configmaps?watch=1&resourceVersion=${rv0}&labelSelector=app%3Dy`);
    const f = watch(`/api/v1/namespaces/wl/configmaps?watch=1&resourceVersion=${rv0}&fieldSelector=metadata.name%3Da`);
    await w.started();
    const rvIn = await patch(server, 'wl', 'a', { metadata: { labels: { app: 'y' } } });
    await patch(server, 'wl', 'a', { data: { v: '2' } });
    const rvOut = await patch(server, 'wl', 'a', { metadata: { labels: { app: 'z' } }, data: { v: '3' } });
    await del(server, 'wl', 'b');
    const evs = await w.atLeast(5);
    expect(summary(evs)).toEqual(['ADDED b', 'ADDED a', 'MODIFIED a', 'DELETED a', 'DELETED b']);
    expect(evs[1]!.object.metadata.resourceVersion).toBe(String(rvIn));
    // The DELETED for leaving: the last matching content, at the revision of the change.
    expect(evs[3]!.object.metadata.resourceVersion).toBe(String(rvOut));
    expect(evs[3]!.object.metadata.labels).toEqual({ app: 'y' });
    expect(evs[3]!.object.data).toEqual({ v: '2' });
    const fe = await f.atLeast(3);
    expect(summary(fe)).toEqual(['MODIFIED a', 'MODIFIED a', 'MODIFIED a']);
  });

  it('a list and a watch by metadata.name see that object alone, not the objects whose names it prefixes', async () => {
    await mkns(server, 'wbyname');
    for (const n of ['a', 'a-1', 'ab', 'b']) await create(server, 'wbyname', cm(n));
    const rv = await listRv(server, 'wbyname');
    const l = (await request(server, 'GET', '/api/v1/namespaces/wbyname/configmaps?limit=1&fieldSelector=metadata.name%3Da')).json<{
      items: Obj[];
      metadata: { resourceVersion: string; continue?: string };
    }>();
    expect(l.items.map((o) => o.metadata.name)).toEqual(['a']);
    expect(Number(l.metadata.resourceVersion)).toBeGreaterThanOrEqual(rv);
    expect(l.metadata.continue).toBeUndefined();
    const none = (await request(server, 'GET', '/api/v1/namespaces/wbyname/configmaps?fieldSelector=metadata.name%3Dc')).json<{ items: Obj[] }>();
    expect(none.items).toEqual([]);
    const w = watch('/api/v1/namespaces/wbyname/configmaps?watch=1&fieldSelector=metadata.name%3Da');
    await w.started();
    for (const n of ['a-1', 'ab', 'a']) await patch(server, 'wbyname', n, { data: { v: '2' } });
    for (const n of ['a-1', 'a']) await del(server, 'wbyname', n);
    expect(summary(await w.atLeast(3))).toEqual(['ADDED a', 'MODIFIED a', 'DELETED a']);
  });

  it('HTTP/2 watch with timeoutSeconds returns the events in one stream', async () => {
    await mkns(server, 'w2');
    await create(server, 'w2', cm('a'));
    const r = await request2(server, 'GET', '/api/v1/namespaces/w2/configmaps?watch=1&timeoutSeconds=1');
    expect(r.status).toBe(200);
    const lines = r.body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Ev);
    expect(summary(lines)).toEqual(['ADDED a', `ADDED ${ROOT_CA}`]);
  });

  it('protobuf watch: length-prefixed WatchEvent frames with application/vnd.kubernetes.protobuf;stream=watch', async () => {
    await mkns(server, 'wp');
    await create(server, 'wp', cm('a', { k: 'v' }));
    const raw = await new Promise<{ status: number; type: string; body: Buffer }>((resolve, reject) => {
      const u = new URL('/api/v1/namespaces/wp/configmaps?watch=1&timeoutSeconds=1&allowWatchBookmarks=true', server.url);
      const req = https.request(
        {
          host: u.hostname,
          port: u.port,
          path: u.pathname + u.search,
          ca: server.caPem,
          cert: server.adminCertPem,
          key: server.adminKeyPem,
          agent: false,
          headers: { accept: 'application/vnd.kubernetes.protobuf;stream=watch' },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body: Buffer.concat(chunks) }));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(raw.status).toBe(200);
    expect(raw.type).toBe('application/vnd.kubernetes.protobuf;stream=watch');
    const configMaps: ProtobufKinds = {
      messageFor: (apiVersion, kind) => (apiVersion === 'v1' && kind === 'ConfigMap' ? 'k8s.io.api.core.v1.ConfigMap' : undefined),
      servesGroupVersion: (apiVersion) => apiVersion === 'v1',
    };
    const { events, rest } = decodeWatchEventFrames(new Uint8Array(raw.body), configMaps);
    expect(rest.length).toBe(0);
    expect(events.slice(0, 2).map((e) => e.type)).toEqual(['ADDED', 'ADDED']);
    expect(events.length).toBeGreaterThanOrEqual(3); // bookmarks every 400 ms and at the end
    expect(events.slice(2).every((e) => e.type === 'BOOKMARK')).toBe(true);
    expect(events[0]!.object).toMatchObject({ kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: 'v' } });
    expect(events[1]!.object).toMatchObject({ kind: 'ConfigMap', metadata: { name: ROOT_CA } });
  });

  it('a slow watcher (HTTP/2, not reading) is cut off without holding back others, and resumes from its last resourceVersion', async () => {
    await mkns(server, 'slow');
    const rv0 = await listRv(server, 'slow');
    const fast = watch(`/api/v1/namespaces/slow/configmaps?watch=1&resourceVersion=${rv0}`);
    await fast.started();
    const slow = pausedH2Watch(server, `/api/v1/namespaces/slow/configmaps?watch=1&resourceVersion=${rv0}`);
    const slowEvents = slow.events;
    try {
      const big = 'x'.repeat(200 * 1024);
      const N = 40; // 8 MB, far above the 1 MiB bound
      for (let i = 0; i < N; i++) await create(server, 'slow', cm(`s${String(i).padStart(3, '0')}`, { big }));
      // The fast watcher has everything, in order, while the slow one is not reading.
      const fe = await fast.atLeast(N, 30_000);
      const all = Array.from({ length: N }, (_, i) => `s${String(i).padStart(3, '0')}`);
      expect(fe.map((e) => e.object.metadata.name)).toEqual(all);
      // Within the grace period (1 s here) the server resets the slow stream.
      const deadline = Date.now() + 15_000;
      while (!slow.closed() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(slow.closed()).toBeDefined();
      expect(slow.closed()!.rstCode).not.toBe(0); // RST_STREAM: an error, not a clean end
      slow.resume();
      await new Promise((r) => setTimeout(r, 200));
      expect(slowEvents.length).toBeLessThan(N);
      // It resumes from the last resourceVersion it got and sees the rest, in order.
      const got = slowEvents.map((e) => e.object.metadata.name);
      const last = slowEvents.length ? slowEvents[slowEvents.length - 1]!.object.metadata.resourceVersion : String(rv0);
      const again = watch(`/api/v1/namespaces/slow/configmaps?watch=1&resourceVersion=${last}`);
      const more = await again.atLeast(N - got.length, 30_000);
      expect([...got, ...more.map((e) => e.object.metadata.name)]).toEqual(all);
    } finally {
      slow.destroy();
    }
  });
});

describe('watch replay paced by the client', () => {
  let server: ServerHandle;
  beforeAll(async () => {
    server = await startServer({
      args: ['--compaction-interval', '0'],
      env: { KAPI_WATCH_MAX_BUFFER_BYTES: String(1024 * 1024), KAPI_WATCH_SLOW_GRACE_MS: '1000', KAPI_WATCH_WINDOW_REVISIONS: '2' },
    });
  });
  afterAll(async () => {
    await server?.cleanup();
  });

  it('a client that stops reading during a long replay holds about one window in the server; it is not cut off, and gets every event once it reads', async () => {
    await mkns(server, 'replay');
    const rv0 = await listRv(server, 'replay');
    // 6 MB of history after rv0, six times the 1 MiB slow-watcher bound.
    const big = 'x'.repeat(100 * 1024);
    const N = 60;
    const all = Array.from({ length: N }, (_, i) => `r${String(i).padStart(3, '0')}`);
    for (const n of all) await create(server, 'replay', cm(n, { big }));
    const w = pausedH2Watch(server, `/api/v1/namespaces/replay/configmaps?watch=1&resourceVersion=${rv0}`);
    const events = w.events;
    try {
      // Paused for three times the grace: a replay queued whole would pass the bound and be
      // cut off within the grace. Paced by the client, the queue stays under it.
      await new Promise((r) => setTimeout(r, 3000));
      expect(w.closed()).toBeUndefined();
      w.resume();
      await waitFor('the whole replay', async () => events.length >= N, 30_000);
      expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(all.map((n) => `ADDED ${n}`));
      // Live once the replay is over.
      await create(server, 'replay', cm('after'));
      await waitFor('the live event', async () => events.length > N, 10_000);
      expect(events.map((e) => e.object.metadata.name).slice(N)).toEqual(['after']);
      expect(w.closed()).toBeUndefined();
    } finally {
      w.destroy();
    }
  });
});

describe('watch across compaction (--compaction-interval 1)', () => {
  let server: ServerHandle;
  beforeAll(async () => {
    server = await startServer({ args: ['--compaction-interval', '1'] });
    await mkns(server, 'c');
  });
  afterAll(async () => {
    await server?.cleanup();
  });

  it('a revision older than the retained history: HTTP 200, then an ERROR event with a 410 Expired Status, then the end', async () => {
    const old = await create(server, 'c', cm('a'));
    // Advance and wait until the revision after `old` is compacted too (an Exact list at it
    // answers 410). A watch from `old` starts at old + 1: while that revision is retained (the
    // compaction landed exactly on it), the watch is valid and would stay open, as on etcd.
    const deadline = Date.now() + 15_000;
    let n = 0;
    for (;;) {
      await create(server, 'c', cm(`f${n++}`));
      const r = await request(server, 'GET', `/api/v1/namespaces/c/configmaps?resourceVersion=${old + 1}&resourceVersionMatch=Exact`);
      if (r.status === 410) break;
      if (Date.now() > deadline) throw new Error('not compacted');
      await new Promise((r2) => setTimeout(r2, 250));
    }
    const w = new WatchStream(server, `/api/v1/namespaces/c/configmaps?watch=1&resourceVersion=${old}`);
    const end = await Promise.race([
      w.done,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error(`watch still open after 30 s: ${JSON.stringify(w.events.map((e) => e.type))}`)), 30_000).unref(),
      ),
    ]);
    expect(w.status).toBe(200);
    expect(end.complete).toBe(true);
    expect(w.events).toHaveLength(1);
    expect(w.events[0]!.type).toBe('ERROR');
    expect(w.events[0]!.object).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 410, reason: 'Expired' });
    expect(w.events[0]!.object.message).toContain(`too old resource version: ${old}`);
  });
});
