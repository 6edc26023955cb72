/**
 * API benchmark (`node dist/bench/api.bench.js`, wired as `npm run bench`).
 *
 * Starts one API server node with the e2e harness and drives it over HTTPS with
 * bench/lean.client.ts (keep-alive, 64 connections, one request in flight per connection) for a
 * fixed time per phase:
 *   creates  POST /api/v1/namespaces/default/configmaps (unique names, 10 data keys)
 *   gets     GET of ConfigMaps created in the first phase
 *   lists    GET /api/v1/namespaces/bench-list/configmaps (100 items)
 * and, for scale, a ceiling: a bare Fastify HTTPS endpoint (same serving certificate, same mutual
 * TLS, same client) answering a fixed ~1 KB JSON, run in its own child process so it does not
 * share the client's event loop. Reports req/s, p50/p99 latency, errors and the server's RSS
 * (VmRSS from /proc/<pid>/status), then the targets: gets >= 30% of the ceiling, creates >=
 * 2,000/s (the server fsyncs its Raft log before acknowledging a write).
 *
 * Flags: --seconds N (or env BENCH_SECONDS, default 5), --concurrency N (env BENCH_CONCURRENCY,
 * default 64), --ceiling-only (no API server: measure the ceiling alone), --json-out FILE (also
 * write the results as JSON), --server-arg ARG (repeatable: extra flags for the API server).
 * Exit code 0 when every phase ran without errors, 1 otherwise (targets are reported, not enforced).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type BenchClient, LeanPool } from './lean.client.js';
import { ensurePki, loadPki } from '@app/pki';
import { type ServerHandle, startServer } from '../test/support/server.js';
import { isEntryPoint } from '../cluster/entry-point.js';
import { positive } from './flags.js';

/** One request a load worker sends. */
export interface BenchRequest {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly body?: string;
  /** Caller's label, handed back to `onOk` (e.g. the name of the created object). */
  readonly tag?: string;
}

/** Result of one measured phase. */
export interface PhaseResult {
  readonly name: string;
  readonly seconds: number;
  readonly requests: number;
  readonly errors: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Server resident set size after the phase, in MiB; undefined when unknown. */
  readonly rssMiB?: number;
  /** Up to 3 distinct error descriptions. */
  readonly sampleErrors: readonly string[];
}

/** The `q`-quantile (0..1) of `sorted` (ascending) by the nearest-rank method; NaN when empty. */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1]!;
}

/** Reads a process's VmRSS from /proc/<pid>/status, in MiB; undefined if unavailable. */
export function rssMiB(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? undefined : Number(m[1]) / 1024;
  } catch {
    return undefined;
  }
}

/**
 * Runs `concurrency` workers against `pool` for `seconds`; worker requests come from `next(i)`
 * with a global sequence number i. A response whose status is not `okStatus` counts as an error
 * (its body excerpt is sampled). Bodies are always read fully, as a real client would.
 */
export async function runPhase(
  name: string,
  pool: BenchClient,
  seconds: number,
  concurrency: number,
  next: (i: number) => BenchRequest,
  okStatus: readonly number[],
  onOk?: (r: BenchRequest) => void,
): Promise<PhaseResult> {
  const latencies: number[] = [];
  const samples = new Set<string>();
  let seq = 0;
  let errors = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const worker = async (): Promise<void> => {
    while (performance.now() < deadline) {
      const r = next(seq++);
      const t0 = performance.now();
      try {
        const res = await pool.request({
          method: r.method,
          path: r.path,
          headers: r.body !== undefined ? { 'content-type': 'application/json', accept: 'application/json' } : { accept: 'application/json' },
          ...(r.body !== undefined ? { body: r.body } : {}),
        });
        const text = await res.body.text();
        if (okStatus.includes(res.statusCode)) {
          latencies.push(performance.now() - t0);
          onOk?.(r);
        } else {
          errors++;
          if (samples.size < 3) samples.add(`${r.method} ${r.path.split('?')[0]} -> ${res.statusCode} ${text.slice(0, 160)}`);
        }
      } catch (e) {
        errors++;
        if (samples.size < 3) samples.add(`${r.method} ${r.path.split('?')[0]} -> ${(e as Error).message}`);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    name,
    seconds: elapsed,
    requests: latencies.length,
    errors,
    perSecond: latencies.length / elapsed,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    sampleErrors: [...samples],
  };
}

/** Ten ~20-byte data keys: a small but realistic ConfigMap payload. */
function configMapBody(namespace: string, name: string): string {
  const data: Record<string, string> = {};
  for (let k = 0; k < 10; k++) data[`key-${k}`] = `value-${k}-${name.slice(-8)}`;
  return JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data });
}

