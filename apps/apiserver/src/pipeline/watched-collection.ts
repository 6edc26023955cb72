/**
 * A watch-fed in-memory copy of one collection (all namespaces), in the pattern of
 * RbacPolicyWatcher: list at one revision, then watch the prefix from that revision, so a write
 * made through any node of a cluster is seen here as soon as this node applies it. A failed list
 * or watch (compaction, storage closing) relists after a second. Only a projection of each
 * object is kept (what the readers need), never whole Secrets.
 */
import { deepFreeze, type KubeObject } from '@app/apimachinery';
import type { Storage, StorageEvent, WatchHandle } from '@app/storage';
import { envInt } from '../config/env.js';

/** The projection of a stored object; undefined leaves the object out. */
export type Projection<T> = (obj: KubeObject) => T | undefined;

/** One collection's objects by `namespace/name`, kept current from storage. */
export class WatchedCollection<T> {
  private items = new Map<string, T>();
  /** The same projections by namespace, then key (only when built with `byNamespace`). */
  private namespaces: Map<string, Map<string, T>> | undefined;
  private watch: WatchHandle | undefined;
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;
  private synced = false;
  private readonly waiters: Array<() => void> = [];
  /** The list of the latest start (see listEnded). */
  private listing: Promise<void> = Promise.resolve();
  /** Listeners, each with whether it hears of a relist key by key (see onChange). */
  private readonly listeners = new Map<(key: string) => void, boolean>();

  constructor(
    private readonly storage: Storage,
    /** The collection's key prefix (`/registry/core/secrets/`), ending in '/'. */
    private readonly prefix: string,
    private project: Projection<T>,
    /** Names the collection in log lines. */
    private readonly label: string,
    /** Keeps an index by namespace, for `inNamespace` (costs a second map entry per object). */
    private readonly byNamespace = false,
  ) {
    // Tests freeze what the copies keep: readers share its objects and must never change one.
    if (envInt('KAPI_FREEZE_COPIES') === 1) {
      const inner = this.project;
      this.project = (o) => deepFreeze(inner(o));
    }
  }

  /** Starts listing and watching; returns at once (a cluster's first list may wait for a quorum). */
  start(): void {
    this.stopped = false;
    this.listing = this.sync().catch((e) => {
      if (!this.stopped) process.stderr.write(`${this.label}: list failed (${(e as Error).message}), retrying\n`);
      this.later();
    });
  }

  stop(): void {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    this.watch?.stop();
    this.watch = undefined;
  }

  /** Whether the first list has been loaded. */
  isSynced(): boolean {
    return this.synced;
  }

  /**
   * Whether this copy holds every write this node has answered for: resolves true once the
   * storage has settled (Storage.settled) and the watch has delivered up to the storage's
   * current revision. False when that cannot be told (not listed yet, a watch catching up after
   * a relist, a storage without `settled` such as external etcd): the reader then reads storage.
   */
  async current(): Promise<boolean> {
    if (!this.synced || !this.watch || !this.storage.settled) return false;
    // A store whose write failed never settles; the node stops on that failure (the state
    // machine reports it to the Raft driver), so the copy is taken as it is.
    await this.storage.settled().catch(() => undefined);
    const delivered = this.watch?.progress?.();
    return delivered !== undefined && delivered >= this.storage.currentRevision();
  }

  /**
   * Resolves once the list of the latest start has ended, loaded or failed (at once when none
   * was started). A reader that would list the collection itself while the copy's own list is in
   * flight waits for that list instead: it ends no later than a new one would.
   */
  listEnded(): Promise<void> {
    return this.listing;
  }

  /** Resolves once the first list has been loaded. */
  whenSynced(): Promise<void> {
    return this.synced ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }

  /** The projection of `namespace/name` (cluster-scoped: `name`). */
  get(namespace: string, name: string): T | undefined {
    return this.items.get(namespace ? `${namespace}/${name}` : name);
  }

  /** The projection of a key as entries() and onChange() give it. */
  byKey(key: string): T | undefined {
    return this.items.get(key);
  }

