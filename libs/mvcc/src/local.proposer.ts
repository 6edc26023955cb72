/**
 * Single-node Proposer: a group-committing fsynced log. Proposals queue while a batch is being
 * written; when it lands, everything queued goes to disk as the next batch. The "log" is the
 * store itself: each batch holds the commands' effects plus appliedIndex and is written with
 * {sync: true}, so a command is acknowledged only once fsynced, and a crash loses only
 * unacknowledged proposals (DESIGN.md "Storage model": fsynced before a write is acknowledged).
 */
import type { MvccStore } from './mvcc.store.js';
import type { Proposer } from './proposer.port.js';
import { MvccError, validateCommand, type TxnCommand, type TxnResult } from './mvcc.types.js';

interface Pending {
  command: TxnCommand;
  resolve: (r: TxnResult) => void;
  reject: (e: unknown) => void;
}

/** Options of LocalProposer. */
export interface LocalProposerOptions {
  /** fsync every batch (default true; false only for tests that do not care about durability). */
  sync?: boolean;
  /** Max commands per batch, bounding latency and batch memory (default 1024). */
  maxBatch?: number;
}

/** Group-committing local log; the only writer of its store while it runs. */
export class LocalProposer implements Proposer {
  private queue: Pending[] = [];
  private flushing: Promise<void> | undefined;
  private closed = false;
  private readonly sync: boolean;
  private readonly maxBatch: number;
  /** Batches written so far (observability and tests of group commit). */
  batches = 0;

  constructor(
    private readonly store: MvccStore,
    opts: LocalProposerOptions = {},
  ) {
    this.sync = opts.sync ?? true;
    this.maxBatch = opts.maxBatch ?? 1024;
  }

  propose(command: TxnCommand): Promise<TxnResult> {
    if (this.closed) return Promise.reject(new MvccError('Closed', 'proposer is closed'));
    const invalid = validateCommand(command);
    if (invalid) return Promise.reject(new MvccError('InvalidCommand', invalid));
    return new Promise<TxnResult>((resolve, reject) => {
      this.queue.push({ command, resolve, reject });
      if (!this.flushing) this.flushing = this.flushLoop();
    });
  }

  /** Locally every acknowledged write is already applied: nothing to wait for. */
  readBarrier(): Promise<void> {
    return Promise.resolve();
  }

  private async flushLoop(): Promise<void> {
    // Let proposals made in the same tick join the first batch.
    await Promise.resolve();
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      const first = this.store.appliedIndex() + 1;
      try {
        const results = await this.store.applyBatch(
          batch.map((p, i) => ({ index: first + i, command: p.command })),
          { sync: this.sync },
        );
        this.batches++;
        batch.forEach((p, i) => {
          const r = results[i];
          if (r) p.resolve(r);
          else p.reject(new MvccError('Corrupt', `entry ${first + i} was not applied`));
        });
      } catch (e) {
        for (const p of batch) p.reject(e);
      }
    }
    this.flushing = undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    while (this.flushing) await this.flushing;
  }
}
