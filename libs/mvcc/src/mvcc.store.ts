/**
 * The MVCC state machine on LevelDB (classic-level). Layout and rules: docs/storage.md.
 *
 * Keyspaces (UTF-8 keys, binary values):
 *   m:rev, m:applied, m:compacted     counters (decimal strings)
 *   m:importing                       present while a snapshot import rewrites the database
 *   k:<key>                           latest live state: one get per current read
 *   h:<key>\0<rev:16 hex>             every version (or tombstone) of a key: reads at a revision
 *   e:<rev:16 hex><seq:4 hex>         the event log in revision order: watch replay
 *
 * Every mutation (apply, compaction, snapshot import) runs in one serialized queue and writes one
 * LevelDB batch; the in-memory counters change only after that batch resolved, so a crash never
 * exposes half of a command and `appliedIndex` always matches the state (DESIGN.md "Storage
 * model": "Applying entry N writes its changes and appliedIndex = N in one LevelDB batch").
 * A snapshot import, too large for one batch, writes many between a synced marker and a synced
 * last batch that removes it; a store opened with the marker present starts empty.
 */
import { open as openFile, unlink, type FileHandle } from 'node:fs/promises';
import { ClassicLevel } from 'classic-level';
import { writeBatch } from '@app/level';
import { BinReader, BinWriter, CodecError } from './mvcc.codec.js';
import { EventBus, type EventListener } from './event.bus.js';
import {
  MvccError,
  validateCommand,
  type KeyValue,
  type MvccEvent,
  type OpResult,
  type TxnCommand,
  type TxnResult,
} from './mvcc.types.js';

type Db = ClassicLevel<string, Buffer>;
type Snapshot = ReturnType<Db['snapshot']>;
type BatchOp = { type: 'put'; key: string; value: Buffer } | { type: 'del'; key: string };

const META_REV = 'm:rev';
const META_APPLIED = 'm:applied';
const META_COMPACTED = 'm:compacted';
/** Written (synced) before a snapshot import touches the data, deleted by its last batch. */
const META_IMPORTING = 'm:importing';
const LATEST = 'k:';
const HISTORY = 'h:';
const EVENTS = 'e:';
const HEADER = 24; // createRevision, modRevision, version: float64 each

/** Fixed-width hex so that LevelDB's bytewise order is numeric order. */
function hex(n: number, width = 16): string {
  return n.toString(16).padStart(width, '0');
}

/** Smallest string greater than every string starting with `prefix` (empty prefix: everything). */
export function prefixEnd(prefix: string): string {
  if (prefix.length === 0) return '\u{10FFFF}';
  const last = prefix.charCodeAt(prefix.length - 1);
  return prefix.slice(0, -1) + String.fromCharCode(last + 1);
}

function encodeLatest(kv: KeyValue): Buffer {
  const b = Buffer.allocUnsafe(HEADER + kv.value.length);
  b.writeDoubleBE(kv.createRevision, 0);
  b.writeDoubleBE(kv.modRevision, 8);
  b.writeDoubleBE(kv.version, 16);
  b.set(kv.value, HEADER);
  return b;
}

function decodeLatest(key: string, b: Buffer): KeyValue {
  if (b.length < HEADER) throw new MvccError('Corrupt', `latest record of ${key} is truncated`);
  return {
    key,
    createRevision: b.readDoubleBE(0),
    modRevision: b.readDoubleBE(8),
    version: b.readDoubleBE(16),
    value: new Uint8Array(b.subarray(HEADER)),
  };
}

/** History record: flag (1 = put, 0 = tombstone) + latest record. */
function encodeHistory(kv: KeyValue, tombstone: boolean): Buffer {
  const b = Buffer.allocUnsafe(1 + HEADER + kv.value.length);
  b[0] = tombstone ? 0 : 1;
  b.writeDoubleBE(kv.createRevision, 1);
  b.writeDoubleBE(kv.modRevision, 9);
  b.writeDoubleBE(kv.version, 17);
  b.set(kv.value, 1 + HEADER);
  return b;
}

function decodeHistory(key: string, b: Buffer): KeyValue | undefined {
  if (b.length < 1 + HEADER) throw new MvccError('Corrupt', `history record of ${key} is truncated`);
  if (b[0] === 0) return undefined;
  return decodeLatest(key, b.subarray(1));
}

function writeKv(w: BinWriter, kv: KeyValue): void {
  w.num(kv.createRevision).num(kv.modRevision).num(kv.version).bytes(kv.value);
}

function readKv(r: BinReader, key: string): KeyValue {
  return { key, createRevision: r.num(), modRevision: r.num(), version: r.num(), value: r.bytes() };
}

/**
 * Event record (key `e:<revision><seq>`): the key, the kind (3 = put, 4 = delete) and the
 * revision of the key's previous version (0: none). The values themselves are the history
 * records at those revisions, which compaction keeps for every event it keeps; so an event
 * costs a few dozen bytes instead of a third copy of the object (fewer bytes for LevelDB to
 * write and compact on every replica). Kinds 1 and 2 are the earlier self-contained format,
 * still read.
 */
function encodeEventRef(key: string, type: 'put' | 'delete', prevRevision: number): Buffer {
  return new BinWriter(24 + 3 * key.length).str(key).u8(type === 'put' ? 3 : 4).num(prevRevision).finish();
}

/** An event record whose values are still to be read from the history keyspace. */
interface EventRef {
  readonly key: string;
  readonly type: 'put' | 'delete';
  readonly revision: number;
  readonly prevRevision: number;
}

/** Decodes an event record; returns undefined (cheaply) when `keep` rejects its key. */
function decodeEvent(b: Buffer, revision: number, keep: (key: string) => boolean): MvccEvent | EventRef | undefined {
  try {
    const r = new BinReader(b);
    const key = r.str();
    if (!keep(key)) return undefined;
    const kind = r.u8();
    if (kind === 3 || kind === 4) return { key, type: kind === 3 ? 'put' : 'delete', revision, prevRevision: r.num() };
    if (kind !== 1 && kind !== 2) throw new CodecError(`unknown event kind ${kind}`);
    const type = kind === 1 ? 'put' : 'delete';
    const value = readKv(r, key);
    const prevValue = r.u8() === 1 ? readKv(r, key) : undefined;
    return prevValue ? { type, key, value, prevValue, revision } : { type, key, value, revision };
  } catch (e) {
    if (e instanceof CodecError) throw new MvccError('Corrupt', `event at revision ${revision}: ${e.message}`);
    throw e;
  }
}

function historyKey(key: string, revision: number): string {
  return `${HISTORY}${key}\u0000${hex(revision)}`;
}

/** A history record with its metadata, tombstones included (a delete event's value is one). */
function decodeHistoryRecord(key: string, revision: number, b: Buffer | undefined): KeyValue {
  if (b === undefined) throw new MvccError('Corrupt', `history record of ${key} at revision ${revision} is missing`);
  if (b.length < 1 + HEADER) throw new MvccError('Corrupt', `history record of ${key} is truncated`);
  return decodeLatest(key, b.subarray(1));
}

/** The current version of `key` as the value of the event at `revision`. */
function currentRecord(key: string, revision: number, b: Buffer | undefined): KeyValue {
  const kv = b === undefined ? undefined : decodeLatest(key, b);
  if (!kv || kv.modRevision !== revision) throw new MvccError('Corrupt', `version of ${key} at revision ${revision} is in neither history nor the current keyspace`);
  return kv;
}

/** First field of every snapshot. */
const SNAPSHOT_MAGIC = 'kapi-mvcc-snapshot';
const SNAPSHOT_MAGIC_BYTES = Buffer.byteLength(SNAPSHOT_MAGIC);
/**
 * Longest key a snapshot record may carry. Keys have at most 8192 UTF-16 units (validateKey),
 * under 24 KiB of UTF-8 even with keyspace prefix and revision suffix; a longer length field is
 * corruption, and refusing it keeps the decoder from buffering the input in search of the key.
 */
