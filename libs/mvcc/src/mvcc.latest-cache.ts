/**
 * The read cache of the store's latest keyspace (current reads are the hot path).
 */
import type { KeyValue } from './mvcc.types.js';

/**
 * A bounded map from key to its current version, evicted oldest-inserted first. The store
 * decides what goes in (see MvccStore: writes update it after their batch is durable; a read
 * fills it only while no batch is in flight), so it never holds a value older than the store's.
 */
export class LatestCache {
  /** Most entries held by default. */
  static readonly DEFAULT_MAX_ENTRIES = 50_000;
  /** Most bytes of keys and values held. */
  static readonly MAX_BYTES = 64 * 1024 * 1024;
  /** Share of each bound an eviction pass brings the cache down to. */
  private static readonly EVICT_TO = 0.9;

  private readonly map = new Map<string, KeyValue>();
  private bytes = 0;

  constructor(private readonly maxEntries: number = LatestCache.DEFAULT_MAX_ENTRIES) {}

  /** Number of cached keys. */
  get size(): number {
    return this.map.size;
  }

  get(key: string): KeyValue | undefined {
    return this.map.get(key);
  }

  has(key: string): boolean {
    return this.map.has(key);
  }

  /** Caches `kv` as the current version of `key`; null forgets the key (deleted). */
  set(key: string, kv: KeyValue | null): void {
    const old = this.map.get(key);
    if (old) {
      this.map.delete(key);
      this.bytes -= old.value.length + key.length;
    }
    if (kv === null) return;
    this.map.set(key, kv);
    this.bytes += kv.value.length + key.length;
    if (this.map.size > this.maxEntries || this.bytes > LatestCache.MAX_BYTES) this.evict();
  }

  /** Forgets everything (the data was replaced). */
  clear(): void {
    this.map.clear();
    this.bytes = 0;
  }

  /**
   * Drops the oldest-inserted entries (Map order) until the cache is 10% under both bounds, in
   * one pass. Evicting one entry per insert with `keys().next()` cost ~25 µs per write once the
   * cache was full: V8's ordered hash table leaves a hole per deleted entry until it rehashes,
   * and each new iterator walks every hole left at the front by earlier evictions. One pass per
   * 10% of the cache keeps eviction amortized O(1).
   */
  private evict(): void {
    const maxEntries = this.maxEntries * LatestCache.EVICT_TO;
    const maxBytes = LatestCache.MAX_BYTES * LatestCache.EVICT_TO;
    for (const [k, v] of this.map) {
      if (this.map.size <= maxEntries && this.bytes <= maxBytes) break;
      this.map.delete(k);
      this.bytes -= v.value.length + k.length;
    }
  }
}
