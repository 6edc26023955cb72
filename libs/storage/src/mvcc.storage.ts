/**
 * `Storage` on the MVCC store and a Proposer (docs/storage.md). Reads go to the local store
 * after the consistency step the caller asked for; writes are etcd-style transactions proposed
 * through the Proposer (local fsynced log now, Raft later), exactly as Kubernetes' etcd3 storage
 * (k8s.io/apiserver/pkg/storage/etcd3/store.go) builds create/update/delete on Txn.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { deepFreeze, type KubeObject } from '@app/apimachinery';
import { LocalProposer, MvccError, compactCommand, MvccStore, type KeyValue, type MvccEvent, type Proposer, type TxnCommand, type TxnResult } from '@app/mvcc';
import {
  NO_CHANGE,
  sinkFailed,
  StorageError,
  type ListOptions,
  type ListResult,
  type Preconditions,
  type ReadConsistency,
  type Storage,
  type StorageEvent,
  type TryUpdate,
  type WatchHandle,
  type WatchOptions,
  type WatchSink,
} from './storage.interface.js';
import { checkPreconditions, decodeStoredObject, encodeStoredObject, isCorruptObject, ListDecoder } from './storage.codec.js';

/** Options of MvccStorage. */
export interface MvccStorageOptions {
  /**
   * Longest wait (ms) for a "not older than"/"exact" revision that is not applied yet before
   * TooLargeResourceVersion (conventions.md: "may wait briefly and then time out with 504").
   * Default 3000.
   */
  revisionWaitMs?: number;
  /**
   * Compaction period and retained history window (ms). Each tick compacts to the revision seen
   * at the previous tick, so at least one full period of history is kept. Default 300000
   * (5 minutes, DESIGN.md "Storage model"); 0 disables compaction.
   */
  compactionIntervalMs?: number;
  /** Give up a guaranteedUpdate/delete after this many lost compare-and-swaps (default 100). */
  maxConflictRetries?: number;
  /**
   * Revisions a watch's replay of the history reads at a time (default 1000): a watch from an
   * old resourceVersion never holds the whole history it replays at once.
   */
  replayWindowRevisions?: number;
  /**
   * Bytes of values that end a replay window early, between two revisions (default 4 MiB): a
   * window of large objects holds about this much, not a thousand of them.
   */
  replayWindowBytes?: number;
  /**
   * Live events a watch holds while its replay waits for the sink (default 10000). Past that it
   * drops them and reads them from the history with the rest of its replay, so a watcher that
   * does not read holds a bounded number of events, however fast the writes come.
   */
  replayHeldEvents?: number;
  /**
   * Deep-freezes the objects of live watch events, which every watcher of this storage is given
   * the same of (a test switch: a watcher that changes one in place fails at once instead of
   * changing what the others see). Default false.
   */
  freezeSharedEvents?: boolean;
}

/** Storage implemented on MvccStore (reads) + Proposer (writes). Owns both: close() closes them. */
export class MvccStorage implements Storage {
  private readonly revisionWaitMs: number;
  private readonly maxRetries: number;
  private readonly replayWindow: number;
  private readonly replayWindowBytes: number;
  private readonly heldEvents: number;
  private readonly freezeSharedEvents: boolean;
  private readonly watches = new Set<() => void>();
  private compactionTimer: NodeJS.Timeout | undefined;
  private compactionMark: number;
  private closed = false;

  constructor(
    private readonly store: MvccStore,
    private readonly proposer: Proposer,
    opts: MvccStorageOptions = {},
  ) {
    this.revisionWaitMs = opts.revisionWaitMs ?? 3000;
    this.maxRetries = opts.maxConflictRetries ?? 100;
    this.replayWindow = Math.max(1, opts.replayWindowRevisions ?? 1000);
    this.replayWindowBytes = Math.max(1, opts.replayWindowBytes ?? 4 << 20);
    this.heldEvents = Math.max(1, opts.replayHeldEvents ?? 10_000);
    this.freezeSharedEvents = opts.freezeSharedEvents ?? false;
    this.compactionMark = store.currentRevision();
    const interval = opts.compactionIntervalMs ?? 300_000;
    if (interval > 0) {
      this.compactionTimer = setInterval(() => void this.compactionTick(), interval);
      this.compactionTimer.unref();
    }
  }