const SNAPSHOT_MAX_KEY_BYTES = 64 * 1024;
/** Size of the pieces a snapshot is encoded in: each is handed on before the next is encoded. */
const SNAPSHOT_PIECE_BYTES = 1024 * 1024;
/** Bounds of one batch of an import (whichever is reached first). */
const IMPORT_BATCH_BYTES = 4 * 1024 * 1024;
const IMPORT_BATCH_RECORDS = 10_000;

/** The counters a snapshot starts with (format 1 has no compacted revision: it is `revision`). */
interface SnapshotHeader {
  revision: number;
  applied: number;
  compacted: number;
}

/**
 * What a snapshot import reads: the snapshot's bytes in chunks of any size, split anywhere. A
 * chunk must stay unchanged once yielded (the decoder may hold it until the next one arrives).
 */
export type SnapshotSource = AsyncIterable<Uint8Array> | Iterable<Uint8Array>;

/** A record whose value is still arriving. */
interface PendingRecord {
  /** The key as stored. */
  readonly key: string;
  /** The value so far (undefined when values are not kept) and how many bytes are to come. */
  readonly value: Buffer | undefined;
  left: number;
  /** Format 1: the version's metadata, stored in front of the value in the latest record. */
  readonly latest?: Omit<KeyValue, 'value'>;
}

/**
 * Decodes a snapshot fed in chunks of any size, split at any byte, by the rules of the whole-
 * buffer reader it replaces (BinReader fields; format 2 keys in the latest, history and event
 * keyspaces; the 0 terminator, then nothing). `records(chunk)` yields the records the chunk
 * completes, in the store's form (a format 1 record becomes a latest record); `end()` checks that
 * the input stopped right after the terminator. It holds the current chunk, the head (flag, key,
 * lengths) of at most one record and, when it keeps values, that record's value. Without
 * `keepValues` (validation) values are only counted, so even a corrupt length costs no memory.
 * Malformed input throws CodecError.
 */
class SnapshotDecoder {
  private header: SnapshotHeader | undefined;
  private format = 0;
  private ended = false;
  /** Unread input: `buf` from `pos`, then the chunks in `queue` (`queued` bytes). */
  private buf: Buffer = Buffer.alloc(0);
  private pos = 0;
  private readonly queue: Buffer[] = [];
  private queued = 0;
  /** Input bytes consumed so far (positions in error messages). */
  private offset = 0;
  private pending: PendingRecord | undefined;

  constructor(private readonly keepValues: boolean) {}

  /** Takes the next chunk; yields [key, value] of each record it completes (none without keepValues). */
  *records(chunk: Uint8Array): Generator<[string, Buffer]> {
    if (chunk.length === 0) return;
    if (this.ended) throw new CodecError(`trailing bytes at byte ${this.offset}`);
    this.queue.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    this.queued += chunk.length;
    if (!this.header && !this.readHeader()) return;
    for (;;) {
      const record = this.pending ?? this.readRecordHead();
      if (!record) return;
      if (!this.readValue(record)) {
        this.pending = record;
        return;
      }
      this.pending = undefined;
      if (record.value) yield [record.key, record.latest ? encodeLatest({ ...record.latest, value: record.value }) : record.value];
    }
  }

  /** The snapshot's counters, once the input ended right after the terminator. */
  end(): SnapshotHeader {
    if (!this.ended || !this.header) throw new CodecError(`truncated input at byte ${this.offset + this.available()}`);
    return this.header;
  }

  private available(): number {
    return this.buf.length - this.pos + this.queued;
  }

  private skip(n: number): void {
    this.pos += n;
    this.offset += n;
  }

  /** Moves on to the next queued chunk; false when none is left. */
  private nextChunk(): boolean {
    const next = this.queue.shift();
    if (!next) return false;
    this.buf = next;
    this.pos = 0;
    this.queued -= next.length;
    return true;
  }

  /**
   * Makes the next `n` unread bytes contiguous in `buf` from `pos`; false while fewer have
   * arrived. Only heads are read this way (a few dozen bytes up to a key's length), so copying
   * them across a chunk boundary is cheap; a chunk's bytes past them stay where they are.
   */
  private have(n: number): boolean {
    const inBuf = this.buf.length - this.pos;
    if (inBuf >= n) return true;
    if (inBuf + this.queued < n) return false;
    if (inBuf === 0 && this.queue[0]!.length >= n) return this.nextChunk();
    const joined = Buffer.allocUnsafe(n);
    this.buf.copy(joined, 0, this.pos);
    let filled = inBuf;
    let used = 0;
    while (filled < n) {
      const c = this.queue[used]!;
      const take = Math.min(c.length, n - filled);
      c.copy(joined, filled, 0, take);
      filled += take;
      if (take < c.length) this.queue[used] = c.subarray(take);
      else used++;
    }
    this.queue.splice(0, used);
    this.queued -= n - inBuf;
    this.buf = joined;
    this.pos = 0;
    return true;
  }

  /** Reads magic, format and counters; false until all of them have arrived. */
  private readHeader(): boolean {
    if (!this.have(4)) return false;
    // A length other than the magic's is no snapshot (and must not make us wait for that much).
    if (this.buf.readUInt32BE(this.pos) !== SNAPSHOT_MAGIC_BYTES) throw new CodecError('not a snapshot');
    const lead = 4 + SNAPSHOT_MAGIC_BYTES + 1;
    if (!this.have(lead)) return false;
    const r = new BinReader(this.buf.subarray(this.pos, this.pos + lead));
    if (r.str() !== SNAPSHOT_MAGIC) throw new CodecError('not a snapshot');
    const format = r.u8();
    if (format !== 1 && format !== 2) throw new CodecError(`unknown snapshot format ${format}`);
    const size = lead + (format === 2 ? 24 : 16);
    if (!this.have(size)) return false;
    const counters = new BinReader(this.buf.subarray(this.pos + lead, this.pos + size));
    const revision = counters.num();
    const applied = counters.num();
    this.header = { revision, applied, compacted: format === 2 ? counters.num() : revision };
    this.format = format;
    this.skip(size);
    return true;
  }

  /**
   * Reads the next record's flag and head (key, format 1 metadata, value length); undefined at
   * the terminator or until the head has arrived.
   */
  private readRecordHead(): PendingRecord | undefined {
    if (!this.have(1)) return undefined;
    const flag = this.buf[this.pos];
    if (flag === 0) {
      this.skip(1);
      this.ended = true;
      if (this.available() > 0) throw new CodecError(`trailing bytes at byte ${this.offset}`);
      return undefined;
    }
    if (flag !== 1) throw new CodecError(`unknown record flag ${flag} at byte ${this.offset}`);
    if (!this.have(5)) return undefined;
    const keyBytes = this.buf.readUInt32BE(this.pos + 1);
    if (keyBytes > SNAPSHOT_MAX_KEY_BYTES) throw new CodecError(`key of ${keyBytes} bytes at byte ${this.offset}`);
    const size = 5 + keyBytes + (this.format === 1 ? 24 : 0) + 4;
    if (!this.have(size)) return undefined;
    const r = new BinReader(this.buf.subarray(this.pos + 1, this.pos + size));
    const key = r.str();
    let latest: Omit<KeyValue, 'value'> | undefined;
    if (this.format === 1) {
      // Format 1: the live state only; history starts at the snapshot's revision.
      latest = { key, createRevision: r.num(), modRevision: r.num(), version: r.num() };
    } else if (!key.startsWith(LATEST) && !key.startsWith(HISTORY) && !key.startsWith(EVENTS)) {
      throw new CodecError(`record outside the store's keyspaces: ${JSON.stringify(key.slice(0, 40))}`);
    }
    const left = r.u32();
    this.skip(size);
    const value = this.keepValues ? Buffer.allocUnsafe(left) : undefined;
    return latest ? { key: LATEST + key, value, left, latest } : { key, value, left };
  }

