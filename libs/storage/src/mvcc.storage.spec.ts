import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MvccStore } from '@app/mvcc';
import { openLocalStorage, type MvccStorage } from './mvcc.storage.js';
import type { KubeObject } from '@app/apimachinery';
import { CorruptListError, NO_CHANGE, StorageError, type StorageEvent } from './storage.interface.js';
import { collectionPrefix, objectKey } from './storage.keys.js';

const cm = (name: string, data: Record<string, string> = {}, ns = 'default'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns, uid: `uid-${name}` },
  data,
});
const key = (name: string, ns = 'default'): string => objectKey({ group: '', resource: 'configmaps', namespace: ns, name });
const PREFIX = collectionPrefix({ group: '', resource: 'configmaps' });
const latest = { mode: 'MostRecent' } as const;

describe('MvccStorage', () => {
  let dir: string;
  let storage: MvccStorage;
  let store: MvccStore;
  let putRaw: (k: string, value: string) => Promise<void>;

  const open = async (
    opts: {
      revisionWaitMs?: number;
      compactionIntervalMs?: number;
      replayWindowRevisions?: number;
      replayWindowBytes?: number;
      replayHeldEvents?: number;
      freezeSharedEvents?: boolean;
    } = {},
  ) => {
    const s = await openLocalStorage({ dataDir: dir, revisionWaitMs: 200, compactionIntervalMs: 0, ...opts });
    storage = s.storage;
    store = s.store;
    putRaw = async (k, value) =>
      void (await s.proposer.propose({ compares: [], success: [{ type: 'put', key: k, value: new TextEncoder().encode(value) }], failure: [] }));
  };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'storage-'));
    await open();
  });
  afterEach(async () => {
    await storage.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('builds registry keys and rejects bad segments', () => {
    expect(key('a')).toBe('/registry/core/configmaps/default/a');
    expect(objectKey({ group: 'rbac.authorization.k8s.io', resource: 'clusterroles', name: 'admin' })).toBe(
      '/registry/rbac.authorization.k8s.io/clusterroles/admin',
    );
    expect(() => objectKey({ group: '', resource: 'pods', name: 'a/b' })).toThrow(TypeError);
  });

  describe('values that do not decode', () => {
    it('fail a get naming the key, a list naming every one it read, a watch naming the first; deleteUndecodable removes only those', async () => {
      await storage.create(key('ok'), cm('ok'));
      const from = storage.currentRevision();
      const events: StorageEvent[] = [];
      const errors: StorageError[] = [];
      const h = storage.watch({ key: PREFIX, recursive: true, afterRevision: from }, { event: (e) => events.push(e), error: (e) => errors.push(e) });
      await putRaw(key('x'), '{');
      await putRaw(key('y'), '{"metadata":7}');
      await expect(storage.get(key('x'), latest)).rejects.toMatchObject({ code: 'CorruptObject', key: key('x') });
      const filtered = await storage.list(PREFIX, { consistency: latest, predicate: () => true }).catch((e: unknown) => e);
      expect(filtered).toBeInstanceOf(CorruptListError);
      expect((filtered as CorruptListError).objects.map((o) => o.key)).toEqual([key('x'), key('y')]);
      expect((filtered as CorruptListError).truncated).toBe(false);
      await expect(storage.list(PREFIX, { consistency: latest, key: key('y') })).rejects.toBeInstanceOf(CorruptListError);
      // The server's own readers may leave them out instead.
      expect((await storage.list(PREFIX, { consistency: latest, skipUndecodable: true })).items.map((o) => o.metadata.name)).toEqual(['ok']);
      expect(events).toEqual([]);
      expect(errors.map((e) => [e.code, e.key])).toEqual([['CorruptObject', key('x')]]);
      h.stop();
      expect(await storage.deleteUndecodable(key('ok'))).toEqual({ readable: true });
      expect(await storage.deleteUndecodable(key('x'))).toMatchObject({ readable: false });
      await expect(storage.deleteUndecodable(key('x'))).rejects.toMatchObject({ code: 'KeyNotFound' });
      expect(await storage.deleteUndecodable(key('y'))).toMatchObject({ readable: false });
      expect((await storage.list(PREFIX, { consistency: latest })).items.map((o) => o.metadata.name)).toEqual(['ok']);
    });
  });

  describe('create and get', () => {
    it('stores without resourceVersion and sets it from modRevision on every read', async () => {
      const input = cm('a', { k: 'v' });
      input.metadata.resourceVersion = '999';
      const created = await storage.create(key('a'), input);
      expect(created.metadata.resourceVersion).toBe('1');
      expect(created.data).toEqual({ k: 'v' });
      const raw = await store.get(key('a'));
      expect(JSON.parse(new TextDecoder().decode(raw!.value)).metadata.resourceVersion).toBeUndefined();
      expect((await storage.get(key('a'), latest))?.metadata.resourceVersion).toBe('1');
      expect((await storage.get(key('a'), { mode: 'Any' }))?.metadata.resourceVersion).toBe('1');
      expect(await storage.get(key('nope'), latest)).toBeUndefined();
    });

    it('create of an existing key fails with KeyExists; dryRun never writes', async () => {
      await storage.create(key('a'), cm('a'));
      await expect(storage.create(key('a'), cm('a'))).rejects.toMatchObject({ code: 'KeyExists' });
      await expect(storage.create(key('a'), cm('a'), { dryRun: true })).rejects.toMatchObject({ code: 'KeyExists' });
      const dry = await storage.create(key('b'), cm('b'), { dryRun: true });
      expect(dry.metadata.name).toBe('b');
      expect(dry.metadata.resourceVersion).toBeUndefined();
      expect(await storage.get(key('b'), latest)).toBeUndefined();
      expect(storage.currentRevision()).toBe(1);
    });

    it('rejects an object without metadata with a typed error', async () => {
      await expect(storage.create(key('x'), {} as KubeObject)).rejects.toBeInstanceOf(StorageError);
    });

    it('NotOlderThan waits for the revision, then times out with TooLargeResourceVersion', async () => {
      await storage.create(key('a'), cm('a'));
      expect(await storage.get(key('a'), { mode: 'NotOlderThan', revision: 1 })).toBeDefined();
      const waiting = storage.get(key('b'), { mode: 'NotOlderThan', revision: 2 });
      await storage.create(key('b'), cm('b'));
      expect((await waiting)?.metadata.name).toBe('b');
      const err = await storage.get(key('a'), { mode: 'NotOlderThan', revision: 50 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StorageError);
      expect(err).toMatchObject({ code: 'TooLargeResourceVersion', currentRevision: 2, requestedRevision: 50 });
      expect((err as Error).message).toContain('Too large resource version');
    });

    it('Exact reads at a past revision; compacted revisions fail with Compacted', async () => {
      await storage.create(key('a'), cm('a', { v: '1' }));
      await storage.guaranteedUpdate(key('a'), (o) => ({ ...o, data: { v: '2' } }));
      const old = await storage.get(key('a'), { mode: 'Exact', revision: 1 });
      expect(old?.data).toEqual({ v: '1' });
      expect(old?.metadata.resourceVersion).toBe('1');
      await store.compact(2);
      await expect(storage.get(key('a'), { mode: 'Exact', revision: 1 })).rejects.toMatchObject({ code: 'Compacted' });
      await expect(storage.get(key('a'), { mode: 'Exact', revision: 9 })).rejects.toMatchObject({ code: 'TooLargeResourceVersion' });
    });
  });

  describe('list', () => {
    beforeEach(async () => {
      for (const [ns, name] of [
        ['a', 'x'],
        ['a', 'y'],
        ['b', 'x'],
        ['b', 'y'],
        ['c', 'z'],
      ] as const) {
        await storage.create(key(name, ns), cm(name, { ns }, ns));
      }
    });

    it('returns key-ordered items, the revision, and paging information', async () => {
      const all = await storage.list(PREFIX, { consistency: latest });
      expect(all.items.map((o) => `${o.metadata.namespace}/${o.metadata.name}`)).toEqual(['a/x', 'a/y', 'b/x', 'b/y', 'c/z']);
      expect(all.revision).toBe(5);
      expect(all.continueAfterKey).toBeUndefined();
      expect(all.items[2]!.metadata.resourceVersion).toBe('3');

      const p1 = await storage.list(PREFIX, { consistency: latest, limit: 2 });
      expect(p1.items).toHaveLength(2);
      expect(p1.continueAfterKey).toBe(key('y', 'a'));
      expect(p1.remaining).toBe(3);
      // Later writes do not show in a continuation read at the first page's revision.
      await storage.create(key('w', 'b'), cm('w', {}, 'b'));
      const p2 = await storage.list(PREFIX, { consistency: { mode: 'Exact', revision: p1.revision }, limit: 2, startAfterKey: p1.continueAfterKey });
      expect(p2.items.map((o) => o.metadata.name)).toEqual(['x', 'y']);
      expect(p2.revision).toBe(5);
      expect(p2.remaining).toBe(1);
      const p3 = await storage.list(PREFIX, { consistency: { mode: 'Exact', revision: 5 }, limit: 2, startAfterKey: p2.continueAfterKey });
      expect(p3.items.map((o) => o.metadata.name)).toEqual(['z']);
      expect(p3.continueAfterKey).toBeUndefined();
    });

    it('fills pages up to limit with a predicate; remaining counts keys before filtering', async () => {
      const onlyX = (o: KubeObject) => o.metadata.name === 'x' || o.metadata.name === 'z';
      const p1 = await storage.list(PREFIX, { consistency: latest, limit: 2, predicate: onlyX });
      expect(p1.items.map((o) => `${o.metadata.namespace}/${o.metadata.name}`)).toEqual(['a/x', 'b/x']);
      expect(p1.continueAfterKey).toBe(key('x', 'b'));
      expect(p1.remaining).toBe(2);
      const p2 = await storage.list(PREFIX, { consistency: latest, limit: 2, predicate: onlyX, startAfterKey: p1.continueAfterKey });
      expect(p2.items.map((o) => o.metadata.name)).toEqual(['z']);
      expect(p2.continueAfterKey).toBeUndefined();
    });

    it("narrowed to one key: that key alone, never a key it prefixes, at the read's revision", async () => {
      const nsA = collectionPrefix({ group: '', resource: 'configmaps', namespace: 'a' });
      await storage.create(key('x-1', 'a'), cm('x-1', {}, 'a'));
      await storage.create(key('xa', 'a'), cm('xa', {}, 'a'));
      const one = await storage.list(nsA, { consistency: latest, key: key('x', 'a'), limit: 1 });
      expect(one.items.map((o) => `${o.metadata.namespace}/${o.metadata.name}`)).toEqual(['a/x']);
      expect(one.revision).toBe(7);
      expect(one.continueAfterKey).toBeUndefined();
      const before = one.revision;
      await storage.delete(key('x', 'a'));
      // Absent: an empty list at the current revision, though x-1 and xa start with its key.
      const gone = await storage.list(nsA, { consistency: latest, key: key('x', 'a') });
      expect(gone).toEqual({ items: [], revision: 8 });
      // At a past revision, the version live then.
      const past = await storage.list(nsA, { consistency: { mode: 'Exact', revision: before }, key: key('x', 'a') });
      expect(past.items.map((o) => [o.metadata.name, o.metadata.resourceVersion])).toEqual([['x', '1']]);
      expect(past.revision).toBe(before);
      // The predicate and a continue position still apply.
      expect((await storage.list(nsA, { consistency: latest, key: key('y', 'a'), predicate: () => false })).items).toEqual([]);
      expect((await storage.list(nsA, { consistency: latest, key: key('y', 'a'), startAfterKey: key('y', 'a') })).items).toEqual([]);
      expect((await storage.list(nsA, { consistency: latest, key: key('y', 'a'), startAfterKey: key('x', 'a') })).items).toHaveLength(1);
    });

    it('lists one namespace only', async () => {
      const res = await storage.list(collectionPrefix({ group: '', resource: 'configmaps', namespace: 'b' }), { consistency: { mode: 'Any' } });
      expect(res.items.map((o) => o.metadata.name)).toEqual(['x', 'y']);
    });
  });

  describe('guaranteedUpdate', () => {
    it('updates with CAS and returns the new resourceVersion', async () => {
      await storage.create(key('a'), cm('a', { n: '0' }));
      const r = await storage.guaranteedUpdate(key('a'), (o) => ({ ...o, data: { n: '1' } }));
      expect(r).toMatchObject({ created: false, changed: true });
      expect(r.object.metadata.resourceVersion).toBe('2');
      expect((await storage.get(key('a'), latest))?.data).toEqual({ n: '1' });
    });

    it('retries tryUpdate with fresh state when a concurrent write wins', async () => {
      await storage.create(key('ctr'), cm('ctr', { n: '0' }));
      const inc = (o: KubeObject): KubeObject => ({ ...o, data: { n: String(Number((o.data as { n: string }).n) + 1) } });
      await Promise.all(Array.from({ length: 30 }, () => storage.guaranteedUpdate(key('ctr'), inc)));
      expect((await storage.get(key('ctr'), latest))?.data).toEqual({ n: '30' });
      expect(storage.currentRevision()).toBe(31);
    });

    it('checks preconditions against the state it sees: Conflict', async () => {
      await storage.create(key('a'), cm('a'));
      await expect(storage.guaranteedUpdate(key('a'), (o) => o, { preconditions: { uid: 'other' } })).rejects.toMatchObject({ code: 'Conflict' });
      await expect(storage.guaranteedUpdate(key('a'), (o) => ({ ...o, data: { a: 'b' } }), { preconditions: { resourceVersion: '7' } })).rejects.toMatchObject({
        code: 'Conflict',
      });
      const ok = await storage.guaranteedUpdate(key('a'), (o) => ({ ...o, data: { a: 'b' } }), { preconditions: { resourceVersion: '1', uid: 'uid-a' } });
      expect(ok.changed).toBe(true);
    });

    it('NO_CHANGE and identical objects do not write', async () => {
      await storage.create(key('a'), cm('a', { k: 'v' }));
      const r1 = await storage.guaranteedUpdate(key('a'), () => NO_CHANGE);
      expect(r1).toMatchObject({ changed: false, created: false });
      expect(r1.object.metadata.resourceVersion).toBe('1');
      const r2 = await storage.guaranteedUpdate(key('a'), (o) => ({ ...o, metadata: { ...o.metadata, resourceVersion: '1' } }));
      expect(r2.changed).toBe(false);
      expect(storage.currentRevision()).toBe(1);
    });

    it('KeyNotFound when missing; createIfMissing creates put-if-absent', async () => {
      await expect(storage.guaranteedUpdate(key('m'), (o) => o)).rejects.toMatchObject({ code: 'KeyNotFound' });
      const r = await storage.guaranteedUpdate(key('m'), (o) => ({ ...o, data: { made: 'yes' } }), { createIfMissing: () => cm('m') });
      expect(r).toMatchObject({ created: true, changed: true });
      expect(r.object.data).toEqual({ made: 'yes' });
      const again = await storage.guaranteedUpdate(key('m'), (o) => ({ ...o, data: { made: 'twice' } }), { createIfMissing: () => cm('m') });
      expect(again.created).toBe(false);
    });

    it('dryRun computes the result without writing; errors thrown by tryUpdate abort', async () => {
      await storage.create(key('a'), cm('a'));
      const r = await storage.guaranteedUpdate(key('a'), (o) => ({ ...o, data: { x: 'y' } }), { dryRun: true });
      expect(r.object.data).toEqual({ x: 'y' });
      expect(r.object.metadata.resourceVersion).toBe('1');
      expect((await storage.get(key('a'), latest))?.data).toEqual({});
      await expect(storage.guaranteedUpdate(key('a'), () => Promise.reject(new Error('invalid')))).rejects.toThrow('invalid');
      expect(storage.currentRevision()).toBe(1);
    });
  });

  describe('delete', () => {
    it('returns the last state with resourceVersion = the deletion revision', async () => {
      await storage.create(key('a'), cm('a', { k: 'v' }));
      const gone = await storage.delete(key('a'));
      expect(gone.data).toEqual({ k: 'v' });
      expect(gone.metadata.resourceVersion).toBe('2');
      expect(await storage.get(key('a'), latest)).toBeUndefined();
      await expect(storage.delete(key('a'))).rejects.toMatchObject({ code: 'KeyNotFound' });
    });

    it('honours preconditions, validate and dryRun', async () => {
      await storage.create(key('a'), cm('a'));
      await expect(storage.delete(key('a'), { preconditions: { uid: 'x' } })).rejects.toMatchObject({ code: 'Conflict' });
      await expect(storage.delete(key('a'), { preconditions: { resourceVersion: '5' } })).rejects.toMatchObject({ code: 'Conflict' });
      await expect(
        storage.delete(key('a'), {
          validate: () => {
            throw new Error('finalizers');
          },
        }),
      ).rejects.toThrow('finalizers');
      const dry = await storage.delete(key('a'), { dryRun: true });
      expect(dry.metadata.resourceVersion).toBe('1');
      expect(await storage.get(key('a'), latest)).toBeDefined();
      expect((await storage.delete(key('a'), { preconditions: { uid: 'uid-a', resourceVersion: '1' } })).metadata.resourceVersion).toBe('2');
    });
  });

  describe('watch', () => {
    const collect = (opts: { key: string; recursive: boolean; afterRevision: number }) => {
      const events: StorageEvent[] = [];
      const errors: StorageError[] = [];
      const handle = storage.watch(opts, { event: (e) => events.push(e), error: (e) => errors.push(e) });
      return { events, errors, handle };
    };
    const until = async (cond: () => boolean): Promise<void> => {
      for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
      expect(cond()).toBe(true);
    };

    it('gives every live watcher the same decoded object, frozen through and through with freezeSharedEvents', async () => {
      await storage.create(key('shared'), cm('shared', { a: '1' }));
      const live = async (): Promise<StorageEvent[]> => {
        const rev = store.currentRevision();
        const [w1, w2] = [collect({ key: PREFIX, recursive: true, afterRevision: rev }), collect({ key: key('shared'), recursive: false, afterRevision: rev })];
        await new Promise((r) => setTimeout(r, 20));
        await storage.guaranteedUpdate(key('shared'), (cur) => ({ ...cur, data: { a: String(Number((cur.data as { a: string }).a) + 1) } }));
        await until(() => w1.events.length === 1 && w2.events.length === 1);
        w1.handle.stop();
        w2.handle.stop();
        expect(w1.events[0]!.object).toBe(w2.events[0]!.object);
        return [w1.events[0]!, w2.events[0]!];
      };
      // By default the shared objects are plain objects (readers must still not change them).
      const [plain] = await live();
      expect(Object.isFrozen(plain!.object)).toBe(false);
      await storage.close();
      await open({ freezeSharedEvents: true });
      const [frozen, other] = await live();
      for (const o of [frozen!.object, frozen!.prevObject!, frozen!.object.metadata, frozen!.object.data]) expect(Object.isFrozen(o)).toBe(true);
      expect(() => {
        (frozen!.object.data as Record<string, string>).a = 'changed';
      }).toThrow(TypeError);
      expect((other!.object.data as Record<string, string>).a).toBe('3');
      // A watcher that changes the shared object is ended, and says why; the others go on.
      const rev = store.currentRevision();
      const errors: StorageError[] = [];
      const bad = storage.watch(
        { key: key('shared'), recursive: false, afterRevision: rev },
        {
          event: (e) => {
            (e.object.data as Record<string, string>).a = 'changed';
          },
          error: (e) => errors.push(e),
        },
      );
      const good = collect({ key: key('shared'), recursive: false, afterRevision: rev });
      await new Promise((r) => setTimeout(r, 20));
      await storage.guaranteedUpdate(key('shared'), (cur) => ({ ...cur, data: { a: '4' } }));
      await until(() => errors.length === 1 && good.events.length === 1);
      expect(errors[0]!.code).toBe('Internal');
      expect(errors[0]!.message).toMatch(/^watch sink failed: Cannot assign to read only property 'a'/);
      expect((good.events[0]!.object.data as Record<string, string>).a).toBe('4');
      bad.stop();
      good.handle.stop();
    });

    it('replays history then switches to live events without gaps or duplicates', async () => {
      for (let i = 0; i < 20; i++) await storage.create(key(`h${i}`), cm(`h${i}`));
      // Start watches while batches keep landing, at several points of the write stream, so the
      // replay/live switch happens while a batch is being written (its events are then both in
      // the history snapshot and on the bus).
      const writes = Promise.all(Array.from({ length: 300 }, (_, i) => storage.create(key(`l${i}`), cm(`l${i}`))));
      const watches: ReturnType<typeof collect>[] = [];
      for (let i = 0; i < 8; i++) {
        watches.push(collect({ key: PREFIX, recursive: true, afterRevision: 5 }));
        await new Promise((r) => setImmediate(r));
      }
      await writes;
      for (const w of watches) {
        await until(() => w.events.length >= 315);
        expect(w.events.map((e) => e.revision)).toEqual(Array.from({ length: 315 }, (_, i) => i + 6));
        expect(w.events.every((e) => e.type === 'ADDED' && e.object.metadata.resourceVersion === String(e.revision))).toBe(true);
        expect(w.errors).toEqual([]);
        w.handle.stop();
      }
      await storage.create(key('after'), cm('after'));
      expect(watches[0]!.events).toHaveLength(315);
    });

    it('an event both in the history snapshot and on the bus is delivered once', async () => {
      await storage.create(key('a'), cm('a'));
      // Reproduce the race deterministically: a write lands (and is emitted to the bus, where the
      // replaying watch buffers it) before the history snapshot is taken, so both contain it.
      const original = store.eventsAfter.bind(store);
      store.eventsAfter = async (...args) => {
        await storage.create(key('b'), cm('b'));
        return original(...args);
      };
      const w = collect({ key: PREFIX, recursive: true, afterRevision: 0 });
      await until(() => w.events.length >= 2);
      store.eventsAfter = original;
      await storage.create(key('c'), cm('c'));
      await until(() => w.events.length >= 3);
      expect(w.events.map((e) => e.revision)).toEqual([1, 2, 3]);
    });

    it('replays a long history a window of revisions at a time, then goes live; a compaction between windows ends it with 410', async () => {
      await storage.close();
      await open({ replayWindowRevisions: 4 });
      // Revisions of other keys between the watched ones: windows with few or no events.
      for (let i = 0; i < 30; i++) {
        await storage.create(key(`w${i}`), cm(`w${i}`));
        if (i % 3 === 0) await storage.create(key(`o${i}`, 'other'), cm(`o${i}`, {}, 'other'));
      }
      const windows: (number | undefined)[][] = [];
      const original = store.eventsAfter.bind(store);
      store.eventsAfter = async (after, match, opts) => {
        windows.push([after, opts?.until]);
        // Writes land while the replay is under way: they arrive live, once, after it.
        if (windows.length === 3) void storage.create(key('late'), cm('late'));
        return original(after, match, opts);
      };
      const w = collect({ key: collectionPrefix({ group: '', resource: 'configmaps', namespace: 'default' }), recursive: true, afterRevision: 0 });
      await until(() => w.events.some((e) => e.object.metadata.name === 'late'));
      const names = w.events.map((e) => e.object.metadata.name);
      expect(names).toEqual([...Array.from({ length: 30 }, (_, i) => `w${i}`), 'late']);
      expect(new Set(w.events.map((e) => e.revision)).size).toBe(31);
      expect(w.errors).toEqual([]);
      // Windows of 4 revisions from 0 up to the revision the replay reached: 40 revisions were
      // written before it started; the late write lands within the replay (one more window) or
      // after it (then it comes live), depending on how soon its fsync returns.
      expect(windows.length).toBeGreaterThanOrEqual(10);
      windows.forEach(([after, until], i) => {
        expect(after).toBe(4 * i);
        expect(until).toBe(4 * i + 4);
      });
      w.handle.stop();

      // A compaction past the replay's position between two windows: 410, as for any watch
      // from a compacted revision.
      store.eventsAfter = async (after, match, opts) => {
        if (after > 0) await store.compact(store.currentRevision());
        return original(after, match, opts);
      };
      const gone = collect({ key: PREFIX, recursive: true, afterRevision: 0 });
      await until(() => gone.errors.length > 0);
      expect(gone.errors[0]!.code).toBe('Compacted');
      expect(gone.events.length).toBeLessThanOrEqual(4);
      store.eventsAfter = original;
    });

    it('reads the next window only when the sink is ready; drops held live events past the bound and rereads them', async () => {
      await storage.close();
      await open({ replayWindowRevisions: 5, replayHeldEvents: 3 });
      for (let i = 0; i < 20; i++) await storage.create(key(`h${i}`), cm(`h${i}`));
      let reads = 0;
      const original = store.eventsAfter.bind(store);
      store.eventsAfter = async (after, match, opts) => {
        reads++;
        const read = await original(after, match, opts);
        // The last window: more writes than it may hold land after its snapshot was read and
        // before its events are handed over. Their events are dropped, so the replay must go on
        // from the history instead of switching to live.
        if (after === 25) for (let i = 0; i < 5; i++) await storage.create(key(`m${i}`), cm(`m${i}`));
        return read;
      };
      // A sink whose consumer is busy until `release` is called.
      let release: (() => void) | undefined;
      let asked = 0;
      const events: StorageEvent[] = [];
      const errors: StorageError[] = [];
      const handle = storage.watch(
        { key: PREFIX, recursive: true, afterRevision: 0 },
        {
          event: (e) => events.push(e),
          error: (e) => errors.push(e),
          ready: () => {
            asked++;
            return new Promise<void>((r) => (release = r));
          },
        },
      );
      await until(() => release !== undefined);
      // One window handed over, and no further read while the consumer is busy, even as
      // writes land: more than the 3 events it may hold, so they are dropped.
      for (let i = 0; i < 10; i++) await storage.create(key(`l${i}`), cm(`l${i}`));
      await new Promise((r) => setTimeout(r, 30));
      expect(events.map((e) => e.revision)).toEqual([1, 2, 3, 4, 5]);
      expect(reads).toBe(1);
      // Released window by window: every event once, in order, the dropped ones from history.
      for (let i = 0; i < 20 && events.length < 35; i++) {
        const r = release!;
        release = undefined;
        r();
        await until(() => release !== undefined || events.length >= 35);
      }
      expect(events.map((e) => e.revision)).toEqual(Array.from({ length: 35 }, (_, i) => i + 1));
      // Windows after 0, 5, ..., 25, then the one that reads the dropped events (30-35).
      expect(reads).toBe(7);
      expect(asked).toBe(6);
      // Live after the replay: the sink is not asked again, writes arrive at once.
      await storage.create(key('live'), cm('live'));
      await until(() => events.length === 36);
      expect(events[35]!.object.metadata.name).toBe('live');
      expect(asked).toBe(6);
      expect(errors).toEqual([]);
      handle.stop();
      store.eventsAfter = original;
    });

    it('a replay window also ends once its values reach replayWindowBytes', async () => {
      await storage.close();
      await open({ replayWindowRevisions: 1000, replayWindowBytes: 3000 });
      const big = 'x'.repeat(1000);
      for (let i = 0; i < 6; i++) await storage.create(key(`b${i}`), cm(`b${i}`, { big }));
      let release: (() => void) | undefined;
      const events: StorageEvent[] = [];
      const handle = storage.watch(
        { key: PREFIX, recursive: true, afterRevision: 0 },
        { event: (e) => events.push(e), error: () => undefined, ready: () => new Promise<void>((r) => (release = r)) },
      );
      // Three values of over 1,000 bytes reach the bound: the window ends after the third.
      await until(() => release !== undefined);
      await new Promise((r) => setTimeout(r, 30));
      expect(events.map((e) => e.revision)).toEqual([1, 2, 3]);
      release!();
      await until(() => events.length === 6);
      expect(events.map((e) => e.revision)).toEqual([1, 2, 3, 4, 5, 6]);
      handle.stop();
    });

    it('a watch from a future revision delivers only later events', async () => {
      await storage.create(key('a'), cm('a'));
      const w = collect({ key: PREFIX, recursive: true, afterRevision: 3 });
      for (const n of ['b', 'c', 'd', 'e']) await storage.create(key(n), cm(n));
      await until(() => w.events.length >= 2);
      expect(w.events.map((e) => e.revision)).toEqual([4, 5]);
    });

    it('goes on across a snapshot install when the new history still holds its position, else ends with 410', async () => {
      const dir2 = await mkdtemp(join(tmpdir(), 'storage-leader-'));
      const leader = await openLocalStorage({ dataDir: dir2, revisionWaitMs: 200, compactionIntervalMs: 0 });
      try {
        for (const n of ['a', 'b']) await storage.create(key(n), cm(n));
        const w = collect({ key: PREFIX, recursive: true, afterRevision: 0 });
        await until(() => w.events.length === 2);
        for (const n of ['a', 'b', 'c', 'd']) await leader.storage.create(key(n), cm(n, { from: 'leader' }));
        await store.importSnapshot(await leader.store.exportSnapshot());
        await until(() => w.events.length === 4);
        await storage.create(key('e'), cm('e'));
        await until(() => w.events.length === 5);
        expect(w.events.map((e) => `${e.type}:${e.object.metadata.name}@${e.revision}`)).toEqual([
          'ADDED:a@1',
          'ADDED:b@2',
          'ADDED:c@3',
          'ADDED:d@4',
          'ADDED:e@5',
        ]);
        expect(w.events[2]!.object.data).toEqual({ from: 'leader' });
        expect(w.errors).toEqual([]);
        // The leader compacted past this watch's position: nothing to go on from.
        for (const n of ['e', 'f', 'g']) await leader.storage.create(key(n), cm(n));
        await leader.store.compact(7);
        await store.importSnapshot(await leader.store.exportSnapshot());
        await until(() => w.errors.length === 1);
        expect(w.errors[0]).toMatchObject({ code: 'Compacted' });
      } finally {
        await leader.storage.close();
        await rm(dir2, { recursive: true, force: true });
      }
    });

    it('MODIFIED carries prevObject; DELETED carries the last state at the deletion revision', async () => {
      const w = collect({ key: PREFIX, recursive: true, afterRevision: 0 });
      await storage.create(key('a'), cm('a', { v: '1' }));
      await storage.guaranteedUpdate(key('a'), (o) => ({ ...o, data: { v: '2' } }));
      await storage.delete(key('a'));
      await until(() => w.events.length === 3);
      const [added, modified, deleted] = w.events;
      expect(added).toMatchObject({ type: 'ADDED', revision: 1 });
      expect(modified).toMatchObject({
        type: 'MODIFIED',
        revision: 2,
        object: { data: { v: '2' } },
        prevObject: { data: { v: '1' }, metadata: { resourceVersion: '1' } },
      });
      expect(deleted).toMatchObject({
        type: 'DELETED',
        revision: 3,
        object: { data: { v: '2' }, metadata: { resourceVersion: '3' } },
        prevObject: { metadata: { resourceVersion: '2' } },
      });
    });

    it('a non-recursive watch sees exactly one key (not keys it prefixes)', async () => {
      const w = collect({ key: key('a'), recursive: false, afterRevision: 0 });
      await storage.create(key('a'), cm('a'));
      await storage.create(key('ab'), cm('ab'));
      await storage.create(key('b'), cm('b'));
      await storage.guaranteedUpdate(key('a'), (o) => ({ ...o, data: { x: '1' } }));
      await until(() => w.events.length === 2);
      await new Promise((r) => setTimeout(r, 20));
      expect(w.events.map((e) => [e.type, e.key])).toEqual([
        ['ADDED', key('a')],
        ['MODIFIED', key('a')],
      ]);
    });

    it('decodes a live event once and hands the same event to every watcher of the key', async () => {
      const a = collect({ key: PREFIX, recursive: true, afterRevision: 0 });
      const b = collect({ key: PREFIX, recursive: true, afterRevision: 0 });
      const one = collect({ key: key('x'), recursive: false, afterRevision: 0 });
      await until(() => a.handle.progress!() === 0 && b.handle.progress!() === 0);
      await new Promise((r) => setTimeout(r, 20)); // let both replays finish (nothing to replay)
      await storage.create(key('x'), cm('x'));
      await until(() => a.events.length === 1 && b.events.length === 1 && one.events.length === 1);
      expect(a.events[0]).toBe(b.events[0]);
      expect(a.events[0]).toBe(one.events[0]);
      expect(a.events[0]!.object.metadata.resourceVersion).toBe('1');
    });

    it('progress() tells the revision through which every event was delivered, writes to other keys included', async () => {
      await storage.create(key('a'), cm('a'));
      const w = collect({ key: key('a'), recursive: false, afterRevision: 0 });
      await until(() => w.events.length === 1);
      await new Promise((r) => setTimeout(r, 20));
      expect(w.handle.progress!()).toBe(1);
      await storage.create(key('b'), cm('b'));
      await storage.create(key('c'), cm('c'));
      // No event for b or c reached this watcher, yet nothing up to revision 3 is pending.
      expect(w.events).toHaveLength(1);
      expect(w.handle.progress!()).toBe(3);
      w.handle.stop();
    });

    it('fails with Compacted when the start revision was compacted', async () => {
      await storage.create(key('a'), cm('a'));
      await storage.create(key('b'), cm('b'));
      await store.compact(2);
      const w = collect({ key: PREFIX, recursive: true, afterRevision: 1 });
      await until(() => w.errors.length === 1);
      expect(w.errors[0]!.code).toBe('Compacted');
      await storage.create(key('c'), cm('c'));
      expect(w.events).toEqual([]);
    });
  });

  it('the compaction timer drops history older than one period', async () => {
    await storage.close();
    await open({ compactionIntervalMs: 60 });
    await storage.create(key('a'), cm('a'));
    await storage.create(key('b'), cm('b'));
    // First tick marks revision 2; the second compacts to it.
    for (let i = 0; i < 100 && storage.compactedRevision() < 2; i++) await new Promise((r) => setTimeout(r, 10));
    expect(storage.compactedRevision()).toBe(2);
    await expect(storage.get(key('a'), { mode: 'Exact', revision: 1 })).rejects.toMatchObject({ code: 'Compacted' });
  });

  it('compaction interval 0 keeps all history', async () => {
    await storage.close();
    await open({ compactionIntervalMs: 0 });
    await storage.create(key('a'), cm('a'));
    await storage.create(key('b'), cm('b'));
    await new Promise((r) => setTimeout(r, 150));
    expect(storage.compactedRevision()).toBe(0);
    expect((await storage.list(PREFIX, { consistency: { mode: 'Exact', revision: 1 } })).items.map((o) => o.metadata.name)).toEqual(['a']);
  });

  it('state survives close and reopen', async () => {
    await storage.create(key('a'), cm('a'));
    await storage.close();
    await open();
    expect((await storage.get(key('a'), latest))?.metadata.resourceVersion).toBe('1');
    await expect(storage.create(key('a'), cm('a'))).rejects.toMatchObject({ code: 'KeyExists' });
  });
});
