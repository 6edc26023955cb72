/**
 * Token cleaner (kube-controller-manager's `tokencleaner`, pkg/controller/bootstrap
 * tokencleaner.go): deletes a bootstrap token Secret once its `expiration` has passed (an
 * unparsable expiration counts as passed), with the Secret's UID as precondition so that a
 * Secret created again under the same name is not taken with it. A Secret that expires later
 * gets one timer for its expiration time; nothing polls. Every change of a Secret evaluates it
 * again (a new expiration replaces its timer).
 */
import { StatusError, type KubeObject } from '@app/apimachinery';
import { timeToExpiry } from '@app/auth';

/** What the cleaner needs: the bootstrap token Secrets (a watched cache), a delete and a clock. */
export interface TokenCleanerDeps {
  /** Every bootstrap token Secret, by key. */
  secrets(): Iterable<[string, KubeObject]>;
  /** The Secret of a key, if it still exists. */
  secret(key: string): KubeObject | undefined;
  /** Subscribes to changes of Secrets by key; returns the unsubscribe. */
  onChange(listener: (key: string) => void): () => void;
  /** Deletes the Secret if it still has that UID (404 and 409 mean it is gone or replaced). */
  delete(secret: KubeObject): Promise<void>;
  /** Milliseconds since the epoch. Default Date.now. */
  now?: () => number;
  /** Delay before retrying a failed delete, ms. Default 1000. */
  retryMs?: number;
  /** Failure reports. Default stderr. */
  log?: (line: string) => void;
}

/** Timers hold at most 2^31-1 ms; a later expiration is waited for in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The token cleaner; start() evaluates every Secret, stop() drops every timer. */
export class TokenCleaner {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly deps: TokenCleanerDeps) {}

  start(): void {
    this.unsubscribe = this.deps.onChange((key) => this.evaluate(key));
    for (const [key] of this.deps.secrets()) this.evaluate(key);
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  /** Keys with a pending expiration timer (for tests and metrics). */
  get pending(): number {
    return this.timers.size;
  }

  private at(key: string, ms: number): void {
    clearTimeout(this.timers.get(key));
    const t = setTimeout(
      () => {
        this.timers.delete(key);
        this.evaluate(key);
      },
      Math.min(ms, MAX_TIMER_MS),
    );
    t.unref();
    this.timers.set(key, t);
  }

  private evaluate(key: string): void {
    if (!this.unsubscribe) return;
    clearTimeout(this.timers.get(key));
    this.timers.delete(key);
    const secret = this.deps.secret(key);
    if (!secret || secret.metadata.deletionTimestamp) return;
    const ttl = timeToExpiry(secret, (this.deps.now ?? Date.now)());
    if (ttl === undefined) return;
    if (ttl > 0) {
      this.at(key, ttl);
      return;
    }
    this.deps.delete(secret).catch((e) => {
      if (e instanceof StatusError && (e.code === 404 || e.code === 409)) return;
      (this.deps.log ?? ((l) => process.stderr.write(l + '\n')))(`token cleaner: deleting ${key} failed (${(e as Error).message}); retrying`);
      if (this.unsubscribe) this.at(key, this.deps.retryMs ?? 1000);
    });
  }
}
