/**
 * Soak run (`npm run soak`, docs/soak.md): a three-node cluster under mixed load for a set time,
 * sampled per node, with bounds on what may grow.
 *
 * The cluster (test/support/cluster.helper.ts) runs with a small --snapshot-count and a short
 * --compaction-interval so Raft snapshots and MVCC compactions happen many times. The load
 * (bench/soak.load.ts): HTTPS clients writing and reading ConfigMaps, Secrets and Leases in
 * several namespaces over all three nodes, the object count bounded, and three resuming
 * watches per node. Every --sample-seconds each node's /metrics (RSS, V8 heap used, open fds,
 * event-loop delay p99, compactions, Raft snapshot index), the size of its data dir and the
 * load's counters become one CSV row per node. At the end the summary (bench/soak.report.ts)
 * prints first/last/max and growth per figure and the bounds; exit code 1 when one fails.
 *
 * Flags (env in brackets): --minutes N [SOAK_MINUTES] (default 30), --sample-seconds N
 * [SOAK_SAMPLE_SECONDS] (10), --csv FILE (default <run dir>/soak.csv), --json-out FILE,
 * --rate N requests/s [SOAK_RATE] (40), --workers N (6), --namespaces N (4),
 * --objects-per-worker N (20), --snapshot-count N (500), --compaction-interval N seconds (60),
 * --watch-timeout-seconds N (60; each watch asks for between N and 2N), --object-kib N (16, the
 * data in each ConfigMap). SIGINT or SIGTERM ends
 * the load early; the samples so far are evaluated and the cluster is stopped.
 */
