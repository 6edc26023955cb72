import type { KubeObject } from '@app/apimachinery';
import type { Storage, StorageEvent, WatchOptions, WatchSink } from '@app/storage';
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

  it('passes the store’s settled() through when it has one', async () => {
    const inner = new FakeStorage([]);
    expect(versionedStorage(inner, CONVERSION, 'v1').settled).toBeUndefined();
    let asked = 0;
    const settling = { ...inner, settled: () => (asked++, Promise.resolve()) } as unknown as Storage;
    await versionedStorage(settling, CONVERSION, 'v1').settled!();
    expect(asked).toBe(1);
  });
});
