/**
 * The HTTP contract of one node, over real HTTPS (HTTP/1.1 and HTTP/2) against a started
 * process: errors as Status objects, negotiation, limits, validation, concurrency control,
 * pagination, discovery, OpenAPI, metrics, and a fuzz pass of malformed input.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import * as http2 from 'node:http2';
import * as tls from 'node:tls';
import { request, request2, startServer, waitFor, type ServerHandle } from './support/server.js';

let server: ServerHandle;

beforeAll(async () => {
  server = await startServer();
  const r = await request(server, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'h' } } });
  if (r.status !== 201) throw new Error(`setup: creating namespace h answered ${r.status}: ${r.body}`);
});

afterAll(async () => {
  await server?.cleanup();
});

/** A raw HTTP/1.1 TLS connection with the admin's certificate. */
function adminSocket(): tls.TLSSocket {
  const u = new URL(server.url);
  return tls.connect({
    host: u.hostname,
    port: Number(u.port),
    ca: server.caPem,
    cert: server.adminCertPem,
    key: server.adminKeyPem,
    ALPNProtocols: ['http/1.1'],
  });
}

/** Resolves when `socket` can take more writes, or has closed. */
function drainedOrClosed(socket: tls.TLSSocket): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      socket.off('drain', done);
      socket.off('close', done);
      resolve();
    };
    socket.on('drain', done);
    socket.on('close', done);
  });
}

const cm = (name: string, data: Record<string, string> = { a: 'b' }, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name },
  data,
  ...extra,
});

describe('authentication and public endpoints', () => {
  it('authorizes a request without credentials as system:anonymous: the default RBAC policy grants it nothing here (403)', async () => {
    const r = await request(server, 'GET', '/api/v1/namespaces', { identity: 'anonymous' });
    expect(r.status).toBe(403);
    expect(r.json()).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'Forbidden',
      code: 403,
      message: 'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope',
    });
    // Nor discovery, which system:discovery grants to authenticated users only.
    expect((await request(server, 'GET', '/api', { identity: 'anonymous' })).status).toBe(403);
  });
  it('answers a client without credentials that sends a body with 403, reading at most 1 MiB of it', async () => {
    for (const [size, closes] of [
      [512 * 1024, false],
      [3 * 1024 * 1024, true],
    ] as const) {
      const r = await request(server, 'POST', '/api/v1/namespaces/h/configmaps', {
        identity: 'anonymous',
        body: JSON.stringify(cm('anon', { a: 'x'.repeat(size) })),
        headers: { 'content-type': 'application/json' },
      });
      expect(r.status).toBe(403);
      expect(r.json()).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403 });
      // Past the cap the server stops reading and says so, instead of reading the whole body.
      expect(r.headers['connection'] === 'close').toBe(closes);
    }
  });
  it('serves /version and health endpoints to anyone', async () => {
    const v = await request(server, 'GET', '/version', { identity: 'anonymous' });
    expect(v.json()).toMatchObject({ major: '1', minor: '32' });
    expect((await request(server, 'GET', '/readyz', { identity: 'anonymous' })).body).toBe('ok');
    const verbose = await request(server, 'GET', '/readyz?verbose', { identity: 'anonymous' });
    expect(verbose.body).toContain('readyz check passed');
  });
});

