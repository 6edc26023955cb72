/**
 * The etcd endpoint's gRPC server (GrpcH2Server of libs/grpc) on the wire: a
 * real node with --listen-client-urls, driven by @grpc/grpc-js and by raw node:http2 requests
 * that a well-behaved client would never send. Covers dispatch (unknown method), the request's
 * content-type, message framing (a message over many DATA frames, several messages in one,
 * an oversize message, the compressed flag, unary cardinality), grpc-timeout, the release of a
 * watcher when its client cancels the stream (etcd_debugging_mvcc_watcher_total on /metrics),
 * a snapshot stream under backpressure, TLS with and without client certificates (and, on the
 * cluster CA, only system:masters certificates served the data), the end
 * of open streams when the node stops, HTTP/1.1 beside gRPC on the same port (/health, /version,
 * /metrics, and `etcdctl check datascale`, which reads the last), and what one connection may make the server hold (the
 * streams it may open, the bytes of unfinished requests: a GrpcH2Server in this process, with a
 * small bound).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as http from 'node:http';
import * as http2 from 'node:http2';
import * as net from 'node:net';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { findProtoFile } from '@app/raft';
import { createPki, issueClientCertificate } from '@app/pki';
import { prerequisite } from './support/prereq.js';
import { GrpcH2Server, tlsChannelCredentials, type UnaryCall } from '@app/grpc';
import { closeHttpClients, delay, getFreePorts, repoRoot, request, startServer, type ServerHandle } from './support/server.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Msg = Record<string, any>;

const rpc = findProtoFile('etcd/rpc.proto');
const def = protoLoader.loadSync(rpc, { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true, includeDirs: [dirname(rpc)] });
const pkg = (grpc.loadPackageDefinition(def) as unknown as { etcdserverpb: Record<string, grpc.ServiceClientConstructor> }).etcdserverpb;
const method = (service: string, name: string): protoLoader.MethodDefinition<Msg, Msg> =>
  (def[`etcdserverpb.${service}`] as Record<string, protoLoader.MethodDefinition<Msg, Msg>>)[name]!;
const PUT = method('KV', 'Put');
const WATCH = method('Watch', 'Watch');

/** One gRPC message, framed by hand (flag, big-endian length, payload). */
function frame(payload: Buffer, flag = 0): Buffer {
  const head = Buffer.alloc(5);
  head[0] = flag;
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

/** Splits a response body into its messages. */
function unframe(body: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let off = 0; off + 5 <= body.length;) {
    const len = body.readUInt32BE(off + 1);
    out.push(body.subarray(off + 5, off + 5 + len));
    off += 5 + len;
  }
  return out;
}

interface RawResult {
  httpStatus: number;
  /** grpc-status from the trailers, or from the headers of a trailers-only answer. */
  grpcStatus: string | undefined;
  grpcMessage: string | undefined;
  /** Whether the status came in the headers frame (trailers-only). */
  trailersOnly: boolean;
  messages: Buffer[];
}

interface RawOptions {
  headers?: http2.OutgoingHttpHeaders;
  /** Written one by one, a pause between them (so each goes out as its own DATA frames). */
  chunks?: Buffer[];
  /** Half-close after the chunks (default true). */
  end?: boolean;
  /** Called with the request as soon as it is opened (to reset it later). */
  opened?: (req: http2.ClientHttp2Stream) => void;
  /** Called once the chunks went out: the server reads them before what a later stream sends. */
  written?: () => void;
}

/**
 * Resolves on the next turn of the event loop. A stream closed or cancelled right after an await
 * that a stream event resolved would be closed from inside node:http2's read callbacks, which
 * can abort the test process (an nghttp2 memory-accounting assertion); after a turn it is not.
 */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** One raw HTTP/2 request; resolves with the status once the server ends the stream. */
function raw(session: http2.ClientHttp2Session, path: string, opts: RawOptions = {}): Promise<RawResult> {
  return new Promise((resolve, reject) => {
    const req = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers', ...opts.headers });
    opts.opened?.(req);
    const body: Buffer[] = [];
    let headers: http2.IncomingHttpHeaders = {};
    let trailers: http2.IncomingHttpHeaders | undefined;
    req.on('response', (h) => (headers = h));
    req.on('trailers', (t) => (trailers = t));
    req.on('data', (d: Buffer) => body.push(d));
    req.on('error', reject);
    // The server's END_STREAM ends the call; the client then resets its side if still open, on
    // the next turn: node:http2 can abort the process (nghttp2 memory accounting) when a stream
    // is closed from inside the callbacks of the read that delivered its end.
    req.on('end', () =>
      setImmediate(() => {
        if (!req.closed) req.close();
      }),
    );
    req.on('close', () => {
      const st = trailers ?? headers;
      resolve({
        httpStatus: Number(headers[':status']),
        grpcStatus: st['grpc-status'] as string | undefined,
        grpcMessage: st['grpc-message'] === undefined ? undefined : decodeURIComponent(st['grpc-message'] as string),
        trailersOnly: trailers === undefined && headers['grpc-status'] !== undefined,
        messages: unframe(Buffer.concat(body)),
      });
    });
    void (async () => {
      for (const c of opts.chunks ?? []) {
        if (req.closed) return;
        await new Promise<void>((done) => req.write(c, () => done()));
        await delay(2);
      }
      opts.written?.();
      if (opts.end !== false && !req.closed) req.end();
    })();
  });
}

