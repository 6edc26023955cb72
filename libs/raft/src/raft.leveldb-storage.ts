import { unlink } from 'node:fs/promises';
import { relative, resolve } from 'node:path';
import { crc32 } from 'node:zlib';
import { ClassicLevel } from 'classic-level';
import { type RawBatchOp, writeBatch, writeUntilSpace } from '@app/level';
import { MemoryStorage, bootstrapSnapshot } from './raft.storage.js';
import type { RaftNodeStorage } from './raft.storage-port.js';
import { type ConfState, type Entry, type EntryType, type HardState, type Snapshot, EMPTY_DATA, RaftError } from './raft.types.js';

/**
 * Durable Raft storage on LevelDB (classic-level). Record layout, one key per record:
 *   `e<16 hex digits of index>` -> entry      [crc32:4][version:1][type:1][term:f64][index:f64][data]
 *   `h`                         -> hard state  [crc32:4][version:1][json {term, vote, commit}]
 *   `s`                         -> snapshot    [crc32:4][version:1][metaLen:u32][json metadata][data]
 *   `r`                         -> removal     [crc32:4][version:1][json {index}]: this node
 *                                  applied its own removal at that index (absent otherwise)
 * A snapshot whose data is in a file (Snapshot.file) stores the file's path in the metadata
 * JSON (`file`) and no data; the file was made durable before it was handed over, and it is
 * deleted once a later record replaces this one.
 * The CRC32 covers everything after it; a mismatch on open is reported as RaftError
 * ('ErrCorrupt') naming the key, never silently applied. Every write that the Raft contract
 * requires to be durable goes out in one LevelDB batch with `{ sync: true }` (fsync) before the
 * returned promise resolves.
 *
 * A batch refused for lack of space is written again, whole, after reopening the database,
 * until it goes through (writeUntilSpace, docs/disk-faults.md): the in-memory mirror changes
 * only after a batch resolved, so the retry is the same write. Any other failure is thrown.
 *
 * Reads are served from an in-memory mirror of the retained log (as etcd pairs its WAL with a
 * MemoryStorage): the core's storage port is synchronous, and compaction bounds the mirror.
 */
export class LevelDbRaftStorage implements RaftNodeStorage {
  /** Range deletions of compacted entries, in order (see createSnapshot). */
  private clearing: Promise<void> = Promise.resolve();
  private closing = false;
  /** The hard state in memory carries a commit index no batch has written yet (see save). */
  private hardStateUnwritten = false;
  /** The `r` record: the index at which this node applied its own removal. */
  private removal: number | undefined;

  private constructor(
    private readonly db: ClassicLevel<string, Uint8Array>,
    private readonly mem: MemoryStorage,
    /** Whether writes fsync; tests may turn it off, production must not. */
    private readonly sync: boolean,
    /** The storage's directory: snapshot file paths are recorded relative to it. */
    private readonly dir: string,
  ) {}

  /**
   * Opens (creating when missing) the storage in `dir` and loads it, verifying every checksum.
   * Throws RaftError('ErrCorrupt') on a damaged record or a gap in the log.
   */
  static async open(dir: string, opts: { sync?: boolean } = {}): Promise<LevelDbRaftStorage> {
    // A 32 MiB memtable (LevelDB's default is 4 MiB): fewer, larger level-0 flushes and less
    // background merging for a log whose entries are all deleted again at the next compaction.
    const db = new ClassicLevel<string, Uint8Array>(dir, { keyEncoding: 'utf8', valueEncoding: 'view', writeBufferSize: 32 * 1024 * 1024 });
    await db.open();
    try {
      return await LevelDbRaftStorage.load(db, dir, opts);
    } catch (e) {
      await db.close();
      // The operator needs the directory as well as the record to act on.
      if (e instanceof RaftError && e.code === 'ErrCorrupt') throw new RaftError('ErrCorrupt', `raft log in ${dir}: ${e.message.replace(/^ErrCorrupt: /, '')}`);
      throw e;
    }
  }

