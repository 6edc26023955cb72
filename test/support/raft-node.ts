/**
 * One Raft node as a process, for the real-process tests and the benchmark: a trivial
 * key-value state machine over @app/raft with LevelDB storage and gRPC transport, controlled
 * over a tiny HTTP API on loopback:
 *   GET  /status               -> RaftNode.status() as JSON
 *   POST /put?k=K  body=value  -> propose; {index, term, rev}
 *   GET  /get?k=K              -> linearizable read (ReadIndex); {value, index}
 *   POST /transfer?to=N        -> leadership transfer request
 * Usage: node raft-node.js --id 1 --data-dir D --peers 1=127.0.0.1:7001,2=...,3=...
 *        --http-port 8001 [--snapshot-entries 100] [--keep-entries 10] [--no-fsync]
 *        [--pki-dir P]  peer traffic is mutual TLS with P's peer.crt/peer.key/ca.crt (libs/pki);
 *                       without it the transport is plaintext (explicitly: tests and benchmark only)
 *        [--kv-port P]  a binary put protocol for the benchmark (lighter than HTTP):
 *          request  [u32 len][u32 id][u16 keyLen][key][value]   (len counts what follows it)
 *          response [u32 len][u32 id][u8 ok][f64 index]
 * Prints "READY <http-port>" on stdout once listening.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';
import {
  GrpcTransport,
  LevelDbRaftStorage,
  RaftError,
  RaftNode,
  type AppliedEntry,
  type StateMachine,
  type StateMachineSnapshot,
  type PeerTls,
} from '@app/raft';
import { loadPki } from '@app/pki';

function arg(name: string, def?: string): string {
  const i = process.argv.indexOf(`--${name}`);
  if (i >= 0 && i + 1 < process.argv.length) return process.argv[i + 1]!;
  if (def !== undefined) return def;
  console.error(`missing --${name}`);
  process.exit(2);
}

/** Volatile KV map; rebuilt from the Raft snapshot plus log on restart. */
class KvMachine implements StateMachine {
  map = new Map<string, string>();
  index = 0;
  rev = 0;
  async apply(e: AppliedEntry): Promise<unknown> {
    const s = new TextDecoder().decode(e.data);
    const eq = s.indexOf('\u0000');
    this.map.set(s.slice(0, eq), s.slice(eq + 1));
    this.index = e.index;
    return ++this.rev;
  }
  appliedIndex(): number {
    return this.index;
  }
  async snapshot(): Promise<StateMachineSnapshot> {
    return { index: this.index, term: 0, data: new TextEncoder().encode(JSON.stringify({ m: [...this.map], r: this.rev })) };
  }
  async restore(s: StateMachineSnapshot): Promise<void> {
    const o = s.data.length > 0 ? (JSON.parse(new TextDecoder().decode(s.data)) as { m: [string, string][]; r: number }) : { m: [], r: 0 };
    this.map = new Map(o.m);
    this.rev = o.r;
    this.index = s.index;
  }
}

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function reply(res: ServerResponse, code: number, obj: unknown): void {
  const s = JSON.stringify(obj);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(s) });
  res.end(s);
}

/** Binary put protocol for the benchmark: frames in, one response frame per put. */
function serveKv(sock: Socket, node: RaftNode): void {
  sock.setNoDelay(true);
  let buf: Buffer = Buffer.alloc(0);
  sock.on('data', (d: Buffer) => {
    buf = buf.length === 0 ? d : Buffer.concat([buf, d]);
    while (buf.length >= 4) {
      const len = buf.readUInt32BE(0);
      if (buf.length < 4 + len) break;
      const frame = buf.subarray(4, 4 + len);
      buf = buf.subarray(4 + len);
      const id = frame.readUInt32BE(0);
      const kl = frame.readUInt16BE(4);
      const key = frame.subarray(6, 6 + kl);
      const value = frame.subarray(6 + kl);
      const data = new Uint8Array(kl + 1 + value.length);
      data.set(key, 0);
      data[kl] = 0;
      data.set(value, kl + 1);
      const out = Buffer.alloc(17);
      out.writeUInt32BE(13, 0);
      out.writeUInt32BE(id, 4);
      node.propose(data).then(
        (r) => {
          out[8] = 1;
          out.writeDoubleBE(r.index, 9);
          sock.write(out);
        },
        () => {
          out[8] = 0;
          sock.write(out);
        },
      );
    }
  });
  sock.on('error', () => undefined);
}

