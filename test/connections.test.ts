/**
 * Connections that carry no request are closed (apps/apiserver/src/http/connection.guard.ts):
 * one that never completes its first request's headers, and one left idle between requests;
 * a connection serving a quiet watch is left alone. The server runs with short limits
 * (KAPI_READ_HEADER_TIMEOUT_MS, KAPI_IDLE_TIMEOUT_MS, KAPI_BODY_TIMEOUT_MS; 32 s, 90 s and 60 s
 * otherwise). The watches below run longer than every limit.
 */
import * as http2 from 'node:http2';
import * as https from 'node:https';
import * as tls from 'node:tls';
import { type ServerHandle, startServer } from './support/server.js';

const HEADER_MS = 1500;
const IDLE_MS = 2500;
const BODY_MS = 2000;
const WATCH = '/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=5';

describe('connection time limits', () => {
  let server: ServerHandle;

  beforeAll(async () => {
    server = await startServer({
      env: { KAPI_READ_HEADER_TIMEOUT_MS: String(HEADER_MS), KAPI_IDLE_TIMEOUT_MS: String(IDLE_MS), KAPI_BODY_TIMEOUT_MS: String(BODY_MS) },
    });
  });

  afterAll(async () => {
    await server?.cleanup();
  });

  const tlsOpts = () => ({
    host: '127.0.0.1',
    port: server.port,
    ca: server.caPem,
    cert: server.adminCertPem,
    key: server.adminKeyPem,
    servername: 'localhost',
  });

  /** A raw HTTP/1.1-over-TLS connection, with the admin's certificate unless `anonymous`. */
  const openTls = (anonymous = false): Promise<tls.TLSSocket> =>
    new Promise((resolve, reject) => {
      const { cert: _c, key: _k, ...noCert } = tlsOpts();
      const s = tls.connect({ ...(anonymous ? noCert : tlsOpts()), ALPNProtocols: ['http/1.1'] }, () => resolve(s));
      s.once('error', reject);
    });

  /** Milliseconds from `t0` until `emitter` emits 'close' (rejects after `maxMs`, which only
   * keeps a connection that is never closed from hanging the test). Callers check a lower bound
   * only: the limit must not cut earlier than set; a loaded machine can only make it later. */
  const closedAfter = (emitter: NodeJS.EventEmitter, t0: number, maxMs = 15_000): Promise<number> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`still open after ${maxMs} ms`)), maxMs);
      emitter.once('close', () => {
        clearTimeout(timer);
        resolve(Date.now() - t0);
      });
    });

  it('closes a connection that sends partial headers, or nothing, after the TLS handshake', async () => {
    const open = async (first?: string) => {
      const socket = await openTls();
      if (first) socket.write(first);
      return { socket, t0: Date.now() };
    };
    const slow = await open('GET /version HTTP/1.1\r\nHost: localhost\r\n');
    const silent = await open();
    const [a, b] = await Promise.all([closedAfter(slow.socket, slow.t0), closedAfter(silent.socket, silent.t0)]);
    for (const ms of [a, b]) {
      expect(ms).toBeGreaterThanOrEqual(HEADER_MS - 200);
    }
  });

  it('answers a request without credentials at its headers, without waiting for its body', async () => {
    // A body announced as 1 MB of which 10 bytes ever arrive: the refusal (403 for system:anonymous
    // under the default RBAC policy) must not wait for the rest.
    const socket = await openTls(true);
    try {
      let answer = '';
      const got = new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no answer within 5 s: ${JSON.stringify(answer)}`)), 5000);
        socket.on('data', (c: Buffer) => {
          answer += c.toString();
          if (answer.includes('\r\n\r\n')) {
            clearTimeout(timer);
            resolve(answer);
          }
        });
      });
      socket.write(
        'POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{"kind":"C',
      );
      expect(await got).toMatch(/^HTTP\/1\.1 403 /);
    } finally {
      socket.destroy();
    }
  });

  it('cuts off a client that sends a request body too slowly, over HTTP/1.1 and HTTP/2', async () => {
    const CM = '/api/v1/namespaces/default/configmaps';
    const socket = await openTls();
    const t0 = Date.now();
    socket.write(`POST ${CM} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"kind":"C`);
    const session = http2.connect(`https://localhost:${server.port}`, tlsOpts());
    try {
      const stream = session.request({ ':method': 'POST', ':path': CM, 'content-type': 'application/json' });
      stream.write('{"kind":"C');
      stream.on('error', () => undefined);
      const h2 = new Promise<{ ms: number; code: number }>((resolve) =>
        stream.once('close', () => resolve({ ms: Date.now() - t0, code: stream.rstCode ?? -1 })),
      );
      const h1 = await closedAfter(socket, t0);
      expect(h1).toBeGreaterThanOrEqual(BODY_MS - 200);
      const r = await h2;
      expect(r.ms).toBeGreaterThanOrEqual(BODY_MS - 200);
      expect(r.code).toBe(http2.constants.NGHTTP2_CANCEL);
    } finally {
      socket.destroy();
      session.destroy();
    }
  });

  /** GET over HTTP/1.1 (no ALPN for HTTP/2): status and body. */
  const get1 = (path: string): Promise<{ code: number; body: string }> =>
    new Promise((resolve, reject) => {
      const req = https.request({ ...tlsOpts(), path }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ code: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });

  // A label selector longer than Node's HTTP/1.1 header limit (16 KiB), within kube-apiserver's
  // 1 MiB and within the 64 KiB this server takes per selector.
  const LABELS = `app in (${Array.from({ length: 6500 }, (_, i) => `v${i}`).join(',')})`;
  const CMS = '/api/v1/namespaces/default/configmaps';

  it("takes request headers up to kube-apiserver's 1 MiB over HTTP/1.1, and answers more with a 431 Status", async () => {
    const path = `${CMS}?labelSelector=${encodeURIComponent(LABELS)}`;
    expect(path.length).toBeGreaterThan(16_384);
    const ok = await get1(path);
    expect(ok.code).toBe(200);
    expect(JSON.parse(ok.body)).toMatchObject({ kind: 'ConfigMapList', items: [] });
    const status = await get1(`/api/v1/configmaps?labelSelector=${'a'.repeat(1_100_000)}`);
    expect(status.code).toBe(431);
    expect(JSON.parse(status.body)).toMatchObject({ kind: 'Status', status: 'Failure', code: 431 });
  });

  it('HTTP/1.1: keeps a connection through a quiet watch longer than the idle limit, then closes it when idle', async () => {
    const agent = new https.Agent({ ...tlsOpts(), keepAlive: true, maxSockets: 1 });
    try {
      const t0 = Date.now();
      const { status, socket } = await new Promise<{ status: number; socket: tls.TLSSocket }>((resolve, reject) => {
        const req = https.request({ ...tlsOpts(), agent, path: WATCH }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, socket: req.socket as tls.TLSSocket }));
        });
        req.on('error', reject);
        req.end();
      });
      // The watch ended by its own timeout (5 s), not the idle limit (2.5 s).
      expect(status).toBe(200);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(4500);
      expect(socket.destroyed).toBe(false);
      const idle = await closedAfter(socket, Date.now());
      expect(idle).toBeGreaterThanOrEqual(IDLE_MS - 500);
    } finally {
      agent.destroy();
    }
  });

  it('HTTP/2: announces at most 250 concurrent streams per connection', async () => {
    const session = http2.connect(`https://localhost:${server.port}`, tlsOpts());
    try {
      await new Promise<void>((resolve, reject) => {
        session.once('remoteSettings', () => resolve());
        session.once('error', reject);
      });
      expect(session.remoteSettings.maxConcurrentStreams).toBe(250);
    } finally {
      session.destroy();
    }
  });

  it('HTTP/2: keeps a session through a quiet watch, then sends GOAWAY when it has no stream', async () => {
    const session = http2.connect(`https://localhost:${server.port}`, tlsOpts());
    try {
      const t0 = Date.now();
      const status = await new Promise<number>((resolve, reject) => {
        const stream = session.request({ ':path': WATCH });
        let code = 0;
        stream.on('response', (h) => (code = Number(h[':status'])));
        stream.resume();
        stream.on('end', () => resolve(code));
        stream.on('error', reject);
      });
      expect(status).toBe(200);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(4500);
      expect(session.closed || session.destroyed).toBe(false);
      const idle = await closedAfter(session, Date.now());
      expect(idle).toBeGreaterThanOrEqual(IDLE_MS - 500);
    } finally {
      session.destroy();
    }
  });
});