  currentRevision(): number {
    return this.store.currentRevision();
  }

  settled(): Promise<void> {
    return this.proposer.settled?.() ?? Promise.resolve();
  }

  compactedRevision(): number {
    return this.store.compactedRevision();
  }

  /**
   * One compaction step: compact to the revision recorded one period ago, then record the
   * current one. Like kube-apiserver's compactor, errors are ignored and retried next period.
   * The compaction is a command through the proposer, so in a Raft group every replica compacts
   * at the same log position (the same revisions answer 410 on every node); only the leader
   * proposes it, while every node records its marks and can take over after an election. The
   * deletions run beside later writes (MvccStore.compact); this resolves once they are done here.
   */
  async compactionTick(): Promise<void> {
    const target = this.compactionMark;
    this.compactionMark = this.store.currentRevision();
    if (target <= this.store.compactedRevision()) return;
    if (this.proposer.leads && !this.proposer.leads()) return;
    try {
      await this.proposer.propose(compactCommand(target));
      await this.store.whenPurged();
    } catch {
      // Next period.
    }
  }

  // ---- encoding -------------------------------------------------------------------------

  /** JSON bytes of the object without metadata.resourceVersion (it is derived from modRevision). */
  private encode(key: string, obj: KubeObject): Uint8Array {
    return encodeStoredObject(key, obj);
  }

  /** Parses stored bytes and sets resourceVersion (default: the value's modRevision). */
  private decode(kv: KeyValue, resourceVersion: number | undefined = kv.modRevision): KubeObject {
    return this.parse(kv.key, kv.value, resourceVersion);
  }

  private parse(key: string, bytes: Uint8Array, resourceVersion: number | undefined): KubeObject {
    return decodeStoredObject(key, bytes, resourceVersion);
  }

  // ---- errors and consistency -----------------------------------------------------------

  private mapError(key: string, e: unknown, requested?: number): never {
    if (e instanceof StorageError) throw e;
    if (e instanceof MvccError) {
      const current = this.store.currentRevision();
      switch (e.code) {
        case 'Compacted':
          throw new StorageError('Compacted', key, `The resourceVersion for the provided watch/list is too old. ${e.message}`, current, requested);
        case 'FutureRevision':
          throw new StorageError('TooLargeResourceVersion', key, `Too large resource version: ${requested}, current: ${current}`, current, requested);
        case 'Closed':
          throw new StorageError('Unavailable', key, e.message);
        default:
          throw new StorageError('Internal', key, e.message);
      }
    }
    throw new StorageError('Internal', key, e instanceof Error ? e.message : String(e));
  }

  private checkOpen(key: string): void {
    if (this.closed) throw new StorageError('Unavailable', key, 'storage is closed');
  }

  /** Waits (bounded) until the local store applied `revision`. */
  private async waitFor(key: string, revision: number): Promise<void> {
    if (!Number.isSafeInteger(revision) || revision < 0) throw new StorageError('Internal', key, `invalid revision ${revision}`);
    if (await this.store.waitForRevision(revision, this.revisionWaitMs)) return;
    const current = this.store.currentRevision();
    throw new StorageError('TooLargeResourceVersion', key, `Too large resource version: ${revision}, current: ${current}`, current, revision);
  }

  /** Performs the consistency step; returns the revision to read at (undefined: latest). */
  private async prepareRead(key: string, c: ReadConsistency): Promise<number | undefined> {
    this.checkOpen(key);
    switch (c.mode) {
      case 'MostRecent':
        try {
          await this.proposer.readBarrier();
        } catch (e) {
          this.mapError(key, e);
        }
        return undefined;
      case 'Any':
        return undefined;
      case 'NotOlderThan':
        await this.waitFor(key, c.revision);
        return undefined;
      case 'Exact':
        await this.waitFor(key, c.revision);
        if (c.revision < this.store.compactedRevision()) {
          const current = this.store.currentRevision();
          throw new StorageError(
            'Compacted',
            key,
            `The resourceVersion ${c.revision} is too old (compacted ${this.store.compactedRevision()})`,
            current,
            c.revision,
          );
        }
        return c.revision;
    }
  }

