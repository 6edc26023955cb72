import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeObject } from '@app/apimachinery';
import type { KindDeclaration } from '@app/registry';
import { openLocalStorage, type Storage, type StorageEvent } from '@app/storage';
import { countingLists } from '../pipeline/counting-storage.fixture.js';
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

/** A controller that reads the pods of a namespace through `collection`, and processes nothing. */
class Reading extends WatchQueueController {
  readonly pods = this.collection(() => ({ group: '', plural: 'pods', namespaced: true }) as KindDeclaration, 'reading: pods');

  constructor(storage: Storage) {
    super(storage, 'reading', 3_600_000);
  }

  protected kindsServed(): boolean {
    return true;
  }
  protected watchPrefixes(): string[] {
    return [];
  }
  protected relist(): Promise<number> {
    return Promise.resolve(1);
  }
  protected onEvent(_e: StorageEvent): void {}
  protected process(_key: string): Promise<void> {
    return Promise.resolve();
  }
}

describe('a controller’s collections', () => {
  it('are read from a watch-fed copy while the controller runs, and from storage before it starts and after it stops', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'watch-queue-'));
    const { storage } = await openLocalStorage({ dataDir: dir, compactionIntervalMs: 0 });
    const { storage: counted, lists: listsMade } = countingLists(storage);
    const pod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'a', name } }) as KubeObject;
    const names = async (c: Reading) => (await c.pods.inNamespace('a')).map((p) => p.metadata.name).sort();
    const c = new Reading(counted);
    try {
      await storage.create('/registry/core/pods/a/p1', pod('p1'));
      let before = listsMade();
      expect(await names(c)).toEqual(['p1']);
      expect(listsMade()).toBe(before + 1);
      c.start();
      // Once the copy has loaded, reads list nothing and still see every write at once.
      let loaded = false;
      for (let i = 0; i < 200 && !loaded; i++) {
        before = listsMade();
        await names(c);
        loaded = listsMade() === before;
        if (!loaded) await new Promise((r) => setTimeout(r, 5));
      }
      expect(loaded).toBe(true);
      for (let i = 0; i < 20; i++) {
        await storage.create(`/registry/core/pods/a/q${i}`, pod(`q${i}`));
        expect(await names(c)).toContain(`q${i}`);
      }
      expect(listsMade()).toBe(before);
      c.stop();
      await storage.create('/registry/core/pods/a/p2', pod('p2'));
      expect(await names(c)).toContain('p2');
      expect(listsMade()).toBe(before + 1);
    } finally {
      c.stop();
      await storage.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
