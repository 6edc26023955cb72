/**
 * `Storage` on an external etcd v3 cluster (docs/storage-backends.md), built the way
 * kube-apiserver's etcd3 store (k8s.io/apiserver/pkg/storage/etcd3/store.go) is: reads are
 * Range requests, create is a Txn on create_revision == 0, updates and deletes are Txns on
 * mod_revision == the revision read, retried with the state the failed Txn returned. The value
 * encoding and key layout are the built-in store's (storage.codec.ts, storage.keys.ts), so
 * resourceVersions are etcd revisions.
 */
import type { KubeObject } from '@app/apimachinery';
import { Etcd3Client, Etcd3Error, etcdPrefixEnd, rev, type EtcdKeyValue, type EtcdRangeResponse, type Etcd3TxnResponse } from './etcd3.client.js';
import { Etcd3Compactor } from './etcd3.compactor.js';
import { Etcd3Watch } from './etcd3.watch.js';
import { Etcd3WatchHub, HUB_HELD_EVENTS } from './etcd3.watch-hub.js';

import { checkPreconditions, decodeStoredObject, encodeStoredObject, isCorruptObject, ListDecoder } from './storage.codec.js';
import {
  NO_CHANGE,
  StorageError,
  type ListOptions,
  type ListResult,
  type Preconditions,
  type ReadConsistency,
  type Storage,
  type TryUpdate,
  type WatchHandle,
  type WatchOptions,
  type WatchSink,
} from './storage.interface.js';

/** The key prefix of the storage keys the API layer uses (storage.keys.ts). */
const API_PREFIX = '/registry';

/** Options of Etcd3Storage. */
export interface Etcd3StorageOptions {
  /** etcd key prefix that replaces `/registry` (kube-apiserver's --etcd-prefix). Default `/registry`. */
  prefix?: string;
  /** Longest wait (ms) for a revision etcd has not reached yet (NotOlderThan, Exact). Default 3000. */
  revisionWaitMs?: number;
  /** Compaction period (ms), coordinated between API servers (etcd3.compactor.ts); 0 disables. Default 300000. */
  compactionIntervalMs?: number;
  /** Give up a guaranteedUpdate/delete after this many lost compare-and-swaps (default 100). */
  maxConflictRetries?: number;
  /** Least interval (ms) between the progress requests that let idle watches announce bookmarks. Default 250. */
  watchProgressIntervalMs?: number;
  /**
   * Watches of one key or prefix from recent revisions share one etcd watch (etcd3.watch-hub.ts).
   * Default true; false gives every watch an etcd watch of its own.
   */
  shareWatches?: boolean;
  /**
   * Deep-freezes the objects a shared etcd watch hands its watches, which all get the same (a
   * test switch: a watcher that changes one in place fails at once). Default false.
   */
  freezeSharedEvents?: boolean;
}

/** Converts between API keys (`/registry/...`) and etcd keys (`<prefix>/...`). */
export class Etcd3Keys {
  readonly prefix: string;
  constructor(prefix = API_PREFIX) {
    // kube-apiserver joins the prefix and the resource path with one '/': `/registry/` == `/registry`.
    let p = prefix.trim();
    while (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
    if (p === '/' || p === '') p = '';
    if (p !== '' && !p.startsWith('/')) p = `/${p}`;
    this.prefix = p;
  }
  /** The etcd key of an API key. */
  toEtcd(key: string): Buffer {
    if (!key.startsWith(`${API_PREFIX}/`)) throw new StorageError('Internal', key, `storage key outside ${API_PREFIX}/`);
    return Buffer.from(this.prefix + key.slice(API_PREFIX.length), 'utf8');
  }
  /** The etcd key of an API key as text, as errors name it (an operator's etcdctl finds it so). */
  readonly etcdName = (key: string): string => this.prefix + key.slice(API_PREFIX.length);
  /** The API key of an etcd key (undefined when outside the prefix). */
  fromEtcd(key: Buffer): string | undefined {
    const s = key.toString('utf8');
    if (!s.startsWith(`${this.prefix}/`)) return undefined;
    return API_PREFIX + s.slice(this.prefix.length);
  }
}

/** Storage on etcd. close() closes the client it was given. */
export class Etcd3Storage implements Storage {
  readonly keys: Etcd3Keys;
  private readonly revisionWaitMs: number;
  private readonly maxRetries: number;
  private readonly progressIntervalMs: number;
  private readonly watches = new Set<Etcd3Watch>();
  private readonly hubs = new Map<string, Etcd3WatchHub>();
  private readonly shareWatches: boolean;
  private readonly freezeSharedEvents: boolean;
  private readonly compactor: Etcd3Compactor | undefined;
  private latest = 0;
  private compacted = 0;
  private closed = false;

