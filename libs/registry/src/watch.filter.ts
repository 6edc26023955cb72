/**
 * The watch filter: turns storage events into the events a watcher with label/field selectors
 * sees (Kubernetes' cacheWatcher.convertToWatchEvent), judged on the old and new state. A
 * MODIFIED that enters the selection becomes ADDED, one that leaves it becomes DELETED.
 */
import { Errors, StatusError, type KubeObject } from '@app/apimachinery';
import type { StorageError, StorageEvent, WatchSink } from '@app/storage';
import { corruptObjectMessage } from './store.errors.js';

/** A watch event after selector filtering. */
export interface WatchEventOut {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: KubeObject | Record<string, unknown>;
  revision: number;
}

/** Where filtered events go. */
export interface WatchEventSink {
  event(e: WatchEventOut): void;
  error(err: StatusError): void;
  /** Replay pacing, passed to storage as WatchSink.ready. */
  ready?(): Promise<void> | undefined;
}

/**
 * A storage sink that filters by `predicate` (none: every event), decorates each object it
 * passes on with `dec`, and maps storage failures to Status errors (Compacted: 410 Expired
 * with the watch cache's wording, naming the requested and the oldest kept revision).
 */
export function filteredWatchSink(
  predicate: ((o: KubeObject) => boolean) | undefined,
  dec: (o: KubeObject) => KubeObject,
  sink: WatchEventSink,
  expired: () => { requested: number; oldest: number },
): WatchSink {
  return {
    event: (e: StorageEvent) => {
      if (!predicate) {
        sink.event({ type: e.type, object: dec(e.object), revision: e.revision });
        return;
      }
      if (e.type === 'ADDED') {
        if (predicate(e.object)) sink.event({ type: 'ADDED', object: dec(e.object), revision: e.revision });
        return;
      }
      const before = e.prevObject ? predicate(e.prevObject) : false;
      if (e.type === 'DELETED') {
        // The last state already carries the deletion's revision.
        if (before) sink.event({ type: 'DELETED', object: dec(e.object), revision: e.revision });
        return;
      }
      const now = predicate(e.object);
      if (now && before) sink.event({ type: 'MODIFIED', object: dec(e.object), revision: e.revision });
      else if (now && !before) sink.event({ type: 'ADDED', object: dec(e.object), revision: e.revision });
      else if (!now && before && e.prevObject) {
        // Leaving the selection: DELETED with the previous (matching) content at this revision.
        const prev = e.prevObject;
        sink.event({ type: 'DELETED', object: dec({ ...prev, metadata: { ...prev.metadata, resourceVersion: String(e.revision) } }), revision: e.revision });
      }
    },
    error: (err: StorageError) => {
      if (err.code === 'Compacted') {
        const { requested, oldest } = expired();
        // The watch cache's wording: "too old resource version: <requested> (<oldest kept>)".
        sink.error(new StatusError(410, 'Expired', `too old resource version: ${requested} (${oldest})`));
      } else sink.error(Errors.internal(err.code === 'CorruptObject' ? corruptObjectMessage(err.key, err.message) : err.message));
    },
    ...(sink.ready ? { ready: () => sink.ready?.() } : {}),
  };
}
