import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BoltFormatError, BoltReader, looksLikeBolt } from './etcd.bolt-reader.js';
import { fnv1a64, writeBoltFile } from './etcd.bolt-writer.js';

type Item = readonly [key: Buffer, value: Buffer, flags: number];

const u64 = (n: number): Buffer => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(n));
  return b;
};

/** A leaf page (flags 0x02) of `items`, `size` bytes (a whole page, or exactly its contents for an inline bucket). */
function leaf(id: number, items: readonly Item[], size?: number): Buffer {
  const need = 16 + items.reduce((n, [k, v]) => n + 16 + k.length + v.length, 0);
  const buf = Buffer.alloc(size ?? need);
  buf.writeBigUInt64LE(BigInt(id), 0);
  buf.writeUInt16LE(0x02, 8);
  buf.writeUInt16LE(items.length, 10);
  let data = 16 + items.length * 16;
  items.forEach(([k, v, flags], i) => {
    const at = 16 + i * 16;
    buf.writeUInt32LE(flags, at);
    buf.writeUInt32LE(data - at, at + 4);
    buf.writeUInt32LE(k.length, at + 8);
    buf.writeUInt32LE(v.length, at + 12);
    k.copy(buf, data);
    v.copy(buf, data + k.length);
    data += k.length + v.length;
  });
  return buf;
}

/** A branch page (flags 0x01) over `children` (first key, page id). */
function branch(id: number, children: readonly (readonly [Buffer, number])[], size: number): Buffer {
  const buf = Buffer.alloc(size);
  buf.writeBigUInt64LE(BigInt(id), 0);
  buf.writeUInt16LE(0x01, 8);
  buf.writeUInt16LE(children.length, 10);
  let data = 16 + children.length * 16;
  children.forEach(([k, child], i) => {
    const at = 16 + i * 16;
    buf.writeUInt32LE(data - at, at);
    buf.writeUInt32LE(k.length, at + 4);
    buf.writeBigUInt64LE(BigInt(child), at + 8);
    k.copy(buf, data);
    data += k.length;
  });
  return buf;
}

/** A meta page: root bucket at `root`, `pages` pages in use, transaction `txid`. */
function meta(id: number, root: number, pages: number, txid: number, pageSize: number): Buffer {
  const buf = Buffer.alloc(pageSize);
  buf.writeBigUInt64LE(BigInt(id), 0);
  buf.writeUInt16LE(0x04, 8);
  buf.writeUInt32LE(0xed0cdaed, 16);
  buf.writeUInt32LE(2, 20);
  buf.writeUInt32LE(pageSize, 24);
  buf.writeBigUInt64LE(BigInt(root), 32);
  buf.writeBigUInt64LE(2n, 48);
  buf.writeBigUInt64LE(BigInt(pages), 56);
  buf.writeBigUInt64LE(BigInt(txid), 64);
  buf.writeBigUInt64LE(fnv1a64(buf.subarray(16, 72)), 72);
  return buf;
}

const freelist = (id: number, pageSize: number): Buffer => {
  const buf = Buffer.alloc(pageSize);
  buf.writeBigUInt64LE(BigInt(id), 0);
  buf.writeUInt16LE(0x10, 8);
  return buf;
};

const bucket = (root: number): Buffer => Buffer.concat([u64(root), u64(0)]);

async function all(reader: BoltReader, name: string): Promise<[string, string][]> {
  const out: [string, string][] = [];
  for await (const [k, v] of reader.entries(name)) out.push([k.toString(), v.toString()]);
  return out;
}

