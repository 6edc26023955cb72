import type { Storage, StorageEvent } from '@app/storage';
import { retryDelayMs, WatchQueueController } from './watch-queue.controller.js';

/** A controller whose one key fails with a lost race while `conflicts` says so. */
class Racing extends WatchQueueController {
  /** What each processing of the key does: true loses the race. */
  conflicts: boolean[] = [];
  readonly delays: number[] = [];
  processed = 0;
  private done: (() => void) | undefined;

  constructor() {
    super({ watch: () => ({ stop: () => undefined }) } as unknown as Storage, 'racing', 3_600_000);
  }

  /** Resolves once the key has been processed `n` times in all. */
  until(n: number): Promise<void> {
    return new Promise((resolve) => {
      this.done = () => {
        if (this.processed >= n) resolve();
      };
      this.done();
    });
  }

  again(): void {
    this.queue.add('ns/a');
    this.drain();
  }

  protected kindsServed(): boolean {
    return true;
  }
  protected watchPrefixes(): string[] {
    return [];
  }
  protected relist(): Promise<number> {
    this.queue.add('ns/a');
    return Promise.resolve(1);
  }
  protected onEvent(_e: StorageEvent): void {}
  protected process(key: string): Promise<void> {
    const lost = this.conflicts.shift() ?? false;
    this.processed++;
    if (lost) this.retryLater(key);
    this.done?.();
    return Promise.resolve();
  }
  protected override requeueAfter(key: string, delayMs: number): void {
    this.delays.push(delayMs);
    super.requeueAfter(key, delayMs);
  }
}

describe('the controllers’ work queue', () => {
  it('waits 5 ms before the first retry of a key and doubles the pause up to 1,000 s', () => {
    expect([1, 2, 3, 4, 5].map(retryDelayMs)).toEqual([5, 10, 20, 40, 80]);
    expect(retryDelayMs(18)).toBe(655_360);
    expect(retryDelayMs(19)).toBe(1_000_000);
    expect(retryDelayMs(500)).toBe(1_000_000);
  });

  it('retries a key that keeps losing races after growing pauses, and starts over once it gets through', async () => {
    const c = new Racing();
    c.conflicts = [true, true, true, true, false];
    try {
      c.start();
      await c.until(5);
      expect(c.delays).toEqual([5, 10, 20, 40]);
      // Through once: the next lost race waits 5 ms again.
      c.conflicts = [true, false];
      c.again();
      await c.until(7);
      expect(c.delays).toEqual([5, 10, 20, 40, 5]);
    } finally {
      c.stop();
    }
  });

  it('forgets the pauses when it stops', async () => {
    const c = new Racing();
    c.conflicts = [true, true, true];
    c.start();
    await c.until(3);
    c.stop();
    expect(c.delays).toEqual([5, 10, 20]);
    c.conflicts = [true];
    c.start();
    await c.until(4);
    c.stop();
    expect(c.delays).toEqual([5, 10, 20, 5]);
  });
});