  /** Reads and checks every record of an open database into a new storage. */
  private static async load(db: ClassicLevel<string, Uint8Array>, dir: string, opts: { sync?: boolean }): Promise<LevelDbRaftStorage> {
    const mem = new MemoryStorage();
    const snapRaw = await db.get('s');
    if (snapRaw !== undefined) mem.applySnapshot(decodeSnapshot(snapRaw, dir));
    const hardRaw = await db.get('h');
    const first = mem.firstIndex();
    const kept: Entry[] = [];
    let leftovers = false;
    for await (const [key, value] of db.iterator({ gt: 'e', lt: 'f' })) {
      const e = decodeEntry(key, value);
      // Entries covered by the snapshot are leftovers of a compaction interrupted by a crash
      // (see createSnapshot): checked, not used, removed below.
      if (e.index < first) {
        leftovers = true;
        continue;
      }
      const expected = kept.length === 0 ? first : kept[kept.length - 1]!.index + 1;
      if (e.index !== expected) throw new RaftError('ErrCorrupt', `log gap: found ${key}, expected index ${expected}`);
      kept.push(e);
    }
    mem.append(kept);
    if (leftovers) await db.clear({ gt: 'e', lt: entryKey(first) });
    if (hardRaw !== undefined) {
      const hs = decodeHardState(hardRaw);
      // The hard state is written in the batch of the entries it commits: a commit index past
      // the log's end means batches were lost (LevelDB drops a damaged log record silently).
      if (hs.commit > mem.lastIndex())
        throw new RaftError('ErrCorrupt', `hard state commits index ${hs.commit} but the log ends at index ${mem.lastIndex()}: records are missing`);
      mem.setHardState(hs);
    }
    const storage = new LevelDbRaftStorage(db, mem, opts.sync ?? true, dir);
    const removalRaw = await db.get('r');
    if (removalRaw !== undefined) storage.removal = decodeRemoval(removalRaw);
    return storage;
  }

  /** One batch, written again after a reopen while the disk is full (see the class comment). */
  private write(ops: RawBatchOp[], sync: boolean): Promise<void> {
    return writeUntilSpace(() => writeBatch(this.db, ops, sync), {
      closing: () => this.closing,
      reopen: async () => {
        // LevelDB fails every write after a failed synced one until reopened; the reopen
        // replays its log, which holds every batch that resolved (all synced) and maybe the
        // failed one, which the retry writes again with the same values.
        await this.clearing;
        if (this.db.status === 'open') await this.db.close();
        await this.db.open();
      },
    });
  }

  /** True when nothing was ever written (a brand-new node). */
  isEmpty(): boolean {
    return this.mem.snapshot().metadata.index === 0 && this.mem.lastIndex() === 0 && this.mem.hardState().term === 0;
  }

  /** Writes the founding configuration of a new cluster (see bootstrapSnapshot). */
  async bootstrap(voters: readonly number[]): Promise<void> {
    await this.save({ snapshot: bootstrapSnapshot(voters), hardState: { term: 1, vote: 0, commit: 1 }, entries: [] });
  }

  initialState(): { hardState: HardState; confState: ConfState } {
    return this.mem.initialState();
  }
  entries(lo: number, hi: number, maxBytes: number): Entry[] {
    return this.mem.entries(lo, hi, maxBytes);
  }
  term(i: number): number {
    return this.mem.term(i);
  }
  firstIndex(): number {
    return this.mem.firstIndex();
  }
  lastIndex(): number {
    return this.mem.lastIndex();
  }
  snapshot(): Snapshot {
    return this.mem.snapshot();
  }
  hardState(): HardState {
    return this.mem.hardState();
  }