async function main(): Promise<void> {
  const id = Number(arg('id'));
  const peers = new Map<number, string>();
  for (const p of arg('peers').split(',')) {
    const [k, v] = p.split('=');
    peers.set(Number(k), v!);
  }
  const storage = await LevelDbRaftStorage.open(arg('data-dir'), { sync: !process.argv.includes('--no-fsync') });
  const sm = new KvMachine();
  const node = await RaftNode.create({
    id,
    storage,
    stateMachine: sm,
    bootstrapVoters: [...peers.keys()],
    tickMs: Number(arg('tick-ms', '50')),
    electionTick: 10,
    heartbeatTick: 1,
    snapshotEntries: Number(arg('snapshot-entries', '10000')),
    keepEntries: Number(arg('keep-entries', '1000')),
  });
  const pkiIdx = process.argv.indexOf('--pki-dir');
  let tls: PeerTls | undefined;
  if (pkiIdx >= 0) {
    const m = await loadPki(arg('pki-dir'));
    tls = { ca: m.caPem, cert: m.peerCertPem, key: m.peerKeyPem };
  }
  const transport = new GrpcTransport(
    { id, listen: peers.get(id)!, peers, ...(tls ? { tls } : { insecure: true }) },
    {
      onMessage: (m) => node.step(m),
      onUnreachable: (p) => node.reportUnreachable(p),
      onConnectionLost: (p) => node.reportConnectionLost(p),
      onUndelivered: (_p, msgs) => node.reportUndelivered(msgs),
      onSnapshotStatus: (p, f) => node.reportSnapshot(p, f),
    },
  );
  node.setTransport(transport);
  await transport.start();
  node.start();

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    void (async () => {
      try {
        if (url.pathname === '/status')
          return reply(res, 200, { ...node.status(), snapshotIndex: storage.snapshot().metadata.index, firstIndex: storage.firstIndex() });
        if (url.pathname === '/put' && req.method === 'POST') {
          const k = url.searchParams.get('k') ?? '';
          const v = await body(req);
          const r = await node.propose(new TextEncoder().encode(`${k}\u0000${v}`));
          return reply(res, 200, { index: r.index, term: r.term, rev: r.result });
        }
        if (url.pathname === '/get') {
          const index = await node.readIndex();
          return reply(res, 200, { value: sm.map.get(url.searchParams.get('k') ?? '') ?? null, index });
        }
        if (url.pathname === '/transfer' && req.method === 'POST') {
          node.transferLeadership(Number(url.searchParams.get('to')));
          return reply(res, 200, {});
        }
        reply(res, 404, { error: 'not found' });
      } catch (e) {
        reply(res, e instanceof RaftError ? 503 : 500, { error: String(e), code: e instanceof RaftError ? e.code : undefined });
      }
    })();
  });
  const kvPort = Number(arg('kv-port', '0'));
  if (kvPort > 0) createTcpServer((sock) => serveKv(sock, node)).listen(kvPort, '127.0.0.1');
  const httpPort = Number(arg('http-port'));
  server.listen(httpPort, '127.0.0.1', () => process.stdout.write(`READY ${httpPort}\n`));
  const shutdown = async () => {
    server.close();
    await node.stop();
    await transport.stop();
    await storage.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown());
  process.on('SIGINT', () => void shutdown());
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
