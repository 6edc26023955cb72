/**
 * A deduplicating work queue with the client-go workqueue contract: a key is queued at most
 * once; a key being processed is never handed out twice at the same time, and adding it while
 * it is processed re-queues it once processing is done (so no change is lost and no key is
 * processed concurrently with itself). FIFO order; O(1) add and take.
 */
export class WorkQueue {
  private items: string[] = [];
  private head = 0;
  private readonly queued = new Set<string>();
  private readonly active = new Set<string>();
  private readonly again = new Set<string>();

  /** `onAdd` runs after a key becomes available to take (the owner schedules its workers). */
  constructor(private readonly onAdd: () => void = () => undefined) {}

  /** Keys waiting to be taken. */
  get length(): number {
    return this.items.length - this.head;
  }

  /** Keys handed out and not yet done. */
  get inFlight(): number {
    return this.active.size;
  }

  /** Queues a key (no-op when already queued; deferred when it is being processed). */
  add(key: string): void {
    if (this.active.has(key)) {
      this.again.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.items.push(key);
    this.onAdd();
  }

  /** Hands out the oldest key, or undefined when empty. Call {@link done} when finished. */
  take(): string | undefined {
    if (this.head >= this.items.length) return undefined;
    const key = this.items[this.head++]!;
    // Compact now and then so the backing array does not grow without bound.
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    this.queued.delete(key);
    this.active.add(key);
    return key;
  }

  /** Marks a key finished; re-queues it if it was added meanwhile. */
  done(key: string): void {
    this.active.delete(key);
    if (this.again.delete(key)) this.add(key);
  }

  /** Drops everything queued (processing keys finish normally). */
  clear(): void {
    this.items = [];
    this.head = 0;
    this.queued.clear();
    this.again.clear();
  }
}
