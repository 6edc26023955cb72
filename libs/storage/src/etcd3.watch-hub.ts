/**
 * Storage watches of one key or prefix sharing one etcd watch (docs/storage-backends.md
 * "Watch"). The first watch of a key starts the etcd watch from its revision; each event is
 * decoded once and handed to every watch of the key whose start it follows. The hub keeps the
 * last events it delivered, so a watch that starts from a revision it still holds (a client
 * that has just listed, or one resuming) joins at once: it is handed the held events after its
 * revision, then the live ones, in order. A watch from an older revision gets an etcd watch of
 * its own (Etcd3Watch), as does every watch when sharing is off.
 *
 * Live events are not held back for a slow watch (its HTTP stream buffers them and ends the
 * watch when it cannot keep up, as with the built-in store); while only one watch uses the hub,
 * the replay of old history is paced by that watch (WatchSink.ready), as for a watch of its own.
 */
import { deepFreeze } from '@app/apimachinery';
import { sinkFailed, StorageError, type StorageEvent, type WatchOptions, type WatchSink } from './storage.interface.js';
import type { Etcd3Watch } from './etcd3.watch.js';

/** Events a hub keeps for watches that join later (whole revisions are dropped, oldest first). */
export const HUB_HELD_EVENTS = 1000;

interface Member {
  readonly sink: WatchSink;
  /** Events up to this revision are not this watch's. */
  readonly after: number;
  stopped: boolean;
  /** Events waiting to be handed over after join returned (the held ones, then any live ones). */
  pending: StorageEvent[] | undefined;
}

export class Etcd3WatchHub {
  private readonly members = new Set<Member>();
  private readonly held: StorageEvent[] = [];
  /** Every event after this revision that the hub delivered is in `held`. */
  private heldFrom: number;
  /** Revision of the last event delivered. */
  private delivered: number;
  private upstream: Etcd3Watch | undefined;
  private ended = false;

  /**
   * `open` starts the etcd watch with the hub as its sink; `onEmpty` is called once, when the
   * last watch stops or the etcd watch fails (the hub takes no watch after that).
   */
  constructor(
    readonly opts: WatchOptions,
    open: (sink: WatchSink) => Etcd3Watch,
    private readonly onEmpty: () => void,
    /** Deep-freezes each event's objects before handing them out (a test switch). */
    private readonly freeze = false,
  ) {
    this.heldFrom = opts.afterRevision;
    this.delivered = opts.afterRevision;
    this.upstream = open({
      event: (e) => this.event(e),
      error: (err) => this.error(err),
      ready: () => this.ready(),
    });
  }

  /** Whether a watch from `afterRevision` can join: the hub holds every event after it. */
  canJoin(afterRevision: number): boolean {
    return !this.ended && afterRevision >= this.heldFrom;
  }

  /**
   * Adds a watch (canJoin must hold). The held events after its revision are handed to it just
   * after this returns (never from inside the caller's watch call), before any live event.
   */
  join(afterRevision: number, sink: WatchSink): { stop(): void; progress(): number } {
    const backlog = this.held.filter((e) => e.revision > afterRevision);
    const m: Member = { sink, after: afterRevision, stopped: false, pending: backlog.length > 0 ? backlog : undefined };
    this.members.add(m);
    if (m.pending) queueMicrotask(() => this.catchUp(m));
    return {
      stop: () => this.leave(m),
      progress: () => Math.max(m.after, this.upstream ? this.upstream.progress() : this.delivered),
    };
  }

  private event(e: StorageEvent): void {
    if (this.freeze) {
      deepFreeze(e.object);
      deepFreeze(e.prevObject);
    }
    this.delivered = e.revision;
    this.held.push(e);
    if (this.held.length > HUB_HELD_EVENTS) {
      // Whole revisions only: a watch from the dropped revision would miss its other events.
      const drop = this.held[0]!.revision;
      let n = 0;
      while (n < this.held.length && this.held[n]!.revision === drop) n++;
      this.held.splice(0, n);
      this.heldFrom = drop;
    }
    for (const m of [...this.members]) {
      if (e.revision <= m.after) continue;
      if (m.pending) m.pending.push(e);
      else this.handTo(m, e);
    }
  }

  private catchUp(m: Member): void {
    const events = m.pending ?? [];
    m.pending = undefined;
    for (const e of events) if (!this.handTo(m, e)) return;
  }

  /** Hands `e` to one watch; a sink that throws ends that watch alone. */
  private handTo(m: Member, e: StorageEvent): boolean {
    if (m.stopped) return false;
    try {
      m.sink.event(e);
      return true;
    } catch (err) {
      this.leave(m);
      m.sink.error(sinkFailed(this.opts.key, err));
      return false;
    }
  }

  private error(err: StorageError): void {
    this.end();
    for (const m of [...this.members]) {
      m.stopped = true;
      m.sink.error(err);
    }
    this.members.clear();
  }

  private ready(): Promise<void> | undefined {
    if (this.members.size !== 1) return undefined;
    const [only] = this.members;
    return only!.sink.ready?.();
  }

  private leave(m: Member): void {
    if (m.stopped) return;
    m.stopped = true;
    this.members.delete(m);
    if (this.members.size === 0) {
      const up = this.upstream;
      this.end();
      up?.stop();
    }
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.upstream = undefined;
    this.held.length = 0;
    this.onEmpty();
  }
}
