import { cpuPerRequest, hostShares, median, readHostCpu, readProcessCpuMs, roundOrder } from './cluster.bench.js';

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
    // The machine's own /proc/stat (the tests run on Linux; the per-process read below needs /proc too).
    const live = readHostCpu();
    expect(live).toBeDefined();
    expect(live!.total).toBeGreaterThanOrEqual(live!.idle + live!.steal);
  });

  it('takes the lower median and rotates the systems per round', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2);
    expect(roundOrder(['a', 'b', 'c'], 1)).toEqual(['b', 'c', 'a']);
  });

  it('reads the CPU time of a process from /proc/<pid>/stat and divides it per request', () => {
    // Field 2 may hold spaces and parentheses; utime and stime are fields 14 and 15.
    const stat = '4242 (node (x) y) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 11 0 123 456 789';
    expect(readProcessCpuMs(undefined, stat)).toBe(3000);
    expect(readProcessCpuMs(undefined, stat, 1000)).toBe(300);
    expect(readProcessCpuMs(undefined, '4242 (node) S 1')).toBeUndefined();
    expect(readProcessCpuMs(undefined)).toBeUndefined();
    expect(readProcessCpuMs(process.pid)).toBeGreaterThan(0);
    const before = new Map([
      ['n1', 1000],
      ['n2', 2000],
      ['gone', 5],
    ]);
    const after = new Map<string, number | undefined>([
      ['n1', 1500],
      ['n2', 2100],
      ['gone', undefined],
      ['new', 7],
    ]);
    expect(cpuPerRequest(before, after, 1000)).toEqual({ n1: 500, n2: 100 });
    expect(cpuPerRequest(before, after, 0)).toEqual({});
  });
});
