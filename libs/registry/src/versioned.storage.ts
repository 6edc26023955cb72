/**
 * The storage a multi-version kind's store sees: objects go to storage at the kind's storage
 * version and come back at the served version (Kubernetes' storage codec converting between the
 * request version and the storage version). Keys carry no version, so every served version of a
 * kind shares its objects.
 */
import { NO_CHANGE, type ListOptions, type Storage, type StorageEvent, type TryUpdate } from '@app/storage';
import type { Conversion } from './kind.types.js';
import type { KubeObject } from '@app/apimachinery';

/**
 * Wraps `inner` so `served` objects are stored at `conversion.storageVersion`. Predicates and
 * validators see served objects; watch events are converted per watcher.
 */
export function versionedStorage(inner: Storage, conversion: Conversion, served: string): Storage {
  const out = (o: KubeObject): KubeObject => conversion.convert(o, served);
  const inn = (o: KubeObject): KubeObject => conversion.convert(o, conversion.storageVersion);
  const outOpt = (o: KubeObject | undefined): KubeObject | undefined => (o ? out(o) : o);
  const inOpt = (o: KubeObject | undefined): KubeObject | undefined => (o ? inn(o) : o);
  return {
    get: async (key, consistency) => outOpt(await inner.get(key, consistency)),
    list: async (prefix, opts: ListOptions) => {
      const pred = opts.predicate;
      const res = await inner.list(prefix, { ...opts, predicate: pred ? (o) => pred(out(o)) : undefined });
      return { ...res, items: res.items.map(out) };
    },
    create: async (key, obj, opts) => out(await inner.create(key, inn(obj), opts)),
    guaranteedUpdate: async (key, tryUpdate: TryUpdate, opts) => {
      const res = await inner.guaranteedUpdate(
        key,
        async (cur) => {
          const next = await tryUpdate(out(cur));
          return next === NO_CHANGE ? NO_CHANGE : inn(next);
        },
        opts && { ...opts, createIfMissing: opts.createIfMissing && (() => inOpt(opts.createIfMissing!())) },
      );
      return { ...res, object: out(res.object) };
    },
    delete: async (key, opts) => {
      const validate = opts?.validate;
      return out(await inner.delete(key, opts && { ...opts, validate: validate ? (cur) => validate(out(cur)) : undefined }));
    },
    deleteUndecodable: (key, opts) => inner.deleteUndecodable(key, opts),
    ...(inner.storageKey ? { storageKey: (key: string) => inner.storageKey!(key) } : {}),
    watch: (opts, sink) =>
      inner.watch(opts, {
        event: (e: StorageEvent) => sink.event({ ...e, object: out(e.object), prevObject: e.prevObject && out(e.prevObject) }),
        error: (err) => sink.error(err),
        // The watch handler's pacing: a replay waits for a slow client instead of buffering.
        ...(sink.ready ? { ready: () => sink.ready!() } : {}),
      }),
    currentRevision: () => inner.currentRevision(),
    ...(inner.settled ? { settled: () => inner.settled!() } : {}),
    compactedRevision: () => inner.compactedRevision(),
    close: () => inner.close(),
  };
}
