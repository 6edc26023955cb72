/**
 * The loop the built-in controllers share, as client-go's informers and work queues give
 * kube-controller-manager's: list what the controller keeps, queue the keys to look at, watch
 * the given key prefixes from the list's revision, process queued keys one at a time, relist
 * periodically (a missed event costs at most the resync period), and start over a second after
 * any failure (a failed list, watch or process). A subclass says what to list and watch, how an
 * event queues keys, and what processing one key does.
 */
import type { KubeObject } from '@app/apimachinery';
import type { KindDeclaration } from '@app/registry';
import type { Storage, StorageEvent, WatchHandle } from '@app/storage';
import { CollectionReader, ReaderSet } from '../pipeline/collection-reader.js';
import type { Projection } from '../pipeline/watched-collection.js';
import type { ControllerRunner } from './controller.runner.js';

export abstract class WatchQueueController implements ControllerRunner {
  /** Keys waiting to be processed (a key queued twice is processed once). */
  protected readonly queue = new Set<string>();
  protected stopped = true;
  /** Keys to queue again later (one timer per key). */
  private readonly requeues = new Map<string, NodeJS.Timeout>();
  /** Keys whose last processing ended in `retryLater`, with how many times in a row. */
  private readonly failures = new Map<string, number>();
  /** Keys `retryLater` was called for while they were being processed. */
  private readonly retried = new Set<string>();
  private watches: WatchHandle[] = [];
  /** The collections read through `collection`, started and stopped with the controller. */
  private readonly readerSet = new ReaderSet();
  private timer: NodeJS.Timeout | undefined;
  private draining = false;

  protected constructor(
    protected readonly storage: Storage,
    /** Names the controller in log lines. */
    private readonly label: string,
    private readonly resyncMs: number,
  ) {}

  /** Whether the kinds the controller needs are served; when not, start does nothing. */
  protected abstract kindsServed(): boolean;
  /** The key prefixes to watch (each recursively) from the revision of a list. */
  protected abstract watchPrefixes(): string[];
  /** Lists what the controller keeps and queues what to look at; returns the revision to watch from. */
  protected abstract relist(): Promise<number>;
  /** Queues the keys one event concerns. */
  protected abstract onEvent(e: StorageEvent): void;
  /** Looks at one queued key. */
  protected abstract process(key: string): Promise<void>;
  /** Drops the controller's own state when it stops. */
  protected reset(): void {}

  start(): void {
    if (!this.kindsServed()) return;
    this.stopped = false;
    this.readerSet.start();
    void this.sync().catch((e) => this.retry(e));
  }

  stop(): void {
    this.stopped = true;
    this.stopWatches();
    if (this.timer) clearTimeout(this.timer);
    this.queue.clear();
    for (const t of this.requeues.values()) clearTimeout(t);
    this.requeues.clear();
    this.failures.clear();
    this.retried.clear();
    this.readerSet.stop();
    this.reset();
  }

  /**
   * A collection the controller reads while it runs (the pods of a namespace, every node): from
   * a watch-fed copy made at the first read after each start and dropped at stop, read from
   * storage while none is usable (CollectionReader).
   */
  protected collection(
    decl: () => KindDeclaration | undefined,
    /** Names the copy in log lines. */
    label: string,
    project?: Projection<KubeObject>,
  ): CollectionReader {
    return this.readerSet.add(new CollectionReader(this.storage, decl, label, project));
  }

  /** Stops reading a collection declared with `collection` (its copy is given back). */
  protected dropCollection(reader: CollectionReader): void {
    this.readerSet.remove(reader);
  }

  /** Queues a key again after a delay (client-go's AddAfter); a later call for the key replaces the timer. */
  protected requeueAfter(key: string, delayMs: number): void {
    clearTimeout(this.requeues.get(key));
    const t = setTimeout(
      () => {
        this.requeues.delete(key);
        if (this.stopped) return;
        this.queue.add(key);
        this.drain();
      },
      Math.max(0, delayMs),
    );
    t.unref();
    this.requeues.set(key, t);
  }

