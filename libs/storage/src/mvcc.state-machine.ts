/**
 * The MVCC store as a Raft state machine (docs/cluster.md "Writes"). Raft entry N carries one
 * encoded TxnCommand; applying it writes the command's effects AND appliedIndex = N in one
 * LevelDB batch (DESIGN.md "Storage model"), so the store never holds half an entry and its
 * appliedIndex() says exactly which prefix of the log it reflects.
 *
 * Durability: the batch is NOT fsynced. The Raft log (LevelDbRaftStorage) was fsynced before
 * the entry could commit, so the entry survives any crash; the store only has to be a PREFIX
 * of the log. LevelDB's write-ahead log gives that: a process crash (kill -9) loses nothing
 * written (it is in the OS page cache), and an OS crash usually loses a suffix of batches
 * (each batch is one checksummed log record). On restart RaftNode replays the committed log
 * after the store's appliedIndex() (or restores the Raft snapshot first when the store is
 * older than it), so a lost suffix is applied again, in order. LevelDB does not promise a
 * suffix for unsynced writes across a switch of its log file: the store marks each unsynced
 * batch and refuses to open with a hole (docs/cluster.md "Durability").
 */
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { BinReader, BinWriter, MvccError, decodeCommand, type ApplyEntry, type MvccStore, type TxnResult } from '@app/mvcc';
import type { AppliedEntry, StateMachine, StateMachineSnapshot } from '@app/raft';
import { EtcdApplier } from './etcd.applier.js';
import { decodeEtcdCommands, isEtcdCommand, isPackedEtcdPuts, type EtcdCommand, type EtcdResult } from './etcd.command.js';

const SNAPSHOT_MAGIC = 'kapi-mvcc-snapshot';
const EMPTY_BYTES = new Uint8Array(0);

/** Builds an empty store snapshot positioned at `index` (Raft's bootstrap snapshot has no data). */
export function emptyMvccSnapshot(index: number): Uint8Array {
  const w = new BinWriter(64);
  w.str(SNAPSHOT_MAGIC).u8(1).num(0).num(index).u8(0);
  return new Uint8Array(w.finish());
}

/** Reads (revision, appliedIndex) from the header of an MvccStore snapshot; throws MvccError('Corrupt'). */
export function mvccSnapshotHeader(data: Uint8Array): { revision: number; appliedIndex: number } {
  try {
    const r = new BinReader(data);
    if (r.str() !== SNAPSHOT_MAGIC) throw new Error('not an MVCC snapshot');
    const format = r.u8();
    if (format !== 1 && format !== 2) throw new Error(`unknown MVCC snapshot format ${format}`);
    const revision = r.num();
    return { revision, appliedIndex: r.num() };
  } catch (e) {
    throw new MvccError('Corrupt', `invalid snapshot header: ${(e as Error).message}`);
  }
}

/** Counters of the adapter, for /metrics. */
export interface StateMachineStats {
  applied: number;
  rejected: number;
  snapshotsTaken: number;
  snapshotsRestored: number;
}

/**
 * What apply() hands back to RaftNode: the result arrives once the entry's batch is written.
 * Deliberately not a thenable, so RaftNode does not wait for the write before it applies the
 * next entry (that is what lets consecutive entries share one LevelDB batch).
 */
export interface DeferredResult {
  readonly deferred: Promise<TxnResult>;
}

/** True when `v` is a DeferredResult. */
export function isDeferredResult(v: unknown): v is DeferredResult {
  return typeof v === 'object' && v !== null && (v as { deferred?: unknown }).deferred instanceof Promise;
}

/** The result of an applied etcd command: a TxnResult carrying the etcd answer. */
export interface EtcdTxnResult extends TxnResult {
  etcd: EtcdResult;
}

/** The result of an entry of packed Puts: each Put's answer, in order. */
export interface EtcdPackedResult extends TxnResult {
  etcdPuts: EtcdResult[];
}

interface Queued {
  entry: ApplyEntry;
  /**
   * The etcd commands of the entry (etcd.command.ts; several for packed Puts): evaluated at its
   * position, in order, by the EtcdApplier.
   */
  etcd?: EtcdCommand[];
  /** The entry packs several Puts: its result is an EtcdPackedResult. */
  packed?: boolean;
  rejected?: string;
  resolve(r: TxnResult): void;
  reject(e: unknown): void;
}