import { mkdir, readdir, readFile, writeFile, appendFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { directorySize } from '@app/storage';
import { isEntryPoint } from '../cluster/entry-point.js';
import { startThreeNodeCluster, NODE_NAMES } from '../test/support/cluster.helper.js';
import { closeHttpClients, request, type ServerHandle } from '../test/support/server.js';
import { SoakLoad } from './soak.load.js';
import {
  type BoundResult,
  type FigureSummary,
  type SoakSample,
  byNode,
  csvHeader,
  csvRow,
  evaluateBounds,
  formatSummary,
  parseMetrics,
  summarize,
} from './soak.report.js';

/** Settings of one soak run. */
export interface SoakOptions {
  readonly minutes: number;
  readonly sampleSeconds: number;
  readonly csv: string;
  readonly jsonOut?: string;
  readonly rate: number;
  readonly workers: number;
  readonly namespaces: number;
  readonly objectsPerWorker: number;
  readonly snapshotCount: number;
  readonly compactionIntervalS: number;
  readonly watchTimeoutS: number;
  readonly objectKiB: number;
}

/** What a run hands back (and writes to --json-out). */
export interface SoakResult {
  readonly options: SoakOptions;
  readonly startedAt: string;
  readonly endedAt: string;
  readonly samples: SoakSample[];
  readonly figures: FigureSummary[];
  readonly bounds: BoundResult[];
  readonly totals: ReturnType<SoakLoad['totals']>;
  readonly errorLog: string[];
  readonly pass: boolean;
}

function num(v: string | boolean | undefined, env: string | undefined, dflt: number): number {
  const n = Number(typeof v === 'string' ? v : (env ?? dflt));
  if (!Number.isFinite(n) || n <= 0) throw new Error(`bad number ${JSON.stringify(v ?? env)}`);
  return n;
}

/** Reads the flags (see the module comment) of `argv`. */
export function soakOptions(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): SoakOptions {
  const { values: f } = parseArgs({
    args: [...argv],
    options: Object.fromEntries(
      [
        'minutes',
        'sample-seconds',
        'csv',
        'json-out',
        'rate',
        'workers',
        'namespaces',
        'objects-per-worker',
        'snapshot-count',
        'compaction-interval',
        'watch-timeout-seconds',
        'object-kib',
      ].map((k) => [k, { type: 'string' as const }]),
    ),
    strict: true,
  });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  return {
    minutes: num(f.minutes, env.SOAK_MINUTES, 30),
    sampleSeconds: num(f['sample-seconds'], env.SOAK_SAMPLE_SECONDS, 10),
    csv: typeof f.csv === 'string' ? f.csv : join(tmpdir(), `kapi-soak-${stamp}`, 'soak.csv'),
    ...(typeof f['json-out'] === 'string' ? { jsonOut: f['json-out'] } : {}),
    rate: num(f.rate, env.SOAK_RATE, 40),
    workers: num(f.workers, undefined, 6),
    namespaces: num(f.namespaces, undefined, 4),
    objectsPerWorker: num(f['objects-per-worker'], undefined, 20),
    snapshotCount: num(f['snapshot-count'], undefined, 500),
    compactionIntervalS: num(f['compaction-interval'], undefined, 60),
    watchTimeoutS: num(f['watch-timeout-seconds'], undefined, 60),
    objectKiB: num(f['object-kib'], undefined, 16),
  };
}

/** Bytes of the files under `dir` (0 when it does not exist): what /metrics reports as the store's size. */
export const dirBytes = directorySize;

async function procFds(pid: number): Promise<number> {
  return readdir(`/proc/${pid}/fd`)
    .then((l) => l.length)
    .catch(() => NaN);
}

async function procRss(pid: number): Promise<number> {
  const m = /VmRSS:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, 'utf8').catch(() => ''));
  return m ? Number(m[1]) * 1024 : NaN;
}

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** Runs the soak (see the module comment) and returns its result; the cluster is gone afterwards. */
export async function runSoak(o: SoakOptions): Promise<SoakResult> {
  const startedAt = new Date().toISOString();
  await mkdir(join(o.csv, '..'), { recursive: true });
  await writeFile(o.csv, `${csvHeader()}\n`);
  log(`soak: ${o.minutes} min, sample every ${o.sampleSeconds} s, ${o.rate} req/s over ${o.workers} workers, CSV ${o.csv}`);
  const cluster = await startThreeNodeCluster('kapi-soak-', [
    '--snapshot-count',
    String(o.snapshotCount),
    '--compaction-interval',
    String(o.compactionIntervalS),
  ]);
  const nodes: ServerHandle[] = cluster.nodes;
  const load = new SoakLoad(nodes, {
    workers: o.workers,
    namespaces: o.namespaces,
    objectsPerWorker: o.objectsPerWorker,
    ratePerS: o.rate,
    watchTimeoutS: o.watchTimeoutS,
    objectKiB: o.objectKiB,
  });
  const samples: SoakSample[] = [];
  const prevRequests = nodes.map(() => 0);
  let prevT = 0;
  let t0 = Date.now();
  const sample = async (): Promise<void> => {
    const elapsedS = (Date.now() - t0) / 1000;
    const time = new Date().toISOString();
    const rows = await Promise.all(
      nodes.map(async (n, i): Promise<SoakSample> => {
        const pid = n.pid ?? 0;
        let m = new Map<string, number>();
        try {
          m = parseMetrics((await request(n, 'GET', '/metrics', { timeoutMs: 30_000 })).body);
        } catch (e) {
          log(`soak: /metrics of ${NODE_NAMES[i]} failed: ${(e as Error).message}`);
        }
        const g = (k: string): number => m.get(k) ?? NaN;
        const st = load.stats[i]!;
        const [dataBytes, mvccBytes, raftBytes, fds, rss] = await Promise.all([
          dirBytes(n.dataDir),
          dirBytes(join(n.dataDir, 'mvcc')),
          dirBytes(join(n.dataDir, 'raft')),
          procFds(pid),
          procRss(pid),
        ]);
        const dt = elapsedS - prevT;
        const s: SoakSample = {
          elapsedS: Math.round(elapsedS * 10) / 10,
          time,
          node: NODE_NAMES[i]!,
          pid,
          rssBytes: Number.isFinite(g('process_resident_memory_bytes')) ? g('process_resident_memory_bytes') : rss,
          heapUsedBytes: g('nodejs_heap_size_used_bytes'),
          openFds: Number.isFinite(g('process_open_fds')) ? g('process_open_fds') : fds,
          eventLoopP99Ms: g('nodejs_eventloop_lag_p99_seconds') * 1000,
          dataBytes,
          mvccBytes,
          raftBytes,
          requestsTotal: st.requests,
          requestsPerS: prevT > 0 && dt > 0 ? Math.round(((st.requests - prevRequests[i]!) / dt) * 10) / 10 : 0,
          errorsTotal: st.errors + st.watchErrors,
          transientTotal: st.transient,
          watchEventsTotal: st.watchEvents,
          watchRestartsTotal: st.watchRestarts + st.watchRelists,
          compactionsTotal: g('kapi_mvcc_compactions_total'),
          raftSnapshotIndex: g('kapi_raft_snapshot_index'),
          appliedIndex: g('etcd_server_proposals_applied_total'),
          revision: g('etcd_debugging_mvcc_current_revision'),
          compactRevision: g('etcd_debugging_mvcc_compact_revision'),
          isLeader: g('etcd_server_is_leader'),
        };
        prevRequests[i] = st.requests;
        return s;
      }),
    );
    // In node order, so the CSV and the summary list n1, n2, n3.
    samples.push(...rows);
    await appendFile(o.csv, rows.map((s) => `${csvRow(s)}\n`).join(''));
    prevT = elapsedS;
  };
  let result: SoakResult;
  try {
    await load.setup();
    t0 = Date.now();
    load.start();
    let end = t0 + o.minutes * 60_000;
    // Ctrl-C (or SIGTERM) ends the load early: the run is still evaluated and the cluster stopped.
    const stopEarly = (): void => {
      end = Date.now();
      wake?.();
    };
    let wake: (() => void) | undefined;
    process.once('SIGINT', stopEarly).once('SIGTERM', stopEarly);
    let next = t0;
    for (;;) {
      await sample();
      const tot = load.totals();
      const last = samples.slice(-3);
      log(
        `soak: ${Math.round((Date.now() - t0) / 1000)} s, ${tot.requests} requests (${tot.errors + tot.watchErrors} errors, ${tot.transient} transient), ` +
          `${tot.watchEvents} watch events; RSS MiB ${last.map((s) => (s.rssBytes / 2 ** 20).toFixed(0)).join('/')}, data MiB ${last.map((s) => (s.dataBytes / 2 ** 20).toFixed(1)).join('/')}`,
      );
      if (Date.now() >= end) break;
      next += o.sampleSeconds * 1000;
      await new Promise<void>((r) => {
        const timer = setTimeout(r, Math.max(0, Math.min(next, end) - Date.now()));
        wake = () => {
          clearTimeout(timer);
          r();
        };
      });
    }
    process.off('SIGINT', stopEarly).off('SIGTERM', stopEarly);
    await load.stop();
    const totals = load.totals();
    const grouped = byNode(samples);
    const bounds = evaluateBounds(grouped, {
      errors: totals.errors + totals.watchErrors,
      watchBackwards: totals.watchBackwards,
      minCompactions: Math.max(1, Math.floor((o.minutes * 60) / o.compactionIntervalS / 2)),
      minSnapshots: 2,
    });
    const figures = summarize(grouped);
    result = {
      options: o,
      startedAt,
      endedAt: new Date().toISOString(),
      samples,
      figures,
      bounds,
      totals,
      errorLog: load.errorLog,
      pass: bounds.every((b) => b.pass),
    };
  } finally {
    await load.stop();
    await closeHttpClients();
    await cluster.cleanup();
  }
  return result;
}

/** Prints the result's summary: the load's totals, the figures and bounds tables, the errors seen. */
export function printResult(r: SoakResult): void {
  const t = r.totals;
  log('');
  log(`soak ${r.startedAt} .. ${r.endedAt}: ${t.requests} requests, ${t.errors} errors, ${t.transient} transient (429/503/504)`);
  log(
    `watches: ${t.watchEvents} events, ${t.watchRestarts} resumed from their last resourceVersion, ${t.watchRelists} relists after 410, ${t.watchErrors} errors, ${t.watchBackwards} backwards`,
  );
  log('');
  log(formatSummary(r.figures, r.bounds));
  if (r.errorLog.length) log(`\nerrors (first ${r.errorLog.length}):\n${r.errorLog.join('\n')}`);
  log(`\nCSV: ${r.options.csv}`);
  log(r.pass ? 'soak: every bound held' : 'soak: a bound FAILED');
}

if (isEntryPoint(import.meta.url)) {
  const opts = soakOptions(process.argv.slice(2));
  const r = await runSoak(opts);
  printResult(r);
  if (opts.jsonOut) await writeFile(opts.jsonOut, JSON.stringify(r, null, 2));
  process.exit(r.pass ? 0 : 1);
}