describe('the etcd endpoint gRPC server', () => {
  let dir: string;
  let pkiDir: string;
  let plain: ServerHandle;
  let tls: ServerHandle;
  let mutual: ServerHandle;
  /** Mutual TLS with a trusted bundle of the cluster CA and a CA for etcd clients only (`otherPki`). */
  let bundle: ServerHandle;
  let otherPki: string;
  const ports: number[] = [];
  let session: http2.ClientHttp2Session;

  const metric = async (h: ServerHandle, name: string): Promise<number> => {
    const r = await request(h, 'GET', '/metrics');
    const m = new RegExp(`^${name} (\\d+)$`, 'm').exec(r.body);
    if (!m) throw new Error(`no ${name} in /metrics`);
    return Number(m[1]);
  };
  const waitMetric = async (h: ServerHandle, name: string, want: number): Promise<void> => {
    let got = -1;
    for (let i = 0; i < 100; i++) {
      got = await metric(h, name);
      if (got === want) return;
      await delay(50);
    }
    throw new Error(`${name} stayed ${got}, expected ${want}`);
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kapi-etcd-grpc-'));
    pkiDir = join(dir, 'pki');
    await createPki({ outDir: pkiDir, hosts: ['127.0.0.1'] });
    ports.push(...(await getFreePorts(7)));
    otherPki = join(dir, 'other-pki');
    await createPki({ outDir: otherPki, hosts: ['127.0.0.1'] });
    await writeFile(join(dir, 'bundle.crt'), Buffer.concat([await readFile(join(pkiDir, 'ca.crt')), await readFile(join(otherPki, 'ca.crt'))]));
    // The etcd endpoint serves the built-in store: pinned, also when the suite runs the other
    // tests on an external etcd (KAPI_TEST_STORAGE=etcd3).
    const base = ['--storage-backend', 'builtin', '--pki-dir', pkiDir, '--listen-client-urls'];
    [plain, tls, mutual, bundle] = await Promise.all([
      startServer({
        args: [...base, `http://127.0.0.1:${ports[0]}`, '--listen-metrics-urls', `http://127.0.0.1:${ports[3]},http://127.0.0.1:${ports[6]}`],
        readyTimeoutMs: 40_000,
      }),
      // Two client URLs, one with TLS and one without, and the URLs its member record advertises.
      startServer({
        args: [
          ...base,
          `https://127.0.0.1:${ports[1]},http://127.0.0.1:${ports[5]}`,
          '--advertise-client-urls',
          `https://etcd-1.example:2379,http://127.0.0.1:${ports[5]}`,
        ],
        readyTimeoutMs: 40_000,
      }),
      startServer({ args: [...base, `https://127.0.0.1:${ports[2]}`, '--client-cert-auth'], readyTimeoutMs: 40_000 }),
      startServer({
        args: [...base, `https://127.0.0.1:${ports[4]}`, '--client-cert-auth', '--trusted-ca-file', join(dir, 'bundle.crt')],
        readyTimeoutMs: 40_000,
      }),
    ]);
    session = http2.connect(`http://127.0.0.1:${ports[0]}`);
    session.on('error', () => undefined);
  }, 90_000);

  afterAll(async () => {
    session?.close();
    for (const h of [plain, tls, mutual, bundle]) await h?.cleanup();
    // The keep-alive clients of the etcd URLs.
    await closeHttpClients();
    await rm(dir, { recursive: true, force: true });
  });

  const kvClient = (port: number, creds: grpc.ChannelCredentials) =>
    new pkg.KV!(`127.0.0.1:${port}`, creds) as unknown as grpc.Client &
      Record<string, (req: object, opts: grpc.CallOptions, cb: (e: grpc.ServiceError | null, v: Msg) => void) => void>;
  const unary = (c: ReturnType<typeof kvClient>, name: string, req: object, opts: grpc.CallOptions = {}): Promise<Msg> =>
    new Promise((resolve, reject) => c[name]!.call(c, req, opts, (e, v) => (e ? reject(e) : resolve(v))));

  it('answers grpc-js unary calls over h2c, with and without a deadline', async () => {
    const c = kvClient(ports[0]!, grpc.credentials.createInsecure());
    try {
      const put = await unary(c, 'Put', { key: Buffer.from('/g/a'), value: Buffer.from('1') }, { deadline: Date.now() + 10_000 });
      const got = await unary(c, 'Range', { key: Buffer.from('/g/a') });
      expect(got.kvs.map((kv: Msg) => kv.value.toString())).toEqual(['1']);
      expect(got.header.revision).toBeGreaterThanOrEqual(put.header.revision);
      // An etcd error travels as grpc-status and grpc-message.
      await expect(unary(c, 'Range', { key: Buffer.from('/g/a'), revision: 1_000_000 })).rejects.toMatchObject({
        code: grpc.status.OUT_OF_RANGE,
        details: 'etcdserver: mvcc: required revision is a future revision',
      });
    } finally {
      c.close();
    }
  });

  it('refuses an unknown method, a wrong content-type, a non-POST and an unknown encoding', async () => {
    const unknown = await raw(session, '/etcdserverpb.KV/Nope', { chunks: [frame(Buffer.alloc(0))] });
    expect(unknown).toMatchObject({ httpStatus: 200, grpcStatus: String(grpc.status.UNIMPLEMENTED), trailersOnly: true });
    expect(unknown.grpcMessage).toContain('/etcdserverpb.KV/Nope');
    const json = await raw(session, PUT.path, { headers: { 'content-type': 'application/json' }, chunks: [Buffer.from('{}')] });
    expect(json).toMatchObject({ httpStatus: 415, grpcStatus: String(grpc.status.INTERNAL) });
    const get = await raw(session, PUT.path, { headers: { ':method': 'GET' }, end: false });
    expect(get.httpStatus).toBe(405);
    const gzip = await raw(session, PUT.path, { headers: { 'grpc-encoding': 'gzip' }, chunks: [frame(PUT.requestSerialize({ key: Buffer.from('/g/z') }))] });
    expect(gzip.grpcStatus).toBe(String(grpc.status.UNIMPLEMENTED));
    // application/grpc+proto is gRPC too.
    const proto = await raw(session, PUT.path, {
      headers: { 'content-type': 'application/grpc+proto' },
      chunks: [frame(PUT.requestSerialize({ key: Buffer.from('/g/p') }))],
    });
    expect(proto.grpcStatus).toBe('0');
  });

  it('reads a request message spread over many DATA frames', async () => {
    const value = Buffer.alloc(200 * 1024, 'v');
    value.write('first', 0);
    value.write('last', value.length - 4);
    const msg = frame(PUT.requestSerialize({ key: Buffer.from('/g/big'), value }));
    // Cut inside the prefix too, then in pieces much smaller than a frame.
    const chunks = [msg.subarray(0, 2), msg.subarray(2, 7)];
    for (let off = 7; off < msg.length; off += 3000) chunks.push(msg.subarray(off, off + 3000));
    const r = await raw(session, PUT.path, { chunks });
    expect(r).toMatchObject({ httpStatus: 200, grpcStatus: '0', trailersOnly: false });
    expect(r.messages).toHaveLength(1);
    expect(Number(PUT.responseDeserialize(r.messages[0]!).header.revision)).toBeGreaterThan(1);
    const c = kvClient(ports[0]!, grpc.credentials.createInsecure());
    try {
      const got = await unary(c, 'Range', { key: Buffer.from('/g/big') });
      expect(Buffer.compare(got.kvs[0].value as Buffer, value)).toBe(0);
    } finally {
      c.close();
    }
  });

  it('delivers a revision of many events whole, or in fragments of at most about 1.5 MiB when asked, in key order', async () => {
    const kv = kvClient(ports[0]!, grpc.credentials.createInsecure());
    const value = Buffer.alloc(1024, 'v');
    const n = 2500;
    const keys = Array.from({ length: n }, (_, i) => `/frag/${String(i).padStart(5, '0')}`);
    for (let i = 0; i < n; i += 100) await Promise.all(keys.slice(i, i + 100).map((key) => unary(kv, 'Put', { key: Buffer.from(key), value })));
    const from = Number((await unary(kv, 'Range', { key: Buffer.from('/frag/') })).header.revision) + 1;
    // Two watchers over the prefix with prev_kv, one asking for fragments; the DeleteRange puts
    // 2,500 events (each with a previous value of 1 KiB, 2.5 MiB in all) in one revision.
    const watcher = new pkg.Watch!(`127.0.0.1:${ports[0]}`, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
      Watch(): grpc.ClientDuplexStream<Msg, Msg>;
    };
    const stream = watcher.Watch();
    const got = new Map<number, Msg[]>();
    let events = 0;
    const done = new Promise<void>((resolve) =>
      stream.on('data', (r: Msg) => {
        if (r.created) return;
        const id = Number(r.watch_id);
        got.set(id, [...(got.get(id) ?? []), r]);
        events += (r.events as Msg[]).length;
        if (events === 2 * n) resolve();
      }),
    );
    const range = { key: Buffer.from('/frag/'), range_end: Buffer.from('/frag0'), start_revision: from, prev_kv: true };
    stream.write({ create_request: { ...range, watch_id: 1 } });
    stream.write({ create_request: { ...range, watch_id: 2, fragment: true } });
    await delay(200);
    const del = await unary(kv, 'DeleteRange', { key: Buffer.from('/frag/'), range_end: Buffer.from('/frag0') });
    expect(Number(del.deleted)).toBe(n);
    await done;
    await nextTurn();
    stream.cancel();
    stream.on('error', () => undefined);
    watcher.close();
    kv.close();
    const keysOf = (rs: Msg[]) => rs.flatMap((r) => (r.events as Msg[]).map((e) => (e.kv.key as Buffer).toString()));
    const whole = got.get(1)!;
    expect(whole).toHaveLength(1);
    expect(whole[0]!.fragment).toBe(false);
    expect(keysOf(whole)).toEqual(keys);
    const parts = got.get(2)!;
    expect(parts.length).toBeGreaterThanOrEqual(2);
    expect(parts.map((r) => r.fragment)).toEqual([...parts.slice(1).map(() => true), false]);
    expect(keysOf(parts)).toEqual(keys);
    for (const r of [...whole, ...parts]) {
      expect(Number(r.header.revision)).toBe(Number(del.header.revision));
      for (const e of r.events as Msg[]) {
        expect(e.type).toBe('DELETE');
        expect(Buffer.compare(e.prev_kv.value as Buffer, value)).toBe(0);
      }
    }
    for (const r of parts) expect(WATCH.responseSerialize(r).length).toBeLessThan(1.6 * 1024 * 1024);
  });

  it('reads several messages from one DATA frame on a watch stream', async () => {
    const create = (key: string): Buffer => frame(WATCH.requestSerialize({ create_request: { key: Buffer.from(key) } }));
    // Both requests in one write, the stream half-closed: two watchers created, then OK.
    const r = await raw(session, WATCH.path, { chunks: [Buffer.concat([create('/w/1'), create('/w/2')])] });
    expect(r.grpcStatus).toBe('0');
    const created = r.messages.map((m) => WATCH.responseDeserialize(m)).filter((m) => m.created);
    expect(created.map((m) => Number(m.watch_id))).toEqual([0, 1]);
  });

  it('refuses an oversize message, a compressed one and a unary call without exactly one message', async () => {
    const head = Buffer.alloc(5);
    head.writeUInt32BE(3 * 1024 * 1024, 1);
    const big = await raw(session, PUT.path, { chunks: [head, Buffer.alloc(1024)], end: false });
    expect(big.grpcStatus).toBe(String(grpc.status.RESOURCE_EXHAUSTED));
    expect(big.grpcMessage).toMatch(/larger than max/);
    const zipped = await raw(session, PUT.path, { chunks: [frame(PUT.requestSerialize({ key: Buffer.from('/g/c') }), 1)] });
    expect(zipped.grpcStatus).toBe(String(grpc.status.INTERNAL));
    expect(zipped.grpcMessage).toMatch(/compressed/);
    const none = await raw(session, PUT.path, { chunks: [] });
    expect(none.grpcStatus).toBe(String(grpc.status.UNIMPLEMENTED));
    const one = frame(PUT.requestSerialize({ key: Buffer.from('/g/two') }));
    const two = await raw(session, PUT.path, { chunks: [Buffer.concat([one, one])] });
    expect(two.grpcStatus).toBe(String(grpc.status.UNIMPLEMENTED));
    const truncated = await raw(session, PUT.path, { chunks: [one.subarray(0, one.length - 1)] });
    expect(truncated.grpcStatus).toBe(String(grpc.status.UNIMPLEMENTED));
    const garbage = await raw(session, PUT.path, { chunks: [frame(Buffer.from([0xff, 0xff, 0xff]))] });
    expect(garbage.grpcStatus).toBe(String(grpc.status.INTERNAL));
    // None of that stopped the server: the same connection still serves.
    const ok = await raw(session, PUT.path, { chunks: [one] });
    expect(ok.grpcStatus).toBe('0');
  });

  it('ends a call at its grpc-timeout (DEADLINE_EXCEEDED) and releases its watcher', async () => {
    await waitMetric(plain, 'etcd_debugging_mvcc_watcher_total', 0);
    const started = Date.now();
    const create = frame(WATCH.requestSerialize({ create_request: { key: Buffer.from('/t/'), range_end: Buffer.from('/t0') } }));
    // The client never half-closes: only the server's deadline ends the stream.
    const r = await raw(session, WATCH.path, { headers: { 'grpc-timeout': '700m' }, chunks: [create], end: false });
    expect(r.grpcStatus).toBe(String(grpc.status.DEADLINE_EXCEEDED));
    expect(Date.now() - started).toBeGreaterThanOrEqual(650);
    expect(r.messages.map((m) => WATCH.responseDeserialize(m).created)).toEqual([true]);
    await waitMetric(plain, 'etcd_debugging_mvcc_watcher_total', 0);
    const bad = await raw(session, PUT.path, { headers: { 'grpc-timeout': '1.5S' }, chunks: [frame(PUT.requestSerialize({ key: Buffer.from('/t/x') }))] });
    expect(bad.grpcStatus).toBe(String(grpc.status.INTERNAL));
  });

  it('releases the watchers of a stream the client cancels (grpc-js cancel, raw RST_STREAM)', async () => {
    await waitMetric(plain, 'etcd_debugging_mvcc_watcher_total', 0);
    const watch = new pkg.Watch!(`127.0.0.1:${ports[0]}`, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
      Watch(): grpc.ClientDuplexStream<object, Msg>;
    };
    try {
      const stream = watch.Watch();
      stream.on('error', () => undefined);
      const created = new Promise<void>((resolve) => stream.on('data', (r: Msg) => r.created && resolve()));
      stream.write({ create_request: { key: Buffer.from('/c/a') } });
      stream.write({ create_request: { key: Buffer.from('/c/b') } });
      await created;
      await waitMetric(plain, 'etcd_debugging_mvcc_watcher_total', 2);
      expect(await metric(plain, 'etcd_debugging_mvcc_watch_stream_total')).toBe(1);
      stream.cancel();
      await waitMetric(plain, 'etcd_debugging_mvcc_watcher_total', 0);
      await waitMetric(plain, 'etcd_debugging_mvcc_watch_stream_total', 0);
    } finally {
      watch.close();
    }
    // The same with a raw stream reset by the client.
    const req = session.request({ ':method': 'POST', ':path': WATCH.path, 'content-type': 'application/grpc' });
    req.on('error', () => undefined);
    req.write(frame(WATCH.requestSerialize({ create_request: { key: Buffer.from('/c/raw') } })));
    await waitMetric(plain, 'etcd_debugging_mvcc_watcher_total', 1);
    req.close(http2.constants.NGHTTP2_CANCEL);
    await waitMetric(plain, 'etcd_debugging_mvcc_watcher_total', 0);
    // A connection dropped with watchers open releases them too.
    const s2 = http2.connect(`http://127.0.0.1:${ports[0]}`);
    s2.on('error', () => undefined);
    const r2 = s2.request({ ':method': 'POST', ':path': WATCH.path, 'content-type': 'application/grpc' });
    r2.on('error', () => undefined);
    r2.write(frame(WATCH.requestSerialize({ create_request: { key: Buffer.from('/c/drop') } })));
    await waitMetric(plain, 'etcd_debugging_mvcc_watcher_total', 1);
    s2.destroy();
    await waitMetric(plain, 'etcd_debugging_mvcc_watcher_total', 0);
  });

  it('streams a snapshot larger than the stream buffer to a client that reads slowly', async () => {
    const c = kvClient(ports[0]!, grpc.credentials.createInsecure());
    const maint = new pkg.Maintenance!(`127.0.0.1:${ports[0]}`, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
      Snapshot(req: object): grpc.ClientReadableStream<Msg>;
    };
    try {
      // Random values do not compress: the export is several MiB, several 1 MiB messages.
      for (let i = 0; i < 6; i++) await unary(c, 'Put', { key: Buffer.from(`/snap/${i}`), value: randomBytes(1024 * 1024) });
      const stream = maint.Snapshot({});
      const sizes: number[] = [];
      let remaining = -1;
      const done = new Promise<void>((resolve, reject) => {
        stream.on('data', (m: Msg) => {
          sizes.push((m.blob as Buffer).length);
          remaining = Number(m.remaining_bytes);
          // Stop reading for a while after each message: the server must wait for 'drain'.
          stream.pause();
          setTimeout(() => stream.resume(), 100);
        });
        stream.on('end', resolve);
        stream.on('error', reject);
      });
      await done;
      const total = sizes.reduce((a, b) => a + b, 0);
      expect(sizes.length).toBeGreaterThanOrEqual(6);
      expect(total).toBeGreaterThan(6 * 1024 * 1024);
      expect(total % 512).toBe(32);
      expect(remaining).toBe(0);
    } finally {
      maint.close();
      c.close();
    }
  });

  it('serves TLS; with --client-cert-auth a client without a certificate is refused', async () => {
    const ca = await readFile(join(pkiDir, 'ca.crt'));
    const cert = await readFile(join(pkiDir, 'admin.crt'));
    const key = await readFile(join(pkiDir, 'admin.key'));
    const serverOnly = kvClient(ports[1]!, tlsChannelCredentials({ ca }));
    const withCert = kvClient(ports[2]!, tlsChannelCredentials({ ca, key, cert }));
    const withoutCert = kvClient(ports[2]!, tlsChannelCredentials({ ca }));
    try {
      expect((await unary(serverOnly, 'Put', { key: Buffer.from('/tls/a'), value: Buffer.from('1') })).header.revision).toBeGreaterThan(1);
      expect((await unary(withCert, 'Put', { key: Buffer.from('/tls/b'), value: Buffer.from('1') })).header.revision).toBeGreaterThan(1);
      await expect(unary(withoutCert, 'Range', { key: Buffer.from('/tls/b') }, { deadline: Date.now() + 5000 })).rejects.toMatchObject({
        code: grpc.status.UNAVAILABLE,
      });
    } finally {
      for (const c of [serverOnly, withCert, withoutCert]) c.close();
    }
    // ALPN h2 over TLS, for a raw client too; without a certificate the mutual endpoint refuses.
    const ok = http2.connect(`https://127.0.0.1:${ports[2]}`, { ca, cert, key });
    ok.on('error', () => undefined);
    try {
      const r = await raw(ok, PUT.path, { chunks: [frame(PUT.requestSerialize({ key: Buffer.from('/tls/raw') }))] });
      expect(r.grpcStatus).toBe('0');
    } finally {
      ok.close();
    }
    const refused = http2.connect(`https://127.0.0.1:${ports[2]}`, { ca });
    const outcome = await new Promise<string>((resolve) => {
      refused.on('error', (e) => resolve(`error: ${e.message}`));
      const req = refused.request({ ':method': 'POST', ':path': PUT.path, 'content-type': 'application/grpc' });
      req.on('error', (e) => resolve(`error: ${e.message}`));
      req.on('response', () => resolve('answered'));
      req.end(frame(PUT.requestSerialize({ key: Buffer.from('/tls/none') })));
    });
    refused.destroy();
    expect(outcome).toMatch(/^error/);
  });

  it('serves every URL of --listen-client-urls and --listen-metrics-urls; the member list gives --advertise-client-urls', async () => {
    const ca = await readFile(join(pkiDir, 'ca.crt'));
    const overTls = kvClient(ports[1]!, tlsChannelCredentials({ ca }));
    const cleartext = kvClient(ports[5]!, grpc.credentials.createInsecure());
    const members = (port: number) => new pkg.Cluster!(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as ReturnType<typeof kvClient>;
    const listed = members(ports[5]!);
    const plainListed = members(ports[0]!);
    try {
      const put = await unary(overTls, 'Put', { key: Buffer.from('/urls/a'), value: Buffer.from('both') });
      const got = await unary(cleartext, 'Range', { key: Buffer.from('/urls/a') });
      expect(Buffer.from(got.kvs[0].value).toString()).toBe('both');
      expect(got.kvs[0].mod_revision).toBe(put.header.revision);
      // One member list, whichever URL it is asked on.
      expect((await unary(listed, 'MemberList', {})).members.map((m: Msg) => m.clientURLs)).toEqual([
        ['https://etcd-1.example:2379', `http://127.0.0.1:${ports[5]}`],
      ]);
      expect((await unary(plainListed, 'MemberList', {})).members.map((m: Msg) => m.clientURLs)).toEqual([[`http://127.0.0.1:${ports[0]}`]]);
    } finally {
      for (const c of [overTls, cleartext, listed, plainListed]) c.close();
    }
    for (const port of [ports[3]!, ports[6]!]) expect(await httpCall(port, '/health')).toEqual({ status: 200, body: '{"health":"true"}' });
  });

  it('does not start when one of its client URLs cannot be bound, naming the flag and the address', async () => {
    const [busyPort, freePort, securePort] = await getFreePorts(3);
    const busy = net.createServer();
    await new Promise<void>((r) => busy.listen(busyPort, '127.0.0.1', r));
    try {
      const out = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          [
            join(repoRoot(), 'dist/apps/apiserver/src/main.js'),
            '--data-dir',
            join(dir, 'busy'),
            '--pki-dir',
            pkiDir,
            '--secure-port',
            String(securePort),
            '--storage-backend',
            'builtin',
            '--listen-client-urls',
            `http://127.0.0.1:${freePort},http://127.0.0.1:${busyPort}`,
          ],
          { timeout: 60_000 },
          (e, _stdout, stderr) => resolve({ code: e ? ((e as { code?: number }).code ?? null) : 0, stderr }),
        );
      });
      expect(out.code).not.toBe(0);
      expect(out.stderr).toContain(`--listen-client-urls: cannot listen on 127.0.0.1:${busyPort}`);
    } finally {
      await new Promise<void>((r) => busy.close(() => r()));
    }
  }, 70_000);

  const httpCall = (port: number, path: string, method = 'GET'): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      const req = http.request(`http://127.0.0.1:${port}${path}`, { method, agent: false }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      req.end();
    });

  it('serves /health, /version and /metrics alone on --listen-metrics-urls (HTTP/1.1, no gRPC, no JSON gateway)', async () => {
    expect(await httpCall(ports[3]!, '/health')).toEqual({ status: 200, body: '{"health":"true"}' });
    expect(await httpCall(ports[3]!, '/version')).toEqual({ status: 200, body: '{"etcdserver":"3.4.0","etcdcluster":"3.4.0"}' });
    expect((await httpCall(ports[3]!, '/metrics')).body).toMatch(/^etcd_server_has_leader 1$/m);
    expect((await httpCall(ports[3]!, '/v3/kv/range', 'POST')).status).toBe(404);
    const kv = kvClient(ports[3]!, grpc.credentials.createInsecure());
    try {
      await expect(unary(kv, 'Range', { key: Buffer.from('/m/none') }, { deadline: Date.now() + 5000 })).rejects.toThrow();
    } finally {
      kv.close();
    }
  });

  it('serves HTTP/1.1 beside gRPC in cleartext: /health, /version, /metrics (etcdctl check datascale reads it)', async () => {
    const get = (path: string, method = 'GET') => httpCall(ports[0]!, path, method);
    expect(await get('/health')).toEqual({ status: 200, body: '{"health":"true"}' });
    expect(await get('/version')).toEqual({ status: 200, body: '{"etcdserver":"3.4.0","etcdcluster":"3.4.0"}' });
    expect((await get('/metrics')).body).toMatch(/^etcd_server_is_leader 1$/m);
    expect(await get('/health', 'POST')).toMatchObject({ status: 405 });
    expect(await get('/nothing')).toEqual({ status: 404, body: '404 page not found\n' });
    // gRPC on the same port is untouched.
    const kv = kvClient(ports[0]!, grpc.credentials.createInsecure());
    try {
      expect((await unary(kv, 'Range', { key: Buffer.from('/h1/none') })).count).toBe(0);
    } finally {
      kv.close();
    }
    if (!prerequisite('etcdctl', 'etcdctl check datascale (test/etcd.grpc-server.test.ts)')) return;
    const out = await new Promise<string>((resolve, reject) =>
      execFile(
        'etcdctl',
        ['--endpoints', `http://127.0.0.1:${ports[0]}`, 'check', 'datascale', '--load=s'],
        { env: { ...process.env, ETCDCTL_API: '3' }, timeout: 150_000 },
        (e, stdout, stderr) => (e ? reject(new Error(`${e.message}\n${stdout}\n${stderr}`)) : resolve(stdout)),
      ),
    );
    expect(out).toMatch(/PASS: Approximate system memory used : [\d.]+ MB/);
  }, 180_000);

  it("serves etcdctl's per-endpoint calls on an http:// endpoint given with its scheme (the whole URL as :authority)", async () => {
    if (!prerequisite('etcdctl', 'etcdctl endpoint status (test/etcd.grpc-server.test.ts)')) return;
    const etcdctl = (...args: string[]): Promise<string> =>
      new Promise((resolve, reject) =>
        execFile(
          'etcdctl',
          ['--endpoints', `http://127.0.0.1:${ports[0]}`, '--command-timeout=60s', ...args],
          { env: { ...process.env, ETCDCTL_API: '3' }, timeout: 70_000 },
          (e, stdout, stderr) => (e ? reject(new Error(`${e.message}\n${stdout}\n${stderr}`)) : resolve(stdout)),
        ),
      );
    // etcdctl 3.4 dials each endpoint of these commands by its URL, scheme included, and sends
    // that as :authority, which nghttp2 (node:http2) would refuse with PROTOCOL_ERROR.
    expect(await etcdctl('endpoint', 'status', '-w', 'json')).toMatch(/"leader":/);
    expect(await etcdctl('endpoint', 'hashkv')).toMatch(new RegExp(`^http://127.0.0.1:${ports[0]}, \\d+`));
    expect(await etcdctl('alarm', 'list')).toBe('');
    expect(await etcdctl('defrag')).toMatch(/Finished defragmenting etcd member/);
  }, 240_000);

  it('with --client-cert-auth on the cluster CA, serves the data only to certificates in group system:masters (gRPC and the JSON gateway)', async () => {
    const ca = await readFile(join(pkiDir, 'ca.crt'));
    // Certificates the same CA issues to Kubernetes users: a kubelet's, a user's approved through the CSR API.
    const kubelet = await issueClientCertificate(pkiDir, 'system:node:w1', ['system:nodes']);
    const alice = await issueClientCertificate(pkiDir, 'alice', ['developers', 'system:authenticated']);
    const admin = { certPem: (await readFile(join(pkiDir, 'admin.crt'))).toString(), keyPem: (await readFile(join(pkiDir, 'admin.key'))).toString() };
    const target = { url: `https://127.0.0.1:${ports[2]}`, caPem: ca.toString(), adminCertPem: admin.certPem, adminKeyPem: admin.keyPem };
    const https1 = async (who: { certPem: string; keyPem: string }, path: string, body?: string): Promise<{ status: number; body: string }> => {
      const r = await request(target, body === undefined ? 'GET' : 'POST', path, { identity: who, ...(body !== undefined ? { body } : {}) });
      return { status: r.status, body: r.body };
    };
    const range = JSON.stringify({ key: Buffer.from('/tls/b').toString('base64') });
    for (const who of [kubelet, alice]) {
      const c = kvClient(ports[2]!, tlsChannelCredentials({ ca, key: who.keyPem, cert: who.certPem }));
      try {
        await expect(unary(c, 'Range', { key: Buffer.from('/tls/b') })).rejects.toMatchObject({
          code: grpc.status.PERMISSION_DENIED,
          details: 'etcdserver: permission denied',
        });
        await expect(unary(c, 'Put', { key: Buffer.from('/tls/b'), value: Buffer.from('2') })).rejects.toMatchObject({ code: grpc.status.PERMISSION_DENIED });
      } finally {
        c.close();
      }
      expect(await https1(who, '/v3/kv/range', range)).toEqual({
        status: 403,
        body: '{"error":"etcdserver: permission denied","message":"etcdserver: permission denied","code":7}',
      });
      // Health and metrics hold no data: served to every client the TLS lets in, as etcd's.
      expect(await https1(who, '/health')).toEqual({ status: 200, body: '{"health":"true"}' });
    }
    const c = kvClient(ports[2]!, tlsChannelCredentials({ ca, key: admin.keyPem, cert: admin.certPem }));
    try {
      await unary(c, 'Put', { key: Buffer.from('/tls/b'), value: Buffer.from('admin') });
      expect((await unary(c, 'Range', { key: Buffer.from('/tls/b') })).count).toBe(1);
    } finally {
      c.close();
    }
    expect((await https1(admin, '/v3/kv/range', range)).status).toBe(200);
    // With a CA for etcd clients beside the cluster CA in --trusted-ca-file, that CA's
    // certificates are served as etcd serves them, whatever their groups; the cluster CA's still need system:masters.
    const backup = await issueClientCertificate(otherPki, 'etcd-backup');
    for (const [who, code] of [
      [backup, undefined],
      [alice, grpc.status.PERMISSION_DENIED],
    ] as const) {
      const k = kvClient(ports[4]!, tlsChannelCredentials({ ca, key: who.keyPem, cert: who.certPem }));
      try {
        const outcome = await unary(k, 'Put', { key: Buffer.from('/tls/other'), value: Buffer.from('1') }).then(
          () => undefined,
          (e: grpc.ServiceError) => e.code,
        );
        expect(outcome).toBe(code);
      } finally {
        k.close();
      }
    }
  });

  it('advertises a bound on concurrent streams per connection in its SETTINGS', async () => {
    const ok = await raw(session, PUT.path, { chunks: [frame(PUT.requestSerialize({ key: Buffer.from('/settings') }))] });
    expect(ok.grpcStatus).toBe('0');
    // Without one the client reports HTTP/2's default, unlimited (2^32 - 1).
    expect(session.remoteSettings.maxConcurrentStreams).toBe(1000);
  });

  it('ends open streams with UNAVAILABLE when the node stops, and the node exits promptly', async () => {
    const watch = new pkg.Watch!(`127.0.0.1:${ports[0]}`, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
      Watch(): grpc.ClientDuplexStream<object, Msg>;
    };
    try {
      const stream = watch.Watch();
      const ended = new Promise<grpc.ServiceError>((resolve) => stream.on('error', resolve));
      const created = new Promise<void>((resolve) => stream.on('data', (r: Msg) => r.created && resolve()));
      stream.write({ create_request: { key: Buffer.from('/stop/') } });
      await created;
      const started = Date.now();
      const exit = await plain.stop('SIGTERM', 20_000);
      expect(exit?.signal).toBeNull();
      expect(Date.now() - started).toBeLessThan(10_000);
      expect((await ended).code).toBe(grpc.status.UNAVAILABLE);
    } finally {
      watch.close();
    }
  });
});

