import { type SoakSample, advances, byNode, csvHeader, csvRow, evaluateBounds, median, parseMetrics, quarters, summarize } from './soak.report.js';

function sample(node: string, elapsedS: number, over: Partial<SoakSample> = {}): SoakSample {
  return {
    elapsedS,
    time: new Date(elapsedS * 1000).toISOString(),
    node,
    pid: 1,
    rssBytes: 100e6,
    heapUsedBytes: 40e6,
    openFds: 40,
    eventLoopP99Ms: 10,
    dataBytes: 5e6,
    mvccBytes: 3e6,
    raftBytes: 2e6,
    requestsTotal: elapsedS * 10,
    requestsPerS: 10,
    errorsTotal: 0,
    transientTotal: 0,
    watchEventsTotal: 0,
    watchRestartsTotal: 0,
    compactionsTotal: Math.floor(elapsedS / 60),
    raftSnapshotIndex: Math.floor(elapsedS / 20) * 500,
    appliedIndex: elapsedS * 20,
    revision: elapsedS * 20,
    compactRevision: 0,
    isLeader: 0,
    ...over,
  };
}

/** 30 minutes of samples every 10 s for one node, `f` adjusting each. */
function run(node: string, f: (t: number) => Partial<SoakSample> = () => ({})): SoakSample[] {
  return Array.from({ length: 181 }, (_, i) => sample(node, i * 10, f(i * 10)));
}

const FACTS = { errors: 0, watchBackwards: 0, minCompactions: 15, minSnapshots: 2 };

describe('soak report', () => {
  it('parses metrics text: unlabelled values as they are, labelled series summed, comments skipped', () => {
    const m = parseMetrics(
      [
        '# HELP x y',
        '# TYPE process_open_fds gauge',
        'process_open_fds 42',
        'a{x="1"} 2',
        'a{x="2",y="a b"} 3',
        'nodejs_eventloop_lag_p99_seconds 0.012',
        'bad',
        '',
      ].join('\n'),
    );
    expect(m.get('process_open_fds')).toBe(42);
    expect(m.get('a')).toBe(5);
    expect(m.get('nodejs_eventloop_lag_p99_seconds')).toBe(0.012);
    expect(m.has('bad')).toBe(false);
  });

  it('median and quarters: the warm-up is left out and the quarters are by time', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
    const q = quarters(run('n1'));
    // warm-up to 180 s; quarters of (1800 - 180) / 4 = 405 s
    expect(q.first[0]!.elapsedS).toBe(180);
    expect(q.first[q.first.length - 1]!.elapsedS).toBe(580);
    expect(q.last[0]!.elapsedS).toBe(1400);
    expect(q.last[q.last.length - 1]!.elapsedS).toBe(1800);
  });

  it('flat figures with compactions and snapshots pass every bound', () => {
    const bounds = evaluateBounds(byNode([...run('n1'), ...run('n2')]), FACTS);
    expect(bounds.filter((b) => !b.pass)).toEqual([]);
    expect(bounds).toHaveLength(2 * 6 + 2);
  });

  it('a heap that keeps growing, and noise that does not, are told apart', () => {
    const leak = run('n1', (t) => ({ heapUsedBytes: 40e6 + t * 20_000 }));
    // a saw-tooth (GC) of +-30% around a flat level
    const noisy = run('n2', (t) => ({ heapUsedBytes: 40e6 * (1 + 0.3 * Math.sin(t)) }));
    const bounds = evaluateBounds(byNode([...leak, ...noisy]), FACTS);
    const heap = bounds.filter((b) => b.bound.startsWith('V8 heap'));
    expect(heap.map((b) => [b.node, b.pass])).toEqual([
      ['n1', false],
      ['n2', true],
    ]);
  });

  it('fds may grow by 20, data size by half, not more', () => {
    const fine = run('n1', (t) => ({ openFds: t > 900 ? 60 : 40, dataBytes: t > 900 ? 7e6 : 5e6 }));
    const bad = run('n2', (t) => ({ openFds: t > 900 ? 61 : 40, dataBytes: t > 900 ? 8e6 : 5e6 }));
    const r = evaluateBounds(byNode([...fine, ...bad]), FACTS).filter((b) => b.bound.startsWith('open fds') || b.bound.startsWith('data dir'));
    expect(r.map((b) => [b.node, b.pass])).toEqual([
      ['n1', true],
      ['n1', true],
      ['n2', false],
      ['n2', false],
    ]);
  });

  it('errors, backwards watches, missing compactions or snapshots, and too few samples fail', () => {
    const still = run('n1', () => ({ compactionsTotal: 3, raftSnapshotIndex: 500 }));
    const r = evaluateBounds(byNode(still), { ...FACTS, errors: 1, watchBackwards: 2 });
    expect(r.filter((b) => !b.pass).map((b) => b.bound)).toEqual([
      'MVCC compactions during the run >= 15',
      'Raft snapshot index advanced in >= 2 sample intervals',
      'request and watch errors (other than 429/503/504 and 410 Gone) = 0',
      'watch resourceVersions never went backwards',
    ]);
    const short = evaluateBounds(byNode([sample('n1', 0), sample('n1', 10)]), FACTS);
    expect(short.find((b) => b.bound.startsWith('RSS'))!.pass).toBe(false);
  });

  it('counts advances of a figure, and summarizes first/last/max/growth', () => {
    const s = [0, 0, 500, 500, 1000].map((v, i) => sample('n1', i, { raftSnapshotIndex: v }));
    expect(advances(s, 'raftSnapshotIndex')).toBe(2);
    const f = summarize(byNode(run('n1', (t) => ({ rssBytes: t < 100 ? 200e6 : 100e6 + t * 1000 })))).find((x) => x.figure === 'rssBytes')!;
    expect(f.first).toBe(200e6);
    expect(f.last).toBe(101.8e6);
    expect(f.max).toBe(200e6);
    expect(f.growth).toBeCloseTo(median(quarters(run('n1')).last.map((x) => 100e6 + x.elapsedS * 1000)) / 100.38e6, 3);
  });

  it('writes one CSV field per header column', () => {
    expect(csvHeader().split(',')).toHaveLength(csvRow(sample('n1', 5)).split(',').length);
    expect(csvHeader()).toMatch(/^time,elapsed_s,node,pid,rss_bytes,heap_used_bytes,open_fds,event_loop_p99_ms,data_bytes/);
  });
});
