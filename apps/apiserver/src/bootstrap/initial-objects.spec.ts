import { StatusError, type KubeObject } from '@app/apimachinery';
import { objectKey, type KindDeclaration } from '@app/registry';
import { StorageError } from '@app/storage';
import { CORE_KINDS } from '../groups/core/core.module.js';
import { SCHEDULING_KINDS } from '../groups/scheduling/scheduling.module.js';
import { createInitialObjects } from './initial-objects.js';

describe('createInitialObjects', () => {
  it('creates every missing initial object of every kind, skips existing ones and 409s, retries an unavailable or busy store', async () => {
    const stored = new Map<string, KubeObject>([['/registry/core/namespaces/default', { metadata: { name: 'default' } }]]);
    const created: string[] = [];
    let unavailableOnce = true;
    const busy = new Set(['kube-system', 'system-node-critical']);
    await createInitialObjects({
      kinds: [...CORE_KINDS, ...SCHEDULING_KINDS],
      storage: { get: async (key: string) => stored.get(key) },
      retryDelayMs: 1,
      log: () => undefined,
      create: async (decl: KindDeclaration, _ns: string, obj: KubeObject) => {
        const name = obj.metadata.name!;
        if (name === 'kube-public' && unavailableOnce) {
          unavailableOnce = false;
          throw new StorageError('Unavailable', '', 'no quorum');
        }
        // Refused for too many pending writes, once through the API (429), once from the store.
        if (busy.delete(name)) {
          if (name === 'kube-system') throw new StatusError(429, 'TooManyRequests', 'too many requests');
          throw new StorageError('TooManyRequests', '', 'too many requests');
        }
        if (name === 'kube-node-lease') throw new StatusError(409, 'AlreadyExists', 'made by a peer');
        created.push(`${obj.apiVersion} ${obj.kind} ${name}`);
        stored.set(objectKey(decl, '', name), obj);
      },
    });
    // Kind by kind (namespaces first); within a kind, in no particular order.
    expect(created.slice(0, 2).sort()).toEqual(['v1 Namespace kube-public', 'v1 Namespace kube-system']);
    expect(created.slice(2).sort()).toEqual([
      'scheduling.k8s.io/v1 PriorityClass system-cluster-critical',
      'scheduling.k8s.io/v1 PriorityClass system-node-critical',
    ]);
  });

  it('writes the objects of one kind several at a time, and the next kind only after them', async () => {
    const many: KubeObject[] = Array.from({ length: 40 }, (_, i) => ({ metadata: { name: `role-${i}` } }));
    const kinds = [
      { ...SCHEDULING_KINDS[0]!, initialObjects: many },
      { ...CORE_KINDS.find((k) => k.kind === 'Namespace')!, initialObjects: [{ metadata: { name: 'after' } }] },
    ];
    let inFlight = 0;
    let most = 0;
    const order: string[] = [];
    await createInitialObjects({
      kinds,
      storage: { get: async () => undefined },
      create: async (_decl: KindDeclaration, _ns: string, obj: KubeObject) => {
        most = Math.max(most, ++inFlight);
        await new Promise((r) => setTimeout(r, 1));
        inFlight--;
        order.push(obj.metadata.name!);
      },
    });
    expect(most).toBeGreaterThan(1);
    expect(order).toHaveLength(41);
    expect(order[40]).toBe('after');
  });

  it('rethrows any other error', async () => {
    await expect(
      createInitialObjects({
        kinds: SCHEDULING_KINDS,
        storage: { get: async () => undefined },
        create: async () => {
          throw new StatusError(422, 'Invalid', 'bad');
        },
      }),
    ).rejects.toThrow('bad');
  });

  it('updates an existing initial object to what the kind reconciles it to, and reads it again after a conflict', async () => {
    const kind = {
      ...SCHEDULING_KINDS[0]!,
      initialObjects: [
        { metadata: { name: 'old' }, value: 2 },
        { metadata: { name: 'current' }, value: 2 },
      ],
      reconcileInitial: (existing: KubeObject, wanted: KubeObject) =>
        existing.value === wanted.value ? undefined : { update: { ...existing, value: wanted.value } },
    };
    const stored = new Map<string, KubeObject>([
      ['/registry/scheduling.k8s.io/priorityclasses/old', { metadata: { name: 'old', resourceVersion: '1' }, value: 1 }],
      ['/registry/scheduling.k8s.io/priorityclasses/current', { metadata: { name: 'current' }, value: 2 }],
    ]);
    const updates: string[] = [];
    let conflictOnce = true;
    await createInitialObjects({
      kinds: [kind],
      storage: { get: async (key: string) => stored.get(key) },
      retryDelayMs: 1,
      log: () => undefined,
      create: async () => {
        throw new Error('nothing is missing');
      },
      update: async (_decl: KindDeclaration, _ns: string, obj: KubeObject) => {
        updates.push(`${obj.metadata.name} ${String(obj.value)} rv ${String(obj.metadata.resourceVersion)}`);
        if (conflictOnce) {
          conflictOnce = false;
          stored.set('/registry/scheduling.k8s.io/priorityclasses/old', { metadata: { name: 'old', resourceVersion: '2' }, value: 1 });
          throw new StatusError(409, 'Conflict', 'changed meanwhile');
        }
      },
    });
    expect(updates).toEqual(['old 2 rv 1', 'old 2 rv 2']);
  });

  it('recreates an initial object its kind cannot update: deletes the version read, then creates the new one', async () => {
    const kind = {
      ...SCHEDULING_KINDS[0]!,
      initialObjects: [{ metadata: { name: 'fixed' }, value: 2 }],
      reconcileInitial: (existing: KubeObject, wanted: KubeObject) => (existing.value === wanted.value ? undefined : { recreate: wanted }),
    };
    const key = '/registry/scheduling.k8s.io/priorityclasses/fixed';
    const stored = new Map<string, KubeObject>([[key, { metadata: { name: 'fixed', uid: 'u1', resourceVersion: '1' }, value: 1 }]]);
    const calls: string[] = [];
    let conflictOnce = true;
    await createInitialObjects({
      kinds: [kind],
      storage: { get: async (k: string) => stored.get(k) },
      retryDelayMs: 1,
      log: () => undefined,
      update: async () => {
        throw new Error('no update expected');
      },
      remove: async (_decl: KindDeclaration, _ns: string, existing: KubeObject) => {
        calls.push(`delete uid ${String(existing.metadata.uid)} rv ${String(existing.metadata.resourceVersion)}`);
        if (conflictOnce) {
          // Changed meanwhile: the precondition fails and the object is read again.
          conflictOnce = false;
          stored.set(key, { metadata: { name: 'fixed', uid: 'u1', resourceVersion: '2' }, value: 1 });
          throw new StatusError(409, 'Conflict', 'the object has been modified');
        }
        stored.delete(key);
      },
      create: async (_decl: KindDeclaration, _ns: string, obj: KubeObject) => {
        calls.push(`create ${String(obj.kind)} ${String(obj.metadata.name)} ${String(obj.value)}`);
        stored.set(key, { ...obj, metadata: { ...obj.metadata, uid: 'u2', resourceVersion: '3' } });
      },
    });
    expect(calls).toEqual(['delete uid u1 rv 1', 'delete uid u1 rv 2', 'create PriorityClass fixed 2']);
  });
});
