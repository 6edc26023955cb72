/**
 * Range reads of the store over one LevelDB snapshot: the latest keyspace at the current
 * revision, history and latest side by side at a past one, and the event log for watches.
 */
import {
  type Db,
  type EventRef,
  type Snapshot,
  Cursor,
  EVENTS,
  HISTORY,
  LATEST,
  currentRecord,
  decodeEvent,
  decodeHistory,
  decodeHistoryRecord,
  decodeLatest,
  hex,
  historyKey,
  prefixEnd,
} from './mvcc.keyspace.js';
import type { KeyValue, MvccEvent } from './mvcc.types.js';

/** Options of `MvccStore.range`. */
export interface RangeOptions {
  /** Read at this revision (default: current). Below compactedRevision -> Compacted. */
  atRevision?: number;
  /** Max keys returned (0/undefined: all). */
  limit?: number;
  /** Exclusive start key (continue tokens). */
  startAfter?: string;
  /** Keeps only matching values; non-matching keys do not count against `limit`. */
  filter?: (kv: KeyValue) => boolean;
}

/** Result of `MvccStore.range`. */
export interface RangeResult {
  kvs: KeyValue[];
  /** The revision the range was read at. */
  revision: number;
  /** Keys in range after the last returned key, before filtering (0 when the scan finished). */
  remaining: number;
  /** True when the page stopped at `limit` and keys follow. */
  more: boolean;
}


/** LevelDB bounds of a range's first key in `space`: after `startAfter` when it is within the range. */
function lowerBound(space: string, prefix: string, startAfter: string | undefined): { gt?: string; gte?: string } {
  if (startAfter !== undefined && startAfter >= prefix) {
    // History keys of `startAfter` are `startAfter\0...`; the next key is >= startAfter + \x01.
    return space === HISTORY ? { gte: `${space}${startAfter}\u0001` } : { gt: space + startAfter };
  }
  return { gte: space + prefix };
}

/**
 * A range at the current revision: the latest keyspace from the start key, up to `limit` keys
 * that pass the filter; then the keys after the last one are counted for `remaining`.
 */
export async function rangeLatest(db: Db, snap: Snapshot, prefix: string, opts: RangeOptions, revision: number): Promise<RangeResult> {
  const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
  const lt = LATEST + prefixEnd(prefix);
  const it = db.iterator({ ...lowerBound(LATEST, prefix, opts.startAfter), lt, snapshot: snap });
  const kvs: KeyValue[] = [];
  let lastKey: string | undefined;
  let full = false;
  try {
    outer: for (;;) {
      const chunk = await it.nextv(Math.min(1000, Number.isFinite(limit) ? Math.max(limit - kvs.length, 16) : 1000));
      if (chunk.length === 0) break;
      for (const [k, v] of chunk) {
        const kv = decodeLatest(k.slice(LATEST.length), v);
        lastKey = kv.key;
        if (opts.filter && !opts.filter(kv)) continue;
        kvs.push(kv);
        if (kvs.length >= limit) {
          full = true;
          break outer;
        }
      }
    }
  } finally {
    await it.close();
  }
  let remaining = 0;
  if (full && lastKey !== undefined) {
    const keys = db.keys({ gt: LATEST + lastKey, lt, snapshot: snap });
    try {
      for (;;) {
        const chunk = await keys.nextv(1000);
        if (chunk.length === 0) break;
        remaining += chunk.length;
      }
    } finally {
      await keys.close();
    }
  }
  return { kvs, revision, remaining, more: remaining > 0 };
}

/**
 * A range at a past revision: per key, the current version (`k:`) when it was written at or
 * before `at`, else the newest superseded version or tombstone (`h:`) at or before `at`.
 * Both keyspaces are walked once, in key order, side by side.
 */
