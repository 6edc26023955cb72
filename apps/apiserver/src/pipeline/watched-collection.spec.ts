import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import type { KubeObject } from '@app/apimachinery';
import { openLocalStorage, StorageError, type MvccStorage, type Storage, type StorageEvent, type WatchOptions, type WatchSink } from '@app/storage';
import { WatchedCollection } from './watched-collection.js';

/** A storage holding a list answer and the sinks of the watches opened on it (the two calls a WatchedCollection makes). */
function fakeStorage(items: KubeObject[], revision: number) {
  const sinks: Array<{ opts: WatchOptions; sink: WatchSink; stopped: boolean }> = [];
  let lists = 0;
  const storage = {
    list: async () => {
      lists++;
      return { items, revision };
    },
    watch: (opts: WatchOptions, sink: WatchSink) => {
      const w = { opts, sink, stopped: false };
      sinks.push(w);
      return { stop: () => (w.stopped = true) };
    },
  } as unknown as Storage;
  return { storage, sinks, items, lists: () => lists };
}

const sa = (ns: string, name: string, uid: string, terminating = false): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { namespace: ns, name, uid, ...(terminating ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
  }) as KubeObject;
const ev = (type: StorageEvent['type'], object: KubeObject, revision: number): StorageEvent => ({
  type,
  key: `/registry/core/serviceaccounts/x`,
  object,
  revision,
});
const uidOf = (o: KubeObject) => (o.metadata?.deletionTimestamp ? undefined : o.metadata?.uid);

