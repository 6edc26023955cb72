/**
 * Cluster benchmark (`node dist/bench/cluster.bench.js`, for `npm run bench:cluster`):
 * creates/s and gets/s through the balancer and direct to nodes, with the same
 * figures for a single node in the same run; target: the 3-node cluster keeps >= 60% of the
 * single node's create throughput).
 *
 * Systems: a single node (the e2e harness, as bench/api.bench.ts), and a three-node cluster from
 * cluster/launcher.ts on free ports, measured through haproxy (when installed) and direct to the
 * nodes (the load split evenly over n1..n3, each node reading back the objects it created).
 * All are up at once and measured in interleaved rounds, one phase at a time so they never
 * compete for the CPU; ratios are taken within a round and their median reported (runBench).
 * Gets through the balancer read objects created through the balancer, so they may land on
 * another node than the one that took the write: with a replicated store that is the point (any
 * node answers); with independent nodes they fail, and the errors column shows it.
 *
 * After the rounds, failover: --kills N times (default 10; 0 skips), kill -9 of the leader, then
 * the time until a create through one of the other nodes is acknowledged; the launcher starts
 * the killed node again, and the next kill waits until every node is ready. Median and maximum
 * are printed (target: median <= 1 s).
 *
 * Flags: --seconds N (env BENCH_SECONDS, default 5), --warm-up-seconds N (env
 * BENCH_WARMUP_SECONDS, default 6), --concurrency N (env BENCH_CONCURRENCY, default 64),
 * --rounds N (env BENCH_ROUNDS, default 5), --kills N, --json-out FILE. Exit code 0 when every phase ran without errors, else 1
 * (the target is reported, not enforced).
 */
import { promises as fs, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { type BenchClient, LeanPool } from './lean.client.js';
import { type ClusterTopology, type RunningCluster, clusterTopology, launchCluster } from '../cluster/launcher.js';
import { loadPki } from '@app/pki';
import { type ServerHandle, getFreePorts, repoRoot, startServer } from '../test/support/server.js';
import { type BenchRequest, type PhaseResult, formatTable, rssMiB, runPhase } from './api.bench.js';
import { isEntryPoint } from '../cluster/entry-point.js';
import { metricValue } from '../test/support/http.helper.js';
import { positive } from './flags.js';

/** Share of the single node's create throughput the cluster is expected to keep. */
export const CLUSTER_CREATE_TARGET = 0.6;

interface Tls {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

const CM_PATH = '/api/v1/namespaces/default/configmaps';

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

function body(name: string): string {
  const data: Record<string, string> = {};
  for (let k = 0; k < 10; k++) data[`key-${k}`] = `value-${k}-${name.slice(-8)}`;
  return JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data });
}

/** The load client (bench/lean.client.ts): it shares the cores with the systems it measures. */
function pool(url: string, tls: Tls, connections: number): BenchClient {
  return new LeanPool(url, { connections, tls });
}

/** One system under test: its label and a pool per target (one, or one per node). */
interface System {
  readonly label: string;
  readonly targets: readonly BenchClient[];
  /** Names each target created (gets read them back on the same target). */
  readonly created: string[][];
  /** Resident set size (MiB) to report with its phases: the process, or the nodes' mean. */
  readonly rss: () => number | undefined;
  /** The processes that serve it (nodes, the balancer), whose CPU time a phase accounts for. */
  readonly processes: readonly { readonly label: string; readonly pid: number | undefined }[];
}

let runSeq = 0;

/** The host's CPU time counters, summed over its CPUs (/proc/stat, in clock ticks). */
export interface HostCpu {
  readonly total: number;
  /** idle + iowait */
  readonly idle: number;
  /** Time the hypervisor ran something else while this machine's CPUs wanted to run. */
  readonly steal: number;
}

/** Reads the aggregate `cpu` line of /proc/stat (or of `text`); undefined where there is none. */
export function readHostCpu(text?: string): HostCpu | undefined {
  let t = text;
  if (t === undefined) {
    try {
      t = readFileSync('/proc/stat', 'utf8');
    } catch {
      return undefined;
    }
  }
  const line = t.split('\n').find((l) => l.startsWith('cpu '));
  if (!line) return undefined;
  // user nice system idle iowait irq softirq steal [guest guest_nice: already counted in user]
  const v = line
    .trim()
    .split(/\s+/)
    .slice(1, 9)
    .map((x) => Number(x) || 0);
  return { total: v.reduce((a, b) => a + b, 0), idle: (v[3] ?? 0) + (v[4] ?? 0), steal: v[7] ?? 0 };
}

