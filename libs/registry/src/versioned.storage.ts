/**
 * The storage a multi-version kind's store sees: objects go to storage at the kind's storage
 * version and come back at the served version (Kubernetes' storage codec converting between the
 * request version and the storage version). Keys carry no version, so every served version of a
 * kind shares its objects.
 *
 * A conversion that calls out (`convertMany`, a conversion webhook) is awaited: a list converts
 * its page in one call, a watch converts each event in order before passing it on (and ends with
 * the error when a conversion fails). A list's predicate (label and field selectors) sees the
 * stored object under the served apiVersion, since it runs inside the storage's scan: labels and
 * metadata are the same at every version.
 */
import { NO_CHANGE, type ListOptions, type Storage, type StorageEvent, type WatchHandle } from '@app/storage';
import type { Conversion } from './kind.types.js';
import type { KubeObject } from '@app/apimachinery';

/** Converts `obj` to `version` through the conversion's call out when it has one. */
export async function convertObject(conversion: Conversion, obj: KubeObject, version: string): Promise<KubeObject> {
  if (!conversion.convertMany) return conversion.convert(obj, version);
  const [out] = await conversion.convertMany([obj], version);
  return out!;
}

/** Events a watch converts ahead of its consumer before it waits for the consumer. */
const WATCH_CONVERSIONS_AHEAD = 64;

/**
 * Wraps `inner` so `served` objects are stored at `conversion.storageVersion`. Predicates and
 * validators see served objects; watch events are converted per watcher.
 */
export function versionedStorage(inner: Storage, conversion: Conversion, served: string): Storage {
  if (conversion.convertMany) return calledOutVersionedStorage(inner, conversion, conversion.convertMany.bind(conversion), served);
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
    guaranteedUpdate: async (key, tryUpdate, opts) => {
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

/** versionedStorage over a conversion that calls out. */
function calledOutVersionedStorage(
  inner: Storage,
  conversion: Conversion,
  convertMany: (objs: KubeObject[], version: string) => Promise<KubeObject[]>,
  served: string,
): Storage {
  const out = async (o: KubeObject): Promise<KubeObject> => (await convertMany([o], served))[0]!;
  const inn = async (o: KubeObject): Promise<KubeObject> => (await convertMany([o], conversion.storageVersion))[0]!;
  const outOpt = async (o: KubeObject | undefined): Promise<KubeObject | undefined> => (o ? out(o) : o);
  // What a selector sees of a stored object: its own fields under the served apiVersion.
  const servedApiVersion = (o: KubeObject): string => {
    const v = String(o.apiVersion ?? '');
    const slash = v.lastIndexOf('/');
    return slash >= 0 ? `${v.slice(0, slash)}/${served}` : served;
  };
  return {
    get: async (key, consistency) => outOpt(await inner.get(key, consistency)),
    list: async (prefix, opts: ListOptions) => {
      const pred = opts.predicate;
      const res = await inner.list(prefix, { ...opts, predicate: pred ? (o) => pred({ ...o, apiVersion: servedApiVersion(o) }) : undefined });
      return { ...res, items: res.items.length ? await convertMany(res.items, served) : [] };
    },
    create: async (key, obj, opts) => out(await inner.create(key, await inn(obj), opts)),
    guaranteedUpdate: async (key, tryUpdate, opts) => {
      const create = opts?.createIfMissing;
      // createIfMissing is synchronous: its object is converted before the update starts.
      const created = create ? create() : undefined;
      const createdIn = created ? await inn(created) : undefined;
      const res = await inner.guaranteedUpdate(
        key,
        async (cur) => {
          const next = await tryUpdate(await out(cur));
          return next === NO_CHANGE ? NO_CHANGE : inn(next);
        },
        opts && { ...opts, createIfMissing: create && (() => createdIn) },
      );
      return { ...res, object: await out(res.object) };
    },
    delete: async (key, opts) => {
      const validate = opts?.validate;
      return out(await inner.delete(key, opts && { ...opts, validate: validate ? async (cur) => validate(await out(cur)) : undefined }));
    },
    deleteUndecodable: (key, opts) => inner.deleteUndecodable(key, opts),
    ...(inner.storageKey ? { storageKey: (key: string) => inner.storageKey!(key) } : {}),
    watch: (opts, sink) => {
      // Each event is converted in arrival order; the chain passes them on in that order.
      let chain: Promise<void> = Promise.resolve();
      let pending = 0;
      // The revision of the last event passed on: what a bookmark may announce while others wait.
      let delivered = opts.afterRevision;
      // Ended: by a failed conversion, the storage's error, or the watcher's stop.
      let ended = false;
      const drained: Array<() => void> = [];
      const started: { handle?: WatchHandle } = {};
      let stopOnStart = false;
      const end = (err?: unknown) => {
        if (ended) return;
        ended = true;
        if (started.handle) started.handle.stop();
        else stopOnStart = true;
        if (err !== undefined) sink.error(err as Parameters<typeof sink.error>[0]);
      };
      const settle = () => {
        pending--;
        if (pending === 0) for (const resolve of drained.splice(0)) resolve();
      };
      const handle = inner.watch(opts, {
        event: (e: StorageEvent) => {
          if (ended) return;
          pending++;
          const converted = convertMany(e.prevObject ? [e.object, e.prevObject] : [e.object], served);
          // A conversion that fails before its turn is reported in order by the chain.
          converted.catch(() => undefined);
          chain = chain.then(async () => {
            try {
              const [object, prevObject] = await converted;
              if (!ended) {
                delivered = e.revision;
                sink.event({ ...e, object: object!, ...(prevObject ? { prevObject } : {}) });
              }
            } catch (err) {
              end(err);
            } finally {
              settle();
            }
          });
        },
        error: (err) => {
          chain = chain.then(() => end(err));
        },
        ready: () => {
          if (pending >= WATCH_CONVERSIONS_AHEAD) return new Promise<void>((resolve) => drained.push(resolve));
          return sink.ready?.();
        },
      });
      started.handle = handle;
      if (stopOnStart) handle.stop();
      return {
        stop: () => {
          end();
          handle.stop();
        },
        ...(handle.progress ? { progress: () => (pending > 0 ? delivered : handle.progress!()) } : {}),
      };
    },
    currentRevision: () => inner.currentRevision(),
    ...(inner.settled ? { settled: () => inner.settled!() } : {}),
    compactedRevision: () => inner.compactedRevision(),
    close: () => inner.close(),
  };
}
