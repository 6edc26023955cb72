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
import { type KeyIndex, compareKeys } from './mvcc.key-index.js';
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
  /**
   * Keys in range after the last returned key, before filtering (0 when the scan finished);
   * undefined when it cannot be known cheaply (see MvccStore.range).
   */
  remaining?: number;
  /** True when the page stopped at `limit` and keys follow. */
  more: boolean;
}

/**
 * The store's in-memory key index as of `revision`, or undefined when it describes another
 * revision (a batch in flight or landed since) or is disabled. Asked synchronously right before
 * a count, since the index moves with every applied batch.
 */
export type KeyIndexAt = (revision: number) => KeyIndex | undefined;

/**
 * Most events a count at a past revision reads, per page of `limit`: beyond it remaining is left
 * undefined, so the count costs at most in proportion to the page.
 */
function countBudget(limit: number): number {
  return Math.max(1000, 2 * (Number.isFinite(limit) ? limit : 0));
}

/** LevelDB bounds of a range's first key in `space`: after `startAfter` when it is within the range. */
function lowerBound(space: string, prefix: string, startAfter: string | undefined): { gt?: string; gte?: string } {
  if (startAfter !== undefined && startAfter >= prefix) {
    // History keys of `startAfter` are `startAfter\0...`; the next key is >= startAfter + \x01.
    return space === HISTORY ? { gte: `${space}${startAfter}\u0001` } : { gt: space + startAfter };
  }
  return { gte: space + prefix };
}

/** Entries to read ahead for a page of `limit`: the page and one more (whether keys follow). */
function readAhead(limit: number): number {
  return Number.isFinite(limit) ? Math.min(1000, limit + 1) : 1000;
}

/**
 * A range at the current revision: the latest keyspace from the start key, up to `limit` keys
 * that pass the filter, and one key more to learn whether keys follow. Costs the keys walked
 * (the page, plus those the filter rejected), never the rest of the range: `remaining` comes
 * from `count` (the in-memory key index), and is undefined when that has no answer.
 */
export async function rangeLatest(db: Db, snap: Snapshot, prefix: string, opts: RangeOptions, revision: number, index?: KeyIndexAt): Promise<RangeResult> {
  const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
  const cur = new Cursor(db.iterator({ ...lowerBound(LATEST, prefix, opts.startAfter), lt: LATEST + prefixEnd(prefix), snapshot: snap }), readAhead(limit));
  const kvs: KeyValue[] = [];
  let more = false;
  try {
    for (let e = await cur.peek(); e; e = await cur.peek()) {
      if (kvs.length >= limit) {
        more = true;
        break;
      }
      cur.advance();
      const kv = decodeLatest(e[0].slice(LATEST.length), e[1]);
      if (opts.filter && !opts.filter(kv)) continue;
      kvs.push(kv);
    }
  } finally {
    await cur.close();
  }
  const remaining = more ? index?.(revision)?.countBetween(kvs[kvs.length - 1]!.key, prefixEnd(prefix)) : 0;
  return { kvs, revision, remaining, more };
}

/**
 * A range at a past revision: per key, the current version (`k:`) when it was written at or
 * before `at`, else the newest superseded version or tombstone (`h:`) at or before `at`. Both
 * keyspaces are walked side by side in key order from the start key, and the walk stops at the
 * first live key after a full page: it costs the page (and the keys before it that were absent
 * at `at`, or that the filter rejected), plus their history versions, never the rest of the
 * range. `remaining` is the key index's count at `revision` (the snapshot's), corrected by the
 * events since `at` (countAt); undefined when those are more than the page's budget.
 */
