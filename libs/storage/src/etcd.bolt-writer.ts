/**
 * Writes a bbolt database file (the file format of etcd's backend) from sorted buckets, so that
 * etcd's tools read what we write: `etcdctl snapshot status` and `etcdctl snapshot restore`.
 *
 * The format, as bbolt lays it out on a little-endian machine with 4 KiB pages:
 * - every page starts with a 16-byte header: id (u64), flags (u16: branch 0x01, leaf 0x02,
 *   meta 0x04, freelist 0x10), count (u16, elements on the page), overflow (u32, pages that
 *   follow this one as its continuation);
 * - pages 0 and 1 are meta pages: magic 0xED0CDAED, version 2, page size, flags, the root
 *   bucket (root page id, sequence), the freelist's page id, the high-water page id (the
 *   number of pages), the transaction id, and the FNV-1a 64 checksum of those 56 bytes; bbolt
 *   uses the valid one with the higher transaction id;
 * - page 2 is the freelist (no free pages here);
 * - a leaf page holds 16-byte elements (flags u32, pos u32, ksize u32, vsize u32; pos counts from
 *   the element to its key, the value follows the key), keys in byte order; an element with
 *   flag 0x01 is a nested bucket, its value the bucket header (root page id u64, sequence u64);
 * - a branch page holds 16-byte elements (pos u32, ksize u32, child page id u64), each keyed by
 *   its child's first key.
 * Pages are written in one pass, leaves first, then the branch levels above them, then the root
 * bucket's leaf, then the meta and freelist pages at the front.
 */
import { open, type FileHandle } from 'node:fs/promises';

export const BOLT_PAGE_SIZE = 4096;
const HEADER = 16;
const ELEMENT = 16;
const BRANCH = 0x01;
const LEAF = 0x02;
const META = 0x04;
const FREELIST = 0x10;
const BUCKET_LEAF = 0x01;
const MAGIC = 0xed0cdaed;
const VERSION = 2;
/** Page ids of the meta pages and the freelist; data pages follow. */
const FREELIST_PAGE = 2;
const FIRST_DATA_PAGE = 3;

/** One bucket of the root: its name and its entries in byte order of their keys (read once, as they are written). */
export interface BoltBucket {
  name: Buffer;
  entries: Iterable<readonly [key: Buffer, value: Buffer]> | AsyncIterable<readonly [key: Buffer, value: Buffer]>;
}

