import { limitSize, type RaftStorage } from './raft.storage.js';
import { UnstableLog } from './raft.log-unstable.js';
import { type Entry, type Snapshot, RaftError, isRaftError } from './raft.types.js';

/** Unlimited size for slices. */
export const NO_LIMIT = Number.MAX_SAFE_INTEGER;

/**
 * The node's view of the log: stable entries (read through the storage port) followed by the
 * unstable tail, plus the commit and applied indexes. Invariant: applied <= committed <= lastIndex.
 */
export class RaftLog {
  readonly unstable: UnstableLog;
  committed: number;
  applied: number;

  constructor(readonly storage: RaftStorage) {
    const first = storage.firstIndex();
    const last = storage.lastIndex();
    this.unstable = new UnstableLog(last + 1);
    // Everything up to the snapshot is committed and applied by definition (paper section 7).
    this.committed = first - 1;
    this.applied = first - 1;
  }

  firstIndex(): number {
    return this.unstable.maybeFirstIndex() ?? this.storage.firstIndex();
  }

  lastIndex(): number {
    return this.unstable.maybeLastIndex() ?? this.storage.lastIndex();
  }

  lastTerm(): number {
    return this.term(this.lastIndex());
  }

  /** Term of entry i: 0 past the end; throws ErrCompacted before firstIndex()-1. */
  term(i: number): number {
    const dummy = this.firstIndex() - 1;
    if (i > this.lastIndex()) return 0;
    if (i < dummy) throw new RaftError('ErrCompacted', `term of ${i} below ${dummy}`);
    const t = this.unstable.maybeTerm(i);
    if (t !== undefined) return t;
    return this.storage.term(i);
  }

  /** Like term() but answers -1 for a compacted index. */
  termOrCompacted(i: number): number {
    try {
      return this.term(i);
    } catch (e) {
      if (isRaftError(e, 'ErrCompacted') || isRaftError(e, 'ErrUnavailable')) return -1;
      throw e;
    }
  }

  matchTerm(i: number, t: number): boolean {
    const got = this.termOrCompacted(i);
    return got >= 0 && got === t;
  }

  /**
   * Follower side of AppendEntries (paper section 5.3): if the entry at `index` has `logTerm`,
   * append `ents`, deleting a conflicting suffix, and commit up to min(committed, last new).
   * Returns the last new index, or -1 when the consistency check fails.
   */
  maybeAppend(index: number, logTerm: number, committed: number, ents: readonly Entry[]): number {
    if (!this.matchTerm(index, logTerm)) return -1;
    const lastNew = index + ents.length;
    const ci = this.findConflict(ents);
    if (ci !== 0) {
      if (ci <= this.committed) {
        throw new RaftError('ErrInvariant', `entry ${ci} conflicts with committed entry (committed ${this.committed})`);
      }
      this.append(ents.slice(ci - (index + 1)));
    }
    this.commitTo(Math.min(committed, lastNew));
    return lastNew;
  }

  /** Appends entries after lastIndex or over an uncommitted suffix; returns the new lastIndex. */
  append(ents: readonly Entry[]): number {
    if (ents.length === 0) return this.lastIndex();
    const after = ents[0]!.index - 1;
    if (after < this.committed) throw new RaftError('ErrInvariant', `append after ${after} is below committed ${this.committed}`);
    this.unstable.truncateAndAppend(ents);
    return this.lastIndex();
  }

  /** First index whose entry conflicts with (or is missing from) our log; 0 if none. */
  findConflict(ents: readonly Entry[]): number {
    for (const e of ents) {
      if (!this.matchTerm(e.index, e.term)) return e.index;
    }
    return 0;
  }

  /**
   * Largest index <= `index` whose term is <= `term` (or the first compacted point): the fast
   * backtracking hint of the paper section 5.3 ("the follower can include the term of the
   * conflicting entry and the first index it stores for that term").
   */
  findConflictByTerm(index: number, term: number): number {
    let i = Math.min(index, this.lastIndex());
    for (; i > 0; i--) {
      const t = this.termOrCompacted(i);
      if (t < 0) return i;
      if (t <= term) return i;
    }
    return 0;
  }