  private async propose(key: string, cmd: TxnCommand): Promise<TxnResult> {
    this.checkOpen(key);
    try {
      const r = await this.proposer.propose(cmd);
      if (r.error) throw new StorageError('Internal', key, `command rejected: ${r.error}`);
      return r;
    } catch (e) {
      this.mapError(key, e);
    }
  }

  // ---- reads ----------------------------------------------------------------------------

  async get(key: string, consistency: ReadConsistency): Promise<KubeObject | undefined> {
    const at = await this.prepareRead(key, consistency);
    let kv: KeyValue | undefined;
    try {
      kv = await this.store.get(key, at);
    } catch (e) {
      this.mapError(key, e, at);
    }
    return kv && this.decode(kv);
  }

  async list(prefix: string, opts: ListOptions): Promise<ListResult> {
    const at = await this.prepareRead(prefix, opts.consistency);
    if (opts.key !== undefined) return this.listOne(prefix, opts.key, at, opts);
    const decoded = new Map<KeyValue, KubeObject>();
    const predicate = opts.predicate;
    // Values that do not decode are gathered and fail the list together, naming their keys.
    const decoder = new ListDecoder(undefined, opts.kind);
    const filter = predicate
      ? (kv: KeyValue): boolean => {
          const obj = decoder.decode(kv.key, kv.value, kv.modRevision);
          if (!obj) return false;
          decoded.set(kv, obj);
          return predicate(obj);
        }
      : undefined;
    let res;
    try {
      res = await this.store.range(prefix, { atRevision: at, limit: opts.limit, startAfter: opts.startAfterKey, filter });
    } catch (e) {
      this.mapError(prefix, e, at);
    }
    const items: KubeObject[] = [];
    for (const kv of res.kvs) {
      const obj = decoded.get(kv) ?? decoder.decode(kv.key, kv.value, kv.modRevision);
      if (obj) items.push(obj);
    }
    if (!opts.skipUndecodable) decoder.check(prefix);
    const out: ListResult = { items, revision: res.revision };
    if (res.more && res.kvs.length > 0) {
      out.continueAfterKey = res.kvs[res.kvs.length - 1]!.key;
      out.remaining = res.remaining;
    }
    return out;
  }

  /**
   * A list narrowed to `key`: the range of keys starting with `key`, one deep. The key itself
   * sorts first among them, so a one-key page holds it when it exists at the revision.
   */
  private async listOne(prefix: string, key: string, at: number | undefined, opts: ListOptions): Promise<ListResult> {
    let res;
    try {
      res = await this.store.range(key, { atRevision: at, limit: 1 });
    } catch (e) {
      this.mapError(prefix, e, at);
    }
    const kv = res.kvs[0];
    const wanted = kv !== undefined && kv.key === key && key.startsWith(prefix) && (opts.startAfterKey === undefined || key > opts.startAfterKey);
    const decoder = new ListDecoder(undefined, opts.kind);
    const obj = wanted ? decoder.decode(kv.key, kv.value, kv.modRevision) : undefined;
    if (!opts.skipUndecodable) decoder.check(prefix);
    return { items: obj && (!opts.predicate || opts.predicate(obj)) ? [obj] : [], revision: res.revision };
  }

  // ---- writes ---------------------------------------------------------------------------

  async create(key: string, obj: KubeObject, opts: { dryRun?: boolean } = {}): Promise<KubeObject> {
    const bytes = this.encode(key, obj);
    if (opts.dryRun) {
      await this.prepareRead(key, { mode: 'MostRecent' });
      if (await this.store.get(key)) throw new StorageError('KeyExists', key, `key ${key} already exists`);
      return this.parse(key, bytes, undefined);
    }
    // Put-if-absent: the compare runs in the state machine, atomically with the put.
    const r = await this.propose(key, { compares: [{ key, target: 'absent' }], success: [{ type: 'put', key, value: bytes }], failure: [] });
    if (!r.succeeded) throw new StorageError('KeyExists', key, `key ${key} already exists`);
    return this.decode(r.results[0]!.current!);
  }