/** The ~1 KB JSON the ceiling endpoint serves. */
function ceilingPayload(): Record<string, unknown> {
  const data: Record<string, string> = {};
  for (let k = 0; k < 24; k++) data[`key-${k}`] = `value-${k}-0123456789`;
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'ceiling',
      namespace: 'default',
      uid: '6f1c1f3e-6d7a-4f44-9a35-0f4f5f0d1c2b',
      resourceVersion: '12345',
      creationTimestamp: '2026-01-01T00:00:00Z',
    },
    data,
  };
}

/**
 * Child-process mode: serves the ceiling endpoint with Fastify over HTTPS (mutual TLS like the
 * API server) from the PKI in `pkiDir`, prints `CEILING_READY <port>`, exits on SIGTERM.
 */
async function ceilingChild(pkiDir: string): Promise<void> {
  const { default: fastify } = await import('fastify');
  const pki = await loadPki(pkiDir);
  const app = fastify({
    logger: false,
    https: { cert: pki.servingCertPem, key: pki.servingKeyPem, ca: pki.caPem, requestCert: true, rejectUnauthorized: true },
  });
  const payload = ceilingPayload();
  app.get('/ceiling', async () => payload);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
  process.stdout.write(`CEILING_READY ${port}\n`);
  process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
}

/** Starts the ceiling child and resolves with its port once it printed CEILING_READY. */
async function startCeiling(pkiDir: string): Promise<{ child: ChildProcess; port: number }> {
  const self = fileURLToPath(import.meta.url);
  const child = spawn(process.execPath, [self, '--ceiling-child', '--pki-dir', pkiDir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`ceiling child not ready after 15 s: ${err}`)), 15_000);
    child.stdout!.setEncoding('utf8').on('data', (c: string) => {
      out += c;
      const m = /CEILING_READY (\d+)/.exec(out);
      if (m !== null) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`ceiling child exited ${code}: ${err}`));
    });
  });
  return { child, port };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const done = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await done;
  clearTimeout(t);
}

/** The load client of every phase (bench/lean.client.ts: a lighter client than undici). */
function makePool(url: string, ca: string, cert: string, key: string, connections: number): BenchClient {
  return new LeanPool(url, { connections, tls: { ca, cert, key } });
}

const fmt = (n: number | undefined, digits = 0): string =>
  n === undefined || Number.isNaN(n) ? '-' : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** Renders phases as an aligned text table. */