  /**
   * Persists the durable part of a Ready in ONE synced batch: snapshot (dropping the old log),
   * entries (deleting any conflicting suffix beyond the new last entry) and hard state.
   * Resolves only after fsync; the caller may then send the Ready's messages.
   *
   * A Ready that changes only the commit index (`mustSync` false, no entries or snapshot) is
   * not written at all: the commit index is recoverable from the quorum (etcd does not fsync
   * it either), so it is kept in memory and goes to disk with the next batch that is written
   * (every batch carries the hard state as it then is) or at close(). A node restarted before
   * that starts from an older commit index and learns the newer one from the leader; entries
   * its state machine already holds are not applied twice (RaftNode). This saves a LevelDB
   * write, a trip to the thread pool and its wake-ups on every member for every commit that
   * arrives alone (one per write at low load).
   */
  async save(rd: { hardState?: HardState; entries: readonly Entry[]; snapshot?: Snapshot }, mustSync = true): Promise<void> {
    if (!mustSync && !rd.snapshot && rd.entries.length === 0) {
      if (rd.hardState) {
        const cur = this.mem.hardState();
        if (rd.hardState.term === cur.term && rd.hardState.vote === cur.vote) {
          this.mem.setHardState(rd.hardState);
          this.hardStateUnwritten = true;
          return;
        }
      }
    }
    const ops: RawBatchOp[] = [];
    let stale: { gte: string; lte: string } | undefined;
    if (rd.snapshot) {
      // The old log goes. Entries after the snapshot's index are deleted in this batch: read
      // back after a crash they would pass for the log after it. Those up to its index fall
      // below the new log and are removed by a range clear on LevelDB's thread pool once this
      // batch is durable (a whole log of deletes built here would hold the event loop; found
      // at open after a crash, they are skipped and removed, as after createSnapshot).
      const si = rd.snapshot.metadata.index;
      const logFirst = this.mem.firstIndex();
      const logLast = this.mem.lastIndex();
      for (let i = Math.max(logFirst, si + 1); i <= logLast; i++) ops.push({ type: 'del', key: entryKey(i) });
      if (logFirst <= Math.min(logLast, si)) stale = { gte: entryKey(logFirst), lte: entryKey(Math.min(logLast, si)) };
      ops.push({ type: 'put', key: 's', value: encodeSnapshot(rd.snapshot, this.dir) });
    }
    const oldLast = rd.snapshot ? rd.snapshot.metadata.index : this.mem.lastIndex();
    const first = rd.snapshot ? rd.snapshot.metadata.index + 1 : this.mem.firstIndex();
    if (rd.entries.length > 0) {
      for (const e of rd.entries) if (e.index >= first) ops.push({ type: 'put', key: entryKey(e.index), value: encodeEntry(e) });
      const newLast = rd.entries[rd.entries.length - 1]!.index;
      for (let i = newLast + 1; i <= oldLast; i++) ops.push({ type: 'del', key: entryKey(i) });
    }
    const hardState = rd.hardState ?? (this.hardStateUnwritten ? this.mem.hardState() : undefined);
    if (hardState) ops.push({ type: 'put', key: 'h', value: encodeHardState(hardState) });
    if (ops.length === 0) return;
    const replaced = rd.snapshot ? this.mem.snapshot() : undefined;
    await this.write(ops, this.sync && mustSync);
    if (hardState) this.hardStateUnwritten = false;
    if (stale) {
      const range = stale;
      this.clearing = this.clearing.then(() => this.db.clear(range)).catch(() => undefined);
    }
    if (rd.snapshot) this.mem.applySnapshot(rd.snapshot);
    this.mem.append(rd.entries);
    if (rd.hardState) this.mem.setHardState(rd.hardState);
    if (replaced) await removeSnapshotFile(replaced, rd.snapshot);
  }

  /**
   * Records a state-machine snapshot at applied index i and discards log entries up to
   * `compactTo` (<= i); a few entries are usually kept so slightly lagging followers can catch
   * up from the log rather than by snapshot.
   */
  async createSnapshot(i: number, confState: ConfState, data: Uint8Array, compactTo: number = i): Promise<Snapshot> {
    if (i <= this.mem.snapshot().metadata.index)
      throw new RaftError('ErrSnapOutOfDate', `snapshot at ${i} not newer than ${this.mem.snapshot().metadata.index}`);
    const snap: Snapshot = { metadata: { index: i, term: this.mem.term(i), confState }, data };
    const upTo = Math.min(compactTo, i);
    const from = this.mem.firstIndex();
    const replaced = this.mem.snapshot();
    await this.write([{ type: 'put', key: 's', value: encodeSnapshot(snap, this.dir) }], this.sync);
    this.mem.createSnapshot(i, confState, data);
    this.mem.compact(upTo);
    await removeSnapshotFile(replaced, snap);
    // The compacted entries are deleted by a range clear on LevelDB's side rather than a batch
    // of one delete per entry built here: the batch blocked the event loop 10-25 ms per 10,000
    // entries on every node. Once the snapshot record is durable nothing reads them any more:
    // entries below the log's first index that a crash leaves behind are skipped and removed
    // at open.
    if (upTo >= from) {
      this.clearing = this.clearing.then(() => this.db.clear({ gte: entryKey(from), lte: entryKey(upTo) })).catch(() => undefined);
    }
    return snap;
  }

