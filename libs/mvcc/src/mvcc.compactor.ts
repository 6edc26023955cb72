/**
 * History compaction of the store: the compacted revision (etcd's compaction contract) and the
 * physical deletion ("purge") of what it made unreachable, beside later applies.
 */
import { BinReader } from './mvcc.codec.js';
import { type BatchOp, type Db, EVENTS, HISTORY, LATEST, META_COMPACTED, decodeLatest, hex, historyKey, isTombstone } from './mvcc.keyspace.js';
import { MvccError } from './mvcc.types.js';

/** What the compactor needs of its store. */
export interface CompactorHost {
  readonly db: Db;
  currentRevision(): number;
  compactedRevision(): number;
  /** Moves the in-memory compacted revision (the caller writes it durably). */
  setCompacted(revision: number): void;
  /** True while no purge may start: the store is closing, or an import holds the data. */
  paused(): boolean;
  /** True once the store is closing (a purge it stopped is not a failure). */
  closing(): boolean;
  /** Runs `fn` in the store's apply queue. */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
  /** Writes one LevelDB batch of the store. */
  writeBatch(ops: BatchOp[], sync: boolean): Promise<void>;
}

/**
 * Compaction and purge of one MvccStore. The store calls schedule() after anything that may
 * leave history to delete (open, a compaction applied, an import), dataReplaced() when an import
 * replaced the data, and stopped() before it closes the database.
 */
export class MvccCompactor {
  /**
   * Compaction's physical deletions, running beside applies (see purge()); undefined when none
   * runs. `purgedTo`: revision up to which they finished in this process (a restart finds any
   * leftovers again). `dataEpoch` changes when a snapshot import replaced the data, which ends a
   * purge reading the old data.
   */
  private purging: Promise<void> | undefined;
  private purgedTo = 0;
  private dataEpoch = 0;
  /** Purges that failed (they are retried with the next compaction). */
  purgeErrors = 0;

  constructor(private readonly host: CompactorHost) {}

  /**
   * The data was replaced (a snapshot import): a purge of the old data stops, and the imported
   * history may hold records at or below its compacted revision (the exporter may not have
   * purged them yet), so purging starts over.
   */
  dataReplaced(): void {
    this.dataEpoch++;
    this.purgedTo = 0;
  }

  /** Resolves once no purge runs (a purge stops at its next write once the store is closing). */
  async stopped(): Promise<void> {
    while (this.purging) await this.purging;
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
    const h = this.host;
    await h.exclusive(async () => {
      if (revision <= h.compactedRevision()) return;
      const current = h.currentRevision();
      if (!Number.isSafeInteger(revision) || revision > current) {
        throw new MvccError('FutureRevision', `cannot compact to ${revision}: current revision ${current}`, current);
      }
      // Announce first: a reader that checks after this sees Compacted rather than a hole.
      const before = h.compactedRevision();
      h.setCompacted(revision);
      try {
        await h.writeBatch([{ type: 'put', key: META_COMPACTED, value: Buffer.from(String(revision)) }], false);
      } catch (e) {
        h.setCompacted(before);
        throw e;
      }
    });
    await this.whenPurged();
  }

  /** Resolves when the deletions of every compaction so far are done (or have failed). */
  async whenPurged(): Promise<void> {
    this.schedule();
    while (this.purging) await this.purging;
  }

  /** Starts purge() unless one runs, nothing is left to delete, or the host pauses purging (closing, importing). */
  schedule(): void {
    if (this.purging || this.host.paused() || this.purgedTo >= this.host.compactedRevision()) return;
    this.purging = this.purge().then(
      (more) => {
        this.purging = undefined;
        if (more) this.schedule();
      },
      () => {
        // Retried with the next compaction (or at the next start); reads are unaffected. A
        // purge stopped by close() is not a failure.
        if (!this.host.closing()) this.purgeErrors++;
        this.purging = undefined;
      },
    );
  }

  /**
   * Deletes the history that compaction to the compacted revision C made unreachable, in
   * chunks written between applies. Every event at revision r <= C is dropped, and with it the
   * version it superseded (its previous version: a newer one at r <= C is what any read at C or
   * later sees) and, for a delete, its own tombstone (absent needs no record). Versions live at
   * C are never superseded by an event <= C, so they stay. The put events of C itself stay too
   * (their versions are live at C): a watch may start at the compacted revision, and etcd's
   * delivers them; the next compaction drops them. Events at or below C never change,
   * and applies only add newer records, so the chunks can be read outside the apply queue; only
   * their writes take turns with applies. Events of the older self-contained format carry no
   * previous revision: their keys' versions are sorted out inside the queue, as compaction did
   * before. Returns true when another compaction arrived meanwhile (purge again).
   */
  private async purge(): Promise<boolean> {
    const target = this.host.compactedRevision();
    const epoch = this.dataEpoch;
    const it = this.host.db.iterator({ gte: EVENTS, lt: EVENTS + hex(target + 1) });
    try {
      for (;;) {
        const chunk = await it.nextv(1000);
        if (chunk.length === 0) break;
        const ops: BatchOp[] = [];
        const legacy = new Set<string>();
        for (const [k, v] of chunk) {
          const revision = parseInt(k.slice(EVENTS.length, EVENTS.length + 16), 16);
          const r = new BinReader(v);
          const key = r.str();
          const kind = r.u8();
          // A put of C itself: its version is live at C (the newest of its key at or below C).
          if (!(revision === target && (kind === 1 || kind === 3))) ops.push({ type: 'del', key: k });
          if (kind === 3 || kind === 4) {
            const prev = r.num();
            if (prev > 0) ops.push({ type: 'del', key: historyKey(key, prev) });
            if (kind === 4) ops.push({ type: 'del', key: historyKey(key, revision) });
          } else {
            legacy.add(key);
          }
        }
        const stop = await this.host.exclusive(async () => {
          if (this.dataEpoch !== epoch) return true;
          if (legacy.size > 0) ops.push(...(await this.legacyPurgeOps([...legacy], target)));
          await this.host.writeBatch(ops, false);
          return false;
        });
        if (stop) return true;
      }
    } finally {
      await it.close();
    }
    if (this.dataEpoch === epoch) this.purgedTo = Math.max(this.purgedTo, target);
    return this.purgedTo < this.host.compactedRevision();
  }

  /**
   * For keys with events of the older format (no previous revision recorded): every version of
   * the key older than its newest version <= `revision` (and that one too when it is a
   * tombstone). Runs inside the apply queue, since it reads the current versions.
   */
  private async legacyPurgeOps(keys: string[], revision: number): Promise<BatchOp[]> {
    const ops: BatchOp[] = [];
    const currents = await this.host.db.getMany(keys.map((k) => LATEST + k));
    for (let j = 0; j < keys.length; j++) {
      const key = keys[j]!;
      const b = currents[j];
      // A current version written at or before `revision` is the one live there: no
      // superseded version is needed any more.
      const currentLive = b !== undefined && decodeLatest(key, b).modRevision <= revision;
      const versions = await this.host.db.iterator({ gt: `${HISTORY}${key}\u0000`, lte: `${HISTORY}${key}\u0000${hex(revision)}` }).all();
      const lastIdx = versions.length - 1;
      versions.forEach(([k, v], n) => {
        if (currentLive || n < lastIdx || isTombstone(v)) ops.push({ type: 'del', key: k });
      });
    }
    return ops;
  }
}
