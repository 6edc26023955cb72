/**
 * Snapshot transfer benchmark (`node dist/bench/snapshot.bench.js`, part of `npm run bench`):
 * what a leader and a lagging follower pay to ship the whole store (docs/cluster.md "Snapshots
 * and compaction"), at two store sizes, S and 2S.
 *
 * For each size a store of ConfigMap-like objects (with some history) is built, then, each in a
 * fresh child process so that its memory is its own:
 *   export   MvccStore.exportSnapshotToFile, what the leader does
 *   import   MvccStore.importSnapshotFrom a file stream into an empty store, what the follower does
 *   etcd     the store as etcd's backend file (etcdBackendOf), what a node does for `etcdctl
 *            snapshot save`
 * The anchor is a plain copy of the snapshot file (read and write of the same bytes, fsynced);
 * the etcd file's time is also given against the export's.
 * Printed: MB/s of each and its ratio to the copy, and each child's peak RSS above its level
 * before the operation. Target: going from S to 2S raises neither peak by more than 25% of the
 * bytes added (memory does not grow with the store; it did, at least twice the snapshot's size,
 * when snapshots were built and installed in memory).
 *
 * Flags: --megabytes S (env BENCH_SNAPSHOT_MB, default 128), --json-out FILE.
 */
import { spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { copyFile, mkdtemp, open, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { MvccStore, type TxnCommand } from '@app/mvcc';
import { etcdBackendOf } from '../apps/apiserver/src/cluster/cluster.etcd-export.js';
import { isEntryPoint } from '../cluster/entry-point.js';

const MB = 1024 * 1024;
/** Bytes of one object's value (a ConfigMap of a few fields, as the API stores it). */
const VALUE_BYTES = 1500;
/** Every tenth object is updated once, so the snapshot carries history too. */
const UPDATE_EVERY = 10;

/** Result of one child: how long the operation took and its process's peak RSS above the start. */
export interface ChildResult {
  ms: number;
  peakRssGrowth: number;
}

/** Writes objects into a new store in `dir` until about `bytes` of values are stored. */
async function buildStore(dir: string, bytes: number): Promise<void> {
  const store = await MvccStore.open(dir);
  const enc = new TextEncoder();
  const value = (i: number, gen: number): Uint8Array => {
    // Varied content (LevelDB compresses blocks): a random-looking payload per object.
    const payload = Buffer.alloc(VALUE_BYTES / 2, `${i}-${gen}-`)
      .toString('hex')
      .slice(0, VALUE_BYTES - 200);
    return enc.encode(
      JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: 'bench', uid: `uid-${i}` }, data: { payload } }),
    );
  };
  const count = Math.ceil(bytes / (VALUE_BYTES * (1 + 1 / UPDATE_EVERY)));
  let index = 0;
  const put = (i: number, gen: number): TxnCommand => ({
    compares: [],
    success: [{ type: 'put', key: `/registry/core/configmaps/bench/cm-${i}`, value: value(i, gen) }],
    failure: [],
  });
  for (let i = 0; i < count; i += 1000) {
    const batch = [];
    for (let j = i; j < Math.min(count, i + 1000); j++) batch.push({ index: ++index, command: put(j, 0) });
    await store.applyBatch(batch);
  }
  for (let i = 0; i < count; i += UPDATE_EVERY * 1000) {
    const batch = [];
    for (let j = i; j < Math.min(count, i + UPDATE_EVERY * 1000); j += UPDATE_EVERY) batch.push({ index: ++index, command: put(j, 1) });
    await store.applyBatch(batch);
  }
  await store.sync();
  await store.close();
}

/** Runs `fn` while sampling RSS; peak growth is measured from just before it starts. */
async function measured(fn: () => Promise<void>): Promise<ChildResult> {
  const base = process.memoryUsage.rss();
  let peak = base;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 10);
  const t0 = performance.now();
  await fn();
  const ms = performance.now() - t0;
  clearInterval(timer);
  peak = Math.max(peak, process.memoryUsage.rss());
  return { ms, peakRssGrowth: peak - base };
}

/** The child's side: one operation, its result as JSON on stdout. */
async function child(op: string, dir: string, file: string): Promise<void> {
  const store = await MvccStore.open(dir);
  const r = await measured(async () => {
    if (op === 'export') await store.exportSnapshotToFile(file);
    else if (op === 'etcd') await rm((await etcdBackendOf(store, dirname(file))).file);
    else await store.importSnapshotFrom(() => createReadStream(file, { highWaterMark: MB }));
  });
  await store.close();
  process.stdout.write(JSON.stringify(r) + '\n');
}

