import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { MvccStore } from './mvcc.store.js';
import type { ApplyEntry, TxnCommand } from './mvcc.types.js';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const put = (key: string, value: string): TxnCommand => ({ compares: [], success: [{ type: 'put', key, value: enc(value) }], failure: [] });
const del = (key: string): TxnCommand => ({ compares: [], success: [{ type: 'delete', key }], failure: [] });

/**
 * A real LevelDB whose iterators count the entries they hand out: what a range walked. (A proxy
 * on the database object; the store sees the same classic-level API.)
 */
function countingDb(dir: string): { db: ClassicLevel<string, Buffer>; read: () => number } {
  const db = new ClassicLevel<string, Buffer>(dir, { keyEncoding: 'utf8', valueEncoding: 'buffer' });
  let read = 0;
  const iterator = db.iterator.bind(db);
  const keys = db.keys.bind(db);
  type It = { nextv(n: number): Promise<unknown[]>; next(): Promise<unknown>; all(): Promise<unknown[]> };
  const count = <T extends It>(it: T): T => {
    const nextv = it.nextv.bind(it);
    const next = it.next.bind(it);
    const all = it.all.bind(it);
    it.nextv = async (n: number) => {
      const out = await nextv(n);
      read += out.length;
      return out;
    };
    it.next = async () => {
      const out = await next();
      if (out !== undefined) read++;
      return out;
    };
    it.all = async () => {
      const out = await all();
      read += out.length;
      return out;
    };
    return it;
  };
  db.iterator = ((opts?: object) => count(iterator(opts as never) as unknown as It)) as typeof db.iterator;
  db.keys = ((opts?: object) => count(keys(opts as never) as unknown as It)) as typeof db.keys;
  return { db, read: () => read };
}

describe('range reads cost the page, not the collection', () => {
  let dir: string;
  let store: MvccStore;
  let read: () => number;
  let index = 0;
  const N = 3000;
  const key = (i: number) => `/r/k${String(i).padStart(5, '0')}`;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mvcc-range-'));
    const c = countingDb(dir);
    read = c.read;
    store = await MvccStore.open(dir, { db: c.db });
    const entries: ApplyEntry[] = [];
    for (let i = 0; i < N; i++) entries.push({ index: ++index, command: put(key(i), `v${i}`) });
    await store.applyBatch(entries);
  });

  afterAll(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  const walked = async <T>(fn: () => Promise<T>): Promise<[T, number]> => {
    const before = read();
    const out = await fn();
    return [out, read() - before];
  };

  it('walks about a page at the current revision and counts the rest from the key index', async () => {
    const [page, n] = await walked(() => store.range('/r/', { limit: 10 }));
    expect(page.kvs).toHaveLength(10);
    expect(page.more).toBe(true);
    expect(page.remaining).toBe(N - 10);
    expect(n).toBeLessThan(50);
  });

  it('walks about a page at a past revision, from a start key, and still counts the rest', async () => {
    const past = store.currentRevision();
    // Changes after `past`: an update, a delete, a create; the page at `past` sees none of them.
    await store.apply(++index, put(key(5), 'changed'));
    await store.apply(++index, del(key(N - 1)));
    await store.apply(++index, put('/r/k01500x', 'x'));
    const [page, n] = await walked(() => store.range('/r/', { atRevision: past, limit: 10, startAfter: key(1500) }));
    expect(page.kvs.map((kv) => kv.key)).toEqual(Array.from({ length: 10 }, (_, i) => key(1501 + i)));
    expect(page.more).toBe(true);
    expect(page.remaining).toBe(N - 1511);
    expect(n).toBeLessThan(60);
    const [last] = await walked(() => store.range('/r/', { atRevision: past, limit: 10, startAfter: key(N - 11) }));
    expect(last.kvs.map((kv) => kv.key).at(-1)).toBe(key(N - 1));
    expect(last.more).toBe(false);
    expect(last.remaining).toBe(0);
  });

  it('leaves remaining undefined at a past revision when more events than the budget followed it', async () => {
    const past = store.currentRevision();
    const entries: ApplyEntry[] = [];
    for (let i = 0; i < 1100; i++) entries.push({ index: ++index, command: put(key(i), `again${i}`) });
    await store.applyBatch(entries);
    const page = await store.range('/r/', { atRevision: past, limit: 10 });
    expect(page.kvs).toHaveLength(10);
    expect(page.more).toBe(true);
    expect(page.remaining).toBeUndefined();
  });

  it('walks further with a selective filter, and only as far as the matches it needs', async () => {
    const filter = (kv: { key: string }) => kv.key >= key(1000);
    const [page, n] = await walked(() => store.range('/r/', { limit: 10, filter }));
    expect(page.kvs.map((kv) => kv.key)).toEqual(Array.from({ length: 10 }, (_, i) => key(1000 + i)));
    // The 1000 keys before the matches are walked and rejected; the last thousand are not read
    // (read-ahead doubles up to 1000 entries per read, so at most that much past the page).
    expect(n).toBeGreaterThan(1000);
    expect(n).toBeLessThan(N - 800);
  });

  it('leaves remaining undefined without the key index, at the current and at a past revision', async () => {
    const d = await mkdtemp(join(tmpdir(), 'mvcc-range-noindex-'));
    const s = await MvccStore.open(d, { keyIndex: false });
    try {
      for (let i = 1; i <= 5; i++) await s.apply(i, put(key(i), 'v'));
      const cur = await s.range('/r/', { limit: 2 });
      expect([cur.more, cur.remaining]).toEqual([true, undefined]);
      const past = await s.range('/r/', { limit: 2, atRevision: 4 });
      expect([past.more, past.remaining]).toEqual([true, undefined]);
      const last = await s.range('/r/', { limit: 10, atRevision: 4 });
      expect([last.kvs.length, last.more, last.remaining]).toEqual([4, false, 0]);
    } finally {
      await s.close();
      await rm(d, { recursive: true, force: true });
    }
  });
});
