/**
 * Raft benchmark: 3 separate node processes (dist/test/support/raft-node.js) on loopback with
 * real gRPC between them and LevelDB with fsync on. Measures committed (applied) proposals per
 * second and p50/p99 commit latency for 1 KiB proposals at 1 and 64 concurrent proposers, sent
 * to the leader over raft-node's small binary put protocol (8 connections). If an `etcd` binary is installed (Debian
 * etcd-server), runs 3 etcd members on loopback and measures 1 KiB Puts over gRPC the same way
 * in the same run, and prints the ratios. Each system also runs as a single member (c=64), and
 * the share of that throughput the three members keep is printed for both.
 * Run after `npm run build`: node dist/bench/raft.bench.js [--seconds 5]
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { getFreePort } from '../test/support/net.helper.js';

const SECONDS = Number(process.argv[process.argv.indexOf('--seconds') + 1] || 5) || 5;
const VALUE = 'x'.repeat(1024);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Result {
  opsPerSec: number;
  p50: number;
  p99: number;
}

/** Runs `workers` closed-loop proposers for SECONDS; latencies in ms. */
async function measure(workers: number, op: (i: number) => Promise<void>): Promise<Result> {
  const lat: number[] = [];
  const end = Date.now() + SECONDS * 1000;
  let seq = 0;
  const t0 = Date.now();
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (Date.now() < end) {
        const s = process.hrtime.bigint();
        await op(seq++);
        lat.push(Number(process.hrtime.bigint() - s) / 1e6);
      }
    }),
  );
  const secs = (Date.now() - t0) / 1000;
  lat.sort((a, b) => a - b);
  const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] ?? NaN;
  return { opsPerSec: lat.length / secs, p50: q(0.5), p99: q(0.99) };
}

function fmt(name: string, r: Result): string {
  return `${name.padEnd(28)} ${r.opsPerSec.toFixed(0).padStart(8)} ops/s   p50 ${r.p50.toFixed(2).padStart(7)} ms   p99 ${r.p99.toFixed(2).padStart(7)} ms`;
}

async function waitReady(child: ChildProcess, marker: string, ms = 20000): Promise<void> {
  await new Promise<void>((res, rej) => {
    const t = setTimeout(() => rej(new Error(`process did not print ${marker}`)), ms);
    const on = (d: Buffer) => {
      if (d.toString().includes(marker)) {
        clearTimeout(t);
        res();
      }
    };
    child.stdout?.on('data', on);
    child.stderr?.on('data', on);
    child.on('exit', (c) => rej(new Error(`exited ${c}`)));
  });
}

/** Client of raft-node's binary put protocol (see test/support/raft-node.ts). */
class KvClient {
  private next = 1;
  private readonly waiting = new Map<number, { resolve(): void; reject(e: Error): void }>();
  private buf: Buffer = Buffer.alloc(0);
  private constructor(private readonly sock: Socket) {
    sock.setNoDelay(true);
    sock.on('data', (d: Buffer) => {
      this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
      while (this.buf.length >= 17) {
        const id = this.buf.readUInt32BE(4);
        const ok = this.buf[8] === 1;
        this.buf = this.buf.subarray(17);
        const w = this.waiting.get(id);
        this.waiting.delete(id);
        if (w && ok) w.resolve();
        else if (w) w.reject(new Error('put failed'));
      }
    });
  }
  static connect(port: number): Promise<KvClient> {
    return new Promise((res, rej) => {
      const s = connect(port, '127.0.0.1', () => res(new KvClient(s)));
      s.once('error', rej);
    });
  }
  put(key: string, value: string): Promise<void> {
    const id = this.next++;
    const k = Buffer.from(key);
    const v = Buffer.from(value);
    const f = Buffer.alloc(4 + 4 + 2 + k.length + v.length);
    f.writeUInt32BE(f.length - 4, 0);
    f.writeUInt32BE(id, 4);
    f.writeUInt16BE(k.length, 8);
    k.copy(f, 10);
    v.copy(f, 10 + k.length);
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.sock.write(f);
    });
  }
  close(): void {
    this.sock.destroy();
  }
}

