/**
 * Deletion (conventions "Deletion of an object"; Kubernetes' genericregistry.Store.Delete,
 * DeleteCollection and the finalizer bookkeeping around them), on top of a store's core.
 */
import { isDeepStrictEqual } from 'node:util';
import { formatMetaTime, Errors, StatusError, type KubeObject } from '@app/apimachinery';
import { isCorruptObject, NO_CHANGE, StorageError, type Storage } from '@app/storage';
import type { Admission } from './admission.port.js';
import type { KindDeclaration, RequestContext } from './kind.types.js';
import type { DeleteOptions } from './request.options.js';

/** What deletion needs of a store. */
export interface StoreCore {
  readonly decl: KindDeclaration;
  readonly gr: { group: string; resource: string };
  /** The kind's storage (converting to the served version for multi-version kinds). */
  readonly storage: Storage;
  readonly admission: Admission;
  key(ns: string, name: string): string;
  /** Maps a storage failure to a Status error naming `name`. */
  mapError(err: unknown, name: string): never;
  /** The read-side cleanup of the kind (strategy.decorate) on a copy. */
  decorate(obj: KubeObject): KubeObject;
}

/**
 * delete verb.
 *
 * - Preconditions (uid, resourceVersion) are checked first and again atomically with the write;
 *   a mismatch is 409 Conflict with Kubernetes' "Precondition failed: ..." message.
 * - The garbage-collection finalizers follow the propagation policy first
 *   (deletionFinalizersForGarbageCollection): Orphan adds `orphan`, Foreground adds
 *   `foregroundDeletion`, Background removes both; an explicit orphanDependents wins; with no
 *   option the finalizers already present decide, else the kind's default policy.
 * - An object left with finalizers (or kind-specific pending ones, or a kind with a
 *   prepareForDelete hook such as Namespace) becomes Terminating: deletionTimestamp is set once
 *   (never moved later), deletionGracePeriodSeconds becomes 0 (these kinds have no graceful
 *   period; it only ever decreases), generation is bumped as markAsDeleting does; the object
 *   stays readable and `deleted` is false. A repeated delete may still change the GC finalizers.
 * - Otherwise the object is removed and its last state returned with `deleted` true.
 * Dry run computes the same answer and writes nothing.
 */
export async function deleteObject(
  core: StoreCore,
  ns: string,
  name: string,
  options: DeleteOptions,
  ctx: RequestContext,
): Promise<{ object: KubeObject | undefined; deleted: boolean }> {
  const { decl, storage } = core;
  const key = core.key(ns, name);
  const pre = options.preconditions;
  const unsafe = options.ignoreStoreReadErrorWithClusterBreakingPotential === true;
  let current: KubeObject | undefined;
  try {
    current = await storage.get(key, { mode: 'MostRecent' });
  } catch (e) {
    if (unsafe && isCorruptObject(e)) return deleteUndecodable(core, key, name, ctx);
    core.mapError(e, name);
  }
  if (!current) throw Errors.notFound(core.gr, name);
  if (unsafe) throw unsafeDeleteOfReadable(core, name);
  checkPreconditions(core, current, pre, name);
  decl.strategy?.validateDelete?.(current, ctx);
  if (!ctx.admitted) await core.admission.validate({ operation: 'DELETE', decl, namespace: ns, name, subresource: '', oldObject: current, ctx });

  const gc = deletionFinalizers(decl, current, options);
  const pending = decl.strategy?.pendingFinalizers?.(current) ?? [];
  const graceful = gc.finalizers.length > 0 || pending.length > 0 || decl.strategy?.prepareForDelete !== undefined;
  if (graceful) {
    let res: { object: KubeObject };
    try {
      res = await storage.guaranteedUpdate(
        key,
        (cur) => {
          checkPreconditions(core, cur, pre, name);
          const next = structuredClone(cur);
          const m = next.metadata;
          const fins = deletionFinalizers(decl, cur, options);
          if (fins.changed) {
            if (fins.finalizers.length) m.finalizers = fins.finalizers;
            else delete m.finalizers;
          }
          if (m.deletionTimestamp === undefined || m.deletionTimestamp === null) {
            // markAsDeleting: the first delete bumps generation and stamps the time once.
            if (typeof m.generation === 'number' && m.generation > 0) m.generation = m.generation + 1;
            m.deletionTimestamp = formatMetaTime(ctx.now());
            decl.strategy?.prepareForDelete?.(next, ctx);
          }
          const grace = m.deletionGracePeriodSeconds;
          if (typeof grace !== 'number' || grace > 0) m.deletionGracePeriodSeconds = 0;
          if (isDeepStrictEqual(next, cur)) return NO_CHANGE;
          delete m.resourceVersion;
          return next;
        },
        { dryRun: ctx.dryRun },
      );
    } catch (e) {
      core.mapError(e, name);
    }
    if (!readyToRemove(decl, res.object)) return { object: core.decorate(res.object), deleted: false };
    if (ctx.dryRun) return { object: core.decorate(res.object), deleted: true };
    const last = await removeIfFinalized(core, ns, name, res.object, false);
    return { object: core.decorate(last), deleted: readyToRemove(decl, last) };
  }
  try {
    const last = await storage.delete(key, {
      dryRun: ctx.dryRun,
      // Checked on the state actually deleted, so a concurrent write cannot slip past.
      validate: (cur) => checkPreconditions(core, cur, pre, name),
    });
    return { object: core.decorate(last), deleted: true };
  } catch (e) {
    core.mapError(e, name);
  }
}