/** Shares of the host's CPU time between two readings that were idle and stolen. */
export function hostShares(before: HostCpu | undefined, after: HostCpu | undefined): { idle: number; steal: number } | undefined {
  if (!before || !after || after.total <= before.total) return undefined;
  const d = after.total - before.total;
  return { idle: (after.idle - before.idle) / d, steal: (after.steal - before.steal) / d };
}

/**
 * CPU time (user + system, all threads, in ms) of process `pid` from /proc/<pid>/stat (or from
 * `text`, its content); undefined where there is none. `ticksPerSecond` is the kernel's USER_HZ.
 */
export function readProcessCpuMs(pid: number | undefined, text?: string, ticksPerSecond = 100): number | undefined {
  let t = text;
  if (t === undefined) {
    if (pid === undefined) return undefined;
    try {
      t = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      return undefined;
    }
  }
  // The command name (field 2) is parenthesized and may contain spaces: count from after it.
  const fields = t
    .slice(t.lastIndexOf(')') + 2)
    .trim()
    .split(/\s+/);
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return undefined;
  return ((utime + stime) * 1000) / ticksPerSecond;
}

/**
 * CPU per request (µs) of each process between two readings of its CPU time (ms); a process
 * without both readings is left out. The load generator is one of them (label 'generator').
 */
export function cpuPerRequest(
  before: ReadonlyMap<string, number | undefined>,
  after: ReadonlyMap<string, number | undefined>,
  requests: number,
): Record<string, number> {
  const out: Record<string, number> = {};
  if (requests <= 0) return out;
  for (const [label, a] of after) {
    const b = before.get(label);
    if (a !== undefined && b !== undefined) out[label] = ((a - b) * 1000) / requests;
  }
  return out;
}

/** CPU time (ms) of the load generator, this process. */
function generatorCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

function readCpu(sys: System): Map<string, number | undefined> {
  const m = new Map<string, number | undefined>(sys.processes.map((p) => [p.label, readProcessCpuMs(p.pid)]));
  m.set('generator', generatorCpuMs());
  return m;
}

/**
 * A measured phase with the host's idle and stolen shares of CPU time while it ran, and the CPU
 * per request of every process involved (µs; see cpuPerRequest).
 */
type ClusterPhaseResult = PhaseResult & { host?: { idle: number; steal: number }; cpuUs?: Record<string, number> };

const pct = (x: number): string => `${(x * 100).toFixed(0)}%`;

/**
 * One measured phase against a system: `kind` 'creates' posts new ConfigMaps (names unique per
 * phase and target: runPhase numbers requests from 0 in every phase), 'gets' reads back the
 * objects each target created. The parts of a system with several targets run at once, each
 * with an even share of `concurrency`; req/s is summed, p50/p99 are the worst of the parts (a
 * conservative merge).
 */
async function phase(sys: System, kind: 'creates' | 'gets', seconds: number, concurrency: number): Promise<ClusterPhaseResult> {
  const run = `${sys.label.replace(/[^a-z0-9]/g, '')}-${Date.now().toString(36)}-${runSeq++}`;
  const per = Math.max(1, Math.floor(concurrency / sys.targets.length));
  const cpu0 = readHostCpu();
  const proc0 = readCpu(sys);
  const parts = await Promise.all(
    sys.targets.map((p, i) => {
      if (kind === 'creates') {
        const next = (seq: number): BenchRequest => {
          const name = `cb-${run}-${i}-${seq}`;
          return { method: 'POST', path: CM_PATH, body: body(name), tag: name };
        };
        return runPhase('c', p, seconds, per, next, [201], (r) => sys.created[i]!.push(r.tag!));
      }
      const names = sys.created[i]!;
      if (names.length === 0) throw new Error(`${sys.label}: no ConfigMap was created`);
      return runPhase('g', p, seconds, per, (seq) => ({ method: 'GET', path: `${CM_PATH}/${names[seq % names.length]}` }), [200]);
    }),
  );
  const host = hostShares(cpu0, readHostCpu());
  const requests = parts.reduce((a, p) => a + p.requests, 0);
  const cpuUs = cpuPerRequest(proc0, readCpu(sys), requests);
  const rss = sys.rss();
  return {
    name: `${sys.label}: ${kind}`,
    seconds: Math.max(...parts.map((p) => p.seconds)),
    requests,
    errors: parts.reduce((a, p) => a + p.errors, 0),
    perSecond: parts.reduce((a, p) => a + p.perSecond, 0),
    p50Ms: Math.max(...parts.map((p) => p.p50Ms)),
    p99Ms: Math.max(...parts.map((p) => p.p99Ms)),
    ...(rss !== undefined ? { rssMiB: rss } : {}),
    sampleErrors: parts.flatMap((p) => p.sampleErrors).slice(0, 3),
    ...(host !== undefined ? { host } : {}),
    ...(Object.keys(cpuUs).length > 0 ? { cpuUs } : {}),
  };
}

