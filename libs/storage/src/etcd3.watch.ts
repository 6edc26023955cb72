/**
 * One storage watch on an etcd Watch stream (docs/storage-backends.md "Watch"): created with
 * start_revision = afterRevision + 1 and prev_kv, so every event carries the state before it.
 * A stream that breaks (member down, leader lost) is re-created on a connected member from the
 * revision after the last event delivered, as etcd's clientv3 does; a start revision etcd has
 * compacted ends the watch with Compacted (the API answers 410 and the client relists). The
 * replay of an old revision's history is paced by the sink (WatchSink.ready).
 *
 * Progress (bookmarks): the revision of the last event delivered, or a later one learnt from
 * progress requests, sent when the API asks for the progress (at most once per progress
 * interval), so a quiet stream costs nothing. etcd 3.4 answers those on a control path that
 * may overtake events already queued for the watcher, so a progress revision counts only once
 * the next response on the stream shows nothing older was pending.
 */
import type * as grpc from '@grpc/grpc-js';
import { etcdPrefixEnd, rev, type EtcdEvent, type EtcdWatchResponse } from './etcd3.client.js';
import type { Etcd3Storage } from './etcd3.storage.js';
import { decodeStoredObject } from './storage.codec.js';
import { sinkFailed, StorageError, type StorageEvent, type WatchOptions, type WatchSink } from './storage.interface.js';

/** Re-creations of a broken stream in a row before the watch fails Unavailable. */
const MAX_RESUMES = 20;

/**
 * Cancels a watch stream on the next turn of the event loop. The watch lets go of a stream
 * inside the stream's own 'data' and 'error' handlers (a compacted or cancelled watch, a sink
 * that stops on an event), and a gRPC call cancelled from its own data callback is the pattern
 * reported to trip node:http2's memory accounting assertion
 * (`Http2Session::CheckAllocatedSize`), which aborts the process. Nothing reads the stream
 * meanwhile: its handlers check that it is still the watch's stream.
 */
function cancelSoon(stream: grpc.ClientDuplexStream<object, EtcdWatchResponse> | undefined): void {
  if (stream) setImmediate(() => stream.cancel());
}

/** A running watch; owned by Etcd3Storage, which stops it on close. */
export class Etcd3Watch {
  private stream: grpc.ClientDuplexStream<object, EtcdWatchResponse> | undefined;
  private stopped = false;
  /** Revision of the last event handed to the sink (or the start). */
  private delivered: number;
  /** Revision through which every event of this watch has been handed to the sink. */
  private covered: number;
  /** A progress revision waiting for the next response to confirm it. */
  private pendingProgress = 0;
  private lastRequest = 0;
  private resumes = 0;
  /** The revision etcd was at when the stream was created: events up to it are its replay. */
  private replayUntil = 0;

  constructor(
    private readonly storage: Etcd3Storage,
    private readonly opts: WatchOptions,
    private readonly sink: WatchSink,
    private readonly progressIntervalMs: number,
    private readonly onStop: () => void,
  ) {
    this.delivered = opts.afterRevision;
    this.covered = opts.afterRevision;
  }

  /**
   * The revision a bookmark may announce; asks etcd for the progress of the stream, so that the
   * next call can announce a later one.
   */
  progress(): number {
    const now = Date.now();
    if (this.stream && this.progressIntervalMs > 0 && now - this.lastRequest >= this.progressIntervalMs) {
      this.lastRequest = now;
      try {
        this.stream.write({ progress_request: {} });
      } catch {
        // The stream is being replaced.
      }
    }
    return Math.max(this.delivered, this.covered);
  }

  start(): void {
    void this.open();
  }

  private async open(): Promise<void> {
    if (this.stopped) return;
    let stream: grpc.ClientDuplexStream<object, EtcdWatchResponse>;
    try {
      stream = await this.storage.client.watchStream();
    } catch (e) {
      this.retry(e);
      return;
    }
    if (this.stopped) {
      // Stopped while the stream was being opened: its cancellation comes back as an error,
      // which nothing else listens for.
      stream.on('error', () => undefined);
      stream.cancel();
      return;
    }
    this.stream = stream;
    this.pendingProgress = 0;
    const key = this.storage.keys.toEtcd(this.opts.key);
    stream.on('data', (r: EtcdWatchResponse) => {
      if (this.stream === stream) this.onResponse(r);
    });
    stream.on('error', (e) => {
      if (this.stream === stream) this.retry(e);
    });
    stream.on('end', () => {
      if (this.stream === stream) this.retry(new Error('watch stream ended'));
    });
    stream.write({
      create_request: {
        key,
        ...(this.opts.recursive ? { range_end: etcdPrefixEnd(key) } : {}),
        start_revision: this.delivered + 1,
        prev_kv: true,
        progress_notify: true,
      },
    });
  }