/**
 * The unsafe deletion of an object whose stored value does not decode (Kubernetes'
 * corruptObjectDeleter): the key is removed as it is, conditional on the undecodable value's
 * revision, ignoring finalizers, preconditions and admission, none of which can be judged
 * without the object. There is no object to answer with (`object` undefined).
 */
async function deleteUndecodable(core: StoreCore, key: string, name: string, ctx: RequestContext): Promise<{ object: undefined; deleted: true }> {
  let r;
  try {
    r = await core.storage.deleteUndecodable(key, { dryRun: ctx.dryRun });
  } catch (e) {
    core.mapError(e, name);
  }
  if (r.readable) throw unsafeDeleteOfReadable(core, name);
  return { object: undefined, deleted: true };
}

/** 422 for ignoreStoreReadErrorWithClusterBreakingPotential on an object that reads fine. */
function unsafeDeleteOfReadable(core: StoreCore, name: string): StatusError {
  return Errors.invalid(core.gr.group, core.gr.resource, name, [
    {
      type: 'FieldValueInvalid',
      field: 'ignoreStoreReadErrorWithClusterBreakingPotential',
      value: true,
      detail: 'is exclusively used to delete corrupt object(s), try again by removing this option',
    },
  ]);
}

/**
 * deletecollection verb (Kubernetes Store.DeleteCollection) over the objects already selected:
 * deletes each with the same options (propagation policy, dry run; per-object preconditions make
 * no sense for a collection and are dropped). Objects already gone are skipped; the first other
 * error stops the call. Returns how many objects were deleted or marked Terminating.
 */
export async function deleteEach(core: StoreCore, ns: string, items: KubeObject[], options: DeleteOptions, ctx: RequestContext): Promise<number> {
  let n = 0;
  for (const item of items) {
    try {
      await deleteObject(
        core,
        core.decl.namespaced ? (item.metadata.namespace ?? ns) : '',
        item.metadata.name as string,
        { ...options, preconditions: undefined },
        ctx,
      );
      n++;
    } catch (e) {
      if (e instanceof StatusError && e.code === 404) continue;
      throw e;
    }
  }
  return n;
}

/**
 * The finalizer list a delete with these options leaves (Kubernetes'
 * deletionFinalizersForGarbageCollection with shouldOrphanDependents/shouldDeleteDependents).
 * The kind's default policy is `decl.defaultGarbageCollectionPolicy` when declared
 * ('OrphanDependents' | 'DeleteDependents' | 'Unsupported'), else DeleteDependents, which is
 * what every kind without a GarbageCollectionDeleteStrategy gets (orphanDependents defaults false).
 */
