import { hostShares, median, readHostCpu, roundOrder } from './cluster.bench.js';

describe('cluster bench helpers', () => {
  it('reads the aggregate cpu line of /proc/stat and the idle and stolen shares between two readings', () => {
    const a = readHostCpu('cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 50 0 25 400 25 0 0 0 0 0\n');
    const b = readHostCpu('cpu  400 0 150 900 50 0 0 300 40 0\ncpu0 200 0 75 450 25 0 0 150 20 0\n');
    expect(a).toEqual({ total: 1000, idle: 850, steal: 0 });
    // guest time is part of user time already: not added again
    expect(b).toEqual({ total: 1800, idle: 950, steal: 300 });
    expect(hostShares(a, b)).toEqual({ idle: 100 / 800, steal: 300 / 800 });
    expect(hostShares(b, a)).toBeUndefined();
    expect(hostShares(undefined, b)).toBeUndefined();
    expect(readHostCpu('intr 1 2 3\n')).toBeUndefined();
    const live = readHostCpu();
    if (live) expect(live.total).toBeGreaterThanOrEqual(live.idle + live.steal);
  });

  it('takes the lower median and rotates the systems per round', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2);
    expect(roundOrder(['a', 'b', 'c'], 1)).toEqual(['b', 'c', 'a']);
  });
});
