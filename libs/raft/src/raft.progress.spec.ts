import { Inflights, Progress } from './raft.progress.js';

describe('Inflights', () => {
  it('is bounded by count and by bytes and frees acknowledged messages in order', () => {
    const f = new Inflights(3, 100);
    f.add(5, 10);
    f.add(6, 10);
    expect(f.full()).toBe(false);
    f.add(7, 10);
    expect(f.full()).toBe(true); // count limit
    f.freeLE(6);
    expect(f.count).toBe(1);
    expect(f.full()).toBe(false);
    f.add(8, 95);
    expect(f.full()).toBe(true); // byte limit: 10 + 95 >= 100
    f.freeFirstOne();
    expect(f.count).toBe(1);
    f.freeLE(100);
    expect(f.count).toBe(0);
    expect(f.totalBytes).toBe(0);
  });
});

describe('Progress (etcd tracker states; Raft paper section 5.3 nextIndex/matchIndex)', () => {
  it('probes one message at a time, pipelines in replicate, waits in snapshot', () => {
    const p = new Progress(11, 2, 0, false);
    expect(p.isPaused()).toBe(false);
    p.sentEntries(1, 10, 11);
    expect(p.isPaused()).toBe(true);
    expect(p.maybeUpdate(11)).toBe(true);
    p.becomeReplicate();
    expect(p.next).toBe(12);
    p.sentEntries(2, 20, 13);
    p.sentEntries(1, 10, 14);
    expect(p.next).toBe(15);
    expect(p.isPaused()).toBe(true);
    p.becomeSnapshot(50);
    expect(p.isPaused()).toBe(true);
    p.becomeProbe();
    expect(p.next).toBe(51);
  });

  it('moves next back on rejection using the hint, ignoring stale rejections', () => {
    const p = new Progress(21, 4, 0, false);
    p.match = 3;
    expect(p.maybeDecrTo(19, 8)).toBe(false); // not the outstanding probe (next-1 = 20)
    expect(p.maybeDecrTo(20, 8)).toBe(true);
    expect(p.next).toBe(9);
    expect(p.maybeDecrTo(8, 1)).toBe(true);
    expect(p.next).toBe(4); // never below match+1
  });
});