  async guaranteedUpdate(
    key: string,
    tryUpdate: TryUpdate,
    opts: { preconditions?: Preconditions; dryRun?: boolean; createIfMissing?: () => KubeObject | undefined } = {},
  ): Promise<{ object: KubeObject; created: boolean; changed: boolean }> {
    this.checkOpen(key);
    // The first attempt uses local state; a lost compare-and-swap returns the winner's state
    // (the failure branch's get), so retries need no extra read (etcd3 store.GuaranteedUpdate).
    // Local state may lag on a follower: any answer not backed by a committed write (not found,
    // a failed precondition, an error from tryUpdate, no change, dry run) is given only after a
    // quorum read barrier and a re-read, as Kubernetes re-reads before failing on cached state.
    let kv = await this.store.get(key);
    let fresh = false;
    const refresh = async (): Promise<void> => {
      await this.prepareRead(key, { mode: 'MostRecent' });
      kv = await this.store.get(key);
      fresh = true;
    };
    for (let attempt = 0; ; attempt++) {
      if (attempt > this.maxRetries) throw new StorageError('Conflict', key, `too many conflicting updates of ${key}`);
      let current: KubeObject;
      let creating = false;
      let result: KubeObject | typeof NO_CHANGE;
      try {
        if (kv) {
          current = this.decode(kv);
          checkPreconditions(key, current, opts.preconditions);
        } else {
          const initial = opts.createIfMissing?.();
          if (!initial) throw new StorageError('KeyNotFound', key, `key ${key} not found`);
          current = this.parse(key, this.encode(key, initial), undefined);
          creating = true;
        }
        result = await tryUpdate(current);
      } catch (e) {
        if (fresh) throw e;
        await refresh();
        continue;
      }
      const next = result === NO_CHANGE ? (creating ? current : undefined) : result;
      const bytes = next ? this.encode(key, next) : undefined;
      const noWrite = !next || (kv !== undefined && bytes !== undefined && Buffer.from(bytes).equals(Buffer.from(kv.value)));
      if ((noWrite || opts.dryRun) && !fresh) {
        await refresh();
        continue;
      }
      if (noWrite) return { object: this.decode(kv!), created: false, changed: false };
      if (opts.dryRun) return { object: this.parse(key, bytes!, kv?.modRevision), created: creating, changed: true };
      const compare = kv ? { key, target: 'modRevision' as const, value: kv.modRevision } : { key, target: 'absent' as const };
      const r = await this.propose(key, { compares: [compare], success: [{ type: 'put', key, value: bytes! }], failure: [{ type: 'get', key }] });
      if (r.succeeded) return { object: this.decode(r.results[0]!.current!), created: creating, changed: true };
      kv = r.results[0]?.current;
      fresh = true;
    }
  }

  async delete(
    key: string,
    opts: { preconditions?: Preconditions; dryRun?: boolean; validate?: (current: KubeObject) => void | Promise<void> } = {},
  ): Promise<KubeObject> {
    this.checkOpen(key);
    // As in guaranteedUpdate: answers not backed by a committed write follow a read barrier.
    let kv = await this.store.get(key);
    let fresh = false;
    for (let attempt = 0; ; attempt++) {
      if (attempt > this.maxRetries) throw new StorageError('Conflict', key, `too many conflicting writes to ${key}`);
      let current: KubeObject;
      try {
        if (!kv) throw new StorageError('KeyNotFound', key, `key ${key} not found`);
        current = this.decode(kv);
        checkPreconditions(key, current, opts.preconditions);
        if (opts.validate) await opts.validate(this.decode(kv));
        if (opts.dryRun && !fresh) throw new StorageError('Internal', key, 'dry run answers from fresh state only');
      } catch (e) {
        if (fresh) throw e;
        await this.prepareRead(key, { mode: 'MostRecent' });
        kv = await this.store.get(key);
        fresh = true;
        continue;
      }
      if (opts.dryRun) return current;
      const r = await this.propose(key, {
        compares: [{ key, target: 'modRevision', value: kv.modRevision }],
        success: [{ type: 'delete', key }],
        failure: [{ type: 'get', key }],
      });
      if (r.succeeded) return this.decode(r.results[0]!.prev!, r.revision);
      // Someone wrote in between: re-check preconditions and validation on the new state.
      kv = r.results[0]?.current;
      fresh = true;
    }
  }