  /**
   * Queues a key again after a pause that doubles each time in a row the key's processing ends
   * here (client-go's rate-limited requeue: 5 ms, then 10, 20, ... up to 1,000 s), for a write
   * that lost a race or found its object gone: a conflict that keeps recurring is not retried in
   * a tight loop. A processing of the key that does not end here starts the pauses over.
   */
  protected retryLater(key: string): void {
    const n = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, n);
    this.retried.add(key);
    this.requeueAfter(key, retryDelayMs(n));
  }

  /** Drops a key's pending requeue. */
  protected cancelRequeue(key: string): void {
    clearTimeout(this.requeues.get(key));
    this.requeues.delete(key);
  }

  /** Processes the queue (once the current turn ends), unless it is being processed already. */
  protected drain(): void {
    if (this.draining || this.stopped || this.queue.size === 0) return;
    this.draining = true;
    setImmediate(() => {
      void (async () => {
        try {
          while (this.queue.size && !this.stopped) {
            const key = this.queue.values().next().value as string;
            this.queue.delete(key);
            try {
              await this.process(key);
            } finally {
              if (!this.retried.delete(key)) this.failures.delete(key);
            }
          }
        } catch (e) {
          this.retry(e);
        } finally {
          this.draining = false;
        }
      })();
    });
  }

  /** Starts over (list, watch) a second after a failure. */
  protected retry(e: unknown): void {
    if (this.stopped) return;
    process.stderr.write(`${this.label}: ${(e as Error).message}; retrying\n`);
    this.stopWatches();
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.sync().catch((err) => this.retry(err)), 1000);
    this.timer.unref();
  }

  private stopWatches(): void {
    for (const w of this.watches) w.stop();
    this.watches = [];
  }

  private async sync(): Promise<void> {
    const rev = await this.relist();
    this.drain();
    if (this.stopped) return;
    this.watches = this.watchPrefixes().map((key) =>
      this.storage.watch(
        { key, recursive: true, afterRevision: rev },
        {
          event: (e) => {
            if (this.stopped) return;
            this.onEvent(e);
            this.drain();
          },
          error: (err) => this.retry(err),
        },
      ),
    );
    const resync = () => {
      this.timer = setTimeout(() => {
        if (this.stopped) return;
        void this.relist().then(
          () => {
            this.drain();
            resync();
          },
          (e) => this.retry(e),
        );
      }, this.resyncMs);
      this.timer.unref();
    };
    resync();
  }
}

/** The pause before the `n`th retry in a row of one key: 5 ms doubled each time, at most 1,000 s. */
export function retryDelayMs(n: number): number {
  return Math.min(5 * 2 ** Math.min(Math.max(n - 1, 0), 30), 1_000_000);
}

/** The names of one kind's objects per namespace, kept from a controller's list and watch. */
export class NamesByNamespace {
  private readonly names = new Map<string, Set<string>>();

  add(o: KubeObject): void {
    const ns = o.metadata.namespace ?? '';
    let names = this.names.get(ns);
    if (!names) this.names.set(ns, (names = new Set()));
    names.add(o.metadata.name ?? '');
  }

  delete(o: KubeObject): void {
    this.names.get(o.metadata.namespace ?? '')?.delete(o.metadata.name ?? '');
  }

  /** Keeps an event's object, or forgets it when the event deletes it. */
  apply(e: StorageEvent): void {
    if (e.type === 'DELETED') this.delete(e.object);
    else this.add(e.object);
  }

  /** The `namespace/name` keys of a namespace's objects. */
  keys(ns: string): string[] {
    return [...(this.names.get(ns) ?? [])].map((name) => `${ns}/${name}`);
  }

  /** The `namespace/name` keys of every object. */
  all(): string[] {
    return [...this.names.keys()].flatMap((ns) => this.keys(ns));
  }

  clear(): void {
    this.names.clear();
  }
}
