import { jest } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeObject } from '@app/apimachinery';
import type { KindDeclaration } from '@app/registry';
import { openLocalStorage, type MvccStorage, type Storage } from '@app/storage';
import { CollectionReader, sharedCopyHolders } from './collection-reader.js';
import { countingLists } from './counting-storage.fixture.js';

const PODS = { group: '', plural: 'pods', namespaced: true } as KindDeclaration;
const pod = (ns: string, name: string, phase = 'Running'): KubeObject =>
  ({ apiVersion: 'v1', kind: 'Pod', metadata: { namespace: ns, name }, status: { phase } }) as KubeObject;
const names = (objs: KubeObject[]) => objs.map((o) => o.metadata.name).sort();

describe('CollectionReader on a real store', () => {
  let dir: string;
  let storage: MvccStorage;
  let countOf: () => number;
  /** The lists made through `counted` so far. */
  const lists = (): number => countOf();
  /** The store, counting the lists made through it. */
  let counted: Storage;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'collection-reader-'));
    storage = (await openLocalStorage({ dataDir: dir, compactionIntervalMs: 0 })).storage;
    const c = countingLists(storage);
    counted = c.storage;
    countOf = c.lists;
  });
  afterEach(async () => {
    await storage.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers from its copy once loaded, with every write already answered in it, and no list per read', async () => {
    await storage.create('/registry/core/pods/a/p1', pod('a', 'p1'));
    await storage.create('/registry/core/pods/b/p2', pod('b', 'p2'));
    const reader = new CollectionReader(counted, () => PODS, 'test');
    reader.start();
    // The first read waits for the copy's list, made at that read.
    expect(names(await reader.inNamespace('a'))).toEqual(['p1']);
    const afterFirst = lists();
    for (let i = 0; i < 50; i++) {
      // Each write is in the very next read: the copy waits for what the store has answered.
      await storage.create(`/registry/core/pods/a/q${i}`, pod('a', `q${i}`));
      const got = names(await reader.inNamespace('a'));
      expect(got).toContain(`q${i}`);
      expect(got).toHaveLength(i + 2);
    }
    await storage.delete('/registry/core/pods/a/p1');
    expect(names(await reader.inNamespace('a'))).not.toContain('p1');
    expect(names(await reader.all())).toContain('p2');
    // The copy's own list, and none for the reads: at most one more than the first read's.
    expect(lists() - afterFirst).toBeLessThanOrEqual(1);
    reader.stop();
  });

  it('projects what it keeps and what it lists alike; after stop it reads storage and keeps no copy', async () => {
    await storage.create('/registry/core/pods/a/p1', pod('a', 'p1'));
    await storage.create('/registry/core/pods/a/done', pod('a', 'done', 'Succeeded'));
    const running = (o: KubeObject) => ((o.status as { phase?: string }).phase === 'Running' ? { metadata: o.metadata } : undefined);
    const reader = new CollectionReader(counted, () => PODS, 'test', running);
    reader.start();
    const first = await reader.inNamespace('a');
    expect(first).toEqual([{ metadata: expect.objectContaining({ name: 'p1' }) }]);
    let fromCopy = first;
    for (let i = 0; i < 100 && lists() > 0; i++) {
      const before = lists();
      fromCopy = await reader.inNamespace('a');
      if (lists() === before) break;
    }
    expect(fromCopy).toEqual([{ metadata: expect.objectContaining({ name: 'p1' }) }]);
    reader.stop();
    const before = lists();
    await storage.create('/registry/core/pods/a/p2', pod('a', 'p2'));
    expect(names(await reader.inNamespace('a'))).toEqual(['p1', 'p2']);
    expect(lists()).toBe(before + 1);
    expect(names(await reader.inNamespace('a'))).toEqual(['p1', 'p2']);
    expect(lists()).toBe(before + 2);
  });

  /** Reads until one is answered without a list (the copy has loaded); returns the lists made meanwhile. */
  async function untilFromCopy(reader: CollectionReader, ns: string): Promise<number> {
    const start = lists();
    for (let i = 0; i < 200; i++) {
      const before = lists();
      await reader.inNamespace(ns);
      if (lists() === before) return lists() - start;
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error('the copy never answered');
  }

  it("answers the first reads of its readers from the copy's one list, as they all come while it loads", async () => {
    for (let i = 0; i < 20; i++) await storage.create(`/registry/core/pods/ns${i % 4}/p${i}`, pod(`ns${i % 4}`, `p${i}`));
    const readers = [new CollectionReader(counted, () => PODS, 'one'), new CollectionReader(counted, () => PODS, 'two')];
    for (const r of readers) r.start();
    // Every queued sync of two controllers just started reads at once, before the copy is made.
    const reads = readers.flatMap((r) => [0, 1, 2, 3].map((n) => r.inNamespace(`ns${n}`)));
    const got = await Promise.all(reads);
    expect(got.map((objs) => objs.length)).toEqual(Array(8).fill(5));
    expect(names(got[1]!)).toEqual(['p1', 'p13', 'p17', 'p5', 'p9']);
    expect(await readers[1]!.all()).toHaveLength(20);
    // The copy's list alone: without waiting for it, each read would have listed its namespace.
    expect(lists()).toBe(1);
    for (const r of readers) r.stop();
  });

  it("reads storage when the copy's list fails, and the copy once a later list loads it", async () => {
    await storage.create('/registry/core/pods/a/p1', pod('a', 'p1'));
    let failNext = true;
    const flaky = new Proxy(counted, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (prop === 'list' && failNext) {
          failNext = false;
          return () => Promise.reject(new Error('injected list failure'));
        }
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const reader = new CollectionReader(flaky, () => PODS, 'flaky');
      reader.start();
      // The copy's list (the first) fails: the read lists storage itself rather than wait for a retry.
      expect(names(await reader.inNamespace('a'))).toEqual(['p1']);
      expect(lists()).toBe(1);
      expect(stderr).toHaveBeenCalledWith(expect.stringContaining('flaky: list failed (injected list failure), retrying'));
      // The copy lists again a second later; from then on it answers.
      await storage.create('/registry/core/pods/a/p2', pod('a', 'p2'));
      await new Promise((r) => setTimeout(r, 1100));
      const before = lists();
      expect(names(await reader.inNamespace('a'))).toEqual(['p1', 'p2']);
      expect(lists()).toBe(before);
      reader.stop();
    } finally {
      stderr.mockRestore();
    }
  });

  it('reads storage until started, and again after stop; a new start makes a new copy', async () => {
    await storage.create('/registry/core/pods/a/p1', pod('a', 'p1'));
    const reader = new CollectionReader(counted, () => PODS, 'test');
    for (let i = 0; i < 3; i++) {
      const before = lists();
      expect(names(await reader.inNamespace('a'))).toEqual(['p1']);
      expect(lists()).toBe(before + 1);
    }
    reader.start();
    await untilFromCopy(reader, 'a');
    reader.stop();
    await storage.create('/registry/core/pods/a/p2', pod('a', 'p2'));
    let before = lists();
    expect(names(await reader.inNamespace('a'))).toEqual(['p1', 'p2']);
    expect(lists()).toBe(before + 1);
    // Started again: a fresh copy, which holds what was written while it was stopped.
    reader.start();
    await untilFromCopy(reader, 'a');
    await storage.create('/registry/core/pods/a/p3', pod('a', 'p3'));
    before = lists();
    expect(names(await reader.inNamespace('a'))).toEqual(['p1', 'p2', 'p3']);
    expect(lists()).toBe(before);
    reader.stop();
  });

  it('fails a read while its kind is not served, and serves it once it is', async () => {
    const registry: { pods?: KindDeclaration } = {};
    const reader = new CollectionReader(counted, () => registry.pods, 'test');
    reader.start();
    await expect(reader.inNamespace('a')).rejects.toThrow('test: the kind is not served');
    registry.pods = PODS;
    await storage.create('/registry/core/pods/a/p1', pod('a', 'p1'));
    expect(names(await reader.inNamespace('a'))).toEqual(['p1']);
    reader.stop();
  });

  it('shares one copy among the readers of a collection in one projection, kept while any of them holds it', async () => {
    await storage.create('/registry/core/pods/a/p1', pod('a', 'p1'));
    const view = (o: KubeObject) => ({ metadata: o.metadata }) as KubeObject;
    const [r1, r2, projected] = [
      new CollectionReader(counted, () => PODS, 'one'),
      new CollectionReader(counted, () => PODS, 'two'),
      new CollectionReader(counted, () => PODS, 'view', view),
    ];
    for (const r of [r1, r2, projected]) r.start();
    await untilFromCopy(r1, 'a');
    expect(sharedCopyHolders(counted, PODS)).toBe(1);
    // The second reader of whole pods finds the copy loaded: no list at all.
    const before = lists();
    const [a, b] = [await r1.inNamespace('a'), await r2.inNamespace('a')];
    expect(lists()).toBe(before);
    expect(sharedCopyHolders(counted, PODS)).toBe(2);
    expect(a[0]).toBe(b[0]);
    // Another projection is another copy.
    await untilFromCopy(projected, 'a');
    expect(sharedCopyHolders(counted, PODS, view)).toBe(1);
    expect((await projected.inNamespace('a'))[0]).not.toBe(a[0]);
    // One holder stops: the other still reads the copy, and sees new writes.
    r1.stop();
    expect(sharedCopyHolders(counted, PODS)).toBe(1);
    await storage.create('/registry/core/pods/a/p2', pod('a', 'p2'));
    const mark = lists();
    expect(names(await r2.inNamespace('a'))).toEqual(['p1', 'p2']);
    expect(lists()).toBe(mark);
    r2.stop();
    projected.stop();
    expect(sharedCopyHolders(counted, PODS)).toBe(0);
    expect(sharedCopyHolders(counted, PODS, view)).toBe(0);
  });
});
