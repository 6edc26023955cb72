/**
 * Cluster benchmark (`node dist/bench/cluster.bench.js`, for `npm run bench:cluster`; issue 4
 * "Done when": creates/s and gets/s through the balancer and direct to nodes, with the same
 * figures for a single node in the same run; target: the 3-node cluster keeps >= 60% of the
 * single node's create throughput).
 *
 * Runs, one after the other so they never compete for the CPU:
 *   1. a single node (the e2e harness, as bench/api.bench.ts): creates, gets;
 *   2. a three-node cluster from cluster/launcher.ts on free ports with haproxy when installed:
 *      creates and gets through the balancer, then creates and gets direct to the nodes (the
 *      load split evenly over n1..n3, each node reading back the objects it created).
 * Gets through the balancer read objects created through the balancer, so they may land on
 * another node than the one that took the write: with a replicated store that is the point (any
 * node answers); with independent nodes they fail, and the errors column shows it.
 *
 * Each system is warmed up first (creates then gets, --warm-up-seconds each, default 3) so that
 * no measured phase includes a process's start-up.
 *
 * Flags: --seconds N (env BENCH_SECONDS, default 5), --warm-up-seconds N (env
 * BENCH_WARMUP_SECONDS, default 3), --concurrency N (env BENCH_CONCURRENCY, default 64),
 * --json-out FILE. Exit code 0 when every phase ran without errors, else 1
 * (the target is reported, not enforced).
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici7';
import { type ClusterTopology, type RunningCluster, clusterTopology, launchCluster } from '../cluster/launcher.js';
import { loadPki } from '../cluster/pki.js';
import { type ServerHandle, getFreePorts, repoRoot, startServer } from '../test/support/server.js';
import { type BenchRequest, type PhaseResult, formatTable, rssMiB, runPhase } from './api.bench.js';
import { isEntryPoint } from '../cluster/entry-point.js';

/** Share of the single node's create throughput the cluster must keep (issue 4). */
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

function pool(url: string, tls: Tls, connections: number): Pool {
  return new Pool(url, { connections, pipelining: 1, keepAliveTimeout: 30_000, connect: { ca: tls.ca, cert: tls.cert, key: tls.key } });
}

/**
 * Creates then gets against `targets` (one pool each, `concurrency` split evenly), reported as
 * one phase each: req/s summed, p50/p99 the worst of the targets (a conservative merge).
 */
async function createsAndGets(label: string, targets: readonly Pool[], seconds: number, concurrency: number, pid: () => number | undefined): Promise<PhaseResult[]> {
  const run = `${label.replace(/[^a-z0-9]/g, '')}-${Date.now().toString(36)}`;
  const per = Math.max(1, Math.floor(concurrency / targets.length));
  const created: string[][] = targets.map(() => []);
  const merge = (name: string, parts: PhaseResult[]): PhaseResult => ({
    name,
    seconds: Math.max(...parts.map((p) => p.seconds)),
    requests: parts.reduce((a, p) => a + p.requests, 0),
    errors: parts.reduce((a, p) => a + p.errors, 0),
    perSecond: parts.reduce((a, p) => a + p.perSecond, 0),
    p50Ms: Math.max(...parts.map((p) => p.p50Ms)),
    p99Ms: Math.max(...parts.map((p) => p.p99Ms)),
    ...(pid() !== undefined ? { rssMiB: rssMiB(pid()) } : {}),
    sampleErrors: parts.flatMap((p) => p.sampleErrors).slice(0, 3),
  });
  // Names unique per phase and target: runPhase numbers requests from 0 in every phase.
  const createOn = (i: number, phase: string) => (seq: number): BenchRequest => {
    const name = `cb-${run}-${phase}${i}-${seq}`;
    return { method: 'POST', path: CM_PATH, body: body(name), tag: name };
  };
  // Warm-up: JIT and connections, not measured.
  await Promise.all(targets.map((p, i) => runPhase('warm-up', p, Math.min(1, seconds), per, createOn(i, 'w'), [201], (r) => created[i]!.push(r.tag!))));
  const creates = await Promise.all(targets.map((p, i) => runPhase('c', p, seconds, per, createOn(i, 'm'), [201], (r) => created[i]!.push(r.tag!))));
  const gets = await Promise.all(
    targets.map((p, i) => {
      const names = created[i]!;
      if (names.length === 0) throw new Error(`${label}: no ConfigMap was created`);
      return runPhase('g', p, seconds, per, (seq) => ({ method: 'GET', path: `${CM_PATH}/${names[seq % names.length]}` }), [200]);
    }),
  );
  return [merge(`${label}: creates`, creates), merge(`${label}: gets`, gets)];
}

/**
 * Brings a freshly started system to a steady state before anything is measured: the same
 * creates and gets as a measured run, results dropped. A new process runs interpreted code and
 * an empty store for its first seconds (and a cluster does that three times over), so without
 * this whichever phase ran first on a system measured its start-up; the single node and the
 * cluster get the same treatment.
 */
async function warmUp(targets: readonly Pool[], seconds: number, concurrency: number): Promise<void> {
  await createsAndGets('warm-up', targets, seconds, concurrency, () => undefined);
}

interface Options {
  readonly seconds: number;
  /** Steady-state warm-up of each system before its measured phases (see warmUp). */
  readonly warmUpSeconds: number;
  readonly concurrency: number;
  readonly jsonOut?: string;
}

