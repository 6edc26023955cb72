/**
 * Watch benchmark (`node dist/bench/watch.bench.js`).
 *
 * Starts one API server node with the e2e harness, opens W concurrent watches (default 1,000) on
 * one namespace's ConfigMaps over HTTP/2 (100 streams per TLS session, as client-go multiplexes
 * watches), then creates ConfigMaps at R writes/s (default 100) for S seconds (default 10) and
 * measures, for every (watcher, event) pair, the delivery latency from the write's
 * acknowledgement (its 201 response reaching this client) to the event's arrival at that
 * watcher (0 when the event came first). Reports p50/p99/max, events delivered vs expected, and
 * the server's RSS (VmRSS) before the watches, with them idle, and after the writes; the RSS
 * added per 1,000 watchers is (idle - before) scaled to 1,000. Targets: p99 < 100 ms, RSS added
 * < 200 MiB per 1,000 watchers. The client runs in this process; event lines are matched by
 * object name without a full JSON parse so the client is not the bottleneck.
 *
 * Flags: --watchers N (env BENCH_WATCHERS), --rate N writes/s (env BENCH_WATCH_RATE), --seconds N
 * (env BENCH_SECONDS), --json-out FILE, --server-arg ARG (repeatable).
 * Exit code 0 when every watcher received every event, 1 otherwise (targets are reported, not
 * enforced), 2 on a setup failure.
 */
import { readFileSync, promises as fs } from 'node:fs';
import * as http2 from 'node:http2';
import { parseArgs } from 'node:util';
import { Pool } from 'undici7';
import { type ServerHandle, startServer } from '../test/support/server.js';
import { percentile, rssMiB } from './api.bench.js';
import { isEntryPoint } from '../cluster/entry-point.js';
import { positive } from './flags.js';

/** Options of {@link runWatchBench}. */
export interface WatchBenchOptions {
  readonly watchers: number;
  readonly rate: number;
  readonly seconds: number;
  readonly serverArgs?: readonly string[];
  readonly jsonOut?: string;
}

/** Figures of one run. */
export interface WatchBenchResult {
  readonly watchers: number;
  readonly writes: number;
  readonly writeErrors: number;
  readonly eventsExpected: number;
  readonly eventsDelivered: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly rssBeforeMiB?: number;
  readonly rssIdleMiB?: number;
  readonly rssAfterMiB?: number;
  readonly rssPer1000MiB?: number;
  readonly targets: { readonly p99: boolean; readonly rss: boolean | undefined };
}

const STREAMS_PER_SESSION = 100;
const NS = 'bench-watch';
const NAME_RE = /"name":"(bw-\d+)"/g;

/** One watch stream: records when each bench object's event arrived. */
class Watcher {
  readonly arrivals = new Map<string, number>();
  private rest = '';
  closed = false;

  constructor(session: http2.ClientHttp2Session, path: string, onReady: () => void, onError: (e: Error) => void) {
    const req = session.request({ ':method': 'GET', ':path': path });
    req.setEncoding('utf8');
    req.on('response', (h) => {
      if (Number(h[':status']) !== 200) onError(new Error(`watch answered ${String(h[':status'])}`));
      else onReady();
    });
    req.on('data', (chunk: string) => {
      const now = performance.now();
      const text = this.rest + chunk;
      const cut = text.lastIndexOf('\n');
      this.rest = cut < 0 ? text : text.slice(cut + 1);
      const complete = cut < 0 ? '' : text.slice(0, cut);
      NAME_RE.lastIndex = 0;
      for (let m = NAME_RE.exec(complete); m !== null; m = NAME_RE.exec(complete)) {
        if (!this.arrivals.has(m[1]!)) this.arrivals.set(m[1]!, now);
      }
    });
    req.on('close', () => {
      this.closed = true;
    });
    req.on('error', onError);
  }
}

/** User+system CPU seconds of a process from /proc/<pid>/stat; undefined if unavailable. */
function cpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return undefined;
  }
}

function sessionTo(server: ServerHandle): http2.ClientHttp2Session {
  return http2.connect(server.url, { ca: server.caPem, cert: server.adminCertPem, key: server.adminKeyPem });
}

