/**
 * Retries of the calls to an authentication or authorization webhook, as kube-apiserver makes
 * them (its default webhook backoff: 500 ms, growing 1.5 times per attempt with 20% jitter, five
 * attempts in all). Only transient failures are retried: a connection reset (Node's "socket hang
 * up" included), an answer of 500, 504 or 429, and any answer carrying Retry-After. A refused
 * connection, a timeout or another status is final at once.
 */

/** The schedule of the retries. */
export interface WebhookBackoff {
  /** The wait before the second attempt, in ms. */
  initialMs: number;
  /** How much each wait grows over the one before. */
  factor: number;
  /** Each wait is lengthened by up to this share of itself, at random. */
  jitter: number;
  /** Attempts in all (1: no retry). */
  steps: number;
}

/** kube-apiserver's schedule for its token and authorization webhooks. */
export const DEFAULT_WEBHOOK_BACKOFF: WebhookBackoff = { initialMs: 500, factor: 1.5, jitter: 0.2, steps: 5 };

/** An answer of a webhook as the HTTPS client returns it. */
export interface WebhookAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string | string[] | undefined>;
}

/** Whether an outcome of one attempt is worth another (see the module comment). */
export function isTransientWebhookOutcome(outcome: WebhookAnswer | Error): boolean {
  if (outcome instanceof Error) return (outcome as NodeJS.ErrnoException).code === 'ECONNRESET';
  if (outcome.status === 500 || outcome.status === 504 || outcome.status === 429) return true;
  return outcome.headers?.['retry-after'] !== undefined && (outcome.status < 200 || outcome.status >= 300);
}

/** The wait before attempt `attempt + 1` (attempt counts from 1). */
export function webhookBackoffDelay(b: WebhookBackoff, attempt: number, random: () => number = Math.random): number {
  const base = b.initialMs * b.factor ** (attempt - 1);
  return base + (b.jitter > 0 ? base * b.jitter * random() : 0);
}

/**
 * Wraps a webhook's post so that transient failures are tried again on `backoff`'s schedule.
 * The last attempt's outcome is the result: its answer, or its error thrown.
 */
export function withWebhookBackoff<R extends WebhookAnswer>(
  post: (review: unknown) => Promise<R>,
  backoff: WebhookBackoff = DEFAULT_WEBHOOK_BACKOFF,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
): (review: unknown) => Promise<R> {
  return async (review) => {
    for (let attempt = 1; ; attempt++) {
      let outcome: R | Error;
      try {
        outcome = await post(review);
      } catch (e) {
        outcome = e instanceof Error ? e : new Error(String(e));
      }
      if (attempt >= backoff.steps || !isTransientWebhookOutcome(outcome)) {
        if (outcome instanceof Error) throw outcome;
        return outcome;
      }
      await sleep(webhookBackoffDelay(backoff, attempt));
    }
  };
}
