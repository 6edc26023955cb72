/**
 * The MVCC state machine on LevelDB (classic-level). Layout and rules: docs/storage.md.
 *
 * Keyspaces and record formats: mvcc.keyspace.ts. Snapshot stream: mvcc.snapshot-format.ts.
 * Compaction: mvcc.compactor.ts. Range reads: mvcc.range-reader.ts.
 *
 * Every mutation (apply, compaction, snapshot import) runs in one serialized queue and writes one
 * LevelDB batch; the in-memory counters change only after that batch resolved, so a crash never
 * exposes half of a command and `appliedIndex` always matches the state (DESIGN.md "Storage
 * model": "Applying entry N writes its changes and appliedIndex = N in one LevelDB batch").
 * A snapshot import, too large for one batch, writes many between a synced marker and a synced
 * last batch that removes it; a store opened with the marker present starts empty.
 */
import { ClassicLevel } from 'classic-level';
import { writeBatch, writeUntilSpace } from '@app/level';
import { EventBus, type EventListener } from './event.bus.js';
import { MvccCompactor } from './mvcc.compactor.js';
import { WRITE_BUFFER_BYTES, type MvccStoreOptions } from './mvcc.options.js';
import {
  type BatchOp,
  type Db,
  type Snapshot,
  BATCH_MARK,
  EVENTS,
  LATEST,
  META_APPLIED,
  META_COMPACTED,
  META_IMPORTING,
  META_REV,
  META_SYNCED,
  checkBatchChain,
  clearExcept,
  compactAll,
  decodeLatest,
  encodeEventRef,
  encodeHistory,
  encodeLatest,
  flushToDisk,
  hex,
  historyKey,
  readLiveKeys,
  reopenAt,
} from './mvcc.keyspace.js';
import { KeyIndex } from './mvcc.key-index.js';
import { LatestCache } from './mvcc.latest-cache.js';
import { type RangeOptions, type RangeResult, historyVersionAt, rangeHistory, rangeLatest, readEvents } from './mvcc.range-reader.js';
import type { SnapshotHeader, SnapshotSource } from './mvcc.snapshot-format.js';
import { exportSnapshotPieces, exportToFile, exportToMemory, readSnapshot, writeSnapshotRecords } from './mvcc.snapshot-format.js';
import { RevisionWaiters } from './mvcc.revision-waiters.js';
import { MvccView } from './mvcc.view.js';
import { MvccError, validateCommand, type ApplyEntry, type KeyValue, type MvccEvent, type OpResult, type TxnCommand, type TxnResult } from './mvcc.types.js';

/** Options of a synchronous get whose key is given as bytes (see readLatestNow). */
const BYTES_KEY = { keyEncoding: 'buffer' } as const;

/** What MvccStore.getLatestNow answers while the store cannot be read synchronously. */
export const NOT_NOW: unique symbol = Symbol('not now');

/**
 * A multi-version key-value store whose state changes only by applying numbered commands.
 * Reads may run concurrently with applies and always see whole batches (LevelDB snapshots).
 */
/**
 * Paces a long synchronous loop: due() is true every PACER_STRIDE calls once `sliceMs` have
 * passed since the last pause, and pause() resolves on the next turn of the event loop. A loop
 * of a few hundred steps never pauses and never reads the clock.
 */
class Pacer {
  private calls = 0;
  private since = performance.now();

  constructor(private readonly sliceMs: number) {}

  due(): boolean {
    return ++this.calls % PACER_STRIDE === 0 && performance.now() - this.since >= this.sliceMs;
  }

  async pause(): Promise<void> {
    await new Promise((r) => setImmediate(r));
    this.since = performance.now();
  }
}
/** Steps between clock reads of a Pacer. */
const PACER_STRIDE = 256;
/** MvccStoreOptions.applySliceMs's default. */
const APPLY_SLICE_MS = 10;

