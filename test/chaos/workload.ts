/**
 * The chaos workload: concurrent clients doing random creates, gets, conditional updates,
 * conditional deletes and lists of ConfigMaps on a small key set, spread over a list of
 * endpoints, recording every operation for the linearizability checker; and a watcher that
 * follows the event stream across reconnects and checks it against the history.
 *
 * Outcome rules (what a client can know, Kubernetes API conventions "Concurrency Control"):
 * 2xx and the 4xx answers the model knows (404, 409) are definite; other 4xx (400, 422, 429...)
 * mean the request was refused before any effect and the op is dropped; a refused connection
 * means nothing was sent (dropped), and so does a 503 (the server refuses before proposing); other
 * 5xx, timeouts, resets and any other transport failure are
 * unknown: the write may or may not have been applied.
 */
import { Agent, request as undiciRequest } from 'undici7';
import type { HttpTarget } from '../support/http.helper.js';
import type { KeyOp, OpInput, OpOutput, Rev } from './linearizability.js';

/** Nanoseconds since `origin` (process.hrtime: monotonic, unaffected by clock steps). */
export function nowNs(origin: bigint): number {
  return Number(process.hrtime.bigint() - origin);
}

/** One recorded operation: a KeyOp per key touched (a list yields one read per key). */
export interface RecordedOp {
  readonly id: number;
  readonly client: number;
  readonly endpoint: string;
  readonly kind: 'create' | 'get' | 'update' | 'delete' | 'list';
  readonly key: string;
  readonly call: number;
  readonly ret: number;
  /** 'ok' | 'fail' (a definite refusal the model knows) | 'unknown' | 'dropped'. */
  readonly outcome: 'ok' | 'fail' | 'unknown' | 'dropped';
  readonly status: number | string;
  /** KeyOps this op contributes to the history (none when dropped). */
  readonly keyOps: readonly KeyOp[];
}

/** Options of {@link runWorkload}. */
export interface WorkloadOptions {
  /** Endpoints to spread requests over (nodes and/or a balancer); client i starts at endpoint i mod n.
   * Read at every request: the caller may add or remove endpoints while the workload runs (the
   * chaos suite follows membership changes), as long as the array is never empty. */
  readonly endpoints: readonly HttpTarget[];
  readonly namespace: string;
  readonly clients: number;
  /** Key names used: `<prefix>0..<keys-1>`. */
  readonly keys: number;
  readonly keyPrefix?: string;
  /** Stop after this many ops in total, or after durationMs, whichever first. */
  readonly maxOps: number;
  readonly durationMs: number;
  /** Per-request timeout (ms); a timed-out request is an unknown outcome. Default 2000. */
  readonly requestTimeoutMs?: number;
  /** Time origin for hrtime stamps (share it with the watcher and the fault log). */
  readonly origin: bigint;
  /** Deterministic randomness; default Math.random. */
  readonly random?: () => number;
  /** Called after every op (for live figures). */
  readonly onOp?: (op: RecordedOp) => void;
  /** Ask to stop early. */
  readonly signal?: AbortSignal;
}

/** Everything a workload run recorded. */
export interface WorkloadResult {
  readonly ops: readonly RecordedOp[];
  /** The checker's input: all KeyOps of all ops. */
  readonly history: readonly KeyOp[];
}

interface ObjMeta {
  metadata?: { name?: string; resourceVersion?: string };
  data?: Record<string, string>;
}

/**
 * A private connection pool (admin identity). Not the harness's shared cache: ServerHandle.stop()
 * closes those and waits for their requests, and a long watch would then delay a kill -9.
 */
function privateAgent(t: HttpTarget, connections: number): Agent {
  return new Agent({ connect: { ca: t.caPem, cert: t.adminCertPem, key: t.adminKeyPem }, connections, keepAliveTimeout: 10_000 });
}

