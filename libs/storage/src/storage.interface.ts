/**
 * The storage interface the API layer uses (shaped like k8s.io/apiserver/pkg/storage.Interface).
 * Objects cross it as plain JSON values; the implementation serializes them, stores them in the
 * replicated MVCC store and sets `metadata.resourceVersion` (= modRevision, decimal) on every
 * object it returns. Revisions are JS numbers (safe to 2^53).
 */

import type { KubeObject } from '@app/apimachinery';

/**
 * Read consistency (conventions: "Resource versions").
 * - MostRecent: linearizable (quorum ReadIndex, then local read).
 * - Any: local replica, at once, possibly stale.
 * - NotOlderThan: wait (bounded) until the local store applied `revision`, then read latest.
 * - Exact: MVCC read at `revision` (Compacted error when it is below the compacted revision).
 */
export type ReadConsistency = { mode: 'MostRecent' } | { mode: 'Any' } | { mode: 'NotOlderThan'; revision: number } | { mode: 'Exact'; revision: number };

/** Why a storage call failed. The registry maps these to Status errors naming the resource. */
export type StorageErrorCode =
  | 'KeyExists' // create of a key that exists
  | 'KeyNotFound' // get/update/delete of a missing key
  | 'Conflict' // precondition on modRevision or uid failed
  | 'Compacted' // revision below the compacted revision (410)
  | 'TooLargeResourceVersion' // revision not reached within the wait bound (504)
  | 'Unavailable' // no quorum / leadership lost; the outcome of a write is unknown
  | 'TooManyRequests' // refused before it was proposed: too many writes pending (429); safe to retry
  | 'NoSpace' // refused before it was proposed: the store is over its space quota (a NOSPACE alarm)
  | 'Corrupt' // refused before it was proposed: a CORRUPT alarm is raised
  | 'CorruptObject' // the value stored under the key does not decode into an object
  | 'Internal';

/** Typed storage failure. `currentRevision` is set for Compacted and TooLargeResourceVersion. */
export class StorageError extends Error {
  constructor(
    readonly code: StorageErrorCode,
    readonly key: string,
    message: string,
    readonly currentRevision?: number,
    readonly requestedRevision?: number,
  ) {
    super(message);
    this.name = 'StorageError';
  }
}

/**
 * The error that ends a watch whose sink threw while handed an event: the sink cannot be trusted
 * to have seen the event. It carries what the sink threw, so that the watcher's log says why.
 */
export function sinkFailed(key: string, thrown: unknown): StorageError {
  return new StorageError('Internal', key, `watch sink failed: ${thrown instanceof Error ? thrown.message : String(thrown)}`);
}

/** An undecodable value met by a list: its key and why it does not decode. */
export interface CorruptValue {
  key: string;
  message: string;
}

/**
 * A list that met values that do not decode into objects (Kubernetes' aggregated corrupt-object
 * error): code 'CorruptObject', `key` the list's prefix, `objects` the first
 * MAX_REPORTED_CORRUPT_VALUES of them in key order, `truncated` when there were more.
 */
export class CorruptListError extends StorageError {
  constructor(
    prefix: string,
    readonly objects: CorruptValue[],
    readonly truncated: boolean,
  ) {
    super('CorruptObject', prefix, `unable to decode ${objects.length}${truncated ? '+' : ''} objects under ${prefix}`);
    this.name = 'CorruptListError';
  }
}

/** How many undecodable values a list names before it says the rest are left out. */
export const MAX_REPORTED_CORRUPT_VALUES = 100;

/** Preconditions checked against the stored object, atomically with the write. */
export interface Preconditions {
  uid?: string;
  /** Decimal modRevision the stored object must have. */
  resourceVersion?: string;
}

/** Options for `list`. */
export interface ListOptions {
  consistency: ReadConsistency;
  /** Max items returned (0/undefined = all). With a predicate, pages are still filled to `limit`. */
  limit?: number;
  /** Exclusive start: only keys strictly greater than this key are returned (continue tokens). */
  startAfterKey?: string;
  /** Filter applied to each decoded object before counting against `limit`. */
  predicate?: (obj: KubeObject) => boolean;
  /**
   * The kind every value must be: one of another kind (storage.codec.ts foreignKind) is
   * undecodable, and the list fails with CorruptListError naming it.
   */
  kind?: { kind: string; group: string; apiVersion: string };
  /**
   * Leave values that do not decode out of the items instead of failing the list: for the
   * server's own readers (the garbage collector, the policy and token caches), which can do
   * nothing with such a value and must not stop over one.
   */
  skipUndecodable?: boolean;
  /**
   * Only this key, which lies under the prefix: a list narrowed to one object (a field selector
   * requiring metadata.name), read as one key rather than by walking the range. The result is
   * still a list at the read's revision: empty when the key is absent, never a continue token.
   */
  key?: string;
}

/** Result of `list`. */
export interface ListResult {
  items: KubeObject[];
  /** The store revision the list was read at (the list's resourceVersion). */
  revision: number;
  /** Set when more matching keys may follow: the last key returned (continue from it). */
  continueAfterKey?: string;
  /** Keys after this page in the range, before filtering (remainingItemCount without selectors). */
  remaining?: number;
}

