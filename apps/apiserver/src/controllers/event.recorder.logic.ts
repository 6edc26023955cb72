/**
 * The event recorder's logic (client-go's tools/record: makeEvent, the EventCorrelator and
 * recordToSink), pure but for the sink it writes to and an injected clock:
 *
 * - makeEvent: a core/v1 Event named `<object name>.<UnixNano in hex>` in the object's
 *   namespace (`default` for a cluster-scoped object), count 1, firstTimestamp = lastTimestamp
 *   = now, source.component and reportingComponent = the controller's name.
 * - EventCorrelator, in client-go's order: the aggregator (10 events of the same source,
 *   object, type and reason but different messages within 10 minutes become one Event
 *   "(combined from similar events): <message>"), the logger (an event identical to one seen
 *   before — same source, object, type, reason and message — becomes a patch of the existing
 *   Event's count, lastTimestamp and message), then the spam filter (a token bucket per source
 *   and object: burst 25, one token per 5 minutes; an event without a token is dropped). The
 *   caches are LRU caches of 4096 entries.
 * - EventSinkQueue: recording never waits for a write. Events wait in a bounded queue (1000, as
 *   client-go's broadcaster; beyond it they are dropped and counted) and one worker writes them
 *   in order: a repeat is patched (a missing Event is created again), a new one created; a
 *   write that failed for a transient reason (conflict, 429, 5xx, storage unavailable) is tried
 *   again a few times, others are given up at once (a terminating or missing namespace, a name
 *   already taken, an invalid Event).
 */
import { managedFieldsTime, type KubeObject } from '@app/apimachinery';

export type EventType = 'Normal' | 'Warning';

/** core/v1 ObjectReference (what an Event is about). */
export interface ObjectReference {
  kind?: string;
  apiVersion?: string;
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

/** core/v1 EventSource. */
export interface EventSource {
  component: string;
  host?: string;
}

/** A core/v1 Event as the recorder writes it. */
export interface CoreEvent extends KubeObject {
  metadata: { name: string; namespace: string; resourceVersion?: string; [k: string]: unknown };
  involvedObject: ObjectReference;
  reason: string;
  message: string;
  source: EventSource;
  firstTimestamp: string;
  lastTimestamp: string;
  count: number;
  type: EventType;
  reportingComponent: string;
  reportingInstance: string;
}

// client-go's defaults (tools/record/events_cache.go, event.go).
export const MAX_LRU_CACHE_ENTRIES = 4096;
export const DEFAULT_AGGREGATE_MAX_EVENTS = 10;
export const DEFAULT_AGGREGATE_INTERVAL_MS = 600_000;
export const DEFAULT_SPAM_BURST = 25;
export const DEFAULT_SPAM_QPS = 1 / 300;
export const MAX_QUEUED_EVENTS = 1000;
export const AGGREGATE_PREFIX = '(combined from similar events): ';

/** The reference to an object (reference.GetReference): kind, apiVersion, name, namespace, uid, resourceVersion. */
export function referenceOf(obj: KubeObject | ObjectReference): ObjectReference {
  if (!('metadata' in obj) || !obj.metadata || typeof obj.metadata !== 'object') return { ...(obj as ObjectReference) };
  const o = obj as KubeObject;
  const ref: ObjectReference = { kind: o.kind, apiVersion: o.apiVersion, name: o.metadata.name, namespace: o.metadata.namespace };
  if (o.metadata.uid) ref.uid = o.metadata.uid;
  if (o.metadata.resourceVersion) ref.resourceVersion = o.metadata.resourceVersion;
  for (const k of Object.keys(ref) as Array<keyof ObjectReference>) if (ref[k] === undefined || ref[k] === '') delete ref[k];
  return ref;
}

/** Go's strconv.Quote for the strings events carry (JSON's escapes are the same for them). */
function goQuote(s: string): string {
  return JSON.stringify(s);
}

/** fmt.Sprintf for the verbs event messages use: %v %s %d %q %x %%. */
export function goSprintf(format: string, ...args: unknown[]): string {
  let i = 0;
  const text = (v: unknown): string => {
    if (v instanceof Error) return v.message;
    if (v === null || v === undefined) return '<nil>';
    if (typeof v === 'object') return JSON.stringify(v);
    return String(v);
  };
  const out = format.replace(/%([%vsdqx])/g, (_m, verb: string) => {
    if (verb === '%') return '%';
    if (i >= args.length) return `%!${verb}(MISSING)`;
    const v = args[i++];
    if (verb === 'q') return goQuote(text(v));
    if (verb === 'x') return typeof v === 'number' || typeof v === 'bigint' ? v.toString(16) : Buffer.from(text(v)).toString('hex');
    return text(v);
  });
  return i < args.length ? `${out}%!(EXTRA ${args.slice(i).map(text).join(', ')})` : out;
}

/** metav1.Time: RFC 3339 in seconds. */
export function metaTime(ms: number): string {
  return managedFieldsTime(new Date(ms));
}

/**
 * UnixNano values that never repeat in this process: the clock's milliseconds with the
 * sub-millisecond part of the monotonic clock, raised by one when a value would not grow.
 */
export class UniqueNanos {
  private last = 0n;
  constructor(private readonly subMs: () => bigint = () => process.hrtime.bigint() % 1_000_000n) {}

