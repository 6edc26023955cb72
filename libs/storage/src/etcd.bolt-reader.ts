/**
 * Reads a bbolt database file (etcd's backend: a member's `member/snap/db`, or the database part
 * of what `etcdctl snapshot save` writes) bucket by bucket, in key order, page by page: memory
 * holds the pages on the current path from a bucket's root to a leaf, not the file.
 *
 * The format is the one etcd.bolt-writer.ts writes (its module comment lists the page layouts),
 * and also what bbolt itself leaves in a file: any page size, free pages, pages that span
 * several (overflow), and inline buckets (a bucket header with root page 0, followed by the
 * bucket's single leaf page inside the value). Of the two meta pages the valid one with the
 * higher transaction id describes the database, as bbolt chooses.
 *
 * Every structure is checked before use (meta magic, version and checksum; page ids, kinds and
 * bounds; element offsets inside their page; keys strictly increasing; no page reached twice in
 * one bucket), so a damaged or hostile file is refused with a BoltFormatError naming the page,
 * never read out of bounds or followed around a loop.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { fnv1a64 } from './etcd.bolt-writer.js';

const HEADER = 16;
const ELEMENT = 16;
const BRANCH = 0x01;
const LEAF = 0x02;
const META = 0x04;
const BUCKET_LEAF = 0x01;
const MAGIC = 0xed0cdaed;
const VERSION = 2;
/** Bytes of a bucket's header in its parent's leaf: root page id (u64), sequence (u64). */
const BUCKET_HEADER = 16;
/** The page size bbolt falls back to when meta page 0 cannot be read (it uses the OS page size). */
const DEFAULT_PAGE_SIZE = 4096;
/** Deepest tree accepted: bbolt's trees are a few levels deep; more is damage. */
const MAX_DEPTH = 64;

/** A file that is not a bbolt database, or a damaged one. */
export class BoltFormatError extends Error {
  override readonly name = 'BoltFormatError';
}

/** What the chosen meta page says. */
export interface BoltMeta {
  pageSize: number;
  /** Root page of the root bucket (the bucket of buckets). */
  root: number;
  /** High-water mark: pages in use are below it. */
  pages: number;
  txid: bigint;
}

/** A page (or an inline bucket's page) and where its bytes are. */
interface Page {
  id: number;
  flags: number;
  count: number;
  buf: Buffer;
}

/** One leaf element: its key, value and flags (BUCKET_LEAF for a nested bucket). */
interface LeafElement {
  key: Buffer;
  value: Buffer;
  flags: number;
}

function readMeta(buf: Buffer): BoltMeta | undefined {
  if (buf.length < HEADER + 64) return undefined;
  if ((buf.readUInt16LE(8) & META) === 0) return undefined;
  const m = HEADER;
  if (buf.readUInt32LE(m) !== MAGIC || buf.readUInt32LE(m + 4) !== VERSION) return undefined;
  if (buf.readBigUInt64LE(m + 56) !== fnv1a64(buf.subarray(m, m + 56))) return undefined;
  const pageSize = buf.readUInt32LE(m + 8);
  const root = buf.readBigUInt64LE(m + 16);
  const pages = buf.readBigUInt64LE(m + 40);
  if (pageSize < 1024 || pageSize > 1 << 20 || root >= pages || pages > BigInt(Number.MAX_SAFE_INTEGER)) return undefined;
  return { pageSize, root: Number(root), pages: Number(pages), txid: buf.readBigUInt64LE(m + 48) };
}

/** True when `head` (the first bytes of a file) starts with a bbolt meta page. */
export function looksLikeBolt(head: Buffer): boolean {
  return head.length >= HEADER + 8 && (head.readUInt16LE(8) & META) !== 0 && head.readUInt32LE(HEADER) === MAGIC;
}

