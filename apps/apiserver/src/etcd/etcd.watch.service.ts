/**
 * etcd's Watch service (docs/etcd-api.md "Watch"): one bidirectional stream carries many
 * watchers. A watcher subscribes to the store's event stream first, then replays history from
 * its start revision, then delivers what arrived meanwhile (without the revisions the replay
 * already covered): no gap and no duplicate. Replayed events travel up to 1000 revisions per
 * response, live ones one revision per response, as etcd sends them (split into fragments when
 * asked and large). A start revision below the compacted one cancels
 * the watcher with compact_revision, as etcd does; one at the compacted revision replays that
 * revision's puts first, as etcd does.
 *
 * What a stream holds for its client is bounded, as etcd bounds its slow watchers: the history is
 * replayed a window of revisions at a time, each once the stream has sent the one before; and a
 * live watcher whose stream holds more unsent bytes than its bound stops taking events and later
 * catches up from the history the same way, holding only a bounded number of new events
 * meanwhile (past it, those are read from the history too).
 */
import { status as GrpcStatus } from '@grpc/grpc-js';
import { SerializedMessage, drained, type DuplexCall, type ServiceHandlers } from '@app/grpc';
import { MvccError, NOT_NOW, type MvccEvent } from '@app/mvcc';
import { visibleIn, type EtcdKeyRange } from '@app/storage';
import { EtcdApiError, keyBytes, kvOut, num, rangeIn, toServiceError, type Msg } from './etcd.convert.js';
import type { EtcdContext } from './etcd.context.js';
import { SLICE_ITEMS, mapInSlices, nextTurn } from './etcd.sliced.js';
import { envInt } from '../config/env.js';

/** Longest wait of a watch's replay for writes this node answered to land in the store. */
const STAGED_WAIT_MS = 5000;

/** The smallest key, which etcd watches when a create names none. */
const ZERO_KEY = Buffer.from([0]);

/** Most revisions in one response of a watcher's catch-up (etcd's watchBatchMaxRevs). */
const CATCH_UP_REVISIONS = 1000;

/** Bytes of values that end a catch-up window early, between two revisions. */
const CATCH_UP_BYTES = 4 << 20;

/** Responses larger than this are split when the watcher asked for fragments (etcd's request limit). */
const FRAGMENT_BYTES = 1536 * 1024;

/**
 * What one stream and its watchers may hold for a client that does not read (etcd's slow
 * watchers): responses written and not yet taken by the connection up to this many bytes; past
 * it, a live watcher stops taking new events and catches up from the history later.
 */
function bufferBytes(): number {
  return envInt('KAPI_ETCD_WATCH_BUFFER_BYTES') ?? 8 * 1024 * 1024;
}

/** Revisions a catching-up watcher reads from the history at a time. */
function windowRevisions(): number {
  return envInt('KAPI_ETCD_WATCH_WINDOW_REVISIONS') ?? CATCH_UP_REVISIONS;
}

/** Bytes of values that end a catch-up window early (KAPI_ETCD_WATCH_WINDOW_BYTES). */
function windowBytes(): number {
  return envInt('KAPI_ETCD_WATCH_WINDOW_BYTES') ?? CATCH_UP_BYTES;
}

/** New events a catching-up watcher holds; past them it reads those from the history too. */
function heldEvents(): number {
  return envInt('KAPI_ETCD_WATCH_HELD_EVENTS') ?? 10_000;
}

/** How often a watcher with progress_notify hears the current revision (etcd's default is 10 minutes). */
function progressIntervalMs(): number {
  return envInt('KAPI_ETCD_PROGRESS_NOTIFY_MS') ?? 10 * 60 * 1000;
}

