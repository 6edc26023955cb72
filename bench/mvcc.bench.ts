/**
 * Throughput of fsynced group commit: `concurrency` proposers each loop put-if-absent creates of
 * ~300-byte values for `seconds`, through LocalProposer with {sync: true} (the store alone, no
 * Raft, no HTTP): the floor under the API's create throughput.
 * Run: `npm run build && node dist/bench/mvcc.bench.js [concurrency=64] [seconds=3]`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalProposer, MvccStore } from '@app/mvcc';
import { isEntryPoint } from '../cluster/entry-point.js';

/** Runs the benchmark; resolves with creates per second. */
export async function benchCreates(concurrency: number, seconds: number): Promise<{ perSecond: number; batches: number; total: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'mvcc-bench-'));
  const store = await MvccStore.open(dir);
  const proposer = new LocalProposer(store, { sync: true });
  const value = new TextEncoder().encode(
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'x', namespace: 'default', uid: '0d7f0c1e-8c55-4f2e-9a59-6d3b7f3f1c2a' },
      data: { k: 'v'.repeat(160) },
    }),
  );
  let total = 0;
  const deadline = Date.now() + seconds * 1000;
  const worker = async (w: number): Promise<void> => {
    for (let i = 0; Date.now() < deadline; i++) {
      const key = `/registry/core/configmaps/bench/w${w}-${i}`;
      const r = await proposer.propose({ compares: [{ key, target: 'absent' }], success: [{ type: 'put', key, value }], failure: [] });
      if (!r.succeeded) throw new Error(`create of ${key} failed`);
      total++;
    }
  };
  const start = Date.now();
  await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
  const elapsed = (Date.now() - start) / 1000;
  const batches = proposer.batches;
  await proposer.close();
  await store.close();
  await rm(dir, { recursive: true, force: true });
  return { perSecond: total / elapsed, batches, total };
}

if (isEntryPoint(import.meta.url)) {
  const concurrency = Number(process.argv[2] ?? 64);
  const seconds = Number(process.argv[3] ?? 3);
  const r = await benchCreates(concurrency, seconds);
  process.stdout.write(
    `${concurrency} proposers, ${seconds}s: ${r.total} fsynced creates, ${r.perSecond.toFixed(0)}/s, ${r.batches} batches (${(r.total / r.batches).toFixed(1)} per batch)\n`,
  );
}
