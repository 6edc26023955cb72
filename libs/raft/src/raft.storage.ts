import { type ConfState, type Entry, type HardState, type Snapshot, EMPTY_DATA, EMPTY_HARD_STATE, RaftError, entrySize } from './raft.types.js';

/**
 * Read-only storage port the core reads stable state through (etcd raft's Storage). Writing
 * belongs to the driver/adapter. Errors are RaftError with code ErrCompacted (the index is
 * before the first retained entry) or ErrUnavailable (after the last one).
 */
export interface RaftStorage {
  /** Hard state and membership to start from. */
  initialState(): { hardState: HardState; confState: ConfState };
  /** Entries [lo, hi), at least one if any is in range, limited to about maxBytes in total. */
  entries(lo: number, hi: number, maxBytes: number): Entry[];
  /** Term of entry i; valid for firstIndex()-1 (the snapshot's term) through lastIndex(). */
  term(i: number): number;
  /** Index of the first entry still held (snapshot index + 1). */
  firstIndex(): number;
  /** Index of the last entry held (the snapshot index when the log is empty). */
  lastIndex(): number;
  /** The most recent snapshot; may throw ErrSnapshotTemporarilyUnavailable. */
  snapshot(): Snapshot;
}

/** Keeps at least one entry and then as many as fit in maxBytes (etcd's limitSize). */
export function limitSize(ents: Entry[], maxBytes: number): Entry[] {
  if (ents.length <= 1) return ents;
  let size = entrySize(ents[0]!);
  let n = 1;
  for (; n < ents.length; n++) {
    size += entrySize(ents[n]!);
    if (size > maxBytes) break;
  }
  return n === ents.length ? ents : ents.slice(0, n);
}

/**
 * The founding snapshot of a cluster: index 1, term 1, the voters, empty data (= the state
 * machine's initial state). Recording the first membership as a snapshot means a node that joins
 * later with an empty log always receives the membership through a snapshot instead of
 * replaying a history that lacks it.
 */
export function bootstrapSnapshot(voters: readonly number[]): Snapshot {
  return { metadata: { index: 1, term: 1, confState: { voters: [...voters], learners: [] } }, data: EMPTY_DATA };
}

const EMPTY_CONF: ConfState = Object.freeze({ voters: [], learners: [] });

/**
 * In-memory RaftStorage with the writer methods a driver needs. Used by the simulation as the
 * "synced disk" and by tests. Entry 0 of the internal array is a dummy at the snapshot index
 * carrying the snapshot's term, so term(firstIndex-1) always answers.
 */
export class MemoryStorage implements RaftStorage {
  private hard: HardState = EMPTY_HARD_STATE;
  private snap: Snapshot = { metadata: { index: 0, term: 0, confState: EMPTY_CONF }, data: EMPTY_DATA };
  private ents: Entry[] = [{ index: 0, term: 0, type: 'normal', data: EMPTY_DATA }];

  /** A storage for a node that founds a new cluster with the given voters (see bootstrapSnapshot). */
  static bootstrap(voters: readonly number[]): MemoryStorage {
    const s = new MemoryStorage();
    s.applySnapshot(bootstrapSnapshot(voters));
    s.hard = { term: 1, vote: 0, commit: 1 };
    return s;
  }

  initialState(): { hardState: HardState; confState: ConfState } {
    return { hardState: this.hard, confState: this.snap.metadata.confState };
  }

  /** Replaces the stored hard state. */
  setHardState(hs: HardState): void {
    this.hard = hs;
  }

  hardState(): HardState {
    return this.hard;
  }

  entries(lo: number, hi: number, maxBytes: number): Entry[] {
    const offset = this.ents[0]!.index;
    if (lo <= offset) throw new RaftError('ErrCompacted', `entries from ${lo}, compacted through ${offset}`);
    if (hi > this.lastIndex() + 1) throw new RaftError('ErrUnavailable', `entries to ${hi}, last is ${this.lastIndex()}`);
    if (hi <= lo) return [];
    return limitSize(this.ents.slice(lo - offset, hi - offset), maxBytes);
  }

  term(i: number): number {
    const offset = this.ents[0]!.index;
    if (i < offset) throw new RaftError('ErrCompacted', `term of ${i}, compacted through ${offset}`);
    if (i - offset >= this.ents.length) throw new RaftError('ErrUnavailable', `term of ${i}, last is ${this.lastIndex()}`);
    return this.ents[i - offset]!.term;
  }

  firstIndex(): number {
    return this.ents[0]!.index + 1;
  }

  lastIndex(): number {
    return this.ents[0]!.index + this.ents.length - 1;
  }

  snapshot(): Snapshot {
    return this.snap;
  }

  /** Replaces everything with the snapshot; ErrSnapOutOfDate if it is not newer than the current one. */
  applySnapshot(s: Snapshot): void {
    if (s.metadata.index <= this.snap.metadata.index) {
      throw new RaftError('ErrSnapOutOfDate', `snapshot ${s.metadata.index} not newer than ${this.snap.metadata.index}`);
    }
    this.snap = s;
    this.ents = [{ index: s.metadata.index, term: s.metadata.term, type: 'normal', data: EMPTY_DATA }];
  }

  /**
   * Records a snapshot of the state machine at applied index i (which must be held in the log)
   * without discarding entries; call compact() to drop them.
   */
  createSnapshot(i: number, confState: ConfState, data: Uint8Array): Snapshot {
    if (i <= this.snap.metadata.index) throw new RaftError('ErrSnapOutOfDate', `snapshot at ${i} not newer than ${this.snap.metadata.index}`);
    if (i > this.lastIndex()) throw new RaftError('ErrUnavailable', `snapshot at ${i} beyond last index ${this.lastIndex()}`);
    this.snap = { metadata: { index: i, term: this.term(i), confState }, data };
    return this.snap;
  }

  /** Keeps the current snapshot's metadata and the log but forgets its data (see LevelDbRaftStorage.dropSnapshotData). */
  dropSnapshotData(): void {
    this.snap = { metadata: this.snap.metadata, data: EMPTY_DATA };
  }

  /** Discards entries up to and including compactIndex (paper section 7, log compaction). */
  compact(compactIndex: number): void {
    const offset = this.ents[0]!.index;
    if (compactIndex <= offset) return;
    if (compactIndex > this.lastIndex()) throw new RaftError('ErrUnavailable', `compact ${compactIndex} beyond ${this.lastIndex()}`);
    const i = compactIndex - offset;
    const head: Entry = { index: this.ents[i]!.index, term: this.ents[i]!.term, type: 'normal', data: EMPTY_DATA };
    this.ents = [head, ...this.ents.slice(i + 1)];
  }

  /**
   * Appends entries, truncating any existing suffix they conflict with (the entries are the
   * new truth from the leader). Entries before firstIndex are ignored.
   */
  append(entries: readonly Entry[]): void {
    if (entries.length === 0) return;
    const first = this.firstIndex();
    const last = entries[0]!.index + entries.length - 1;
    if (last < first) return;
    let ents = entries;
    if (first > ents[0]!.index) ents = ents.slice(first - ents[0]!.index);
    const offset = ents[0]!.index - this.ents[0]!.index;
    if (offset > this.ents.length) throw new RaftError('ErrInvariant', `gap: appending ${ents[0]!.index} after ${this.lastIndex()}`);
    if (offset < this.ents.length) this.ents.length = offset;
    for (const e of ents) this.ents.push(e);
  }
}
