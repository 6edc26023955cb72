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
    expect(created).toEqual([
      'v1 Namespace kube-system',
      'v1 Namespace kube-public',
      'scheduling.k8s.io/v1 PriorityClass system-node-critical',
      'scheduling.k8s.io/v1 PriorityClass system-cluster-critical',
    ]);
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
});