  constructor(
    readonly client: Etcd3Client,
    opts: Etcd3StorageOptions = {},
  ) {
    this.keys = new Etcd3Keys(opts.prefix);
    this.revisionWaitMs = opts.revisionWaitMs ?? 3000;
    this.maxRetries = opts.maxConflictRetries ?? 100;
    this.progressIntervalMs = opts.watchProgressIntervalMs ?? 250;
    this.shareWatches = opts.shareWatches ?? true;
    this.freezeSharedEvents = opts.freezeSharedEvents ?? false;
    const interval = opts.compactionIntervalMs ?? 300_000;
    if (interval > 0) this.compactor = new Etcd3Compactor(client, interval, (r) => this.observeCompacted(r));
  }

  /** Reads the current revision (linearizable), so currentRevision() is meaningful from the start. */
  async open(): Promise<this> {
    await this.range(Buffer.from(`${this.keys.prefix}/`), { count_only: true }, false);
    this.compactor?.start();
    return this;
  }

  /** The highest etcd revision any response has shown (etcd's revision is global). */
  currentRevision(): number {
    return this.latest;
  }

  /** The highest revision this server compacted to or saw reported as compacted. */
  compactedRevision(): number {
    return this.compacted;
  }

  /** Records a response header's revision. */
  observeRevision(r: number): void {
    if (r > this.latest) this.latest = r;
  }

  /** Records a compacted revision (from a compaction or a Compacted answer). */
  observeCompacted(r: number): void {
    if (r > this.compacted) this.compacted = r;
  }

  /** Runs one compaction step now (the timer's step; for tests and operators). */
  async compactionTick(): Promise<void> {
    await this.compactor?.tick();
  }

  // ---- errors ---------------------------------------------------------------------------

  /** Maps an etcd failure to a StorageError. */
  mapError(key: string, e: unknown, requested?: number): StorageError {
    if (e instanceof StorageError) return e;
    const msg = e instanceof Error ? e.message : String(e);
    if (/required revision has been compacted/.test(msg)) {
      return new StorageError('Compacted', key, `The resourceVersion for the provided watch/list is too old. ${msg}`, this.latest, requested);
    }
    if (/required revision is a future revision/.test(msg)) {
      return new StorageError('TooLargeResourceVersion', key, `Too large resource version: ${requested}, current: ${this.latest}`, this.latest, requested);
    }
    // etcd refuses writes while its apply lags its commit by too much: retry later (429).
    if (e instanceof Etcd3Error && e.grpcCode === 8 && /too many requests/.test(msg)) return new StorageError('TooManyRequests', key, msg);
    // etcd over its space quota (a NOSPACE alarm) refuses writes until an operator disarms it.
    if (e instanceof Etcd3Error && e.grpcCode === 8 && /database space exceeded/.test(msg)) return new StorageError('NoSpace', key, msg);
    if (e instanceof Etcd3Error && e.unavailable) return new StorageError('Unavailable', key, msg);
    if (e instanceof Etcd3Error && (e.grpcCode === 4 || e.grpcCode === 14)) return new StorageError('Unavailable', key, msg);
    return new StorageError('Internal', key, `etcd: ${msg}`);
  }

