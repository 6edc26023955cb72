import type { RaftClock } from '../raft.clock.js';
import type { RaftNodeStorage } from '../raft.storage-port.js';
import { MemoryStorage, bootstrapSnapshot } from '../raft.storage.js';
import { type ConfState, type Entry, type HardState, type Snapshot, EMPTY_DATA, RaftError } from '../raft.types.js';
import type { SimRandom } from './sim.random.js';

/** One record, keyed as LevelDbRaftStorage keys it: `e<index>`, `h`, `s`. */
type SimRecord = { kind: 'e'; entry: Entry } | { kind: 'h'; hard: HardState } | { kind: 's'; snap: Snapshot };
/** A put (record) or a delete (no record). */
type SimOp = { key: string; rec?: SimRecord };
/** One write batch: one record of LevelDB's write-ahead log, atomic and checksummed. */
interface SimBatch {
  ops: SimOp[];
  /** Only part of the record reached the disk before the crash. */
  torn?: boolean;
}

/** What the disk did in a run (see SimNodeStats). */
export interface SimDiskStats {
  fsyncs: number;
  /** Written-but-unsynced batches that a crash kept (the OS had written them) or lost. */
  unsyncedKept: number;
  unsyncedLost: number;
  /** Crashes that left a torn last record, dropped at reopen by its checksum. */
  tornRecords: number;
}

function entryKey(i: number): string {
  return 'e' + i.toString(16).padStart(16, '0');
}

/**
 * The simulated disk of one node, modelled on LevelDbRaftStorage over LevelDB: each write is
 * one batch (one log record, atomic, checksummed). A batch is "written" at once and "synced"
 * only when an fsync covering it completes, a virtual delay later; the save's promise resolves
 * then, so the driver loop really waits while messages and proposals arrive. A write without
 * sync (a commit-only hard state, the range clear after compaction) resolves at once and is
 * synced by the next fsync. As in LevelDbRaftStorage, reads answer from an in-memory mirror that
 * a write updates only once it resolved.
 *
 * crash() keeps the synced batches and, of the written ones, a prefix (all of them when only the
 * process died, any number on a power loss); the first lost one may be torn, and reopen drops it
 * as LevelDB's log reader drops a record whose checksum fails at the tail: a batch is all there
 * or not at all, never partly applied.
 */
export class SimDisk implements RaftNodeStorage {
  private readonly synced = new Map<string, SimRecord>();
  private written: SimBatch[] = [];
  private mem = new MemoryStorage();
  /** The mirror's hard state carries a commit index no batch has written yet (see save). */
  private hardStateUnwritten = false;
  private clock: RaftClock | undefined;
  private lastDoneAt = 0;
  /** Writes started and completed: a Ready's save is pending while they differ. */
  started = 0;
  completed = 0;
  readonly stats: SimDiskStats = { fsyncs: 0, unsyncedKept: 0, unsyncedLost: 0, tornRecords: 0 };
  /**
   * Test-only fault (the broken variant of the simulator): while it returns true, an fsync-ed
   * write resolves before the fsync, as if the driver did not wait for it; the batch stays
   * unsynced until a later fsync covers it.
   */
  ackBeforeSync: (() => boolean) | undefined;

  constructor(
    readonly id: number,
    private readonly rng: SimRandom,
    /** Range of the virtual fsync latency, ms. */
    private readonly fsyncMs: readonly [number, number],
    /** Called with every batch of entries once saved (the log-matching check). */
    private readonly onSaved: (id: number, entries: readonly Entry[], prevTerm: number) => void,
  ) {}

  /** Binds the disk to the clock of the process that opened it (a new one after each restart). */
  attach(clock: RaftClock): void {
    this.clock = clock;
    this.lastDoneAt = 0;
  }