/** An open bbolt file; close() when done. */
export class BoltReader {
  private constructor(
    private readonly fh: FileHandle,
    readonly meta: BoltMeta,
    /** Bytes of the file that belong to the database (a trailer after them is not read). */
    private readonly size: number,
  ) {}

  /**
   * Opens `file` read-only. `size`: how many of its bytes are the database (default: all; a
   * snapshot saved by etcdctl is followed by 32 bytes of hash).
   */
  static async open(file: string, size?: number): Promise<BoltReader> {
    const fh = await open(file, 'r');
    try {
      const bytes = size ?? (await fh.stat()).size;
      const at = async (offset: number, length: number): Promise<Buffer> => {
        const buf = Buffer.alloc(Math.max(0, Math.min(length, bytes - offset)));
        if (buf.length > 0) await fh.read(buf, 0, buf.length, offset);
        return buf;
      };
      const first = readMeta(await at(0, HEADER + 64));
      const second = readMeta(await at(first?.pageSize ?? DEFAULT_PAGE_SIZE, HEADER + 64));
      const metas = [first, second].filter((m): m is BoltMeta => m !== undefined);
      if (metas.length === 0) throw new BoltFormatError(`${file} is not a bbolt database, or both of its meta pages are damaged`);
      const meta = metas.reduce((a, b) => (b.txid > a.txid ? b : a));
      if (meta.pages * meta.pageSize > bytes)
        throw new BoltFormatError(`${file} is truncated: its meta page counts ${meta.pages} pages of ${meta.pageSize} bytes, the file holds ${bytes} bytes`);
      return new BoltReader(fh, meta, bytes);
    } catch (e) {
      await fh.close();
      throw e;
    }
  }

  async close(): Promise<void> {
    await this.fh.close();
  }

  /** Names of the root's buckets, in byte order. */
  async bucketNames(): Promise<Buffer[]> {
    const names: Buffer[] = [];
    for await (const e of this.leafElements(await this.page(this.meta.root, 'the root bucket'), 'the root bucket', new Set(), 0))
      if ((e.flags & BUCKET_LEAF) !== 0) names.push(e.key);
    return names;
  }

  /**
   * The entries of the root's bucket `name` in key order (nested buckets inside it are skipped);
   * nothing when there is no such bucket.
   */
  async *entries(name: string | Buffer): AsyncGenerator<readonly [key: Buffer, value: Buffer]> {
    const want = typeof name === 'string' ? Buffer.from(name) : name;
    const what = `bucket ${JSON.stringify(want.toString('latin1'))}`;
    let header: Buffer | undefined;
    for await (const e of this.leafElements(await this.page(this.meta.root, 'the root bucket'), 'the root bucket', new Set(), 0)) {
      if ((e.flags & BUCKET_LEAF) !== 0 && e.key.equals(want)) {
        header = e.value;
        break;
      }
    }
    if (header === undefined) return;
    if (header.length < BUCKET_HEADER) throw new BoltFormatError(`${what}: its header is ${header.length} bytes`);
    const root = header.readBigUInt64LE(0);
    const page: Page =
      root === 0n
        ? // An inline bucket: its leaf page follows the header inside the value.
          this.pageOf(0, header.subarray(BUCKET_HEADER), `${what} (inline)`)
        : await this.page(this.pageNumber(root, what), what);
    for await (const e of this.leafElements(page, what, new Set(), 0)) if ((e.flags & BUCKET_LEAF) === 0) yield [e.key, e.value];
  }

  private pageNumber(id: bigint, what: string): number {
    if (id < 2n) throw new BoltFormatError(`${what}: page ${id} is a meta page`);
    if (id >= BigInt(this.meta.pages)) throw new BoltFormatError(`${what}: page ${id} is outside the database (${this.meta.pages} pages)`);
    return Number(id);
  }