function deletionFinalizers(decl: KindDeclaration, obj: KubeObject, options: DeleteOptions): { changed: boolean; finalizers: string[] } {
  const ORPHAN = 'orphan';
  const FOREGROUND = 'foregroundDeletion';
  const existing = Array.isArray(obj.metadata.finalizers) ? (obj.metadata.finalizers as string[]) : [];
  const policy = decl.defaultGarbageCollectionPolicy;
  if (policy === 'Unsupported') return { changed: false, finalizers: existing };
  const fromFinalizers = (): 'orphan' | 'foreground' | undefined => {
    for (const f of existing) {
      if (f === ORPHAN) return 'orphan';
      if (f === FOREGROUND) return 'foreground';
    }
    return undefined;
  };
  let orphan: boolean;
  let foreground: boolean;
  if (options.orphanDependents !== undefined) {
    orphan = options.orphanDependents;
    foreground = false;
  } else if (options.propagationPolicy !== undefined) {
    orphan = options.propagationPolicy === 'Orphan';
    foreground = options.propagationPolicy === 'Foreground';
  } else {
    const f = fromFinalizers();
    orphan = f === 'orphan' || (f === undefined && policy === 'OrphanDependents');
    foreground = f === 'foreground';
  }
  const next = existing.filter((f) => f !== ORPHAN && f !== FOREGROUND);
  if (orphan) next.push(ORPHAN);
  if (foreground) next.push(FOREGROUND);
  // The same set of finalizers, looked up in a set (a list searched per finalizer would be n x n).
  const had = new Set(existing);
  const same = new Set(next).size === had.size && next.every((f) => had.has(f));
  return same ? { changed: false, finalizers: existing } : { changed: true, finalizers: next };
}

/**
 * DeleteOptions preconditions (metav1.Preconditions, checked like storage.Preconditions.Check):
 * a set uid or resourceVersion that differs from the stored object is 409 Conflict with
 * Kubernetes' messages.
 */
function checkPreconditions(core: StoreCore, cur: KubeObject, pre: DeleteOptions['preconditions'], name: string): void {
  if (pre?.uid !== undefined && pre.uid !== cur.metadata.uid) {
    throw Errors.conflict(core.gr, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${cur.metadata.uid ?? ''}`);
  }
  if (pre?.resourceVersion !== undefined && pre.resourceVersion !== cur.metadata.resourceVersion) {
    throw Errors.conflict(
      core.gr,
      name,
      `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${cur.metadata.resourceVersion ?? ''}`,
    );
  }
}

/**
 * True when a terminating object has no finalizers left and must now be removed
 * (conventions "Deletion of an object": Terminating -> Removed when the list becomes empty;
 * kind-specific pending finalizers such as Namespace spec.finalizers count too).
 */
export function readyToRemove(decl: KindDeclaration, obj: KubeObject): boolean {
  if (obj.metadata.deletionTimestamp === undefined || obj.metadata.deletionTimestamp === null) return false;
  const f = (obj.metadata.finalizers as string[] | undefined) ?? [];
  const pending = decl.strategy?.pendingFinalizers?.(obj) ?? [];
  return f.length === 0 && pending.length === 0;
}

/**
 * Removes a terminating object whose last finalizer went away, and returns its last state.
 * The removal is conditional on the uid and resourceVersion that were judged ready, so a
 * concurrent write is never lost; on such a conflict the fresh state is judged again (a
 * conflict must not leave a finalized object behind forever). Dry run removes nothing.
 */
export async function removeIfFinalized(core: StoreCore, ns: string, name: string, obj: KubeObject, dryRun: boolean): Promise<KubeObject> {
  if (dryRun) return obj;
  const key = core.key(ns, name);
  let cur: KubeObject | undefined = obj;
  for (let attempt = 0; attempt < 8 && cur && readyToRemove(core.decl, cur); attempt++) {
    try {
      return await core.storage.delete(key, { preconditions: { uid: cur.metadata.uid, resourceVersion: cur.metadata.resourceVersion } });
    } catch (e) {
      if (e instanceof StorageError && e.code === 'KeyNotFound') return cur;
      if (!(e instanceof StorageError && e.code === 'Conflict')) core.mapError(e, name);
    }
    try {
      const fresh: KubeObject | undefined = await core.storage.get(key, { mode: 'MostRecent' });
      if (!fresh || fresh.metadata.uid !== obj.metadata.uid) return cur;
      cur = fresh;
    } catch (e) {
      core.mapError(e, name);
    }
  }
  return cur ?? obj;
}