  /** Moves the value bytes that have arrived into the record (or past them); true once all have. */
  private readValue(record: PendingRecord): boolean {
    while (record.left > 0) {
      if (this.pos === this.buf.length && !this.nextChunk()) return false;
      const n = Math.min(record.left, this.buf.length - this.pos);
      if (record.value) this.buf.copy(record.value, record.value.length - record.left, this.pos, this.pos + n);
      this.skip(n);
      record.left -= n;
    }
    return true;
  }
}

/**
 * Reads the snapshot `source` yields to its end and returns its counters. With `onRecord`, hands
 * it every record in the store's form, waiting whenever it returns a promise (a batch being
 * written); without, only validates. Malformed input: MvccError('Corrupt').
 */
async function readSnapshot(source: SnapshotSource, onRecord?: (key: string, value: Buffer) => Promise<void> | undefined): Promise<SnapshotHeader> {
  const decoder = new SnapshotDecoder(onRecord !== undefined);
  try {
    for await (const chunk of source) {
      for (const [key, value] of decoder.records(chunk)) {
        const writing = onRecord?.(key, value);
        if (writing) await writing;
      }
    }
    return decoder.end();
  } catch (e) {
    if (e instanceof CodecError) throw new MvccError('Corrupt', `invalid snapshot: ${e.message}`);
    throw e;
  }
}

/** Deletes every record but `keep` (LevelDB's clear deletes in small batches: bounded memory). */
async function clearExcept(db: Db, keep: string): Promise<void> {
  await db.clear({ lt: keep });
  await db.clear({ gt: keep });
}

/** Writes all of `data` at the file's position (one write may take only part of it). */
async function writeFully(fh: FileHandle, data: Buffer): Promise<void> {
  for (let at = 0; at < data.length; ) at += (await fh.write(data, at)).bytesWritten;
}

/** Look-ahead over a LevelDB iterator, read in chunks. */
class Cursor {
  private buf: [string, Buffer][] = [];
  private pos = 0;
  private done = false;

  constructor(private readonly it: { nextv(n: number): Promise<[string, Buffer][]>; close(): Promise<void> }) {}

  async peek(): Promise<[string, Buffer] | undefined> {
    if (this.pos >= this.buf.length && !this.done) {
      this.buf = await this.it.nextv(1000);
      this.pos = 0;
      if (this.buf.length === 0) this.done = true;
    }
    return this.buf[this.pos];
  }

  advance(): void {
    this.pos++;
  }

  close(): Promise<void> {
    return this.it.close();
  }
}

/** Options of `MvccStore.range`. */
export interface RangeOptions {
  /** Read at this revision (default: current). Below compactedRevision -> Compacted. */
  atRevision?: number;
  /** Max keys returned (0/undefined: all). */
  limit?: number;
  /** Exclusive start key (continue tokens). */
  startAfter?: string;
  /** Keeps only matching values; non-matching keys do not count against `limit`. */
  filter?: (kv: KeyValue) => boolean;
}

/** Result of `MvccStore.range`. */
export interface RangeResult {
  kvs: KeyValue[];
  /** The revision the range was read at. */
  revision: number;
  /** Keys in range after the last returned key, before filtering (0 when the scan finished). */
  remaining: number;
  /** True when the page stopped at `limit` and keys follow. */
  more: boolean;
}

/** One entry to apply: a command, or only an index advance (Raft no-op/config entries). */
export interface ApplyEntry {
  index: number;
  command?: TxnCommand;
}

/**
 * LevelDB memtable size (default 4 MiB). Every write goes to the memtable and is flushed to a
 * level-0 file when it is full; larger memtables mean fewer, larger flushes and less merging
 * work for the background compaction thread, which on the 3-node bench on 2 cores was a tenth
 * of the CPU. Costs up to twice this in memory (the memtable being flushed plus the new one).
 */
const WRITE_BUFFER_BYTES = 32 * 1024 * 1024;

/** Options of `MvccStore.open`. */
export interface MvccStoreOptions {
  /** Pre-built database (tests); otherwise one is opened at `dir`. */
  db?: Db;
  /** Most entries the latest-value cache holds (default 50,000). */
  cacheMaxEntries?: number;
  /**
   * Keep the set of live keys in memory (default true; see MvccStore.liveKeys). Off, every
   * write of a key missing from the latest-value cache reads LevelDB first.
   */
  keyIndex?: boolean;
}

/**
 * A multi-version key-value store whose state changes only by applying numbered commands.
 * Reads may run concurrently with applies and always see whole batches (LevelDB snapshots).
 */
export class MvccStore {
  private revision = 0;
  private applied = 0;
  private compacted = 0;
  /** True while a batch is being written: then the snapshot revision must be read from disk. */
  private writing = false;
  /**
   * Read cache of the latest keyspace (current reads are the hot path). Writes update it after
   * their batch is durable (updates and deletes; a create does not add the new key: nothing has
   * read it yet); a read fills it only when no batch landed or was in flight while it read
   * (cacheEpoch unchanged), so it never holds a value older than the store's.
   */
  private readonly latestCache = new Map<string, KeyValue>();
  private latestCacheBytes = 0;
  /**
   * Every key that has a current version (etcd keeps its key index in memory the same way),
   * loaded at open and after a snapshot import, updated with each written batch. A key not in
   * it does not exist: a create (the common write: a new name) then needs no LevelDB lookup
   * before it is applied, on every replica, and a read of a missing key answers at once.
   * Undefined when disabled (MvccStoreOptions.keyIndex). Costs the keys' strings in memory.
   */
  private liveKeys: Set<string> | undefined;
  private cacheEpoch = 0;
  /**
   * Compaction's physical deletions, running beside applies (see purge()); undefined when none
   * runs. `purgedTo`: revision up to which they finished in this process (a restart finds any
   * leftovers again). `dataEpoch` changes when a snapshot import replaced the data, which ends a
   * purge reading the old data.
   */
  private purging: Promise<void> | undefined;
  private purgedTo = 0;
  private dataEpoch = 0;
  /**
   * Set while a snapshot import rewrites the database (importSnapshotFrom, pass 2): reads wait
   * for it before touching LevelDB, so none sees a half-written store, and mutations queued
   * behind the import find it resolved. Cleared when the import succeeds. An import that fails
   * midway leaves it rejected: every later read, export and mutation fails with it until an
   * import succeeds (a reopen starts empty instead).
   */
  private importGate: Promise<void> | undefined;
  /** Purges that failed (they are retried with the next compaction). */
  purgeErrors = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private closing = false;
  private closed = false;
  private readonly bus = new EventBus();
  private waiters: { revision: number; resolve: (ok: boolean) => void; timer?: NodeJS.Timeout }[] = [];

  private constructor(
    private readonly db: Db,
    private readonly cacheMaxEntries: number,
  ) {}

  /** Opens (creating when missing) the store in `dir` and loads its counters into memory. */
  static async open(dir: string, opts: MvccStoreOptions = {}): Promise<MvccStore> {
    const db = opts.db ?? new ClassicLevel<string, Buffer>(dir, { keyEncoding: 'utf8', valueEncoding: 'buffer', writeBufferSize: WRITE_BUFFER_BYTES });
    await db.open();
    const store = new MvccStore(db, opts.cacheMaxEntries ?? MvccStore.CACHE_MAX_ENTRIES);
    const [rev, applied, compacted, importing] = await db.getMany([META_REV, META_APPLIED, META_COMPACTED, META_IMPORTING]);
    if (importing !== undefined) {
      // A snapshot import stopped midway (a crash, or a failure not followed by a successful
      // import): what it left is neither the old state nor the new one. Start empty, as a new
      // replica does; the leader sends a snapshot again.
      await clearExcept(db, META_IMPORTING);
      await writeBatch(db, [{ type: 'del', key: META_IMPORTING }], true);
    } else {
      store.revision = rev ? Number(rev.toString()) : 0;
      store.applied = applied ? Number(applied.toString()) : 0;
      store.compacted = compacted ? Number(compacted.toString()) : 0;
    }
    if (opts.keyIndex ?? true) store.liveKeys = await store.loadLiveKeys();
    // A purge cut short by a stop left history at or below the compacted revision: finish it.
    store.schedulePurge();
    return store;
  }

