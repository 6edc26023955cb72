/**
 * etcd benchmark (`npm run bench:etcd`): our three-node store against etcd 3.4 (/usr/bin/etcd,
 * three members on loopback started here), through the same clients, in one run, one table:
 *
 * - `etcdctl check perf --load=s|m|l` (etcdctl's own write benchmark: 60 s each, PASS/FAIL);
 * - 1 KiB Puts at 1, 64 and 256 concurrent requests (a grpc-js client over proto/etcd, sent to
 *   the leader, as clients of either system end up doing);
 * - linearizable and serializable single-key Ranges at 64 concurrent requests, spread over the
 *   three members.
 *
 * Each Put load point also reports the members' CPU time per Put (user + system, every thread,
 * from /proc): when the cores are the limit, as on a small machine running clients and all
 * three members, throughput follows it; and the client's own CPU time per Put (this process),
 * which the machine pays too and which depends on how a server frames its answers. The gRPC
 * server our members serve the API with (libs/grpc, on its own HTTP/2), answering Put at once
 * with no storage, is measured with the same client as the floor of what a member spends per
 * client request.
 *
 * Both systems serve clients plain HTTP/2 on loopback (no TLS on the client side), and their
 * members talk to each other over mutual TLS (our nodes always do; etcd is given the same peer
 * certificates), with fsync on. Targets
 * (exit code 1 when one is missed): Put throughput >= 1.2x etcd's at c=64 and c=256, our p50 at
 * c=1 <= 1.2x etcd's, and `check perf --load=m` passes on ours.
 *
 * Both clusters run side by side for the whole benchmark, loaded one at a time: each load point
 * is measured on one, then at once on the other, in `--rounds` rounds whose order alternates
 * (ours first in odd rounds, etcd first in even ones), so a drift of the machine during the run
 * falls on both alike. Each figure is the median over the rounds, and the Put ratios of every
 * round are printed too: single runs of either system swing by a fifth on a small machine.
 *
 * Flags: --seconds N (per load point and round, default 10), --rounds N (default 3), --loads
 * s,m,l (check perf loads, run once each after the rounds; "" skips), --warm-passes N (Puts of
 * every key of the Put loads before the rounds, default 2; 0 skips them), --against FILE (in
 * place of etcd, three of our nodes run from another build's server entry, such as
 * `<worktree>/dist/apps/apiserver/src/main.js`: the same table compares two builds; the targets
 * are not checked then), --points (the load points to measure, of put1, put64, put256,
 * range-lin, range-ser; all by default: a target whose point is left out counts as missed).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { createPki } from '@app/pki';
import { findProtoFile } from '@app/raft';
import { getFreePorts, repoRoot, startServer, type ServerHandle } from '../test/support/server.js';
import { isEntryPoint } from '../cluster/entry-point.js';

const { values: flags } = parseArgs({
  options: {
    seconds: { type: 'string' },
    rounds: { type: 'string' },
    loads: { type: 'string' },
    'warm-passes': { type: 'string' },
    against: { type: 'string' },
    points: { type: 'string' },
  },
  strict: false,
});
const SECONDS = Number(flags.seconds ?? 10) || 10;
const ROUNDS = Math.max(1, Math.floor(Number(flags.rounds ?? 3)) || 3);
const LOADS = String(flags.loads ?? 's,m,l')
  .split(',')
  .filter((l) => l !== '');
const WARM_PASSES = Math.max(0, Math.floor(Number(flags['warm-passes'] ?? 2)) || 0);
const AGAINST = typeof flags.against === 'string' && flags.against !== '' ? flags.against : undefined;
/** The name of the system compared with ours in the table. */
const OTHER = AGAINST ? 'base' : 'etcd';
const VALUE = Buffer.alloc(1024, 'x');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Result {
  opsPerSec: number;
  p50: number;
  p99: number;
  errors: number;
  /** CPU time of all members (user + system, every thread) per operation, in microseconds. */
  cpuUsPerOp: number;
  /** CPU time of the benchmark's own process (the client) per operation, in microseconds. */
  clientUsPerOp: number;
}

interface Perf {
  throughput: number;
  slowest: number;
  pass: boolean;
  /** Members' CPU time per write while the load ran, in microseconds (NaN if not measured). */
  cpuUsPerWrite: number;
}

interface System {
  name: string;
  endpoints: string[];
  leader: number;
  /** The members' process ids (for their CPU time). */
  pids: number[];
  stop(): Promise<void>;
}

