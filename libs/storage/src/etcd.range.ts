/**
 * etcd's key ranges on the MVCC store (docs/etcd-api.md "Ranges"): a range is [key, end) in
 * byte order, the single key when `end` is absent, everything from `key` on when `end` is "\0".
 * The store reads by prefix, so a range is read as the longest prefix its bounds share, starting
 * at `key` and filtered to the bounds. Keys under ETCD_RESERVED_PREFIX (lease records) are the
 * server's own and never appear in an answer. The cluster's records (CLUSTER_RECORDS_PREFIX:
 * members, removal markers, alarms) are left out of every range, so that `etcdctl del --prefix
 * ""` empties the keyspace as on etcd (whose members live outside it) without taking the
 * cluster's membership with it; a request that names one of them by its exact key reaches it.
 */
import { compareKeys, type KeyValue, type MvccStore } from '@app/mvcc';
import type { EtcdKeyRange, EtcdKv, EtcdRangeSpec } from './etcd.command.js';
import { CLUSTER_RECORDS_PREFIX } from './space.quota.js';

/** Prefix of the keys that hold lease state; invisible through the etcd API. */
export const ETCD_RESERVED_PREFIX = '\u0001etcd/';

/** True when `key` is one of the server's own (lease state). */
export function isReservedKey(key: string): boolean {
  return key.startsWith(ETCD_RESERVED_PREFIX);
}

/** True when a range of the etcd API leaves `key` out: a lease record, or one of the cluster's records. */
export function isHiddenFromRanges(key: string): boolean {
  return isReservedKey(key) || key.startsWith(CLUSTER_RECORDS_PREFIX);
}

/**
 * True when the etcd API shows `key` in range `r`: it lies in it, is not a lease record, and
 * is not a cluster record unless `r` names that key alone.
 */
export function visibleIn(key: string, r: EtcdKeyRange): boolean {
  if (r.end === undefined) return key === r.key && !isReservedKey(key);
  return !isHiddenFromRanges(key) && inRange(key, r);
}

/** True when `key` lies in the range `r`. */
export function inRange(key: string, r: EtcdKeyRange): boolean {
  if (r.end === undefined) return key === r.key;
  if (compareKeys(key, r.key) < 0) return false;
  return r.end === '\u0000' || compareKeys(key, r.end) < 0;
}

/** True when the two ranges share a key (used by the duplicate-key rule of a Txn). */
export function rangesOverlap(a: EtcdKeyRange, b: EtcdKeyRange): boolean {
  if (a.end === undefined) return inRange(a.key, b);
  if (b.end === undefined) return inRange(b.key, a);
  const aEndsBeforeB = a.end !== '\u0000' && compareKeys(a.end, b.key) <= 0;
  const bEndsBeforeA = b.end !== '\u0000' && compareKeys(b.end, a.key) <= 0;
  return !aEndsBeforeB && !bEndsBeforeA;
}

function commonPrefix(a: string, b: string): string {
  let i = 0;
  while (i < a.length && i < b.length && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  // Never split a surrogate pair.
  if (i > 0 && a.charCodeAt(i - 1) >= 0xd800 && a.charCodeAt(i - 1) < 0xdc00) i--;
  return a.slice(0, i);
}

/** A string just below `key` in key order, so that "after it" starts at `key` (filtered anyway). */
function justBelow(key: string): string {
  const last = key.charCodeAt(key.length - 1);
  return key.slice(0, -1) + String.fromCharCode(Math.max(0, last - 1)) + '\u{10FFFF}';
}

/**
 * The visible keys of range `r` at revision `at` (default: current), in key order, with the
 * revision read at. Throws MvccError Compacted/FutureRevision as MvccStore.range does.
 */
export async function readRange(store: MvccStore, r: EtcdKeyRange, at?: number): Promise<{ kvs: KeyValue[]; revision: number }> {
  if (r.end === undefined) {
    if (isReservedKey(r.key) || r.key.includes('\u0000')) return { kvs: [], revision: at ?? store.currentRevision() };
    const revision = at ?? store.currentRevision();
    const kv = await store.get(r.key, at);
    return { kvs: kv ? [kv] : [], revision };
  }
  const prefix = r.end === '\u0000' ? '' : commonPrefix(r.key, r.end);
  const startAfter = r.key.length > prefix.length && r.key !== '\u0000' ? justBelow(r.key) : undefined;
  const res = await store.range(prefix, {
    ...(at !== undefined ? { atRevision: at } : {}),
    ...(startAfter !== undefined ? { startAfter } : {}),
    filter: (kv) => visibleIn(kv.key, r),
  });
  return { kvs: res.kvs, revision: res.revision };
}

/**
 * Applies a Range request's filters, sort, limit, keys_only and count_only to the keys of its
 * range (etcd's order of evaluation: filter by revisions, sort, then limit; with neither a sort
 * order nor a filter, etcd reads limit+1 keys first and sorts only those). `count` is the
 * number of keys in the range, before the revision filters, as etcd counts them.
 */
export function shapeRange(all: KeyValue[], spec: EtcdRangeSpec, leaseOf: (key: string) => string): { kvs: EtcdKv[]; count: number; more: boolean } {
  let kvs = all;
  const count = all.length;
  const { minModRevision: minMod, maxModRevision: maxMod, minCreateRevision: minCreate, maxCreateRevision: maxCreate } = spec;
  const limit = spec.limit && spec.limit > 0 ? spec.limit : 0;
  const filtered = !!(minMod || maxMod || minCreate || maxCreate);
  // etcd reads only limit+1 keys (in key order) when it has no order to sort by and no filter,
  // then sorts those: without an order a sort target other than KEY sorts only that page.
  if ((spec.sortOrder ?? 'NONE') === 'NONE' && !filtered && limit > 0) kvs = kvs.slice(0, limit + 1);
  if (filtered) {
    kvs = kvs.filter(
      (kv) =>
        (!minMod || kv.modRevision >= minMod) &&
        (!maxMod || kv.modRevision <= maxMod) &&
        (!minCreate || kv.createRevision >= minCreate) &&
        (!maxCreate || kv.createRevision <= maxCreate),
    );
  }
  const order = spec.sortOrder ?? 'NONE';
  const target = spec.sortTarget ?? 'KEY';
  if (order !== 'NONE' || target !== 'KEY') {
    const by = (a: KeyValue, b: KeyValue): number => {
      switch (target) {
        case 'VERSION':
          return a.version - b.version;
        case 'CREATE':
          return a.createRevision - b.createRevision;
        case 'MOD':
          return a.modRevision - b.modRevision;
        case 'VALUE':
          return Buffer.compare(Buffer.from(a.value), Buffer.from(b.value));
        default:
          return compareKeys(a.key, b.key);
      }
    };
    // etcd: a sort target without an order sorts ascending.
    const sign = order === 'DESCEND' ? -1 : 1;
    kvs = [...kvs].sort((a, b) => sign * by(a, b) || compareKeys(a.key, b.key));
  }
  if (spec.countOnly) return { kvs: [], count, more: false };
  const more = limit > 0 && kvs.length > limit;
  if (more) kvs = kvs.slice(0, limit);
  const out = kvs.map((kv) => ({ ...kv, value: spec.keysOnly ? new Uint8Array(0) : kv.value, lease: leaseOf(kv.key) }));
  return { kvs: out, count, more };
}