  private checkOpen(key: string): void {
    if (this.closed) throw new StorageError('Unavailable', key, 'storage is closed');
  }

  // ---- etcd calls -----------------------------------------------------------------------

  private async range(key: Buffer, req: object, serializable: boolean, rangeEnd?: Buffer): Promise<EtcdRangeResponse> {
    const r = await this.client.call<EtcdRangeResponse>('kv', 'Range', { key, ...(rangeEnd ? { range_end: rangeEnd } : {}), serializable, ...req }, true);
    this.observeRevision(rev(r.header.revision));
    return r;
  }

  private async txn(key: string, req: object): Promise<Etcd3TxnResponse> {
    this.checkOpen(key);
    try {
      const r = await this.client.call<Etcd3TxnResponse>('kv', 'Txn', req, false);
      this.observeRevision(rev(r.header.revision));
      return r;
    } catch (e) {
      throw this.mapError(key, e);
    }
  }

  private decode(key: string, kv: EtcdKeyValue, resourceVersion: number = rev(kv.mod_revision)): KubeObject {
    return decodeStoredObject(key, kv.value, resourceVersion, this.keys.etcdName);
  }

  /**
   * One Range with the consistency step of `c`: MostRecent linearizable, Any serializable,
   * Exact at the revision, NotOlderThan a read whose header reaches the revision (waiting,
   * bounded, while etcd has not reached it). Revisions not reached yet within the bound:
   * TooLargeResourceVersion.
   */
  private async read(apiKey: string, c: ReadConsistency, key: Buffer, req: object, rangeEnd?: Buffer): Promise<EtcdRangeResponse> {
    this.checkOpen(apiKey);
    const requested = c.mode === 'Exact' || c.mode === 'NotOlderThan' ? c.revision : undefined;
    if (requested !== undefined && (!Number.isSafeInteger(requested) || requested < 0))
      throw new StorageError('Internal', apiKey, `invalid revision ${requested}`);
    const deadline = Date.now() + this.revisionWaitMs;
    for (;;) {
      let r: EtcdRangeResponse;
      try {
        if (c.mode === 'Exact') r = await this.range(key, { ...req, revision: c.revision }, false, rangeEnd);
        // A serializable read first: served by any member at once; linearizable when it lags.
        else if (c.mode === 'NotOlderThan' && c.revision <= this.latest) r = await this.range(key, req, true, rangeEnd);
        else r = await this.range(key, req, c.mode === 'Any', rangeEnd);
      } catch (e) {
        const se = this.mapError(apiKey, e, requested);
        if (se.code === 'Compacted' && requested !== undefined) this.observeCompacted(requested + 1);
        if (se.code !== 'TooLargeResourceVersion' || Date.now() >= deadline) throw se;
        await new Promise((res) => setTimeout(res, 100));
        continue;
      }
      if (c.mode !== 'NotOlderThan' || rev(r.header.revision) >= c.revision) return r;
      if (Date.now() >= deadline) {
        throw new StorageError(
          'TooLargeResourceVersion',
          apiKey,
          `Too large resource version: ${c.revision}, current: ${this.latest}`,
          this.latest,
          c.revision,
        );
      }
      await new Promise((res) => setTimeout(res, 100));
    }
  }

  // ---- reads ----------------------------------------------------------------------------

  async get(key: string, consistency: ReadConsistency): Promise<KubeObject | undefined> {
    const r = await this.read(key, consistency, this.keys.toEtcd(key), {});
    const kv = r.kvs[0];
    return kv && this.decode(key, kv);
  }

