/**
 * The flow-control port of the request pipeline: decides whether a request may be served now.
 * Today it is kube-apiserver's max-in-flight filter (http/inflight.ts); API Priority and
 * Fairness later takes the same place, classifying on the authenticated user, which is why this
 * stage runs after authentication and impersonation.
 */
import type { UserInfo } from '@app/auth';
import { InflightLimiter, inflightKind, type RequestKind } from '../http/inflight.js';
import type { RequestInfo } from '../http/request-info.js';

/**
 * The answer of flow control: `release` (call once when the answer is done; absent for an exempt
 * request), or `refused` naming the budget that is exhausted.
 */
export interface FlowControlTicket {
  release?: () => void;
  refused?: RequestKind;
}

/** One flow-control policy. */
export interface FlowControl {
  /** Admits a request or refuses it at once. */
  admit(method: string, info: RequestInfo, user: UserInfo): FlowControlTicket;
  /** Requests of a kind in flight now (for /metrics). */
  inFlight(kind: RequestKind): number;
}

/** Injection token of the flow-control policy. */
export const FLOW_CONTROL = Symbol.for('kapi.FlowControl');

const EXEMPT: FlowControlTicket = Object.freeze({});

/** `--max-requests-inflight` / `--max-mutating-requests-inflight` (0 = no limit). */
export class MaxInflightFlowControl implements FlowControl {
  private readonly limiter: InflightLimiter;

  constructor(limits: { readOnly: number; mutating: number }) {
    this.limiter = new InflightLimiter(limits);
  }

  admit(method: string, info: RequestInfo, user: UserInfo): FlowControlTicket {
    // Only API paths count (health, /version, /metrics, OpenAPI are not API requests here).
    if (!info.apiPrefix) return EXEMPT;
    const kind = inflightKind(method, info, user);
    if (kind === undefined) return EXEMPT;
    const release = this.limiter.tryAcquire(kind);
    return release ? { release } : { refused: kind };
  }

  inFlight(kind: RequestKind): number {
    return this.limiter.inFlight(kind);
  }
}
