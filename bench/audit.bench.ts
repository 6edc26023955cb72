/**
 * Audit logging benchmark (`node dist/bench/audit.bench.js`, `npm run bench:audit`, part of
 * `npm run bench`).
 *
 * What recording requests costs: three single-node servers started side by side, the same but
 * for auditing:
 *   off              no audit flags (the anchor)
 *   Metadata         a policy recording every request at Metadata, to a blocking JSON log
 *   Metadata, batch  the same with --audit-log-mode=batch (events written on later turns)
 *   RequestResponse  Metadata's log at RequestResponse (both bodies decoded and written)
 * Each is driven by the same keep-alive HTTPS client as the admin (bench/lean.client.ts) with
 * GETs of one ConfigMap and with creates of ConfigMaps, at fixed concurrency. Every round
 * measures every system once per load, in an order rotated per round; figures are medians over
 * the rounds. Printed: req/s, server CPU per request (utime + stime of the server process
 * around each phase), audit log bytes per request, and the cost against the anchor
 * (1 - req/s / anchor req/s, and 1 - anchor CPU/req / CPU/req).
 *
 * Flags: --seconds N per measured phase (env BENCH_SECONDS, default 3), --rounds N (default 3),
 * --concurrency N (env BENCH_CONCURRENCY, default 32), --json-out FILE. Exit code 0 when every
 * phase ran without a failed request, 1 otherwise. Nothing is enforced on time.
 */