export class MvccStore {
  private revision = 0;
  private applied = 0;
  private compacted = 0;
  /** True while a batch is being written: then the snapshot revision must be read from disk. */
  private writing = false;
  /**
   * Read cache of the latest keyspace (current reads are the hot path). Writes update it after
   * their batch is durable (updates and deletes; a create does not add the new key: nothing has
   * read it yet); a read fills it only while no batch is in flight (reads are synchronous, so
   * none lands during one), so it never holds a value older than the store's.
   */
  private readonly latestCache: LatestCache;
  /**
   * Every key that has a current version (etcd keeps its key index in memory the same way),
   * loaded at open and after a snapshot import, updated with each written batch. A key not in
   * it does not exist: a create (the common write: a new name) then needs no LevelDB lookup
   * before it is applied, on every replica, and a read of a missing key answers at once. Kept
   * in key order, it also counts a page's remaining keys (range()). Undefined when disabled
   * (MvccStoreOptions.keyIndex). Costs the keys' strings in memory.
   */
  private liveKeys: KeyIndex | undefined;
  /** Compaction and the purge of compacted history (see MvccCompactor). */
  private readonly compactor: MvccCompactor;
  /**
   * Set while a snapshot import rewrites the database (importSnapshotFrom, pass 2): reads wait
   * for it before touching LevelDB, so none sees a half-written store, and mutations queued
   * behind the import find it resolved. Cleared when the import succeeds. An import that fails
   * midway leaves it rejected: every later read, export and mutation fails with it until an
   * import succeeds (a reopen starts empty instead). Also set while reopenAfterNoSpace runs.
   */
  private importGate: Promise<void> | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  /** Range deletions of batch marks that a synced write made unneeded (see sync). */
  private clearingMarks: Promise<void> = Promise.resolve();
  /** The applied index in `m:synced`: every batch up to it is on disk. */
  private synced = 0;
  private closing = false;
  private closed = false;
  private readonly bus = new EventBus();
  private readonly waiters = new RevisionWaiters();

  private constructor(
    private readonly db: Db,
    cacheMaxEntries: number,
    private readonly applySliceMs: number,
  ) {
    this.latestCache = new LatestCache(cacheMaxEntries);
    this.compactor = new MvccCompactor({
      db,
      currentRevision: () => this.revision,
      compactedRevision: () => this.compacted,
      setCompacted: (revision) => {
        this.compacted = revision;
      },
      paused: () => this.closing || this.importGate !== undefined,
      closing: () => this.closing,
      exclusive: (fn) => this.exclusive(fn),
      writeBatch: (ops, sync) => this.writeBatch(ops, sync),
    });
  }

  /** Purges that failed (retried with the next compaction). */
  get purgeErrors(): number {
    return this.compactor.purgeErrors;
  }

  /** Opens (creating when missing) the store in `dir` and loads its counters into memory. */
  static async open(dir: string, opts: MvccStoreOptions = {}): Promise<MvccStore> {
    const db = opts.db ?? new ClassicLevel<string, Buffer>(dir, { keyEncoding: 'utf8', valueEncoding: 'buffer', writeBufferSize: WRITE_BUFFER_BYTES });
    await db.open();
    const store = new MvccStore(db, opts.cacheMaxEntries ?? LatestCache.DEFAULT_MAX_ENTRIES, opts.applySliceMs ?? APPLY_SLICE_MS);
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
    try {
      if (await checkBatchChain(db, store.applied)) {
        // A new store, or batches written without marks: the chain starts again here.
        await flushToDisk(db);
        await writeBatch(db, [{ type: 'put', key: META_SYNCED, value: Buffer.from(String(store.applied)) }], true);
        store.synced = store.applied;
      } else store.synced = Number((await db.get(META_SYNCED))!.toString());
    } catch (e) {
      await db.close();
      throw e;
    }
    if (opts.keyIndex ?? true) store.liveKeys = await readLiveKeys(db);
    // A purge cut short by a stop left history at or below the compacted revision: finish it.
    store.compactor.schedule();
    return store;
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
    return this.waiters.wait(revision, timeoutMs);
  }

  /** Runs mutations one at a time, in call order; none on a store a failed import left half-written (importGate). */
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

  /** One batch; refused for lack of space, written again once there is space (docs/disk-faults.md). */
  private async writeBatch(ops: BatchOp[], sync: boolean): Promise<void> {
    this.writing = true;
    try {
      await writeUntilSpace(() => writeBatch(this.db, ops, sync), { closing: () => this.closing, reopen: () => this.reopenAfterNoSpace() });
    } finally {
      this.writing = false;
    }
  }

