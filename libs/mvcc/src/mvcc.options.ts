/**
 * Options of an MvccStore and the LevelDB settings it opens its database with.
 */
import type { Db } from './mvcc.keyspace.js';

/**
 * LevelDB memtable size (default 4 MiB). Larger memtables mean fewer, larger level-0 flushes and
 * less merging work for the background compaction thread, which on the 3-node bench on 2 cores
 * was a tenth of the CPU. Costs up to twice this in memory (the memtable being flushed too).
 */
export const WRITE_BUFFER_BYTES = 32 * 1024 * 1024;

/** Options of `MvccStore.open`. */
export interface MvccStoreOptions {
  /** Pre-built database (tests); otherwise one is opened at `dir`. */
  db?: Db;
  /** Most entries the latest-value cache holds (default 50,000). */
  cacheMaxEntries?: number;
  /**
   * Keep the live keys in memory (default true; see MvccStore.liveKeys). Off, every write of a
   * key missing from the latest-value cache reads LevelDB first, and ranges count no remaining.
   */
  keyIndex?: boolean;
  /**
   * Longest run, in ms, of the synchronous part of applying one batch before the event loop gets
   * a turn (default 10; checked every 256 operations). Only batches of many operations reach it.
   */
  applySliceMs?: number;
}
