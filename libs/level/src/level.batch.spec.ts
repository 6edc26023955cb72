import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ClassicLevel } from 'classic-level';
import { RawBatchError, type RawBatchOp, writeBatch } from './level.batch.js';

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
});