/** Median of a non-empty list (the lower middle for an even count, so it is a measured value). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)]!;
}

/**
 * The order of the systems in round `r`: rotated every round, so that no system is always
 * measured first (right after the others' load) or always last.
 */
export function roundOrder<T>(systems: readonly T[], r: number): T[] {
  const k = r % systems.length;
  return [...systems.slice(k), ...systems.slice(0, k)];
}

interface Options {
  readonly seconds: number;
  /** Steady-state warm-up of each system before its measured phases (see runBench). */
  readonly warmUpSeconds: number;
  readonly concurrency: number;
  /** Measured rounds; every round measures every system once per kind. */
  readonly rounds: number;
  /** kill -9 of the leader in the failover phase (0: none). */
  readonly kills: number;
  readonly jsonOut?: string;
}

/**
 * The single node and the cluster run side by side (an idle system costs only its timers) and
 * are measured in interleaved rounds: in each round, creates on every system one after the
 * other (order rotated per round), then gets the same way. A ratio is taken within each round
 * (phases a few seconds apart) and the median over the rounds is reported. On a shared host
 * whose speed drifts by ±15% over minutes, measuring one system completely and then the other
 * turned drift into a ratio that moved from one run to the next; interleaving cancels it.
 *
 * Each system is warmed up first (creates then gets for --warm-up-seconds each): a new process
 * runs interpreted code and an empty store for its first seconds. V8 optimizes on background
 * threads: the single node does that on the core its main thread leaves idle, the three nodes
 * of the cluster on the cores they all share, so a short warm-up measured the cluster while it
 * was still compiling (a sixth of a node's CPU in its first 8 s under load, nothing after 16 s).
 */
