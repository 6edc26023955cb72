/**
 * The storage a kind's store sees, refusing stored objects of another kind. A value under the
 * kind's keys whose `kind` is not the kind's, or whose `apiVersion` names another group, is valid
 * JSON but not an object of this kind: Kubernetes' decoder fails on it as on any undecodable
 * value (it cannot convert a Secret into a ConfigMap), so here it is a CorruptObject too, with
 * the same answers (docs/deletion.md "Objects that cannot be read"): reads name its key, lists
 * name every such key they read, a watch ends naming it, and the unsafe deletion removes it. A
 * value without `kind` or `apiVersion` is taken as the kind's own and given them, as Kubernetes
 * defaults them from the type it decodes into. Such values only get there around the API (the etcd API, a
 * tool on the external etcd): every write through the store stores the kind's own.
 */
import type { KubeObject } from '@app/apimachinery';
import { foreignKind, isCorruptObject, StorageError, type ExpectedKind, type Storage, type WatchHandle } from '@app/storage';

/**
 * Wraps `inner` so objects of another kind than `decl`'s are CorruptObject errors, and objects
 * without kind or apiVersion get `decl`'s (its apiVersion being the one it is stored at).
 */
export function kindCheckedStorage(inner: Storage, decl: ExpectedKind): Storage {
  const expected: ExpectedKind = { kind: decl.kind, group: decl.group, apiVersion: decl.apiVersion, decodeProblem: decl.decodeProblem };
  // Errors name the key as the backing store holds it (the etcd key on an external etcd).
  const named = (key: string): string => inner.storageKey?.(key) ?? key;
  const check = (key: string, o: KubeObject): void => {
    const why = foreignKind(expected, o);
    if (why) throw new StorageError('CorruptObject', named(key), why);
  };
  // The storage hands the same decoded event to every watcher of a key range, so each event's
  // objects are judged once however many watches of this kind see them (the decode check walks
  // the whole object).
  const verdicts = new WeakMap<KubeObject, string | false>();
  const judged = (o: KubeObject): string | undefined => {
    let v = verdicts.get(o);
    if (v === undefined) verdicts.set(o, (v = foreignKind(expected, o) ?? false));
    return v || undefined;
  };
  return {
    get: async (key, consistency) => {
      const o = await inner.get(key, consistency);
      if (o) check(key, o);
      return o;
    },
    // The storage looks at each value as it decodes it, where it knows the value's key.
    list: (prefix, opts) => inner.list(prefix, { ...opts, kind: expected }),
    create: (key, obj, opts) => inner.create(key, obj, opts),
    guaranteedUpdate: (key, tryUpdate, opts) =>
      inner.guaranteedUpdate(
        key,
        (cur) => {
          check(key, cur);
          return tryUpdate(cur);
        },
        opts,
      ),
    delete: (key, opts) => {
      const validate = opts?.validate;
      return inner.delete(key, {
        ...opts,
        validate: (cur) => {
          check(key, cur);
          return validate?.(cur);
        },
      });
    },
    deleteUndecodable: async (key, opts) => {
      let cur: KubeObject | undefined;
      try {
        cur = await inner.get(key, { mode: 'MostRecent' });
      } catch (e) {
        if (isCorruptObject(e)) return inner.deleteUndecodable(key, opts);
        throw e;
      }
      if (!cur) throw new StorageError('KeyNotFound', key, `key ${key} not found`);
      if (!foreignKind(expected, cur)) return { readable: true };
      if (opts?.dryRun) return { readable: false, revision: inner.currentRevision() };
      // The value judged foreign, and nothing written since (a Conflict otherwise).
      const last = await inner.delete(key, { preconditions: { resourceVersion: cur.metadata.resourceVersion } });
      return { readable: false, revision: Number(last.metadata.resourceVersion) };
    },
    watch: (opts, sink) => {
      let failed = false;
      // Events may arrive before inner.watch returns: a failure then stops the watch once it has.
      const started: { handle?: WatchHandle } = {};
      let stopOnStart = false;
      const handle = inner.watch(opts, {
        event: (e) => {
          if (failed) return;
          const why = judged(e.object) ?? (e.prevObject && judged(e.prevObject));
          if (!why) return sink.event(e);
          failed = true;
          if (started.handle) started.handle.stop();
          else stopOnStart = true;
          sink.error(new StorageError('CorruptObject', named(e.key), why));
        },
        error: (err) => {
          if (!failed) sink.error(err);
        },
        ...(sink.ready ? { ready: () => sink.ready?.() } : {}),
      });
      started.handle = handle;
      if (stopOnStart) handle.stop();
      return handle;
    },
    ...(inner.storageKey ? { storageKey: (key: string) => named(key) } : {}),
    currentRevision: () => inner.currentRevision(),
    ...(inner.settled ? { settled: () => inner.settled!() } : {}),
    compactedRevision: () => inner.compactedRevision(),
    close: () => inner.close(),
  };
}
