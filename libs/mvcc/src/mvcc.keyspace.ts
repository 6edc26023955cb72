/**
 * The store's LevelDB keyspaces and record formats (docs/storage.md "Key layout"):
 *   m:rev, m:applied, m:compacted     counters (decimal strings)
 *   m:importing                       present while a snapshot import rewrites the database
 *   m:synced                          applied index of the last synced write (decimal)
 *   m:b:<first index:16 hex>          mark of an unsynced batch: the last index it applied
 *   k:<key>                           latest live state: one get per current read
 *   h:<key>\0<rev:16 hex>             every superseded version (or tombstone) of a key
 *   e:<rev:16 hex><seq:4 hex>         the event log in revision order: watch replay
 */
import { crc32 } from 'node:zlib';
import { ClassicLevel } from 'classic-level';
import { BinReader, BinWriter, CodecError } from './mvcc.codec.js';
import { KeyIndex } from './mvcc.key-index.js';
import { MvccError, type KeyValue, type MvccEvent } from './mvcc.types.js';

/** The store's database: UTF-8 keys, binary values. */
export type Db = ClassicLevel<string, Buffer>;
/** A LevelDB snapshot of the store's database. */
export type Snapshot = ReturnType<Db['snapshot']>;
/** One write of a LevelDB batch. */
export type BatchOp = { type: 'put'; key: string; value: Buffer } | { type: 'del'; key: string };

/** Counter keys: current revision, applied log index, compacted revision. */
export const META_REV = 'm:rev';
/** See META_REV. */
export const META_APPLIED = 'm:applied';
/** See META_REV. */
export const META_COMPACTED = 'm:compacted';
/** Written (synced) before a snapshot import touches the data, deleted by its last batch. */
export const META_IMPORTING = 'm:importing';
/** Applied index of the store's last synced write: every batch up to it is on disk. */
export const META_SYNCED = 'm:synced';
/**
 * Prefix of the batch marks. Every batch written without sync carries one, keyed by the first
 * index after the applied index before it, holding the applied index after it: the marks
 * after META_SYNCED must then follow each other without a gap (checkBatchChain).
 */
export const BATCH_MARK = 'm:b:';
/** Prefix of the latest keyspace (current versions). */
export const LATEST = 'k:';
/** Prefix of the history keyspace (superseded versions and tombstones). */
export const HISTORY = 'h:';
/** Prefix of the event log. */
export const EVENTS = 'e:';
/** Bytes of a latest record's metadata: createRevision, modRevision, version (float64 each). */
export const HEADER = 24;

/** Fixed-width hex so that LevelDB's bytewise order is numeric order. */
export function hex(n: number, width = 16): string {
  return n.toString(16).padStart(width, '0');
}

/** Smallest string greater than every string starting with `prefix` (empty prefix: everything). */
export function prefixEnd(prefix: string): string {
  if (prefix.length === 0) return '\u{10FFFF}';
  const last = prefix.charCodeAt(prefix.length - 1);
  return prefix.slice(0, -1) + String.fromCharCode(last + 1);
}

/**
 * Record envelope of the latest and history records: a marker byte, the CRC32 (node:zlib) of
 * everything after the CRC, then the metadata header and the value. LevelDB does not check its
 * block checksums on reads (classic-level leaves ReadOptions.verify_checksums off) and, without
 * paranoid checks, drops a damaged write-ahead-log record silently, so a flipped byte in a value
 * could otherwise be served as a different value (docs/disk-faults.md "Corruption"). A record
 * of the earlier, unsealed format starts with a put/tombstone flag (0 or 1) or with the top
 * byte of a non-negative float64 below 2^53 (0x00 or 0x3F..0x43); the markers are chosen so
 * that neither they nor any one-bit flip of them is such a byte, so both formats are read
 * (only new writes are sealed) and a flipped marker is never taken for an unsealed record.
 */
const SEALED_LATEST = 0xe5;
const SEALED_PUT = 0xe6;
const SEALED_TOMBSTONE = 0xd9;
/** Marker + CRC32. */
const SEAL = 5;

/** Latest record: envelope (marker, CRC32), metadata header, then the value. */
export function encodeLatest(kv: KeyValue): Buffer {
  return sealed(SEALED_LATEST, kv);
}

function sealed(marker: number, kv: KeyValue): Buffer {
  const b = Buffer.allocUnsafe(SEAL + HEADER + kv.value.length);
  b[0] = marker;
  b.writeDoubleBE(kv.createRevision, SEAL);
  b.writeDoubleBE(kv.modRevision, SEAL + 8);
  b.writeDoubleBE(kv.version, SEAL + 16);
  b.set(kv.value, SEAL + HEADER);
  b.writeUInt32BE(checksum(b), 1);
  return b;
}

/** The header and value of a sealed record, after checking its CRC32 (MvccError('Corrupt')). */
function unseal(what: string, b: Buffer): Buffer {
  if (b.length < SEAL + HEADER) throw new MvccError('Corrupt', `${what} is truncated`);
  const body = b.subarray(SEAL);
  if (checksum(b) !== b.readUInt32BE(1)) throw new MvccError('Corrupt', `checksum mismatch in ${what}`);
  return body;
}

