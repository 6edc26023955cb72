/**
 * The snapshot stream of the store (docs/storage.md "Snapshots"): magic, format and counters,
 * then every record of the latest, history and event keyspaces, then a 0 terminator. Encoding
 * reads one LevelDB snapshot piece by piece; decoding takes chunks of any size.
 */
import { type FileHandle, open as openFile, unlink } from 'node:fs/promises';
import { diskFaultBefore } from '@app/level';
import { BinReader, BinWriter, CodecError } from './mvcc.codec.js';
import {
  type BatchOp,
  type Db,
  type Snapshot,
  EVENTS,
  HISTORY,
  LATEST,
  META_APPLIED,
  META_COMPACTED,
  META_IMPORTING,
  META_REV,
  META_SYNCED,
  clearExcept,
  encodeEventRef,
  encodeHistory,
  encodeLatest,
  flushToDisk,
  hex,
  historyKey,
  prefixEnd,
} from './mvcc.keyspace.js';
import { MvccError, type KeyValue, validateKey } from './mvcc.types.js';

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
export interface SnapshotHeader {
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
  /** Input bytes up to and including the terminator, once it was read. */
  snapshotBytes = 0;
  /** Records of the latest keyspace read so far (the live keys). */
  liveKeys = 0;

  /**
   * `zeroPadding`: zero bytes after the terminator are allowed and ignored (the padding of a
   * snapshot framed for etcdctl); anything else after it is still refused.
   */
  constructor(
    private readonly keepValues: boolean,
    private readonly zeroPadding = false,
  ) {}