  next(nowMs: number): bigint {
    let n = BigInt(Math.floor(nowMs)) * 1_000_000n + this.subMs();
    if (n <= this.last) n = this.last + 1n;
    this.last = n;
    return n;
  }
}

/** makeEvent: a new Event about `ref`. */
export function makeEvent(
  ref: ObjectReference,
  type: EventType,
  reason: string,
  message: string,
  source: EventSource,
  reportingInstance: string,
  nowMs: number,
  nanos: bigint,
): CoreEvent {
  const t = metaTime(nowMs);
  const source_: EventSource = source.host ? { component: source.component, host: source.host } : { component: source.component };
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `${ref.name ?? ''}.${nanos.toString(16)}`, namespace: ref.namespace || 'default' },
    involvedObject: ref,
    reason,
    message,
    source: source_,
    firstTimestamp: t,
    lastTimestamp: t,
    count: 1,
    type,
    reportingComponent: source.component,
    reportingInstance,
  };
}

/** getEventKey: source, object, type, reason and message. */
export function eventKey(e: CoreEvent): string {
  const o = e.involvedObject;
  return [e.source.component, e.source.host, o.kind, o.namespace, o.name, o.fieldPath, o.uid, o.apiVersion, e.type, e.reason, e.message]
    .map((x) => x ?? '')
    .join('');
}

/** getSpamKey: source and object. */
export function spamKey(e: CoreEvent): string {
  const o = e.involvedObject;
  return [e.source.component, e.source.host, o.kind, o.namespace, o.name, o.uid, o.apiVersion].map((x) => x ?? '').join('');
}

/** EventAggregatorByReasonFunc: the aggregate key (all but the message) and the local key (the message). */
export function aggregateKeys(e: CoreEvent): { aggregate: string; local: string } {
  const o = e.involvedObject;
  const aggregate = [
    e.source.component,
    e.source.host,
    o.kind,
    o.namespace,
    o.name,
    o.uid,
    o.apiVersion,
    e.type,
    e.reason,
    e.reportingComponent,
    e.reportingInstance,
  ]
    .map((x) => x ?? '')
    .join('');
  return { aggregate, local: e.message };
}

/** A least-recently-used cache of a fixed size. */
export class LruCache<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly max: number) {}

  get(key: string): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }

  set(key: string, v: V): void {
    this.map.delete(key);
    this.map.set(key, v);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as string);
  }

  get size(): number {
    return this.map.size;
  }
}

/** flowcontrol's token bucket (passive): starts full, refills `qps` tokens a second up to `burst`. */
export class TokenBucket {
  private tokens: number;
  private at: number;
  constructor(
    private readonly burst: number,
    private readonly qps: number,
    nowMs: number,
  ) {
    this.tokens = burst;
    this.at = nowMs;
  }