type KvClient = grpc.Client & {
  Put(req: object, cb: (e: grpc.ServiceError | null) => void): void;
  Range(req: object, cb: (e: grpc.ServiceError | null) => void): void;
};
type StatusClient = grpc.Client & {
  Status(req: object, cb: (e: grpc.ServiceError | null, r?: { header: { member_id: number }; leader: number }) => void): void;
};

function loadEtcd(): { KV: grpc.ServiceClientConstructor; Maintenance: grpc.ServiceClientConstructor } {
  const rpc = findProtoFile('etcd/rpc.proto');
  const def = protoLoader.loadSync(rpc, { keepCase: true, longs: Number, defaults: true, includeDirs: [dirname(rpc)] });
  return (grpc.loadPackageDefinition(def) as unknown as { etcdserverpb: { KV: grpc.ServiceClientConstructor; Maintenance: grpc.ServiceClientConstructor } })
    .etcdserverpb;
}

/** CPU seconds (user + system, all threads) the processes used so far; 0 for one that is gone. */
function cpuSeconds(pids: readonly number[]): number {
  const tick = 100; // USER_HZ on Linux
  let total = 0;
  for (const pid of pids) {
    try {
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      total += (Number(f[11]) + Number(f[12])) / tick;
    } catch {
      // not running
    }
  }
  return total;
}

/** The keys the Put loads overwrite in turn (`/bench/0` ...). */
const PUT_KEYS = 10_000;

/**
 * Puts every key of the Put loads WARM_PASSES times (default twice), 64 at a time, whatever
 * the time it takes: after it each system holds every key and has overwritten it, so that the
 * first measured round finds the same state as the later ones (a key created and never written
 * again is not in our store's cache of current versions, docs/performance.md).
 */
async function warmKeys(put: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < WARM_PASSES * PUT_KEYS) await put(next++);
    }),
  );
}

/** Closed-loop workers for SECONDS against `sys`; latencies in ms. */
async function measure(sys: System, workers: number, op: (i: number) => Promise<void>): Promise<Result> {
  const cpu0 = cpuSeconds(sys.pids);
  const client0 = process.cpuUsage();
  const lat: number[] = [];
  let errors = 0;
  const end = Date.now() + SECONDS * 1000;
  let seq = 0;
  const t0 = Date.now();
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (Date.now() < end) {
        const s = process.hrtime.bigint();
        try {
          await op(seq++);
          lat.push(Number(process.hrtime.bigint() - s) / 1e6);
        } catch {
          errors++;
        }
      }
    }),
  );
  const secs = (Date.now() - t0) / 1000;
  lat.sort((a, b) => a - b);
  const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] ?? NaN;
  const cpuUsPerOp = lat.length > 0 ? ((cpuSeconds(sys.pids) - cpu0) * 1e6) / lat.length : NaN;
  const client = process.cpuUsage(client0);
  const clientUsPerOp = lat.length > 0 ? (client.user + client.system) / lat.length : NaN;
  return { opsPerSec: lat.length / secs, p50: q(0.5), p99: q(0.99), errors, cpuUsPerOp, clientUsPerOp };
}

