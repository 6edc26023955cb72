/**
 * Whether this process's disk is full, as its storage writes found it, and the wait that
 * retries a write refused for lack of space (docs/disk-faults.md "Full disk").
 *
 * A full disk is the one write failure a node waits out instead of stopping: nothing it held
 * is lost or in doubt, since the failed batch is written again, whole, once space returns. Any
 * other failure (an I/O error on a write or its fsync) is passed on, and the node stops: after
 * a failed fsync the kernel may have dropped the dirty pages, so what the disk holds is unknown
 * (PostgreSQL's and etcd's answer to "fsyncgate"); only a restart from what is durable is safe.
 *
 * The state is per process (one process serves one node and one data directory): the health
 * check and the metric read it without knowing which store refused a write.
 */

/** A write refused because the disk (or the file system's quota) is full. */
export function isNoSpace(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  return code === 'ENOSPC' || /No space left on device/i.test(e.message);
}

/** What the storage writes of this process last found. */
export class StorageDiskState {
  private fullSince: number | undefined;
  private reason = '';
  private retryCount = 0;

  /** True while a write refused for lack of space has not yet been written. */
  get full(): boolean {
    return this.fullSince !== undefined;
  }

  /** Why the disk is full (the refused write's error), or undefined when it is not. */
  get error(): string | undefined {
    return this.fullSince === undefined ? undefined : this.reason;
  }

  /** Writes retried after a refusal for lack of space, since the process started. */
  get retries(): number {
    return this.retryCount;
  }

  /** Records a refused write (called by writeUntilSpace). */
  noteFull(e: Error): void {
    this.fullSince ??= Date.now();
    this.reason = e.message;
  }

  /** Records a retry (called by writeUntilSpace). */
  noteRetry(): void {
    this.retryCount++;
  }

  /** Records that a refused write went through: space is back. */
  noteWritten(): void {
    this.fullSince = undefined;
    this.reason = '';
  }
}

/** The process's disk state (see StorageDiskState). */
export const storageDisk = new StorageDiskState();

/** What writeUntilSpace needs besides the write. */
export interface SpaceWaitOptions {
  /**
   * Called before each retry: LevelDB fails every write after a failed synced write until the
   * database is reopened (its log's state is unknown), so the owner reopens it here, which
   * also replays the log from disk. May throw: a reopen refused for lack of space is retried;
   * any other error ends the wait with that error.
   */
  reopen(): Promise<void>;
  /** True when the owner is closing: the wait ends with the refusal. */
  closing(): boolean;
  /** First pause between tries, doubled up to maxDelayMs (defaults 50 and 2000). */
  minDelayMs?: number;
  maxDelayMs?: number;
}

/**
 * Runs `write`; while it (or the reopen before a retry) is refused for lack of space, waits,
 * reopens and runs it again, so the caller sees it succeed once space is back. The caller must
 * keep its in-memory state unchanged until the write resolved, so that running the same write
 * again is exactly the first try. Any other error is thrown at once.
 */
export async function writeUntilSpace(write: () => Promise<void>, opts: SpaceWaitOptions, state: StorageDiskState = storageDisk): Promise<void> {
  try {
    await write();
    return;
  } catch (e) {
    if (!isNoSpace(e)) throw e;
    state.noteFull(e as Error);
  }
  let delay = opts.minDelayMs ?? 50;
  const max = opts.maxDelayMs ?? 2000;
  for (;;) {
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(max, delay * 2);
    // Not inside the try: its message quotes the refusal, which must not read as a new one.
    if (opts.closing()) throw new Error(`storage is closing while its disk is full (${state.error ?? ''})`);
    state.noteRetry();
    try {
      await opts.reopen();
      await write();
      state.noteWritten();
      return;
    } catch (e) {
      if (!isNoSpace(e)) throw e;
      state.noteFull(e as Error);
    }
  }
}