/**
 * CRC32 of what follows a sealed record's CRC field (one native call per record). The marker is
 * not covered: no marker is a one-bit flip of another, and a flipped marker is no valid first
 * byte of any record, so it is refused before the CRC matters.
 */
function checksum(b: Buffer): number {
  return crc32(b.subarray(SEAL)) >>> 0;
}

/** Header + value (no envelope) -> KeyValue; `what` names the record in errors. */
function readHeader(key: string, what: string, b: Buffer, checkNumbers: boolean): KeyValue {
  if (b.length < HEADER) throw new MvccError('Corrupt', `${what} is truncated`);
  const kv = { key, createRevision: b.readDoubleBE(0), modRevision: b.readDoubleBE(8), version: b.readDoubleBE(16), value: new Uint8Array(b.subarray(HEADER)) };
  // An unsealed record has no checksum; at least its numbers must be counters.
  if (checkNumbers && !(isCounter(kv.createRevision) && isCounter(kv.modRevision) && isCounter(kv.version)))
    throw new MvccError('Corrupt', `${what} has invalid metadata`);
  return kv;
}

function isCounter(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 0;
}

/** Decodes encodeLatest output (or an unsealed record); a damaged record is MvccError('Corrupt'). */
export function decodeLatest(key: string, b: Buffer): KeyValue {
  const what = `current record of ${key}`;
  if (b.length > 0 && b[0] === SEALED_LATEST) return readHeader(key, what, unseal(what, b), false);
  return readHeader(key, what, b, true);
}

/** History record: envelope whose marker says put or tombstone, metadata header, value. */
export function encodeHistory(kv: KeyValue, tombstone: boolean): Buffer {
  return sealed(tombstone ? SEALED_TOMBSTONE : SEALED_PUT, kv);
}

/** True when a history record (either format) is a tombstone, without checking it. */
export function isTombstone(b: Buffer): boolean {
  return b[0] === 0 || b[0] === SEALED_TOMBSTONE;
}

/** A history record's version, tombstones included; MvccError('Corrupt') when damaged. */
function readHistory(key: string, b: Buffer): { kv: KeyValue; tombstone: boolean } {
  const what = `history record of ${key}`;
  const m = b[0];
  if (m === SEALED_PUT || m === SEALED_TOMBSTONE) return { kv: readHeader(key, what, unseal(what, b), false), tombstone: m === SEALED_TOMBSTONE };
  if (b.length < 1 + HEADER || (m !== 0 && m !== 1)) throw new MvccError('Corrupt', `${what} is truncated or damaged`);
  return { kv: readHeader(key, what, b.subarray(1), true), tombstone: m === 0 };
}

/** Decodes encodeHistory output: undefined for a tombstone. */
export function decodeHistory(key: string, b: Buffer): KeyValue | undefined {
  const { kv, tombstone } = readHistory(key, b);
  return tombstone ? undefined : kv;
}

