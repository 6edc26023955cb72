/**
 * A short soak run (`npm run soak` runs 30 minutes, docs/soak.md): bench/soak.js against a real
 * three-node cluster for half a minute, with compactions every 5 s and a Raft snapshot every 100
 * entries. Growth over so short a run is mostly warm-up (LevelDB's write-ahead logs fill before
 * anything is flushed), so the growth bounds are evaluated and reported but not asserted here;
 * what a short run can assert honestly: every node was sampled throughout, the load ran without
 * errors, the watches resumed and never went backwards, compactions and snapshots happened on
 * every node, and the exit code agrees with the bounds.
 *
 * It writes 1 KiB ConfigMaps, not the full run's 16 KiB, which keeps the run light on a shared
 * machine; the full run keeps the larger bodies that once met Node 20's paused HTTP/1.1 parser
 * (docs/soak.md "HTTP/1.1 requests refused by Node 20").
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SoakResult } from '../bench/soak.js';
import { repoRoot } from './support/server.js';

function runSoak(args: readonly string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(repoRoot(), 'dist', 'bench', 'soak.js'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.on('error', reject);
    // 'close', not 'exit': 'exit' may come before the last of its output is read.
    child.on('close', (code) => resolve({ code, out }));
  });
}

describe('soak (half a minute)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kapi-soak-test-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('samples all three nodes under load and evaluates the bounds', async () => {
    const csv = join(dir, 'soak.csv');
    const json = join(dir, 'soak.json');
    const r = await runSoak([
      '--minutes',
      '0.5',
      '--sample-seconds',
      '2',
      '--compaction-interval',
      '5',
      '--snapshot-count',
      '100',
      '--watch-timeout-seconds',
      '10',
      '--object-kib',
      '1',
      '--csv',
      csv,
      '--json-out',
      json,
    ]);
    const res = JSON.parse(await readFile(json, 'utf8')) as SoakResult;
    const nodes = ['n1', 'n2', 'n3'];
    for (const n of nodes) {
      const mine = res.samples.filter((s) => s.node === n);
      expect(mine.length).toBeGreaterThanOrEqual(5);
      // sampled from the start to the end of the run, each figure read
      expect(mine[mine.length - 1]!.elapsedS).toBeGreaterThanOrEqual(30);
      for (const s of mine) {
        expect(s.rssBytes).toBeGreaterThan(0);
        expect(s.heapUsedBytes).toBeGreaterThan(0);
        expect(s.openFds).toBeGreaterThan(0);
        expect(s.dataBytes).toBeGreaterThan(0);
        expect(Number.isFinite(s.eventLoopP99Ms)).toBe(true);
      }
      expect(mine[mine.length - 1]!.requestsTotal).toBeGreaterThan(0);
      expect(mine[mine.length - 1]!.watchEventsTotal).toBeGreaterThan(0);
    }
    const lines = (await readFile(csv, 'utf8')).trim().split('\n');
    expect(lines[0]).toMatch(/^time,elapsed_s,node,/);
    expect(lines).toHaveLength(res.samples.length + 1);

    expect(res.errorLog).toEqual([]);
    expect(res.totals.errors + res.totals.watchErrors).toBe(0);
    expect(res.totals.watchBackwards).toBe(0);
    // the watches ended (timeoutSeconds) and resumed from their last resourceVersion
    expect(res.totals.watchRestarts + res.totals.watchRelists).toBeGreaterThan(0);

    // every bound was evaluated: four growth bounds, compactions and snapshots per node, two run-wide
    expect(res.bounds).toHaveLength(nodes.length * 6 + 2);
    const notGrowth = res.bounds.filter((b) => !/median/.test(b.bound));
    expect(notGrowth.filter((b) => !b.pass)).toEqual([]);
    expect(res.pass).toBe(res.bounds.every((b) => b.pass));
    expect(r.code).toBe(res.pass ? 0 : 1);
    expect(r.out).toContain(res.pass ? 'soak: every bound held' : 'soak: a bound FAILED');
  }, 300_000);
});