/**
 * Adapts MvccStore to the Raft StateMachine contract (libs/raft/src/raft.node.ts): apply is
 * deterministic (the same entries give the same store on every replica), appliedIndex is the
 * store's durable-prefix index, snapshot/restore ship the live state with export/import.
 *
 * Group apply: entries handed over while a batch is being written are queued and written
 * together as the next batch (in log order, so the result is the same as one by one); the
 * store's appliedIndex advances per batch. Readers that must see everything handed over
 * (ReadIndex reads) wait with waitApplied(); the proposer of an entry awaits its deferred
 * result, which resolves after its batch was written and its events were emitted.
 */
export class MvccStateMachine implements StateMachine {
  readonly stats: StateMachineStats = { applied: 0, rejected: 0, snapshotsTaken: 0, snapshotsRestored: 0 };
  private queue: Queued[] = [];
  private draining: Promise<void> | undefined;
  private handed: number;
  private written: number;
  private failed: Error | undefined;
  private failureListeners: ((e: Error) => void)[] = [];
  private waiters: { index: number; resolve(): void; reject(e: Error): void }[] = [];

  private readonly maxBatch: number;
  private readonly snapshotDir: string | undefined;
  /** Evaluates etcd commands and holds the replicated lease table (docs/etcd-api.md). */
  readonly etcd: EtcdApplier;

  /**
   * `snapshotDir`: where snapshot() writes its export, as a file handed to Raft (see
   * StateMachineSnapshot.file); without it the export is returned in memory.
   */
  constructor(
    private readonly store: MvccStore,
    opts: { maxBatch?: number; snapshotDir?: string } = {},
  ) {
    this.maxBatch = opts.maxBatch ?? 1024;
    this.snapshotDir = opts.snapshotDir;
    this.handed = store.appliedIndex();
    this.written = this.handed;
    this.etcd = new EtcdApplier(store);
  }

