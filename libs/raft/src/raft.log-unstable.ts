import { type Entry, type Snapshot, RaftError } from './raft.types.js';

/**
 * The not-yet-persisted tail of the log (etcd's unstable): an optional incoming snapshot and
 * entries starting at `offset`. Entries leave it when the driver reports them stable
 * (stableTo), i.e. only after they were written to storage.
 */
export class UnstableLog {
  snapshot: Snapshot | undefined = undefined;
  entries: Entry[] = [];
  /** Index of entries[0] (or where the next entry goes when entries is empty). */
  offset: number;

  constructor(offset: number) {
    this.offset = offset;
  }

  /** First index if an unstable snapshot defines it. */
  maybeFirstIndex(): number | undefined {
    return this.snapshot ? this.snapshot.metadata.index + 1 : undefined;
  }

  /** Last index if the unstable part defines it. */
  maybeLastIndex(): number | undefined {
    if (this.entries.length > 0) return this.offset + this.entries.length - 1;
    return this.snapshot ? this.snapshot.metadata.index : undefined;
  }

  /** Term of index i if the unstable part holds it. */
  maybeTerm(i: number): number | undefined {
    if (i < this.offset) {
      if (this.snapshot && this.snapshot.metadata.index === i) return this.snapshot.metadata.term;
      return undefined;
    }
    const last = this.maybeLastIndex();
    if (last === undefined || i > last) return undefined;
    return this.entries[i - this.offset]!.term;
  }

  /**
   * Entries up to (i, t) are now on stable storage. Ignored when the entry at i was replaced
   * meanwhile (its term differs), which happens if a new leader truncated the tail.
   */
  stableTo(i: number, t: number): void {
    const gt = this.maybeTerm(i);
    if (gt === undefined || gt !== t || i < this.offset) return;
    this.entries = this.entries.slice(i + 1 - this.offset);
    this.offset = i + 1;
  }

  /** The unstable snapshot at index i is now on stable storage. */
  stableSnapTo(i: number): void {
    if (this.snapshot && this.snapshot.metadata.index === i) this.snapshot = undefined;
  }

  /** Replaces the whole unstable part with an incoming snapshot. */
  restore(s: Snapshot): void {
    this.offset = s.metadata.index + 1;
    this.entries = [];
    this.snapshot = s;
  }

  /** Appends, replacing any suffix starting at ents[0].index (a leader's entries win). */
  truncateAndAppend(ents: readonly Entry[]): void {
    const after = ents[0]!.index;
    if (after === this.offset + this.entries.length) {
      for (const e of ents) this.entries.push(e);
    } else if (after <= this.offset) {
      this.offset = after;
      this.entries = ents.slice();
    } else {
      const kept = this.entries.slice(0, after - this.offset);
      for (const e of ents) kept.push(e);
      this.entries = kept;
    }
  }

  /** Entries [lo, hi) from the unstable part; the range must lie inside it. */
  slice(lo: number, hi: number): Entry[] {
    if (lo > hi || lo < this.offset || hi > this.offset + this.entries.length) {
      throw new RaftError('ErrInvariant', `unstable slice [${lo},${hi}) out of [${this.offset},${this.offset + this.entries.length})`);
    }
    return this.entries.slice(lo - this.offset, hi - this.offset);
  }
}