  /**
   * The projections of one namespace's objects: from the index when the collection keeps one,
   * else by a walk of every object.
   */
  inNamespace(namespace: string): T[] {
    if (this.namespaces) return [...(this.namespaces.get(namespace)?.values() ?? [])];
    const out: T[] = [];
    const prefix = `${namespace}/`;
    for (const [k, v] of this.items) if (k.startsWith(prefix)) out.push(v);
    return out;
  }

  /** Every projection, by key. */
  entries(): IterableIterator<[string, T]> {
    return this.items.entries();
  }

  /** Every projection. */
  values(): T[] {
    return [...this.items.values()];
  }

  /**
   * Calls `fn` with the key of each change of a kept object (one that has or had a projection)
   * and, after each relist, with '' (or, with `perKey`, with every key kept before or after it,
   * so that a reader that works key by key misses nothing that changed while no watch ran);
   * returns the unsubscribe. A listener that throws is logged and does not keep the others
   * from hearing of the change.
   */
  onChange(fn: (key: string) => void, opts: { perKey?: boolean } = {}): () => void {
    this.listeners.set(fn, opts.perKey ?? false);
    return () => this.listeners.delete(fn);
  }

  private later(): void {
    if (this.stopped) return;
    this.retry = setTimeout(() => this.start(), 1000);
    this.retry.unref();
  }

  private keyOf(obj: KubeObject): string {
    const ns = obj.metadata?.namespace;
    return ns ? `${ns}/${obj.metadata?.name}` : String(obj.metadata?.name);
  }

  private async sync(): Promise<void> {
    const res = await this.storage.list(this.prefix, { consistency: { mode: 'MostRecent' }, skipUndecodable: true });
    if (this.stopped) return;
    const before = this.items;
    const items = new Map<string, T>();
    for (const o of res.items) {
      const p = this.project(o);
      if (p !== undefined) items.set(this.keyOf(o), p);
    }
    this.items = items;
    if (this.byNamespace) {
      this.namespaces = new Map();
      for (const [k, v] of items) this.indexSet(k, v);
    }
    this.synced = true;
    for (const w of this.waiters.splice(0)) w();
    const relisted = [...new Set([...before.keys(), ...items.keys()])];
    for (const [l, perKey] of this.listeners) {
      if (perKey) for (const k of relisted) this.call(l, k);
      else this.call(l, '');
    }
    this.watch = this.storage.watch(
      { key: this.prefix, recursive: true, afterRevision: res.revision },
      {
        event: (e) => this.onEvent(e),
        error: (err) => {
          if (!this.stopped) process.stderr.write(`${this.label}: watch failed (${err.code}: ${err.message}), relisting\n`);
          this.watch?.stop();
          this.later();
        },
      },
    );
  }

  private onEvent(e: StorageEvent): void {
    const key = this.keyOf(e.object);
    const had = this.items.has(key);
    const p = e.type === 'DELETED' ? undefined : this.project(e.object);
    if (p === undefined) {
      this.items.delete(key);
      this.indexDelete(key);
    } else {
      this.items.set(key, p);
      this.indexSet(key, p);
    }
    // An object left out before and after (not one the readers keep) is no change to them.
    if (had || p !== undefined) this.emit(key);
  }

  private emit(key: string): void {
    for (const l of this.listeners.keys()) this.call(l, key);
  }

  private call(l: (key: string) => void, key: string): void {
    try {
      l(key);
    } catch (e) {
      process.stderr.write(`${this.label}: listener failed: ${(e as Error).message}\n`);
    }
  }

  private indexSet(key: string, value: T): void {
    if (!this.namespaces) return;
    const slash = key.indexOf('/');
    if (slash < 0) return;
    const ns = key.slice(0, slash);
    let m = this.namespaces.get(ns);
    if (!m) this.namespaces.set(ns, (m = new Map()));
    m.set(key, value);
  }

  private indexDelete(key: string): void {
    if (!this.namespaces) return;
    const slash = key.indexOf('/');
    if (slash < 0) return;
    const ns = key.slice(0, slash);
    const m = this.namespaces.get(ns);
    if (m?.delete(key) && m.size === 0) this.namespaces.delete(ns);
  }
}
