/**
 * Short runs of the storage benchmarks (Raft, the etcd v3 API against etcd, apply and watch,
 * slow clients; `npm run bench:raft`, `bench:etcd` and the rest run them at full length): each
 * must start its systems, measure every phase and print its figures. Nothing here asserts on
 * speed; it keeps the benchmarks working.
 */
import { prerequisite } from './support/prereq.js';
import { runBench } from './support/bench.helper.js';

describe('storage benchmarks (short runs)', () => {
  it('raft: our Raft and etcd with three members and with one, and the share of throughput three keep', async () => {
    const etcd = prerequisite('etcd', 'the Raft benchmark comparison against etcd (test/bench.storage.test.ts)');
    const r = await runBench('raft.bench.js', ['--seconds', '0.5']);
    expect({ code: r.code, tail: r.code === 0 ? '' : r.out.slice(-2000) }).toEqual({ code: 0, tail: '' });
    expect(r.out).toMatch(/^kapi raft {2}c=64 1 member +[\d.]+ ops\/s/m);
    // With etcd its figures; without it (opted out on a machine that lacks it) a line saying why.
    expect(r.out).toMatch(etcd ? /^etcd +c=64 1 member +[\d.]+ ops\/s/m : /^etcd not installed \(apt-get install etcd-server\): no comparison$/m);
    expect(r.out).toMatch(
      etcd ? /^3 members \/ 1 member throughput c=64: kapi raft [\d.]+%, etcd [\d.]+%$/m : /^3 members \/ 1 member throughput c=64: kapi raft [\d.]+%$/m,
    );
  });

  it('etcd: our three nodes against etcd 3.4 through the same gRPC client print one table', async () => {
    // Without etcd (opted out) there is nothing to compare against: the bench needs both.
    if (!prerequisite('etcd', 'the etcd v3 API benchmark against etcd (test/bench.storage.test.ts)')) return;
    const r = await runBench('etcd.bench.js', ['--seconds', '0.25', '--rounds', '2', '--loads', '', '--warm-passes', '0']);
    // Exit 1 only reports missed speed targets; 2 is a crash.
    expect({ code: r.code === 0 || r.code === 1, tail: r.code === 0 || r.code === 1 ? '' : r.out.slice(-2000) }).toEqual({ code: true, tail: '' });
    for (const row of [
      'put c=1 ops/s',
      'put c=64 ops/s',
      'put c=256 ops/s',
      'put c=64 CPU us/op',
      'range linearizable c=64 ops/s',
      'range serializable c=64 ops/s',
    ]) {
      expect(r.out).toMatch(new RegExp(`^${row} +\\d+ +\\d+ +[\\d.]+$`, 'm'));
    }
    expect(r.out).toMatch(/^gRPC server floor: put c=64 CPU us\/op +\d+\s*$/m);
    // Both systems measured in each of the two rounds, the Put ratios of each printed.
    expect(r.out).toMatch(/^put c=1 kapi\/etcd p50 by round: [\d.]+ [\d.]+$/m);
    expect(r.out).toMatch(/^put c=256 kapi\/etcd ops\/s by round: [\d.]+ [\d.]+$/m);
    expect(r.out).not.toMatch(/request errors on kapi/);
  }, 180_000);

  it('apply and watch: run to the end and print their figures', async () => {
    const apply = await runBench('apply.bench.js', ['--seconds', '0.5', '--workers', '4']);
    expect({ code: apply.code, tail: apply.code === 0 ? '' : apply.out.slice(-2000) }).toEqual({ code: 0, tail: '' });
    expect(apply.out).toMatch(/^in-process applyIntent, 50 fields \/ 3 managers: [\d.]+ µs per apply$/m);
    expect(apply.out).toMatch(/^in-process parseJsonStrict \/ JSON.parse on \d+ bytes: [\d.]+x/m);
    const watch = await runBench('watch.bench.js', ['--watchers', '20', '--rate', '20', '--seconds', '1']);
    expect({ code: watch.code, tail: watch.code === 0 ? '' : watch.out.slice(-2000) }).toEqual({ code: 0, tail: '' });
  });

  it('slow clients: every phase runs and prints its row', async () => {
    const r = await runBench('slow-clients.bench.js', ['--objects', '200', '--seconds', '0.5']);
    expect({ code: r.code, tail: r.code === 0 ? '' : r.out.slice(-2000) }).toEqual({ code: 0, tail: '' });
    for (const phase of ['none', 'replay', 'initial', 'etcd']) expect(r.out).toMatch(new RegExp(`^${phase} +-?\\d+ +-?\\d+%  (-|open|cut off)$`, 'm'));
  }, 120_000);
});
