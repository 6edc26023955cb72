/**
 * A consistent read-only view of an MvccStore (MvccStore.view): one LevelDB snapshot and the
 * counters it reflects, taken together in the apply queue. Reads at any revision from the view's
 * compacted revision to its own answer as the store did when the view was taken, whatever was
 * applied, compacted, purged or imported since (LevelDB keeps what a snapshot sees until it is
 * closed). For long reads of the whole store, such as writing it out in another format.
 */
import { type Db, type Snapshot, LATEST, decodeLatest } from './mvcc.keyspace.js';
import { type RangeOptions, type RangeResult, historyVersionAt, rangeHistory, rangeLatest, readEvents } from './mvcc.range-reader.js';
import type { SnapshotHeader } from './mvcc.snapshot-format.js';
import { MvccError, type KeyValue, type MvccEvent } from './mvcc.types.js';

export class MvccView {
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly snap: Snapshot,
    /** The view's revision, applied index and compacted revision. */
    readonly header: Readonly<SnapshotHeader>,
  ) {}

  private check(at: number): void {
    if (this.closed) throw new MvccError('InvalidCommand', 'the view is closed');
    if (!Number.isSafeInteger(at) || at > this.header.revision)
      throw new MvccError('FutureRevision', `revision ${at} is after the view's revision ${this.header.revision}`, this.header.revision);
    if (at < this.header.compacted)
      throw new MvccError('Compacted', `revision ${at} has been compacted (compacted ${this.header.compacted})`, this.header.compacted);
  }

  /** As MvccStore.range, at `opts.atRevision` or the view's revision (`remaining` only when the range ended). */
  async range(prefix: string, opts: RangeOptions = {}): Promise<RangeResult> {
    const at = opts.atRevision ?? this.header.revision;
    this.check(at);
    return at === this.header.revision
      ? rangeLatest(this.db, this.snap, prefix, opts, at)
      : rangeHistory(this.db, this.snap, prefix, opts, at, this.header.revision);
  }

  /** The version of `key` live at `atRevision` (default: the view's revision). */
  async get(key: string, atRevision = this.header.revision): Promise<KeyValue | undefined> {
    this.check(atRevision);
    const b = await this.db.get(LATEST + key, { snapshot: this.snap });
    const current = b === undefined ? undefined : decodeLatest(key, b);
    if (atRevision === this.header.revision || (current && current.modRevision <= atRevision)) return current;
    return historyVersionAt(this.db, this.snap, key, atRevision);
  }

  /**
   * Every event with a revision in (afterRevision, until], in order (until defaults to the view's
   * revision): as MvccStore.eventsAfter, for all keys.
   */
  async eventsAfter(afterRevision: number, until = this.header.revision): Promise<MvccEvent[]> {
    return (await this.eventsWindow(afterRevision, until)).events;
  }

  /**
   * As eventsAfter, ending early, at the end of a revision, once the events hold `maxBytes` of
   * values (readEvents); `through` is the revision they were read through.
   */
  async eventsWindow(afterRevision: number, until = this.header.revision, maxBytes?: number): Promise<{ events: MvccEvent[]; through: number }> {
    this.check(Math.max(afterRevision, this.header.compacted));
    if (afterRevision < this.header.compacted)
      throw new MvccError('Compacted', `revision ${afterRevision} has been compacted (compacted ${this.header.compacted})`, this.header.compacted);
    const end = Math.min(until, this.header.revision);
    const { events, through } = await readEvents(this.db, this.snap, afterRevision, {}, this.header.compacted, end, maxBytes);
    return { events, through: through ?? Math.max(end, afterRevision) };
  }

  /** Releases the LevelDB snapshot (reads fail afterwards). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.snap.close();
  }
}