interface Watcher {
  id: number;
  range: EtcdKeyRange;
  prevKv: boolean;
  noPut: boolean;
  noDelete: boolean;
  fragment: boolean;
  progressNotify: boolean;
  /**
   * New events held while the watcher catches up from the history (undefined while it is live).
   * Past heldEvents() they are dropped and `dropped` set: the catch-up then reads them too.
   */
  pending: MvccEvent[] | undefined;
  dropped: boolean;
  /** While catching up: the revision up to which the history has been read and queued. */
  cursor: number;
  /** The revision of the last event given to the queue (its revision is complete once a later one comes). */
  queuedRev: number;
  /** Last revision delivered (replayed or live). */
  sentRev: number;
  /**
   * The store's revision when the history replay was read (0 without a replay): the replayed
   * events, up to it, travel several revisions per response with it in the header, as etcd
   * sends a catching-up watcher's events; later ones one revision per response.
   */
  catchUpTo: number;
  /** First revision this watcher reports (its start revision, or the next one). */
  from: number;
  queue: MvccEvent[];
  flushScheduled: boolean;
  /** The flush in progress (flushes run one after the other). */
  flushing: Promise<void>;
  /** A flush took events from the queue and has not sent them all yet. */
  flushActive: boolean;
  /** A progress request came while events were on their way: answered once they are sent. */
  progressAfterFlush: boolean;
  unsubscribe: () => void;
}

function commonPrefix(r: EtcdKeyRange): string | undefined {
  if (r.end === undefined) return undefined;
  if (r.end === '\u0000') return '';
  let i = 0;
  while (i < r.key.length && i < r.end.length && r.key.charCodeAt(i) === r.end.charCodeAt(i)) i++;
  return r.key.slice(0, i);
}

/** The Watch service's handler; `serializeResponse` encodes a WatchResponse. */
export function watchService(ctx: EtcdContext, serializeResponse: (m: Msg) => Buffer): ServiceHandlers {
  return {
    Watch: (call: DuplexCall) => new WatchStream(ctx, call, serializeResponse).start(),
  };
}

class WatchStream {
  private readonly watchers = new Map<number, Watcher>();
  private nextId = 0;
  private closed = false;
  private progressTimer: NodeJS.Timeout | undefined;
  private unsubscribeReset: (() => void) | undefined;

  constructor(
    private readonly ctx: EtcdContext,
    private readonly call: DuplexCall,
    private readonly serialize: (m: Msg) => Buffer,
  ) {}

  start(): void {
    this.ctx.watchCounts.streams++;
    this.call.on('data', (req: Msg) => this.onRequest(req));
    this.call.on('end', () => this.close(true));
    this.call.on('cancelled', () => this.close(false));
    // A snapshot replaced the store: history is no longer continuous, the watchers must end.
    this.unsubscribeReset = this.ctx.store.onReset(() => {
      for (const w of [...this.watchers.values()]) this.cancel(w, 'etcdserver: the store was replaced by a snapshot; watch again');
    });
    this.progressTimer = setInterval(() => this.progress(false), progressIntervalMs());
    this.progressTimer.unref();
  }

  private close(endStream: boolean): void {
    if (this.closed) return;
    this.closed = true;
    if (this.progressTimer) clearInterval(this.progressTimer);
    this.unsubscribeReset?.();
    for (const w of this.watchers.values()) {
      w.unsubscribe();
      if (w.pending) this.ctx.watchCounts.slow--;
    }
    this.ctx.watchCounts.streams--;
    this.ctx.watchCounts.watchers -= this.watchers.size;
    this.watchers.clear();
    if (endStream) this.call.end();
  }

  private send(msg: Msg): void {
    if (!this.closed) this.call.write(msg);
  }

  private onRequest(req: Msg): void {
    try {
      if (req.create_request) this.create(req.create_request);
      else if (req.cancel_request) {
        const w = this.watchers.get(num(req.cancel_request.watch_id));
        if (w) this.cancel(w, '');
      } else if (req.progress_request) this.progress(true);
    } catch (e) {
      const err = toServiceError(e);
      this.send({ header: this.ctx.header(), watch_id: -1, created: true, canceled: true, cancel_reason: err.details ?? String(e) });
    }
  }

  private progress(all: boolean): void {
    // With no watcher the answer belongs to none, as etcd's (watch_id -1).
    if (all && this.watchers.size === 0) this.send({ header: this.ctx.header(), watch_id: -1 });
    for (const w of this.watchers.values()) {
      if (!(all || w.progressNotify) || w.pending !== undefined) continue;
      if (w.queue.length === 0 && !w.flushScheduled && !w.flushActive) this.send({ header: this.ctx.header(), watch_id: w.id });
      // Events on their way: the answer to a progress request follows them.
      else if (all) w.progressAfterFlush = true;
    }
  }

