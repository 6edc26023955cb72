/**
 * What the three-node chaos suite (cluster.chaos.test.ts) records about a fault, and its own
 * control-plane requests: a private connection pool per target, so that a ServerHandle stop
 * (which destroys the harness's shared pools) never cuts them, and every call is bounded.
 */
import { Agent, request as undiciRequest } from 'undici7';
import type { HttpTarget } from '../support/server.js';
import type { FaultKind } from './chaos.network.js';

/** One injected fault and what was measured around it. */
export interface FaultRecord {
  readonly kind: FaultKind;
  readonly round: number;
  node: string;
  /** ns since origin: injection, and the end of the settle phase after healing. */
  readonly start: number;
  end: number;
  /** Injection to the first acknowledged write called after it (ms). */
  firstWriteMs?: number;
  /** Ops with an unknown outcome or not served (timeouts, 5xx, refused) called during the fault. */
  failed: number;
  /** Statuses of Most Recent reads sent to the minority side (must never be 200). */
  readonly minorityReads: Array<number | string>;
  /** `PUT 504`-style results of writes sent to the minority side about an object it has not
   * seen (must never be 200, 404 or 409: any definite answer there is made without a quorum). */
  readonly minorityWrites: string[];
  notes: string[];
}

const ctlAgents = new Map<string, Agent>();

/** Closes every pool ctl() opened (at the end of the suite). */
export async function closeCtlAgents(): Promise<void> {
  await Promise.all([...ctlAgents.values()].map((a) => a.destroy().catch(() => undefined)));
  ctlAgents.clear();
}
function ctlAgent(t: HttpTarget): Agent {
  let a = ctlAgents.get(t.url);
  if (a === undefined) {
    a = new Agent({ connect: { ca: t.caPem, cert: t.adminCertPem, key: t.adminKeyPem }, keepAliveTimeout: 5_000 });
    ctlAgents.set(t.url, a);
  }
  return a;
}

/** An HTTP answer of ctl(). */
export interface CtlResponse {
  readonly status: number;
  readonly text: string;
  json<T>(): T;
}

/** One bounded request; a transport failure or timeout is answered as status = error code. */
export async function ctl(
  t: HttpTarget,
  method: string,
  path: string,
  opts: { body?: unknown; timeoutMs?: number } = {},
): Promise<CtlResponse | { status: string }> {
  const timeoutMs = opts.timeoutMs ?? 3000;
  try {
    const res = await undiciRequest(new URL(path, t.url), {
      method,
      headers: opts.body !== undefined ? { 'content-type': 'application/json' } : {},
      ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
      dispatcher: ctlAgent(t),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.body.text();
    return { status: res.statusCode, text, json: <T>() => JSON.parse(text) as T };
  } catch (e) {
    const err = e as { code?: string; name?: string; cause?: { code?: string } };
    return { status: err.code ?? err.cause?.code ?? err.name ?? 'error' };
  }
}

/** Whether the request got an HTTP answer (not a transport error). */
export function isOk(r: CtlResponse | { status: string }): r is CtlResponse {
  return typeof r.status === 'number';
}

/** A gauge or counter of /metrics, NaN when unavailable. */
export async function metric(t: HttpTarget, name: string): Promise<number> {
  const r = await ctl(t, 'GET', '/metrics');
  if (!isOk(r) || r.status !== 200) return NaN;
  const line = r.text.split('\n').find((l) => l.startsWith(`${name} `));
  return line !== undefined ? Number(line.split(' ')[1]) : NaN;
}

/** Nearest-rank quantile of ascending values (p50 of [a, b] is a). */
export function quantile(sorted: readonly number[], q: number): number | undefined {
  if (sorted.length === 0) return undefined;
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)];
}

/** The list shape the suite reads. */
export interface ListObj {
  metadata: { resourceVersion: string; continue?: string };
  items: Array<{ metadata: { name: string; resourceVersion: string }; data?: Record<string, string> }>;
}