  /**
   * Pages of etcd Ranges from `startAfterKey` at one revision (the first page's, or the Exact
   * one): with a predicate, further ranges fill the page to `limit` as kube's etcd3 store does.
   */
  async list(prefix: string, opts: ListOptions): Promise<ListResult> {
    if (!prefix.endsWith('/')) throw new StorageError('Internal', prefix, 'list prefix must end in /');
    if (opts.key !== undefined) return this.listOne(prefix, opts.key, opts);
    const etcdPrefix = this.keys.toEtcd(prefix);
    const end = etcdPrefixEnd(etcdPrefix);
    const limit = opts.limit && opts.limit > 0 ? opts.limit : 0;
    let from = opts.startAfterKey !== undefined ? Buffer.concat([this.keys.toEtcd(opts.startAfterKey), Buffer.from([0])]) : etcdPrefix;
    if (Buffer.compare(from, etcdPrefix) < 0) from = etcdPrefix;
    let consistency = opts.consistency;
    const items: KubeObject[] = [];
    let lastKey: string | undefined;
    // Values that do not decode are gathered and fail the list together, naming their keys.
    const decoder = new ListDecoder(this.keys.etcdName, opts.kind);
    for (;;) {
      // Without a predicate one Range is the page; with one, ask for more than the rest of the
      // page (kube's etcd3 store doubles its range) so few round trips fill it.
      const want = limit === 0 ? 0 : opts.predicate ? Math.max(limit - items.length, Math.min(2 * limit, 10_000)) : limit - items.length;
      const r = await this.read(prefix, consistency, from, { limit: want }, end);
      // A Range at a past revision answers with the current revision in its header: the list's
      // revision is the one it was read at.
      const revision = consistency.mode === 'Exact' ? consistency.revision : rev(r.header.revision);
      // Every further range reads the snapshot of the first.
      if (consistency.mode !== 'Exact') consistency = { mode: 'Exact', revision };
      let used = 0;
      for (const kv of r.kvs) {
        used++;
        const key = this.keys.fromEtcd(kv.key);
        if (key === undefined) continue;
        const obj = decoder.decode(key, kv.value, rev(kv.mod_revision));
        lastKey = key;
        if (!obj || (opts.predicate && !opts.predicate(obj))) continue;
        items.push(obj);
        if (limit > 0 && items.length >= limit) break;
      }
      const restInRange = rev(r.count) - used;
      const moreHere = used < r.kvs.length || r.more;
      if (limit > 0 && items.length >= limit) {
        if (!opts.skipUndecodable) decoder.check(prefix);
        const out: ListResult = { items, revision };
        if (moreHere && lastKey !== undefined) {
          out.continueAfterKey = lastKey;
          out.remaining = restInRange;
        }
        return out;
      }
      if (!r.more || r.kvs.length === 0) {
        if (!opts.skipUndecodable) decoder.check(prefix);
        return { items, revision };
      }
      from = Buffer.concat([r.kvs[r.kvs.length - 1]!.key, Buffer.from([0])]);
    }
  }

  /** A list narrowed to `key`: a Range of that key alone. */
  private async listOne(prefix: string, key: string, opts: ListOptions): Promise<ListResult> {
    const c = opts.consistency;
    const r = await this.read(prefix, c, this.keys.toEtcd(key), {});
    const revision = c.mode === 'Exact' ? c.revision : rev(r.header.revision);
    const kv = r.kvs[0];
    const wanted = kv !== undefined && key.startsWith(prefix) && (opts.startAfterKey === undefined || key > opts.startAfterKey);
    const decoder = new ListDecoder(this.keys.etcdName, opts.kind);
    const obj = wanted ? decoder.decode(key, kv.value, rev(kv.mod_revision)) : undefined;
    if (!opts.skipUndecodable) decoder.check(prefix);
    return { items: obj && (!opts.predicate || opts.predicate(obj)) ? [obj] : [], revision };
  }

  // ---- writes ---------------------------------------------------------------------------

