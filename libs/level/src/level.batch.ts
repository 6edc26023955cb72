/**
 * Batched writes to classic-level without abstract-level's per-operation layer.
 *
 * `db.batch(ops)` from abstract-level clones every operation, resolves its key and value
 * encodings, runs hooks and events, then hands the ops to classic-level's `_batch`, which copies
 * them into a LevelDB WriteBatch. For the Raft log and the MVCC apply path, where every write is
 * a string key and a byte value already encoded by our codecs, that layer cost about two thirds
 * of the main-thread time of the call (docs/performance.md). `writeBatch` checks the two
 * things the layer would have checked for us (the database is open; keys are strings and values
 * bytes, which is all the native side accepts without silently writing an empty value) and calls
 * `_batch`, the documented implementation hook of abstract-level, directly.
 */

import { diskFaultBefore } from './level.faults.js';

/** A put or delete with a key and value already in their stored form. */
export type RawBatchOp = { type: 'put'; key: string; value: Uint8Array } | { type: 'del'; key: string };

/** abstract-level's chained batch: operations added one call at a time, written as one batch. */
export interface RawChainedBatch {
  put(key: string, value: Uint8Array): unknown;
  del(key: string): unknown;
  write(options: { sync: boolean }): Promise<void>;
  close(): Promise<void>;
}

/** The part of a classic-level database `writeBatch` needs. */
export interface RawBatchTarget {
  readonly status: string;
  /** The database's directory (names it in injected faults). */
  readonly location?: string;
  batch(ops: RawBatchOp[], options: { sync: boolean }): Promise<void>;
  /** A chained batch (abstract-level's `batch()` without arguments). */
  batch(): RawChainedBatch;
}

/**
 * Batches with more operations than this are handed to LevelDB a slice at a time, with a turn of
 * the event loop between slices. classic-level copies an array batch into LevelDB's WriteBatch
 * in one synchronous call, about 2 µs per operation: a DeleteRange of 100,000 keys (four
 * operations per key) would stop the process for most of a second, and with it the Raft
 * heartbeats, peer messages and client pings it answers. The slices go into one chained batch,
 * so the write is still atomic.
 */
export const SLICED_BATCH_OPS = 4096;

/** Raised for an op that is not a string key with a byte value. */
export class RawBatchError extends TypeError {}

interface WithPrivateBatch {
  _batch(ops: RawBatchOp[], options: { sync: boolean }): Promise<void>;
}

/**
 * Writes `ops` atomically as one LevelDB batch, fsynced first when `sync` is true. A database
 * that is not open gets the public `batch` (which waits for an opening database and reports a
 * closed one with abstract-level's LEVEL_DATABASE_NOT_OPEN error). Under the test-only disk
 * fault switch (level.faults.ts) the write may instead fail, or wait, before reaching LevelDB.
 */
export function writeBatch(db: RawBatchTarget, ops: RawBatchOp[], sync: boolean): Promise<void> {
  if (ops.length === 0) return Promise.resolve();
  let delay: Promise<void> | undefined;
  try {
    delay = diskFaultBefore(db.location ?? '', sync);
  } catch (e) {
    return Promise.reject(e as Error);
  }
  if (delay) return delay.then(() => writeNow(db, ops, sync));
  return writeNow(db, ops, sync);
}

function writeNow(db: RawBatchTarget, ops: RawBatchOp[], sync: boolean): Promise<void> {
  const impl = db as unknown as Partial<WithPrivateBatch>;
  if (db.status !== 'open' || typeof impl._batch !== 'function') return db.batch(ops, { sync });
  checkOps(ops);
  if (ops.length > SLICED_BATCH_OPS) return writeSliced(db, ops, sync);
  return impl._batch.call(db, ops, { sync });
}

/** The array batch's checks (classic-level's native side would silently write an empty value). */
function checkOps(ops: readonly RawBatchOp[]): void {
  for (const op of ops) {
    if (typeof op.key !== 'string') throw new RawBatchError(`batch key must be a string, got ${typeof op.key}`);
    if (op.type === 'put') {
      if (!(op.value instanceof Uint8Array)) throw new RawBatchError(`batch value for ${JSON.stringify(op.key)} must be bytes`);
    } else if (op.type !== 'del') {
      throw new RawBatchError(`batch op type must be put or del, got ${JSON.stringify((op as { type: unknown }).type)}`);
    }
  }
}

/** Resolves on the next turn of the event loop (after the I/O callbacks that are due). */
const nextTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

/** A large batch through a chained batch, SLICED_BATCH_OPS operations per turn (see there). */
async function writeSliced(db: RawBatchTarget, ops: readonly RawBatchOp[], sync: boolean): Promise<void> {
  const batch = db.batch();
  let written = false;
  try {
    for (let i = 0; i < ops.length; i++) {
      if (i > 0 && i % SLICED_BATCH_OPS === 0) await nextTurn();
      const op = ops[i]!;
      if (op.type === 'put') batch.put(op.key, op.value);
      else batch.del(op.key);
    }
    written = true;
    await batch.write({ sync });
  } finally {
    // write() closes the batch itself, also when it fails.
    if (!written) await batch.close();
  }
}
