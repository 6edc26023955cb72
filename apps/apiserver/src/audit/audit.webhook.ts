/**
 * The audit webhook backend (`--audit-webhook-config-file`): events are sent to a remote
 * service as audit.k8s.io/v1 EventLists, POSTed in batches (kube-apiserver's batch mode, its
 * default for the webhook): a batch leaves when it holds `--audit-webhook-batch-max-size` events
 * or when its first event has waited `--audit-webhook-batch-max-wait`. At most
 * `--audit-webhook-batch-buffer-size` events wait; more are dropped and counted. A batch the
 * service does not take (no answer, or not a 2xx) is sent again after
 * `--audit-webhook-initial-backoff`, doubling, five attempts in all; then it is dropped and
 * counted. One batch is in flight at a time, so the service sees events in order.
 *
 * In the blocking modes (`--audit-webhook-mode=blocking|blocking-strict`) nothing is queued: each
 * event is POSTed alone as it happens, retried on kube-apiserver's webhook backoff (the initial
 * backoff, growing 1.5 times with 20% jitter, five attempts; only a reset connection, 429, 500,
 * 504 or an answer with Retry-After is tried again), and whoever records it may wait for it.
 */
import { withWebhookBackoff, type WebhookAnswer } from '@app/auth';
import type { AuditEvent } from '../pipeline/audit.port.js';

/** How events reach the webhook (kube-apiserver's `--audit-webhook-mode`). */
export const AUDIT_WEBHOOK_MODES = ['batch', 'blocking', 'blocking-strict'] as const;
export type AuditWebhookMode = (typeof AUDIT_WEBHOOK_MODES)[number];

export interface AuditWebhookOptions {
  /** batch (default): queued and sent in batches; blocking modes: each event sent as it happens. */
  mode?: AuditWebhookMode;
  /** Events a batch holds at most. */
  maxBatchSize: number;
  /** How long the first event of a batch waits for more, in ms. */
  maxWaitMs: number;
  /** Events waiting at most; more are dropped. */
  bufferSize: number;
  /** The wait before the first retry of a batch, in ms (doubling after). */
  initialBackoffMs: number;
  /** POSTs an EventList; resolves with the HTTP answer (rejects when there is no answer). */
  post(list: unknown): Promise<{ status: number; body?: unknown; headers?: WebhookAnswer['headers'] }>;
  /** The retries' sleep (tests). */
  sleep?(ms: number): Promise<void>;
  /** Called for events lost (dropped from a full buffer, or a batch given up). */
  lost?(events: number, why: string): void;
  /** Called for events delivered. */
  delivered?(events: number): void;
}

/** Attempts to deliver one batch before it is given up. */
export const AUDIT_WEBHOOK_ATTEMPTS = 5;

export class AuditWebhookBackend {
  private readonly queue: AuditEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> | undefined;
  /** Set when what is queued is due whatever its size (the wait is over, a flush, closing). */
  private sendAll = false;
  private closed = false;
  /** Retry waits in progress; close() cuts them short. */
  private readonly waits = new Set<() => void>();

  private readonly sendNow: ((list: unknown) => Promise<WebhookAnswer>) | undefined;

  constructor(private readonly opts: AuditWebhookOptions) {
    if (opts.mode === 'blocking' || opts.mode === 'blocking-strict') {
      const post = async (list: unknown): Promise<WebhookAnswer> => ({ body: undefined, ...(await opts.post(list)) });
      this.sendNow = withWebhookBackoff(post, { initialMs: opts.initialBackoffMs, factor: 1.5, jitter: 0.2, steps: AUDIT_WEBHOOK_ATTEMPTS }, opts.sleep);
    }
  }

  /** The mode the backend runs in. */
  get mode(): AuditWebhookMode {
    return this.opts.mode ?? 'batch';
  }

  /** Whether events are sent one by one as they happen (the blocking modes). */
  get blocking(): boolean {
    return this.sendNow !== undefined;
  }

  /**
   * Blocking modes: sends `ev` at once and resolves once the webhook took it; rejects (and
   * counts the event lost) when it did not, after the retries.
   */
  async send(ev: AuditEvent): Promise<void> {
    if (!this.sendNow) throw new Error('the audit webhook is in batch mode');
    const list = { kind: 'EventList', apiVersion: 'audit.k8s.io/v1', metadata: {}, items: [ev] };
    let why: string;
    try {
      const res = await this.sendNow(list);
      if (res.status >= 200 && res.status < 300) {
        this.opts.delivered?.(1);
        return;
      }
      why = `the audit webhook answered ${res.status}`;
    } catch (e) {
      why = `the audit webhook could not be reached: ${(e as Error).message}`;
    }
    this.opts.lost?.(1, why);
    throw new Error(why);
  }

  /** Queues an event (batch mode; a blocking backend sends it and does not wait); never throws. */
  write(ev: AuditEvent): void {
    if (this.closed) return;
    if (this.sendNow) {
      this.send(ev).catch(() => undefined);
      return;
    }
    if (this.queue.length >= this.opts.bufferSize) {
      this.opts.lost?.(1, 'the audit webhook buffer is full');
      return;
    }
    this.queue.push(ev);
    if (this.queue.length >= this.opts.maxBatchSize) this.kick(false);
    else if (!this.timer && !this.sending) this.timer = setTimeout(() => this.kick(true), this.opts.maxWaitMs).unref();
  }

  /** Sends everything queued and waits until it is delivered or given up (tests). */
  async flush(): Promise<void> {
    this.kick(true);
    while (this.sending) await this.sending;
  }

  /** Sends what is queued, giving each batch at most two attempts, and takes no more events. */
  async close(): Promise<void> {
    this.closed = true;
    for (const wake of [...this.waits]) wake();
    await this.flush();
  }

  private kick(all: boolean): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (all) this.sendAll = true;
    this.sending ??= this.loop().finally(() => {
      this.sending = undefined;
      if (this.queue.length > 0 && !this.timer) this.timer = setTimeout(() => this.kick(true), this.opts.maxWaitMs).unref();
    });
  }

  /** Full batches go at once; a smaller one only when it is due. */
  private async loop(): Promise<void> {
    for (;;) {
      if (this.queue.length === 0) {
        this.sendAll = false;
        return;
      }
      if (this.queue.length < this.opts.maxBatchSize && !this.sendAll && !this.closed) return;
      const batch = this.queue.splice(0, this.opts.maxBatchSize);
      if (this.queue.length === 0) this.sendAll = false;
      await this.deliver(batch);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(t);
        this.waits.delete(done);
        resolve();
      };
      const t = setTimeout(done, ms).unref();
      this.waits.add(done);
    });
  }

  private async deliver(batch: AuditEvent[]): Promise<void> {
    const list = { kind: 'EventList', apiVersion: 'audit.k8s.io/v1', metadata: {}, items: batch };
    let wait = this.opts.initialBackoffMs;
    let why = '';
    for (let attempt = 1; attempt <= AUDIT_WEBHOOK_ATTEMPTS; attempt++) {
      try {
        const res = await this.opts.post(list);
        if (res.status >= 200 && res.status < 300) {
          this.opts.delivered?.(batch.length);
          return;
        }
        why = `the audit webhook answered ${res.status}`;
      } catch (e) {
        why = `the audit webhook could not be reached: ${(e as Error).message}`;
      }
      if (attempt === AUDIT_WEBHOOK_ATTEMPTS || (this.closed && attempt >= 2)) break;
      if (!this.closed) await this.sleep(wait);
      wait *= 2;
    }
    this.opts.lost?.(batch.length, why);
  }
}
