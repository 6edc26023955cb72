/**
 * The storage a multi-version kind's store sees: objects go to storage at the kind's storage
 * version and come back at the served version (Kubernetes' storage codec converting between the
 * request version and the storage version). Keys carry no version, so every served version of a
 * kind shares its objects.
 *
 * A conversion that calls out (`convertMany`, a conversion webhook) is awaited: a list converts
 * its page in one call, a watch converts each event in order before passing it on (and ends with
 * the error when a conversion fails). A live event is converted once for every watcher of the
 * served version: the storage hands the same event to each of them, and the converted object is
 * kept with it (as kube's watch cache decodes an event once per version), so N watchers of a
 * kind behind a conversion webhook cost one call per event, not N. Label and field selectors
 * see the converted objects, as kube's do (it decodes each version's objects before
 * filtering): a list with a selector reads its page unfiltered and filters what the conversion
 * answered.
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

/**
 * The conversion of an object shared by every watcher it is handed to: a stored object (a live
 * event's, which the storage passes to all its watchers) is converted once, its result kept as
 * long as the object lives. Watchers treat event objects as read-only, so one result serves all.
 */
function sharedConversion(convert: (o: KubeObject) => KubeObject): (o: KubeObject) => KubeObject {
  const done = new WeakMap<KubeObject, KubeObject>();
  return (o) => {
    let c = done.get(o);
    if (!c) {
      c = convert(o);
      done.set(o, c);
    }
    return c;
  };
}

/**
 * sharedConversion for a conversion that calls out: the objects of an event not yet converted
 * (or being converted) for another watcher go in one call, which every watcher of them awaits. A
 * failed call is forgotten, so a later watcher of the same object calls again.
 */
function sharedCallOut(convertMany: (objs: KubeObject[]) => Promise<KubeObject[]>): (objs: KubeObject[]) => Promise<KubeObject[]> {
  const pending = new WeakMap<KubeObject, Promise<KubeObject>>();
  return (objs) => {
    const missing = objs.filter((o) => !pending.has(o));
    if (missing.length > 0) {
      const call = convertMany(missing);
      call.catch(() => {
        for (const o of missing) pending.delete(o);
      });
      missing.forEach((o, i) =>
        pending.set(
          o,
          call.then((r) => r[i]!),
        ),
      );
    }
    return Promise.all(objs.map((o) => pending.get(o)!));
  };
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
  const outShared = sharedConversion(out);
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
        event: (e: StorageEvent) => sink.event({ ...e, object: outShared(e.object), prevObject: e.prevObject && outShared(e.prevObject) }),
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
  const outShared = sharedCallOut((objs) => convertMany(objs, served));
  return {
    get: async (key, consistency) => outOpt(await inner.get(key, consistency)),
    list: async (prefix, opts: ListOptions) => {
      const pred = opts.predicate;
      if (!pred) {
        const res = await inner.list(prefix, opts);
        return { ...res, items: res.items.length ? await convertMany(res.items, served) : [] };
      }
      // Selectors see the converted objects, so the scan cannot filter: each round reads what
      // the page still lacks, converts it in one call and keeps what matches, until the page is
      // full or the range ends. Later rounds read at the first one's revision.
      const items: KubeObject[] = [];
      let res = await inner.list(prefix, { ...opts, predicate: undefined });
      for (;;) {
        if (res.items.length > 0) for (const o of await convertMany(res.items, served)) if (pred(o)) items.push(o);
        if (!opts.limit || items.length >= opts.limit || res.continueAfterKey === undefined) break;
        res = await inner.list(prefix, {
          ...opts,
          predicate: undefined,
          consistency: { mode: 'Exact', revision: res.revision },
          startAfterKey: res.continueAfterKey,
          limit: opts.limit - items.length,
        });
      }
      return { ...res, items };
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
          const converted = outShared(e.prevObject ? [e.object, e.prevObject] : [e.object]);
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