async function runBench(o: Options): Promise<number> {
  const rows: ClusterPhaseResult[] = [];
  const rounds: ClusterPhaseResult[][] = [];
  const pools: BenchClient[] = [];
  let failure: string | undefined;
  let single: ServerHandle | undefined;
  let cluster: RunningCluster | undefined;
  let leader: string | undefined;
  const failovers: number[] = [];
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'kapi-cluster-bench-'));
  log(
    `${o.rounds} interleaved rounds of ${o.seconds} s phases after ${o.warmUpSeconds} s of warm-up per system, ${o.concurrency} requests in flight, ${os.cpus().length} CPUs`,
  );
  try {
    log('starting a single node...');
    single = await startServer({ readyTimeoutMs: 60_000 });
    const sTls = { ca: single.caPem, cert: single.adminCertPem, key: single.adminKeyPem };
    const sPool = pool(single.url, sTls, o.concurrency);
    pools.push(sPool);
    const s = single;
    const systems: System[] = [{ label: 'single node', targets: [sPool], created: [[]], rss: () => rssMiB(s.pid), processes: [{ label: 'node', pid: s.pid }] }];

    log('starting a three-node cluster...');
    const p = await getFreePorts(7);
    const t: ClusterTopology = clusterTopology({
      baseDir: path.join(base, 'cluster'),
      securePorts: p.slice(0, 3),
      peerPorts: p.slice(3, 6),
      balancerPort: p[6]!,
    });
    cluster = await launchCluster({
      topology: t,
      serverEntry: path.join(repoRoot(), 'dist', 'apps', 'apiserver', 'src', 'main.js'),
      readyTimeoutMs: 60_000,
      // The failover phase kills the leader; the launcher brings it back.
      restart: true,
      // Node logs would interleave with the table; keep only the launcher's own lines.
      log: (line) => {
        if (line.startsWith('[launcher]')) log(line);
      },
    });
    const pki = await loadPki(t.pkiDir);
    const cTls = { ca: pki.caPem, cert: pki.adminCertPem, key: pki.adminKeyPem };
    const nodePids = cluster.members.filter((m) => m.kind === 'node').map((m) => m.process.pid);
    const clusterRss = (): number | undefined => {
      const v = nodePids.map((pid) => rssMiB(pid)).filter((x): x is number => x !== undefined);
      return v.length === 0 ? undefined : v.reduce((a, b) => a + b, 0) / v.length;
    };
    const clusterProcesses = cluster.members.map((m) => ({ label: m.kind === 'balancer' ? 'haproxy' : m.name, pid: m.process.pid }));
    if (cluster.balanced) {
      const lb = pool(cluster.url, cTls, o.concurrency);
      pools.push(lb);
      systems.push({ label: 'cluster via haproxy', targets: [lb], created: [[]], rss: clusterRss, processes: clusterProcesses });
    } else {
      log('haproxy is not installed: no balancer phases');
    }
    const direct = t.nodes.map((n) => pool(`https://${t.clientHost}:${n.securePort}`, cTls, Math.ceil(o.concurrency / t.nodes.length)));
    pools.push(...direct);
    systems.push({
      label: 'cluster direct n1-n3',
      targets: direct,
      created: direct.map(() => []),
      rss: clusterRss,
      processes: clusterProcesses.filter((x) => x.label !== 'haproxy'),
    });

    log('warming up...');
    for (const sys of systems) {
      await phase(sys, 'creates', o.warmUpSeconds, o.concurrency);
      await phase(sys, 'gets', o.warmUpSeconds, o.concurrency);
    }
    for (let r = 0; r < o.rounds; r++) {
      const round: ClusterPhaseResult[] = [];
      for (const kind of ['creates', 'gets'] as const) {
        for (const sys of roundOrder(systems, r)) round.push(await phase(sys, kind, o.seconds, o.concurrency));
      }
      rounds.push(round);
      const c = (label: string) => round.find((x) => x.name === `${label}: creates`)?.perSecond;
      const steal = round.filter((x) => x.host !== undefined).map((x) => x.host!.steal);
      const stolen = steal.length > 0 ? `; host CPU stolen ${pct(Math.max(...steal))} at most` : '';
      log(`round ${r + 1}/${o.rounds}: creates/s ${systems.map((x) => `${x.label} ${Math.round(c(x.label) ?? 0)}`).join(', ')}${stolen}`);
    }
    // Which node leads (at the end of the run) explains which one spends the most per create.
    for (const [i, n] of t.nodes.entries()) {
      const target = { url: `https://${t.clientHost}:${n.securePort}`, caPem: pki.caPem, adminCertPem: pki.adminCertPem, adminKeyPem: pki.adminKeyPem };
      if ((await metricValue(target, 'etcd_server_is_leader').catch(() => 0)) === 1) leader = t.nodes[i]!.name;
    }
    if (o.kills > 0) failovers.push(...(await measureFailover(cluster, t, cTls, o.kills)));
    // The row shown per phase is its median round (so its latencies are a measured round's).
    for (const name of rounds[0]!.map((x) => x.name)) {
      const all = rounds.map((round) => round.find((x) => x.name === name)!);
      const m = median(all.map((x) => x.perSecond));
      rows.push(all.find((x) => x.perSecond === m)!);
    }
  } catch (e) {
    failure = (e as Error).message;
  } finally {
    await Promise.all(pools.map((x) => x.close().catch(() => undefined)));
    await cluster?.stop();
    await single?.cleanup();
    await fs.rm(base, { recursive: true, force: true });
  }

  log('');
  log(`median of ${rounds.length} round(s) per phase:`);
  log(formatTable(rows));
  const all = rounds.flat();
  for (const r of all) for (const e of r.sampleErrors) log(`  ${r.name} error: ${e}`);
  log('');
  const rateIn = (round: readonly PhaseResult[], name: string): number | undefined => round.find((r) => r.name === name)?.perSecond;
  const ratios: Array<{ name: string; value: number; perRound: number[]; target?: string; met?: boolean }> = [];
  for (const via of ['cluster via haproxy', 'cluster direct n1-n3']) {
    for (const kind of ['creates', 'gets'] as const) {
      const perRound = rounds
        .map((round) => {
          const c = rateIn(round, `${via}: ${kind}`);
          const s1 = rateIn(round, `single node: ${kind}`);
          return c !== undefined && s1 !== undefined && s1 > 0 ? c / s1 : undefined;
        })
        .filter((v): v is number => v !== undefined);
      if (perRound.length === 0) continue;
      const v = median(perRound);
      const each = perRound.map((x) => `${(x * 100).toFixed(1)}%`).join(' ');
      const label = `${via} ${kind} / single`;
      if (kind === 'creates') {
        const met = v >= CLUSTER_CREATE_TARGET;
        ratios.push({ name: label, value: v, perRound, target: `>= ${CLUSTER_CREATE_TARGET}`, met });
        log(`${label.padEnd(40)} = ${(v * 100).toFixed(1)}%   (target >= ${CLUSTER_CREATE_TARGET * 100}%)   ${met ? 'MET' : 'NOT MET'}   rounds: ${each}`);
      } else {
        ratios.push({ name: label, value: v, perRound });
        log(`${label.padEnd(40)} = ${(v * 100).toFixed(1)}%   rounds: ${each}`);
      }
    }
  }
  // Where the CPU goes: on two shared cores the cluster's throughput is bounded by the sum over
  // all processes, the single node's by its main thread (docs/performance.md).
  for (const label of ['single node', 'cluster via haproxy', 'cluster direct n1-n3']) {
    const phases = all.filter((r) => r.name === `${label}: creates` && r.cpuUs !== undefined);
    if (phases.length === 0) continue;
    const per = Object.keys(phases[0]!.cpuUs!).map((p) => ({ p, us: median(phases.map((r) => r.cpuUs![p] ?? Number.NaN)) }));
    const sum = per.reduce((a, x) => a + x.us, 0);
    const parts = per.map((x) => `${x.p}${x.p === leader ? ' (leader)' : ''} ${x.us.toFixed(0)}`).join(', ');
    log(`CPU per create, ${label}: ${parts}; ${sum.toFixed(0)} µs in all (medians over rounds)`);
  }
  // A virtual machine's host may run other guests on its CPUs: the phases then measure a slower
  // and unevenly slowed machine, and the ratios are not comparable with a quiet host's.
  const measured = all.filter((r) => r.host !== undefined);
  if (measured.length > 0) {
    const steal = measured.map((r) => r.host!.steal);
    const idle = (prefix: string) => measured.filter((r) => r.name.startsWith(prefix) && r.name.endsWith('creates')).map((r) => r.host!.idle);
    const idles = ['single node', 'cluster via haproxy', 'cluster direct n1-n3'].map((label) => ({ label, v: idle(label) })).filter((x) => x.v.length > 0);
    log(
      `host CPU stolen by the hypervisor: median ${pct(median(steal))}, max ${pct(Math.max(...steal))} of the measured phases; idle during creates: ${idles.map((x) => `${x.label} ${pct(median(x.v))}`).join(', ')}`,
    );
    if (median(steal) >= 0.05)
      log(
        `warning: the hypervisor took ${pct(median(steal))} of this machine's CPU time (median over the phases): these figures are not comparable with a run on a quiet host`,
      );
  }
  if (failovers.length > 0) {
    const sorted = [...failovers].sort((a, b) => a - b);
    const m = median(sorted);
    log(
      `failover (kill -9 of the leader to the first acknowledged create), ${sorted.length} kills: median ${m.toFixed(0)} ms, max ${sorted[sorted.length - 1]!.toFixed(0)} ms (target median <= ${FAILOVER_TARGET_MS} ms: ${m <= FAILOVER_TARGET_MS ? 'MET' : 'NOT MET'}); all: ${sorted.map((x) => x.toFixed(0)).join(', ')}`,
    );
  }
  if (failure !== undefined) log(`bench failed: ${failure}`);
  if (o.jsonOut !== undefined) {
    await fs.mkdir(path.dirname(path.resolve(o.jsonOut)), { recursive: true });
    const report = {
      startedAt: new Date().toISOString(),
      node: process.version,
      cpus: os.cpus().length,
      seconds: o.seconds,
      concurrency: o.concurrency,
      rounds: rounds.length,
      phases: rows,
      allRounds: rounds,
      ratios,
      failoverMs: failovers,
      failure: failure ?? null,
    };
    await fs.writeFile(o.jsonOut, `${JSON.stringify(report, null, 2)}\n`);
    log(`results written to ${o.jsonOut}`);
  }
  return failure !== undefined || all.some((r) => r.errors > 0) ? 1 : 0;
}

