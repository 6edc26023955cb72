/**
 * Helpers shared by the MvccStore specs: command builders, a full observation of a store, a
 * sample history, temporary directories, and a probe of file writes. Test code only.
 */
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MvccStore } from './mvcc.store.js';
import type { TxnCommand } from './mvcc.types.js';

export const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
export const dec = (b: Uint8Array | undefined): string | undefined => (b === undefined ? undefined : new TextDecoder().decode(b));
export const put = (key: string, value: string): TxnCommand => ({ compares: [], success: [{ type: 'put', key, value: enc(value) }], failure: [] });
export const del = (key: string): TxnCommand => ({ compares: [], success: [{ type: 'delete', key }], failure: [] });
export const chunked = (data: Uint8Array, size: number) =>
  function* (): Generator<Uint8Array> {
    for (let i = 0; i < data.length; i += size) yield data.subarray(i, i + size);
  };
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Everything a reader can learn from a store, values decoded. */
export const observe = async (s: MvccStore) => {
  const plain = (kv: { value: Uint8Array } | undefined) => kv && { ...kv, value: dec(kv.value) };
  return {
    revision: s.currentRevision(),
    applied: s.appliedIndex(),
    compacted: s.compactedRevision(),
    live: s.liveKeyCount(),
    kvs: (await s.range('/')).kvs.map(plain),
    atCompacted: (await s.range('/', { atRevision: s.compactedRevision() })).kvs.map(plain),
    events: (await s.eventsAfter(s.compactedRevision())).events.map((e) => ({ ...e, value: plain(e.value), prevValue: plain(e.prevValue) })),
  };
};

/** Temporary directories of a test (removed after it; stores in them must be closed first). */
export class TempDirs {
  private readonly dirs: string[] = [];

  async make(): Promise<string> {
    const d = await mkdtemp(join(tmpdir(), 'mvcc-'));
    this.dirs.push(d);
    return d;
  }

  async removeAll(): Promise<void> {
    await Promise.all(this.dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
  }
}

/** Live keys, updates, deletes and a compaction (to 3): revision 7, appliedIndex 7. */
export async function writeSampleHistory(apply: (cmd: TxnCommand) => Promise<unknown>, store: MvccStore): Promise<void> {
  await apply(put('/s/a', 'a1')); // 1
  await apply(put('/s/b', 'b1')); // 2
  await apply(put('/s/a', 'a2')); // 3
  await apply(del('/s/b')); // 4
  await apply(put('/s/c', 'ü'.repeat(50))); // 5
  await store.compact(3);
  await apply(put('/s/a', 'a3')); // 6
  await apply(put('/t/x', 'x'.repeat(300))); // 7
}

/** Counts (and optionally fails, at write number `failAt`) the writes of file handles, for the duration of `fn`. */
export async function watchingFileWrites<T>(scratchDir: string, fn: (writes: number[]) => Promise<T>, failAt?: number): Promise<T> {
  const probe = await open(join(scratchDir, 'probe'), 'w');
  const proto = Object.getPrototypeOf(probe) as { write: (this: unknown, data: Uint8Array, offset?: number) => Promise<unknown> };
  await probe.close();
  const original = proto.write;
  const writes: number[] = [];
  proto.write = function (data, offset = 0) {
    writes.push(data.length - offset);
    if (writes.length === failAt) return Promise.reject(new Error('disk full'));
    return original.call(this, data, offset);
  };
  try {
    return await fn(writes);
  } finally {
    proto.write = original;
  }
}
