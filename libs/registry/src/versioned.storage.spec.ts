import type { KubeObject } from '@app/apimachinery';
import type { ListOptions, Storage, StorageEvent, WatchOptions, WatchSink } from '@app/storage';
import { versionedStorage } from './versioned.storage.js';
import { FakeStorage } from './storage.fake.js';

/** A toy kind stored at v2 (`size` as a string) and served at v1 (`size` as a number). */
const CONVERSION = {
  storageVersion: 'v2',
  convert: (o: KubeObject, to: string): KubeObject => {
    const at = String(o.apiVersion).split('/')[1];
    if (at === to) return o;
    return to === 'v2' ? { ...o, apiVersion: 'ex.io/v2', size: String(o.size) } : { ...o, apiVersion: 'ex.io/v1', size: Number(o.size) };
  },
};
const KEY = '/registry/ex.io/boxes/ns/a';
const box = (size: number): KubeObject => ({ apiVersion: 'ex.io/v1', kind: 'Box', metadata: { name: 'a', namespace: 'ns' }, size });

describe('versionedStorage', () => {
  it('stores at the storage version and serves at the served one', async () => {
    const inner = new FakeStorage([]);
    const s = versionedStorage(inner, CONVERSION, 'v1');
    expect(await s.create(KEY, box(3))).toMatchObject({ apiVersion: 'ex.io/v1', size: 3 });
    expect(await inner.get(KEY, { mode: 'MostRecent' })).toMatchObject({ apiVersion: 'ex.io/v2', size: '3' });
    const res = await s.guaranteedUpdate(KEY, (cur) => ({ ...cur, size: Number(cur.size) + 1 }));
    expect(res.object).toMatchObject({ apiVersion: 'ex.io/v1', size: 4 });
  });

  it("converts watch events and keeps the watcher's pacing", async () => {
    const inner = new FakeStorage([]);
    const s = versionedStorage(inner, CONVERSION, 'v1');
    let innerSink: WatchSink | undefined;
    const spied = { ...inner, watch: (opts: WatchOptions, sink: WatchSink) => ((innerSink = sink), inner.watch(opts, sink)) } as unknown as Storage;
    const paced = versionedStorage(spied, CONVERSION, 'v1');
    const events: StorageEvent[] = [];
    const wait = Promise.resolve();
    paced.watch(
      { key: '/registry/ex.io/boxes/', recursive: true, afterRevision: 0 },
      { event: (e) => events.push(e), error: () => undefined, ready: () => wait },
    );
    await s.create(KEY, box(5));
    expect(events[0]?.object).toMatchObject({ apiVersion: 'ex.io/v1', size: 5 });
    // A replay asks the sink whether to go on: the question reaches the watcher through the wrapper.
    expect(innerSink?.ready?.()).toBe(wait);
    paced.watch({ key: '/registry/ex.io/boxes/', recursive: true, afterRevision: 0 }, { event: () => undefined, error: () => undefined });
    expect(innerSink?.ready).toBeUndefined();
  });

  it('converts a live event once for all its watchers', async () => {
    const inner = new FakeStorage([]);
    let conversions = 0;
    const counting = { ...CONVERSION, convert: (o: KubeObject, to: string) => (conversions++, CONVERSION.convert(o, to)) };
    const s = versionedStorage(inner, counting, 'v1');
    const seen: StorageEvent[][] = [[], [], []];
    for (const events of seen)
      s.watch({ key: '/registry/ex.io/boxes/', recursive: true, afterRevision: 0 }, { event: (e) => events.push(e), error: () => undefined });
    await inner.create(KEY, { ...box(2), apiVersion: 'ex.io/v2', size: '2' });
    await inner.guaranteedUpdate(KEY, (cur) => ({ ...cur, size: '3' }));
    // Two events, the second with its previous object: three conversions for three watchers.
    expect(conversions).toBe(3);
    for (const events of seen)
      expect(events.map((e) => [e.type, e.object.size, e.prevObject?.size])).toEqual([
        ['ADDED', 2, undefined],
        ['MODIFIED', 3, 2],
      ]);
    expect(seen[1]![1]!.object).toBe(seen[0]![1]!.object);
  });

  it('passes the store’s settled() through when it has one', async () => {
    const inner = new FakeStorage([]);
    expect(versionedStorage(inner, CONVERSION, 'v1').settled).toBeUndefined();
    let asked = 0;
    const settling = { ...inner, settled: () => (asked++, Promise.resolve()) } as unknown as Storage;
    await versionedStorage(settling, CONVERSION, 'v1').settled!();
    expect(asked).toBe(1);
  });

  describe('with a conversion that calls out', () => {
    /** The same toy conversion answered later (as a webhook would), counting its calls; `broken` makes it fail. */
    const calledOut = () => {
      const calls: number[] = [];
      const state = { broken: false, delays: [5, 0, 3, 1] };
      const conversion = {
        storageVersion: 'v2',
        convert: (o: KubeObject, to: string): KubeObject => {
          if (String(o.apiVersion) !== `ex.io/${to}`) throw new Error('converting calls out');
          return o;
        },
        convertMany: async (objs: KubeObject[], to: string): Promise<KubeObject[]> => {
          calls.push(objs.length);
          await new Promise((r) => setTimeout(r, state.delays[calls.length % state.delays.length]));
          if (state.broken) throw new Error('conversion webhook failed');
          return objs.map((o) => CONVERSION.convert(o, to));
        },
      };
      return { conversion, calls, state };
    };

    it('stores, reads, lists (one call per page) and updates through it', async () => {
      const { conversion, calls } = calledOut();
      const inner = new FakeStorage([]);
      const s = versionedStorage(inner, conversion, 'v1');
      expect(await s.create(KEY, box(3))).toMatchObject({ apiVersion: 'ex.io/v1', size: 3 });
      expect(await inner.get(KEY, { mode: 'MostRecent' })).toMatchObject({ apiVersion: 'ex.io/v2', size: '3' });
      await s.create(`${KEY}2`, { ...box(4), metadata: { name: 'a2', namespace: 'ns', labels: { big: 'yes' } } });
      calls.length = 0;
      const listed = await s.list('/registry/ex.io/boxes/', { consistency: { mode: 'MostRecent' } });
      expect(listed.items.map((o) => [o.apiVersion, o.size])).toEqual([
        ['ex.io/v1', 3],
        ['ex.io/v1', 4],
      ]);
      expect(calls).toEqual([2]);
      // A selector sees the converted objects (here a field only the served version has), and
      // a page with a limit is filled by further rounds at the first one's revision.
      await s.create(`${KEY}3`, { ...box(5), metadata: { name: 'a3', namespace: 'ns' } });
      calls.length = 0;
      const seen: unknown[] = [];
      const reads: ListOptions[] = [];
      const counting = { ...inner, list: (p: string, o: ListOptions) => (reads.push(o), inner.list(p, o)) } as unknown as Storage;
      const selecting = versionedStorage(counting, conversion, 'v1');
      const big = (o: KubeObject) => (seen.push([o.apiVersion, o.size]), typeof o.size === 'number' && o.size > 3);
      const page = await selecting.list('/registry/ex.io/boxes/', { consistency: { mode: 'MostRecent' }, limit: 1, predicate: big });
      expect([page.items.map((o) => o.size), page.continueAfterKey, seen, calls]).toEqual([
        [4],
        `${KEY}2`,
        [
          ['ex.io/v1', 3],
          ['ex.io/v1', 4],
        ],
        [1, 1],
      ]);
      expect(reads.map((o) => [o.predicate, o.consistency, o.startAfterKey, o.limit])).toEqual([
        [undefined, { mode: 'MostRecent' }, undefined, 1],
        [undefined, { mode: 'Exact', revision: page.revision }, KEY, 1],
      ]);
      const rest = await selecting.list('/registry/ex.io/boxes/', {
        consistency: { mode: 'Exact', revision: page.revision },
        startAfterKey: page.continueAfterKey,
        limit: 5,
        predicate: big,
      });
      expect([rest.items.map((o) => o.size), rest.continueAfterKey]).toEqual([[5], undefined]);
      const all = await selecting.list('/registry/ex.io/boxes/', { consistency: { mode: 'MostRecent' }, predicate: big });
      expect(all.items.map((o) => o.size)).toEqual([4, 5]);
      await s.delete(`${KEY}3`);
      const res = await s.guaranteedUpdate(KEY, (cur) => ({ ...cur, size: Number(cur.size) + 1 }));
      expect(res.object).toMatchObject({ apiVersion: 'ex.io/v1', size: 4 });
      expect(await s.get(KEY, { mode: 'MostRecent' })).toMatchObject({ apiVersion: 'ex.io/v1', size: 4 });
      expect(await s.delete(KEY, { validate: (cur) => expect(cur.size).toBe(4) })).toMatchObject({ apiVersion: 'ex.io/v1', size: 4 });
    });

    it('calls out once per live event for all its watchers, and again after a failed call', async () => {
      const { conversion, calls, state } = calledOut();
      const inner = new FakeStorage([]);
      const s = versionedStorage(inner, conversion, 'v1');
      const watch = () => {
        const got: { events: StorageEvent[]; errors: unknown[] } = { events: [], errors: [] };
        s.watch({ key: '/registry/ex.io/boxes/', recursive: true, afterRevision: 0 }, { event: (e) => got.events.push(e), error: (e) => got.errors.push(e) });
        return got;
      };
      const watchers = [watch(), watch(), watch()];
      await inner.create(KEY, { ...box(1), apiVersion: 'ex.io/v2', size: '1' });
      await inner.guaranteedUpdate(KEY, (cur) => ({ ...cur, size: '2' }));
      await new Promise((r) => setTimeout(r, 50));
      // One call per event (the update's with its previous object), whatever the watchers.
      expect(calls).toEqual([1, 2]);
      for (const w of watchers)
        expect(w.events.map((e) => [e.object.size, e.prevObject?.size])).toEqual([
          [1, undefined],
          [2, 1],
        ]);
      // A failed call fails the watchers that shared it; a watcher of the same object later calls again.
      state.broken = true;
      const event = { type: 'ADDED' as const, key: KEY, object: { ...box(7), apiVersion: 'ex.io/v2', size: '7' }, revision: 99 };
      const sinks: WatchSink[] = [];
      const replaying = { ...inner, watch: (_o: WatchOptions, sink: WatchSink) => (sinks.push(sink), { stop: () => undefined }) } as unknown as Storage;
      const r = versionedStorage(replaying, conversion, 'v1');
      const errors: unknown[] = [];
      const events: StorageEvent[] = [];
      for (let i = 0; i < 2; i++) r.watch({ key: KEY, recursive: false, afterRevision: 0 }, { event: (e) => events.push(e), error: (e) => errors.push(e) });
      for (const sink of sinks) sink.event(event);
      await new Promise((res) => setTimeout(res, 30));
      expect([calls.length, errors.length]).toEqual([3, 2]);
      state.broken = false;
      r.watch({ key: KEY, recursive: false, afterRevision: 0 }, { event: (e) => events.push(e), error: (e) => errors.push(e) });
      sinks[2]!.event(event);
      await new Promise((res) => setTimeout(res, 30));
      expect([calls.length, events.map((e) => e.object.size)]).toEqual([4, [7]]);
    });

    it('passes watch events on in order although their conversions end out of order, and ends the watch when one fails', async () => {
      const { conversion, state } = calledOut();
      const inner = new FakeStorage([]);
      const s = versionedStorage(inner, conversion, 'v1');
      const events: StorageEvent[] = [];
      const errors: unknown[] = [];
      s.watch({ key: '/registry/ex.io/boxes/', recursive: true, afterRevision: 0 }, { event: (e) => events.push(e), error: (e) => errors.push(e) });
      for (let i = 1; i <= 8; i++) await inner.create(`${KEY}${i}`, { ...box(i), apiVersion: 'ex.io/v2', size: String(i) });
      await new Promise((r) => setTimeout(r, 100));
      expect(events.map((e) => e.object.size)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      // While a conversion is pending, progress (what a bookmark announces) stays at the last
      // event passed on; once none is, it is the storage's own.
      const withProgress = {
        ...inner,
        watch: (o: WatchOptions, sink: WatchSink) => ({ ...inner.watch(o, sink), progress: () => 999 }),
      } as unknown as Storage;
      const last = events[7]!.revision;
      const watched = versionedStorage(withProgress, conversion, 'v1').watch(
        { key: '/registry/ex.io/boxes/', recursive: true, afterRevision: last },
        { event: () => undefined, error: () => undefined },
      );
      expect(watched.progress!()).toBe(999);
      await inner.create(`${KEY}x`, { ...box(0), apiVersion: 'ex.io/v2', size: '0' });
      expect(watched.progress!()).toBe(last);
      await new Promise((r) => setTimeout(r, 30));
      expect(watched.progress!()).toBe(999);
      watched.stop();
      expect(events.every((e) => e.object.apiVersion === 'ex.io/v1')).toBe(true);
      state.broken = true;
      await inner.create(`${KEY}9`, { ...box(9), apiVersion: 'ex.io/v2', size: '9' });
      await inner.create(`${KEY}10`, { ...box(10), apiVersion: 'ex.io/v2', size: '10' });
      await new Promise((r) => setTimeout(r, 50));
      // Nine events passed on (the eight and the one written for the progress check), then the error.
      expect([events.length, errors.map((e) => (e as Error).message)]).toEqual([9, ['conversion webhook failed']]);
    });
  });
});