import { promises as fs, statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { type BenchRequest, type PhaseResult, runPhase } from './api.bench.js';
import { median, readProcessCpuMs, roundOrder } from './cluster.bench.js';
import { type BenchClient, LeanPool } from './lean.client.js';
import { type ServerHandle, request, startServer } from '../test/support/server.js';
import { isEntryPoint } from '../cluster/entry-point.js';

const NS = 'bench-audit';
const CM_PATH = `/api/v1/namespaces/${NS}/configmaps`;

/** The audited systems: the level of the one rule of its policy (none: no auditing) and the log's extra flags. */
const SYSTEMS: ReadonlyArray<{ name: string; level?: 'Metadata' | 'RequestResponse'; flags?: readonly string[] }> = [
  { name: 'off' },
  { name: 'Metadata', level: 'Metadata' },
  { name: 'Metadata, batch', level: 'Metadata', flags: ['--audit-log-mode=batch'] },
  { name: 'RequestResponse', level: 'RequestResponse' },
];
const LOADS = ['GET', 'create'] as const;
type Load = (typeof LOADS)[number];

interface Options {
  readonly seconds: number;
  readonly rounds: number;
  readonly concurrency: number;
  readonly jsonOut?: string;
}

interface Figure {
  readonly perSecond: number;
  readonly cpuUs: number;
  readonly logBytesPerRequest: number;
}

export interface AuditBenchRow {
  readonly load: Load;
  readonly system: string;
  readonly perSecond: number;
  readonly cpuUs: number;
  readonly logBytesPerRequest: number;
  /** 1 - req/s / anchor req/s, median of the rounds (0 for the anchor). */
  readonly throughputCost: number;
  /** 1 - anchor CPU/req / CPU/req, median of the rounds. */
  readonly cpuCost: number;
}

const log = (line: string): void => void process.stdout.write(`${line}\n`);
const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;

function sizeOf(file: string | undefined): number {
  if (!file) return 0;
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

async function runBench(o: Options): Promise<number> {
  const started = new Date();
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'kapi-audit-bench-'));
  const servers: ServerHandle[] = [];
  const clients: BenchClient[] = [];
  const phases: PhaseResult[] = [];
  const rows: AuditBenchRow[] = [];
  let failure: string | undefined;
  try {
    log(`starting ${SYSTEMS.length} API servers (audit ${SYSTEMS.map((x) => x.name).join('; ')})...`);
    const handles = await Promise.all(
      SYSTEMS.map(async (s) => {
        if (!s.level) return { s, h: await startServer({ readyTimeoutMs: 60_000 }), logFile: undefined };
        const policy = path.join(dir, `${s.name.replace(/\W+/g, '-')}.yaml`);
        await fs.writeFile(policy, `apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: ${s.level}\n`);
        const logFile = path.join(dir, `${s.name.replace(/\W+/g, '-')}.log`);
        const h = await startServer({ args: ['--audit-policy-file', policy, '--audit-log-path', logFile, ...(s.flags ?? [])], readyTimeoutMs: 60_000 });
        return { s, h, logFile };
      }),
    );
    for (const { h } of handles) servers.push(h);
    for (const { h } of handles) {
      const r = await request(h, 'POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
      if (r.status !== 201) throw new Error(`namespace: ${r.status} ${r.body.slice(0, 200)}`);
      const data: Record<string, string> = {};
      for (let k = 0; k < 10; k++) data[`key-${k}`] = `value-${k}-0123456789`;
      const t = await request(h, 'POST', CM_PATH, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'target' }, data } });
      if (t.status !== 201) throw new Error(`configmap: ${t.status} ${t.body.slice(0, 200)}`);
    }
    const systems = handles.map(({ s, h, logFile }) => {
      const client = new LeanPool(h.url, { connections: o.concurrency, tls: { ca: h.caPem, cert: h.adminCertPem, key: h.adminKeyPem } });
      clients.push(client);
      return { name: s.name, client, pid: h.pid, logFile };
    });
    const body = (i: number) =>
      JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'c-', labels: { i: String(i % 100) } }, data: { a: 'b'.repeat(200) } });
    const next =
      (load: Load) =>
      (i: number): BenchRequest =>
        load === 'GET' ? { method: 'GET', path: `${CM_PATH}/target` } : { method: 'POST', path: CM_PATH, body: body(i) };
    const ok = (load: Load) => (load === 'GET' ? [200] : [201]);
    for (const s of systems) for (const load of LOADS) await runPhase('warm-up', s.client, Math.min(1, o.seconds), o.concurrency, next(load), ok(load));
    log(`${o.rounds} rounds of ${o.seconds} s per system and load, ${o.concurrency} in flight`);
    const perRound: Array<Map<string, Figure>> = [];
    for (let r = 0; r < o.rounds; r++) {
      const got = new Map<string, Figure>();
      for (const load of LOADS) {
        for (const s of roundOrder(systems, r)) {
          const cpuBefore = readProcessCpuMs(s.pid);
          const bytesBefore = sizeOf(s.logFile);
          const p = await runPhase(`${load}, ${s.name}`, s.client, o.seconds, o.concurrency, next(load), ok(load));
          const cpuAfter = readProcessCpuMs(s.pid);
          const cpuUs = cpuBefore !== undefined && cpuAfter !== undefined && p.requests > 0 ? ((cpuAfter - cpuBefore) * 1000) / p.requests : Number.NaN;
          const logBytesPerRequest = p.requests > 0 ? (sizeOf(s.logFile) - bytesBefore) / p.requests : 0;
          phases.push(p);
          got.set(`${load}|${s.name}`, { perSecond: p.perSecond, cpuUs, logBytesPerRequest });
          log(
            `  round ${r + 1}: ${`${load}, ${s.name}`.padEnd(24)} ${p.perSecond.toFixed(0).padStart(7)} req/s  ${cpuUs.toFixed(1).padStart(7)} µs CPU/req  ${logBytesPerRequest.toFixed(0).padStart(6)} log B/req${p.errors ? `  ${p.errors} errors: ${p.sampleErrors.join('; ')}` : ''}`,
          );
        }
      }
      perRound.push(got);
    }
    for (const load of LOADS) {
      for (const s of SYSTEMS) {
        const at = (g: Map<string, Figure>, name: string) => g.get(`${load}|${name}`)!;
        rows.push({
          load,
          system: s.name,
          perSecond: median(perRound.map((g) => at(g, s.name).perSecond)),
          cpuUs: median(perRound.map((g) => at(g, s.name).cpuUs)),
          logBytesPerRequest: median(perRound.map((g) => at(g, s.name).logBytesPerRequest)),
          throughputCost: median(perRound.map((g) => 1 - at(g, s.name).perSecond / at(g, 'off').perSecond)),
          cpuCost: median(perRound.map((g) => 1 - at(g, 'off').cpuUs / at(g, s.name).cpuUs)),
        });
      }
    }
  } catch (e) {
    failure = (e as Error).message;
  } finally {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    for (const s of servers) await s.cleanup();
    await fs.rm(dir, { recursive: true, force: true });
  }
  if (rows.length > 0) {
    log('');
    log('| load | audit | req/s | server CPU/req | log bytes/req | throughput cost | CPU cost |');
    log('|---|---|---|---|---|---|---|');
    for (const r of rows)
      log(
        `| ${r.load} | ${r.system} | ${r.perSecond.toFixed(0)} | ${r.cpuUs.toFixed(1)} µs | ${r.logBytesPerRequest.toFixed(0)} | ${r.system === 'off' ? 'anchor' : pct(r.throughputCost)} | ${r.system === 'off' ? 'anchor' : pct(r.cpuCost)} |`,
      );
  }
  const errors = phases.reduce((n, p) => n + p.errors, 0);
  if (failure) log(`FAILED: ${failure}`);
  if (o.jsonOut) {
    await fs.writeFile(
      o.jsonOut,
      JSON.stringify(
        {
          started: started.toISOString(),
          options: o,
          rows,
          phases: phases.map(({ name, requests, errors: e }) => ({ name, requests, errors: e })),
          failure: failure ?? null,
        },
        null,
        2,
      ),
    );
  }
  return failure || errors > 0 ? 1 : 0;
}

if (isEntryPoint(import.meta.url)) {
  const { values } = parseArgs({
    options: { seconds: { type: 'string' }, rounds: { type: 'string' }, concurrency: { type: 'string' }, 'json-out': { type: 'string' } },
  });
  const opts: Options = {
    seconds: Number(values.seconds ?? process.env.BENCH_SECONDS ?? 3),
    rounds: Math.max(1, Number(values.rounds ?? 3)),
    concurrency: Math.max(1, Number(values.concurrency ?? process.env.BENCH_CONCURRENCY ?? 32)),
    ...(values['json-out'] ? { jsonOut: values['json-out'] } : {}),
  };
  runBench(opts).then(
    (code) => process.exit(code),
    (e: unknown) => {
      process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
      process.exit(1);
    },
  );
}