/** kapi's Raft with `members` raft-node processes (1: a group of one, which commits alone). */
async function benchKapi(dir: string, members: number): Promise<Result[]> {
  const ids = Array.from({ length: members }, (_, i) => i + 1);
  const http = await Promise.all(ids.map(() => getFreePort()));
  const peerPorts = await Promise.all(ids.map(() => getFreePort()));
  const kvPorts = await Promise.all(ids.map(() => getFreePort()));
  const peers = ids.map((id, i) => `${id}=127.0.0.1:${peerPorts[i]}`).join(',');
  const script = resolve('dist/test/support/raft-node.js');
  const children = ids.map((id, i) =>
    spawn(
      process.execPath,
      [
        script,
        '--id',
        String(id),
        '--data-dir',
        join(dir, `kapi${members}-${id}`),
        '--peers',
        peers,
        '--http-port',
        String(http[i]),
        '--kv-port',
        String(kvPorts[i]),
        '--tick-ms',
        '100',
      ],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    ),
  );
  try {
    await Promise.all(children.map((c) => waitReady(c, 'READY')));
    let leaderPort = 0;
    for (let i = 0; i < 200 && !leaderPort; i++) {
      for (const p of http) {
        const r = await fetch(`http://127.0.0.1:${p}/status`);
        const s = (await r.json()) as { role: string };
        if (s.role === 'leader') leaderPort = p;
      }
      if (!leaderPort) await sleep(100);
    }
    if (!leaderPort) throw new Error('no leader');
    const clients = await Promise.all(Array.from({ length: 8 }, () => KvClient.connect(kvPorts[http.indexOf(leaderPort)]!)));
    const put = (i: number) => clients[i % clients.length]!.put(`key${i % 10000}`, VALUE);
    await measure(8, put); // warm-up
    const out = [await measure(1, put), await measure(64, put)];
    for (const c of clients) c.close();
    return out;
  } finally {
    for (const c of children) c.kill('SIGKILL');
  }
}

const ETCD_PROTO = `syntax = "proto3";
package etcdserverpb;
message ResponseHeader { uint64 cluster_id = 1; uint64 member_id = 2; int64 revision = 3; uint64 raft_term = 4; }
message PutRequest { bytes key = 1; bytes value = 2; int64 lease = 3; bool prev_kv = 4; bool ignore_value = 5; bool ignore_lease = 6; }
message PutResponse { ResponseHeader header = 1; }
service KV { rpc Put(PutRequest) returns (PutResponse) {} }
message StatusRequest {}
message StatusResponse { ResponseHeader header = 1; string version = 2; int64 dbSize = 3; uint64 leader = 4; }
service Maintenance { rpc Status(StatusRequest) returns (StatusResponse) {} }
`;

/** The etcd binary on PATH (Debian etcd-server), or undefined. */
function etcdBinary(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v etcd'], { encoding: 'utf8' });
  return (found.stdout ?? '').trim() || undefined;
}

/** etcd with `members` members on loopback. */
async function benchEtcd(dir: string, bin: string, members: number): Promise<Result[]> {
  const names = Array.from({ length: members }, (_, i) => `e${members}-${i + 1}`);
  const peer = await Promise.all(names.map(() => getFreePort()));
  const client = await Promise.all(names.map(() => getFreePort()));
  const cluster = names.map((n, i) => `${n}=http://127.0.0.1:${peer[i]}`).join(',');
  const children = names.map((n, i) =>
    spawn(
      bin,
      [
        '--name',
        n,
        '--data-dir',
        join(dir, n),
        '--listen-peer-urls',
        `http://127.0.0.1:${peer[i]}`,
        '--initial-advertise-peer-urls',
        `http://127.0.0.1:${peer[i]}`,
        '--listen-client-urls',
        `http://127.0.0.1:${client[i]}`,
        '--advertise-client-urls',
        `http://127.0.0.1:${client[i]}`,
        '--initial-cluster',
        cluster,
        '--initial-cluster-state',
        'new',
        '--initial-cluster-token',
        'bench',
        '--log-level',
        'error',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ETCD_UNSUPPORTED_ARCH: process.arch === 'arm64' ? 'arm64' : '' } },
    ),
  );
  try {
    const protoFile = join(dir, 'etcd-kv.proto');
    writeFileSync(protoFile, ETCD_PROTO);
    const def = grpc.loadPackageDefinition(protoLoader.loadSync(protoFile, { longs: Number })) as unknown as {
      etcdserverpb: { KV: grpc.ServiceClientConstructor; Maintenance: grpc.ServiceClientConstructor };
    };
    const clients = client.map(
      (p) =>
        new def.etcdserverpb.KV(`127.0.0.1:${p}`, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
          Put(req: { key: Buffer; value: Buffer }, cb: (e: grpc.ServiceError | null) => void): void;
        },
    );
    const value = Buffer.from(VALUE);
    // etcd forwards proposals to its leader internally; wait until a Put succeeds.
    const put1 = (c: (typeof clients)[number], i: number) =>
      new Promise<void>((res, rej) => c.Put({ key: Buffer.from(`key${i % 10000}`), value }, (e) => (e ? rej(e) : res())));
    for (let i = 0; ; i++) {
      try {
        await put1(clients[0]!, 0);
        break;
      } catch (e) {
        if (i > 200) throw e;
        await sleep(100);
      }
    }
    // Send to the leader, like the kapi side: a follower would forward every Put to it.
    const leader = await etcdLeader(def.etcdserverpb.Maintenance, client);
    const put = (i: number) => put1(clients[leader]!, i);
    await measure(8, put);
    const out = [await measure(1, put), await measure(64, put)];
    for (const c of clients) c.close();
    return out;
  } finally {
    for (const c of children) c.kill('SIGKILL');
  }
}

