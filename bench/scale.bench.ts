/**
 * Scale benchmark (`npm run bench:scale`): one node holding N ConfigMaps (default 100,000 of
 * about 1 KiB in 10 namespaces, created by the bench), then:
 *   unpaginated list     GET /api/v1/configmaps
 *   paged list           the same with limit=500, following continue tokens to the end; a write
 *                        after the first page moves the current revision, so every later page
 *                        reads at a past revision (as Lease renewals make happen in practice)
 *   page (current)       GET ?limit=500 at the current revision (median of 5)
 *   page (past)          GET ?limit=500&resourceVersion=R&resourceVersionMatch=Exact with R
 *                        before a later write: the first page of an Exact-revision list
 *                        (median of 5), over all namespaces and over one namespace
 *   selective selector   a page with a label selector matching 1% of the objects, at the
 *                        current and at a past revision (selectors filter after the walk)
 *   one object by name   a list, and a watch's first event, with fieldSelector=metadata.name
 *                        in one namespace (median of 5): the one key is read
 *   cold start           stop, start again on the same data, until ready
 *   RSS                  after the start, and the highest sampled during the list load
 *   bytes on disk        the data directory
 * and, when etcd and etcdctl are installed, the same data in etcd (one member on 127.0.0.1):
 * etcdctl `get --prefix` unpaginated and paged with `--limit 500 --rev R`, and the time of an
 * etcdctl process that reads nothing (each page pays it once).
 *
 * Flags: --objects N (env BENCH_SCALE_OBJECTS, default 100000), --namespaces N (default 10),
 * --limit N (default 500), --no-etcd, --json-out FILE. Prints one line per figure. Exit code 0
 * when every phase ran, 1 otherwise (the bounds are reported, not enforced).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { LeanPool } from './lean.client.js';
import { rssMiB } from './api.bench.js';
import { median } from './cluster.bench.js';
import { type ServerHandle, getFreePorts, startServer } from '../test/support/server.js';
import { isEntryPoint } from '../cluster/entry-point.js';

const run = promisify(execFile);

/** Options of the scale bench. */
export interface ScaleOptions {
  readonly objects: number;
  readonly namespaces: number;
  readonly limit: number;
  readonly etcd: boolean;
  readonly jsonOut?: string;
}

/** One printed figure. */
export interface ScaleFigure {
  readonly name: string;
  readonly value: number;
  readonly unit: 'ms' | 'MiB' | 'items' | 'pages' | 'x' | '/s';
}

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** The ConfigMap body of object `i` (about 1 KiB). */
function configMap(ns: string, i: number): string {
  // The label matches 1 object in 100: a selective selector's page walks about 100 objects per item.
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `cm-${i}`, namespace: ns, labels: { mod: String(i % 100) } },
    data: { payload: `${i}:`.padEnd(1000, 'x') },
  });
}

/** Runs `count` tasks with `concurrency` in flight. */
async function pooled(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t = performance.now();
  const out = await fn();
  return [out, performance.now() - t];
}

/** Size of a directory tree in bytes. */
async function du(dir: string): Promise<number> {
  let total = 0;
  for (const e of await fs.readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += await du(p);
    else if (e.isFile()) total += (await fs.stat(p)).size;
  }
  return total;
}

/** Keeps the highest RSS of `pid` seen while sampling runs. */
function sampleRss(pid: number | undefined): { stop(): number } {
  let max = rssMiB(pid) ?? 0;
  const t = setInterval(() => (max = Math.max(max, rssMiB(pid) ?? 0)), 50);
  return {
    stop() {
      clearInterval(t);
      return Math.max(max, rssMiB(pid) ?? 0);
    },
  };
}

interface ListBody {
  metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
  items: unknown[];
}

/** How many of `items` are the bench's own ConfigMaps (named cm-<i>). */
function ownCount(items: unknown[]): number {
  return items.filter((i) => (i as { metadata?: { name?: string } }).metadata?.name?.startsWith('cm-')).length;
}

