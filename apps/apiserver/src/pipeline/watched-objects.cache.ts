/**
 * An in-memory copy of the objects under one storage prefix, kept current by a list and then a
 * watch from the list's revision (the shape of rbac-policy.watcher.ts and of client-go's
 * reflector): every node of a cluster applies every write, so a change made through any node is
 * here as soon as this node applies it. A failed watch (compaction, storage closing) relists
 * after a second. Readers get the stored objects themselves and must not mutate them.
 */
import type { KubeObject } from '@app/apimachinery';
import type { Storage, StorageEvent, WatchHandle } from '@app/storage';

/** The key of an object in a {@link WatchedObjects}: `<namespace>/<name>`, or `<name>` when cluster-scoped. */
export function objectCacheKey(namespace: string, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

/** Options of {@link WatchedObjects}. */
export interface WatchedObjectsOptions {
  storage: Storage;
  /** Key prefix (ending in '/') of the objects kept. */
  prefix: string;
  /** Keeps only the objects it accepts (others are treated as absent). Default: all. */
  filter?: (obj: KubeObject) => boolean;
  /** Name in log lines. */
  name: string;
  /** Delay before relisting after a failure, ms. Default 1000. */
  retryMs?: number;
}

/** The objects under a prefix by key, and the list-then-watch that feeds them. */
export class WatchedObjects {
  private readonly objects = new Map<string, KubeObject>();
  private readonly listeners = new Set<(key: string) => void>();
  private readonly waiters: Array<() => void> = [];
  private watch: WatchHandle | undefined;
  private retry: NodeJS.Timeout | undefined;
  private started = false;
  private stopped = false;
  private synced = false;

  constructor(private readonly opts: WatchedObjectsOptions) {}

  /** Starts listing and watching (once; not awaited: a cluster's first list may wait for a quorum). */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.run();
  }

  /** Stops the watch and any retry. */
  stop(): void {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    this.watch?.stop();
  }

  /** Whether the first list has been loaded. */
  get isSynced(): boolean {
    return this.synced;
  }

  /** Resolves once the first list has been loaded. */
  whenSynced(): Promise<void> {
    return this.synced ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }

  /** The object of that key ({@link objectCacheKey}), if kept. */
  get(key: string): KubeObject | undefined {
    return this.objects.get(key);
  }

  /** Every kept object with its key. */
  entries(): IterableIterator<[string, KubeObject]> {
    return this.objects.entries();
  }

  /** Every kept object. */
  values(): KubeObject[] {
    return [...this.objects.values()];
  }

  /** Calls `listener(key)` after each change of a kept key (and for every key after a relist); returns the unsubscribe. */
  onChange(listener: (key: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private run(): void {
    if (this.stopped) return;
    this.sync().catch((e) => {
      process.stderr.write(`${this.opts.name}: list failed (${(e as Error).message}), retrying\n`);
      this.later();
    });
  }

  private later(): void {
    if (this.stopped) return;
    this.retry = setTimeout(() => this.run(), this.opts.retryMs ?? 1000);
    this.retry.unref();
  }

  private keep(obj: KubeObject): boolean {
    return this.opts.filter?.(obj) ?? true;
  }

  private async sync(): Promise<void> {
    const res = await this.opts.storage.list(this.opts.prefix, { consistency: { mode: 'MostRecent' }, skipUndecodable: true });
    if (this.stopped) return;
    const before = new Set(this.objects.keys());
    this.objects.clear();
    for (const obj of res.items) {
      if (!this.keep(obj)) continue;
      this.objects.set(this.keyOf(obj), obj);
    }
    this.synced = true;
    for (const w of this.waiters.splice(0)) w();
    for (const k of new Set([...before, ...this.objects.keys()])) this.emit(k);
    this.watch = this.opts.storage.watch(
      { key: this.opts.prefix, recursive: true, afterRevision: res.revision },
      {
        event: (e) => this.onEvent(e),
        error: (err) => {
          if (!this.stopped) process.stderr.write(`${this.opts.name}: watch failed (${err.code}), relisting\n`);
          this.watch?.stop();
          this.later();
        },
      },
    );
  }

  private keyOf(obj: KubeObject): string {
    return objectCacheKey(obj.metadata.namespace ?? '', obj.metadata.name ?? '');
  }

  private onEvent(e: StorageEvent): void {
    const key = this.keyOf(e.object);
    const had = this.objects.has(key);
    if (e.type === 'DELETED' || !this.keep(e.object)) this.objects.delete(key);
    else this.objects.set(key, e.object);
    if (had || this.objects.has(key)) this.emit(key);
  }

  private emit(key: string): void {
    for (const l of this.listeners) {
      try {
        l(key);
      } catch (e) {
        process.stderr.write(`${this.opts.name}: listener failed: ${(e as Error).message}\n`);
      }
    }
  }
}