describe('BoltReader', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bolt-read-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('reads back what writeBoltFile wrote: buckets in order, two branch levels, values spanning pages, an empty bucket', async () => {
    const file = join(dir, 'w.db');
    const keys = Array.from({ length: 20_000 }, (_, i) => Buffer.from(`key/${String(i).padStart(6, '0')}`));
    const value = (i: number) => (i % 5000 === 7 ? Buffer.alloc(10_000, String(i % 10)) : Buffer.from(`v${i}`));
    await writeBoltFile(file, [
      { name: Buffer.from('empty'), entries: [] },
      { name: Buffer.from('key'), entries: keys.map((k, i) => [k, value(i)] as const) },
      { name: Buffer.from('meta'), entries: [[Buffer.from('x'), Buffer.from('y')]] },
    ]);
    const reader = await BoltReader.open(file);
    try {
      expect(reader.meta.pageSize).toBe(4096);
      expect((await reader.bucketNames()).map(String)).toEqual(['empty', 'key', 'meta']);
      const got = await all(reader, 'key');
      expect(got.length).toBe(20_000);
      expect(got.map(([k]) => k)).toEqual(keys.map(String));
      expect(got[7]![1]).toBe(value(7).toString());
      expect(got[5007]![1].length).toBe(10_000);
      expect(await all(reader, 'empty')).toEqual([]);
      expect(await all(reader, 'meta')).toEqual([['x', 'y']]);
      expect(await all(reader, 'absent')).toEqual([]);
    } finally {
      await reader.close();
    }
  });

  it('reads inline buckets, free pages, another page size, and the meta page with the higher transaction id', async () => {
    const ps = 16384;
    const inline = Buffer.concat([
      bucket(0),
      leaf(0, [
        [Buffer.from('a'), Buffer.from('1'), 0],
        [Buffer.from('b'), Buffer.from('2'), 0],
      ]),
    ]);
    // Page 3: an old root (transaction 1); page 4 free; page 5: the current root (transaction 2).
    const oldRoot = leaf(3, [[Buffer.from('old'), bucket(0), 1]], ps);
    const newRoot = leaf(
      5,
      [
        [Buffer.from('inline'), inline, 1],
        [Buffer.from('plain'), Buffer.from('not a bucket'), 0],
      ],
      ps,
    );
    const file = join(dir, 'i.db');
    await writeFile(file, Buffer.concat([meta(0, 3, 6, 1, ps), meta(1, 5, 6, 2, ps), freelist(2, ps), oldRoot, Buffer.alloc(ps), newRoot]));
    const reader = await BoltReader.open(file);
    try {
      expect(reader.meta).toMatchObject({ pageSize: ps, root: 5, txid: 2n });
      expect((await reader.bucketNames()).map(String)).toEqual(['inline']);
      expect(await all(reader, 'inline')).toEqual([
        ['a', '1'],
        ['b', '2'],
      ]);
    } finally {
      await reader.close();
    }
    // Meta page 1 damaged: page 0 (the older transaction) is used.
    const bytes = await readFile(file);
    bytes[ps + 40] = bytes[ps + 40]! ^ 0x01;
    await writeFile(file, bytes);
    const older = await BoltReader.open(file);
    try {
      expect(older.meta).toMatchObject({ root: 3, txid: 1n });
      expect((await older.bucketNames()).map(String)).toEqual(['old']);
    } finally {
      await older.close();
    }
  });

  it('refuses what is no bbolt file or is damaged, naming the page', async () => {
    const ps = 4096;
    const at = (name: string) => join(dir, name);
    const refused = async (name: string, pages: Buffer[], read = 'key'): Promise<string> => {
      await writeFile(at(name), Buffer.concat(pages));
      const failure = await BoltReader.open(at(name)).then(
        async (r) => {
          try {
            await all(r, read);
            return undefined;
          } catch (e) {
            return e;
          } finally {
            await r.close();
          }
        },
        (e: unknown) => e,
      );
      expect(failure).toBeInstanceOf(BoltFormatError);
      return (failure as Error).message;
    };
    const front = (root: number, pages: number) => [meta(0, root, pages, 0, ps), meta(1, root, pages, 1, ps), freelist(2, ps)];
    const root = (child: number) => leaf(3, [[Buffer.from('key'), bucket(child), 1]], ps);

    expect(await refused('text', [Buffer.alloc(2 * ps, 'x')])).toContain('is not a bbolt database');
    expect(looksLikeBolt(Buffer.alloc(64, 'x'))).toBe(false);
    expect(looksLikeBolt(meta(0, 3, 4, 0, ps))).toBe(true);
    // The meta page counts more pages than the file holds.
    expect(await refused('truncated', [...front(3, 9), root(4)])).toContain('is truncated');
    // A bucket whose root lies past the high-water mark.
    expect(await refused('outside', [...front(3, 4), root(7)])).toContain('page 7 is outside the database');
    // A page whose header names another page.
    expect(await refused('misnamed', [...front(3, 5), root(4), leaf(9, [], ps)])).toContain('page 4 says it is page 9');
    // A bucket rooted at a meta or freelist page, and a page that is neither branch nor leaf.
    expect(await refused('kind', [...front(3, 4), root(1)])).toContain('page 1 is a meta page');
    expect(await refused('kind2', [...front(3, 5), root(4), freelist(4, ps)])).toContain('neither a branch nor a leaf');
    // An element pointing past its page.
    const bad = leaf(4, [[Buffer.from('a'), Buffer.from('1'), 0]], ps);
    bad.writeUInt32LE(ps, 16 + 12);
    expect(await refused('bounds', [...front(3, 5), root(4), bad])).toContain('points outside it');
    // A branch that leads back to itself.
    expect(await refused('loop', [...front(3, 5), root(4), branch(4, [[Buffer.from('a'), 4]], ps)])).toContain('page 4 is reached twice');
    // Keys out of order.
    const unordered = leaf(
      4,
      [
        [Buffer.from('b'), Buffer.from('1'), 0],
        [Buffer.from('a'), Buffer.from('2'), 0],
      ],
      ps,
    );
    expect(await refused('order', [...front(3, 5), root(4), unordered])).toContain('keys out of order');
    // An overflow count running past the file.
    const long = leaf(4, [], ps);
    long.writeUInt32LE(3, 12);
    expect(await refused('overflow', [...front(3, 5), root(4), long])).toContain('runs 3 pages past itself');
  });
});