  /**
   * Rewrites the stored snapshot as metadata only, at the same index, and deletes its data (or
   * its file). For a durable state machine that has installed the snapshot: the state machine
   * is then the snapshot (as after createSnapshot with no data), and a received snapshot of
   * the whole store is not kept twice on disk, nor in memory, until the next createSnapshot.
   */
  async dropSnapshotData(): Promise<void> {
    const current = this.mem.snapshot();
    if (current.data.length === 0 && current.file === undefined) return;
    await this.write([{ type: 'put', key: 's', value: encodeSnapshot({ metadata: current.metadata, data: EMPTY_DATA }, this.dir) }], this.sync);
    this.mem.dropSnapshotData();
    await removeSnapshotFile(current, undefined);
  }

  removedAt(): number | undefined {
    return this.removal;
  }

  async setRemovedAt(index: number | undefined): Promise<void> {
    if (index === this.removal) return;
    await this.write([index === undefined ? { type: 'del', key: 'r' } : { type: 'put', key: 'r', value: encodeRemoval(index) }], this.sync);
    this.removal = index;
  }

  /** Resolves when the deletions of compacted entries started so far are done. */
  compacted(): Promise<void> {
    return this.clearing;
  }

  async close(): Promise<void> {
    // A commit index kept in memory (see save) is written on the way out, so a clean restart
    // resumes from it; a failed write loses nothing that the quorum does not hold.
    if (this.hardStateUnwritten && this.db.status === 'open') {
      await writeBatch(this.db, [{ type: 'put', key: 'h', value: encodeHardState(this.mem.hardState()) }], false).catch(() => undefined);
      this.hardStateUnwritten = false;
    }
    this.closing = true;
    await this.clearing;
    await this.db.close();
  }
}

const VERSION = 1;
const enc = new TextEncoder();
const dec = new TextDecoder();

/** Fixed-width key so LevelDB's byte order is index order. */
function entryKey(i: number): string {
  return 'e' + i.toString(16).padStart(16, '0');
}

function seal(body: Uint8Array): Uint8Array {
  const out = new Uint8Array(4 + body.length);
  new DataView(out.buffer).setUint32(0, crc32(body) >>> 0);
  out.set(body, 4);
  return out;
}

/** A record's key, with the log index it holds for an entry (errors name both). */
function recordName(key: string): string {
  return key.startsWith('e') ? `record ${key} (log entry ${parseInt(key.slice(1), 16)})` : `record ${key}`;
}

function unseal(key: string, raw: Uint8Array): Uint8Array {
  if (raw.length < 5) throw new RaftError('ErrCorrupt', `${recordName(key)} is truncated`);
  const body = raw.subarray(4);
  const want = new DataView(raw.buffer, raw.byteOffset, raw.byteLength).getUint32(0);
  if (crc32(body) >>> 0 !== want) throw new RaftError('ErrCorrupt', `checksum mismatch in ${recordName(key)}`);
  if (body[0] !== VERSION) throw new RaftError('ErrCorrupt', `${recordName(key)} has unknown version ${body[0]}`);
  return body;
}

/** An entry's record, built in one buffer (seal's layout: the CRC32, then the body). */
function encodeEntry(e: Entry): Uint8Array {
  const out = Buffer.allocUnsafe(4 + 18 + e.data.length);
  out[4] = VERSION;
  out[5] = e.type === 'conf' ? 1 : 0;
  out.writeDoubleBE(e.term, 6);
  out.writeDoubleBE(e.index, 14);
  out.set(e.data, 22);
  out.writeUInt32BE(crc32(out.subarray(4)) >>> 0, 0);
  return out;
}