  tryAccept(nowMs: number): boolean {
    this.tokens = Math.min(this.burst, this.tokens + (Math.max(0, nowMs - this.at) / 1000) * this.qps);
    this.at = Math.max(this.at, nowMs);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** What correlating one event gives: drop it, or write it (as a patch when it repeats one). */
export type CorrelateResult = { skip: true } | { skip: false; event: CoreEvent; patch?: { count: number; lastTimestamp: string; message: string } };

export interface CorrelatorOptions {
  /** The clock (ms since the epoch). */
  now: () => number;
  nanos?: UniqueNanos;
  lruSize?: number;
  burst?: number;
  qps?: number;
  aggregateMaxEvents?: number;
  aggregateIntervalMs?: number;
}

interface EventLog {
  count: number;
  firstTimestamp: string;
  name: string;
  resourceVersion?: string;
}

/** client-go's EventCorrelator: aggregation, dedup into counts, spam filter. */
export class EventCorrelator {
  private readonly aggregates: LruCache<{ localKeys: Set<string>; lastMs: number }>;
  private readonly logs: LruCache<EventLog>;
  private readonly spam: LruCache<TokenBucket>;
  private readonly nanos: UniqueNanos;

  constructor(private readonly opts: CorrelatorOptions) {
    const size = opts.lruSize ?? MAX_LRU_CACHE_ENTRIES;
    this.aggregates = new LruCache(size);
    this.logs = new LruCache(size);
    this.spam = new LruCache(size);
    this.nanos = opts.nanos ?? new UniqueNanos();
  }

  /** EventAggregate: the event itself and its event key, or the aggregate event and the aggregate key. */
  private aggregate(e: CoreEvent): { event: CoreEvent; key: string } {
    const now = this.opts.now();
    const { aggregate, local } = aggregateKeys(e);
    let rec = this.aggregates.get(aggregate);
    if (!rec || now - rec.lastMs > (this.opts.aggregateIntervalMs ?? DEFAULT_AGGREGATE_INTERVAL_MS)) rec = { localKeys: new Set(), lastMs: 0 };
    rec.localKeys.add(local);
    rec.lastMs = now;
    this.aggregates.set(aggregate, rec);
    if (rec.localKeys.size < (this.opts.aggregateMaxEvents ?? DEFAULT_AGGREGATE_MAX_EVENTS)) return { event: e, key: eventKey(e) };
    // Do not grow the set of messages beyond the maximum.
    rec.localKeys.delete(rec.localKeys.values().next().value as string);
    const t = metaTime(now);
    return {
      event: {
        ...e,
        metadata: { name: `${e.involvedObject.name ?? ''}.${this.nanos.next(now).toString(16)}`, namespace: e.metadata.namespace },
        count: 1,
        firstTimestamp: t,
        lastTimestamp: t,
        message: AGGREGATE_PREFIX + e.message,
      },
      key: aggregate,
    };
  }

  /** eventObserve: a repeat takes the name, resourceVersion and firstTimestamp of the Event it repeats, and one more count. */
  private observe(e: CoreEvent, key: string): { event: CoreEvent; patch?: { count: number; lastTimestamp: string; message: string } } {
    const event: CoreEvent = { ...e, metadata: { ...e.metadata } };
    const last = this.logs.get(key);
    let patch: { count: number; lastTimestamp: string; message: string } | undefined;
    if (last && last.count > 0) {
      event.metadata.name = last.name;
      if (last.resourceVersion) event.metadata.resourceVersion = last.resourceVersion;
      event.firstTimestamp = last.firstTimestamp;
      event.count = last.count + 1;
      patch = { count: event.count, lastTimestamp: event.lastTimestamp, message: event.message };
    }
    this.logs.set(key, {
      count: event.count,
      firstTimestamp: event.firstTimestamp,
      name: event.metadata.name,
      resourceVersion: event.metadata.resourceVersion,
    });
    return patch ? { event, patch } : { event };
  }

  /** EventSourceObjectSpamFilter: true when the event must be dropped. */
  private filtered(e: CoreEvent): boolean {
    const now = this.opts.now();
    const key = spamKey(e);
    let bucket = this.spam.get(key);
    if (!bucket) bucket = new TokenBucket(this.opts.burst ?? DEFAULT_SPAM_BURST, this.opts.qps ?? DEFAULT_SPAM_QPS, now);
    const ok = bucket.tryAccept(now);
    this.spam.set(key, bucket);
    return !ok;
  }

  /** EventCorrelate. */
  correlate(e: CoreEvent): CorrelateResult {
    const agg = this.aggregate(e);
    const observed = this.observe(agg.event, agg.key);
    if (this.filtered(observed.event)) return { skip: true };
    return { skip: false, ...observed };
  }

  /** UpdateState: what the server answered (name, resourceVersion, count) for the next repeat. */
  updateState(e: CoreEvent): void {
    this.logs.set(eventKey(e), {
      count: e.count,
      firstTimestamp: e.firstTimestamp,
      name: e.metadata.name,
      resourceVersion: e.metadata.resourceVersion,
    });
  }
}

/** Where events are written. Errors carry the HTTP status `code` (and `reason`) when the server refused. */
export interface EventSink {
  create(event: CoreEvent): Promise<CoreEvent>;
  patch(event: CoreEvent, patch: Record<string, unknown>): Promise<CoreEvent>;
}

/** Whether a failed write may succeed when tried again (recordEvent: transport errors and transient statuses). */
export function retriable(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  if (typeof code !== 'number') return true; // not an answer of the server: storage unavailable, timeout
  if (code === 409) return (e as { reason?: string }).reason === 'Conflict';
  return code === 429 || code >= 500;
}

export interface SinkQueueOptions {
  sink: EventSink;
  correlator: EventCorrelator;
  maxQueued?: number;
  /** Attempts per event (the first included). */
  maxTries?: number;
  /** Pause between attempts (ms); the first pause is a random part of it. */
  retryDelayMs?: number;
  /** Debug log (never given the Event's message or the object's content). */
  log?: (line: string) => void;
  sleep?: (ms: number) => Promise<void>;
}

/** The bounded queue and its one worker (recordToSink). */
export class EventSinkQueue {
  private readonly queue: CoreEvent[] = [];
  private running = false;
  private stopped = false;
  private idleWaiters: Array<() => void> = [];
  /** Events dropped because the queue was full. */
  dropped = 0;
  /** Events dropped by the spam filter. */
  filtered = 0;
  /** Events given up after failed writes. */
  failed = 0;
  /** Events written (created or patched). */
  written = 0;

  constructor(private readonly opts: SinkQueueOptions) {}

  /** Queues an event; never waits, never throws. False when it was dropped. */
  push(e: CoreEvent): boolean {
    if (this.stopped) return false;
    if (this.queue.length >= (this.opts.maxQueued ?? MAX_QUEUED_EVENTS)) {
      this.dropped++;
      if (this.dropped === 1 || this.dropped % 100 === 0) this.log(`queue full, ${this.dropped} event(s) dropped so far`);
      return false;
    }
    this.queue.push(e);
    if (!this.running) {
      this.running = true;
      setImmediate(() => void this.work());
    }
    return true;
  }

  /** Drops what waits and writes nothing more. */
  stop(): void {
    this.stopped = true;
    this.queue.length = 0;
    this.notifyIdle();
  }

  /** Resolves once nothing waits or is being written (tests). */
  whenIdle(): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  get length(): number {
    return this.queue.length;
  }

  private log(line: string): void {
    this.opts.log?.(`event recorder: ${line}`);
  }

  private notifyIdle(): void {
    if (this.running && !this.stopped) return;
    const w = this.idleWaiters;
    this.idleWaiters = [];
    for (const r of w) r();
  }

  private async work(): Promise<void> {
    try {
      while (!this.stopped && this.queue.length) {
        const e = this.queue.shift()!;
        try {
          await this.recordToSink(e);
        } catch (err) {
          this.failed++;
          this.log(`${describe(e)}: ${(err as Error)?.message ?? String(err)}`);
        }
      }
    } finally {
      this.running = false;
      this.notifyIdle();
    }
  }

  private async recordToSink(e: CoreEvent): Promise<void> {
    const res = this.opts.correlator.correlate(e);
    if (res.skip) {
      this.filtered++;
      return;
    }
    const maxTries = this.opts.maxTries ?? 5;
    const delay = this.opts.retryDelayMs ?? 1000;
    const sleep = this.opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref()));
    for (let tries = 1; ; tries++) {
      const outcome = await this.recordEvent(res.event, res.patch);
      if (outcome === 'done') return;
      if (tries >= maxTries || this.stopped) {
        this.failed++;
        this.log(`${describe(res.event)}: giving up after ${tries} attempt(s)`);
        return;
      }
      await sleep(tries === 1 ? Math.random() * delay : delay);
    }
  }