  async create(key: string, obj: KubeObject, opts: { dryRun?: boolean } = {}): Promise<KubeObject> {
    const bytes = encodeStoredObject(key, obj);
    const ek = this.keys.toEtcd(key);
    if (opts.dryRun) {
      if (await this.get(key, { mode: 'MostRecent' })) throw new StorageError('KeyExists', key, `key ${key} already exists`);
      return decodeStoredObject(key, bytes, undefined);
    }
    const r = await this.txn(key, {
      compare: [{ key: ek, target: 'CREATE', result: 'EQUAL', create_revision: 0 }],
      success: [{ request_put: { key: ek, value: Buffer.from(bytes) } }],
      failure: [],
    });
    if (!r.succeeded) throw new StorageError('KeyExists', key, `key ${key} already exists`);
    return decodeStoredObject(key, bytes, rev(r.header.revision));
  }

  async guaranteedUpdate(
    key: string,
    tryUpdate: TryUpdate,
    opts: { preconditions?: Preconditions; dryRun?: boolean; createIfMissing?: () => KubeObject | undefined } = {},
  ): Promise<{ object: KubeObject; created: boolean; changed: boolean }> {
    const ek = this.keys.toEtcd(key);
    let kv: EtcdKeyValue | undefined = (await this.read(key, { mode: 'MostRecent' }, ek, {})).kvs[0];
    for (let attempt = 0; ; attempt++) {
      if (attempt > this.maxRetries) throw new StorageError('Conflict', key, `too many conflicting updates of ${key}`);
      let current: KubeObject;
      let creating = false;
      if (kv) {
        current = this.decode(key, kv);
        checkPreconditions(key, current, opts.preconditions);
      } else {
        const initial = opts.createIfMissing?.();
        if (!initial) throw new StorageError('KeyNotFound', key, `key ${key} not found`);
        current = decodeStoredObject(key, encodeStoredObject(key, initial), undefined);
        creating = true;
      }
      const result = await tryUpdate(current);
      const next = result === NO_CHANGE ? (creating ? current : undefined) : result;
      const bytes = next ? encodeStoredObject(key, next) : undefined;
      const noWrite = !next || (kv !== undefined && bytes !== undefined && Buffer.from(bytes).equals(kv.value));
      if (noWrite) return { object: this.decode(key, kv!), created: false, changed: false };
      if (opts.dryRun) return { object: decodeStoredObject(key, bytes!, kv ? rev(kv.mod_revision) : undefined), created: creating, changed: true };
      const compare = kv
        ? { key: ek, target: 'MOD', result: 'EQUAL', mod_revision: kv.mod_revision }
        : { key: ek, target: 'CREATE', result: 'EQUAL', create_revision: 0 };
      const r = await this.txn(key, {
        compare: [compare],
        success: [{ request_put: { key: ek, value: Buffer.from(bytes!) } }],
        failure: [{ request_range: { key: ek } }],
      });
      if (r.succeeded) return { object: decodeStoredObject(key, bytes!, rev(r.header.revision)), created: creating, changed: true };
      kv = r.responses[0]?.response_range?.kvs[0];
    }
  }

  async delete(
    key: string,
    opts: { preconditions?: Preconditions; dryRun?: boolean; validate?: (current: KubeObject) => void | Promise<void> } = {},
  ): Promise<KubeObject> {
    const ek = this.keys.toEtcd(key);
    let kv: EtcdKeyValue | undefined = (await this.read(key, { mode: 'MostRecent' }, ek, {})).kvs[0];
    for (let attempt = 0; ; attempt++) {
      if (attempt > this.maxRetries) throw new StorageError('Conflict', key, `too many conflicting writes to ${key}`);
      if (!kv) throw new StorageError('KeyNotFound', key, `key ${key} not found`);
      const current = this.decode(key, kv);
      checkPreconditions(key, current, opts.preconditions);
      if (opts.validate) await opts.validate(this.decode(key, kv));
      if (opts.dryRun) return current;
      const r = await this.txn(key, {
        compare: [{ key: ek, target: 'MOD', result: 'EQUAL', mod_revision: kv.mod_revision }],
        success: [{ request_delete_range: { key: ek } }],
        failure: [{ request_range: { key: ek } }],
      });
      if (r.succeeded) return this.decode(key, kv, rev(r.header.revision));
      // Someone wrote in between: re-check preconditions and validation on the new state.
      kv = r.responses[0]?.response_range?.kvs[0];
    }
  }