/** FNV-1a, 64 bits (bbolt's meta checksum). */
export function fnv1a64(data: Uint8Array): bigint {
  let h = 0xcbf29ce484222325n;
  for (const b of data) {
    h ^= BigInt(b);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h;
}

interface Child {
  key: Buffer;
  page: number;
}

/** Bytes of pages collected before they are written out (pages are allocated in file order). */
const FLUSH_BYTES = 1 << 20;

class PageWriter {
  next = FIRST_DATA_PAGE;
  /** Pages made but not written yet, which start at file offset `pendingAt`. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private pendingAt = FIRST_DATA_PAGE * BOLT_PAGE_SIZE;
  constructor(private readonly fh: FileHandle) {}

  /** Writes the pages collected so far. */
  async flush(): Promise<void> {
    if (this.pendingBytes === 0) return;
    const data = Buffer.concat(this.pending, this.pendingBytes);
    const at = this.pendingAt;
    this.pending = [];
    this.pendingAt += this.pendingBytes;
    this.pendingBytes = 0;
    for (let done = 0; done < data.length;) done += (await this.fh.write(data, done, data.length - done, at + done)).bytesWritten;
  }

  /** Writes `size` bytes' worth of pages (the first with its header) and returns the first page id. */
  async write(fill: (buf: Buffer) => void, size: number, flags: number, count: number): Promise<number> {
    const pages = Math.max(1, Math.ceil(size / BOLT_PAGE_SIZE));
    const buf = Buffer.alloc(pages * BOLT_PAGE_SIZE);
    const id = this.next;
    this.next += pages;
    buf.writeBigUInt64LE(BigInt(id), 0);
    buf.writeUInt16LE(flags, 8);
    buf.writeUInt16LE(count, 10);
    buf.writeUInt32LE(pages - 1, 12);
    fill(buf);
    this.pending.push(buf);
    this.pendingBytes += buf.length;
    if (this.pendingBytes >= FLUSH_BYTES) await this.flush();
    return id;
  }

  /** A leaf page of `items` (flag per item), returning its id. */
  leaf(items: readonly (readonly [Buffer, Buffer, number])[]): Promise<number> {
    let size = HEADER + items.length * ELEMENT;
    for (const [k, v] of items) size += k.length + v.length;
    return this.write(
      (buf) => {
        let data = HEADER + items.length * ELEMENT;
        items.forEach(([k, v, flags], i) => {
          const at = HEADER + i * ELEMENT;
          buf.writeUInt32LE(flags, at);
          buf.writeUInt32LE(data - at, at + 4);
          buf.writeUInt32LE(k.length, at + 8);
          buf.writeUInt32LE(v.length, at + 12);
          k.copy(buf, data);
          v.copy(buf, data + k.length);
          data += k.length + v.length;
        });
      },
      size,
      LEAF,
      items.length,
    );
  }

  /** A branch page over `children`, returning its id. */
  branch(children: readonly Child[]): Promise<number> {
    let size = HEADER + children.length * ELEMENT;
    for (const c of children) size += c.key.length;
    return this.write(
      (buf) => {
        let data = HEADER + children.length * ELEMENT;
        children.forEach((c, i) => {
          const at = HEADER + i * ELEMENT;
          buf.writeUInt32LE(data - at, at);
          buf.writeUInt32LE(c.key.length, at + 4);
          buf.writeBigUInt64LE(BigInt(c.page), at + 8);
          c.key.copy(buf, data);
          data += c.key.length;
        });
      },
      size,
      BRANCH,
      children.length,
    );
  }

  /** Writes a bucket's tree (leaves, then branch levels) and returns its root page id. */
  async tree(entries: BoltBucket['entries']): Promise<number> {
    let level: Child[] = [];
    let items: (readonly [Buffer, Buffer, number])[] = [];
    let size = HEADER;
    let last: Buffer | undefined;
    for await (const [k, v] of entries) {
      if (last && Buffer.compare(last, k) >= 0) throw new Error('bolt: bucket keys must be unique and in byte order');
      last = k;
      const add = ELEMENT + k.length + v.length;
      if (items.length > 0 && size + add > BOLT_PAGE_SIZE) {
        level.push({ key: items[0]![0], page: await this.leaf(items) });
        items = [];
        size = HEADER;
      }
      items.push([k, v, 0]);
      size += add;
    }
    if (items.length > 0 || level.length === 0) level.push({ key: items[0]?.[0] ?? Buffer.alloc(0), page: await this.leaf(items) });
    while (level.length > 1) {
      const up: Child[] = [];
      let group: Child[] = [];
      let groupSize = HEADER;
      for (const c of level) {
        const add = ELEMENT + c.key.length;
        if (group.length > 0 && groupSize + add > BOLT_PAGE_SIZE) {
          up.push({ key: group[0]!.key, page: await this.branch(group) });
          group = [];
          groupSize = HEADER;
        }
        group.push(c);
        groupSize += add;
      }
      up.push({ key: group[0]!.key, page: await this.branch(group) });
      level = up;
    }
    return level[0]!.page;
  }
}

/** The two meta pages and the freelist page, for a root bucket at `root` and `pages` pages in all. */
function frontPages(root: number, pages: number): Buffer {
  const buf = Buffer.alloc(FIRST_DATA_PAGE * BOLT_PAGE_SIZE);
  for (const txid of [0, 1]) {
    const at = txid * BOLT_PAGE_SIZE;
    buf.writeBigUInt64LE(BigInt(txid), at);
    buf.writeUInt16LE(META, at + 8);
    const m = at + HEADER;
    buf.writeUInt32LE(MAGIC, m);
    buf.writeUInt32LE(VERSION, m + 4);
    buf.writeUInt32LE(BOLT_PAGE_SIZE, m + 8);
    buf.writeUInt32LE(0, m + 12);
    buf.writeBigUInt64LE(BigInt(root), m + 16);
    buf.writeBigUInt64LE(0n, m + 24);
    buf.writeBigUInt64LE(BigInt(FREELIST_PAGE), m + 32);
    buf.writeBigUInt64LE(BigInt(pages), m + 40);
    buf.writeBigUInt64LE(BigInt(txid), m + 48);
    buf.writeBigUInt64LE(fnv1a64(buf.subarray(m, m + 56)), m + 56);
  }
  const f = FREELIST_PAGE * BOLT_PAGE_SIZE;
  buf.writeBigUInt64LE(BigInt(FREELIST_PAGE), f);
  buf.writeUInt16LE(FREELIST, f + 8);
  return buf;
}

/**
 * Writes a bbolt file at `file` holding `buckets` (names in byte order, each with its entries
 * in byte order), and returns its size in bytes (a whole number of pages).
 */
export async function writeBoltFile(file: string, buckets: readonly BoltBucket[]): Promise<number> {
  const fh = await open(file, 'wx');
  try {
    const w = new PageWriter(fh);
    const roots: (readonly [Buffer, Buffer, number])[] = [];
    for (const b of buckets) {
      const root = await w.tree(b.entries);
      const header = Buffer.alloc(16);
      header.writeBigUInt64LE(BigInt(root), 0);
      roots.push([b.name, header, BUCKET_LEAF]);
    }
    for (let i = 1; i < roots.length; i++)
      if (Buffer.compare(roots[i - 1]![0], roots[i]![0]) >= 0) throw new Error('bolt: bucket names must be unique and in byte order');
    const root = await w.leaf(roots);
    await w.flush();
    const front = frontPages(root, w.next);
    await fh.write(front, 0, front.length, 0);
    await fh.sync();
    return w.next * BOLT_PAGE_SIZE;
  } finally {
    await fh.close();
  }
}