describe('what one connection may make the etcd endpoint gRPC server hold', () => {
  /** A small bound on held request bytes, so a few streams cross it. */
  const LIMIT = 100 * 1024;
  let server: GrpcH2Server;
  let port: number;

  beforeAll(async () => {
    const put = (call: UnaryCall): void => call.respond({ header: { revision: 7 } });
    server = new GrpcH2Server(def, { 'etcdserverpb.KV': { Put: put } }, { maxHeldRequestBytes: LIMIT, maxConcurrentStreams: 50 });
    port = await server.listen({ host: '127.0.0.1', port: 0 });
  });

  afterAll(async () => {
    await server?.stop();
  });

  const putOf = (valueBytes: number): Buffer => frame(PUT.requestSerialize({ key: Buffer.from('/held'), value: Buffer.alloc(valueBytes, 'v') }));

  it('advertises its maxConcurrentStreams', async () => {
    const s = http2.connect(`http://127.0.0.1:${port}`);
    s.on('error', () => undefined);
    try {
      expect((await raw(s, PUT.path, { chunks: [putOf(10)] })).grpcStatus).toBe('0');
      expect(s.remoteSettings.maxConcurrentStreams).toBe(50);
    } finally {
      s.close();
    }
  });

  it('fails the call whose unfinished request crosses the bound, and releases what calls held when they end', async () => {
    const s = http2.connect(`http://127.0.0.1:${port}`);
    s.on('error', () => undefined);
    try {
      // 40 KiB of a message announced as 64 KiB: held by the server until the stream ends.
      const part = frame(Buffer.alloc(64 * 1024)).subarray(0, 40 * 1024);
      const halfSent = async (): Promise<{ req: http2.ClientHttp2Stream; result: Promise<RawResult>; ended: () => boolean }> => {
        let req!: http2.ClientHttp2Stream;
        let written!: () => void;
        const out = new Promise<void>((resolve) => (written = resolve));
        let ended = false;
        const result = raw(s, PUT.path, { chunks: [part], end: false, opened: (r) => (req = r), written });
        void result.then(() => (ended = true));
        await Promise.race([out, result]);
        return { req, result, ended: () => ended };
      };
      const first = await halfSent();
      const second = await halfSent();
      // 120 KiB would be held: the third call is refused, the first two go on.
      const third = await (await halfSent()).result;
      expect(third).toMatchObject({ grpcStatus: String(grpc.status.RESOURCE_EXHAUSTED), trailersOnly: true });
      expect(third.grpcMessage).toMatch(/the connection holds too many bytes of unfinished requests/);
      expect(first.ended()).toBe(false);
      expect(second.ended()).toBe(false);
      // The third call's bytes were released: 80 KiB + 15 KiB fit, 80 KiB + 30 KiB do not.
      expect((await raw(s, PUT.path, { chunks: [putOf(15 * 1024)] })).grpcStatus).toBe('0');
      expect((await raw(s, PUT.path, { chunks: [putOf(30 * 1024)] })).grpcStatus).toBe(String(grpc.status.RESOURCE_EXHAUSTED));
      // The client resets the first two; a small call after them is read after their resets.
      await nextTurn();
      first.req.close(http2.constants.NGHTTP2_CANCEL);
      second.req.close(http2.constants.NGHTTP2_CANCEL);
      await Promise.all([first.result, second.result]);
      expect((await raw(s, PUT.path, { chunks: [putOf(10)] })).grpcStatus).toBe('0');
      // Nothing is held any more, and a call that completes releases what it held: 95 KiB twice.
      for (let i = 0; i < 2; i++) {
        const r = await raw(s, PUT.path, { chunks: [putOf(95 * 1024)] });
        expect(r.grpcStatus).toBe('0');
        expect(Number(PUT.responseDeserialize(r.messages[0]!).header.revision)).toBe(7);
      }
    } finally {
      s.close();
    }
  }, 30_000);
});