  private cancel(w: Watcher, reason: string, compactRevision?: number): void {
    w.unsubscribe();
    if (this.watchers.delete(w.id)) {
      this.ctx.watchCounts.watchers--;
      if (w.pending) this.ctx.watchCounts.slow--;
    }
    this.send({
      header: this.ctx.header(),
      watch_id: w.id,
      canceled: true,
      ...(reason ? { cancel_reason: reason } : {}),
      ...(compactRevision ? { compact_revision: compactRevision } : {}),
    });
  }

  private create(c: Msg): void {
    // As etcd: no key is the smallest key, "\0"; a range must not end at or below its key.
    const key: Buffer = c.key && c.key.length > 0 ? c.key : ZERO_KEY;
    const end: Buffer | undefined = c.range_end;
    if (end && end.length > 0 && !(end.length === 1 && end[0] === 0) && Buffer.compare(key, end) >= 0)
      throw new EtcdApiError(GrpcStatus.INVALID_ARGUMENT, 'mvcc: watcher range is empty');
    const range = rangeIn(key, end);
    let id = num(c.watch_id);
    if (id === 0) {
      while (this.watchers.has(this.nextId)) this.nextId++;
      id = this.nextId++;
    } else if (this.watchers.has(id)) throw new EtcdApiError(GrpcStatus.INVALID_ARGUMENT, 'mvcc: duplicate watch ID provided on the WatchStream');
    const filters: string[] = c.filters ?? [];
    const w: Watcher = {
      id,
      range,
      prevKv: !!c.prev_kv,
      noPut: filters.includes('NOPUT'),
      noDelete: filters.includes('NODELETE'),
      fragment: !!c.fragment,
      progressNotify: !!c.progress_notify,
      pending: [],
      dropped: false,
      cursor: 0,
      queuedRev: 0,
      sentRev: 0,
      catchUpTo: 0,
      from: 0,
      queue: [],
      flushScheduled: false,
      flushing: Promise.resolve(),
      flushActive: false,
      progressAfterFlush: false,
      unsubscribe: () => undefined,
    };
    const store = this.ctx.store;
    w.unsubscribe = store.subscribe((ev) => {
      if (!visibleIn(ev.key, range)) return;
      this.deliver(w, ev);
    });
    this.watchers.set(id, w);
    this.ctx.watchCounts.watchers++;
    // The revision this node has answered writes with: a write is answered once evaluated, a
    // moment before its batch lands in the store.
    const current = this.ctx.leases.pendingRevision();
    const start = num(c.start_revision);
    this.send({ header: this.ctx.header(current), watch_id: id, created: true });
    w.from = start > 0 ? start : current + 1;
    if (start <= 0 || start > current) {
      w.sentRev = start > 0 ? start - 1 : current;
      const held = w.pending ?? [];
      w.pending = undefined;
      this.enqueue(
        w,
        held.filter((e) => e.revision > w.sentRev),
      );
      return;
    }
    // The replay reads the store once it holds every write answered before the watch: those are
    // history to this watcher, and travel with the rest of its catch-up.
    this.ctx.watchCounts.slow++;
    w.cursor = start - 1;
    const landed = current > store.currentRevision() ? store.waitForRevision(current, STAGED_WAIT_MS) : Promise.resolve(true);
    void landed.then(() => this.catchUp(w, true));
  }

  /** An event of the store for `w`: queued while the watcher is live, held while it catches up. */
  private deliver(w: Watcher, ev: MvccEvent): void {
    if (w.pending) {
      if (w.dropped) return;
      if (w.pending.length < heldEvents()) w.pending.push(ev);
      else {
        w.pending = [];
        w.dropped = true;
      }
      return;
    }
    // A client that does not read: the watcher stops here, between two revisions (everything
    // up to queuedRev is queued), and later reads the rest from the history.
    if (ev.revision !== w.queuedRev && this.call.bufferedBytes > bufferBytes()) {
      w.pending = [ev];
      w.dropped = false;
      w.cursor = w.queuedRev;
      this.ctx.watchCounts.slow++;
      void this.catchUp(w, false);
      return;
    }
    this.enqueue(w, [ev]);
  }