function runChild(op: 'export' | 'import' | 'etcd', dir: string, file: string): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [fileURLToPath(import.meta.url), '--child', op, dir, file], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    p.on('error', reject);
    p.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as ChildResult) : reject(new Error(`${op} child exited with ${code}`))));
  });
}

/** A plain fsynced copy of the file: the anchor. */
async function copyMs(file: string): Promise<number> {
  const to = `${file}.copy`;
  const t0 = performance.now();
  await copyFile(file, to);
  const fh = await open(to, 'r+');
  await fh.sync();
  await fh.close();
  const ms = performance.now() - t0;
  await rm(to);
  return ms;
}

interface SizeResult {
  snapshotBytes: number;
  copyMs: number;
  export: ChildResult;
  import: ChildResult;
  etcd: ChildResult;
}

async function measureSize(root: string, megabytes: number): Promise<SizeResult> {
  const src = join(root, `src-${megabytes}`);
  const dst = join(root, `dst-${megabytes}`);
  const file = join(root, `snap-${megabytes}.snap`);
  await buildStore(src, megabytes * MB);
  const exp = await runChild('export', src, file);
  const snapshotBytes = (await stat(file)).size;
  const copy = await copyMs(file);
  const imp = await runChild('import', dst, file);
  const etcd = await runChild('etcd', src, file);
  await rm(src, { recursive: true, force: true });
  await rm(dst, { recursive: true, force: true });
  await rm(file, { force: true });
  return { snapshotBytes, copyMs: copy, export: exp, import: imp, etcd };
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { megabytes: { type: 'string' }, 'json-out': { type: 'string' } } });
  const s = Number(values.megabytes ?? process.env.BENCH_SNAPSHOT_MB ?? 128);
  if (!(s > 0)) throw new Error('--megabytes must be positive');
  const root = await mkdtemp(join(tmpdir(), 'kapi-snapshot-bench-'));
  try {
    const sizes = [await measureSize(root, s), await measureSize(root, 2 * s)];
    const mbps = (bytes: number, ms: number): number => bytes / MB / (ms / 1000);
    const lines = ['size        snapshot    copy MB/s   export MB/s (x copy)   import MB/s (x copy)   export peak RSS+   import peak RSS+'];
    for (const [i, r] of sizes.entries()) {
      const copy = mbps(r.snapshotBytes, r.copyMs);
      const ex = mbps(r.snapshotBytes, r.export.ms);
      const im = mbps(r.snapshotBytes, r.import.ms);
      lines.push(
        `${i === 0 ? 'S ' : '2S'}  ${(r.snapshotBytes / MB).toFixed(0).padStart(10)} MB ${copy.toFixed(0).padStart(10)} ${ex.toFixed(0).padStart(12)} (${(ex / copy).toFixed(2)}) ${im.toFixed(0).padStart(14)} (${(im / copy).toFixed(2)}) ${(r.export.peakRssGrowth / MB).toFixed(0).padStart(15)} MB ${(r.import.peakRssGrowth / MB).toFixed(0).padStart(15)} MB`,
      );
    }
    const added = sizes[1]!.snapshotBytes - sizes[0]!.snapshotBytes;
    const growth = (op: 'export' | 'import'): number => (sizes[1]![op].peakRssGrowth - sizes[0]![op].peakRssGrowth) / added;
    const verdicts = (['export', 'import'] as const).map((op) => ({ op, share: growth(op), met: growth(op) <= 0.25 }));
    for (const v of verdicts)
      lines.push(`${v.op} peak RSS, S -> 2S: ${(v.share * 100).toFixed(1)}% of the added snapshot bytes   (target <= 25%)   ${v.met ? 'MET' : 'NOT MET'}`);
    for (const [i, r] of sizes.entries())
      lines.push(
        `${i === 0 ? 'S ' : '2S'}  etcd backend file (etcdctl snapshot save): ${r.etcd.ms.toFixed(0)} ms, ${(r.etcd.ms / r.export.ms).toFixed(2)}x the export's time, peak RSS+ ${(r.etcd.peakRssGrowth / MB).toFixed(0)} MB`,
      );
    process.stdout.write(lines.join('\n') + '\n');
    if (values['json-out']) await writeFile(values['json-out'], JSON.stringify({ sizes, verdicts }, null, 2));
    return 0;
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

if (isEntryPoint(import.meta.url)) {
  if (process.argv[2] === '--child') await child(process.argv[3]!, process.argv[4]!, process.argv[5]!);
  else process.exitCode = await main();
}