  /**
   * Before a refused batch is retried (docs/disk-faults.md): reopen, checking that no applied
   * batch was lost (reopenAt); reads wait behind the import gate meanwhile.
   */
  private async reopenAfterNoSpace(): Promise<void> {
    const reopen = reopenAt(this.db, this.applied);
    if (this.importGate) return reopen;
    this.importGate = reopen;
    reopen.catch(() => undefined);
    await reopen;
    this.importGate = undefined;
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
    // The current version of every key the batch touches, as it is before the batch (read on
    // this thread: inside the queue no batch is in flight); `overlay` then holds the writes made
    // earlier in this batch.
    const prefetched = new Map<string, KeyValue | undefined>();
    const want = (k: unknown): void => {
      if (typeof k === 'string' && !prefetched.has(k)) prefetched.set(k, this.readLatestNow(k));
    };
    // A batch of many operations (a DeleteRange of a large prefix is one command with an
    // operation per key) gives the event loop a turn now and then while it is read and built,
    // so that heartbeats, peer messages and reads are not held for seconds. Nothing else
    // mutates the store meanwhile (this runs inside the mutation queue), and nothing of the
    // batch is visible before it is written.
    const pacer = new Pacer(this.applySliceMs);
    for (const entry of entries) {
      if (!entry.command || entry.index <= applied) continue;
      for (let c = 0; c <= (entry.more?.length ?? 0); c++) {
        const cmd = c === 0 ? entry.command : entry.more![c - 1]!;
        for (const ops of [cmd.compares, cmd.success, cmd.failure]) {
          for (const op of ops) {
            want(op.key);
            if (pacer.due()) await pacer.pause();
          }
        }
      }
    }
    const latest = (key: string): KeyValue | undefined => {
      const o = overlay.get(key);
      if (o !== undefined) return o ?? undefined;
      if (prefetched.has(key)) return prefetched.get(key);
      return this.readLatestNow(key);
    };

    for (const entry of entries) {
      if (!Number.isSafeInteger(entry.index) || entry.index <= applied) {
        results.push(undefined);
        continue;
      }
      applied = entry.index;
      if (!entry.command) {
        results.push(undefined);
        continue;
      }
      // The entry's own command (c = 0) reports its outcome; the commands packed after it only apply.
      for (let c = 0; c <= (entry.more?.length ?? 0); c++) {
        const cmd = c === 0 ? entry.command : entry.more![c - 1]!;
        const invalid = validateCommand(cmd);
        if (invalid) {
          if (c === 0) results.push({ succeeded: false, revision: rev, results: [], error: invalid });
          continue;
        }
        if (cmd.compact !== undefined) {
          // A replicated compaction: every replica is at the same revision here, so all decide
          // alike. It takes no revision; `succeeded` says whether it moved the compacted revision.
          const moves = cmd.compact > compactTo && cmd.compact <= rev;
          if (moves) compactTo = cmd.compact;
          if (c === 0) results.push({ succeeded: moves, revision: rev, results: [] });
          continue;
        }
        let ok = true;
        for (const c of cmd.compares) {
          const kv = latest(c.key);
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
          if (pacer.due()) await pacer.pause();
          const prev = latest(op.key);
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
        if (c === 0) results.push({ succeeded: ok, revision: rev, results: opResults });
      }
    }
    if (applied === this.applied) return results;
    ops.push({ type: 'put', key: META_APPLIED, value: Buffer.from(String(applied)) });
    // A synced batch makes everything before it durable; an unsynced one leaves its mark.
    if (sync) ops.push({ type: 'put', key: META_SYNCED, value: Buffer.from(String(applied)) });
    else ops.push({ type: 'put', key: BATCH_MARK + hex(this.applied + 1), value: Buffer.from(String(applied)) });
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
    }
    const deleted: string[] = [];
    for (const [key, v] of overlay) {
      // A key created by this batch is not cached (see latestCache): a create-heavy load would
      // otherwise keep every new object alive until evicted, old-generation garbage for the GC
      // on every replica, while what reads need stays cached on read and on update.
      if (v === null || prefetched.get(key) !== undefined || this.latestCache.has(key)) this.latestCache.set(key, v);
      if (v === null) deleted.push(key);
      else this.liveKeys?.add(key);
    }
    this.liveKeys?.deleteMany(deleted);
    this.revision = rev;
    this.applied = applied;
    if (sync) this.synced = applied;
    this.bus.emit(events);
    this.waiters.wake(this.revision);
    if (compactTo > compactedBefore) this.compactor.schedule();
    return results;
  }

  private async readLatest(key: string, snapshot?: Snapshot): Promise<KeyValue | undefined> {
    if (snapshot) {
      const b = await this.db.get(LATEST + key, { snapshot });
      return b === undefined ? undefined : decodeLatest(key, b);
    }
    return this.readLatestNow(key);
  }