  /**
   * Reads `w`'s events from the history after w.cursor, a window of revisions at a time, each
   * once the stream has sent what it holds, then goes live with the new events it held (those
   * past the history it read). Held events it had to drop are read from the history by another
   * pass. `fromCompacted`: the first read may start at the compacted revision (a watch created
   * from it). A compacted cursor cancels the watcher with compact_revision, as etcd cancels a
   * slow watcher whose revision was compacted.
   */
  private async catchUp(w: Watcher, fromCompacted: boolean): Promise<void> {
    const store = this.ctx.store;
    const prefix = commonPrefix(w.range);
    const match = prefix === undefined ? { key: w.range.key } : { prefix };
    const gone = (): boolean => !this.watchers.has(w.id) || this.closed;
    try {
      for (;;) {
        await this.flushed(w);
        await this.writable();
        if (gone()) return;
        // Held events are dropped before the history is read: the read then covers them.
        if (w.dropped) {
          w.dropped = false;
          w.pending = [];
        }
        const until = w.cursor + windowRevisions();
        const { events, revision, through } = await store.eventsAfter(w.cursor, match, { fromCompacted, until, maxBytes: windowBytes() });
        fromCompacted = false;
        if (gone()) return;
        const end = through;
        w.catchUpTo = revision;
        this.enqueue(
          w,
          events.filter((e) => visibleIn(e.key, w.range)),
        );
        w.cursor = end;
        if (end < revision || w.dropped) continue;
        const held = w.pending ?? [];
        w.pending = undefined;
        this.ctx.watchCounts.slow--;
        this.enqueue(
          w,
          held.filter((e) => e.revision > end),
        );
        return;
      }
    } catch (e) {
      if (gone()) return;
      if (e instanceof MvccError && e.code === 'Compacted') {
        this.cancel(w, 'etcdserver: mvcc: required revision has been compacted', store.compactedRevision());
      } else {
        this.cancel(w, toServiceError(e).details ?? String(e));
      }
    }
  }

  /** Resolves once `w` has no event queued or on its way to the stream. */
  private async flushed(w: Watcher): Promise<void> {
    while (!this.closed && this.watchers.has(w.id) && (w.flushScheduled || w.flushActive || w.queue.length > 0)) {
      if (w.flushActive) await w.flushing;
      else await nextTurn();
    }
  }

  /** Resolves once the stream holds at most half its buffer bound unsent (or has ended). */
  private writable(): Promise<void> {
    if (this.closed || this.call.bufferedBytes <= bufferBytes() / 2) return Promise.resolve();
    return drained(this.call);
  }

  private enqueue(w: Watcher, events: MvccEvent[]): void {
    for (const e of events) {
      w.queuedRev = e.revision;
      if (e.revision < w.from || (e.type === 'put' ? w.noPut : w.noDelete)) continue;
      w.queue.push(e);
    }
    if (w.queue.length === 0 || w.flushScheduled) return;
    w.flushScheduled = true;
    // After the applier finished the entry; one flush at a time per watcher, in order.
    setImmediate(() => {
      w.flushing = w.flushing.then(() => this.flush(w)).catch(() => this.cancelBroken(w));
    });
  }

  /**
   * The lease `e`'s key had at its revision: the current attachment when nothing newer is
   * staged and the key's current version is the event's, otherwise read from the store's history.
   */
  private leaseAt(e: MvccEvent): string | Promise<string> {
    const leases = this.ctx.leases;
    if (e.revision >= leases.pendingRevision()) {
      const now = this.ctx.store.getLatestNow(e.key);
      if (now !== NOT_NOW && now?.modRevision === e.revision) return leases.leaseOf(e.key);
    }
    return leases.leaseAt(e.key, e.revision);
  }

  /** A flush that failed (the store could not be read): the watcher ends, as on a compaction. */
  private cancelBroken(w: Watcher): void {
    w.flushActive = false;
    if (!this.watchers.has(w.id) || this.closed) return;
    this.cancel(w, 'etcdserver: the watch could not read its events');
  }