describe('what all connections together may make the etcd endpoint gRPC server hold', () => {
  it('fails the call that would take the server past its bound though its own connection is under its own, until others release', async () => {
    const put = (call: UnaryCall): void => call.respond({ header: { revision: 9 } });
    const server = new GrpcH2Server(def, { 'etcdserverpb.KV': { Put: put } }, { maxHeldRequestBytes: 100 * 1024, maxServerHeldRequestBytes: 150 * 1024 });
    const port = await server.listen({ host: '127.0.0.1', port: 0 });
    const sessions = [0, 1, 2].map(() => {
      const s = http2.connect(`http://127.0.0.1:${port}`);
      s.on('error', () => undefined);
      return s;
    });
    try {
      // 60 KiB of a message announced as 64 KiB, held until the stream ends.
      const part = frame(Buffer.alloc(64 * 1024)).subarray(0, 60 * 1024);
      const halfSent = async (s: http2.ClientHttp2Session): Promise<{ req: http2.ClientHttp2Stream; result: Promise<RawResult> }> => {
        let req!: http2.ClientHttp2Stream;
        let written!: () => void;
        const out = new Promise<void>((resolve) => (written = resolve));
        const result = raw(s, PUT.path, { chunks: [part], end: false, opened: (r) => (req = r), written });
        await Promise.race([out, result]);
        return { req, result };
      };
      const a = await halfSent(sessions[0]!);
      const b = await halfSent(sessions[1]!);
      // 180 KiB in all would be held, 60 KiB on the third connection: refused by the server's bound.
      const c = await (await halfSent(sessions[2]!)).result;
      expect(c).toMatchObject({ grpcStatus: String(grpc.status.RESOURCE_EXHAUSTED), trailersOnly: true });
      expect(c.grpcMessage).toMatch(/the server holds too many bytes of unfinished requests \(at most 153600 across its connections\)/);
      // A small whole call on that connection still fits (120 + 20 KiB).
      expect(
        (await raw(sessions[2]!, PUT.path, { chunks: [frame(PUT.requestSerialize({ key: Buffer.from('/s'), value: Buffer.alloc(20 * 1024) }))] })).grpcStatus,
      ).toBe('0');
      // Once the first two are reset, the third connection may hold as much as its own bound.
      a.req.close(http2.constants.NGHTTP2_CANCEL);
      b.req.close(http2.constants.NGHTTP2_CANCEL);
      await Promise.all([a.result, b.result]);
      const big = await raw(sessions[2]!, PUT.path, { chunks: [frame(PUT.requestSerialize({ key: Buffer.from('/s'), value: Buffer.alloc(95 * 1024) }))] });
      expect(big.grpcStatus).toBe('0');
      expect(Number(PUT.responseDeserialize(big.messages[0]!).header.revision)).toBe(9);
    } finally {
      for (const s of sessions) s.close();
      await server.stop();
    }
  }, 30_000);
});
