/**
 * A range's bitmap as a stored object, in the shape of Kubernetes' RangeAllocation under its
 * keys (`/registry/ranges/serviceips`, `/registry/ranges/servicenodeports`):
 *
 *   { apiVersion: v1, kind: RangeAllocation, metadata: { name }, range: '10.0.0.0/24', data: <base64> }
 *
 * `data` holds bit i of the bitmap (offset i into the range) in byte i/8, bit i%8. No kind serves
 * these keys. Every change is a compare-and-swap of the whole object, retried on fresh state, so
 * concurrent API servers never take the same value. A stored object of another range (the flag
 * changed between starts) or one that does not decode is rebuilt from the Services stored now.
 */
import type { KubeObject } from '@app/apimachinery';
import { NO_CHANGE, type Storage } from '@app/storage';
import type { RangeStore } from './service.allocator.js';
import { Bitmap, type ValueRange } from './service.ranges.js';

/** The storage keys of the two ranges. */
export const SERVICE_IP_RANGE_KEY = '/registry/ranges/serviceips';
export const NODE_PORT_RANGE_KEY = '/registry/ranges/servicenodeports';

/** The RangeStore of one range on the node's storage. */
export class StorageRangeStore<V> implements RangeStore {
  constructor(
    private readonly storage: Pick<Storage, 'get' | 'guaranteedUpdate'>,
    private readonly key: string,
    private readonly range: ValueRange<V>,
    /** The values the stored Services hold in this range, for a bitmap that must be rebuilt. */
    private readonly inUse: () => Promise<V[]>,
  ) {}

  private empty(): KubeObject {
    return { apiVersion: 'v1', kind: 'RangeAllocation', metadata: { name: this.key.slice(this.key.lastIndexOf('/') + 1) }, range: this.range.text, data: '' };
  }

  /** The bitmap of a stored object, or one rebuilt from the Services when it is of another range. */
  private async bitsOf(stored: KubeObject | undefined): Promise<{ bits: Bitmap; rebuilt: boolean }> {
    if (stored && stored.range === this.range.text && typeof stored.data === 'string') {
      const bytes = Buffer.from(stored.data, 'base64');
      if (bytes.length <= Math.ceil(this.range.size / 8)) return { bits: new Bitmap(this.range.size, bytes), rebuilt: false };
    }
    // Absent (first use of the range), of another range, or undecodable: what the Services hold.
    const bits = new Bitmap(this.range.size);
    for (const v of await this.inUse()) {
      const off = this.range.offsetOf(v);
      if (off !== undefined) bits.set(off);
    }
    return { bits, rebuilt: true };
  }

  async update<T>(change: (bits: Bitmap) => T, dryRun: boolean): Promise<T> {
    if (dryRun) {
      const { bits } = await this.bitsOf(await this.storage.get(this.key, { mode: 'MostRecent' }));
      return change(bits);
    }
    let result: T | undefined;
    await this.storage.guaranteedUpdate(
      this.key,
      async (cur) => {
        const { bits, rebuilt } = await this.bitsOf(cur);
        const before = Buffer.from(bits.bytes);
        result = change(bits);
        if (!rebuilt && before.equals(bits.bytes)) return NO_CHANGE;
        const next = this.empty();
        next.metadata = { ...cur.metadata };
        delete next.metadata.resourceVersion;
        next.data = Buffer.from(bits.bytes).toString('base64');
        return next;
      },
      // Without `data`, so that the first use builds the bitmap from the Services stored already.
      { createIfMissing: () => ({ ...this.empty(), data: undefined }) },
    );
    return result as T;
  }

  /** The stored bitmap and its resourceVersion; undefined before the range's first use. */
  async snapshot(): Promise<{ bits: Bitmap; version: string } | undefined> {
    const stored = await this.storage.get(this.key, { mode: 'MostRecent' });
    if (!stored) return undefined;
    return { bits: (await this.bitsOf(stored)).bits, version: stored.metadata.resourceVersion ?? '' };
  }

  /** Replaces the bitmap if the stored object is still at `version` (StorageError Conflict otherwise). */
  async replace(version: string, bits: Bitmap): Promise<void> {
    await this.storage.guaranteedUpdate(
      this.key,
      (cur) => {
        const next = this.empty();
        next.metadata = { ...cur.metadata };
        delete next.metadata.resourceVersion;
        next.data = Buffer.from(bits.bytes).toString('base64');
        return next;
      },
      { preconditions: { resourceVersion: version } },
    );
  }
}