export async function rangeHistory(
  db: Db,
  snap: Snapshot,
  prefix: string,
  opts: RangeOptions,
  at: number,
  revision: number,
  index?: KeyIndexAt,
): Promise<RangeResult> {
  const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
  const ahead = readAhead(limit);
  const hist = new Cursor(db.iterator({ ...lowerBound(HISTORY, prefix, opts.startAfter), lt: HISTORY + prefixEnd(prefix), snapshot: snap }), ahead);
  const cur = new Cursor(db.iterator({ ...lowerBound(LATEST, prefix, opts.startAfter), lt: LATEST + prefixEnd(prefix), snapshot: snap }), ahead);
  const kvs: KeyValue[] = [];
  let more = false;
  try {
    for (;;) {
      const c = await cur.peek();
      const h = await hist.peek();
      if (!c && !h) break;
      const ckey = c ? c[0].slice(LATEST.length) : undefined;
      const hkey = h ? h[0].slice(HISTORY.length, h[0].lastIndexOf('\u0000')) : undefined;
      const key = ckey === undefined || (hkey !== undefined && compareKeys(hkey, ckey) < 0) ? hkey! : ckey;
      // The key's history: its newest superseded version (or tombstone) at or before `at`.
      let best: Buffer | undefined;
      for (let e = hkey === key ? h : undefined; e; e = await hist.peek()) {
        const sep = e[0].lastIndexOf('\u0000');
        if (sep - HISTORY.length !== key.length || !e[0].startsWith(key, HISTORY.length)) break;
        if (parseInt(e[0].slice(sep + 1), 16) <= at) best = e[1];
        hist.advance();
      }
      let kv: KeyValue | undefined;
      if (ckey === key) {
        cur.advance();
        const current = decodeLatest(key, c![1]);
        if (current.modRevision <= at) kv = current;
      }
      if (!kv && best !== undefined) kv = decodeHistory(key, best);
      if (!kv) continue;
      if (kvs.length >= limit) {
        more = true;
        break;
      }
      if (opts.filter && !opts.filter(kv)) continue;
      kvs.push(kv);
    }
  } finally {
    await hist.close();
    await cur.close();
  }
  const after = kvs[kvs.length - 1]?.key;
  const remaining = !more
    ? 0
    : index && after !== undefined
      ? await countAt(db, snap, { after, before: prefixEnd(prefix) }, at, revision, countBudget(limit), index)
      : undefined;
  return { kvs, revision: at, remaining, more };
}

/**
 * The number of keys live at `at` in (after, before): the key index's count at `revision`, plus
 * each key the events in (`at`, `revision`] touched that was live at `at` and is not now, minus
 * each that is live now and was not at `at`. A key's first event after `at` tells whether it
 * was live at `at`: a delete, or a put over an earlier version. Reads at most `budget` events;
 * undefined when there are more, or when the index no longer describes `revision`.
 */
async function countAt(
  db: Db,
  snap: Snapshot,
  range: { after: string; before: string },
  at: number,
  revision: number,
  budget: number,
  index: KeyIndexAt,
): Promise<number | undefined> {
  // Every revision has at least one event: too many revisions, too many events.
  if (revision - at > budget || index(revision) === undefined) return undefined;
  const liveAt = new Map<string, boolean>();
  const it = db.iterator({ gte: EVENTS + hex(at + 1), lt: EVENTS + hex(revision + 1), limit: budget + 1, snapshot: snap });
  try {
    const entries = await it.all();
    if (entries.length > budget) return undefined;
    for (const [k, v] of entries) {
      const e = decodeEvent(v, parseInt(k.slice(EVENTS.length, EVENTS.length + 16), 16), (key) => !liveAt.has(key));
      if (!e) continue;
      liveAt.set(e.key, e.type === 'delete' || ('prevRevision' in e ? e.prevRevision > 0 : e.prevValue !== undefined));
    }
  } finally {
    await it.close();
  }
  const keys = index(revision);
  if (!keys) return undefined;
  let n = keys.countBetween(range.after, range.before);
  for (const [key, live] of liveAt) {
    if (compareKeys(key, range.after) <= 0 || compareKeys(key, range.before) >= 0) continue;
    n += (live ? 1 : 0) - (keys.has(key) ? 1 : 0);
  }
  return n;
}

/**
 * The events of the event log with revision in (`afterRevision`, `revision`] for keys under
 * `match.prefix` (or exactly `match.key`), in order, read from `snap`, with their values and
 * previous values from the history and latest keyspaces. The caller checks the revisions.
 *
 * Events at or below `compacted` (the compacted revision; only the events of that revision
 * itself are kept, see MvccCompactor.purge) are delivered as etcd delivers them: puts without
 * their previous version, which compaction dropped, and no deletes (their tombstones are gone).
 *
 * With `maxBytes`, the read stops early once the events read hold that many bytes of values and
 * previous values, at the end of the revision that reached it (a revision's events are never
 * split): `through` is then that revision. Values are fetched a group of events at a time then,
 * so the stop leaves at most one group fetched in vain. Without a stop `through` is undefined.
 */
