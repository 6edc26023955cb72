import { MvccStore } from './mvcc.store.js';
import { TempDirs, dec, del, put } from './mvcc.store.fixture.js';
import type { TxnCommand } from './mvcc.types.js';

describe('MvccStore.view', () => {
  const dirs = new TempDirs();
  let store: MvccStore;
  let index = 0;
  const apply = async (cmd: TxnCommand) => store.apply(++index, cmd);
  beforeEach(async () => {
    store = await MvccStore.open(await dirs.make());
    index = 0;
  });
  afterEach(async () => {
    await store.close();
    await dirs.removeAll();
  });

  it('reads the store as it was when taken, whatever is applied, compacted and purged after', async () => {
    await apply(put('/v/a', 'a1')); // 1
    await apply(put('/v/b', 'b1')); // 2
    await apply(put('/v/a', 'a2')); // 3
    await apply(del('/v/b')); // 4
    await store.compact(2);
    const view = await store.view();
    try {
      expect(view.header).toEqual({ revision: 4, applied: 4, compacted: 2 });
      const before = {
        now: (await view.range('/v/')).kvs.map((kv) => `${kv.key}=${dec(kv.value)}`),
        at2: (await view.range('/v/', { atRevision: 2 })).kvs.map((kv) => `${kv.key}=${dec(kv.value)}`),
        events: (await view.eventsAfter(2)).map((e) => `${e.type} ${e.key}@${e.revision}`),
      };
      expect(before).toEqual({ now: ['/v/a=a2'], at2: ['/v/a=a1', '/v/b=b1'], events: ['put /v/a@3', 'delete /v/b@4'] });
      // The store moves on: new writes, and a compaction whose purge deletes what the view reads.
      await apply(put('/v/a', 'a3')); // 5
      await apply(put('/v/c', 'c1')); // 6
      await store.compact(6);
      await store.whenPurged();
      await expect(store.get('/v/a', 2)).rejects.toMatchObject({ code: 'Compacted' });
      expect({
        now: (await view.range('/v/')).kvs.map((kv) => `${kv.key}=${dec(kv.value)}`),
        at2: (await view.range('/v/', { atRevision: 2 })).kvs.map((kv) => `${kv.key}=${dec(kv.value)}`),
        events: (await view.eventsAfter(2)).map((e) => `${e.type} ${e.key}@${e.revision}`),
      }).toEqual(before);
      expect(dec((await view.get('/v/a'))?.value)).toBe('a2');
      expect(dec((await view.get('/v/b', 3))?.value)).toBe('b1');
      expect(await view.get('/v/b')).toBeUndefined();
      expect((await view.eventsAfter(2, 3)).map((e) => e.revision)).toEqual([3]);
      // Outside the view's revisions.
      await expect(view.get('/v/a', 1)).rejects.toMatchObject({ code: 'Compacted' });
      await expect(view.range('/v/', { atRevision: 5 })).rejects.toMatchObject({ code: 'FutureRevision' });
      await expect(view.eventsAfter(1)).rejects.toMatchObject({ code: 'Compacted' });
    } finally {
      await view.close();
    }
    await expect(view.get('/v/a')).rejects.toThrow(/closed/);
  });

  it('reads history in windows that end once their values reach maxBytes', async () => {
    for (let i = 1; i <= 7; i++) await apply(put(`/v/${i % 3}`, `${i}`.repeat(100)));
    const view = await store.view();
    try {
      const windows: string[] = [];
      const read: number[] = [];
      for (let after = 0; after < 7;) {
        const { events, through } = await view.eventsWindow(after, after + 1000, 250);
        windows.push(`${after}-${through}`);
        read.push(...events.map((e) => e.revision));
        after = through;
      }
      // Revisions 1-3 have no previous value (100 bytes each), later ones one (200 bytes).
      expect(windows).toEqual(['0-3', '3-5', '5-7']);
      expect(read).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect(await view.eventsWindow(0)).toMatchObject({ through: 7 });
      expect(await view.eventsWindow(7)).toEqual({ events: [], through: 7 });
    } finally {
      await view.close();
    }
  });
});
