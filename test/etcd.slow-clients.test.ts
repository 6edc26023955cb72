/**
 * The etcd endpoint's streaming calls against clients that read slowly or not at all, on a real
 * node over gRPC (grpc-js). Watch: what a stream holds stays bounded (a watcher over its stream's
 * bound catches up from the history instead of buffering), the history is replayed a window at a
 * time, and the client still gets every event once, in order, or a cancel with compact_revision
 * when the history it needs was compacted meanwhile. The node runs with small bounds (a 64 KiB
 * stream buffer, windows of 7 revisions, 20 held events) so that a few hundred writes cross
 * them. LeaseKeepAlive: a client that sends keep-alives without reading the answers is held back
 * by flow control instead of having them all queued on the node.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import * as http2 from 'node:http2';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { findProtoFile } from '@app/raft';
import { closeHttpClients, delay, getFreePorts, request, startServer, type ServerHandle } from './support/server.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Msg = Record<string, any>;

const rpc = findProtoFile('etcd/rpc.proto');
const def = protoLoader.loadSync(rpc, { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true, includeDirs: [dirname(rpc)] });
const pkg = (grpc.loadPackageDefinition(def) as unknown as { etcdserverpb: Record<string, grpc.ServiceClientConstructor> }).etcdserverpb;

type KvClient = grpc.Client & Record<string, (req: object, cb: (e: grpc.ServiceError | null, v: Msg) => void) => void>;
type WatchClient = grpc.Client & { Watch(): grpc.ClientDuplexStream<Msg, Msg> };

describe('etcd streaming calls: slow clients', () => {
  let dir: string;
  let node: ServerHandle;
  let port: number;
  let kv: KvClient;
  let watch: WatchClient;

  const call = (name: string, req: object): Promise<Msg> => new Promise((resolve, reject) => kv[name]!.call(kv, req, (e, v) => (e ? reject(e) : resolve(v))));
  const slowWatchers = async (): Promise<number> => {
    const r = await request(node, 'GET', '/metrics');
    const m = /^etcd_debugging_mvcc_slow_watcher_total (\d+)$/m.exec(r.body);
    if (!m) throw new Error('no etcd_debugging_mvcc_slow_watcher_total in /metrics');
    return Number(m[1]);
  };
  const waitSlow = async (want: number): Promise<void> => {
    let got = -1;
    for (let i = 0; i < 200; i++) {
      got = await slowWatchers();
      if (got === want) return;
      await delay(50);
    }
    throw new Error(`etcd_debugging_mvcc_slow_watcher_total stayed ${got}, expected ${want}`);
  };
  /** Puts `n` keys under `prefix` with 4 KiB values, 20 at a time; their revisions in order. */
  const putMany = async (prefix: string, n: number): Promise<{ key: string; revision: number }[]> => {
    const value = Buffer.alloc(4096, 'w');
    const out: { key: string; revision: number }[] = [];
    for (let i = 0; i < n; i += 20) {
      const keys = Array.from({ length: Math.min(20, n - i) }, (_, j) => `${prefix}${String(i + j).padStart(4, '0')}`);
      const rs = await Promise.all(keys.map((key) => call('Put', { key: Buffer.from(key), value })));
      keys.forEach((key, j) => out.push({ key, revision: Number(rs[j]!.header.revision) }));
    }
    return out.sort((a, b) => a.revision - b.revision);
  };
  /** A watch stream that records its responses; resolves `until` when `done` says so. */
  const open = (create: Msg) => {
    const stream = watch.Watch();
    const responses: Msg[] = [];
    stream.on('error', () => undefined);
    let check: (() => void) | undefined;
    stream.on('data', (r: Msg) => {
      responses.push(r);
      check?.();
    });
    stream.write({ create_request: create });
    const until = (done: (rs: Msg[]) => boolean, ms = 30_000): Promise<void> =>
      new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`watch: condition not met in ${ms} ms (${responses.length} responses)`)), ms);
        check = () => {
          if (!done(responses)) return;
          clearTimeout(t);
          check = undefined;
          resolve();
        };
        check();
      });
    return { stream, responses, until };
  };
  /**
   * A live watcher of `prefix` whose client stops reading, then 300 Puts of 4 KiB under it: far
   * more than the stream's 64 KiB and HTTP/2's windows, and more than the 20 new events a
   * catching-up watcher holds, so some are read from the history. Resolves once the node counts
   * the watcher as slow; the client is still paused.
   */
  const stalled = async (prefix: string) => {
    const w = open({ key: Buffer.from(prefix), range_end: Buffer.from(prefix.slice(0, -1) + '0') });
    await w.until((rs) => rs.some((r) => r.created));
    w.stream.pause();
    const puts = await putMany(prefix, 300);
    await waitSlow(1);
    return { ...w, puts };
  };
  const eventsOf = (rs: Msg[]): { key: string; revision: number; size: number }[] =>
    rs.flatMap((r) =>
      ((r.events as Msg[] | undefined) ?? []).map((e) => ({
        key: (e.kv.key as Buffer).toString(),
        revision: Number(e.kv.mod_revision),
        size: (e.kv.value as Buffer).length,
      })),
    );

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kapi-etcd-slow-watch-'));
    [port] = (await getFreePorts(1)) as [number];
    node = await startServer({
      args: ['--storage-backend', 'builtin', '--listen-client-urls', `http://127.0.0.1:${port}`],
      // Catch-up windows end at 7 revisions or 20,000 bytes of values (five values of 4 KiB,
      // fewer with their previous values), whichever comes first.
      env: {
        KAPI_ETCD_WATCH_BUFFER_BYTES: '65536',
        KAPI_ETCD_WATCH_WINDOW_REVISIONS: '7',
        KAPI_ETCD_WATCH_WINDOW_BYTES: '20000',
        KAPI_ETCD_WATCH_HELD_EVENTS: '20',
      },
      readyTimeoutMs: 40_000,
    });
    kv = new pkg.KV!(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as KvClient;
    watch = new pkg.Watch!(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as WatchClient;
  }, 60_000);

  afterAll(async () => {
    kv?.close();
    watch?.close();
    await node?.cleanup();
    await closeHttpClients();
    await rm(dir, { recursive: true, force: true });
  });

  it('replays a history of many windows from an old revision: every event once, in order, several revisions per response', async () => {
    const puts = await putMany('/window/', 100);
    const w = open({ key: Buffer.from('/window/'), range_end: Buffer.from('/window0'), start_revision: puts[0]!.revision, prev_kv: true });
    await w.until((rs) => eventsOf(rs).length >= 100);
    const got = eventsOf(w.responses);
    expect(got.map((e) => [e.key, e.revision])).toEqual(puts.map((p) => [p.key, p.revision]));
    // A replay response carries events of several revisions, with the revision read in its header.
    const replayed = w.responses.filter((r) => (r.events as Msg[]).length > 0);
    expect(replayed.length).toBeLessThan(100);
    for (const r of replayed) expect(Number(r.header.revision)).toBeGreaterThanOrEqual(Math.max(...eventsOf([r]).map((e) => e.revision)));
    await waitSlow(0);
    w.stream.cancel();
  });

  it('a client that stops reading: its watcher stops buffering, then catches up from the history and loses or repeats nothing', async () => {
    const w = await stalled('/slow/');
    const { puts } = w;
    w.stream.resume();
    await w.until((rs) => eventsOf(rs).some((e) => e.revision === puts.at(-1)!.revision));
    const got = eventsOf(w.responses);
    expect(got.map((e) => [e.key, e.revision])).toEqual(puts.map((p) => [p.key, p.revision]));
    expect(got.every((e) => e.size === 4096)).toBe(true);
    await waitSlow(0);
    // Live again: the next write arrives alone, one revision per response.
    const [next] = await putMany('/slow/next-', 1);
    await w.until((rs) => eventsOf(rs).some((e) => e.revision === next!.revision));
    const last = w.responses.at(-1)!;
    expect(eventsOf([last]).map((e) => e.revision)).toEqual([next!.revision]);
    expect(Number(last.header.revision)).toBe(next!.revision);
    // Not from inside the read that resolved the wait: node:http2 can abort on a stream closed there.
    await new Promise((resolve) => setImmediate(resolve));
    w.stream.cancel();
  });

  it('a slow watcher whose history is compacted meanwhile is canceled with compact_revision', async () => {
    const w = await stalled('/gone/');
    const { puts } = w;
    const compactAt = puts.at(-1)!.revision;
    await call('Compact', { revision: compactAt, physical: true });
    w.stream.resume();
    await w.until((rs) => rs.some((r) => r.canceled));
    const cancel = w.responses.find((r) => r.canceled)!;
    expect(Number(cancel.compact_revision)).toBe(compactAt);
    // What came before the cancel is a gapless start of the writes.
    const got = eventsOf(w.responses);
    expect(got.length).toBeLessThan(puts.length);
    expect(got.map((e) => e.revision)).toEqual(puts.slice(0, got.length).map((p) => p.revision));
    await waitSlow(0);
    w.stream.cancel();
  });
  it('LeaseKeepAlive: a client that sends without reading the answers is held back; once it reads, it goes on', async () => {
    const leases = new pkg.Lease!(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as KvClient;
    const { ID } = await new Promise<Msg>((resolve, reject) => leases.LeaseGrant!.call(leases, { TTL: 600 }, (e, v) => (e ? reject(e) : resolve(v))));
    leases.close();
    // Requests of about 1 KiB (the ID and an unknown field, which decoding skips), by hand over
    // raw HTTP/2: 30 writes of 200 requests, 6 MB in all, far more than the 1 MiB window the node
    // grants a stream. The client does not read, so the node's answers stop at the client's
    // window after a few thousand keep-alives, and the node must then stop reading requests
    // rather than queue them all.
    const id = BigInt(ID);
    const varint = (v: bigint): number[] => {
      const out: number[] = [];
      for (; v >= 0x80n; v >>= 7n) out.push(Number(v & 0x7fn) | 0x80);
      return [...out, Number(v)];
    };
    const body = Buffer.from([0x08, ...varint(id), 0x7a, ...varint(1000n), ...Buffer.alloc(1000, 1)]);
    const head = Buffer.alloc(5);
    head.writeUInt32BE(body.length, 1);
    const one = Buffer.concat([head, body]);
    const chunk = Buffer.concat(Array.from({ length: 200 }, () => one));
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', () => undefined);
    const req = session.request({ ':method': 'POST', ':path': '/etcdserverpb.Lease/LeaseKeepAlive', 'content-type': 'application/grpc', te: 'trailers' });
    req.on('error', () => undefined);
    req.pause();
    try {
      const chunks = 30;
      let sent = 0;
      for (let i = 0; i < chunks; i++) req.write(chunk, () => sent++);
      let before = -1;
      for (let i = 0; i < 40 && sent !== before; i++) {
        before = sent;
        await delay(1000);
      }
      expect(sent).toBe(before);
      expect(sent).toBeLessThan(chunks);
      // Reading again: the answers come, and the node reads on.
      let answered = 0;
      req.on('data', (d: Buffer) => (answered += d.length));
      req.resume();
      const stalledAt = sent;
      for (let i = 0; i < 600 && sent === stalledAt; i++) await delay(100);
      expect(sent).toBeGreaterThan(stalledAt);
      expect(answered).toBeGreaterThan(0);
    } finally {
      req.close();
      session.close();
    }
  }, 120_000);
});