/** Median failover time the cluster must keep after kill -9 of the leader, in ms. */
export const FAILOVER_TARGET_MS = 1000;

/**
 * Kills the leader `kills` times (SIGKILL) and returns, per kill, the ms until a create through
 * one of the other nodes was acknowledged. Before each kill, waits until every node answers
 * /readyz and one of them reports itself leader (the launcher restarted the previous victim).
 */
async function measureFailover(cluster: RunningCluster, t: ClusterTopology, tls: Tls, kills: number): Promise<number[]> {
  const out: number[] = [];
  const targets = t.nodes.map((n) => ({ url: `https://${t.clientHost}:${n.securePort}`, caPem: tls.ca, adminCertPem: tls.cert, adminKeyPem: tls.key }));
  const pools = t.nodes.map((n) => new LeanPool(`https://${t.clientHost}:${n.securePort}`, { connections: 1, tls, timeoutMs: 15_000 }));
  try {
    for (let k = 0; k < kills; k++) {
      let lead = -1;
      for (let waited = 0; lead < 0; waited += 200) {
        if (waited > 120_000) throw new Error('failover: the cluster did not come back with a leader');
        const flags = await Promise.all(targets.map((x) => metricValue(x, 'etcd_server_is_leader').catch(() => NaN)));
        if (flags.every((f) => !Number.isNaN(f))) lead = flags.indexOf(1);
        if (lead < 0) await new Promise((r) => setTimeout(r, 200));
      }
      const victim = cluster.members.find((m) => m.kind === 'node' && m.name === t.nodes[lead]!.name)!;
      const survivors = pools.filter((_, i) => i !== lead);
      const started = performance.now();
      victim.process.kill('SIGKILL');
      // One create at a time per survivor, retried until one is acknowledged.
      const first = await Promise.any(
        survivors.map(async (p, i) => {
          for (let n = 0; ; n++) {
            const name = `failover-${k}-${i}-${n}-${Date.now().toString(36)}`;
            const res = await p
              .request({ method: 'POST', path: CM_PATH, headers: { 'content-type': 'application/json' }, body: body(name) })
              .catch(() => undefined);
            if (res) await res.body.text();
            if (res?.statusCode === 201) return performance.now() - started;
            if (performance.now() - started > 60_000) throw new Error('no create acknowledged within 60 s');
            await new Promise((r) => setTimeout(r, 10));
          }
        }),
      );
      out.push(first);
      log(`failover ${k + 1}/${kills}: killed ${t.nodes[lead]!.name}, first create acknowledged after ${first.toFixed(0)} ms`);
    }
  } finally {
    await Promise.all(pools.map((p) => p.close().catch(() => undefined)));
  }
  return out;
}