export async function rangeHistory(db: Db, snap: Snapshot, prefix: string, opts: RangeOptions, at: number): Promise<RangeResult> {
  const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
  const it = db.iterator({ ...lowerBound(HISTORY, prefix, opts.startAfter), lt: HISTORY + prefixEnd(prefix), snapshot: snap });
  const cur = new Cursor(db.iterator({ ...lowerBound(LATEST, prefix, opts.startAfter), lt: LATEST + prefixEnd(prefix), snapshot: snap }));
  const kvs: KeyValue[] = [];
  let remaining = 0;
  let full = false;
  const take = (kv: KeyValue | undefined): void => {
    if (!kv) return;
    if (full) {
      remaining++;
      return;
    }
    if (opts.filter && !opts.filter(kv)) return;
    kvs.push(kv);
    if (kvs.length >= limit) full = true;
  };
  // Current versions of keys before `key` (all when undefined): keys without history.
  const currentBefore = async (key: string | undefined): Promise<void> => {
    for (;;) {
      const e = await cur.peek();
      if (!e || (key !== undefined && e[0] >= LATEST + key)) return;
      cur.advance();
      const kv = decodeLatest(e[0].slice(LATEST.length), e[1]);
      if (kv.modRevision <= at) take(kv);
    }
  };
  const finish = async (key: string, best: Buffer | undefined): Promise<void> => {
    await currentBefore(key);
    const e = await cur.peek();
    if (e && e[0] === LATEST + key) {
      cur.advance();
      const kv = decodeLatest(key, e[1]);
      if (kv.modRevision <= at) return take(kv);
    }
    if (best !== undefined) take(decodeHistory(key, best));
  };
  try {
    let groupKey: string | undefined;
    let best: Buffer | undefined;
    for (;;) {
      const chunk = await it.nextv(1000);
      if (chunk.length === 0) break;
      for (const [k, v] of chunk) {
        const sep = k.lastIndexOf('\u0000');
        const key = k.slice(HISTORY.length, sep);
        const rev = parseInt(k.slice(sep + 1), 16);
        if (key !== groupKey) {
          if (groupKey !== undefined) await finish(groupKey, best);
          groupKey = key;
          best = undefined;
        }
        if (rev <= at) best = v;
      }
    }
    if (groupKey !== undefined) await finish(groupKey, best);
    await currentBefore(undefined);
  } finally {
    await it.close();
    await cur.close();
  }
  return { kvs, revision: at, remaining, more: remaining > 0 };
}

/**
 * The events of the event log with revision in (`afterRevision`, `revision`] for keys under
 * `match.prefix` (or exactly `match.key`), in order, read from `snap`, with their values and
 * previous values from the history and latest keyspaces. The caller checks the revisions.
 */
export async function readEvents(db: Db, snap: Snapshot, afterRevision: number, match: { prefix?: string; key?: string }): Promise<MvccEvent[]> {
  const events: MvccEvent[] = [];
  const keep =
    match.key !== undefined ? (k: string) => k === match.key : match.prefix ? (k: string) => k.startsWith(match.prefix!) : () => true;
  const it = db.iterator({ gte: EVENTS + hex(Math.max(afterRevision + 1, 0)), lt: EVENTS + '\u007f', snapshot: snap });
  try {
    for (;;) {
      const chunk = await it.nextv(1000);
      if (chunk.length === 0) break;
      const decoded: (MvccEvent | EventRef)[] = [];
      // Per reference: where its value and previous value are in `wanted` (-1: none).
      const slots: { value: number; prev: number }[] = [];
      const wanted: string[] = [];
      for (const [k, v] of chunk) {
        const rev = parseInt(k.slice(EVENTS.length, EVENTS.length + 16), 16);
        const e = decodeEvent(v, rev, keep);
        if (!e) continue;
        decoded.push(e);
        if ('prevRevision' in e) {
          const value = wanted.push(historyKey(e.key, e.revision)) - 1;
          slots.push({ value, prev: e.prevRevision > 0 ? wanted.push(historyKey(e.key, e.prevRevision)) - 1 : -1 });
        }
      }
      const records = wanted.length > 0 ? await db.getMany(wanted, { snapshot: snap }) : [];
      // A version not superseded yet is the current one, in `k:` only.
      const refs = decoded.filter((e): e is EventRef => 'prevRevision' in e);
      const currentKeys = refs.filter((_, i) => records[slots[i]!.value] === undefined).map((e) => LATEST + e.key);
      const currents = currentKeys.length > 0 ? await db.getMany(currentKeys, { snapshot: snap }) : [];
      let r = 0;
      let c = 0;
      for (const e of decoded) {
        if (!('prevRevision' in e)) {
          events.push(e);
          continue;
        }
        const slot = slots[r++]!;
        const stored = records[slot.value];
        const value = stored !== undefined ? decodeHistoryRecord(e.key, e.revision, stored) : currentRecord(e.key, e.revision, currents[c++]);
        if (slot.prev < 0) {
          events.push({ type: e.type, key: e.key, value, revision: e.revision });
          continue;
        }
        const prevStored = records[slot.prev];
        const prevValue = decodeHistoryRecord(e.key, e.prevRevision, prevStored);
        events.push({ type: e.type, key: e.key, value, prevValue, revision: e.revision });
      }
    }
  } finally {
    await it.close();
  }
  return events;
}

/** The newest superseded version of `key` at or before `at` in history (undefined: none, or a tombstone). */
export async function historyVersionAt(db: Db, snap: Snapshot, key: string, at: number): Promise<KeyValue | undefined> {
  const it = db.iterator({ gt: `${HISTORY}${key}\u0000`, lte: `${HISTORY}${key}\u0000${hex(at)}`, reverse: true, limit: 1, snapshot: snap });
  try {
    const entry = await it.next();
    return entry ? decodeHistory(key, entry[1]) : undefined;
  } finally {
    await it.close();
  }
}
