/**
 * The limit on requests in flight (kube-apiserver's `--max-requests-inflight` and
 * `--max-mutating-requests-inflight`, its filter before API Priority and Fairness): at most N
 * read-only and M mutating requests are served at once; one more is refused at once with 429
 * TooManyRequests and `Retry-After: 1`, which kubectl and client-go retry by themselves.
 *
 * As in kube-apiserver: long-running requests (watches, logs and the other streams of
 * isLongRunning) do not count, nor do requests of the
 * `system:masters` group, so an administrator can still act on an overloaded server; a limit of
 * 0 means no limit. The health checks, /version and /metrics are outside it (they are not API
 * requests).
 */
import { PRIVILEGED_GROUP, type UserInfo } from '@app/auth';
import { isLongRunning, type RequestInfo } from './request-info.js';

export type RequestKind = 'readOnly' | 'mutating';

const MUTATING_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Which budget a request draws on; undefined when it is exempt. */
export function inflightKind(method: string, info: Pick<RequestInfo, 'verb' | 'subresource'>, user: Pick<UserInfo, 'groups'>): RequestKind | undefined {
  if (isLongRunning(info)) return undefined;
  if (user.groups.includes(PRIVILEGED_GROUP)) return undefined;
  return MUTATING_METHODS.has(method.toUpperCase()) ? 'mutating' : 'readOnly';
}

/** Counts requests in flight per kind against their limits. */
export class InflightLimiter {
  private readonly current: Record<RequestKind, number> = { readOnly: 0, mutating: 0 };

  constructor(private readonly limits: Readonly<Record<RequestKind, number>>) {}

  /**
   * Takes a place for a request of `kind`: returns the function that gives it back (call it
   * exactly once, when the request is done; later calls do nothing), or undefined when the
   * limit is reached.
   */
  tryAcquire(kind: RequestKind): (() => void) | undefined {
    const limit = this.limits[kind];
    if (limit > 0 && this.current[kind] >= limit) return undefined;
    this.current[kind]++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.current[kind]--;
    };
  }

  /** Requests of `kind` in flight now. */
  inFlight(kind: RequestKind): number {
    return this.current[kind];
  }
}
