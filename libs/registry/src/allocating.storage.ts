/**
 * The storage of a kind with an allocator (a Service's cluster IP and node ports): values are
 * taken right before the object is written and given back when the write fails, as Kubernetes'
 * genericregistry.Store does with its BeginCreate and BeginUpdate hooks.
 *
 * - create: the allocator fills in the object, then it is stored; a failed create reverts.
 * - guaranteedUpdate: each attempt's new state is allocated against the state it is based on;
 *   an attempt retried on fresher state reverts what it took first, a failed update reverts the
 *   last one, and a successful one commits it (giving back what only the old state held).
 * - delete: once the object is gone, what it held is given back.
 * Dry runs allocate without taking anything (the allocator is told), so the answer shows the
 * values a real write would get and the checks a real write would make.
 */
import type { KubeObject } from '@app/apimachinery';
import { NO_CHANGE, type Storage } from '@app/storage';
import type { AllocationTxn, WriteAllocator } from './kind.types.js';

/** Wraps `inner` so its writes take and give back the allocator's values. */
export function allocatingStorage(inner: Storage, allocator: WriteAllocator): Storage {
  return {
    ...inner,
    get: (key, consistency) => inner.get(key, consistency),
    list: (prefix, opts) => inner.list(prefix, opts),
    watch: (opts, sink) => inner.watch(opts, sink),
    currentRevision: () => inner.currentRevision(),
    compactedRevision: () => inner.compactedRevision(),
    deleteUndecodable: (key, opts) => inner.deleteUndecodable(key, opts),
    close: () => inner.close(),
    ...(inner.storageKey ? { storageKey: (key: string) => inner.storageKey!(key) } : {}),
    ...(inner.settled ? { settled: () => inner.settled!() } : {}),
    async create(key, obj, opts) {
      const dryRun = opts?.dryRun === true;
      const txn = await allocator.allocateCreate(obj, dryRun);
      let stored: KubeObject;
      try {
        stored = await inner.create(key, obj, opts);
      } catch (e) {
        await txn.revert();
        throw e;
      }
      await txn.commit();
      return stored;
    },
    async guaranteedUpdate(key, tryUpdate, opts) {
      const dryRun = opts?.dryRun === true;
      let txn: AllocationTxn | undefined;
      const drop = async () => {
        const t = txn;
        txn = undefined;
        await t?.revert();
      };
      let res;
      try {
        res = await inner.guaranteedUpdate(
          key,
          async (cur) => {
            await drop(); // an earlier attempt lost to a newer state
            const next = await tryUpdate(cur);
            if (next === NO_CHANGE) return next;
            txn = await allocator.allocateUpdate(next, cur, dryRun);
            return next;
          },
          opts,
        );
      } catch (e) {
        await drop();
        throw e;
      }
      if (res.changed || dryRun) await txn?.commit();
      else await drop();
      return res;
    },
    async delete(key, opts) {
      const last = await inner.delete(key, opts);
      if (opts?.dryRun !== true) await allocator.release(last);
      return last;
    },
  };
}