async function leaderOf(endpoints: string[]): Promise<number> {
  const { Maintenance } = loadEtcd();
  for (let attempt = 0; attempt < 200; attempt++) {
    for (const [i, ep] of endpoints.entries()) {
      const c = new Maintenance(ep.replace(/^https?:\/\//, ''), grpc.credentials.createInsecure()) as unknown as StatusClient;
      const r = await new Promise<{ header: { member_id: number }; leader: number } | undefined>((res) => c.Status({}, (e, out) => res(e ? undefined : out)));
      c.close();
      if (r && r.leader !== 0 && r.header.member_id === r.leader) return i;
    }
    await sleep(100);
  }
  throw new Error(`no leader among ${endpoints.join(',')}`);
}

async function startOurs(dir: string, entry?: string): Promise<System> {
  await createPki({ outDir: join(dir, 'pki'), hosts: ['127.0.0.1'] });
  const ports = await getFreePorts(6);
  const names = ['n1', 'n2', 'n3'];
  const endpoints = names.map((_, i) => `http://127.0.0.1:${ports[3 + i]}`);
  const initial = names.map((n, i) => `${n}=127.0.0.1:${ports[i]}`).join(',');
  const nodes: ServerHandle[] = await Promise.all(
    names.map((n, i) =>
      startServer({
        ...(entry ? { entry } : {}),
        dataDir: join(dir, n),
        readyTimeoutMs: 60_000,
        args: [
          '--name',
          n,
          '--pki-dir',
          join(dir, 'pki'),
          '--listen-peer-port',
          String(ports[i]),
          '--initial-cluster',
          initial,
          '--listen-client-urls',
          endpoints[i]!,
        ],
      }),
    ),
  );
  return {
    name: entry ? OTHER : 'kapi',
    endpoints,
    pids: nodes.map((n) => n.pid).filter((p): p is number => p !== undefined),
    leader: await leaderOf(endpoints),
    stop: async () => void (await Promise.all(nodes.map((n) => n.cleanup()))),
  };
}

async function startEtcd(dir: string, bin: string): Promise<System> {
  // Peers over mutual TLS, as ours: a certificate for 127.0.0.1 usable as server and client.
  const pki = join(dir, 'pki');
  await createPki({ outDir: pki, hosts: ['127.0.0.1'] });
  const ports = await getFreePorts(6);
  const names = ['e1', 'e2', 'e3'];
  const endpoints = names.map((_, i) => `http://127.0.0.1:${ports[3 + i]}`);
  const cluster = names.map((n, i) => `${n}=https://127.0.0.1:${ports[i]}`).join(',');
  const children: ChildProcess[] = names.map((n, i) =>
    spawn(
      bin,
      [
        '--name', n, '--data-dir', join(dir, n),
        '--listen-peer-urls', `https://127.0.0.1:${ports[i]}`, '--initial-advertise-peer-urls', `https://127.0.0.1:${ports[i]}`,
        '--peer-cert-file', join(pki, 'peer.crt'), '--peer-key-file', join(pki, 'peer.key'),
        '--peer-trusted-ca-file', join(pki, 'ca.crt'), '--peer-client-cert-auth',
        '--listen-client-urls', endpoints[i]!, '--advertise-client-urls', endpoints[i]!,
        '--initial-cluster', cluster, '--initial-cluster-state', 'new', '--initial-cluster-token', 'bench', '--log-level', 'error',
      ], // prettier-ignore
      { stdio: ['ignore', 'ignore', 'ignore'] },
    ),
  );
  return {
    name: 'etcd',
    endpoints,
    pids: children.map((c) => c.pid).filter((p): p is number => p !== undefined),
    leader: await leaderOf(endpoints),
    stop: async () => {
      for (const c of children) c.kill('SIGKILL');
    },
  };
}

/**
 * The floor of our members' client side: one process serving etcd's KV.Put on the gRPC server
 * the members use (GrpcH2Server on our own HTTP/2), answering at once (no storage, no replication).
 * Its CPU per Put bounds from below what a member spends per client request.
 */
async function startFloor(): Promise<System> {
  const [port] = await getFreePorts(1);
  const rpc = findProtoFile('etcd/rpc.proto');
  const server = join(repoRoot(), 'dist', 'libs', 'grpc', 'src', 'grpc.h2-server.js');
  const code = `
    import loader from '@grpc/proto-loader';
    import { GrpcH2Server } from ${JSON.stringify(server)};
    const def = loader.loadSync(${JSON.stringify(rpc)}, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true, includeDirs: [${JSON.stringify(dirname(rpc))}] });
    const header = { cluster_id: '1', member_id: '1', revision: '1', raft_term: '1' };
    const s = new GrpcH2Server(def, { 'etcdserverpb.KV': { Put: (call) => call.respond({ header }) } });
    await s.listen({ host: '127.0.0.1', port: ${port} });`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], { cwd: repoRoot(), stdio: ['ignore', 'ignore', 'inherit'] });
  const endpoint = `http://127.0.0.1:${port}`;
  const { KV } = loadEtcd();
  const c = new KV(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as KvClient;
  await new Promise<void>((res, rej) => c.waitForReady(Date.now() + 20_000, (e) => (e ? rej(e) : res())));
  c.close();
  return {
    name: 'gRPC server floor',
    endpoints: [endpoint],
    pids: child.pid === undefined ? [] : [child.pid],
    leader: 0,
    stop: async () => void child.kill('SIGKILL'),
  };
}

/** The load of one figure: Puts at a concurrency, or single-key Ranges at 64. */
type Load = { kind: 'put'; workers: number } | { kind: 'range'; serializable: boolean };

/** Every load point, by the name `--points` selects it with. */
const ALL_POINTS: readonly (readonly [string, Load])[] = [
  ['put1', { kind: 'put', workers: 1 }],
  ['put64', { kind: 'put', workers: 64 }],
  ['put256', { kind: 'put', workers: 256 }],
  ['range-lin', { kind: 'range', serializable: false }],
  ['range-ser', { kind: 'range', serializable: true }],
];
const POINT_NAMES =
  flags.points === undefined
    ? ALL_POINTS.map(([n]) => n)
    : String(flags.points)
        .split(',')
        .filter((p) => p !== '');
for (const p of POINT_NAMES) {
  if (!ALL_POINTS.some(([n]) => n === p)) throw new Error(`--points: unknown load point ${p} (${ALL_POINTS.map(([n]) => n).join(', ')})`);
}
/** The load points this run measures, in the table's order. */
const LOAD_POINTS = ALL_POINTS.filter(([n]) => POINT_NAMES.includes(n));

/** gRPC clients of one system: Puts go to its leader, Ranges to every member. */
interface Clients {
  run(load: Load): Promise<Result>;
  /** warmKeys through these clients. */
  warm(): Promise<void>;
  close(): void;
}

function clientsOf(sys: System): Clients {
  const { KV } = loadEtcd();
  // Several channels per member: one HTTP/2 connection would serialize on one socket.
  const channels = (ep: string, n: number): KvClient[] =>
    Array.from(
      { length: n },
      (_, i) => new KV(ep.replace(/^https?:\/\//, ''), grpc.credentials.createInsecure(), { 'grpc.channel_id': i }) as unknown as KvClient,
    );
  const leader = channels(sys.endpoints[sys.leader]!, 8);
  const all = sys.endpoints.flatMap((ep) => channels(ep, 4));
  const put = (i: number) =>
    new Promise<void>((res, rej) => leader[i % leader.length]!.Put({ key: Buffer.from(`/bench/${i % PUT_KEYS}`), value: VALUE }, (e) => (e ? rej(e) : res())));
  const range = (serializable: boolean) => (i: number) =>
    new Promise<void>((res, rej) => all[i % all.length]!.Range({ key: Buffer.from(`/bench/${i % 1000}`), serializable }, (e) => (e ? rej(e) : res())));
  return {
    run: (load) => (load.kind === 'put' ? measure(sys, load.workers, put) : measure(sys, 64, range(load.serializable))),
    warm: () => warmKeys(put),
    close: () => {
      for (const c of [...leader, ...all]) c.close();
    },
  };
}

/** The median of each figure over rounds (errors summed). */
function medianResult(rs: readonly Result[]): Result {
  const med = (f: (r: Result) => number): number => {
    const v = rs.map(f).sort((a, b) => a - b);
    return v.length % 2 === 1 ? v[(v.length - 1) / 2]! : (v[v.length / 2 - 1]! + v[v.length / 2]!) / 2;
  };
  return {
    opsPerSec: med((r) => r.opsPerSec),
    p50: med((r) => r.p50),
    p99: med((r) => r.p99),
    cpuUsPerOp: med((r) => r.cpuUsPerOp),
    clientUsPerOp: med((r) => r.clientUsPerOp),
    errors: rs.reduce((n, r) => n + r.errors, 0),
  };
}

/**
 * Runs `etcdctl check perf --load=<load>` against `sys`. Besides etcdctl's verdict it reads the
 * members' CPU time while the load runs (from etcdctl's progress bar appearing to its last step,
 * "60 / 60"; not the client start-up nor the DeleteRange that ends the check) and divides it by
 * the writes of that span (throughput x span), as the Put loads do. etcdctl paces its writes with
 * a rate limiter that saves no tokens (burst 1): a generator that wakes late loses the write, so
 * on a machine whose cores the members keep busy the throughput falls short of the load's rate
 * even when every write is answered quickly (docs/performance.md); the CPU per write says how
 * much of the machine each system left to it.
 */
async function checkPerf(sys: System, load: string): Promise<Perf> {
  const env = { ...process.env, ETCDCTL_API: '3' };
  const child = spawn('etcdctl', ['--endpoints', sys.endpoints.join(','), 'check', 'perf', `--load=${load}`], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let start: { cpu: number; at: number } | undefined;
  let end: { cpu: number; at: number } | undefined;
  const reading = () => ({ cpu: cpuSeconds(sys.pids), at: Date.now() });
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (d: string) => {
    out += d;
    start ??= reading();
    if (!end && /(?:^|\D)60 \/ 60\b/.test(out.slice(-d.length - 16))) end = reading();
  });
  child.stderr.on('data', (d: string) => (err += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 240_000);
  const status = await new Promise<number | null>((resolve) => {
    child.on('error', () => resolve(null));
    child.on('close', (code) => resolve(code));
  });
  clearTimeout(timer);
  // "PASS: Throughput is N writes/s" or "FAIL: Throughput too low: N writes/s" (likewise the slowest).
  const text = `${out}${err}`;
  const tp = /Throughput (?:is|too low:) ([\d.]+) writes\/s/.exec(text);
  const slow = /Slowest request took (?:too long: )?([\d.]+)s/.exec(text);
  spawnSync('etcdctl', ['--endpoints', sys.endpoints.join(','), 'del', '--prefix', '/etcdctl-check-perf/'], { env });
  const throughput = tp ? Number(tp[1]) : 0;
  const writes = start && end ? (throughput * (end.at - start.at)) / 1000 : 0;
  return {
    throughput,
    slowest: slow ? Number(slow[1]) : NaN,
    pass: status === 0 && /^PASS$/m.test(out),
    cpuUsPerWrite: start && end && writes > 0 ? ((end.cpu - start.cpu) * 1e6) / writes : NaN,
  };
}

const f0 = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : '-');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '-');

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'etcd-bench-'));
  const bin = AGAINST ? '' : spawnSync('sh', ['-c', 'command -v etcd'], { encoding: 'utf8' }).stdout.trim();
  if (!AGAINST && !bin) throw new Error('etcd is not installed (apt-get install etcd-server)');
  try {
    const ours = await startOurs(join(dir, 'kapi'));
    const stops: (() => Promise<void>)[] = [() => ours.stop()];
    let results: { a: Result[]; b: Result[] }[];
    const perfA = new Map<string, Perf>();
    const perfB = new Map<string, Perf>();
    try {
      const etcd = AGAINST ? await startOurs(join(dir, 'base'), AGAINST) : await startEtcd(join(dir, 'etcd'), bin);
      stops.push(() => etcd.stop());
      const ca = clientsOf(ours);
      const cb = clientsOf(etcd);
      try {
        // Warm-up: connections, the keys of the load, the JIT.
        await ca.run({ kind: 'put', workers: 16 });
        await cb.run({ kind: 'put', workers: 16 });
        await ca.warm();
        await cb.warm();
        results = LOAD_POINTS.map(() => ({ a: [], b: [] }));
        for (let round = 0; round < ROUNDS; round++) {
          for (const [i, [, load]] of LOAD_POINTS.entries()) {
            if (round % 2 === 0) {
              results[i]!.a.push(await ca.run(load));
              results[i]!.b.push(await cb.run(load));
            } else {
              results[i]!.b.push(await cb.run(load));
              results[i]!.a.push(await ca.run(load));
            }
          }
        }
      } finally {
        ca.close();
        cb.close();
      }
      for (const l of LOADS) {
        perfA.set(l, await checkPerf(ours, l));
        perfB.set(l, await checkPerf(etcd, l));
      }
    } finally {
      for (const stop of stops) await stop();
    }
    const floorSys = await startFloor();
    const fc = clientsOf(floorSys);
    const floor = await fc
      .run({ kind: 'put', workers: 16 })
      .then(() => fc.run({ kind: 'put', workers: 64 }))
      .finally(() => {
        fc.close();
        return floorSys.stop();
      });
    /** The medians of a load point, undefined when this run did not measure it. */
    const point = (name: string): { a: Result; b: Result; rounds: { a: Result[]; b: Result[] } } | undefined => {
      const i = LOAD_POINTS.findIndex(([n]) => n === name);
      return i < 0 ? undefined : { a: medianResult(results[i]!.a), b: medianResult(results[i]!.b), rounds: results[i]! };
    };
    const rows: [string, string, string, string][] = [];
    const puts = [
      ['put c=1', 'put1'],
      ['put c=64', 'put64'],
      ['put c=256', 'put256'],
    ] as const;
    for (const [label, name] of puts) {
      const p = point(name);
      if (!p) continue;
      const { a: r, b: e } = p;
      rows.push([`${label} ops/s`, f0(r.opsPerSec), f0(e.opsPerSec), f2(r.opsPerSec / e.opsPerSec)]);
      rows.push([`${label} p50 ms`, f2(r.p50), f2(e.p50), f2(r.p50 / e.p50)]);
      rows.push([`${label} p99 ms`, f2(r.p99), f2(e.p99), f2(r.p99 / e.p99)]);
      rows.push([`${label} CPU us/op`, f0(r.cpuUsPerOp), f0(e.cpuUsPerOp), f2(r.cpuUsPerOp / e.cpuUsPerOp)]);
      rows.push([`${label} client CPU us/op`, f0(r.clientUsPerOp), f0(e.clientUsPerOp), f2(r.clientUsPerOp / e.clientUsPerOp)]);
    }
    rows.push(['gRPC server floor: put c=64 CPU us/op', f0(floor.cpuUsPerOp), '', '']);
    for (const [label, name] of [
      ['range linearizable c=64 ops/s', 'range-lin'],
      ['range serializable c=64 ops/s', 'range-ser'],
    ] as const) {
      const p = point(name);
      if (p) rows.push([label, f0(p.a.opsPerSec), f0(p.b.opsPerSec), f2(p.a.opsPerSec / p.b.opsPerSec)]);
    }
    for (const l of LOADS) {
      const x = perfA.get(l)!;
      const y = perfB.get(l)!;
      rows.push([
        `check perf --load=${l}`,
        `${x.pass ? 'PASS' : 'FAIL'} ${f0(x.throughput)}/s ${f2(x.slowest)}s`,
        `${y.pass ? 'PASS' : 'FAIL'} ${f0(y.throughput)}/s ${f2(y.slowest)}s`,
        f2(x.throughput / y.throughput),
      ]);
      rows.push([`check perf --load=${l} CPU us/write`, f0(x.cpuUsPerWrite), f0(y.cpuUsPerWrite), f2(x.cpuUsPerWrite / y.cpuUsPerWrite)]);
    }
    const errors = LOAD_POINTS.reduce((n, _, i) => n + results[i]!.a.reduce((m, r) => m + r.errors, 0), 0);
    console.log(
      `etcd v3 API: kapi (3 nodes) vs ${AGAINST ? `base (3 nodes of ${AGAINST})` : 'etcd 3.4 (3 members)'}, loopback, clients on plain HTTP/2, peers on mutual TLS, fsync on, ${SECONDS}s per load point, medians of ${ROUNDS} alternating rounds`,
    );
    console.log(`${'figure'.padEnd(32)} ${'kapi'.padStart(22)} ${OTHER.padStart(22)} ${`kapi/${OTHER}`.padStart(10)}`);
    for (const [n, x, y, r] of rows) console.log(`${n.padEnd(32)} ${x.padStart(22)} ${y.padStart(22)} ${r.padStart(10)}`);
    // The paired ratio of each round: how far the medians' ratio can be trusted.
    for (const [label, name] of puts) {
      const p = point(name);
      if (!p) continue;
      const { a: ra, b: rb } = p.rounds;
      const ratios = ra.map((r, k) => (name === 'put1' ? r.p50 / rb[k]!.p50 : r.opsPerSec / rb[k]!.opsPerSec));
      console.log(`${label} kapi/${OTHER} ${name === 'put1' ? 'p50' : 'ops/s'} by round: ${ratios.map(f2).join(' ')}`);
    }
    const misses: string[] = [];
    if (AGAINST) {
      // Two builds of ours: figures only.
      if (errors > 0) console.log(`${errors} request errors on kapi`);
      process.exitCode = errors > 0 ? 1 : 0;
      return;
    }
    const [c1, c64, c256] = [point('put1'), point('put64'), point('put256')];
    if (!c64 || c64.a.opsPerSec < 1.2 * c64.b.opsPerSec) misses.push(c64 ? 'put c=64 < 1.2x etcd' : 'put c=64 not measured');
    if (!c256 || c256.a.opsPerSec < 1.2 * c256.b.opsPerSec) misses.push(c256 ? 'put c=256 < 1.2x etcd' : 'put c=256 not measured');
    if (!c1 || c1.a.p50 > 1.2 * c1.b.p50) misses.push(c1 ? 'p50 c=1 > 1.2x etcd' : 'put c=1 not measured');
    if (!perfA.has('m')) misses.push('check perf --load=m not run');
    else if (!perfA.get('m')!.pass) misses.push('check perf --load=m fails');
    if (errors > 0) misses.push(`${errors} request errors on kapi`);
    console.log(misses.length === 0 ? 'targets met' : `targets missed: ${misses.join('; ')}`);
    process.exitCode = misses.length === 0 ? 0 : 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (isEntryPoint(import.meta.url)) {
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(2);
  });
}