/** Runs the benchmark and prints the figures. */
export async function runWatchBench(opts: WatchBenchOptions): Promise<WatchBenchResult> {
  const server = await startServer({ args: ['--min-request-timeout', '3600', ...(opts.serverArgs ?? [])] });
  const sessions: http2.ClientHttp2Session[] = [];
  const pool = new Pool(server.url, { connect: { ca: server.caPem, cert: server.adminCertPem, key: server.adminKeyPem }, connections: 8 });
  try {
    const send = async (method: string, path: string, body?: unknown) => {
      const r = await pool.request({
        method: method as 'POST',
        path,
        headers: { 'content-type': 'application/json' },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      const text = await r.body.text();
      return { status: r.statusCode, text };
    };
    await send('POST', '/api/v1/namespaces', { metadata: { name: NS } });
    const listed = await send('GET', `/api/v1/namespaces/${NS}/configmaps`);
    const rv = (JSON.parse(listed.text) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    await new Promise((r) => setTimeout(r, 500));
    const rssBefore = rssMiB(server.pid);

    // Open the watches, 100 streams per session.
    const watchers: Watcher[] = [];
    let ready = 0;
    const failures: string[] = [];
    const path = `/api/v1/namespaces/${NS}/configmaps?watch=true&resourceVersion=${rv}`;
    for (let i = 0; i < opts.watchers; i++) {
      if (i % STREAMS_PER_SESSION === 0) {
        const s = sessionTo(server);
        s.on('error', (e) => failures.push(e.message));
        sessions.push(s);
      }
      watchers.push(
        new Watcher(
          sessions[sessions.length - 1]!,
          path,
          () => ready++,
          (e) => failures.push(e.message),
        ),
      );
    }
    const openDeadline = Date.now() + 60_000;
    while (ready + failures.length < opts.watchers && Date.now() < openDeadline) await new Promise((r) => setTimeout(r, 50));
    if (ready < opts.watchers) throw new Error(`only ${ready}/${opts.watchers} watches opened (${failures.slice(0, 3).join('; ')})`);
    await new Promise((r) => setTimeout(r, 1000));
    const rssIdle = rssMiB(server.pid);

    // Writes at a fixed rate; each acknowledgement time is recorded per object name.
    const acked = new Map<string, number>();
    let writes = 0;
    let writeErrors = 0;
    const total = Math.round(opts.rate * opts.seconds);
    const inflight: Promise<void>[] = [];
    const serverCpu0 = cpuSeconds(server.pid);
    const clientCpu0 = process.cpuUsage();
    const start = performance.now();
    for (let i = 0; i < total; i++) {
      const due = start + (i * 1000) / opts.rate;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const name = `bw-${i}`;
      inflight.push(
        send('POST', `/api/v1/namespaces/${NS}/configmaps`, {
          metadata: { name, labels: { bench: 'watch' } },
          data: { i: String(i), payload: 'x'.repeat(256) },
        }).then(
          (r) => {
            if (r.status === 201) {
              acked.set(name, performance.now());
              writes++;
            } else writeErrors++;
          },
          () => {
            writeErrors++;
          },
        ),
      );
    }
    await Promise.all(inflight);
    // Let the last events arrive (bounded).
    const settleDeadline = Date.now() + 10_000;
    const delivered = () => watchers.reduce((n, w) => n + [...acked.keys()].filter((k) => w.arrivals.has(k)).length, 0);
    while (Date.now() < settleDeadline && watchers.some((w) => w.arrivals.size < acked.size)) await new Promise((r) => setTimeout(r, 100));
    const rssAfter = rssMiB(server.pid);
    const elapsed = (performance.now() - start) / 1000;
    const serverCpu1 = cpuSeconds(server.pid);
    const clientCpu = process.cpuUsage(clientCpu0);
    const serverCpuShare = serverCpu0 !== undefined && serverCpu1 !== undefined ? (serverCpu1 - serverCpu0) / elapsed : undefined;
    const clientCpuShare = (clientCpu.user + clientCpu.system) / 1e6 / elapsed;

    const latencies: number[] = [];
    for (const w of watchers) {
      for (const [name, at] of acked) {
        const got = w.arrivals.get(name);
        if (got !== undefined) latencies.push(Math.max(0, got - at));
      }
    }
    latencies.sort((a, b) => a - b);
    const eventsDelivered = delivered();
    const rssPer1000 = rssBefore !== undefined && rssIdle !== undefined ? ((rssIdle - rssBefore) * 1000) / opts.watchers : undefined;
    const result: WatchBenchResult = {
      watchers: opts.watchers,
      writes,
      writeErrors,
      eventsExpected: writes * opts.watchers,
      eventsDelivered,
      p50Ms: percentile(latencies, 0.5),
      p99Ms: percentile(latencies, 0.99),
      maxMs: latencies.length ? latencies[latencies.length - 1]! : Number.NaN,
      ...(rssBefore !== undefined ? { rssBeforeMiB: rssBefore } : {}),
      ...(rssIdle !== undefined ? { rssIdleMiB: rssIdle } : {}),
      ...(rssAfter !== undefined ? { rssAfterMiB: rssAfter } : {}),
      ...(rssPer1000 !== undefined ? { rssPer1000MiB: rssPer1000 } : {}),
      targets: { p99: percentile(latencies, 0.99) < 100, rss: rssPer1000 === undefined ? undefined : rssPer1000 < 200 },
    };
    const f = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? 'n/a' : n.toFixed(1));
    process.stdout.write(
      [
        `watch bench: ${opts.watchers} watchers over HTTP/2, ${opts.rate} writes/s for ${opts.seconds} s (${writes} writes, ${writeErrors} errors)`,
        `  events delivered  ${eventsDelivered} / ${result.eventsExpected}`,
        `  latency (ack -> event)  p50 ${f(result.p50Ms)} ms  p99 ${f(result.p99Ms)} ms  max ${f(result.maxMs)} ms`,
        `  server RSS  before ${f(rssBefore)} MiB  with idle watchers ${f(rssIdle)} MiB  after writes ${f(rssAfter)} MiB`,
        `  RSS added per 1,000 watchers  ${f(rssPer1000)} MiB`,
        `  CPU (cores busy)  server ${f(serverCpuShare === undefined ? undefined : serverCpuShare * 100)}%  bench client ${f(clientCpuShare * 100)}%`,
        `  target p99 < 100 ms: ${result.targets.p99 ? 'met' : 'NOT met'}`,
        `  target RSS < 200 MiB per 1,000 watchers: ${result.targets.rss === undefined ? 'unknown' : result.targets.rss ? 'met' : 'NOT met'}`,
        '',
      ].join('\n'),
    );
    if (opts.jsonOut) await fs.writeFile(opts.jsonOut, JSON.stringify(result, null, 2));
    return result;
  } finally {
    for (const s of sessions) s.destroy();
    await pool.close().catch(() => undefined);
    await server.cleanup();
  }
}

/** CLI entry: parses flags, runs, returns the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      watchers: { type: 'string' },
      rate: { type: 'string' },
      seconds: { type: 'string' },
      'json-out': { type: 'string' },
      'server-arg': { type: 'string', multiple: true },
    },
  });
  const r = await runWatchBench({
    watchers: Math.round(positive(values.watchers ?? process.env.BENCH_WATCHERS, 1000, 'watchers')),
    rate: positive(values.rate ?? process.env.BENCH_WATCH_RATE, 100, 'rate'),
    seconds: positive(values.seconds ?? process.env.BENCH_SECONDS, 10, 'seconds'),
    serverArgs: values['server-arg'] ?? [],
    ...(values['json-out'] !== undefined ? { jsonOut: values['json-out'] } : {}),
  });
  return r.eventsDelivered === r.eventsExpected && r.writeErrors === 0 ? 0 : 1;
}

if (isEntryPoint(import.meta.url)) {
  try {
    process.exit(await main(process.argv.slice(2)));
  } catch (e) {
    process.stderr.write(`watch bench: ${(e as Error).message}\n`);
    process.exit(2);
  }
}