  /** Reads the names of all current keys (the `k:` keyspace, keys only). */
  private async loadLiveKeys(): Promise<Set<string>> {
    const keys = new Set<string>();
    const it = this.db.keys({ gte: LATEST, lt: prefixEnd(LATEST) });
    try {
      for (let chunk = await it.nextv(4096); chunk.length > 0; chunk = await it.nextv(4096)) {
        for (const k of chunk) keys.add(k.slice(LATEST.length));
      }
    } finally {
      await it.close();
    }
    return keys;
  }

  /** Number of live keys (undefined when the key index is disabled). */
  liveKeyCount(): number | undefined {
    return this.liveKeys?.size;
  }

  /** Latest revision applied (0 before the first write). */
  currentRevision(): number {
    return this.revision;
  }

  /** Revision below which reads fail with Compacted (0: nothing compacted). */
  compactedRevision(): number {
    return this.compacted;
  }

  /** Index of the last applied log entry (0 before the first). */
  appliedIndex(): number {
    return this.applied;
  }

  /** Subscribes to applied writes (see EventBus); returns the unsubscribe function. */
  subscribe(listener: EventListener): () => void {
    return this.bus.subscribe(listener);
  }

  /** Subscribes to history resets (snapshot import). */
  onReset(listener: () => void): () => void {
    return this.bus.onReset(listener);
  }