  private async flush(w: Watcher): Promise<void> {
    w.flushScheduled = false;
    if (!this.watchers.has(w.id) || this.closed) return;
    const events = w.queue.splice(0);
    // Until these are sent, no progress notification may claim their revision.
    w.flushActive = true;
    const leases = this.ctx.leases;
    // The leases the keys had at each event's revision, and at each previous version's.
    const kvLeases = await mapInSlices(events, (e) => (e.type === 'put' ? this.leaseAt(e) : '0'));
    // A previous version's lease is read just before the event's revision, as etcd reads prev_kv:
    // the attachment cannot change between that version and the event (only a write of the key
    // changes it), and that revision is never below the compacted one for an event a watch
    // delivers, where the previous version's own revision may be.
    const prevLeases = w.prevKv ? await mapInSlices(events, (e) => (e.prevValue ? leases.leaseAt(e.key, e.revision - 1) : '0')) : [];
    if (!this.watchers.has(w.id) || this.closed) {
      w.flushActive = false;
      return;
    }
    // Many events (one revision of a DeleteRange over a large prefix carries one per key) are
    // converted and serialized a slice at a time, between turns of the event loop, and only the
    // serialized slices are kept: holding 100,000 converted events until the end made the heap
    // peak higher and its collection pauses longer. A watcher canceled meanwhile gets nothing
    // more.
    const gone = (): boolean => !this.watchers.has(w.id) || this.closed;
    let i = 0;
    while (i < events.length) {
      // One response: the events of one revision, or in the catch-up up to CATCH_UP_REVISIONS
      // revisions, with the revision the replay read up to in the header (etcd's watcher batch).
      const first = events[i]!.revision;
      const packed = first <= w.catchUpTo;
      const rev = packed ? w.catchUpTo : first;
      let revs = 0;
      let lastRev = 0;
      const belongs = (e: MvccEvent): boolean => {
        if (!packed) return e.revision === first;
        return e.revision <= w.catchUpTo && (e.revision === lastRev || revs < CATCH_UP_REVISIONS);
      };
      let slice: Msg[] = [];
      const pieces: Uint8Array[] = [];
      // The response of what was gathered: a plain message up to one slice, else the pieces.
      const take = (fragment: boolean): Msg | SerializedMessage => {
        const head = { header: this.ctx.header(rev), watch_id: w.id, ...(fragment ? { fragment: true } : {}) };
        const events = slice;
        slice = [];
        if (pieces.length === 0) return { ...head, events };
        if (events.length > 0) pieces.push(this.serialize({ events }));
        return new SerializedMessage([this.serialize(head), ...pieces.splice(0)]);
      };
      let bytes = 0;
      for (; i < events.length && belongs(events[i]!); i++) {
        if (slice.length === SLICE_ITEMS) {
          pieces.push(this.serialize({ events: slice }));
          slice = [];
          await nextTurn();
          if (gone()) {
            w.flushActive = false;
            return;
          }
        }
        const e = events[i]!;
        if (e.revision !== lastRev) {
          revs++;
          lastRev = e.revision;
        }
        const kv =
          e.type === 'put'
            ? kvOut(e.value, kvLeases[i])
            : { key: keyBytes(e.key), mod_revision: e.revision, create_revision: 0, version: 0, value: Buffer.alloc(0), lease: '0' };
        slice.push({ type: e.type === 'put' ? 'PUT' : 'DELETE', kv, ...(w.prevKv && e.prevValue ? { prev_kv: kvOut(e.prevValue, prevLeases[i]) } : {}) });
        bytes += e.key.length + e.value.value.length + (w.prevKv ? (e.prevValue?.value.length ?? 0) : 0);
        if (w.fragment && bytes > FRAGMENT_BYTES && i + 1 < events.length && belongs(events[i + 1]!)) {
          this.send(take(true));
          bytes = 0;
        }
      }
      w.sentRev = lastRev;
      this.send(take(false));
    }
    w.flushActive = false;
    if (w.progressAfterFlush && w.queue.length === 0 && !w.flushScheduled) {
      w.progressAfterFlush = false;
      this.send({ header: this.ctx.header(), watch_id: w.id });
    }
  }
}