  async deleteUndecodable(key: string, opts: { dryRun?: boolean } = {}): Promise<{ readable: true } | { readable: false; revision: number }> {
    await this.prepareRead(key, { mode: 'MostRecent' });
    const kv = await this.store.get(key);
    if (!kv) throw new StorageError('KeyNotFound', key, `key ${key} not found`);
    try {
      this.decode(kv);
      return { readable: true };
    } catch (e) {
      if (!isCorruptObject(e)) throw e;
    }
    if (opts.dryRun) return { readable: false, revision: this.store.currentRevision() };
    const r = await this.propose(key, { compares: [{ key, target: 'modRevision', value: kv.modRevision }], success: [{ type: 'delete', key }], failure: [] });
    if (!r.succeeded) throw new StorageError('Conflict', key, `${key} was written while it was being deleted`);
    return { readable: false, revision: r.revision };
  }

  // ---- watch ----------------------------------------------------------------------------

  /**
   * Decoded live events, shared by every watcher: the bus hands the same MvccEvent to all
   * subscribers, so each write is JSON-parsed once however many watchers see it.
   */
  private readonly decodedLive = new WeakMap<MvccEvent, StorageEvent>();

  private sharedStorageEvent(e: MvccEvent): StorageEvent {
    let se = this.decodedLive.get(e);
    if (!se) {
      se = this.toStorageEvent(e);
      if (this.freezeSharedEvents) {
        deepFreeze(se.object);
        deepFreeze(se.prevObject);
      }
      this.decodedLive.set(e, se);
    }
    return se;
  }

  private toStorageEvent(e: MvccEvent): StorageEvent {
    if (e.type === 'delete') {
      const prev = e.prevValue!;
      return { type: 'DELETED', key: e.key, object: this.decode(prev, e.revision), prevObject: this.decode(prev), revision: e.revision };
    }
    if (e.prevValue) {
      return { type: 'MODIFIED', key: e.key, object: this.decode(e.value), prevObject: this.decode(e.prevValue), revision: e.revision };
    }
    return { type: 'ADDED', key: e.key, object: this.decode(e.value), revision: e.revision };
  }