export function formatTable(phases: readonly PhaseResult[]): string {
  const head = ['phase', 'requests', 'errors', 'req/s', 'p50 ms', 'p99 ms', 'server RSS MiB'];
  const rows = phases.map((p) => [p.name, fmt(p.requests), fmt(p.errors), fmt(p.perSecond), fmt(p.p50Ms, 2), fmt(p.p99Ms, 2), fmt(p.rssMiB, 1)]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

interface BenchOptions {
  readonly seconds: number;
  readonly concurrency: number;
  readonly ceilingOnly: boolean;
  readonly jsonOut?: string;
  readonly serverArgs: readonly string[];
}

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** Sends `count` requests from `make(i)` with `concurrency` in flight; throws on a status not in ok. */
async function seed(pool: BenchClient, count: number, concurrency: number, make: (i: number) => BenchRequest, ok: readonly number[]): Promise<void> {
  let i = 0;
  const worker = async (): Promise<void> => {
    while (i < count) {
      const r = make(i++);
      const res = await pool.request({
        method: r.method,
        path: r.path,
        headers: { 'content-type': 'application/json' },
        ...(r.body !== undefined ? { body: r.body } : {}),
      });
      const text = await res.body.text();
      if (!ok.includes(res.statusCode)) throw new Error(`seeding ${r.method} ${r.path} -> ${res.statusCode} ${text.slice(0, 200)}`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

async function runBench(o: BenchOptions): Promise<number> {
  const results: PhaseResult[] = [];
  const started = new Date();
  let server: ServerHandle | undefined;
  let ceiling: { child: ChildProcess; port: number } | undefined;
  let tmpPki: string | undefined;
  let failure: string | undefined;
  const pools: BenchClient[] = [];
  try {
    let pkiDir: string | undefined;
    if (!o.ceilingOnly) {
      log('starting API server...');
      try {
        server = await startServer({ args: o.serverArgs, readyTimeoutMs: 60_000 });
        log(`API server ready at ${server.url} (pid ${server.pid})`);
        // The ceiling uses the server's own serving certificate when it keeps its PKI in its data dir.
        for (const d of [path.join(server.dataDir, 'pki'), server.dataDir]) {
          if (
            pkiDir === undefined &&
            (await fs.access(path.join(d, 'apiserver.crt')).then(
              () => true,
              () => false,
            ))
          )
            pkiDir = d;
        }
      } catch (e) {
        // Still measure the ceiling, so a run always says something useful.
        failure = `API server did not start: ${(e as Error).message}`;
        log(failure);
      }
    }
    if (pkiDir === undefined) {
      tmpPki = await fs.mkdtemp(path.join(os.tmpdir(), 'kapi-bench-pki-'));
      await ensurePki(tmpPki, {});
      pkiDir = tmpPki;
      if (server !== undefined) log('note: server PKI not found in its data dir; the ceiling uses a fresh PKI of the same kind');
    }
    const pki = await loadPki(pkiDir);
    ceiling = await startCeiling(pkiDir);
    const cPool = makePool(`https://127.0.0.1:${ceiling.port}`, pki.caPem, pki.adminCertPem, pki.adminKeyPem, o.concurrency);
    pools.push(cPool);
    log(`ceiling (bare Fastify HTTPS, pid ${ceiling.child.pid}) on port ${ceiling.port}; ${o.seconds} s per phase, ${o.concurrency} in flight`);
    await runPhase('warm-up', cPool, Math.min(1, o.seconds), o.concurrency, () => ({ method: 'GET', path: '/ceiling' }), [200]);
    const c = await runPhase('ceiling (bare Fastify)', cPool, o.seconds, o.concurrency, () => ({ method: 'GET', path: '/ceiling' }), [200]);
    results.push({ ...c, rssMiB: rssMiB(ceiling.child.pid) });
    await stopChild(ceiling.child);
    ceiling = undefined;

    if (server !== undefined) {
      const pool = makePool(server.url, server.caPem, server.adminCertPem, server.adminKeyPem, o.concurrency);
      pools.push(pool);
      const run = Date.now().toString(36);
      const created: string[] = [];
      const cmPath = '/api/v1/namespaces/default/configmaps';
      // Warm the server's JIT with a short burst of creates (their objects are reused by gets).
      await runPhase(
        'warm-up',
        pool,
        Math.min(1, o.seconds),
        o.concurrency,
        (i) => {
          const name = `bench-${run}-w${i}`;
          return { method: 'POST', path: cmPath, body: configMapBody('default', name), tag: name };
        },
        [201],
        (r) => created.push(r.tag!),
      );
      const creates = await runPhase(
        'creates (POST configmap)',
        pool,
        o.seconds,
        o.concurrency,
        (i) => {
          const name = `bench-${run}-${i}`;
          return { method: 'POST', path: cmPath, body: configMapBody('default', name), tag: name };
        },
        [201],
        (r) => created.push(r.tag!),
      );
      results.push({ ...creates, rssMiB: rssMiB(server.pid) });
      const names = created; // only the ones the server acknowledged with 201
      if (names.length === 0) throw new Error('no ConfigMap was created; skipping gets and lists');
      const gets = await runPhase(
        'gets (GET configmap)',
        pool,
        o.seconds,
        o.concurrency,
        (i) => ({ method: 'GET', path: `${cmPath}/${names[i % names.length]}` }),
        [200],
      );
      results.push({ ...gets, rssMiB: rssMiB(server.pid) });

      const ns = `bench-list-${run}`;
      await seed(
        pool,
        1,
        1,
        () => ({ method: 'POST', path: '/api/v1/namespaces', body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }) }),
        [201, 409],
      );
      await seed(
        pool,
        100,
        o.concurrency,
        (i) => ({ method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`, body: configMapBody(ns, `item-${i}`) }),
        [201],
      );
      const lists = await runPhase(
        'lists (GET 100 configmaps)',
        pool,
        o.seconds,
        o.concurrency,
        () => ({ method: 'GET', path: `/api/v1/namespaces/${ns}/configmaps` }),
        [200],
      );
      results.push({ ...lists, rssMiB: rssMiB(server.pid) });
    }
  } catch (e) {
    failure = failure === undefined ? (e as Error).message : `${failure}; ${(e as Error).message}`;
  } finally {
    await Promise.all(pools.map((p) => p.close().catch(() => undefined)));
    if (ceiling !== undefined) await stopChild(ceiling.child);
    await server?.cleanup();
    if (tmpPki !== undefined) await fs.rm(tmpPki, { recursive: true, force: true });
  }

  log('');
  log(formatTable(results));
  for (const r of results) for (const s of r.sampleErrors) log(`  ${r.name} error: ${s}`);
  const ceilingRps = results.find((r) => r.name.startsWith('ceiling'))?.perSecond;
  const getsRps = results.find((r) => r.name.startsWith('gets'))?.perSecond;
  const createsRps = results.find((r) => r.name.startsWith('creates'))?.perSecond;
  const targets: Array<{ name: string; value?: number; target: string; met?: boolean }> = [];
  log('');
  if (ceilingRps !== undefined && getsRps !== undefined) {
    const ratio = getsRps / ceilingRps;
    targets.push({ name: 'gets / ceiling', value: ratio, target: '>= 0.30', met: ratio >= 0.3 });
    log(`gets / ceiling    = ${(ratio * 100).toFixed(1)}%   (target >= 30%)   ${ratio >= 0.3 ? 'MET' : 'NOT MET'}`);
  }
  if (createsRps !== undefined) {
    targets.push({ name: 'creates/s', value: createsRps, target: '>= 2000', met: createsRps >= 2000 });
    log(`creates/s         = ${fmt(createsRps)}   (target >= 2,000 with fsync)   ${createsRps >= 2000 ? 'MET' : 'NOT MET'}`);
  }
  if (server === undefined && o.ceilingOnly) log('ceiling only (--ceiling-only): no API server phases');
  if (failure !== undefined) log(`bench failed: ${failure}`);
  const report = {
    startedAt: started.toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    seconds: o.seconds,
    concurrency: o.concurrency,
    phases: results,
    targets,
    failure: failure ?? null,
  };
  if (o.jsonOut !== undefined) {
    await fs.mkdir(path.dirname(path.resolve(o.jsonOut)), { recursive: true });
    await fs.writeFile(o.jsonOut, `${JSON.stringify(report, null, 2)}\n`);
    log(`results written to ${o.jsonOut}`);
  }
  const anyErrors = results.some((r) => r.errors > 0);
  return failure !== undefined || anyErrors ? 1 : 0;
}

async function main(argv: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    options: {
      'ceiling-child': { type: 'boolean' },
      'pki-dir': { type: 'string' },
      'ceiling-only': { type: 'boolean' },
      seconds: { type: 'string' },
      concurrency: { type: 'string' },
      'json-out': { type: 'string' },
      'server-arg': { type: 'string', multiple: true },
    },
  });
  if (values['ceiling-child'] === true) {
    await ceilingChild(values['pki-dir'] ?? '.');
    return -1; // keep running until SIGTERM
  }
  return runBench({
    seconds: positive(values.seconds ?? process.env.BENCH_SECONDS, 5, 'seconds'),
    concurrency: Math.round(positive(values.concurrency ?? process.env.BENCH_CONCURRENCY, 64, 'concurrency')),
    ceilingOnly: values['ceiling-only'] === true,
    serverArgs: values['server-arg'] ?? [],
    ...(values['json-out'] !== undefined ? { jsonOut: values['json-out'] } : {}),
  });
}

if (isEntryPoint(import.meta.url)) {
  try {
    const code = await main(process.argv.slice(2));
    if (code >= 0) process.exit(code);
  } catch (e) {
    process.stderr.write(`bench: ${(e as Error).message}\n`);
    process.exit(2);
  }
}