  /**
   * The current version of `key` from the key index, the cache or LevelDB, read on this thread
   * (LevelDB's synchronous get: a memtable or block-cache hit costs a few microseconds, less
   * than handing the read to the thread pool and waking up for its answer; etcd reads its
   * in-memory index and mmap-ed B-tree the same way). Not while an import rewrites the store.
   */
  private readLatestNow(key: string): KeyValue | undefined {
    // A batch being written becomes visible with the next revision; until then absent is right.
    if (this.liveKeys && !this.liveKeys.has(key)) return undefined;
    const hit = this.latestCache.get(key);
    if (hit) return hit;
    // The key goes as bytes: classic-level's getSync of a utf8 string key copies it into a
    // shared buffer and can cut it short, unnoticed, when that buffer ends inside a multi-byte
    // character (such as the escapes of non-UTF-8 etcd key bytes), then reads the wrong key.
    const b = this.db.getSync<Buffer, Buffer>(Buffer.from(LATEST + key, 'utf8'), BYTES_KEY);
    if (b === undefined) return undefined;
    const kv = decodeLatest(key, b);
    // A batch in flight may or may not be in what was read: cache only what no write can change.
    if (!this.writing) this.latestCache.set(key, kv);
    return kv;
  }

  /**
   * The current version of `key` (undefined: absent), read synchronously (see readLatestNow),
   * or `NOT_NOW` while a snapshot import rewrites the store: then use get(), which waits for it.
   */
  getLatestNow(key: string): KeyValue | undefined | typeof NOT_NOW {
    if (this.importGate) return NOT_NOW;
    return this.readLatestNow(key);
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
    if (atRevision < this.compacted)
      throw new MvccError('Compacted', `revision ${atRevision} has been compacted (compacted ${this.compacted})`, this.compacted);
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
      return await historyVersionAt(this.db, snap, key, atRevision);
    } finally {
      await snap.close();
    }
  }

  /**
   * Key-ordered values under `prefix` at one revision, from `startAfter` on. A page costs what
   * it walks (the page, the keys the filter rejected, one key more), not the rest of the range:
   * at the current revision the latest keyspace is read, at an older one the latest and
   * history keyspaces side by side. `remaining` comes from the key index at the current
   * revision when it describes the read's revision; otherwise (a past revision, a write landing
   * meanwhile, the index disabled) it is undefined.
   */
  async range(prefix: string, opts: RangeOptions = {}): Promise<RangeResult> {
    if (this.importGate) await this.importGate;
    const { snap, revision } = await this.snapshot();
    try {
      const at = opts.atRevision ?? revision;
      this.checkRevision(at, revision);
      // The key index counts the snapshot's keys while no batch is in flight or landed since.
      const index = (r: number) => (!this.writing && this.revision === r ? this.liveKeys : undefined);
      return at === revision
        ? await rangeLatest(this.db, snap, prefix, opts, revision, index)
        : await rangeHistory(this.db, snap, prefix, opts, at, revision, index);
    } finally {
      await snap.close();
    }
  }

  /**
   * Events with revision > `afterRevision`, in order, for keys under `prefix` (or exactly `key`),
   * up to the returned `revision` (the store revision the history was read at). A caller that
   * subscribed before calling gets every later event from the bus: together, no gap. Compacted
   * when `afterRevision` < compactedRevision.
   *
   * With `fromCompacted`, `afterRevision` may also be the revision just before the compacted one
   * C: the history then starts with C's puts, without their previous versions and without C's
   * deletes, which is what etcd's watch from C delivers (compaction keeps, of each key, its
   * newest version at or below C unless that is a tombstone).
   *
   * With `until`, only events with revision <= `until`: a long history is read in windows. With
   * `maxBytes`, a window also ends, between two revisions, once its events hold that many bytes
   * of values (readEvents). `through` is the revision the events were read through: min(until,
   * revision), or less where `maxBytes` ended the read.
   */
  async eventsAfter(
    afterRevision: number,
    match: { prefix?: string; key?: string } = {},
    opts: { fromCompacted?: boolean; until?: number; maxBytes?: number } = {},
  ): Promise<{ events: MvccEvent[]; revision: number; through: number }> {
    if (this.importGate) await this.importGate;
    const { snap, revision } = await this.snapshot();
    try {
      const lowest = opts.fromCompacted ? this.compacted - 1 : this.compacted;
      if (afterRevision < lowest) {
        throw new MvccError('Compacted', `revision ${afterRevision} has been compacted (compacted ${this.compacted})`, this.compacted);
      }
      if (afterRevision >= revision) return { events: [], revision, through: revision };
      const { events, through } = await readEvents(this.db, snap, afterRevision, match, this.compacted, opts.until, opts.maxBytes);
      return { events, revision, through: through ?? Math.min(opts.until ?? revision, revision) };
    } finally {
      await snap.close();
    }
  }

  /**
   * Drops history older than `revision`: afterwards reads at a revision < `revision` and watches
   * from before it fail with Compacted, while the state at `revision` stays readable (etcd's
   * compaction contract). See MvccCompactor.compact.
   */
  compact(revision: number): Promise<void> {
    return this.compactor.compact(revision);
  }

  /** Resolves when the deletions of every compaction so far are done (or have failed). */
  whenPurged(): Promise<void> {
    return this.compactor.whenPurged();
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
  exportSnapshot(): Promise<Uint8Array> {
    return exportToMemory((write) => this.exportTo(write));
  }

  /**
   * Writes the bytes exportSnapshot() returns to `file` (created or truncated, mode 0o600), in
   * pieces of about 1 MiB, so memory does not grow with the store; the file is fsynced before
   * this resolves. Returns the counters inside the snapshot and its size. On failure the partial
   * file is removed.
   */
  exportSnapshotToFile(file: string): Promise<{ revision: number; appliedIndex: number; bytes: number }> {
    return exportToFile(file, (write) => this.exportTo(write));
  }

  /**
   * Streams a snapshot of the store to `write`, piece by piece, waiting for each write before
   * encoding the next piece. Returns the snapshot's counters and its size.
   */
  private exportTo(write: (piece: Buffer) => Promise<void> | void): Promise<SnapshotHeader & { bytes: number }> {
    // In the queue, so the counters describe exactly the data the snapshot holds.
    const take = () =>
      this.exclusive(async () => ({ snap: this.db.snapshot(), header: { revision: this.revision, applied: this.applied, compacted: this.compacted } }));
    return exportSnapshotPieces(this.db, take, write);
  }

  /**
   * A consistent read-only view of the store as it is now (MvccView): a LevelDB snapshot and the
   * counters, taken together in the apply queue, readable at any revision from the compacted one
   * to the current one whatever happens to the store meanwhile. The caller closes it.
   */
  async view(): Promise<MvccView> {
    if (this.importGate) await this.importGate;
    return this.exclusive(async () => new MvccView(this.db, this.db.snapshot(), { revision: this.revision, applied: this.applied, compacted: this.compacted }));
  }

  /**
   * Makes every applied batch durable (applies are written without fsync: the Raft log is the
   * durable record until the log is compacted) and returns the applied index now on disk:
   * flushToDisk, then a synced `m:synced`, then the batch marks it covers are deleted.
   */
  async sync(): Promise<number> {
    // Every batch up to `applied` has been written (mutations run one at a time).
    const applied = await this.exclusive(async () => this.applied);
    // A synced write alone would not do: it flushes only LevelDB's current log file
    // (flushToDisk). Applies go on meanwhile.
    await flushToDisk(this.db);
    return this.exclusive(async () => {
      if (applied > this.synced) {
        await this.writeBatch([{ type: 'put', key: META_SYNCED, value: Buffer.from(String(applied)) }], true);
        this.synced = applied;
      }
      // The marks of the batches now on disk are no longer needed (checkBatchChain skips them).
      this.clearingMarks = this.clearingMarks.then(() => this.db.clear({ gte: BATCH_MARK, lte: BATCH_MARK + hex(applied) })).catch(() => undefined);
      return applied;
    });
  }

  /** Gives back the disk space of deleted and compacted records (compactAll; etcd's defragment). */
  async defragment(): Promise<void> {
    await compactAll(this.db);
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
        imported = await writeSnapshotRecords(this.db, open(), importing, (ops, sync) => this.writeBatch(ops, sync), this.liveKeys !== undefined);
      } catch (e) {
        const why = e instanceof Error ? e.message : String(e);
        fail(new MvccError('Corrupt', `a snapshot import failed midway (${why}): import again, or reopen the store (empty)`));
        throw e;
      } finally {
        this.latestCache.clear();
      }
      const { header, liveKeys } = imported;
      if (this.liveKeys && liveKeys) this.liveKeys = KeyIndex.from(liveKeys);
      this.revision = header.revision;
      this.applied = header.applied;
      this.synced = header.applied;
      this.compacted = header.compacted;
      this.compactor.dataReplaced();
      this.importGate = undefined;
      release();
      this.bus.emitReset();
      this.waiters.wake(this.revision);
      this.compactor.schedule();
    });
  }

  /** Waits for queued mutations, then closes the database. Pending waiters resolve false. */
  async close(): Promise<void> {
    if (this.closing) return;
    // Mutations already queued finish; later ones are refused (exclusive() checks `closing`).
    this.closing = true;
    await this.queue;
    // A purge stops at its next write (exclusive() refuses once closing).
    await this.compactor.stopped();
    await this.clearingMarks;
    this.closed = true;
    this.waiters.closeAll();
    await this.db.close();
  }
}