async function benchServer(o: ScaleOptions, figures: ScaleFigure[]): Promise<void> {
  const add = (name: string, value: number, unit: ScaleFigure['unit']): void => {
    figures.push({ name, value, unit });
    log(`${name.padEnd(52)} ${unit === 'ms' || unit === 'MiB' ? value.toFixed(1) : String(Math.round(value * 100) / 100)} ${unit}`);
  };
  const server: ServerHandle = await startServer({ readyTimeoutMs: 120_000 });
  const pool = new LeanPool(server.url, {
    connections: 64,
    tls: { ca: server.caPem, cert: server.adminCertPem, key: server.adminKeyPem },
    timeoutMs: 300_000,
    maxResponseBytes: 1 << 30,
  });
  // Lists through Node's https with a keep-alive agent: responses of 100+ MiB are collected as
  // chunks and joined once.
  const agent = new https.Agent({ keepAlive: true, maxSockets: 4, ca: server.caPem, cert: server.adminCertPem, key: server.adminKeyPem });
  const get = (p: string): Promise<ListBody> =>
    new Promise((resolve, reject) => {
      const req = https.request(`${server.url}${p}`, { agent, headers: { accept: 'application/json' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) reject(new Error(`GET ${p} -> ${res.statusCode} ${text.slice(0, 300)}`));
          else resolve(JSON.parse(text) as ListBody);
        });
      });
      req.on('error', reject);
      req.end();
    });
  // Milliseconds until a watch's first event arrives (the initial ADDED), then closes it.
  const firstEvent = (p: string): Promise<number> =>
    new Promise((resolve, reject) => {
      const started = performance.now();
      const req = https.request(`${server.url}${p}`, { agent, headers: { accept: 'application/json' } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
          if (!text.includes('\n')) return;
          const type = (JSON.parse(text.slice(0, text.indexOf('\n'))) as { type: string }).type;
          req.destroy();
          if (res.statusCode !== 200 || type !== 'ADDED') reject(new Error(`GET ${p} -> ${res.statusCode} ${text.slice(0, 300)}`));
          else resolve(performance.now() - started);
        });
        res.on('error', () => undefined);
      });
      req.on('error', (e) => (req.destroyed ? undefined : reject(e)));
      req.end();
    });
  const post = async (p: string, body: string): Promise<void> => {
    const res = await pool.request({ method: 'POST', path: p, headers: { 'content-type': 'application/json' }, body });
    const text = await res.body.text();
    if (res.statusCode !== 201) throw new Error(`POST ${p} -> ${res.statusCode} ${text.slice(0, 300)}`);
  };
  let ticks = 0;
  let load: { stop(): number } | undefined;
  // Moves the current revision without touching the bench's ConfigMaps (the new namespace gets a
  // kube-root-ca.crt of its own).
  const tick = () => post('/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: `scale-tick-${ticks++}` } }));
  try {
    const nss = Array.from({ length: o.namespaces }, (_, i) => `scale-${i}`);
    for (const ns of nss) await post('/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }));
    log(`creating ${o.objects} ConfigMaps in ${o.namespaces} namespaces...`);
    const [, createMs] = await timed(() =>
      pooled(o.objects, 64, (i) => post(`/api/v1/namespaces/${nss[i % nss.length]}/configmaps`, configMap(nss[i % nss.length]!, i))),
    );
    add('creates', (o.objects / createMs) * 1000, '/s');

    load = sampleRss(server.pid);
    // Every namespace also holds its kube-root-ca.crt: the bench counts its own objects only.
    const [all, listMs] = await timed(() => get('/api/v1/configmaps'));
    if (ownCount(all.items) !== o.objects) throw new Error(`unpaginated list returned ${ownCount(all.items)} of the bench's items`);
    add('unpaginated list', listMs, 'ms');
    let items = 0;
    let pages = 0;
    const [, pagedMs] = await timed(async () => {
      let cont: string | undefined;
      do {
        const page = await get(`/api/v1/configmaps?limit=${o.limit}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
        if (pages === 0) await tick();
        items += ownCount(page.items);
        pages++;
        cont = page.metadata.continue;
      } while (cont);
    });
    if (items !== o.objects) throw new Error(`paged list returned ${items} items`);
    add(`paged list (limit ${o.limit}, ${pages} pages)`, pagedMs, 'ms');
    add('paged / unpaginated', pagedMs / listMs, 'x');

    const currentTimes: number[] = [];
    for (let i = 0; i < 5; i++) currentTimes.push((await timed(() => get(`/api/v1/configmaps?limit=${o.limit}`)))[1]);
    add(`page at the current revision (limit ${o.limit})`, median(currentTimes), 'ms');
    const past = (await get('/api/v1/configmaps?limit=1')).metadata.resourceVersion;
    await tick();
    const pastTimes: number[] = [];
    let remaining: number | undefined;
    for (let i = 0; i < 5; i++) {
      const [page, ms] = await timed(() => get(`/api/v1/configmaps?limit=${o.limit}&resourceVersion=${past}&resourceVersionMatch=Exact`));
      remaining = page.metadata.remainingItemCount;
      pastTimes.push(ms);
    }
    add(`page at a past revision (Exact, limit ${o.limit})`, median(pastTimes), 'ms');
    add('past page / current page', median(pastTimes) / median(currentTimes), 'x');
    add('remainingItemCount of the past page', remaining ?? -1, 'items');
    const atPast = await get(`/api/v1/configmaps?resourceVersion=${past}&resourceVersionMatch=Exact`);
    add('items at the past revision', atPast.items.length, 'items');
    const nsTimes: number[] = [];
    for (let i = 0; i < 5; i++)
      nsTimes.push((await timed(() => get(`/api/v1/namespaces/${nss[0]}/configmaps?limit=${o.limit}&resourceVersion=${past}&resourceVersionMatch=Exact`)))[1]);
    add(`Exact list of one namespace (limit ${o.limit})`, median(nsTimes), 'ms');
    // Selectors filter after the walk: a page of a 1% selector walks about 100 keys per item.
    const selTimes: number[] = [];
    let selItems = 0;
    for (let i = 0; i < 3; i++) {
      const [page, ms] = await timed(() => get(`/api/v1/configmaps?limit=${o.limit}&labelSelector=mod%3D7`));
      selItems = page.items.length;
      selTimes.push(ms);
    }
    add(`page with a 1% label selector (limit ${o.limit}, ${selItems} items)`, median(selTimes), 'ms');
    const selPast: number[] = [];
    for (let i = 0; i < 3; i++)
      selPast.push((await timed(() => get(`/api/v1/configmaps?limit=${o.limit}&labelSelector=mod%3D7&resourceVersion=${past}&resourceVersionMatch=Exact`)))[1]);
    add(`  the same at a past revision (Exact)`, median(selPast), 'ms');
    // A field selector on metadata.name (kubectl get NAME -w, kubectl wait, rollout status) reads
    // that one key, however many objects its namespace holds.
    // Object k * namespaces is in the first namespace.
    const perNs = Math.floor(o.objects / o.namespaces);
    const pick = (i: number): number => ((i * 7919) % perNs) * o.namespaces;
    const byName: number[] = [];
    for (let i = 0; i < 5; i++) {
      const n = pick(i);
      const [list, ms] = await timed(() => get(`/api/v1/namespaces/${nss[0]}/configmaps?fieldSelector=metadata.name%3Dcm-${n}`));
      if (list.items.length !== 1) throw new Error(`a list by name returned ${list.items.length} items`);
      byName.push(ms);
    }
    add(`list by fieldSelector metadata.name (one of ${perNs})`, median(byName), 'ms');
    const watchByName: number[] = [];
    for (let i = 0; i < 5; i++)
      watchByName.push(await firstEvent(`/api/v1/namespaces/${nss[0]}/configmaps?watch=1&fieldSelector=metadata.name%3Dcm-${pick(i + 5)}`));
    add('  a watch by the same: first event (new connection)', median(watchByName), 'ms');
    add('RSS under the list load (highest sampled)', load.stop(), 'MiB');
    load = undefined;

    await pool.close();
    agent.destroy();
    await server.stop();
    add('bytes on disk', (await du(server.dataDir)) / (1 << 20), 'MiB');
    const [, startMs] = await timed(() => server.start());
    add('cold start to ready', startMs, 'ms');
    add('RSS after start', rssMiB(server.pid) ?? 0, 'MiB');
  } finally {
    load?.stop();
    await pool.close().catch(() => undefined);
    agent.destroy();
    await server.cleanup();
  }
}

/** Whether a program is on the PATH. */
async function installed(cmd: string): Promise<boolean> {
  return run('sh', ['-c', `command -v ${cmd}`]).then(
    () => true,
    () => false,
  );
}

async function benchEtcd(o: ScaleOptions, figures: ScaleFigure[]): Promise<void> {
  const add = (name: string, value: number, unit: ScaleFigure['unit']): void => {
    figures.push({ name: `etcd: ${name}`, value, unit });
    log(`${`etcd: ${name}`.padEnd(52)} ${unit === 'ms' || unit === 'MiB' ? value.toFixed(1) : String(Math.round(value * 100) / 100)} ${unit}`);
  };
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'kapi-scale-etcd-'));
  const [client, peer] = await getFreePorts(2);
  const endpoint = `http://127.0.0.1:${client}`;
  const etcd: ChildProcess = spawn(
    'etcd',
    [
      '--name',
      'scale',
      '--data-dir',
      path.join(dir, 'data'),
      '--listen-client-urls',
      endpoint,
      '--advertise-client-urls',
      endpoint,
      '--listen-peer-urls',
      `http://127.0.0.1:${peer}`,
      '--initial-advertise-peer-urls',
      `http://127.0.0.1:${peer}`,
      '--initial-cluster',
      `scale=http://127.0.0.1:${peer}`,
      '--quota-backend-bytes',
      String(8 << 30),
    ],
    { stdio: 'ignore' },
  );
  const ctl = (args: string[]) => run('etcdctl', [`--endpoints=${endpoint}`, ...args], { env: { ...process.env, ETCDCTL_API: '3' }, maxBuffer: 1 << 30 });
  try {
    for (let i = 0; ; i++) {
      if (
        await ctl(['endpoint', 'health']).then(
          () => true,
          () => false,
        )
      )
        break;
      if (i > 100) throw new Error('etcd did not become healthy');
      await new Promise((r) => setTimeout(r, 100));
    }
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const prefix = '/registry/configmaps/';
    log(`etcd: loading ${o.objects} keys through the JSON gateway...`);
    await pooled(o.objects, 64, async (i) => {
      const ns = `scale-${i % o.namespaces}`;
      const res = await fetch(`${endpoint}/v3/kv/put`, {
        method: 'POST',
        body: JSON.stringify({ key: b64(`${prefix}${ns}/cm-${i}`), value: b64(configMap(ns, i)) }),
      });
      if (!res.ok) throw new Error(`etcd put -> ${res.status}`);
      await res.arrayBuffer();
    });
    const rev = (JSON.parse((await ctl(['get', 'x', '-w', 'json'])).stdout) as { header: { revision: number } }).header.revision;
    const [, noop] = await timed(() => ctl(['get', '/nothing-here']));
    add('etcdctl process reading nothing', noop, 'ms');
    const [all, listMs] = await timed(() => ctl(['get', '--prefix', prefix, '--rev', String(rev), '-w', 'json']));
    const count = ((JSON.parse(all.stdout) as { kvs?: unknown[] }).kvs ?? []).length;
    if (count !== o.objects) throw new Error(`etcdctl unpaginated get returned ${count} keys`);
    add('unpaginated get --prefix', listMs, 'ms');
    const end = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
    let seen = 0;
    let pages = 0;
    const [, pagedMs] = await timed(async () => {
      let start: string | undefined;
      for (;;) {
        // The next page starts at the last key seen (argv cannot carry the key + \0): one more, skipped.
        const args: string[] = start === undefined ? ['get', '--prefix', prefix] : ['get', start, end];
        const out = await ctl([...args, '--limit', String(start === undefined ? o.limit : o.limit + 1), '--rev', String(rev), '-w', 'json']);
        const body = JSON.parse(out.stdout) as { kvs?: { key: string }[]; more?: boolean };
        const kvs = (body.kvs ?? []).slice(start === undefined ? 0 : 1);
        seen += kvs.length;
        pages++;
        if (!body.more || kvs.length === 0) break;
        start = Buffer.from(kvs[kvs.length - 1]!.key, 'base64').toString();
      }
    });
    if (seen !== o.objects) throw new Error(`etcdctl paging returned ${seen} keys`);
    add(`paged get --limit ${o.limit} --rev (${pages} pages)`, pagedMs, 'ms');
    add('paged / unpaginated', pagedMs / listMs, 'x');
    const pageTimes: number[] = [];
    for (let i = 0; i < 5; i++)
      pageTimes.push((await timed(() => ctl(['get', '--prefix', prefix, '--limit', String(o.limit), '--rev', String(rev), '-w', 'json'])))[1]);
    add(`one page --limit ${o.limit} --rev (incl. process)`, median(pageTimes), 'ms');
    add('bytes on disk', (await du(path.join(dir, 'data'))) / (1 << 20), 'MiB');
  } finally {
    etcd.kill('SIGTERM');
    await new Promise((r) => (etcd.exitCode !== null ? r(undefined) : etcd.once('exit', r)));
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** Runs the bench; returns the exit code. */
export async function runScaleBench(o: ScaleOptions): Promise<number> {
  const figures: ScaleFigure[] = [];
  let failure: string | null = null;
  try {
    await benchServer(o, figures);
    if (o.etcd && (await installed('etcd')) && (await installed('etcdctl'))) await benchEtcd(o, figures);
    else log(o.etcd ? 'etcd: not installed, skipped' : 'etcd: skipped (--no-etcd)');
  } catch (e) {
    failure = (e as Error).stack ?? String(e);
    log(`FAILED: ${failure}`);
  }
  if (o.jsonOut) await fs.writeFile(o.jsonOut, JSON.stringify({ options: o, figures, failure }, null, 2));
  return failure === null ? 0 : 1;
}

if (isEntryPoint(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      objects: { type: 'string', default: process.env.BENCH_SCALE_OBJECTS ?? '100000' },
      namespaces: { type: 'string', default: '10' },
      limit: { type: 'string', default: '500' },
      'no-etcd': { type: 'boolean', default: false },
      'json-out': { type: 'string' },
    },
  });
  const o: ScaleOptions = {
    objects: Number(values.objects),
    namespaces: Number(values.namespaces),
    limit: Number(values.limit),
    etcd: !values['no-etcd'],
    ...(values['json-out'] ? { jsonOut: values['json-out'] } : {}),
  };
  process.exitCode = await runScaleBench(o);
}