  /** Re-creates the stream after a failure, from the revision after the last event delivered. */
  private retry(e: unknown): void {
    if (this.stopped) return;
    const old = this.stream;
    this.stream = undefined;
    cancelSoon(old);
    if (++this.resumes > MAX_RESUMES) {
      this.fail(new StorageError('Unavailable', this.opts.key, `etcd watch failed: ${e instanceof Error ? e.message : String(e)}`));
      return;
    }
    setTimeout(() => void this.open(), Math.min(100 * this.resumes, 1000)).unref();
  }

  private onResponse(r: EtcdWatchResponse): void {
    if (this.stopped) return;
    const header = rev(r.header?.revision);
    this.storage.observeRevision(header);
    if (rev(r.compact_revision) > 0) {
      const compacted = rev(r.compact_revision);
      this.storage.observeCompacted(compacted);
      this.fail(
        new StorageError(
          'Compacted',
          this.opts.key,
          `The resourceVersion for the provided watch is too old: ${this.delivered} (compacted to ${compacted})`,
          this.storage.currentRevision(),
          this.delivered,
        ),
      );
      return;
    }
    if (r.canceled) {
      this.retry(new Error(`watch canceled by etcd: ${r.cancel_reason}`));
      return;
    }
    if (r.created) {
      this.resumes = 0;
      this.replayUntil = header;
      return;
    }
    if (r.events.length === 0) {
      // A progress answer: confirm the previous one (nothing older came in between), hold this one.
      if (this.pendingProgress > this.covered) this.covered = this.pendingProgress;
      this.pendingProgress = header;
      return;
    }
    const first = rev(r.events[0]!.kv.mod_revision);
    if (this.pendingProgress > 0 && first > this.pendingProgress && this.pendingProgress > this.covered) this.covered = this.pendingProgress;
    this.pendingProgress = 0;
    this.deliver(r.events, 0);
  }

  /**
   * Hands `events` from index `i` to the sink. During the replay (events up to the revision
   * etcd was at when the stream was created), it asks the sink before each event whether it can
   * take more (WatchSink.ready) and, while it cannot, stops reading the stream: gRPC flow
   * control then holds the rest of the history back in etcd, and the events of this response
   * are handed over as the client reads. A response can hold a whole history (etcd batches it
   * by revisions, not bytes), so waiting between responses alone would not bound the client's
   * queue. No later response is read before this one is handed over, so progress answers never
   * overtake its events. Live events are not held back.
   */
  private deliver(events: EtcdEvent[], i: number): boolean {
    const stream = this.stream;
    for (; i < events.length; i++) {
      if (this.stopped) return false;
      const e = events[i]!;
      if (this.delivered < this.replayUntil) {
        const waiting = this.sink.ready?.();
        if (waiting && stream) {
          stream.pause();
          const from = i;
          const go = (): void => {
            if (this.stream === stream && !this.stopped && this.deliver(events, from)) stream.resume();
          };
          waiting.then(go, go);
          return false;
        }
      }
      let se: StorageEvent | undefined;
      try {
        se = this.toStorageEvent(e);
      } catch (err) {
        this.fail(err instanceof StorageError ? err : new StorageError('Internal', this.opts.key, String(err)));
        return false;
      }
      this.delivered = se ? se.revision : rev(e.kv.mod_revision);
      if (!se) continue;
      try {
        this.sink.event(se);
      } catch (err) {
        // A sink that throws cannot be trusted to have seen the event: end the watch.
        this.fail(sinkFailed(this.opts.key, err));
        return false;
      }
    }
    // The header of an event response is not used as progress: a watcher catching up from an
    // old revision gets its history in batches, each with the current revision in its header.
    return true;
  }

  private toStorageEvent(e: EtcdEvent): StorageEvent | undefined {
    const key = this.storage.keys.fromEtcd(e.kv.key);
    if (key === undefined) return undefined;
    const revision = rev(e.kv.mod_revision);
    const prev = e.prev_kv && e.prev_kv.key.length > 0 ? e.prev_kv : undefined;
    // An undecodable value is named by its etcd key.
    const decode = (value: Uint8Array, resourceVersion: number) => decodeStoredObject(key, value, resourceVersion, this.storage.keys.etcdName);
    if (e.type === 'DELETE') {
      // A delete whose previous state was compacted away has nothing to show; etcd3 store
      // answers such a watcher with an error too.
      if (!prev) throw new StorageError('Internal', key, `etcd sent a delete of ${key} without its previous value`);
      return {
        type: 'DELETED',
        key,
        object: decode(prev.value, revision),
        prevObject: decode(prev.value, rev(prev.mod_revision)),
        revision,
      };
    }
    const object = decode(e.kv.value, revision);
    if (rev(e.kv.create_revision) === revision) return { type: 'ADDED', key, object, revision };
    if (!prev) return { type: 'MODIFIED', key, object, revision };
    return { type: 'MODIFIED', key, object, prevObject: decode(prev.value, rev(prev.mod_revision)), revision };
  }

  /** Ends the watch with `err` (once; no events after). */
  fail(err: StorageError): void {
    if (this.stopped) return;
    this.stop();
    this.sink.error(err);
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    const s = this.stream;
    this.stream = undefined;
    cancelSoon(s);
    this.onStop();
  }
}