  storageKey(key: string): string {
    return this.keys.etcdName(key);
  }

  async deleteUndecodable(key: string, opts: { dryRun?: boolean } = {}): Promise<{ readable: true } | { readable: false; revision: number }> {
    const ek = this.keys.toEtcd(key);
    const r0 = await this.read(key, { mode: 'MostRecent' }, ek, {});
    const kv = r0.kvs[0];
    if (!kv) throw new StorageError('KeyNotFound', key, `key ${key} not found`);
    try {
      this.decode(key, kv);
      return { readable: true };
    } catch (e) {
      if (!isCorruptObject(e)) throw e;
    }
    if (opts.dryRun) return { readable: false, revision: rev(r0.header.revision) };
    const r = await this.txn(key, {
      compare: [{ key: ek, target: 'MOD', result: 'EQUAL', mod_revision: kv.mod_revision }],
      success: [{ request_delete_range: { key: ek } }],
      failure: [],
    });
    if (!r.succeeded) throw new StorageError('Conflict', key, `${key} was written while it was being deleted`);
    return { readable: false, revision: rev(r.header.revision) };
  }

  // ---- watch ----------------------------------------------------------------------------

  /**
   * An etcd Watch from afterRevision+1 with prev_kv; resumes on another member after a failure.
   * A watch from a recent revision shares the etcd watch of its key or prefix with the other
   * watches of it (Etcd3WatchHub); one from an older revision than the shared watch holds, or
   * the first of its key from more than HUB_HELD_EVENTS revisions before the newest this server
   * has seen, has its own.
   */
  watch(opts: WatchOptions, sink: WatchSink): WatchHandle {
    if (this.closed || !this.shareWatches) return this.ownWatch(opts, sink);
    const id = `${opts.recursive ? 'prefix' : 'key'}:${opts.key}`;
    let hub = this.hubs.get(id);
    if (hub && !hub.canJoin(opts.afterRevision)) return this.ownWatch(opts, sink);
    if (!hub) {
      // Started from far back, the shared watch would replay a long history first, and watches
      // joining it would wait for that replay: those get their own.
      if (opts.afterRevision < this.latest - HUB_HELD_EVENTS) return this.ownWatch(opts, sink);
      const created: Etcd3WatchHub = new Etcd3WatchHub(
        opts,
        (s) => this.startWatch(opts, s),
        () => {
          if (this.hubs.get(id) === created) this.hubs.delete(id);
        },
        this.freezeSharedEvents,
      );
      this.hubs.set(id, created);
      hub = created;
    }
    return hub.join(opts.afterRevision, sink);
  }

  /** Number of etcd watches running (shared or not). */
  get etcdWatchCount(): number {
    return this.watches.size;
  }

  private ownWatch(opts: WatchOptions, sink: WatchSink): WatchHandle {
    const w = this.startWatch(opts, sink);
    return { stop: () => w.stop(), progress: () => w.progress() };
  }

  private startWatch(opts: WatchOptions, sink: WatchSink): Etcd3Watch {
    const w = new Etcd3Watch(this, opts, sink, this.progressIntervalMs, () => this.watches.delete(w));
    this.watches.add(w);
    if (this.closed) w.fail(new StorageError('Unavailable', opts.key, 'storage is closed'));
    else w.start();
    return w;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.compactor?.stop();
    for (const w of [...this.watches]) w.stop();
    this.client.close();
  }

  /** Whether close() was called. */
  get isClosed(): boolean {
    return this.closed;
  }
}
