/**
 * The storage of a kind served as another resource's objects (events.k8s.io Events are core
 * Events, as in Kubernetes, where both resources share one etcd prefix): keys under the served
 * kind's prefix are the stored resource's keys, objects are converted on the way in and out, and
 * everything else (revisions, continue keys, watch events) passes through with keys mapped back.
 * Writes through either resource are seen by readers and watchers of both.
 */
import type { KubeObject } from '@app/apimachinery';
import { NO_CHANGE, type ListOptions, type Storage, type StorageEvent, type TryUpdate } from '@app/storage';

/** How a served kind maps onto the stored one. */
export interface StorageAlias {
  /** The served kind's collection prefix (`/registry/<group>/<plural>/`). */
  servedPrefix: string;
  /** The stored resource's collection prefix. */
  storedPrefix: string;
  /** A served object as stored (must not mutate its input). */
  toStored(obj: KubeObject): KubeObject;
  /** A stored object as served (must not mutate its input). */
  toServed(obj: KubeObject): KubeObject;
}

/** Wraps `inner` (the stored resource's storage) so that it serves the aliased kind. */
export function aliasedStorage(inner: Storage, alias: StorageAlias): Storage {
  const swap = (key: string, from: string, to: string): string => (key.startsWith(from) ? to + key.slice(from.length) : key);
  const stored = (key: string): string => swap(key, alias.servedPrefix, alias.storedPrefix);
  const served = (key: string): string => swap(key, alias.storedPrefix, alias.servedPrefix);
  const out = alias.toServed;
  const inn = alias.toStored;
  return {
    get: async (key, consistency) => {
      const o = await inner.get(stored(key), consistency);
      return o && out(o);
    },
    list: async (prefix, opts: ListOptions) => {
      const pred = opts.predicate;
      const res = await inner.list(stored(prefix), {
        ...opts,
        ...(opts.startAfterKey !== undefined ? { startAfterKey: stored(opts.startAfterKey) } : {}),
        ...(opts.key !== undefined ? { key: stored(opts.key) } : {}),
        predicate: pred ? (o) => pred(out(o)) : undefined,
      });
      return {
        ...res,
        items: res.items.map(out),
        ...(res.continueAfterKey !== undefined ? { continueAfterKey: served(res.continueAfterKey) } : {}),
      };
    },
    create: async (key, obj, opts) => out(await inner.create(stored(key), inn(obj), opts)),
    guaranteedUpdate: async (key, tryUpdate: TryUpdate, opts) => {
      const res = await inner.guaranteedUpdate(
        stored(key),
        async (cur) => {
          const next = await tryUpdate(out(cur));
          return next === NO_CHANGE ? NO_CHANGE : inn(next);
        },
        opts && {
          ...opts,
          createIfMissing:
            opts.createIfMissing &&
            (() => {
              const o = opts.createIfMissing!();
              return o && inn(o);
            }),
        },
      );
      return { ...res, object: out(res.object) };
    },
    delete: async (key, opts) => {
      const validate = opts?.validate;
      return out(await inner.delete(stored(key), opts && { ...opts, validate: validate ? (cur) => validate(out(cur)) : undefined }));
    },
    deleteUndecodable: (key, opts) => inner.deleteUndecodable(stored(key), opts),
    storageKey: (key) => inner.storageKey?.(stored(key)) ?? stored(key),
    watch: (opts, sink) =>
      inner.watch(
        { ...opts, key: stored(opts.key) },
        {
          event: (e: StorageEvent) => sink.event({ ...e, key: served(e.key), object: out(e.object), prevObject: e.prevObject && out(e.prevObject) }),
          error: (err) => sink.error(err),
          ...(sink.ready ? { ready: () => sink.ready!() } : {}),
        },
      ),
    currentRevision: () => inner.currentRevision(),
    ...(inner.settled ? { settled: () => inner.settled!() } : {}),
    compactedRevision: () => inner.compactedRevision(),
    close: () => inner.close(),
  };
}