/** Index of the member that leads, from each member's Maintenance.Status (leader vs own member id). */
async function etcdLeader(ctor: grpc.ServiceClientConstructor, ports: readonly number[]): Promise<number> {
  type StatusClient = grpc.Client & {
    Status(req: object, cb: (e: grpc.ServiceError | null, r?: { header: { memberId: number }; leader: number }) => void): void;
  };
  for (let attempt = 0; attempt < 100; attempt++) {
    for (const [i, port] of ports.entries()) {
      const c = new ctor(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as StatusClient;
      const r = await new Promise<{ header: { memberId: number }; leader: number } | undefined>((res) => c.Status({}, (e, out) => res(e ? undefined : out)));
      c.close();
      if (r && r.leader !== 0 && r.header.memberId === r.leader) return i;
    }
    await sleep(100);
  }
  throw new Error('no etcd leader');
}

const pctOf = (a: Result, b: Result): string => `${((100 * a.opsPerSec) / b.opsPerSec).toFixed(1)}%`;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'raft-bench-'));
  try {
    console.log(`1 KiB proposals, ${SECONDS}s per run, 3 member processes (and 1) on loopback, fsync on`);
    // Each system also runs as a group of one: what a second and third member cost on these
    // cores, for ours and for the reference (context for the API cluster's target, which is a
    // share of the single node's throughput; docs/performance.md).
    const k1 = await benchKapi(dir, 1);
    const k = await benchKapi(dir, 3);
    console.log(fmt('kapi raft  c=1', k[0]!));
    console.log(fmt('kapi raft  c=64', k[1]!));
    console.log(fmt('kapi raft  c=64 1 member', k1[1]!));
    const bin = etcdBinary();
    if (!bin) {
      console.log(`3 members / 1 member throughput c=64: kapi raft ${pctOf(k[1]!, k1[1]!)}`);
      console.log('etcd not installed (apt-get install etcd-server): no comparison');
      return;
    }
    const e1 = await benchEtcd(dir, bin, 1);
    const e = await benchEtcd(dir, bin, 3);
    console.log(fmt('etcd       c=1', e[0]!));
    console.log(fmt('etcd       c=64', e[1]!));
    console.log(fmt('etcd       c=64 1 member', e1[1]!));
    console.log(`3 members / 1 member throughput c=64: kapi raft ${pctOf(k[1]!, k1[1]!)}, etcd ${pctOf(e[1]!, e1[1]!)}`);
    console.log(`ratio kapi/etcd throughput c=64: ${(k[1]!.opsPerSec / e[1]!.opsPerSec).toFixed(2)} (target >= 1)`);
    console.log(`ratio kapi/etcd p50 latency c=1: ${(k[0]!.p50 / e[0]!.p50).toFixed(2)} (target <= 1.5)`);
    console.log(`ratio kapi/etcd throughput c=1: ${(k[0]!.opsPerSec / e[0]!.opsPerSec).toFixed(2)}, p99 c=64: ${(k[1]!.p99 / e[1]!.p99).toFixed(2)}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