describe('errors and limits', () => {
  it('answers malformed JSON with 400 BadRequest', async () => {
    const r = await request(server, 'POST', '/api/v1/namespaces/h/configmaps', { body: '{"metadata": ', headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(400);
    expect(r.json()).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
  });
  it('answers an unsupported Content-Type with 415 and an unacceptable Accept with 406', async () => {
    const a = await request(server, 'POST', '/api/v1/namespaces/h/configmaps', { body: 'x', headers: { 'content-type': 'text/plain' } });
    expect(a.status).toBe(415);
    expect(a.json()).toMatchObject({ reason: 'UnsupportedMediaType' });
    const b = await request(server, 'GET', '/api/v1/namespaces/h/configmaps', { headers: { accept: 'text/html' } });
    expect(b.status).toBe(406);
    expect(b.json()).toMatchObject({ reason: 'NotAcceptable' });
  });
  it('refuses bodies over 3 MiB with 413', async () => {
    const big = JSON.stringify(cm('big', { a: 'x'.repeat(3 * 1024 * 1024 + 10) }));
    const r = await request(server, 'POST', '/api/v1/namespaces/h/configmaps', { body: big, headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(413);
    expect(r.json()).toMatchObject({ reason: 'RequestEntityTooLarge' });
  });
  it('lets an HTTP/1.1 client that is still sending an oversized body read its 413, then reuse the connection', async () => {
    // The client writes the headers and a first part, pauses while the server answers, then
    // sends the rest whatever it received meanwhile, as an HTTP client writing a body larger
    // than the socket buffers does. Closing the connection under it would reset it (EPIPE or
    // ECONNRESET on the client instead of the Status).
    const total = 4 * 1024 * 1024;
    const u = new URL(server.url);
    const socket = adminSocket();
    let received = Buffer.alloc(0);
    let failure: Error | undefined;
    socket.on('data', (d: Buffer) => (received = Buffer.concat([received, d])));
    socket.on('error', (e) => (failure = e));
    await once(socket, 'secureConnect');
    const head = (method: string, path: string, length: number) =>
      `${method} ${path} HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
    /** The next complete response in `received` (Content-Length framed), removed from it. */
    const nextResponse = async (): Promise<{ status: number; body: string }> => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const end = received.indexOf('\r\n\r\n');
        if (end >= 0) {
          const headText = received.subarray(0, end).toString();
          const length = Number(/content-length: *(\d+)/i.exec(headText)?.[1]);
          if (received.length >= end + 4 + length) {
            const body = received.subarray(end + 4, end + 4 + length).toString();
            received = received.subarray(end + 4 + length);
            return { status: Number(headText.split(' ')[1]), body };
          }
        }
        if (Date.now() > deadline || failure) throw failure ?? new Error(`no complete response in ${JSON.stringify(received.toString())}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    socket.write(head('POST', '/api/v1/namespaces/h/configmaps', total));
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    socket.write(chunk);
    await new Promise((r) => setTimeout(r, 500));
    for (let sent = chunk.length; sent < total && !failure && !socket.destroyed; sent += chunk.length) {
      if (!socket.write(chunk)) await drainedOrClosed(socket);
    }
    const refused = await nextResponse();
    expect(refused.status).toBe(413);
    expect(JSON.parse(refused.body)).toMatchObject({ kind: 'Status', reason: 'RequestEntityTooLarge', code: 413 });
    // The body was read to its end: the same connection serves the next request.
    socket.write(head('GET', '/api/v1/namespaces/h', 0));
    const next = await nextResponse();
    expect(next.status).toBe(200);
    expect(JSON.parse(next.body)).toMatchObject({ kind: 'Namespace', metadata: { name: 'h' } });
    expect(failure).toBeUndefined();
    socket.destroy();
  });
  it('stops reading a refused body past its cap, after the client could read the answer', async () => {
    // A declared 1 GiB is answered at once with `Connection: close`; the server then stops
    // reading (the client's writes stall on the full window), and lets go after a moment.
    const u = new URL(server.url);
    const socket = adminSocket();
    let received = '';
    let sent = 0;
    socket.on('data', (d: Buffer) => (received += d.toString()));
    socket.on('error', () => undefined);
    // The server resets the connection in the end: an 'error' here is expected.
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    await once(socket, 'secureConnect');
    socket.write(`POST /api/v1/namespaces/h/configmaps HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/json\r\nContent-Length: ${2 ** 30}\r\n\r\n`);
    const chunk = Buffer.alloc(256 * 1024, 0x20);
    while (!socket.destroyed && sent < 2 ** 30) {
      if (!socket.write(chunk)) await drainedOrClosed(socket);
      sent += chunk.length;
    }
    await closed;
    expect(received).toMatch(/^HTTP\/1\.1 413 /);
    expect(received).toContain('"reason":"RequestEntityTooLarge"');
    expect(sent).toBeLessThan(64 * 1024 * 1024);
  });
  it('gives a client still sending an oversized chunked body time to read its 413', async () => {
    // Without a declared length the limit is found while reading: the answer closes the
    // connection, but only after the client could read it.
    const u = new URL(server.url);
    const socket = adminSocket();
    let received = '';
    let answeredAt = 0;
    socket.on('data', (d: Buffer) => {
      received += d.toString();
      if (answeredAt === 0 && received.includes('RequestEntityTooLarge')) answeredAt = Date.now();
    });
    socket.on('error', () => undefined);
    const closed = new Promise<number>((r) => socket.once('close', () => r(Date.now())));
    await once(socket, 'secureConnect');
    socket.write(`POST /api/v1/namespaces/h/configmaps HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const framed = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
    for (let sent = 0; sent < 64 * 1024 * 1024 && !socket.destroyed; sent += chunk.length) {
      if (!socket.write(framed)) await drainedOrClosed(socket);
    }
    const closedAt = await closed;
    expect(received).toMatch(/^HTTP\/1\.1 413 /);
    expect(received.toLowerCase()).toContain('connection: close');
    expect(answeredAt).toBeGreaterThan(0);
    expect(closedAt - answeredAt).toBeGreaterThanOrEqual(1_000);
  });
  it('answers an oversized HTTP/2 upload with its 413 and ends the stream without error', async () => {
    const r = await request2(server, 'POST', '/api/v1/namespaces/h/configmaps', {
      body: JSON.stringify(cm('big2', { a: 'x'.repeat(3 * 1024 * 1024 + 10) })),
      headers: { 'content-type': 'application/json' },
    });
    expect(r.status).toBe(413);
    expect(r.json()).toMatchObject({ kind: 'Status', reason: 'RequestEntityTooLarge', code: 413 });
    // The client still uploading learns to stop (RST_STREAM NO_ERROR); the session goes on.
    const session = http2.connect(server.url, { ca: server.caPem, cert: server.adminCertPem, key: server.adminKeyPem });
    try {
      const upload = session.request({
        ':method': 'POST',
        ':path': '/api/v1/namespaces/h/configmaps',
        'content-type': 'application/json',
        'content-length': String(8 * 1024 * 1024),
      });
      upload.on('error', () => undefined);
      upload.write(Buffer.alloc(64 * 1024, 0x20));
      const [headers] = (await once(upload, 'response')) as [http2.IncomingHttpHeaders];
      expect(headers[':status']).toBe(413);
      upload.resume();
      await once(upload, 'close');
      expect(upload.rstCode).toBe(http2.constants.NGHTTP2_NO_ERROR);
      const get = session.request({ ':method': 'GET', ':path': '/api/v1/namespaces/h' });
      get.end();
      const [getHeaders] = (await once(get, 'response')) as [http2.IncomingHttpHeaders];
      expect(getHeaders[':status']).toBe(200);
      get.resume();
      await once(get, 'end');
    } finally {
      session.close();
    }
  });
  it('answers 404 Status for unknown resources and 405 for unsupported verbs', async () => {
    const r = await request(server, 'GET', '/api/v1/nothings');
    expect(r.status).toBe(404);
    expect(r.json()).toMatchObject({ kind: 'Status', reason: 'NotFound' });
    const d = await request(server, 'DELETE', '/api/v1/namespaces');
    expect(d.status).toBe(405);
    expect(d.json()).toMatchObject({ reason: 'MethodNotAllowed' });
  });
  it('validates names and data keys with 422 Invalid and field causes', async () => {
    const r = await request(server, 'POST', '/api/v1/namespaces/h/configmaps', { body: cm('Bad_Name', { 'bad key': 'v' }) });
    expect(r.status).toBe(422);
    const s = r.json<{ reason: string; details: { causes: Array<{ field: string }> } }>();
    expect(s.reason).toBe('Invalid');
    const fields = s.details.causes.map((c) => c.field);
    expect(fields).toContain('metadata.name');
    expect(fields).toContain('data[bad key]');
  });
  it('rejects data keys present in both data and binaryData', async () => {
    const r = await request(server, 'POST', '/api/v1/namespaces/h/configmaps', { body: cm('overlap', { k: 'v' }, { binaryData: { k: 'AAAA' } }) });
    expect(r.status).toBe(422);
  });
  it('enforces the 1 MiB Secret size limit', async () => {
    const data = { a: Buffer.alloc(600 * 1024).toString('base64'), b: Buffer.alloc(600 * 1024).toString('base64') };
    const r = await request(server, 'POST', '/api/v1/namespaces/h/secrets', { body: { metadata: { name: 'huge' }, data } });
    expect(r.status).toBe(422);
  });
});

describe('field validation', () => {
  it('Strict rejects unknown and duplicate fields; Warn warns and drops them', async () => {
    const strict = await request(server, 'POST', '/api/v1/namespaces/h/configmaps?fieldValidation=Strict', { body: cm('fv1', { a: 'b' }, { bogus: 1 }) });
    expect(strict.status).toBe(400);
    expect(strict.json<{ message: string }>().message).toContain('unknown field "bogus"');
    const dup = await request(server, 'POST', '/api/v1/namespaces/h/configmaps?fieldValidation=Strict', {
      body: '{"metadata":{"name":"fv2"},"data":{"a":"1","a":"2"}}',
      headers: { 'content-type': 'application/json' },
    });
    expect(dup.status).toBe(400);
    expect(dup.json<{ message: string }>().message).toContain('duplicate field "data.a"');
    const warn = await request(server, 'POST', '/api/v1/namespaces/h/configmaps?fieldValidation=Warn', { body: cm('fv3', { a: 'b' }, { bogus: 1 }) });
    expect(warn.status).toBe(201);
    expect(warn.headers['warning']).toContain('unknown field \\"bogus\\"');
    expect(warn.json<Record<string, unknown>>().bogus).toBeUndefined();
    const bad = await request(server, 'POST', '/api/v1/namespaces/h/configmaps?fieldValidation=Loose', { body: cm('fv4') });
    expect(bad.status).toBe(422);
  });
});

describe('writes', () => {
  it('creates with generateName, updates with optimistic concurrency, and 409s a stale resourceVersion', async () => {
    const c = await request(server, 'POST', '/api/v1/namespaces/h/configmaps', { body: { metadata: { generateName: 'gen-' }, data: { a: '1' } } });
    expect(c.status).toBe(201);
    const obj = c.json<{ metadata: { name: string; resourceVersion: string } }>();
    expect(obj.metadata.name).toMatch(/^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    const u1 = await request(server, 'PUT', `/api/v1/namespaces/h/configmaps/${obj.metadata.name}`, { body: { ...obj, data: { a: '2' } } });
    expect(u1.status).toBe(200);
    expect(Number(u1.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion)).toBeGreaterThan(Number(obj.metadata.resourceVersion));
    const stale = await request(server, 'PUT', `/api/v1/namespaces/h/configmaps/${obj.metadata.name}`, { body: { ...obj, data: { a: '3' } } });
    expect(stale.status).toBe(409);
    expect(stale.json()).toMatchObject({ reason: 'Conflict' });
    expect(stale.json<{ message: string }>().message).toContain('the object has been modified');
  });
  it('refuses an update that sets deletionTimestamp on a live object', async () => {
    const c = await request(server, 'POST', '/api/v1/namespaces/h/configmaps', { body: cm('no-dts') });
    const obj = c.json<{ metadata: Record<string, unknown> }>();
    const u = await request(server, 'PUT', '/api/v1/namespaces/h/configmaps/no-dts', {
      body: { ...obj, metadata: { ...obj.metadata, deletionTimestamp: '2030-01-01T00:00:00Z' } },
    });
    expect(u.status).toBe(422);
    expect(u.json<{ details: { causes: Array<{ field: string }> } }>().details.causes[0].field).toBe('metadata.deletionTimestamp');
  });
  it('keeps immutable config maps immutable', async () => {
    const c = await request(server, 'POST', '/api/v1/namespaces/h/configmaps', { body: cm('frozen', { a: '1' }, { immutable: true }) });
    expect(c.status).toBe(201);
    const p = await request(server, 'PATCH', '/api/v1/namespaces/h/configmaps/frozen', {
      body: '{"data":{"a":"2"}}',
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(p.status).toBe(422);
    const meta = await request(server, 'PATCH', '/api/v1/namespaces/h/configmaps/frozen', {
      body: '{"metadata":{"labels":{"x":"y"}}}',
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(meta.status).toBe(200);
  });
  it('never returns Secret stringData and merges it into data', async () => {
    const r = await request(server, 'POST', '/api/v1/namespaces/h/secrets', {
      body: { metadata: { name: 'sd' }, stringData: { u: 'me' }, data: { p: Buffer.from('pw').toString('base64') } },
    });
    expect(r.status).toBe(201);
    const s = r.json<{ data: Record<string, string>; stringData?: unknown }>();
    expect(s.stringData).toBeUndefined();
    expect(Buffer.from(s.data.u, 'base64').toString()).toBe('me');
    expect(Buffer.from(s.data.p, 'base64').toString()).toBe('pw');
  });
  it('dry-run creates return the object but store nothing', async () => {
    const r = await request(server, 'POST', '/api/v1/namespaces/h/configmaps?dryRun=All', { body: cm('dry') });
    expect(r.status).toBe(201);
    expect((await request(server, 'GET', '/api/v1/namespaces/h/configmaps/dry')).status).toBe(404);
    expect((await request(server, 'POST', '/api/v1/namespaces/h/configmaps?dryRun=Some', { body: cm('dry') })).status).toBe(422);
  });
  it('returns a Status on delete and 404 after', async () => {
    await request(server, 'POST', '/api/v1/namespaces/h/configmaps', { body: cm('del') });
    const d = await request(server, 'DELETE', '/api/v1/namespaces/h/configmaps/del');
    expect(d.status).toBe(200);
    expect(d.json()).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'del', kind: 'configmaps' } });
    expect((await request(server, 'DELETE', '/api/v1/namespaces/h/configmaps/del')).status).toBe(404);
  });
});

describe('lists and pages', () => {
  it('pages with limit and continue at one revision, with remainingItemCount', async () => {
    await request(server, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'pages' } } });
    // Every namespace also holds kube-root-ca.crt (the root-CA publisher's, as in Kubernetes), first by name.
    await waitFor('kube-root-ca.crt', async () => (await request(server, 'GET', '/api/v1/namespaces/pages/configmaps/kube-root-ca.crt')).status === 200);
    for (let i = 0; i < 7; i++) {
      expect((await request(server, 'POST', '/api/v1/namespaces/pages/configmaps', { body: cm(`p${i}`) })).status).toBe(201);
    }
    const first = (await request(server, 'GET', '/api/v1/namespaces/pages/configmaps?limit=3')).json<{
      metadata: { continue: string; resourceVersion: string; remainingItemCount: number };
      items: Array<{ metadata: { name: string } }>;
    }>();
    expect(first.items.map((i) => i.metadata.name)).toEqual(['kube-root-ca.crt', 'p0', 'p1']);
    expect(first.metadata.remainingItemCount).toBe(5);
    await request(server, 'POST', '/api/v1/namespaces/pages/configmaps', { body: cm('p10') });
    const second = (await request(server, 'GET', `/api/v1/namespaces/pages/configmaps?limit=3&continue=${first.metadata.continue}`)).json<{
      metadata: { continue?: string; resourceVersion: string };
      items: Array<{ metadata: { name: string } }>;
    }>();
    expect(second.items.map((i) => i.metadata.name)).toEqual(['p2', 'p3', 'p4']);
    expect(second.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
    const third = (await request(server, 'GET', `/api/v1/namespaces/pages/configmaps?limit=3&continue=${second.metadata.continue}`)).json<{
      metadata: { continue?: string };
      items: Array<{ metadata: { name: string } }>;
    }>();
    expect(third.items.map((i) => i.metadata.name)).toEqual(['p5', 'p6']);
    expect(third.metadata.continue).toBeUndefined();
    const forged = await request(server, 'GET', '/api/v1/namespaces/pages/configmaps?limit=3&continue=garbage');
    expect(forged.status).toBe(400);
    const bothRv = await request(server, 'GET', `/api/v1/namespaces/pages/configmaps?limit=3&continue=${first.metadata.continue}&resourceVersion=5`);
    expect(bothRv.status).toBe(400);
  });
  it('lists across namespaces and as a Table', async () => {
    const all = (await request(server, 'GET', '/api/v1/configmaps')).json<{ kind: string; items: unknown[] }>();
    expect(all.kind).toBe('ConfigMapList');
    expect(all.items.length).toBeGreaterThanOrEqual(7);
    const t = (
      await request(server, 'GET', '/api/v1/namespaces/pages/configmaps', { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } })
    ).json<{ kind: string; columnDefinitions: Array<{ name: string }>; rows: Array<{ cells: unknown[] }> }>();
    expect(t.kind).toBe('Table');
    expect(t.columnDefinitions.map((c) => c.name)).toEqual(['Name', 'Data', 'Age']);
    expect(t.rows.map((r) => r.cells[0])).toEqual(['kube-root-ca.crt', 'p0', 'p1', 'p10', 'p2', 'p3', 'p4', 'p5', 'p6']);
  });
  it('serves protobuf when only protobuf is acceptable', async () => {
    const r = await request(server, 'GET', '/api/v1/namespaces/pages/configmaps/p0', { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/vnd.kubernetes.protobuf');
  });
});

describe('discovery, OpenAPI, metrics, HTTP/2', () => {
  it('serves aggregated discovery v2 with its content type', async () => {
    const r = await request(server, 'GET', '/api', {
      headers: { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json' },
    });
    expect(r.headers['content-type']).toBe('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    const doc = r.json<{ items: Array<{ versions: Array<{ resources: Array<{ resource: string }> }> }> }>();
    expect(doc.items[0].versions[0].resources.map((x) => x.resource)).toContain('configmaps');
    const legacy = (await request(server, 'GET', '/api/v1')).json<{ kind: string; resources: Array<{ name: string }> }>();
    expect(legacy.kind).toBe('APIResourceList');
    expect(legacy.resources.map((x) => x.name)).toEqual(expect.arrayContaining(['namespaces', 'namespaces/status', 'namespaces/finalize', 'configmaps']));
  });
  it('publishes OpenAPI v3 with GVKs and fieldValidation on PATCH', async () => {
    const idx = (await request(server, 'GET', '/openapi/v3')).json<{ paths: Record<string, { serverRelativeURL: string }> }>();
    const url = idx.paths['api/v1'].serverRelativeURL;
    const doc = (await request(server, 'GET', url)).json<{
      paths: Record<string, Record<string, { parameters?: Array<{ name: string }> }>>;
      components: { schemas: Record<string, Record<string, unknown>> };
    }>();
    expect(doc.components.schemas['io.k8s.api.core.v1.ConfigMap']['x-kubernetes-group-version-kind']).toEqual([
      { group: '', version: 'v1', kind: 'ConfigMap' },
    ]);
    const patch = doc.paths['/api/v1/namespaces/{namespace}/configmaps/{name}'].patch;
    expect(patch.parameters?.map((p) => p.name)).toContain('fieldValidation');
  });
  it('counts requests in /metrics', async () => {
    const m = await request(server, 'GET', '/metrics');
    expect(m.body).toMatch(/apiserver_request_total\{verb="LIST",group="",version="v1",resource="configmaps"/);
    expect(m.body).toContain('apiserver_request_duration_seconds_bucket');
  });
  it('serves HTTP/2', async () => {
    const r = await request2(server, 'GET', '/api/v1/namespaces/default');
    expect(r.status).toBe(200);
    expect(r.json()).toMatchObject({ kind: 'Namespace', metadata: { name: 'default' }, status: { phase: 'Active' } });
  });
});

describe('fuzz: malformed bodies, paths and headers never crash or hang the server', () => {
  it('answers every malformed request with a 4xx Status', async () => {
    const bodies: Array<string | Buffer> = [
      '',
      'null',
      '[]',
      '"str"',
      '{"metadata":[]}',
      '{"metadata":{"name":5}}',
      '{"metadata":{"name":"x","labels":{"a":5}}}',
      '{"apiVersion":"v2","kind":"ConfigMap","metadata":{"name":"x"}}',
      '{"kind":"Secret","metadata":{"name":"x"}}',
      '{"metadata":{"name":"x"},"data":{"a":1}}',
      '{"metadata":{"name":"x"},"data":"nope"}',
      '{'.repeat(5000),
      Buffer.from([0xff, 0xfe, 0x00, 0x01]),
      '---\n: : :\n',
      'a: &x [*x]',
    ];
    for (let i = 0; i < 30; i++) bodies.push(randomBytes(64 + i * 13));
    const types = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];
    for (const b of bodies) {
      for (const t of types) {
        const r = await request(server, 'POST', '/api/v1/namespaces/h/configmaps', { body: b, headers: { 'content-type': t } });
        expect(r.status).toBeGreaterThanOrEqual(400);
        expect(r.status).toBeLessThan(500);
        expect(r.json()).toMatchObject({ kind: 'Status' });
      }
    }
    const paths = [
      '/api/v1/namespaces/h/configmaps/%ZZ',
      '/api/v1/namespaces//configmaps',
      '/apis/x/y/z',
      '/api/v1/namespaces/h/configmaps/a/b/c/d',
      '/api/../etc/passwd',
    ];
    for (const p of paths) {
      const r = await request(server, 'GET', p);
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
    }
    const patches = ['{', '[{"op":"bogus"}]', '[{"op":"add","path":"data","value":1}]', '5'];
    for (const p of patches) {
      for (const t of ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json']) {
        const r = await request(server, 'PATCH', '/api/v1/namespaces/default', { body: p, headers: { 'content-type': t } });
        expect(r.status).toBeGreaterThanOrEqual(400);
        expect(r.status).toBeLessThan(500);
      }
    }
    const odd = await request(server, 'GET', '/api/v1/namespaces/h/configmaps?limit=abc&labelSelector=%3D%3D');
    expect(odd.status).toBe(400);
    expect((await request(server, 'GET', '/readyz')).status).toBe(200);
  });
});