  /** Takes the next chunk; yields [key, value] of each record it completes (none without keepValues). */
  *records(chunk: Uint8Array): Generator<[string, Buffer]> {
    if (chunk.length === 0) return;
    if (this.ended) {
      this.skipPadding(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      return;
    }
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

  /** Input after the terminator: zero padding when allowed, else an error. */
  private skipPadding(b: Buffer): void {
    if (b.length === 0) return;
    if (!this.zeroPadding || b.some((x) => x !== 0)) throw new CodecError(`trailing bytes at byte ${this.offset}`);
    this.offset += b.length;
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
      this.snapshotBytes = this.offset;
      this.skipPadding(this.buf.subarray(this.pos));
      for (const c of this.queue.splice(0)) this.skipPadding(c);
      this.buf = Buffer.alloc(0);
      this.pos = 0;
      this.queued = 0;
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
    if (latest || key.startsWith(LATEST)) this.liveKeys++;
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
export async function readSnapshot(source: SnapshotSource, onRecord?: (key: string, value: Buffer) => Promise<void> | undefined): Promise<SnapshotHeader> {
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

/** What inspectSnapshot found in a snapshot. */
export interface SnapshotSummary extends SnapshotHeader {
  /** Bytes of the snapshot itself, up to and including its terminator (padding excluded). */
  bytes: number;
  /** Live keys (records of the latest keyspace), the store's reserved keys included. */
  keys: number;
}

/**
 * Validates the snapshot `source` yields, allowing zero padding after its terminator (a snapshot
 * framed for etcdctl), and returns its counters, its own length and its number of live keys.
 * Malformed input: MvccError('Corrupt').
 */
export async function inspectSnapshot(source: SnapshotSource): Promise<SnapshotSummary> {
  const decoder = new SnapshotDecoder(false, true);
  try {
    for await (const chunk of source) for (const _ of decoder.records(chunk));
    return { ...decoder.end(), bytes: decoder.snapshotBytes, keys: decoder.liveKeys };
  } catch (e) {
    if (e instanceof CodecError) throw new MvccError('Corrupt', `invalid snapshot: ${e.message}`);
    throw e;
  }
}

/** Writes all of `data` at the file's position (one write may take only part of it). */
async function writeFully(fh: FileHandle, data: Buffer): Promise<void> {
  for (let at = 0; at < data.length;) at += (await fh.write(data, at)).bytesWritten;
}

/**
 * The snapshot (format 2) of the data in `snap`, which `header` describes, in pieces of about
 * SNAPSHOT_PIECE_BYTES: magic, format and counters, then each record as flag 1, key, value,
 * then the terminator 0. Each piece is a new buffer: the caller may keep it. The caller keeps
 * `snap` open until the generator is done.
 */
export function snapshotPieces(db: Db, snap: Snapshot, header: SnapshotHeader): AsyncGenerator<Buffer> {
  return encodeSnapshot(header, storedRecords(db, snap));
}

/** Every record of the latest, history and event keyspaces in `snap`, a chunk at a time. */
async function* storedRecords(db: Db, snap: Snapshot): AsyncGenerator<readonly (readonly [string, Buffer])[]> {
  for (const space of [LATEST, HISTORY, EVENTS]) {
    const it = db.iterator({ gte: space, lt: prefixEnd(space), snapshot: snap });
    try {
      for (let chunk = await it.nextv(1000); chunk.length > 0; chunk = await it.nextv(1000)) yield chunk;
    } finally {
      await it.close();
    }
  }
}

/** The snapshot (format 2) of `header` and the records (store keys and values) `chunks` yields, in pieces as snapshotPieces. */
async function* encodeSnapshot(header: SnapshotHeader, chunks: AsyncIterable<readonly (readonly [string, Buffer])[]>): AsyncGenerator<Buffer> {
  const writer = () => new BinWriter(SNAPSHOT_PIECE_BYTES + 64 * 1024);
  let w = writer();
  w.str(SNAPSHOT_MAGIC).u8(2).num(header.revision).num(header.applied).num(header.compacted);
  // Roughly the bytes in `w` (keys counted in UTF-16 units): only decides where a piece ends.
  let size = 0;
  for await (const chunk of chunks) {
    for (const [k, v] of chunk) {
      w.u8(1).str(k).bytes(v);
      size += 9 + k.length + v.length;
      if (size < SNAPSHOT_PIECE_BYTES) continue;
      yield w.finish();
      w = writer();
      size = 0;
    }
  }
  yield w.u8(0).finish();
}

/**
 * One change of a history handed to snapshotOfHistory: a put of `kv` at `kv.modRevision`, or the
 * deletion of `key` at `revision`. `current` marks the put that is its key's version now (its
 * key's last change).
 */
export type HistoryChange = { type: 'put'; kv: KeyValue; current: boolean } | { type: 'delete'; key: string; revision: number };

/** What snapshotOfHistory knows of a key: its last change. */
interface LastChange {
  revision: number;
  createRevision: number;
  put: boolean;
  current: boolean;
}

/**
 * The snapshot (format 2) of a store whose history is `changes`, in revision order (changes of
 * one revision in the order they were made), with the counters of `header`. The records are the
 * ones the store's own applies would have written: current versions in the latest keyspace,
 * superseded versions and tombstones in history, an event per change. Changes at or below
 * `header.compacted` may be only what a compaction there kept (each key's newest version at or
 * below it); their events and superseded versions are left for the importing store's purge,
 * which runs after the import as after any compaction. In pieces as snapshotPieces. Used to
 * bring data from elsewhere (an etcd backend file) into the store's format;
 * MvccStore.importSnapshotFrom then imports it as any snapshot. A history the store could not
 * have written (revisions going back, a key changed twice in a revision, a put marked current
 * that changes again or a last put not so marked, a key the store refuses) is MvccError.
 */
export function snapshotOfHistory(header: SnapshotHeader, changes: AsyncIterable<readonly HistoryChange[]>): AsyncGenerator<Buffer> {
  if (!(header.compacted >= 0 && header.compacted <= header.revision)) {
    throw new MvccError('InvalidCommand', `compacted revision ${header.compacted} is not between 0 and the revision ${header.revision}`);
  }
  return encodeSnapshot(
    header,
    (async function* () {
      const last = new Map<string, LastChange>();
      let revision = 0;
      let seq = 0;
      for await (const chunk of changes) {
        const records: (readonly [string, Buffer])[] = [];
        for (const c of chunk) {
          const key = c.type === 'put' ? c.kv.key : c.key;
          const at = c.type === 'put' ? c.kv.modRevision : c.revision;
          const bad = validateKey(key);
          if (bad !== undefined) throw new MvccError('InvalidKey', `${JSON.stringify(key)}: ${bad}`);
          if (!(Number.isSafeInteger(at) && at >= Math.max(1, revision) && at <= header.revision)) {
            throw new MvccError('InvalidCommand', `${JSON.stringify(key)}: revision ${at} after revision ${revision} (store at ${header.revision})`);
          }
          if (at !== revision) seq = 0;
          revision = at;
          if (seq > 0xffff) throw new MvccError('InvalidCommand', `revision ${at} changes more than ${0xffff + 1} keys`);
          const prev = last.get(key);
          if (prev?.revision === at) throw new MvccError('InvalidCommand', `${JSON.stringify(key)} changes twice in revision ${at}`);
          if (prev?.current)
            throw new MvccError(
              'InvalidCommand',
              `${JSON.stringify(key)}: the version of revision ${prev.revision} is marked current, but it changes at ${at}`,
            );
          const prevRevision = prev?.put ? prev.revision : 0;
          if (c.type === 'put') {
            const kv = c.kv;
            if (!(kv.createRevision >= 1 && kv.createRevision <= at && Number.isSafeInteger(kv.version) && kv.version >= 1)) {
              throw new MvccError(
                'InvalidCommand',
                `${JSON.stringify(key)}: revisions out of order (create ${kv.createRevision}, mod ${at}, version ${kv.version})`,
              );
            }
            records.push(c.current ? [LATEST + key, encodeLatest(kv)] : [historyKey(key, at), encodeHistory(kv, false)]);
            records.push([EVENTS + hex(at) + hex(seq++, 4), encodeEventRef(key, 'put', prevRevision)]);
            last.set(key, { revision: at, createRevision: kv.createRevision, put: true, current: c.current });
          } else {
            const tomb: KeyValue = { key, value: new Uint8Array(0), createRevision: prev?.put ? prev.createRevision : 0, modRevision: at, version: 0 };
            records.push([historyKey(key, at), encodeHistory(tomb, true)]);
            records.push([EVENTS + hex(at) + hex(seq++, 4), encodeEventRef(key, 'delete', prevRevision)]);
            last.set(key, { revision: at, createRevision: 0, put: false, current: false });
          }
        }
        yield records;
      }
      for (const [key, l] of last) {
        if (l.put && !l.current)
          throw new MvccError('InvalidCommand', `${JSON.stringify(key)}: its last version (revision ${l.revision}) is not marked current`);
      }
    })(),
  );
}

/**
 * Pass 2 of a snapshot import (MvccStore.importSnapshotFrom): replaces every record of the
 * database with the snapshot's, in bounded batches written by `write` without fsync between a
 * synced marker (m:importing = `importing`, the snapshot's applied index) and a synced last batch
 * that writes the counters and removes the marker, once flushToDisk has made the clear and every
 * batch before it durable. Returns the snapshot's counters and, when
 * `trackLive`, the keys of its latest keyspace.
 */
export async function writeSnapshotRecords(
  db: Db,
  source: SnapshotSource,
  importing: number,
  write: (ops: BatchOp[], sync: boolean) => Promise<void>,
  trackLive: boolean,
): Promise<{ header: SnapshotHeader; liveKeys: Set<string> | undefined }> {
  await write([{ type: 'put', key: META_IMPORTING, value: Buffer.from(String(importing)) }], true);
  await clearExcept(db, META_IMPORTING);
  const liveKeys = trackLive ? new Set<string>() : undefined;
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
    return write(batch, false);
  });
  // The clear and every batch before the last are on disk before it removes the marker.
  if (ops.length > 0) await write(ops.splice(0), false);
  await flushToDisk(db);
  ops.push(
    { type: 'put', key: META_REV, value: Buffer.from(String(header.revision)) },
    { type: 'put', key: META_APPLIED, value: Buffer.from(String(header.applied)) },
    { type: 'put', key: META_SYNCED, value: Buffer.from(String(header.applied)) },
    { type: 'put', key: META_COMPACTED, value: Buffer.from(String(header.compacted)) },
    { type: 'del', key: META_IMPORTING },
  );
  await write(ops, true);
  return { header, liveKeys };
}

/** Streams a store's snapshot to `write` piece by piece; returns its counters and size. */
export type SnapshotExporter = (write: (piece: Buffer) => Promise<void> | void) => Promise<SnapshotHeader & { bytes: number }>;

/** The whole snapshot `exportTo` produces, in one buffer (held twice, briefly). */
export async function exportToMemory(exportTo: SnapshotExporter): Promise<Uint8Array> {
  const pieces: Buffer[] = [];
  const { bytes } = await exportTo((piece) => void pieces.push(piece));
  const out = new Uint8Array(bytes);
  let at = 0;
  for (const piece of pieces) {
    out.set(piece, at);
    at += piece.length;
  }
  return out;
}

/**
 * Writes the snapshot `exportTo` produces to `file` (created or truncated, mode 0o600) piece by
 * piece and fsyncs it; on failure the partial file is removed. The test-only disk fault switch
 * (@app/level) may fail or slow these writes.
 */
export async function exportToFile(file: string, exportTo: SnapshotExporter): Promise<{ revision: number; appliedIndex: number; bytes: number }> {
  const fh = await openFile(file, 'w', 0o600);
  let exported: SnapshotHeader & { bytes: number };
  try {
    try {
      // The mode applies to a new file only; an existing one keeps its own when truncated.
      await fh.chmod(0o600);
      exported = await exportTo(async (piece) => {
        await diskFaultBefore(file, false);
        await writeFully(fh, piece);
      });
      await diskFaultBefore(file, true);
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
 * Streams the snapshot of the data `take` captures (a LevelDB snapshot and the counters that
 * describe it, taken in the store's apply queue) to `write`, waiting for each write before
 * encoding the next piece. Returns the snapshot's counters and its size.
 */
export async function exportSnapshotPieces(
  db: Db,
  take: () => Promise<{ snap: Snapshot; header: SnapshotHeader }>,
  write: (piece: Buffer) => Promise<void> | void,
): Promise<SnapshotHeader & { bytes: number }> {
  const { snap, header } = await take();
  let bytes = 0;
  try {
    for await (const piece of snapshotPieces(db, snap, header)) {
      await write(piece);
      bytes += piece.length;
    }
  } finally {
    await snap.close();
  }
  return { ...header, bytes };
}
