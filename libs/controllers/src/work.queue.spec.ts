import { WorkQueue } from './work.queue.js';

describe('WorkQueue', () => {
  it('dedupes queued keys and hands them out in FIFO order', () => {
    let adds = 0;
    const q = new WorkQueue(() => adds++);
    q.add('a');
    q.add('b');
    q.add('a');
    expect(q.length).toBe(2);
    expect(adds).toBe(2);
    expect(q.take()).toBe('a');
    expect(q.take()).toBe('b');
    expect(q.take()).toBeUndefined();
  });

  it('never hands out a key twice concurrently; a re-add during processing re-queues it once', () => {
    const q = new WorkQueue();
    q.add('a');
    expect(q.take()).toBe('a');
    q.add('a');
    q.add('a');
    expect(q.take()).toBeUndefined();
    expect(q.inFlight).toBe(1);
    q.done('a');
    expect(q.take()).toBe('a');
    q.done('a');
    expect(q.take()).toBeUndefined();
  });

  it('stays correct across internal compaction with many keys', () => {
    const q = new WorkQueue();
    for (let i = 0; i < 5000; i++) q.add(`k${i}`);
    for (let i = 0; i < 5000; i++) {
      const k = q.take();
      expect(k).toBe(`k${i}`);
      q.done(k!);
    }
    expect(q.length).toBe(0);
  });
});
