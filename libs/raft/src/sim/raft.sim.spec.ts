import { RaftSim, SimFailure, runSeed, type SimStats } from './raft.sim.js';

/**
 * Deterministic simulation over many seeds. Environment:
 *   SEED=<n>                 run exactly one seed (replay of a failure)
 *   SEEDS=<count>            number of seeds (default 1500)
 *   SEED_BASE=<first>        first seed of the range (default 1)
 *   SIM_STEPS=<ticks>        fault-injection ticks per seed (default 500)
 */
const one = process.env.SEED !== undefined ? Number(process.env.SEED) : undefined;
const count = Number(process.env.SEEDS ?? 1500);
const base = Number(process.env.SEED_BASE ?? 1);
const steps = Number(process.env.SIM_STEPS ?? 500);

/** Features a run of at least 100 seeds must have exercised, or it proves nothing about them. */
const EXERCISED_BY_LONG_RUNS: readonly (keyof SimStats)[] = [
  'crashes',
  'partitions',
  'snapshotsSent',
  'confChanges',
  'readsServed',
  'transfers',
  'connectionLosses',
];

describe('raft deterministic simulation', () => {
  it('keeps every invariant for each seed chosen by SEED, SEEDS and SEED_BASE', () => {
    const seeds = one !== undefined ? [one] : Array.from({ length: count }, (_, i) => base + i);
    const total: SimStats = {
      elections: 0,
      writesCommitted: 0,
      readsServed: 0,
      crashes: 0,
      partitions: 0,
      snapshotsSent: 0,
      confChanges: 0,
      transfers: 0,
      messages: 0,
      connectionLosses: 0,
    };
    for (const seed of seeds) {
      let s: SimStats;
      try {
        s = runSeed(seed, { steps });
      } catch (e) {
        // Print the seed whatever went wrong, so the run can be replayed exactly.
        if (e instanceof SimFailure) throw e;
        throw new Error(`raft sim seed ${seed} crashed (replay: SEED=${seed}): ${(e as Error).stack ?? String(e)}`, { cause: e });
      }
      for (const k of Object.keys(total) as (keyof SimStats)[]) total[k] += s[k];
    }
    // The faults and features must actually have been exercised, or the run proves nothing.
    expect(total.writesCommitted).toBeGreaterThan(0);
    expect(total.elections).toBeGreaterThan(0);
    const required = seeds.length >= 100 ? EXERCISED_BY_LONG_RUNS : [];
    expect(required.filter((k) => total[k] === 0)).toEqual([]);
    if (process.env.SIM_VERBOSE) console.log(JSON.stringify(total));
  });

  it('is deterministic: the same seed gives the same run', () => {
    const a = new RaftSim(42, { steps: 200 }).run();
    const b = new RaftSim(42, { steps: 200 }).run();
    expect(a).toEqual(b);
  });
});
