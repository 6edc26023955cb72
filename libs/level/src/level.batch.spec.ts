import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ClassicLevel } from 'classic-level';
import { RawBatchError, type RawBatchOp, SLICED_BATCH_OPS, writeBatch } from './level.batch.js';

describe('writeBatch', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'kapi-level-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes puts and deletes of string keys and byte values in one batch', async () => {
    const db = new ClassicLevel<string, Uint8Array>(dir, { keyEncoding: 'utf8', valueEncoding: 'view' });
    await db.open();
    await db.put('gone', new Uint8Array([9]));
    await writeBatch(
      db,
      [
        { type: 'put', key: 'a', value: Buffer.from('one') },
        { type: 'put', key: 'b', value: new Uint8Array([1, 2, 3]) },
        { type: 'put', key: 'empty', value: new Uint8Array(0) },
        { type: 'del', key: 'gone' },
      ],
      true,
    );
    expect(Buffer.from((await db.get('a'))!).toString()).toBe('one');
    expect([...(await db.get('b'))!]).toEqual([1, 2, 3]);
    expect((await db.get('empty'))!.length).toBe(0);
    expect(await db.get('gone')).toBeUndefined();
    await db.close();
  });

  it('refuses a value that is not bytes instead of storing it empty', async () => {
    const db = new ClassicLevel<string, Uint8Array>(dir, { keyEncoding: 'utf8', valueEncoding: 'view' });
    await db.open();
    const bad = [{ type: 'put', key: 'x', value: 'text' }] as unknown as RawBatchOp[];
    expect(() => writeBatch(db, bad, false)).toThrow(RawBatchError);
    const badKey = [{ type: 'del', key: 7 }] as unknown as RawBatchOp[];
    expect(() => writeBatch(db, badKey, false)).toThrow(RawBatchError);
    expect(await db.get('x')).toBeUndefined();
    await db.close();
  });

  it('waits for an opening database and rejects on a closed one', async () => {
    const db = new ClassicLevel<string, Uint8Array>(dir, { keyEncoding: 'utf8', valueEncoding: 'view' });
    const opening = db.open();
    await writeBatch(db, [{ type: 'put', key: 'k', value: new Uint8Array([5]) }], false);
    await opening;
    expect([...(await db.get('k'))!]).toEqual([5]);
    await db.close();
    await expect(writeBatch(db, [{ type: 'put', key: 'k', value: new Uint8Array([6]) }], false)).rejects.toMatchObject({ code: 'LEVEL_DATABASE_NOT_OPEN' });
  });

  it('hands a batch of many operations to LevelDB a slice per turn of the event loop, and writes it atomically', async () => {
    const db = new ClassicLevel<string, Uint8Array>(dir, { keyEncoding: 'utf8', valueEncoding: 'view' });
    await db.open();
    await db.put('k0000000', new Uint8Array([7]));
    const n = 4 * SLICED_BATCH_OPS + 10;
    const ops: RawBatchOp[] = Array.from({ length: n }, (_, i) => ({ type: 'put', key: `k${String(i).padStart(7, '0')}`, value: new Uint8Array([i % 251]) }));
    ops.push({ type: 'del', key: 'k0000001' });
    // Count what reaches the chained batch.
    let added = 0;
    const batch = db.batch.bind(db) as (...a: unknown[]) => unknown;
    (db as unknown as { batch: (...a: unknown[]) => unknown }).batch = (...args: unknown[]) => {
      if (args.length > 0) return batch(...args);
      const chained = batch() as { put(k: string, v: Uint8Array): unknown; del(k: string): unknown };
      const put = chained.put.bind(chained);
      const del = chained.del.bind(chained);
      chained.put = (k, v) => (added++, put(k, v));
      chained.del = (k) => (added++, del(k));
      return chained;
    };
    const writing = writeBatch(db, ops, false);
    // The event loop turns while the slices are added (whole slices so far), with nothing written yet.
    const atTurn = await new Promise<{ added: number; first: number | undefined }>((resolve) =>
      setImmediate(() => resolve({ added, first: db.getSync('k0000000')?.[0] })),
    );
    expect(atTurn.added % SLICED_BATCH_OPS).toBe(0);
    expect(atTurn.added).toBeGreaterThan(0);
    expect(atTurn.added).toBeLessThan(n);
    expect(atTurn.first).toBe(7);
    await writing;
    expect(added).toBe(n + 1);
    expect((await db.keys().all()).length).toBe(n - 1);
    expect([...(await db.get(`k${String(n - 1).padStart(7, '0')}`))!]).toEqual([(n - 1) % 251]);
    expect(await db.get('k0000001')).toBeUndefined();
    await db.close();
  });
});