  /**
   * Resolves true once `revision` has been applied locally, false after `timeoutMs` or on close.
   * Used for "not older than" reads (conventions.md "Resource versions").
   */
  waitForRevision(revision: number, timeoutMs: number): Promise<boolean> {
    if (this.revision >= revision) return Promise.resolve(true);
    if (this.closed || timeoutMs <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter: (typeof this.waiters)[number] = { revision, resolve };
      waiter.timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  private wakeWaiters(): void {
    if (this.waiters.length === 0) return;
    const ready = this.waiters.filter((w) => w.revision <= this.revision);
    if (ready.length === 0) return;
    this.waiters = this.waiters.filter((w) => w.revision > this.revision);
    for (const w of ready) {
      clearTimeout(w.timer);
      w.resolve(true);
    }
  }

  /**
   * Runs mutations one at a time, in call order; none runs on a store that a failed import left
   * half-written (see importGate).
   */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.enqueue(() => (this.importGate ? this.importGate.then(fn) : fn()));
  }

  /** The queue behind exclusive(), without its check: an import may replace a broken store. */
  private enqueue<T>(fn: () => Promise<T>): Promise<T> {
    if (this.closing) return Promise.reject(new MvccError('Closed', 'store is closed'));
    const run = this.queue.then(fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async writeBatch(ops: BatchOp[], sync: boolean): Promise<void> {
    this.writing = true;
    try {
      await writeBatch(this.db, ops, sync);
    } finally {
      this.writing = false;
    }
  }

  /** Applies one entry; resolves undefined when `index` was already applied (idempotent replay). */
  async apply(index: number, command: TxnCommand, opts: { sync?: boolean } = {}): Promise<TxnResult | undefined> {
    const [result] = await this.applyBatch([{ index, command }], opts);
    return result;
  }

  /**
   * Applies entries in order as ONE LevelDB batch (group commit). Each command that writes gets
   * its own revision. Entries with index <= appliedIndex are skipped (result undefined), so a
   * replay after a crash is harmless. `sync` makes the batch fsynced before it resolves.
   */
  applyBatch(entries: readonly ApplyEntry[], opts: { sync?: boolean } = {}): Promise<(TxnResult | undefined)[]> {
    return this.exclusive(() => this.applyLocked(entries, opts.sync ?? false));
  }

  private async applyLocked(entries: readonly ApplyEntry[], sync: boolean): Promise<(TxnResult | undefined)[]> {
    let rev = this.revision;
    let applied = this.applied;
    let compactTo = this.compacted;
    const overlay = new Map<string, KeyValue | null>();
    const ops: BatchOp[] = [];
    const events: MvccEvent[] = [];
    const results: (TxnResult | undefined)[] = [];
    // Prefetch every key the batch touches with one getMany (one trip to LevelDB's thread
    // instead of one per key); `overlay` then holds writes made earlier in this batch.
    const wanted = new Set<string>();
    for (const entry of entries) {
      if (!entry.command || entry.index <= applied) continue;
      for (const c of entry.command.compares) if (typeof c.key === 'string') wanted.add(c.key);
      for (const op of [...entry.command.success, ...entry.command.failure]) if (typeof op.key === 'string') wanted.add(op.key);
    }
    const prefetched = new Map<string, KeyValue | undefined>();
    for (const k of wanted) {
      // Absent by the live-key index, or cached: no read needed.
      const hit = this.liveKeys && !this.liveKeys.has(k) ? null : this.latestCache.get(k);
      if (hit !== undefined) {
        prefetched.set(k, hit ?? undefined);
        wanted.delete(k);
      }
    }
    const keys = [...wanted];
    const values = keys.length > 0 ? await this.db.getMany(keys.map((k) => LATEST + k)) : [];
    keys.forEach((k, i) => {
      const b = values[i];
      prefetched.set(k, b === undefined ? undefined : decodeLatest(k, b));
    });
    const latest = async (key: string): Promise<KeyValue | undefined> => {
      const o = overlay.get(key);
      if (o !== undefined) return o ?? undefined;
      if (prefetched.has(key)) return prefetched.get(key);
      return this.readLatest(key);
    };

    for (const entry of entries) {
      if (!Number.isSafeInteger(entry.index) || entry.index <= applied) {
        results.push(undefined);
        continue;
      }
      applied = entry.index;
      const cmd = entry.command;
      if (!cmd) {
        results.push(undefined);
        continue;
      }
      const invalid = validateCommand(cmd);
      if (invalid) {
        results.push({ succeeded: false, revision: rev, results: [], error: invalid });
        continue;
      }
      if (cmd.compact !== undefined) {
        // A replicated compaction: every replica is at the same revision here, so all decide
        // alike. It takes no revision; `succeeded` says whether it moved the compacted revision.
        const moves = cmd.compact > compactTo && cmd.compact <= rev;
        if (moves) compactTo = cmd.compact;
        results.push({ succeeded: moves, revision: rev, results: [] });
        continue;
      }
      let ok = true;
      for (const c of cmd.compares) {
        const kv = await latest(c.key);
        if (c.target === 'absent') ok = kv === undefined;
        else if (c.target === 'present') ok = kv !== undefined;
        else if (c.target === 'modRevision') ok = (kv?.modRevision ?? 0) === c.value;
        else ok = (kv?.version ?? 0) === c.value;
        if (!ok) break;
      }
      const txnRev = rev + 1;
      let seq = 0;
      const opResults: OpResult[] = [];
      for (const op of ok ? cmd.success : cmd.failure) {
        const prev = await latest(op.key);
        if (op.type === 'get') {
          opResults.push(prev ? { current: prev } : {});
        } else if (op.type === 'put') {
          const current: KeyValue = {
            key: op.key,
            value: op.value,
            createRevision: prev ? prev.createRevision : txnRev,
            modRevision: txnRev,
            version: prev ? prev.version + 1 : 1,
          };
          overlay.set(op.key, current);
          ops.push({ type: 'put', key: LATEST + op.key, value: encodeLatest(current) });
          // The current version lives only in `k:`; the one it supersedes moves to history.
          if (prev) ops.push({ type: 'put', key: historyKey(op.key, prev.modRevision), value: encodeHistory(prev, false) });
          const ev: MvccEvent = prev
            ? { type: 'put', key: op.key, value: current, prevValue: prev, revision: txnRev }
            : { type: 'put', key: op.key, value: current, revision: txnRev };
          ops.push({ type: 'put', key: EVENTS + hex(txnRev) + hex(seq++, 4), value: encodeEventRef(op.key, 'put', prev?.modRevision ?? 0) });
          events.push(ev);
          opResults.push(prev ? { prev, current } : { current });
        } else {
          if (!prev) {
            opResults.push({});
            continue;
          }
          const tomb: KeyValue = { key: op.key, value: new Uint8Array(0), createRevision: prev.createRevision, modRevision: txnRev, version: 0 };
          overlay.set(op.key, null);
          ops.push({ type: 'del', key: LATEST + op.key });
          ops.push({ type: 'put', key: historyKey(op.key, prev.modRevision), value: encodeHistory(prev, false) });
          ops.push({ type: 'put', key: historyKey(op.key, txnRev), value: encodeHistory(tomb, true) });
          const ev: MvccEvent = { type: 'delete', key: op.key, value: tomb, prevValue: prev, revision: txnRev };
          ops.push({ type: 'put', key: EVENTS + hex(txnRev) + hex(seq++, 4), value: encodeEventRef(op.key, 'delete', prev.modRevision) });
          events.push(ev);
          opResults.push({ prev });
        }
      }
      // Only a transaction that changed something takes a revision (etcd does the same), so
      // revisions stay dense and equal on every replica.
      if (seq > 0) rev = txnRev;
      results.push({ succeeded: ok, revision: rev, results: opResults });
    }
    if (applied === this.applied) return results;
    ops.push({ type: 'put', key: META_APPLIED, value: Buffer.from(String(applied)) });
    if (rev !== this.revision) ops.push({ type: 'put', key: META_REV, value: Buffer.from(String(rev)) });
    const compactedBefore = this.compacted;
    if (compactTo > compactedBefore) {
      ops.push({ type: 'put', key: META_COMPACTED, value: Buffer.from(String(compactTo)) });
      // Announced before the write, as compact() does: a reader sees Compacted, never a hole.
      this.compacted = compactTo;
    }
    try {
      await this.writeBatch(ops, sync);
    } catch (e) {
      this.compacted = compactedBefore;
      throw e;
    } finally {
      this.cacheEpoch++;
    }
    for (const [key, v] of overlay) {
      // A key created by this batch is not cached (see latestCache): a create-heavy load would
      // otherwise keep every new object alive until evicted, old-generation garbage for the GC
      // on every replica, while what reads need stays cached on read and on update.
      if (v === null || prefetched.get(key) !== undefined || this.latestCache.has(key)) this.cacheLatest(key, v);
      if (v === null) this.liveKeys?.delete(key);
      else this.liveKeys?.add(key);
    }
    this.revision = rev;
    this.applied = applied;
    this.bus.emit(events);
    this.wakeWaiters();
    if (compactTo > compactedBefore) this.schedulePurge();
    return results;
  }

  private async readLatest(key: string, snapshot?: Snapshot): Promise<KeyValue | undefined> {
    if (snapshot) {
      const b = await this.db.get(LATEST + key, { snapshot });
      return b === undefined ? undefined : decodeLatest(key, b);
    }
    // A batch being written becomes visible with the next revision; until then absent is right.
    if (this.liveKeys && !this.liveKeys.has(key)) return undefined;
    const hit = this.latestCache.get(key);
    if (hit) return hit;
    const epoch = this.cacheEpoch;
    const quiet = !this.writing;
    const b = await this.db.get(LATEST + key);
    if (b === undefined) return undefined;
    const kv = decodeLatest(key, b);
    if (quiet && !this.writing && epoch === this.cacheEpoch) this.cacheLatest(key, kv);
    return kv;
  }

  /** Bounds of the latest-value cache (entries: the default of `cacheMaxEntries`). */
  private static readonly CACHE_MAX_ENTRIES = 50_000;
  private static readonly CACHE_MAX_BYTES = 64 * 1024 * 1024;
  /** Share of each bound an eviction pass brings the cache down to. */
  private static readonly CACHE_EVICT_TO = 0.9;

  private cacheLatest(key: string, kv: KeyValue | null): void {
    const old = this.latestCache.get(key);
    if (old) {
      this.latestCache.delete(key);
      this.latestCacheBytes -= old.value.length + key.length;
    }
    if (kv === null) return;
    this.latestCache.set(key, kv);
    this.latestCacheBytes += kv.value.length + key.length;
    if (this.latestCache.size > this.cacheMaxEntries || this.latestCacheBytes > MvccStore.CACHE_MAX_BYTES) this.evictLatest();
  }

  /**
   * Drops the oldest-inserted entries (Map order) until the cache is 10% under both bounds, in
   * one pass. Evicting one entry per insert with `keys().next()` cost ~25 µs per write once the
   * cache was full: V8's ordered hash table leaves a hole per deleted entry until it rehashes,
   * and each new iterator walks every hole left at the front by earlier evictions. One pass per
   * 10% of the cache keeps eviction amortized O(1).
   */
  private evictLatest(): void {
    const maxEntries = this.cacheMaxEntries * MvccStore.CACHE_EVICT_TO;
    const maxBytes = MvccStore.CACHE_MAX_BYTES * MvccStore.CACHE_EVICT_TO;
    for (const [k, v] of this.latestCache) {
      if (this.latestCache.size <= maxEntries && this.latestCacheBytes <= maxBytes) break;
      this.latestCache.delete(k);
      this.latestCacheBytes -= v.value.length + k.length;
    }
  }

  /** Takes a snapshot and the revision it reflects. The caller must close the snapshot. */
  private async snapshot(): Promise<{ snap: Snapshot; revision: number }> {
    const inFlight = this.writing;
    const revision = this.revision;
    const snap = this.db.snapshot();
    if (!inFlight) return { snap, revision };
    // A batch may have landed in the snapshot before its promise resolved: ask the snapshot.
    const b = await this.db.get(META_REV, { snapshot: snap });
    return { snap, revision: b ? Number(b.toString()) : 0 };
  }

  private checkRevision(atRevision: number, current: number): void {
    if (!Number.isSafeInteger(atRevision) || atRevision < 0) {
      throw new MvccError('FutureRevision', `invalid revision ${atRevision}`, current);
    }
    if (atRevision > current) throw new MvccError('FutureRevision', `revision ${atRevision} is not applied yet (current ${current})`, current);
    if (atRevision < this.compacted) throw new MvccError('Compacted', `revision ${atRevision} has been compacted (compacted ${this.compacted})`, this.compacted);
  }

  /**
   * Reads one key. Without `atRevision`: one LevelDB get of the latest keyspace. With it: the
   * version live at that revision (Compacted below compactedRevision, FutureRevision above current).
   */
  async get(key: string, atRevision?: number): Promise<KeyValue | undefined> {
    if (this.importGate) await this.importGate;
    if (atRevision === undefined) return this.readLatest(key);
    const { snap, revision } = await this.snapshot();
    try {
      this.checkRevision(atRevision, revision);
      const current = await this.readLatest(key, snap);
      if (atRevision === revision || (current && current.modRevision <= atRevision)) return current;
      const it = this.db.iterator({
        gt: `${HISTORY}${key}\u0000`,
        lte: `${HISTORY}${key}\u0000${hex(atRevision)}`,
        reverse: true,
        limit: 1,
        snapshot: snap,
      });
      try {
        const entry = await it.next();
        return entry ? decodeHistory(key, entry[1]) : undefined;
      } finally {
        await it.close();
      }
    } finally {
      await snap.close();
    }
  }

  /**
   * Key-ordered values under `prefix` at one revision. At the current revision only the latest
   * keyspace is read; at an older revision the history keyspace of the prefix is scanned.
   */
  async range(prefix: string, opts: RangeOptions = {}): Promise<RangeResult> {
    if (this.importGate) await this.importGate;
    const { snap, revision } = await this.snapshot();
    try {
      const at = opts.atRevision ?? revision;
      this.checkRevision(at, revision);
      return at === revision ? await this.rangeLatest(prefix, opts, snap, revision) : await this.rangeHistory(prefix, opts, snap, at);
    } finally {
      await snap.close();
    }
  }

  private lowerBound(space: string, prefix: string, startAfter: string | undefined): { gt?: string; gte?: string } {
    if (startAfter !== undefined && startAfter >= prefix) {
      // History keys of `startAfter` are `startAfter\0...`; the next key is >= startAfter + \x01.
      return space === HISTORY ? { gte: `${space}${startAfter}\u0001` } : { gt: space + startAfter };
    }
    return { gte: space + prefix };
  }

  private async rangeLatest(prefix: string, opts: RangeOptions, snap: Snapshot, revision: number): Promise<RangeResult> {
    const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
    const lt = LATEST + prefixEnd(prefix);
    const it = this.db.iterator({ ...this.lowerBound(LATEST, prefix, opts.startAfter), lt, snapshot: snap });
    const kvs: KeyValue[] = [];
    let lastKey: string | undefined;
    let full = false;
    try {
      outer: for (;;) {
        const chunk = await it.nextv(Math.min(1000, Number.isFinite(limit) ? Math.max(limit - kvs.length, 16) : 1000));
        if (chunk.length === 0) break;
        for (const [k, v] of chunk) {
          const kv = decodeLatest(k.slice(LATEST.length), v);
          lastKey = kv.key;
          if (opts.filter && !opts.filter(kv)) continue;
          kvs.push(kv);
          if (kvs.length >= limit) {
            full = true;
            break outer;
          }
        }
      }
    } finally {
      await it.close();
    }
    let remaining = 0;
    if (full && lastKey !== undefined) {
      const keys = this.db.keys({ gt: LATEST + lastKey, lt, snapshot: snap });
      try {
        for (;;) {
          const chunk = await keys.nextv(1000);
          if (chunk.length === 0) break;
          remaining += chunk.length;
        }
      } finally {
        await keys.close();
      }
    }
    return { kvs, revision, remaining, more: remaining > 0 };
  }

  /**
   * A range at a past revision: per key, the current version (`k:`) when it was written at or
   * before `at`, else the newest superseded version or tombstone (`h:`) at or before `at`.
   * Both keyspaces are walked once, in key order, side by side.
   */
  private async rangeHistory(prefix: string, opts: RangeOptions, snap: Snapshot, at: number): Promise<RangeResult> {
    const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
    const it = this.db.iterator({ ...this.lowerBound(HISTORY, prefix, opts.startAfter), lt: HISTORY + prefixEnd(prefix), snapshot: snap });
    const cur = new Cursor(this.db.iterator({ ...this.lowerBound(LATEST, prefix, opts.startAfter), lt: LATEST + prefixEnd(prefix), snapshot: snap }));
    const kvs: KeyValue[] = [];
    let remaining = 0;
    let full = false;
    const take = (kv: KeyValue | undefined): void => {
      if (!kv) return;
      if (full) {
        remaining++;
        return;
      }
      if (opts.filter && !opts.filter(kv)) return;
      kvs.push(kv);
      if (kvs.length >= limit) full = true;
    };
    // Current versions of keys before `key` (all when undefined): keys without history.
    const currentBefore = async (key: string | undefined): Promise<void> => {
      for (;;) {
        const e = await cur.peek();
        if (!e || (key !== undefined && e[0] >= LATEST + key)) return;
        cur.advance();
        const kv = decodeLatest(e[0].slice(LATEST.length), e[1]);
        if (kv.modRevision <= at) take(kv);
      }
    };
    const finish = async (key: string, best: Buffer | undefined): Promise<void> => {
      await currentBefore(key);
      const e = await cur.peek();
      if (e && e[0] === LATEST + key) {
        cur.advance();
        const kv = decodeLatest(key, e[1]);
        if (kv.modRevision <= at) return take(kv);
      }
      if (best !== undefined) take(decodeHistory(key, best));
    };
    try {
      let groupKey: string | undefined;
      let best: Buffer | undefined;
      for (;;) {
        const chunk = await it.nextv(1000);
        if (chunk.length === 0) break;
        for (const [k, v] of chunk) {
          const sep = k.lastIndexOf('\u0000');
          const key = k.slice(HISTORY.length, sep);
          const rev = parseInt(k.slice(sep + 1), 16);
          if (key !== groupKey) {
            if (groupKey !== undefined) await finish(groupKey, best);
            groupKey = key;
            best = undefined;
          }
          if (rev <= at) best = v;
        }
      }
      if (groupKey !== undefined) await finish(groupKey, best);
      await currentBefore(undefined);
    } finally {
      await it.close();
      await cur.close();
    }
    return { kvs, revision: at, remaining, more: remaining > 0 };
  }

  /**
   * Events with revision > `afterRevision`, in order, for keys under `prefix` (or exactly `key`),
   * up to the returned `revision` (the store revision the history was read at). A caller that
   * subscribed before calling gets every later event from the bus: together, no gap. Compacted
   * when `afterRevision` < compactedRevision.
   */
  async eventsAfter(afterRevision: number, match: { prefix?: string; key?: string } = {}): Promise<{ events: MvccEvent[]; revision: number }> {
    if (this.importGate) await this.importGate;
    const { snap, revision } = await this.snapshot();
    try {
      if (afterRevision < this.compacted) {
        throw new MvccError('Compacted', `revision ${afterRevision} has been compacted (compacted ${this.compacted})`, this.compacted);
      }
      const events: MvccEvent[] = [];
      if (afterRevision >= revision) return { events, revision };
      const keep =
        match.key !== undefined ? (k: string) => k === match.key : match.prefix ? (k: string) => k.startsWith(match.prefix!) : () => true;
      const it = this.db.iterator({ gte: EVENTS + hex(Math.max(afterRevision + 1, 0)), lt: EVENTS + '\u007f', snapshot: snap });
      try {
        for (;;) {
          const chunk = await it.nextv(1000);
          if (chunk.length === 0) break;
          const decoded: (MvccEvent | EventRef)[] = [];
          // Per reference: where its value and previous value are in `wanted` (-1: none).
          const slots: { value: number; prev: number }[] = [];
          const wanted: string[] = [];
          for (const [k, v] of chunk) {
            const rev = parseInt(k.slice(EVENTS.length, EVENTS.length + 16), 16);
            const e = decodeEvent(v, rev, keep);
            if (!e) continue;
            decoded.push(e);
            if ('prevRevision' in e) {
              const value = wanted.push(historyKey(e.key, e.revision)) - 1;
              slots.push({ value, prev: e.prevRevision > 0 ? wanted.push(historyKey(e.key, e.prevRevision)) - 1 : -1 });
            }
          }
          const records = wanted.length > 0 ? await this.db.getMany(wanted, { snapshot: snap }) : [];
          // A version not superseded yet is the current one, in `k:` only.
          const refs = decoded.filter((e): e is EventRef => 'prevRevision' in e);
          const currentKeys = refs.filter((_, i) => records[slots[i]!.value] === undefined).map((e) => LATEST + e.key);
          const currents = currentKeys.length > 0 ? await this.db.getMany(currentKeys, { snapshot: snap }) : [];
          let r = 0;
          let c = 0;
          for (const e of decoded) {
            if (!('prevRevision' in e)) {
              events.push(e);
              continue;
            }
            const slot = slots[r++]!;
            const stored = records[slot.value];
            const value = stored !== undefined ? decodeHistoryRecord(e.key, e.revision, stored) : currentRecord(e.key, e.revision, currents[c++]);
            if (slot.prev < 0) {
              events.push({ type: e.type, key: e.key, value, revision: e.revision });
              continue;
            }
            const prevStored = records[slot.prev];
            const prevValue = decodeHistoryRecord(e.key, e.prevRevision, prevStored);
            events.push({ type: e.type, key: e.key, value, prevValue, revision: e.revision });
          }
        }
      } finally {
        await it.close();
      }
      return { events, revision };
    } finally {
      await snap.close();
    }
  }

  /**
   * Drops history older than `revision`: afterwards reads at a revision < `revision` and watches
   * from before it fail with Compacted, while the state at `revision` stays readable (etcd's
   * compaction contract). Records the compacted revision durably (a short step in the apply
   * queue), then deletes what it no longer needs beside later applies (purge()); resolves once
   * that is done. A replicated store compacts through a command instead (TxnCommand.compact),
   * which takes the same two steps on every replica.
   */
  async compact(revision: number): Promise<void> {
    await this.exclusive(async () => {
      if (revision <= this.compacted) return;
      if (!Number.isSafeInteger(revision) || revision > this.revision) {
        throw new MvccError('FutureRevision', `cannot compact to ${revision}: current revision ${this.revision}`, this.revision);
      }
      // Announce first: a reader that checks after this sees Compacted rather than a hole.
      const before = this.compacted;
      this.compacted = revision;
      try {
        await this.writeBatch([{ type: 'put', key: META_COMPACTED, value: Buffer.from(String(revision)) }], false);
      } catch (e) {
        this.compacted = before;
        throw e;
      }
    });
    await this.whenPurged();
  }

  /** Resolves when the deletions of every compaction so far are done (or have failed). */
  async whenPurged(): Promise<void> {
    this.schedulePurge();
    while (this.purging) await this.purging;
  }

  /** Starts purge() unless one runs, nothing is left to delete or an import holds the data. */
  private schedulePurge(): void {
    if (this.purging || this.closing || this.importGate || this.purgedTo >= this.compacted) return;
    this.purging = this.purge().then(
      (more) => {
        this.purging = undefined;
        if (more) this.schedulePurge();
      },
      () => {
        // Retried with the next compaction (or at the next start); reads are unaffected. A
        // purge stopped by close() is not a failure.
        if (!this.closing) this.purgeErrors++;
        this.purging = undefined;
      },
    );
  }

  /**
   * Deletes the history that compaction to the compacted revision C made unreachable, in
   * chunks written between applies. Every event at revision r <= C is dropped, and with it the
   * version it superseded (its previous version: a newer one at r <= C is what any read at C or
   * later sees) and, for a delete, its own tombstone (absent needs no record). Versions live at
   * C are never superseded by an event <= C, so they stay. Events at or below C never change,
   * and applies only add newer records, so the chunks can be read outside the apply queue; only
   * their writes take turns with applies. Events of the older self-contained format carry no
   * previous revision: their keys' versions are sorted out inside the queue, as compaction did
   * before. Returns true when another compaction arrived meanwhile (purge again).
   */
  private async purge(): Promise<boolean> {
    const target = this.compacted;
    const epoch = this.dataEpoch;
    const it = this.db.iterator({ gte: EVENTS, lt: EVENTS + hex(target + 1) });
    try {
      for (;;) {
        const chunk = await it.nextv(1000);
        if (chunk.length === 0) break;
        const ops: BatchOp[] = [];
        const legacy = new Set<string>();
        for (const [k, v] of chunk) {
          ops.push({ type: 'del', key: k });
          const revision = parseInt(k.slice(EVENTS.length, EVENTS.length + 16), 16);
          const r = new BinReader(v);
          const key = r.str();
          const kind = r.u8();
          if (kind === 3 || kind === 4) {
            const prev = r.num();
            if (prev > 0) ops.push({ type: 'del', key: historyKey(key, prev) });
            if (kind === 4) ops.push({ type: 'del', key: historyKey(key, revision) });
          } else {
            legacy.add(key);
          }
        }
        const stop = await this.exclusive(async () => {
          if (this.dataEpoch !== epoch) return true;
          if (legacy.size > 0) ops.push(...(await this.legacyPurgeOps([...legacy], target)));
          await this.writeBatch(ops, false);
          return false;
        });
        if (stop) return true;
      }
    } finally {
      await it.close();
    }
    if (this.dataEpoch === epoch) this.purgedTo = Math.max(this.purgedTo, target);
    return this.purgedTo < this.compacted;
  }

  /**
   * For keys with events of the older format (no previous revision recorded): every version of
   * the key older than its newest version <= `revision` (and that one too when it is a
   * tombstone). Runs inside the apply queue, since it reads the current versions.
   */
  private async legacyPurgeOps(keys: string[], revision: number): Promise<BatchOp[]> {
    const ops: BatchOp[] = [];
    const currents = await this.db.getMany(keys.map((k) => LATEST + k));
    for (let j = 0; j < keys.length; j++) {
      const key = keys[j]!;
      const b = currents[j];
      // A current version written at or before `revision` is the one live there: no
      // superseded version is needed any more.
      const currentLive = b !== undefined && decodeLatest(key, b).modRevision <= revision;
      const versions = await this.db.iterator({ gt: `${HISTORY}${key}\u0000`, lte: `${HISTORY}${key}\u0000${hex(revision)}` }).all();
      const lastIdx = versions.length - 1;
      versions.forEach(([k, v], n) => {
        if (currentLive || n < lastIdx || v[0] === 0) ops.push({ type: 'del', key: k });
      });
    }
    return ops;
  }

  /**
   * Serializes the store for a lagging replica: revision, appliedIndex and compacted revision,
   * then every record of the latest, history and event keyspaces as stored (format 2), read
   * from one LevelDB snapshot. Shipping the retained history (as etcd ships its whole backend)
   * lets the replica serve watches and past reads from where the others can, instead of
   * starting its history at the snapshot. Only taking the LevelDB snapshot waits in the apply
   * queue; reading and encoding run beside later applies. Holds the whole snapshot in memory
   * (twice, briefly): a large store exports with exportSnapshotToFile.
   */
  async exportSnapshot(): Promise<Uint8Array> {
    const pieces: Buffer[] = [];
    const { bytes } = await this.exportTo((piece) => void pieces.push(piece));
    const out = new Uint8Array(bytes);
    let at = 0;
    for (const piece of pieces) {
      out.set(piece, at);
      at += piece.length;
    }
    return out;
  }

  /**
   * Writes the bytes exportSnapshot() returns to `file` (created or truncated, mode 0o600), in
   * pieces of about 1 MiB, so memory does not grow with the store; the file is fsynced before
   * this resolves. Returns the counters inside the snapshot and its size. On failure the partial
   * file is removed.
   */
  async exportSnapshotToFile(file: string): Promise<{ revision: number; appliedIndex: number; bytes: number }> {
    const fh = await openFile(file, 'w', 0o600);
    let exported: SnapshotHeader & { bytes: number };
    try {
      try {
        // The mode applies to a new file only; an existing one keeps its own when truncated.
        await fh.chmod(0o600);
        exported = await this.exportTo((piece) => writeFully(fh, piece));
        await fh.sync();
      } finally {
        await fh.close();
      }
    } catch (e) {
      await unlink(file).catch(() => undefined);
      throw e;
    }
    return { revision: exported.revision, appliedIndex: exported.applied, bytes: exported.bytes };
  }

  /**
   * Streams a snapshot of the store to `write`, piece by piece, waiting for each write before
   * encoding the next piece. Returns the snapshot's counters and its size.
   */
  private async exportTo(write: (piece: Buffer) => Promise<void> | void): Promise<SnapshotHeader & { bytes: number }> {
    // In the queue, so the counters describe exactly the data the snapshot holds.
    const { snap, header } = await this.exclusive(async () => ({
      snap: this.db.snapshot(),
      header: { revision: this.revision, applied: this.applied, compacted: this.compacted },
    }));
    let bytes = 0;
    try {
      for await (const piece of this.snapshotPieces(snap, header)) {
        await write(piece);
        bytes += piece.length;
      }
    } finally {
      await snap.close();
    }
    return { ...header, bytes };
  }

  /**
   * The snapshot (format 2) of the data in `snap`, which `header` describes, in pieces of about
   * SNAPSHOT_PIECE_BYTES: magic, format and counters, then each record as flag 1, key, value,
   * then the terminator 0. Each piece is a new buffer: the caller may keep it.
   */
  private async *snapshotPieces(snap: Snapshot, header: SnapshotHeader): AsyncGenerator<Buffer> {
    const writer = () => new BinWriter(SNAPSHOT_PIECE_BYTES + 64 * 1024);
    let w = writer();
    w.str(SNAPSHOT_MAGIC).u8(2).num(header.revision).num(header.applied).num(header.compacted);
    // Roughly the bytes in `w` (keys counted in UTF-16 units): only decides where a piece ends.
    let size = 0;
    for (const space of [LATEST, HISTORY, EVENTS]) {
      const it = this.db.iterator({ gte: space, lt: prefixEnd(space), snapshot: snap });
      try {
        for (let chunk = await it.nextv(1000); chunk.length > 0; chunk = await it.nextv(1000)) {
          for (const [k, v] of chunk) {
            w.u8(1).str(k).bytes(v);
            size += 9 + k.length + v.length;
            if (size < SNAPSHOT_PIECE_BYTES) continue;
            yield w.finish();
            w = writer();
            size = 0;
          }
        }
      } finally {
        await it.close();
      }
    }
    yield w.u8(0).finish();
  }

  /**
   * Makes every applied batch durable (applies are written without fsync: the Raft log is the
   * durable record until the log is compacted) and returns the applied index now on disk.
   * One synced write of the applied index flushes LevelDB's log, and with it every batch before.
   */
  sync(): Promise<number> {
    return this.exclusive(async () => {
      await this.writeBatch([{ type: 'put', key: META_APPLIED, value: Buffer.from(String(this.applied)) }], true);
      return this.applied;
    });
  }

  /**
   * Replaces the whole state with a snapshot held in memory: importSnapshotFrom with one chunk.
   */
  importSnapshot(data: Uint8Array): Promise<void> {
    return this.importSnapshotFrom(() => [data]);
  }

  /**
   * Replaces the whole state with the snapshot that `open` yields in chunks of any size (a file
   * read stream, or one buffer). With format 2 the exporter's retained history comes along and
   * compactedRevision becomes the exporter's; a format 1 snapshot (live state only) starts
   * history at its revision. Reset listeners are told (this node's watchers relist: its event
   * stream jumped). Memory stays bounded by the batch size and the largest record.
   *
   * `open` is called twice and must yield the same bytes both times. Pass 1 reads and validates
   * the whole input without writing: malformed or truncated input fails with
   * MvccError('Corrupt'), leaving the store unchanged. Pass 2 rewrites the database: a synced
   * marker (m:importing), the deletion of every other record, the snapshot's records in batches
   * of about 4 MiB, and a last synced batch with the counters that removes the marker; a store
   * opened with the marker present starts empty (open()). Both passes wait their turn in the
   * apply queue, so mutations keep their call order; reads go on during pass 1 and wait for the
   * end of pass 2 rather than see a half-written store.
   *
   * If pass 2 fails (the source throws, a write fails), the import rejects with that error and
   * the marker stays: the store then refuses every read, export and mutation with
   * MvccError('Corrupt'), its counters no longer describing its data, until an import succeeds
   * or the store is reopened (empty).
   */
  importSnapshotFrom(open: () => SnapshotSource): Promise<void> {
    // Not exclusive(): an import may follow a failed one, and replaces what it left.
    return this.enqueue(async () => {
      const { applied: importing } = await readSnapshot(open());
      let release!: () => void;
      let fail!: (e: MvccError) => void;
      const gate = new Promise<void>((resolve, reject) => {
        release = resolve;
        fail = reject;
      });
      // Each waiting read gets the rejection; the gate itself is not an unhandled one.
      gate.catch(() => undefined);
      this.importGate = gate;
      let imported: { header: SnapshotHeader; liveKeys: Set<string> | undefined };
      try {
        imported = await this.rewrite(open(), importing);
      } catch (e) {
        fail(new MvccError('Corrupt', `a snapshot import failed midway (${e instanceof Error ? e.message : String(e)}): import again, or reopen the store (empty)`));
        throw e;
      } finally {
        this.cacheEpoch++;
        this.latestCache.clear();
        this.latestCacheBytes = 0;
      }
      const { header, liveKeys } = imported;
      if (this.liveKeys) this.liveKeys = liveKeys;
      this.revision = header.revision;
      this.applied = header.applied;
      this.compacted = header.compacted;
      // A purge of the replaced data stops; the imported history may hold records at or below
      // its compacted revision (the exporter may not have purged them yet).
      this.dataEpoch++;
      this.purgedTo = 0;
      this.importGate = undefined;
      release();
      this.bus.emitReset();
      this.wakeWaiters();
      this.schedulePurge();
    });
  }

  /**
   * Pass 2 of importSnapshotFrom: replaces every record with the snapshot's, in bounded batches
   * written without fsync between the synced marker and the synced last batch (LevelDB's log
   * is written in order, so that fsync makes every batch before it durable too). `importing`
   * (the snapshot's applied index) is the marker's value, for whoever inspects the database.
   * Returns the snapshot's counters and, with the key index on, its live keys.
   */
  private async rewrite(source: SnapshotSource, importing: number): Promise<{ header: SnapshotHeader; liveKeys: Set<string> | undefined }> {
    await this.writeBatch([{ type: 'put', key: META_IMPORTING, value: Buffer.from(String(importing)) }], true);
    await clearExcept(this.db, META_IMPORTING);
    const liveKeys = this.liveKeys ? new Set<string>() : undefined;
    let ops: BatchOp[] = [];
    let bytes = 0;
    const header = await readSnapshot(source, (key, value) => {
      ops.push({ type: 'put', key, value });
      bytes += key.length + value.length;
      if (liveKeys && key.startsWith(LATEST)) liveKeys.add(key.slice(LATEST.length));
      if (ops.length < IMPORT_BATCH_RECORDS && bytes < IMPORT_BATCH_BYTES) return undefined;
      const batch = ops;
      ops = [];
      bytes = 0;
      return this.writeBatch(batch, false);
    });
    ops.push(
      { type: 'put', key: META_REV, value: Buffer.from(String(header.revision)) },
      { type: 'put', key: META_APPLIED, value: Buffer.from(String(header.applied)) },
      { type: 'put', key: META_COMPACTED, value: Buffer.from(String(header.compacted)) },
      { type: 'del', key: META_IMPORTING },
    );
    await this.writeBatch(ops, true);
    return { header, liveKeys };
  }

  /** Waits for queued mutations, then closes the database. Pending waiters resolve false. */
  async close(): Promise<void> {
    if (this.closing) return;
    // Mutations already queued finish; later ones are refused (exclusive() checks `closing`).
    this.closing = true;
    await this.queue;
    // A purge stops at its next write (exclusive() refuses once closing).
    while (this.purging) await this.purging;
    this.closed = true;
    for (const w of this.waiters) {
      clearTimeout(w.timer);
      w.resolve(false);
    }
    this.waiters = [];
    await this.db.close();
  }
}