function decodeEntry(key: string, raw: Uint8Array): Entry {
  const body = unseal(key, raw);
  if (body.length < 18) throw new RaftError('ErrCorrupt', `entry ${key} is truncated`);
  const v = new DataView(body.buffer, body.byteOffset, body.byteLength);
  const type: EntryType = body[1] === 1 ? 'conf' : 'normal';
  const index = v.getFloat64(10);
  if (entryKey(index) !== key) throw new RaftError('ErrCorrupt', `entry ${key} holds index ${index}`);
  return { term: v.getFloat64(2), index, type, data: body.slice(18) };
}

/** A record whose payload is JSON: `[crc32][version][json]`. */
function sealJson(value: unknown): Uint8Array {
  const json = enc.encode(JSON.stringify(value));
  const body = new Uint8Array(1 + json.length);
  body[0] = VERSION;
  body.set(json, 1);
  return seal(body);
}

/** The JSON of record `key` when `valid` accepts it; ErrCorrupt naming `what` otherwise. */
function unsealJson<T>(key: string, raw: Uint8Array, what: string, valid: (o: Partial<Record<keyof T, unknown>>) => boolean): T {
  const body = unseal(key, raw);
  try {
    const o = JSON.parse(dec.decode(body.subarray(1))) as Partial<Record<keyof T, unknown>> | null;
    if (o !== null && typeof o === 'object' && valid(o)) return o as T;
  } catch {
    /* fall through */
  }
  throw new RaftError('ErrCorrupt', `${what} record is malformed`);
}

function encodeHardState(hs: HardState): Uint8Array {
  return sealJson({ term: hs.term, vote: hs.vote, commit: hs.commit });
}

function decodeHardState(raw: Uint8Array): HardState {
  return unsealJson<HardState>('h', raw, 'hard state', (o) => typeof o.term === 'number' && typeof o.vote === 'number' && typeof o.commit === 'number');
}

function encodeRemoval(index: number): Uint8Array {
  return sealJson({ index });
}

function decodeRemoval(raw: Uint8Array): number {
  return unsealJson<{ index: number }>('r', raw, 'removal', (o) => typeof o.index === 'number' && Number.isSafeInteger(o.index) && o.index > 0).index;
}

/** Deletes the file of a snapshot record that `next` replaced (a missing file is fine). */
async function removeSnapshotFile(old: Snapshot, next: Snapshot | undefined): Promise<void> {
  if (old.file === undefined || old.file === next?.file) return;
  await unlink(old.file).catch(() => undefined);
}

/** `dir`: the storage's directory; a snapshot file is recorded relative to it (the data dir may move). */
function encodeSnapshot(s: Snapshot, dir: string): Uint8Array {
  const { index, term, confState } = s.metadata;
  const meta = enc.encode(JSON.stringify(s.file === undefined ? { index, term, confState } : { index, term, confState, file: relative(dir, s.file) }));
  const body = new Uint8Array(5 + meta.length + s.data.length);
  body[0] = VERSION;
  new DataView(body.buffer).setUint32(1, meta.length);
  body.set(meta, 5);
  body.set(s.data, 5 + meta.length);
  return seal(body);
}

function decodeSnapshot(raw: Uint8Array, dir: string): Snapshot {
  const body = unseal('s', raw);
  const v = new DataView(body.buffer, body.byteOffset, body.byteLength);
  const len = body.length >= 5 ? v.getUint32(1) : -1;
  if (len < 0 || 5 + len > body.length) throw new RaftError('ErrCorrupt', 'snapshot record is truncated');
  try {
    const { file, ...metadata } = JSON.parse(dec.decode(body.subarray(5, 5 + len))) as Snapshot['metadata'] & { file?: unknown };
    if (typeof metadata.index === 'number' && typeof metadata.term === 'number' && Array.isArray(metadata.confState?.voters)) {
      if (typeof file === 'string') return { metadata, data: EMPTY_DATA, file: resolve(dir, file) };
      return { metadata, data: body.slice(5 + len) };
    }
  } catch {
    /* fall through */
  }
  throw new RaftError('ErrCorrupt', 'snapshot metadata is malformed');
}