  /** recordEvent: 'done' when written or not worth trying again, 'retry' otherwise. */
  private async recordEvent(event: CoreEvent, patch: Record<string, unknown> | undefined): Promise<'done' | 'retry'> {
    let err: unknown;
    let written: CoreEvent | undefined;
    let create = patch === undefined || event.count <= 1;
    if (!create) {
      try {
        written = await this.opts.sink.patch(event, patch!);
      } catch (e) {
        err = e;
        // The Event was deleted (or expired) meanwhile: create it again.
        if ((e as { code?: number })?.code === 404) create = true;
      }
    }
    if (create) {
      err = undefined;
      const fresh: CoreEvent = { ...event, metadata: { ...event.metadata } };
      delete fresh.metadata.resourceVersion;
      try {
        written = await this.opts.sink.create(fresh);
      } catch (e) {
        err = e;
      }
    }
    if (written && err === undefined) {
      this.opts.correlator.updateState(written);
      this.written++;
      return 'done';
    }
    const code = (err as { code?: number })?.code;
    this.log(`${describe(event)}: write failed${typeof code === 'number' ? ` (${code})` : ''}: ${(err as Error)?.message ?? String(err)}`);
    if (retriable(err)) return 'retry';
    this.failed++;
    return 'done';
  }
}

function describe(e: CoreEvent): string {
  return `event ${e.metadata.namespace}/${e.metadata.name} (${e.reason})`;
}
