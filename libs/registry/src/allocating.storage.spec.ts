import type { KubeObject } from '@app/apimachinery';
import { NO_CHANGE, StorageError, type TryUpdate } from '@app/storage';
import { allocatingStorage } from './allocating.storage.js';
import type { AllocationTxn, WriteAllocator } from './kind.types.js';
import { FakeStorage } from './storage.fake.js';

/** An allocator that logs what it does and fills `spec.value` with a counter. */
function recorder(log: string[]): WriteAllocator {
  let n = 0;
  const txn = (what: string): AllocationTxn => ({
    commit: async () => void log.push(`commit ${what}`),
    revert: async () => void log.push(`revert ${what}`),
  });
  return {
    allocateCreate: async (obj, dryRun) => {
      const v = `v${++n}`;
      obj.spec = { ...(obj.spec as object), value: v };
      log.push(`create ${v}${dryRun ? ' dry' : ''}`);
      return txn(v);
    },
    allocateUpdate: async (obj, _old, dryRun) => {
      const v = `v${++n}`;
      obj.spec = { ...(obj.spec as object), value: v };
      log.push(`update ${v}${dryRun ? ' dry' : ''}`);
      return txn(v);
    },
    release: async (obj) => void log.push(`release ${String((obj.spec as { value?: string }).value)}`),
  };
}

const obj = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: {} });

describe('allocatingStorage', () => {
  it('fills in a create, commits when stored and reverts when the create fails', async () => {
    const log: string[] = [];
    const s = allocatingStorage(new FakeStorage([]), recorder(log));
    const stored = await s.create('/k/a', obj('a'));
    expect(stored.spec).toEqual({ value: 'v1' });
    await expect(s.create('/k/a', obj('a'))).rejects.toThrow(StorageError);
    await s.create('/k/b', obj('b'), { dryRun: true });
    expect(log).toEqual(['create v1', 'commit v1', 'create v2', 'revert v2', 'create v3 dry', 'commit v3']);
  });

  it('reverts the attempts an update retried, commits the last, and reverts a failed or unchanged update', async () => {
    const log: string[] = [];
    const inner = new FakeStorage([]);
    await inner.create('/k/a', obj('a'));
    // Each update's tryUpdate runs twice, as on a conflict with a concurrent writer.
    const retrying = Object.assign(Object.create(inner) as FakeStorage, {
      guaranteedUpdate: async (key: string, tryUpdate: TryUpdate, opts?: { dryRun?: boolean }) => {
        await tryUpdate(structuredClone((await inner.get(key, { mode: 'MostRecent' }))!));
        return inner.guaranteedUpdate(key, tryUpdate, opts);
      },
    });
    const s = allocatingStorage(retrying, recorder(log));
    const res = await s.guaranteedUpdate('/k/a', (cur) => ({ ...cur, spec: { x: 1 } }));
    expect(res.object.spec).toEqual({ x: 1, value: 'v2' });
    expect(log).toEqual(['update v1', 'revert v1', 'update v2', 'commit v2']);
    log.length = 0;
    await expect(
      s.guaranteedUpdate('/k/a', (cur) => {
        if (log.length > 1) throw new Error('refused');
        return { ...cur, spec: { x: 2 } };
      }),
    ).rejects.toThrow('refused');
    expect(log).toEqual(['update v3', 'revert v3']);
    log.length = 0;
    await s.guaranteedUpdate('/k/a', () => NO_CHANGE);
    expect(log).toEqual([]);
  });

  it('gives back what a deleted object held, not on a dry run', async () => {
    const log: string[] = [];
    const s = allocatingStorage(new FakeStorage([]), recorder(log));
    await s.create('/k/a', obj('a'));
    await s.delete('/k/a', { dryRun: true });
    await s.delete('/k/a');
    expect(log).toEqual(['create v1', 'commit v1', 'release v1']);
  });
});