/** Sentinel a `tryUpdate` returns to leave the object as it is (no write, no revision bump). */
export const NO_CHANGE: unique symbol = Symbol('NO_CHANGE');

/**
 * Computes the new object from the current one. Called again with fresh state when a concurrent
 * write wins (compare-and-swap on modRevision), so it must be a pure function of its input.
 * Throwing aborts the update with that error.
 */
export type TryUpdate = (current: KubeObject) => Promise<KubeObject | typeof NO_CHANGE> | KubeObject | typeof NO_CHANGE;

/**
 * A watch event as delivered by storage. Live events are decoded once and the same event (and
 * objects) is handed to every watcher of the key, so sinks must treat them as read-only.
 */
export interface StorageEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  key: string;
  /** New state; for DELETED, the last state with resourceVersion = the deletion's revision. */
  object: KubeObject;
  /** Previous state (MODIFIED, DELETED), with its own resourceVersion. */
  prevObject?: KubeObject;
  /** The revision of the write transaction that produced this event. */
  revision: number;
}

/** Receives the events of one watch, in revision order, until stopped or failed. */
export interface WatchSink {
  event(e: StorageEvent): void;
  /** Called once when the watch can no longer continue (e.g. Compacted -> 410); no events after. */
  error(err: StorageError): void;
  /**
   * Pacing of a replay (optional): undefined when the consumer can take more now, else a promise
   * that settles once it can (its queue drained, or it went away). A storage that replays
   * history in parts asks before reading each next part, so a consumer that does not read holds
   * at most about one part of the history.
   */
  ready?(): Promise<void> | undefined;
}

/** Options for `watch`. */
export interface WatchOptions {
  /** Key (exact) or prefix (ending in '/') to watch. */
  key: string;
  /** true: every key under the prefix `key`; false: exactly `key`. */
  recursive: boolean;
  /** Deliver events with revision strictly greater than this (replaying history first). */
  afterRevision: number;
}

/** Handle of a running watch. */
export interface WatchHandle {
  stop(): void;
  /**
   * The revision up to which every matching event has been handed to the sink (events of other
   * keys included in the sense that none is pending): what a BOOKMARK may announce. Optional:
   * a storage without it lets callers fall back to the last delivered event's revision.
   */
  progress?(): number;
}

/** The storage the registry is written against. */
export interface Storage {
  /** Reads one object; undefined when absent (at the requested consistency). */
  get(key: string, consistency: ReadConsistency): Promise<KubeObject | undefined>;

  /** Ranges over every key under `prefix` (which ends in '/'), in key order. */
  list(prefix: string, opts: ListOptions): Promise<ListResult>;

  /** Put-if-absent. Returns the stored object with resourceVersion set. `dryRun` validates only. */
  create(key: string, obj: KubeObject, opts?: { dryRun?: boolean }): Promise<KubeObject>;

  /**
   * Read-modify-write with compare-and-swap on modRevision, retried on conflict with fresh state.
   * KeyNotFound when absent unless `createIfMissing` provides the object to start from (then the
   * write is put-if-absent). Preconditions are checked against each state tryUpdate sees.
   */
  guaranteedUpdate(
    key: string,
    tryUpdate: TryUpdate,
    opts?: { preconditions?: Preconditions; dryRun?: boolean; createIfMissing?: () => KubeObject | undefined },
  ): Promise<{ object: KubeObject; created: boolean; changed: boolean }>;

  /**
   * Delete-if-modRevision. `validate` runs on the current state before deleting (may throw).
   * Returns the last state (resourceVersion = the deletion's revision unless dryRun).
   */
  delete(
    key: string,
    opts?: { preconditions?: Preconditions; dryRun?: boolean; validate?: (current: KubeObject) => void | Promise<void> },
  ): Promise<KubeObject>;

  /**
   * Deletes a key whose value does not decode into an object (CorruptObject on every read of
   * it), without decoding it, conditional on that value's modRevision (Conflict when it changed
   * meanwhile). 'readable' and no write when the value decodes; KeyNotFound when absent. With
   * `dryRun` nothing is written. Returns the deletion's revision.
   */
  deleteUndecodable(key: string, opts?: { dryRun?: boolean }): Promise<{ readable: true } | { readable: false; revision: number }>;

  /**
   * The name of `key` in the backing store, as errors about its stored value name it: the key
   * itself on the built-in store, the etcd key (with `--etcd-prefix`) on an external etcd.
   * Absent means the key itself.
   */
  storageKey?(key: string): string;

  /** Starts a watch. History after `afterRevision` is replayed first; Compacted -> sink.error. */
  watch(opts: WatchOptions, sink: WatchSink): WatchHandle;

  /** The latest revision applied locally. */
  currentRevision(): number;

  /**
   * Resolves once every write this process has been answered for is applied locally and has
   * reached the local watchers, so that a watch-fed copy whose watch has delivered up to
   * currentRevision() holds them. Absent where that cannot be known (external etcd).
   */
  settled?(): Promise<void>;

  /** Revision below which history has been compacted (0 = nothing compacted). */
  compactedRevision(): number;

  /** Releases resources (stops watches, closes the store). */
  close(): Promise<void>;
}
