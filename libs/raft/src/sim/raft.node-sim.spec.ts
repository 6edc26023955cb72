import { SimFailure } from './raft.sim.js';
import { NodeSim, type NodeSimStats, runNodeSeed } from './raft.node-sim.js';

/**
 * Deterministic simulation of production RaftNodes (their driver loop, on a disk that
 * separates written from synced) over many seeds. Environment:
 *   SEED=<n>              run exactly one seed (replay of a failure)
 *   SEEDS=<count>         number of seeds (default DEFAULT_SEEDS)
 *   SEED_BASE=<first>     first seed of the range (default 1)
 *   NODE_SIM_STEPS=<n>    fault-injection steps (of 5 virtual ms) per seed (default 400)
 */
const DEFAULT_SEEDS = 500;
/** Seeds on which the broken variant must be caught (and the correct build must pass). */
const BROKEN_SEEDS = 20;
const one = process.env.SEED !== undefined ? Number(process.env.SEED) : undefined;
const count = Number(process.env.SEEDS ?? DEFAULT_SEEDS);
const base = Number(process.env.SEED_BASE ?? 1);
const steps = Number(process.env.NODE_SIM_STEPS ?? 400);
const seeds = one !== undefined ? [one] : Array.from({ length: count }, (_, i) => base + i);

/** Features and driver paths a run of at least 100 seeds must have exercised, or it proves nothing about them. */
const EXERCISED_BY_LONG_RUNS: readonly (keyof NodeSimStats)[] = [
  'crashes',
  'powerLosses',
  'partitions',
  'snapshotsSent',
  'confChanges',
  'readsServed',
  'transfers',
  'connectionLosses',
  'unsyncedLost',
  'tornRecords',
  'proposalsResent',
  'duplicateProposals',
];

type Broken = 'brokenLeaderAcksUnsynced' | 'brokenAppendsEveryCopy';

async function runChecked(seed: number, broken?: Broken): Promise<NodeSimStats> {
  try {
    return await runNodeSeed(seed, { steps, ...(broken ? { [broken]: true } : {}) });
  } catch (e) {
    // Print the seed whatever went wrong, so the run can be replayed exactly.
    if (e instanceof SimFailure) throw e;
    throw new Error(`raft node sim seed ${seed} crashed (replay: SEED=${seed}): ${(e as Error).stack ?? String(e)}`, { cause: e });
  }
}

describe('raft node simulation (the production driver loop)', () => {
  it('keeps every invariant for each seed chosen by SEED, SEEDS and SEED_BASE, through both early paths of the driver', async () => {
    const total = {} as Record<keyof NodeSimStats, number>;
    for (const seed of seeds) {
      const s = await runChecked(seed);
      for (const k of Object.keys(s) as (keyof NodeSimStats)[]) total[k] = (total[k] ?? 0) + s[k];
    }
    if (process.env.SIM_VERBOSE) console.log(JSON.stringify(total));
    expect(total.writesAcknowledged).toBeGreaterThan(0);
    expect(total.elections).toBeGreaterThan(0);
    // A short run (a replay) proves nothing about the rarer faults and paths; a long one must
    // have exercised them, and the driver's two deviations from the Ready contract many times:
    // messages sent before their Ready's fsync (a leader's appends; forwarded proposals and
    // ReadIndex), and committed entries applied before it.
    const long = seeds.length >= 100;
    expect((long ? EXERCISED_BY_LONG_RUNS : []).filter((k) => total[k] === 0)).toEqual([]);
    expect(total.earlyLeaderSends).toBeGreaterThanOrEqual(long ? 10 * seeds.length : 0);
    expect(total.earlyDurabilityFree).toBeGreaterThanOrEqual(long ? seeds.length : 0);
    expect(total.earlyApplies).toBeGreaterThanOrEqual(long ? 10 * seeds.length : 0);
  }, 3_600_000);

  it('is deterministic: the same seed gives the same run', async () => {
    const traces: string[][] = [[], []];
    const a = await new NodeSim(42, { steps: 200, trace: (l) => traces[0]!.push(l) }).run();
    const b = await new NodeSim(42, { steps: 200, trace: (l) => traces[1]!.push(l) }).run();
    expect(a).toEqual(b);
    expect(traces[0]!.length).toBeGreaterThan(10);
    expect(traces[1]).toEqual(traces[0]);
  });

  /** Runs the first BROKEN_SEEDS seeds correct and `broken`; the failure messages of the broken runs. */
  async function caughtOn(broken: Broken): Promise<string[]> {
    const caught: string[] = [];
    for (let seed = 1; seed <= BROKEN_SEEDS; seed++) {
      await runChecked(seed);
      await runChecked(seed, broken).then(
        () => undefined,
        (e: unknown) => {
          if (!(e instanceof SimFailure)) throw e;
          caught.push(e.message);
        },
      );
    }
    return caught;
  }

  it('catches a leader that counts its own entries before they are synced, on seeds the correct build passes', async () => {
    const caught = await caughtOn('brokenLeaderAcksUnsynced');
    expect(caught.length).toBeGreaterThanOrEqual(BROKEN_SEEDS / 2);
    expect(caught.some((m) => /durable on only|not on its synced disk|acknowledged write .* lost/.test(m))).toBe(true);
  }, 120_000);

  it('catches a leader that appends every copy of a resent proposal, on seeds the correct build passes', async () => {
    const caught = await caughtOn('brokenAppendsEveryCopy');
    expect(caught.length).toBeGreaterThanOrEqual(BROKEN_SEEDS / 2);
    expect(caught.every((m) => /applied twice/.test(m))).toBe(true);
  }, 120_000);
});