  isEmpty(): boolean {
    return this.mem.snapshot().metadata.index === 0 && this.mem.lastIndex() === 0 && this.mem.hardState().term === 0;
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

  async bootstrap(voters: readonly number[]): Promise<void> {
    await this.save({ snapshot: bootstrapSnapshot(voters), hardState: { term: 1, vote: 0, commit: 1 }, entries: [] });
  }

  /** The same batch LevelDbRaftStorage.save writes. */
  async save(rd: { hardState?: HardState; entries: readonly Entry[]; snapshot?: Snapshot }, mustSync = true): Promise<void> {
    // A commit-only change stays in memory and goes with the next batch (LevelDbRaftStorage.save).
    if (!mustSync && !rd.snapshot && rd.entries.length === 0 && rd.hardState) {
      const cur = this.mem.hardState();
      if (rd.hardState.term === cur.term && rd.hardState.vote === cur.vote) {
        this.mem.setHardState(rd.hardState);
        this.hardStateUnwritten = true;
        return;
      }
    }
    const ops: SimOp[] = [];
    const stale: SimOp[] = [];
    if (rd.snapshot) {
      const si = rd.snapshot.metadata.index;
      const logFirst = this.mem.firstIndex();
      const logLast = this.mem.lastIndex();
      for (let i = Math.max(logFirst, si + 1); i <= logLast; i++) ops.push({ key: entryKey(i) });
      for (let i = logFirst; i <= Math.min(logLast, si); i++) stale.push({ key: entryKey(i) });
      ops.push({ key: 's', rec: { kind: 's', snap: rd.snapshot } });
    }
    const oldLast = rd.snapshot ? rd.snapshot.metadata.index : this.mem.lastIndex();
    const first = rd.snapshot ? rd.snapshot.metadata.index + 1 : this.mem.firstIndex();
    if (rd.entries.length > 0) {
      for (const e of rd.entries) if (e.index >= first) ops.push({ key: entryKey(e.index), rec: { kind: 'e', entry: e } });
      const newLast = rd.entries[rd.entries.length - 1]!.index;
      for (let i = newLast + 1; i <= oldLast; i++) ops.push({ key: entryKey(i) });
    }
    const hardState = rd.hardState ?? (this.hardStateUnwritten ? this.mem.hardState() : undefined);
    if (hardState) ops.push({ key: 'h', rec: { kind: 'h', hard: hardState } });
    if (ops.length === 0) return;
    await this.write(ops, mustSync, () => {
      if (rd.snapshot) this.mem.applySnapshot(rd.snapshot);
      this.mem.append(rd.entries);
      if (rd.hardState) this.mem.setHardState(rd.hardState);
      if (hardState) this.hardStateUnwritten = false;
      if (rd.entries.length > 0) {
        let prevTerm: number;
        try {
          prevTerm = this.mem.term(rd.entries[0]!.index - 1);
        } catch {
          prevTerm = -1;
        }
        this.onSaved(this.id, rd.entries, prevTerm);
      }
    });
    // LevelDbRaftStorage clears the entries below the snapshot without sync once it is durable.
    if (stale.length > 0) this.written.push({ ops: stale });
  }

  async createSnapshot(i: number, confState: ConfState, data: Uint8Array, compactTo: number = i): Promise<Snapshot> {
    if (i <= this.mem.snapshot().metadata.index)
      throw new RaftError('ErrSnapOutOfDate', `snapshot at ${i} not newer than ${this.mem.snapshot().metadata.index}`);
    const snap: Snapshot = { metadata: { index: i, term: this.mem.term(i), confState }, data };
    const upTo = Math.min(compactTo, i);
    const from = this.mem.firstIndex();
    await this.write([{ key: 's', rec: { kind: 's', snap } }], true, () => {
      this.mem.createSnapshot(i, confState, data);
      this.mem.compact(upTo);
    });
    const clear: SimOp[] = [];
    for (let k = from; k <= upTo; k++) clear.push({ key: entryKey(k) });
    if (clear.length > 0) this.written.push({ ops: clear });
    return snap;
  }

  async dropSnapshotData(): Promise<void> {
    const current = this.mem.snapshot();
    if (current.data.length === 0 && current.file === undefined) return;
    const snap: Snapshot = { metadata: current.metadata, data: EMPTY_DATA };
    await this.write([{ key: 's', rec: { kind: 's', snap } }], true, () => this.mem.dropSnapshotData());
  }

  /** Whether entry `index` of term `term` (any term when omitted) is on the synced disk, itself or under the snapshot. */
  durablyHolds(index: number, term?: number): boolean {
    const s = this.synced.get('s');
    if (s?.kind === 's' && s.snap.metadata.index >= index) return term === undefined || s.snap.metadata.index > index || s.snap.metadata.term === term;
    const e = this.synced.get(entryKey(index));
    return e?.kind === 'e' && (term === undefined || e.entry.term === term);
  }

  /** The synced hard state. */
  durableHardState(): HardState | undefined {
    const h = this.synced.get('h');
    return h?.kind === 'h' ? h.hard : undefined;
  }

  /**
   * The machine lost power (or only the process died, `processOnly`): keeps what the rules
   * above keep and reopens, as LevelDbRaftStorage.open does. Pending writes never resolve.
   */
  crash(processOnly: boolean): void {
    const n = this.written.length;
    const kept = processOnly ? n : this.rng.int(0, n);
    const survivors = this.written.slice(0, kept);
    if (kept < n && this.rng.chance(0.5)) {
      const b = this.written[kept]!;
      survivors.push({ ops: b.ops.slice(0, this.rng.int(0, b.ops.length)), torn: true });
    }
    this.stats.unsyncedKept += kept;
    this.stats.unsyncedLost += n - kept;
    this.written = [];
    this.started = this.completed = 0;
    this.clock = undefined;
    this.hardStateUnwritten = false;
    this.reopen(survivors);
  }

  /** Replays the log's records onto the tables and loads the mirror, verifying it. */
  private reopen(tail: readonly SimBatch[]): void {
    for (const b of tail) {
      if (b.torn) {
        // The checksum of a partly written record fails: LevelDB drops it (and it is the last).
        this.stats.tornRecords++;
        break;
      }
      this.applyOps(b.ops);
    }
    const mem = new MemoryStorage();
    const s = this.synced.get('s');
    if (s?.kind === 's') mem.applySnapshot(s.snap);
    const first = mem.firstIndex();
    const kept: Entry[] = [];
    const leftovers: string[] = [];
    const keys = [...this.synced.keys()].filter((k) => k.startsWith('e')).sort();
    for (const k of keys) {
      const e = (this.synced.get(k) as { entry: Entry }).entry;
      if (e.index < first) {
        leftovers.push(k);
        continue;
      }
      const expected = kept.length === 0 ? first : kept[kept.length - 1]!.index + 1;
      if (e.index !== expected) throw new RaftError('ErrCorrupt', `node ${this.id}: log gap after a crash: found ${e.index}, expected ${expected}`);
      kept.push(e);
    }
    mem.append(kept);
    for (const k of leftovers) this.synced.delete(k);
    const h = this.synced.get('h');
    if (h?.kind === 'h') mem.setHardState(h.hard);
    this.mem = mem;
  }

  private applyOps(ops: readonly SimOp[]): void {
    for (const op of ops) {
      if (op.rec) this.synced.set(op.key, op.rec);
      else this.synced.delete(op.key);
    }
  }

  /** Writes a batch; resolves (after `done` updated the mirror) once synced, or at once without sync. */
  private write(ops: SimOp[], sync: boolean, done: () => void): Promise<void> {
    const clock = this.clock;
    if (!clock) return new Promise<void>(() => undefined); // the process is gone
    const batch: SimBatch = { ops };
    this.written.push(batch);
    this.started++;
    const early = sync && this.ackBeforeSync?.() === true;
    const fsync = sync && !early;
    const now = clock.now();
    // One fsync at a time, in order: a later write never completes before an earlier one.
    const at = Math.max(now + (fsync ? this.rng.int(this.fsyncMs[0], this.fsyncMs[1]) : 0), this.lastDoneAt);
    this.lastDoneAt = at;
    return new Promise<void>((resolve) => {
      clock.setTimeout(() => {
        if (fsync) this.syncThrough(batch);
        this.completed++;
        done();
        resolve();
      }, at - now);
    });
  }

  /** An fsync of the log file: every batch written up to `batch` is now synced. */
  private syncThrough(batch: SimBatch): void {
    const k = this.written.indexOf(batch);
    if (k < 0) return;
    for (let i = 0; i <= k; i++) this.applyOps(this.written[i]!.ops);
    this.written.splice(0, k + 1);
    this.stats.fsyncs++;
  }
}