async function call(
  agent: Agent,
  t: HttpTarget,
  method: string,
  path: string,
  body: unknown,
  timeoutMs: number,
): Promise<{ status: number; json: unknown } | { error: string; refused: boolean }> {
  try {
    const res = await undiciRequest(new URL(path, t.url), {
      method,
      headers: body !== undefined ? { 'content-type': 'application/json' } : {},
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      dispatcher: agent,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.body.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.statusCode, json };
  } catch (e) {
    const err = e as { code?: string; name?: string; cause?: { code?: string } };
    const code = err.code ?? err.cause?.code ?? err.name ?? 'error';
    return { error: code, refused: code === 'ECONNREFUSED' };
  }
}

function rvOf(j: unknown): Rev | undefined {
  const v = (j as ObjMeta | undefined)?.metadata?.resourceVersion;
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined;
}

/**
 * Runs the workload until maxOps or durationMs; never hangs (every request has a timeout).
 * Each client remembers the last RV it learned per key and uses it as the precondition of its
 * updates and deletes, as a real controller does (so many of them conflict, on purpose).
 */
export async function runWorkload(o: WorkloadOptions): Promise<WorkloadResult> {
  const rand = o.random ?? Math.random;
  const prefix = o.keyPrefix ?? 'chaos-';
  const timeout = o.requestTimeoutMs ?? 2000;
  const base = `/api/v1/namespaces/${o.namespace}/configmaps`;
  const ops: RecordedOp[] = [];
  const history: KeyOp[] = [];
  const deadline = Date.now() + o.durationMs;
  let seq = 0;
  let kid = 0;
  const agents = new Map<HttpTarget, Agent>();
  const agentFor = (t: HttpTarget): Agent => {
    let a = agents.get(t);
    if (a === undefined) {
      a = privateAgent(t, 64);
      agents.set(t, a);
    }
    return a;
  };
  const done = (): boolean => seq >= o.maxOps || Date.now() >= deadline || o.signal?.aborted === true;

  const client = async (c: number): Promise<void> => {
    const learned = new Map<string, Rev>();
    let ep = c;
    while (!done()) {
      const id = seq++;
      const target = o.endpoints[ep % o.endpoints.length]!;
      ep++;
      const k = Math.floor(rand() * o.keys);
      const key = `${prefix}${k}`;
      const roll = rand();
      const kind: RecordedOp['kind'] = roll < 0.2 ? 'create' : roll < 0.4 ? 'get' : roll < 0.7 ? 'update' : roll < 0.85 ? 'delete' : 'list';
      const value = `c${c}-${id}`;
      const pre = learned.get(key) ?? 1;
      const callT = nowNs(o.origin);
      let r: Awaited<ReturnType<typeof call>>;
      const a = agentFor(target);
      if (kind === 'create')
        r = await call(a, target, 'POST', base, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: key }, data: { v: value } }, timeout);
      else if (kind === 'get') r = await call(a, target, 'GET', `${base}/${key}`, undefined, timeout);
      else if (kind === 'update')
        r = await call(
          a,
          target,
          'PUT',
          `${base}/${key}`,
          { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: key, resourceVersion: String(pre) }, data: { v: value } },
          timeout,
        );
      else if (kind === 'delete')
        r = await call(
          a,
          target,
          'DELETE',
          `${base}/${key}`,
          { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { resourceVersion: String(pre) } },
          timeout,
        );
      else r = await call(a, target, 'GET', base, undefined, timeout);
      const retT = nowNs(o.origin);
      const keyOps: KeyOp[] = [];
      let outcome: RecordedOp['outcome'];
      let status: number | string;
      const mk = (input: OpInput, output: OpOutput, kk = key): void => {
        keyOps.push({ id: kid++, key: kk, client: c, call: callT, ret: retT, input, output, note: `${kind} via ${target.url} -> ${status}` });
      };
      const input: OpInput | undefined =
        kind === 'create'
          ? { kind: 'create', value }
          : kind === 'get'
            ? { kind: 'get' }
            : kind === 'update'
              ? { kind: 'update', value, precondition: pre }
              : kind === 'delete'
                ? { kind: 'delete', precondition: pre }
                : undefined;
      if ('error' in r) {
        status = r.error;
        outcome = r.refused ? 'dropped' : 'unknown';
        if (!r.refused && input !== undefined && kind !== 'get') mk(input, { kind: 'unknown' });
      } else {
        status = r.status;
        const s = r.status;
        if (s === 503) {
          // The server answers 503 only before it proposes anything (starting up, shutting
          // down, a read without quorum): the request had no effect.
          outcome = 'dropped';
        } else if (s >= 500) {
          outcome = 'unknown';
          if (input !== undefined && kind !== 'get') mk(input, { kind: 'unknown' });
        } else if (kind === 'list') {
          if (s === 200) {
            outcome = 'ok';
            const items = (r.json as { items?: ObjMeta[] } | undefined)?.items ?? [];
            const seen = new Map<string, ObjMeta>();
            for (const it of items) if (it.metadata?.name !== undefined) seen.set(it.metadata.name, it);
            // A list is a read of every key; checked per key (not as one atomic snapshot).
            for (let i = 0; i < o.keys; i++) {
              const name = `${prefix}${i}`;
              const it = seen.get(name);
              const rv = rvOf(it);
              if (it === undefined) mk({ kind: 'get' }, { kind: 'notFound' }, name);
              else if (rv !== undefined) {
                mk({ kind: 'get' }, { kind: 'ok', rv, value: it.data?.v ?? '' }, name);
                learned.set(name, rv);
              }
            }
          } else outcome = 'dropped';
        } else if (s >= 200 && s < 300) {
          outcome = 'ok';
          const rv = rvOf(r.json);
          if (kind === 'get') {
            if (rv !== undefined) {
              mk(input!, { kind: 'ok', rv, value: (r.json as ObjMeta).data?.v ?? '' });
              learned.set(key, rv);
            }
          } else if (kind === 'delete') {
            mk(input!, { kind: 'ok' });
            learned.delete(key);
          } else {
            mk(input!, rv !== undefined ? { kind: 'ok', rv } : { kind: 'unknown' });
            if (rv !== undefined) learned.set(key, rv);
          }
        } else if (s === 404) {
          outcome = 'fail';
          mk(input!, { kind: 'notFound' });
        } else if (s === 409) {
          outcome = 'fail';
          const reason = (r.json as { reason?: string } | undefined)?.reason;
          mk(input!, reason === 'AlreadyExists' ? { kind: 'alreadyExists' } : { kind: 'conflict' });
        } else {
          outcome = 'dropped';
        }
      }
      const rec: RecordedOp = { id, client: c, endpoint: target.url, kind, key: kind === 'list' ? '*' : key, call: callT, ret: retT, outcome, status, keyOps };
      ops.push(rec);
      history.push(...keyOps);
      o.onOp?.(rec);
    }
  };
  await Promise.all(Array.from({ length: o.clients }, (_, c) => client(c)));
  await Promise.all([...agents.values()].map((x) => x.destroy().catch(() => undefined)));
  return { ops, history };
}