  /** Entries [lo, hi) limited to maxBytes (at least one). Throws ErrCompacted below firstIndex. */
  slice(lo: number, hi: number, maxBytes: number): Entry[] {
    if (lo > hi) throw new RaftError('ErrInvariant', `invalid slice ${lo} > ${hi}`);
    const first = this.firstIndex();
    if (lo < first) throw new RaftError('ErrCompacted', `slice from ${lo} below first ${first}`);
    const last = this.lastIndex();
    if (hi > last + 1) throw new RaftError('ErrInvariant', `slice to ${hi} beyond last ${last}`);
    if (lo === hi) return [];
    let ents: Entry[] = [];
    const uoff = this.unstable.offset;
    if (lo < uoff) {
      const stored = this.storage.entries(lo, Math.min(hi, uoff), maxBytes);
      if (stored.length < Math.min(hi, uoff) - lo) return stored; // size limit hit
      ents = stored;
    }
    if (hi > uoff) {
      const u = this.unstable.slice(Math.max(lo, uoff), hi);
      ents = ents.length > 0 ? ents.concat(u) : u;
    }
    return limitSize(ents, maxBytes);
  }

  /** Entries from i to the end, or undefined when i is compacted (the caller sends a snapshot). */
  entriesFrom(i: number, maxBytes: number): Entry[] | undefined {
    if (i > this.lastIndex()) return [];
    try {
      return this.slice(i, this.lastIndex() + 1, maxBytes);
    } catch (e) {
      if (isRaftError(e, 'ErrCompacted')) return undefined;
      throw e;
    }
  }

  /** Entries not yet handed to storage. */
  unstableEntries(): Entry[] {
    return this.unstable.entries;
  }

  /** Committed entries not yet applied. */
  nextCommittedEnts(maxBytes: number): Entry[] {
    const off = Math.max(this.applied + 1, this.firstIndex());
    if (this.committed + 1 > off) return this.slice(off, this.committed + 1, maxBytes);
    return [];
  }

  hasNextCommittedEnts(): boolean {
    return this.committed + 1 > Math.max(this.applied + 1, this.firstIndex());
  }

  /** The snapshot a lagging follower should get (the unstable one if newer). */
  snapshot(): Snapshot {
    return this.unstable.snapshot ?? this.storage.snapshot();
  }

  /** Raises the commit index; never lowers it (committed entries are final, section 5.4). */
  commitTo(c: number): void {
    if (c <= this.committed) return;
    if (c > this.lastIndex()) throw new RaftError('ErrInvariant', `commit ${c} beyond last index ${this.lastIndex()}`);
    this.committed = c;
  }

  appliedTo(i: number): void {
    if (i === 0) return;
    if (i > this.committed || i < this.applied) {
      throw new RaftError('ErrInvariant', `applied ${i} outside [${this.applied}, ${this.committed}]`);
    }
    this.applied = i;
  }

  stableTo(i: number, t: number): void {
    this.unstable.stableTo(i, t);
  }

  stableSnapTo(i: number): void {
    this.unstable.stableSnapTo(i);
  }

  /**
   * Commits maxIndex if its entry is from `term` (the current term): the paper section 5.4.2
   * rule that a leader only commits entries of its own term by counting replicas.
   */
  maybeCommit(maxIndex: number, term: number): boolean {
    if (maxIndex > this.committed && this.termOrCompacted(maxIndex) === term) {
      this.commitTo(maxIndex);
      return true;
    }
    return false;
  }

  /** Election restriction (paper section 5.4.1): is (lastIndex, term) at least as up to date as ours? */
  isUpToDate(lastIndex: number, term: number): boolean {
    const myTerm = this.lastTerm();
    return term > myTerm || (term === myTerm && lastIndex >= this.lastIndex());
  }

  /** Replaces the log with a snapshot (InstallSnapshot, paper section 7). */
  restore(s: Snapshot): void {
    this.committed = s.metadata.index;
    this.unstable.restore(s);
  }
}