describe('WatchedCollection', () => {
  it('lists, then watches from the list revision, keeping the projection of each object by namespace/name', async () => {
    const f = fakeStorage([sa('a', 'one', 'u1'), sa('a', 'gone', 'u0', true)], 7);
    const c = new WatchedCollection(f.storage, '/registry/core/serviceaccounts/', uidOf, 'test');
    const changes: string[] = [];
    c.onChange((k) => changes.push(k));
    c.start();
    await c.whenSynced();
    expect(c.get('a', 'one')).toBe('u1');
    expect(c.get('a', 'gone')).toBeUndefined();
    expect(f.sinks[0]!.opts).toEqual({ key: '/registry/core/serviceaccounts/', recursive: true, afterRevision: 7 });
    f.sinks[0]!.sink.event(ev('ADDED', sa('b', 'two', 'u2'), 8));
    f.sinks[0]!.sink.event(ev('MODIFIED', sa('a', 'one', 'u1', true), 9));
    expect(c.get('b', 'two')).toBe('u2');
    expect(c.get('a', 'one')).toBeUndefined();
    f.sinks[0]!.sink.event(ev('DELETED', sa('b', 'two', 'u2'), 10));
    expect(c.get('b', 'two')).toBeUndefined();
    expect(changes).toEqual(['', 'b/two', 'a/one', 'b/two']);
    c.stop();
  });

  it('with KAPI_FREEZE_COPIES=1 keeps every object frozen through and through, listed or watched', async () => {
    const saved = process.env.KAPI_FREEZE_COPIES;
    process.env.KAPI_FREEZE_COPIES = '1';
    try {
      const f = fakeStorage([sa('a', 'one', 'u1')], 7);
      const c = new WatchedCollection(f.storage, '/registry/core/serviceaccounts/', (o) => o, 'test');
      c.start();
      await c.whenSynced();
      f.sinks[0]!.sink.event(ev('ADDED', { ...sa('a', 'two', 'u2'), secrets: [{ name: 's' }] } as KubeObject, 8));
      for (const name of ['one', 'two']) {
        const o = c.get('a', name)!;
        expect(Object.isFrozen(o) && Object.isFrozen(o.metadata)).toBe(true);
        expect(() => {
          (o.metadata as Record<string, unknown>).name = 'changed';
        }).toThrow(TypeError);
      }
      const secrets = (c.get('a', 'two') as unknown as { secrets: Array<Record<string, unknown>> }).secrets;
      expect(() => (secrets[0]!.name = 'x')).toThrow(TypeError);
      c.stop();
      // Unset, nothing is frozen.
      delete process.env.KAPI_FREEZE_COPIES;
      const g = fakeStorage([sa('a', 'one', 'u1')], 7);
      const d = new WatchedCollection(g.storage, '/registry/core/serviceaccounts/', (o) => o, 'test');
      d.start();
      await d.whenSynced();
      expect(Object.isFrozen(d.get('a', 'one'))).toBe(false);
      d.stop();
    } finally {
      if (saved === undefined) delete process.env.KAPI_FREEZE_COPIES;
      else process.env.KAPI_FREEZE_COPIES = saved;
    }
  });

  it.each([false, true])("inNamespace gives one namespace's projections, kept current by events (index: %s)", async (indexed) => {
    const f = fakeStorage([sa('a', 'one', 'u1'), sa('ab', 'x', 'u3'), sa('b', 'two', 'u2')], 7);
    const c = new WatchedCollection(f.storage, '/registry/core/serviceaccounts/', uidOf, 'test', indexed);
    c.start();
    await c.whenSynced();
    expect(c.inNamespace('a')).toEqual(['u1']);
    expect(c.inNamespace('ab')).toEqual(['u3']);
    f.sinks[0]!.sink.event(ev('ADDED', sa('a', 'three', 'u4'), 8));
    expect(c.inNamespace('a').sort()).toEqual(['u1', 'u4']);
    f.sinks[0]!.sink.event(ev('MODIFIED', sa('a', 'one', 'u1', true), 9));
    f.sinks[0]!.sink.event(ev('DELETED', sa('b', 'two', 'u2'), 10));
    expect(c.inNamespace('a')).toEqual(['u4']);
    expect(c.inNamespace('b')).toEqual([]);
    expect(c.inNamespace('none')).toEqual([]);
    c.stop();
  });

  it('current(): true only once storage has settled and the watch has delivered up to its revision', async () => {
    let revision = 7;
    let delivered = 7;
    let settles = 0;
    const storage = {
      list: async () => ({ items: [sa('a', 'one', 'u1')], revision: 7 }),
      watch: () => ({ stop: () => undefined, progress: () => delivered }),
      currentRevision: () => revision,
      settled: async () => {
        settles++;
      },
    } as unknown as Storage;
    const c = new WatchedCollection(storage, '/registry/core/serviceaccounts/', uidOf, 'test');
    expect(await c.current()).toBe(false); // not listed yet
    c.start();
    await c.whenSynced();
    expect(await c.current()).toBe(true);
    revision = 9; // a write answered, its event not delivered yet
    expect(await c.current()).toBe(false);
    delivered = 9;
    expect(await c.current()).toBe(true);
    expect(settles).toBe(3);
    // A failed store never settles: the copy is taken as it is, so the write goes on to Raft,
    // whose next apply stops the node.
    (storage as unknown as { settled: () => Promise<void> }).settled = () => Promise.reject(new Error('IO error'));
    expect(await c.current()).toBe(true);
    c.stop();
    const { settled: _s, ...withoutSettled } = storage as unknown as Record<string, unknown>;
    const etcdLike = new WatchedCollection(withoutSettled as unknown as Storage, '/registry/core/serviceaccounts/', uidOf, 'test');
    etcdLike.start();
    await etcdLike.whenSynced();
    expect(await etcdLike.current()).toBe(false);
    etcdLike.stop();
  });

  it('relists after a failed watch, and stops for good', async () => {
    jest.useFakeTimers();
    try {
      const f = fakeStorage([sa('a', 'one', 'u1')], 3);
      const c = new WatchedCollection(f.storage, '/registry/core/serviceaccounts/', uidOf, 'test');
      const write = process.stderr.write;
      process.stderr.write = (() => true) as typeof process.stderr.write;
      try {
        c.start();
        await jest.advanceTimersByTimeAsync(0);
        f.sinks[0]!.sink.error(new StorageError('Compacted', '/registry/core/serviceaccounts/', 'compacted'));
        expect(f.sinks[0]!.stopped).toBe(true);
        await jest.advanceTimersByTimeAsync(1000);
        expect(f.lists()).toBe(2);
        expect(f.sinks).toHaveLength(2);
        // A reader key by key hears of every key kept before or after a relist: here one
        // created and one deleted while no watch ran.
        const perKey: string[] = [];
        const blank: string[] = [];
        c.onChange((k) => perKey.push(k), { perKey: true });
        c.onChange((k) => blank.push(k));
        f.items.splice(0, f.items.length, sa('b', 'two', 'u2'));
        f.sinks[1]!.sink.error(new StorageError('Compacted', '/registry/core/serviceaccounts/', 'compacted'));
        await jest.advanceTimersByTimeAsync(1000);
        expect(perKey.sort()).toEqual(['a/one', 'b/two']);
        expect(blank).toEqual(['']);
        expect(c.get('b', 'two')).toBe('u2');
        expect(c.get('a', 'one')).toBeUndefined();
      } finally {
        process.stderr.write = write;
      }
      c.stop();
      expect(f.sinks[2]!.stopped).toBe(true);
    } finally {
      jest.useRealTimers();
    }
  });
});