/** One watch event as the watcher saw it. */
export interface SeenEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly key: string;
  readonly rv: Rev;
  readonly value: string;
  readonly at: number;
  /** Which connection (0, 1, ...) delivered it. */
  readonly connection: number;
}

/** A watch follower; see {@link startWatcher}. */
export interface Watcher {
  readonly events: SeenEvent[];
  /** Problems seen live: revisions not increasing, ERROR events, 410 Gone. */
  readonly problems: string[];
  readonly reconnects: () => number;
  /** Stops following and resolves when the stream is closed. */
  stop(): Promise<void>;
}

/**
 * Follows `GET .../configmaps?watch=1&resourceVersion=<from>` through the endpoints (one at a
 * time, moving to the next on failure) and resumes after a disconnect from the last RV it saw,
 * as client-go's reflector does. Records each event; a revision not above the previous one
 * (within or across connections) is a problem. It starts at `endpoints[first]`; the array is
 * read at every reconnect, so the caller may add or remove endpoints meanwhile (never empty).
 */
export function startWatcher(endpoints: readonly HttpTarget[], namespace: string, fromRv: Rev, origin: bigint, first = 0): Watcher {
  const events: SeenEvent[] = [];
  const problems: string[] = [];
  let last = fromRv;
  let connections = 0;
  let stopped = false;
  const ctl = new AbortController();
  const agents = new Map<HttpTarget, Agent>();
  const loop = async (): Promise<void> => {
    let ep = first;
    while (!stopped) {
      const t = endpoints[ep % endpoints.length]!;
      ep++;
      const conn = connections++;
      try {
        const res = await undiciRequest(new URL(`/api/v1/namespaces/${namespace}/configmaps?watch=1&resourceVersion=${last}&timeoutSeconds=30`, t.url), {
          method: 'GET',
          dispatcher: agents.get(t) ?? agents.set(t, privateAgent(t, 2)).get(t)!,
          signal: ctl.signal,
          headersTimeout: 5000,
          bodyTimeout: 0,
        });
        if (res.statusCode !== 200) {
          const body = await res.body.text();
          if (res.statusCode === 410) problems.push(`watch from ${last} answered 410 Gone: events may be missing`);
          await new Promise((r) => setTimeout(r, 100));
          void body;
          continue;
        }
        let buf = '';
        for await (const chunk of res.body) {
          buf += (chunk as Buffer).toString('utf8');
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl).trim();
            buf = buf.slice(nl + 1);
            if (line === '') continue;
            const ev = JSON.parse(line) as { type: string; object: ObjMeta & { code?: number; message?: string } };
            if (ev.type === 'BOOKMARK') continue;
            if (ev.type === 'ERROR') {
              problems.push(`ERROR event: ${ev.object.code} ${ev.object.message}`);
              break;
            }
            const rv = rvOf(ev.object) ?? -1;
            if (rv <= last)
              problems.push(`revision went backwards or repeated: ${rv} after ${last} (${ev.type} ${ev.object.metadata?.name}, connection ${conn})`);
            last = Math.max(last, rv);
            events.push({
              type: ev.type as SeenEvent['type'],
              key: ev.object.metadata?.name ?? '',
              rv,
              value: ev.object.data?.v ?? '',
              at: nowNs(origin),
              connection: conn,
            });
          }
        }
      } catch {
        if (stopped) return;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  const running = loop();
  return {
    events,
    problems,
    reconnects: () => Math.max(0, connections - 1),
    async stop(): Promise<void> {
      stopped = true;
      ctl.abort();
      await running.catch(() => undefined);
      await Promise.all([...agents.values()].map((x) => x.destroy().catch(() => undefined)));
    },
  };
}

/**
 * Checks a watch record against the workload's history:
 *  - every acknowledged create/update RV appears as an ADDED/MODIFIED event of that key with the
 *    written value (none missed, none altered);
 *  - every acknowledged delete is followed by a DELETED event of that key;
 *  - every event's value was written by some client (no phantom writes);
 *  - per key, events alternate sensibly (no MODIFIED/DELETED of an absent object, no ADDED of a
 *    present one).
 * Returns the problems found (empty when all hold). `fromRv`: the watch start.
 */
export function checkWatch(events: readonly SeenEvent[], history: readonly KeyOp[], fromRv: Rev): string[] {
  const problems: string[] = [];
  const byRv = new Map<Rev, SeenEvent>();
  for (const e of events) byRv.set(e.rv, e);
  const written = new Set<string>();
  for (const o of history) {
    if (o.input.kind === 'create' || o.input.kind === 'update') written.add(`${o.key}\0${o.input.value}`);
    if ((o.input.kind === 'create' || o.input.kind === 'update') && o.output.kind === 'ok' && o.output.rv !== undefined && o.output.rv > fromRv) {
      const e = byRv.get(o.output.rv);
      if (e === undefined) problems.push(`acknowledged ${o.input.kind} of ${o.key} at rv ${o.output.rv} never seen by the watch`);
      else if (e.key !== o.key || e.value !== o.input.value || e.type === 'DELETED')
        problems.push(`event at rv ${o.output.rv} is ${e.type} ${e.key}=${e.value}, expected ${o.key}=${o.input.value}`);
    }
  }
  for (const o of history) {
    const inp = o.input;
    if (inp.kind === 'delete' && o.output.kind === 'ok' && inp.precondition >= fromRv) {
      const after = events.some((e) => e.key === o.key && e.type === 'DELETED' && e.rv > inp.precondition);
      if (!after) problems.push(`acknowledged delete of ${o.key} (precondition rv ${inp.precondition}) has no DELETED event`);
    }
  }
  const present = new Map<string, boolean>();
  for (const e of events) {
    if (e.type !== 'DELETED' && !written.has(`${e.key}\0${e.value}`))
      problems.push(`event ${e.type} ${e.key}=${e.value} at rv ${e.rv} carries a value no client wrote`);
    const was = present.get(e.key);
    if (was !== undefined) {
      if (e.type === 'ADDED' && was) problems.push(`ADDED ${e.key} at rv ${e.rv} while it existed`);
      if (e.type !== 'ADDED' && !was) problems.push(`${e.type} ${e.key} at rv ${e.rv} while it did not exist`);
    }
    present.set(e.key, e.type !== 'DELETED');
  }
  return problems;
}