  /**
   * Queues entry N (unsynced, see the file comment). A malformed command is not an error of
   * the node: every replica rejects it the same way, advancing appliedIndex without effect, and
   * the proposer gets a TxnResult with `error`. After a failed write the node must stop: every
   * later call throws.
   */
  async apply(entry: AppliedEntry): Promise<DeferredResult> {
    if (this.failed) throw this.failed;
    let q!: Queued;
    const deferred = new Promise<TxnResult>((resolve, reject) => {
      q = { entry: { index: entry.index }, resolve, reject };
    });
    // Nobody may be waiting on a rejected proposal's promise: keep it from being "unhandled".
    deferred.catch(() => undefined);
    try {
      if (isEtcdCommand(entry.data)) {
        q.etcd = decodeEtcdCommands(entry.data);
        if (isPackedEtcdPuts(entry.data)) q.packed = true;
      } else q.entry = { index: entry.index, command: decodeCommand(entry.data) };
    } catch (e) {
      q.rejected = (e as Error).message;
    }
    this.queue.push(q);
    this.handed = entry.index;
    // Drained from a microtask, not a later turn of the event loop: the entries RaftNode applies
    // in the same pass join the queue while the first group's keys are read, and the proposer of
    // a lone write is not held behind the I/O callbacks of the next turn.
    this.draining ??= Promise.resolve().then(() => this.drain());
    return { deferred };
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        // An etcd command reads the state every earlier entry left: a run of etcd commands is
        // applied as one group by the EtcdApplier, after the MVCC commands before it were
        // written (those are grouped as before).
        const etcd = this.queue[0]!.etcd !== undefined;
        let n = 0;
        while (n < this.queue.length && n < this.maxBatch && (this.queue[n]!.etcd !== undefined) === etcd) n++;
        const batch = this.queue.splice(0, n);
        let results: (TxnResult | undefined)[];
        try {
          if (etcd) {
            // Answered once evaluated (EtcdApplier.stage): the write only has to land before
            // the entries count as written for readers (waitApplied), below.
            // One item per command; the Puts of a packed entry share its index (one store entry).
            const items: { index: number; cmd: EtcdCommand }[] = [];
            for (const q of batch) for (const cmd of q.etcd ?? []) items.push({ index: q.entry.index, cmd });
            const staged = await this.etcd.stage(items);
            let at = 0;
            for (const q of batch) {
              const n = q.etcd?.length ?? 0;
              const answers = staged.results.slice(at, at + n);
              at += n;
              this.stats.applied++;
              const a = answers[0]!;
              q.resolve(
                q.packed
                  ? ({ succeeded: true, revision: answers[n - 1]!.revision, results: [], etcdPuts: answers } as EtcdPackedResult)
                  : ({ succeeded: a.error === undefined, revision: a.revision, results: [], etcd: a } as EtcdTxnResult),
              );
            }
            await staged.written;
            results = batch.map(() => undefined);
          } else {
            results = await this.store.applyBatch(
              batch.map((q) => q.entry),
              { sync: false },
            );
          }
        } catch (e) {
          const failed = (this.failed = e instanceof Error ? e : new Error(String(e)));
          for (const q of [...batch, ...this.queue.splice(0)]) q.reject(failed);
          for (const w of this.waiters.splice(0)) w.reject(failed);
          for (const l of this.failureListeners.splice(0)) l(failed);
          return;
        }
        const revision = this.store.currentRevision();
        batch.forEach((q, i) => {
          const r = results[i];
          if (q.rejected !== undefined) {
            this.stats.rejected++;
            q.resolve({ succeeded: false, revision, results: [], error: q.rejected });
          } else if (etcd) {
            // Answered when staged (above).
          } else if (r) {
            this.stats.applied++;
            q.resolve(r);
          } else {
            q.reject(new MvccError('Corrupt', `entry ${q.entry.index} was not applied (index already applied)`));
          }
        });
        this.written = batch[batch.length - 1]!.entry.index;
        const ready = this.waiters.filter((w) => w.index <= this.written);
        this.waiters = this.waiters.filter((w) => w.index > this.written);
        for (const w of ready) w.resolve();
      }
    } finally {
      this.draining = undefined;
    }
  }

  /**
   * Calls `listener` once a write of the store failed (at once, asynchronously, when one
   * already has): the entries it held were handed over as applied, so the node must stop.
   */
  onFailure(listener: (e: Error) => void): void {
    const failed = this.failed;
    if (failed) queueMicrotask(() => listener(failed));
    else this.failureListeners.push(listener);
  }

  /** Resolves once every entry handed over so far (or up to `index`) is written to the store. */
  waitApplied(index = this.handed): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    if (this.written >= index) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.push({ index, resolve, reject }));
  }

  appliedIndex(): number {
    return this.store.appliedIndex();
  }

  /** Makes every entry handed over so far durable in the store; returns the durable index. */
  async sync(): Promise<number> {
    await this.waitApplied();
    return this.store.sync();
  }

  /**
   * Exports the store once queued entries are written; the index is the one inside the export.
   * With a snapshot directory the export goes to a new file there, read from LevelDB and
   * written piece by piece (memory does not grow with the store).
   */
  async snapshot(): Promise<StateMachineSnapshot> {
    await this.waitApplied();
    if (this.snapshotDir !== undefined) {
      const file = join(this.snapshotDir, `send-${Date.now()}-${randomBytes(4).toString('hex')}.snap`);
      const { appliedIndex } = await this.store.exportSnapshotToFile(file);
      this.stats.snapshotsTaken++;
      return { index: appliedIndex, term: 0, data: EMPTY_BYTES, file };
    }
    const data = await this.store.exportSnapshot();
    this.stats.snapshotsTaken++;
    return { index: mvccSnapshotHeader(data).appliedIndex, term: 0, data };
  }

  /**
   * Replaces the store with a snapshot (after queued entries are written), streamed from its
   * file when it has one. Raft's founding snapshot has empty data: it becomes an empty store at
   * that index. Malformed data fails with MvccError('Corrupt'), store unchanged.
   */
  async restore(s: StateMachineSnapshot): Promise<void> {
    await this.waitApplied();
    const file = s.file;
    if (file !== undefined) await this.store.importSnapshotFrom(() => createReadStream(file, { highWaterMark: 1 << 20 }));
    else await this.store.importSnapshot(s.data.length === 0 ? emptyMvccSnapshot(s.index) : s.data);
    await this.etcd.reload();
    this.handed = this.written = this.store.appliedIndex();
    this.stats.snapshotsRestored++;
  }
}