if (isEntryPoint(import.meta.url)) {
  try {
    const { values } = parseArgs({
      args: process.argv.slice(2),
      strict: true,
      options: {
        seconds: { type: 'string' },
        'warm-up-seconds': { type: 'string' },
        concurrency: { type: 'string' },
        rounds: { type: 'string' },
        kills: { type: 'string' },
        'json-out': { type: 'string' },
      },
    });
    const code = await runBench({
      seconds: positive(values.seconds ?? process.env.BENCH_SECONDS, 5, 'seconds'),
      warmUpSeconds: positive(values['warm-up-seconds'] ?? process.env.BENCH_WARMUP_SECONDS, 6, 'warm-up-seconds'),
      concurrency: Math.round(positive(values.concurrency ?? process.env.BENCH_CONCURRENCY, 64, 'concurrency')),
      rounds: Math.round(positive(values.rounds ?? process.env.BENCH_ROUNDS, 5, 'rounds')),
      kills: values.kills === '0' ? 0 : Math.round(positive(values.kills, 10, 'kills')),
      ...(values['json-out'] !== undefined ? { jsonOut: values['json-out'] } : {}),
    });
    process.exit(code);
  } catch (e) {
    process.stderr.write(`bench: ${(e as Error).message}\n`);
    process.exit(2);
  }
}