const SECRETS = '/registry/core/secrets/kube-system/';
const secret = (name: string, type: string, v = '1'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: 'kube-system', uid: `uid-${name}` },
  type,
  data: { v },
});
const TOKEN = 'bootstrap.kubernetes.io/token';

describe('WatchedCollection on a real MVCC storage', () => {
  let dir: string;
  let storage: MvccStorage;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'watched-collection-'));
    storage = (await openLocalStorage({ dataDir: dir, compactionIntervalMs: 0 })).storage;
  });
  afterEach(async () => {
    await storage.close();
    await rm(dir, { recursive: true, force: true });
  });

  const until = async (cond: () => boolean) => {
    const end = Date.now() + 3000;
    while (!cond()) {
      if (Date.now() > end) throw new Error('condition not met');
      await new Promise((r) => setTimeout(r, 5));
    }
  };

  it('follows creates, updates and deletes of the objects it keeps, and reports only their changes', async () => {
    await storage.create(`${SECRETS}a`, secret('a', TOKEN));
    await storage.create(`${SECRETS}b`, secret('b', 'Opaque'));
    await storage.create('/registry/core/secrets/default/c', { ...secret('c', TOKEN), metadata: { name: 'c', namespace: 'default' } });
    const cache = new WatchedCollection<KubeObject>(storage, SECRETS, (o) => (o.type === TOKEN ? o : undefined), 'test');
    const changes: string[] = [];
    cache.onChange((k) => changes.push(k));
    // A listener that throws does not keep the others from hearing of a change.
    cache.onChange(() => {
      throw new Error('listener bug');
    });
    cache.start();
    await cache.whenSynced();
    expect(cache.values().map((o) => o.metadata.name)).toEqual(['a']);

    await storage.create(`${SECRETS}d`, secret('d', TOKEN));
    await until(() => cache.get('kube-system', 'd') !== undefined);
    await storage.guaranteedUpdate(`${SECRETS}a`, (cur) => ({ ...cur, data: { v: '2' } }));
    await until(() => (cache.byKey('kube-system/a')?.data as { v: string }).v === '2');
    await storage.delete(`${SECRETS}d`);
    await until(() => cache.get('kube-system', 'd') === undefined);
    // An object that changes to a type the projection leaves out leaves the copy.
    await storage.guaranteedUpdate(`${SECRETS}a`, (cur) => ({ ...cur, type: 'Opaque' }));
    await until(() => cache.get('kube-system', 'a') === undefined);
    // Changes of objects left out before and after are not reported.
    await storage.guaranteedUpdate(`${SECRETS}b`, (cur) => ({ ...cur, data: { v: '3' } }));
    await storage.create(`${SECRETS}e`, secret('e', TOKEN));
    await until(() => cache.get('kube-system', 'e') !== undefined);
    expect(changes).toEqual(['', 'kube-system/d', 'kube-system/a', 'kube-system/d', 'kube-system/a', 'kube-system/e']);
    cache.stop();
  });
});
