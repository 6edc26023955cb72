/**
 * A watch-fed in-memory copy of one collection (all namespaces), in the pattern of
 * RbacPolicyWatcher: list at one revision, then watch the prefix from that revision, so a write
 * made through any node of a cluster is seen here as soon as this node applies it. A failed list
 * or watch (compaction, storage closing) relists after a second. Only a projection of each
 * object is kept (what the readers need), never whole Secrets.
 */
import type { KubeObject } from '@app/apimachinery';
import type { Storage, StorageEvent, WatchHandle } from '@app/storage';

/** The projection of a stored object; undefined leaves the object out. */
export type Projection<T> = (obj: KubeObject) => T | undefined;

/** One collection's objects by `namespace/name`, kept current from storage. */
export class WatchedCollection<T> {
  private items = new Map<string, T>();
  private watch: WatchHandle | undefined;
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;
  private synced = false;
  private readonly waiters: Array<() => void> = [];
  private readonly listeners = new Set<(key: string) => void>();

  constructor(
    private readonly storage: Storage,
    /** The collection's key prefix (`/registry/core/secrets/`), ending in '/'. */
    private readonly prefix: string,
    private readonly project: Projection<T>,
    /** Names the collection in log lines. */
    private readonly label: string,
  ) {}

  /** Starts listing and watching; returns at once (a cluster's first list may wait for a quorum). */
  start(): void {
    this.stopped = false;
    this.sync().catch((e) => {
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

  /** Resolves once the first list has been loaded. */
  whenSynced(): Promise<void> {
    return this.synced ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }

  /** The projection of `namespace/name` (cluster-scoped: `name`). */
  get(namespace: string, name: string): T | undefined {
    return this.items.get(namespace ? `${namespace}/${name}` : name);
  }

  /** Every projection, by key. */
  entries(): IterableIterator<[string, T]> {
    return this.items.entries();
  }

  /** Calls `fn` with the key of each change (and with '' after each relist); returns the unsubscribe. */
  onChange(fn: (key: string) => void): () => void {
    this.listeners.add(fn);
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
    const items = new Map<string, T>();
    for (const o of res.items) {
      const p = this.project(o);
      if (p !== undefined) items.set(this.keyOf(o), p);
    }
    this.items = items;
    this.synced = true;
    for (const w of this.waiters.splice(0)) w();
    for (const l of this.listeners) l('');
    this.watch = this.storage.watch(
      { key: this.prefix, recursive: true, afterRevision: res.revision },
      {
        event: (e) => this.onEvent(e),
        error: (err) => {
          if (!this.stopped) process.stderr.write(`${this.label}: watch failed (${err.code}), relisting\n`);
          this.watch?.stop();
          this.later();
        },
      },
    );
  }

  private onEvent(e: StorageEvent): void {
    const key = this.keyOf(e.object);
    const p = e.type === 'DELETED' ? undefined : this.project(e.object);
    if (p === undefined) this.items.delete(key);
    else this.items.set(key, p);
    for (const l of this.listeners) l(key);
  }
}