  /** Reads page `id` with its overflow pages. */
  private async page(id: number, what: string): Promise<Page> {
    const { pageSize, pages } = this.meta;
    if (id < 2) throw new BoltFormatError(`${what}: page ${id} is a meta page`);
    if (id >= pages) throw new BoltFormatError(`${what}: page ${id} is outside the database (${pages} pages)`);
    const first = Buffer.alloc(pageSize);
    await this.fh.read(first, 0, pageSize, id * pageSize);
    const overflow = first.readUInt32LE(12);
    if (id + overflow >= pages || (id + overflow + 1) * pageSize > this.size)
      throw new BoltFormatError(`${what}: page ${id} runs ${overflow} pages past itself, beyond the database's ${pages}`);
    let buf = first;
    if (overflow > 0) {
      buf = Buffer.alloc((overflow + 1) * pageSize);
      first.copy(buf);
      await this.fh.read(buf, pageSize, overflow * pageSize, (id + 1) * pageSize);
    }
    const stored = buf.readBigUInt64LE(0);
    if (stored !== BigInt(id)) throw new BoltFormatError(`${what}: page ${id} says it is page ${stored}`);
    return this.pageOf(id, buf, what);
  }

  private pageOf(id: number, buf: Buffer, what: string): Page {
    if (buf.length < HEADER) throw new BoltFormatError(`${what}: page ${id} is ${buf.length} bytes`);
    const flags = buf.readUInt16LE(8);
    const count = buf.readUInt16LE(10);
    if (flags !== BRANCH && flags !== LEAF) throw new BoltFormatError(`${what}: page ${id} is neither a branch nor a leaf (flags 0x${flags.toString(16)})`);
    if (HEADER + count * ELEMENT > buf.length) throw new BoltFormatError(`${what}: page ${id} has ${count} elements, more than it holds`);
    return { id, flags, count, buf };
  }

  /** A slice of `p` for an element's key or value, checked to lie inside the page. */
  private slice(p: Page, start: number, length: number, what: string): Buffer {
    if (start < HEADER || length < 0 || start + length > p.buf.length)
      throw new BoltFormatError(`${what}: an element of page ${p.id} points outside it (${start}+${length} of ${p.buf.length} bytes)`);
    return p.buf.subarray(start, start + length);
  }

  /** The leaf elements under page `p`, depth first, keys checked to increase. */
  private async *leafElements(p: Page, what: string, seen: Set<number>, depth: number): AsyncGenerator<LeafElement> {
    let last: Buffer | undefined;
    for await (const e of this.walk(p, what, seen, depth)) {
      if (last !== undefined && Buffer.compare(last, e.key) >= 0) throw new BoltFormatError(`${what}: keys out of order on page ${p.id}'s subtree`);
      last = e.key;
      yield e;
    }
  }

  private async *walk(p: Page, what: string, seen: Set<number>, depth: number): AsyncGenerator<LeafElement> {
    if (depth > MAX_DEPTH) throw new BoltFormatError(`${what}: the tree is deeper than ${MAX_DEPTH} levels at page ${p.id}`);
    if (p.id !== 0) {
      if (seen.has(p.id)) throw new BoltFormatError(`${what}: page ${p.id} is reached twice`);
      seen.add(p.id);
    }
    for (let i = 0; i < p.count; i++) {
      const at = HEADER + i * ELEMENT;
      if (p.flags === LEAF) {
        const flags = p.buf.readUInt32LE(at);
        const pos = p.buf.readUInt32LE(at + 4);
        const ksize = p.buf.readUInt32LE(at + 8);
        const vsize = p.buf.readUInt32LE(at + 12);
        const key = this.slice(p, at + pos, ksize, what);
        yield { key, value: this.slice(p, at + pos + ksize, vsize, what), flags };
      } else {
        const pos = p.buf.readUInt32LE(at);
        const ksize = p.buf.readUInt32LE(at + 4);
        this.slice(p, at + pos, ksize, what);
        const child = this.pageNumber(p.buf.readBigUInt64LE(at + 8), what);
        yield* this.walk(await this.page(child, what), what, seen, depth + 1);
      }
    }
  }
}