async function runBench(o: Options): Promise<number> {
  const results: PhaseResult[] = [];
  const pools: Pool[] = [];
  let failure: string | undefined;
  let single: ServerHandle | undefined;
  let cluster: RunningCluster | undefined;
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'kapi-cluster-bench-'));
  log(`${o.seconds} s per phase after ${o.warmUpSeconds} s of warm-up per system, ${o.concurrency} requests in flight, ${os.cpus().length} CPUs`);
  try {
    log('starting a single node...');
    single = await startServer({ readyTimeoutMs: 60_000 });
    const sTls = { ca: single.caPem, cert: single.adminCertPem, key: single.adminKeyPem };
    const sPool = pool(single.url, sTls, o.concurrency);
    pools.push(sPool);
    const s = single;
    await warmUp([sPool], o.warmUpSeconds, o.concurrency);
    results.push(...(await createsAndGets('single node', [sPool], o.seconds, o.concurrency, () => s.pid)));
    await sPool.close();
    await single.cleanup();
    single = undefined;

    log('starting a three-node cluster...');
    const p = await getFreePorts(7);
    const t: ClusterTopology = clusterTopology({ baseDir: path.join(base, 'cluster'), securePorts: p.slice(0, 3), peerPorts: p.slice(3, 6), balancerPort: p[6]! });
    cluster = await launchCluster({
      topology: t,
      serverEntry: path.join(repoRoot(), 'dist', 'apps', 'apiserver', 'src', 'main.js'),
      readyTimeoutMs: 60_000,
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
    const withRss = (r: PhaseResult): PhaseResult => {
      const rss = clusterRss();
      return rss === undefined ? r : { ...r, rssMiB: rss };
    };
    const direct = t.nodes.map((n) => pool(`https://${t.clientHost}:${n.securePort}`, cTls, Math.ceil(o.concurrency / t.nodes.length)));
    pools.push(...direct);
    await warmUp(direct, o.warmUpSeconds, o.concurrency);
    if (cluster.balanced) {
      const lb = pool(cluster.url, cTls, o.concurrency);
      pools.push(lb);
      results.push(...(await createsAndGets('cluster via haproxy', [lb], o.seconds, o.concurrency, () => undefined)).map(withRss));
      await lb.close();
    } else {
      log('haproxy is not installed: no balancer phases');
    }
    results.push(...(await createsAndGets('cluster direct n1-n3', direct, o.seconds, o.concurrency, () => undefined)).map(withRss));
  } catch (e) {
    failure = (e as Error).message;
  } finally {
    await Promise.all(pools.map((x) => x.close().catch(() => undefined)));
    await cluster?.stop();
    await single?.cleanup();
    await fs.rm(base, { recursive: true, force: true });
  }

  log('');
  log(formatTable(results));
  for (const r of results) for (const s of r.sampleErrors) log(`  ${r.name} error: ${s}`);
  log('');
  const rate = (name: string): number | undefined => results.find((r) => r.name === name)?.perSecond;
  const singleCreates = rate('single node: creates');
  const singleGets = rate('single node: gets');
  const ratios: Array<{ name: string; value: number; target?: string; met?: boolean }> = [];
  for (const via of ['cluster via haproxy', 'cluster direct n1-n3']) {
    const c = rate(`${via}: creates`);
    const g = rate(`${via}: gets`);
    if (c !== undefined && singleCreates !== undefined) {
      const v = c / singleCreates;
      const met = v >= CLUSTER_CREATE_TARGET;
      ratios.push({ name: `${via} creates / single`, value: v, target: `>= ${CLUSTER_CREATE_TARGET}`, met });
      log(`${`${via} creates / single`.padEnd(40)} = ${(v * 100).toFixed(1)}%   (target >= ${CLUSTER_CREATE_TARGET * 100}%)   ${met ? 'MET' : 'NOT MET'}`);
    }
    if (g !== undefined && singleGets !== undefined) {
      const v = g / singleGets;
      ratios.push({ name: `${via} gets / single`, value: v });
      log(`${`${via} gets / single`.padEnd(40)} = ${(v * 100).toFixed(1)}%`);
    }
  }
  if (failure !== undefined) log(`bench failed: ${failure}`);
  if (o.jsonOut !== undefined) {
    await fs.mkdir(path.dirname(path.resolve(o.jsonOut)), { recursive: true });
    const report = { startedAt: new Date().toISOString(), node: process.version, cpus: os.cpus().length, seconds: o.seconds, concurrency: o.concurrency, phases: results, ratios, failure: failure ?? null };
    await fs.writeFile(o.jsonOut, `${JSON.stringify(report, null, 2)}\n`);
    log(`results written to ${o.jsonOut}`);
  }
  return failure !== undefined || results.some((r) => r.errors > 0) ? 1 : 0;
}

function positive(raw: string | undefined, fallback: number, what: string): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${what} must be a positive number, got ${JSON.stringify(raw)}`);
  return n;
}

if (isEntryPoint(import.meta.url)) {
  try {
    const { values } = parseArgs({
      args: process.argv.slice(2),
      strict: true,
      options: { seconds: { type: 'string' }, 'warm-up-seconds': { type: 'string' }, concurrency: { type: 'string' }, 'json-out': { type: 'string' } },
    });
    const code = await runBench({
      seconds: positive(values.seconds ?? process.env.BENCH_SECONDS, 5, 'seconds'),
      warmUpSeconds: positive(values['warm-up-seconds'] ?? process.env.BENCH_WARMUP_SECONDS, 3, 'warm-up-seconds'),
      concurrency: Math.round(positive(values.concurrency ?? process.env.BENCH_CONCURRENCY, 64, 'concurrency')),
      ...(values['json-out'] !== undefined ? { jsonOut: values['json-out'] } : {}),
    });
    process.exit(code);
  } catch (e) {
    process.stderr.write(`bench: ${(e as Error).message}\n`);
    process.exit(2);
  }
}