export async function readEvents(
  db: Db,
  snap: Snapshot,
  afterRevision: number,
  match: { prefix?: string; key?: string },
  compacted = 0,
  until = Number.MAX_SAFE_INTEGER,
  maxBytes = Number.POSITIVE_INFINITY,
): Promise<{ events: MvccEvent[]; through?: number }> {
  const events: MvccEvent[] = [];
  let bytes = 0;
  // The revision the read stops after, once the bytes are reached.
  let stopAfter: number | undefined;
  const keep = match.key !== undefined ? (k: string) => k === match.key : match.prefix ? (k: string) => k.startsWith(match.prefix!) : () => true;
  const it = db.iterator({
    gte: EVENTS + hex(Math.max(afterRevision + 1, 0)),
    lt: until < Number.MAX_SAFE_INTEGER ? EVENTS + hex(until + 1) : EVENTS + '\u007f',
    snapshot: snap,
  });
  const group = maxBytes === Number.POSITIVE_INFINITY ? EVENT_CHUNK : FETCH_GROUP;
  try {
    for (;;) {
      const chunk = await it.nextv(EVENT_CHUNK);
      if (chunk.length === 0) break;
      const decoded: (MvccEvent | EventRef)[] = [];
      let past = false;
      for (const [k, v] of chunk) {
        const rev = parseInt(k.slice(EVENTS.length, EVENTS.length + 16), 16);
        if (stopAfter !== undefined && rev > stopAfter) {
          past = true;
          break;
        }
        let e = decodeEvent(v, rev, keep);
        if (!e) continue;
        if (rev <= compacted) {
          if (e.type === 'delete') continue;
          if ('prevRevision' in e) e = { ...e, prevRevision: 0 };
          else if (e.prevValue) e = { type: e.type, key: e.key, value: e.value, revision: e.revision };
        }
        decoded.push(e);
      }
      for (let i = 0; i < decoded.length; i += group) {
        for (const e of await withValues(db, snap, decoded.slice(i, i + group))) {
          if (stopAfter !== undefined && e.revision > stopAfter) return { events, through: stopAfter };
          events.push(e);
          if (stopAfter !== undefined) continue;
          bytes += e.value.value.length + (e.prevValue?.value.length ?? 0);
          if (bytes >= maxBytes) stopAfter = e.revision;
        }
      }
      if (past) return { events, through: stopAfter };
    }
  } finally {
    await it.close();
  }
  return { events };
}

/**
 * The events of `decoded` with their values: a reference's value and previous value come from
 * the history keyspace, or for a version not superseded yet from the latest one.
 */
async function withValues(db: Db, snap: Snapshot, decoded: readonly (MvccEvent | EventRef)[]): Promise<MvccEvent[]> {
  // Per reference: where its value and previous value are in `wanted` (-1: none).
  const slots: { value: number; prev: number }[] = [];
  const wanted: string[] = [];
  for (const e of decoded) {
    if (!('prevRevision' in e)) continue;
    const value = wanted.push(historyKey(e.key, e.revision)) - 1;
    slots.push({ value, prev: e.prevRevision > 0 ? wanted.push(historyKey(e.key, e.prevRevision)) - 1 : -1 });
  }
  if (wanted.length === 0) return decoded as MvccEvent[];
  const records = await db.getMany(wanted, { snapshot: snap });
  const refs = decoded.filter((e): e is EventRef => 'prevRevision' in e);
  const currentKeys = refs.filter((_, i) => records[slots[i]!.value] === undefined).map((e) => LATEST + e.key);
  const currents = currentKeys.length > 0 ? await db.getMany(currentKeys, { snapshot: snap }) : [];
  const out: MvccEvent[] = [];
  let r = 0;
  let c = 0;
  for (const e of decoded) {
    if (!('prevRevision' in e)) {
      out.push(e);
      continue;
    }
    const slot = slots[r++]!;
    const stored = records[slot.value];
    const value = stored !== undefined ? decodeHistoryRecord(e.key, e.revision, stored) : currentRecord(e.key, e.revision, currents[c++]);
    if (slot.prev < 0) {
      out.push({ type: e.type, key: e.key, value, revision: e.revision });
      continue;
    }
    const prevValue = decodeHistoryRecord(e.key, e.prevRevision, records[slot.prev]);
    out.push({ type: e.type, key: e.key, value, prevValue, revision: e.revision });
  }
  return out;
}

/** Event records read per step of readEvents. */
const EVENT_CHUNK = 1000;

/** Events whose values are fetched together when readEvents is bounded by bytes. */
const FETCH_GROUP = 64;

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