  /**
   * Subscribes to live events first, then reads history after `afterRevision` up to revision H
   * from one snapshot; live events buffered meanwhile are delivered only when above H. So the
   * switch from replay to live has neither gaps nor duplicates.
   */
  watch(opts: WatchOptions, sink: WatchSink): WatchHandle {
    const matches = opts.recursive ? (k: string) => k.startsWith(opts.key) : (k: string) => k === opts.key;
    let stopped = false;
    let replaying = true;
    let threshold = opts.afterRevision;
    let buffer: MvccEvent[] = [];
    let delivered = opts.afterRevision;

    const stop = (): void => {
      if (stopped) return;
      stopped = true;
      unsubscribe();
      unreset();
      this.watches.delete(stop);
      buffer = [];
    };
    const fail = (err: StorageError): void => {
      if (stopped) return;
      stop();
      sink.error(err);
    };
    const deliver = (e: MvccEvent, live: boolean): void => {
      if (stopped) return;
      let se: StorageEvent;
      try {
        se = live ? this.sharedStorageEvent(e) : this.toStorageEvent(e);
        delivered = e.revision;
      } catch (err) {
        fail(err instanceof StorageError ? err : new StorageError('Internal', e.key, String(err)));
        return;
      }
      try {
        sink.event(se);
      } catch (err) {
        // A sink that throws cannot be trusted to have seen the event: end the watch.
        fail(sinkFailed(opts.key, err));
      }
    };

    // Live events that arrive while replaying are held; past heldEvents they are dropped (the
    // count `drops` tells the replay to read them from the history instead).
    let drops = 0;
    const unsubscribe = this.store.subscribe((e) => {
      if (!matches(e.key)) return;
      if (replaying) {
        if (buffer.length >= this.heldEvents) {
          buffer = [];
          drops++;
        }
        buffer.push(e);
      } else if (e.revision > threshold) deliver(e, true);
    });
    // Replays history after `from`, a window of revisions at a time (replayWindowRevisions, and
    // fewer when their values pass replayWindowBytes), reading each next window once the sink is
    // ready for more, then switches to live events (held meanwhile). If held events were dropped
    // while a window was read, the replay goes on from the history past it. A newer catch-up
    // supersedes one still in flight.
    let generation = 0;
    const match = opts.recursive ? { prefix: opts.key } : { key: opts.key };
    const catchUp = (from: number): void => {
      const gen = ++generation;
      replaying = true;
      buffer = [];
      const window = (after: number): void => {
        const until = after + this.replayWindow;
        const dropsBefore = drops;
        this.store.eventsAfter(after, match, { until, maxBytes: this.replayWindowBytes }).then(
          ({ events, revision, through }) => {
            if (gen !== generation || stopped) return;
            for (const e of events) deliver(e, false);
            if (stopped) return;
            if (through < revision || drops !== dropsBefore) {
              // Events past this read's snapshot that were dropped lie in the history now.
              const next = through;
              const waiting = sink.ready?.();
              if (waiting === undefined) {
                window(next);
                return;
              }
              const go = (): void => {
                if (gen === generation && !stopped) window(next);
              };
              waiting.then(go, go);
              return;
            }
            threshold = Math.max(from, revision);
            replaying = false;
            const pending = buffer;
            buffer = [];
            for (const e of pending) if (e.revision > threshold) deliver(e, true);
          },
          (err: unknown) => {
            if (gen !== generation) return;
            try {
              this.mapError(opts.key, err, from);
            } catch (se) {
              fail(se as StorageError);
            }
          },
        );
      };
      window(from);
    };
    // A snapshot install replaced this node's history with the leader's (which reaches back to
    // the leader's compacted revision): go on from the last event delivered when the new history
    // still holds it, else end with 410 (Compacted) so the client relists.
    const unreset = this.store.onReset(() => {
      if (!stopped) catchUp(delivered);
    });
    this.watches.add(stop);

    if (this.closed) {
      fail(new StorageError('Unavailable', opts.key, 'storage is closed'));
    } else {
      catchUp(opts.afterRevision);
    }
    // The bus emits synchronously right after the store's revision advanced, so once replay is
    // over every event up to currentRevision() has reached the sink.
    const progress = (): number => (replaying || stopped ? delivered : Math.max(delivered, threshold, this.store.currentRevision()));
    return { stop, progress };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.compactionTimer) clearInterval(this.compactionTimer);
    for (const stop of [...this.watches]) stop();
    await this.proposer.close();
    await this.store.close();
  }
}

/** Options of openLocalStorage. */
export interface LocalStorageOptions extends MvccStorageOptions {
  /** Node data directory; the store lives in `<dataDir>/mvcc` (created when missing). */
  dataDir: string;
  /** fsync each group-commit batch (default true). */
  sync?: boolean;
}

/** Opens a single-node storage: MvccStore + LocalProposer (group-committing fsynced log). */
export async function openLocalStorage(
  opts: LocalStorageOptions,
): Promise<{ storage: MvccStorage; store: MvccStore; proposer: LocalProposer; close: () => Promise<void> }> {
  const dir = join(opts.dataDir, 'mvcc');
  await mkdir(dir, { recursive: true });
  const store = await MvccStore.open(dir);
  const proposer = new LocalProposer(store, { sync: opts.sync ?? true });
  const storage = new MvccStorage(store, proposer, opts);
  return { storage, store, proposer, close: () => storage.close() };
}