/** Reads a version of the older self-contained event format (metadata, then the value). */
export function readKv(r: BinReader, key: string): KeyValue {
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
export function encodeEventRef(key: string, type: 'put' | 'delete', prevRevision: number): Buffer {
  return new BinWriter(24 + 3 * key.length)
    .str(key)
    .u8(type === 'put' ? 3 : 4)
    .num(prevRevision)
    .finish();
}

/** An event record whose values are still to be read from the history keyspace. */
export interface EventRef {
  readonly key: string;
  readonly type: 'put' | 'delete';
  readonly revision: number;
  readonly prevRevision: number;
}

/** Decodes an event record; returns undefined (cheaply) when `keep` rejects its key. */
export function decodeEvent(b: Buffer, revision: number, keep: (key: string) => boolean): MvccEvent | EventRef | undefined {
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

/** Key of `key`'s version written at `revision` in the history keyspace. */
export function historyKey(key: string, revision: number): string {
  return `${HISTORY}${key}\u0000${hex(revision)}`;
}

/** A history record with its metadata, tombstones included (a delete event's value is one). */
export function decodeHistoryRecord(key: string, revision: number, b: Buffer | undefined): KeyValue {
  if (b === undefined) throw new MvccError('Corrupt', `history record of ${key} at revision ${revision} is missing`);
  return readHistory(key, b).kv;
}

/** The current version of `key` as the value of the event at `revision`. */
export function currentRecord(key: string, revision: number, b: Buffer | undefined): KeyValue {
  const kv = b === undefined ? undefined : decodeLatest(key, b);
  if (!kv || kv.modRevision !== revision)
    throw new MvccError('Corrupt', `version of ${key} at revision ${revision} is in neither history nor the current keyspace`);
  return kv;
}

/** Deletes every record but `keep` (LevelDB's clear deletes in small batches: bounded memory). */
export async function clearExcept(db: Db, keep: string): Promise<void> {
  await db.clear({ lt: keep });
  await db.clear({ gt: keep });
}

/**
 * Closes `db` and opens it again, which replays its log from disk, then checks that the disk
 * holds applied index `applied`. After a failed write LevelDB refuses writes until reopened, and
 * the failure may have dropped earlier unsynced batches from its log file (its buffer is
 * discarded): a store whose disk lost batches it reported applied must not go on
 * (MvccError('Corrupt')); its node restarts from the Raft log, which holds those entries.
 */
export async function reopenAt(db: Db, applied: number): Promise<void> {
  if (db.status === 'open') await db.close();
  await db.open();
  const onDisk = Number((await db.get(META_APPLIED))?.toString() ?? 0);
  if (onDisk !== applied) throw new MvccError('Corrupt', `store reopened after a failed write holds applied index ${onDisk}, not ${applied}`);
}

/** A key range beyond every keyspace of the store (all of them start with ASCII letters). */
const BEYOND_ALL_KEYS = '\u00ff';

/**
 * Waits until everything written to `db` before the call is on disk, whichever LevelDB log file
 * holds it. A synced write flushes only the log file LevelDB is writing at the time; batches in
 * a file it switched away from (its memtable was full) are durable only once that memtable is
 * flushed to a table file. A manual compaction first switches the memtable and waits for every
 * memtable to be flushed (table files and manifest are synced); over a key range that holds no
 * key it compacts nothing else. It reports no error: a failed flush fails the next write.
 */
export async function flushToDisk(db: Db): Promise<void> {
  await db.compactRange(BEYOND_ALL_KEYS, BEYOND_ALL_KEYS);
}

/**
 * Compacts every key of `db` down to LevelDB's last level: records deleted or overwritten
 * (history dropped by compaction, deleted keys, Raft-applied batch marks) leave the table
 * files, and the space they held is given back (etcd's defragment). Reads and writes go on
 * meanwhile; the call ends when the compaction does.
 */
export async function compactAll(db: Db): Promise<void> {
  await db.compactRange('\u0000', BEYOND_ALL_KEYS);
}

/**
 * Checks that no unsynced batch between the last synced write and `applied` was lost while a
 * later one was kept. An OS crash may drop the store's latest unsynced batches, which the Raft
 * log replays; but LevelDB does not promise that only a suffix goes (it switches log files
 * without syncing the old one, and its recovery skips a damaged record), and a lost batch
 * followed by a kept one would leave `m:applied` covering entries the store does not hold.
 * Throws MvccError('Corrupt') naming the first missing entry when a mark follows a missing
 * batch. Returns true when the marks do not reach `applied` and none follows them (or there is
 * no `m:synced`): those batches were written by a version that leaves no marks (a store from
 * before marks, or one a downgraded node wrote to), and there is nothing to check them
 * against; the caller records a new `m:synced` once they are on disk.
 */
export async function checkBatchChain(db: Db, applied: number): Promise<boolean> {
  const raw = await db.get(META_SYNCED);
  if (raw === undefined) return true;
  const synced = Number(raw.toString());
  let expected = synced + 1;
  for await (const [key, value] of db.iterator({ gt: BATCH_MARK + hex(synced), lt: prefixEnd(BATCH_MARK) })) {
    const first = parseInt(key.slice(BATCH_MARK.length), 16);
    if (first !== expected) {
      throw new MvccError(
        'Corrupt',
        `the store holds entries applied through index ${applied} but lost the batch of entries from ${expected} (an unsynced write lost in a system crash): ` +
          'this member must be rebuilt: remove it from the cluster, clear its data directory and add it again (docs/cluster.md "Durability")',
      );
    }
    expected = Number(value.toString()) + 1;
  }
  return expected - 1 < applied;
}

/** Look-ahead over a LevelDB iterator, read in chunks. */
export class Cursor {
  private buf: [string, Buffer][] = [];
  private pos = 0;
  private done = false;

  /**
   * Reads `first` entries at first, then twice as many each time up to 1000: a small page reads
   * little beyond what it returns, a long walk few times.
   */
  constructor(
    private readonly it: { nextv(n: number): Promise<[string, Buffer][]>; close(): Promise<void> },
    private chunk = 1000,
  ) {}

  async peek(): Promise<[string, Buffer] | undefined> {
    if (this.pos >= this.buf.length && !this.done) {
      this.buf = await this.it.nextv(this.chunk);
      this.chunk = Math.min(1000, this.chunk * 2);
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

/** Reads the names of all current keys (the `k:` keyspace, keys only) into a key index. */
export async function readLiveKeys(db: Db): Promise<KeyIndex> {
  const keys: string[] = [];
  const it = db.keys({ gte: LATEST, lt: prefixEnd(LATEST) });
  try {
    for (let chunk = await it.nextv(4096); chunk.length > 0; chunk = await it.nextv(4096)) {
      for (const k of chunk) keys.push(k.slice(LATEST.length));
    }
  } finally {
    await it.close();
  }
  return KeyIndex.from(keys);
}
