import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeObject } from '@app/apimachinery';
import { openLocalStorage, type MvccStorage } from '@app/storage';
import { objectCacheKey, WatchedObjects } from './watched-objects.cache.js';

const PREFIX = '/registry/core/secrets/kube-system/';
const secret = (name: string, type: string, v = '1'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: 'kube-system', uid: `uid-${name}` },
  type,
  data: { v },
});

describe('WatchedObjects on a real MVCC storage', () => {
  let dir: string;
  let storage: MvccStorage;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'watched-objects-'));
    storage = (await openLocalStorage({ dataDir: dir, compactionIntervalMs: 0 })).storage;
  });
  afterEach(async () => {
    await storage.close();
    await rm(dir, { recursive: true, force: true });
  });

  const until = async (cond: () => boolean) => {
    const end = Date.now() + 3000;
    while (!cond()) {
      if (Date.now() > end) throw new Error('condition not met');
      await new Promise((r) => setTimeout(r, 5));
    }
  };

  it('lists, then follows creates, updates and deletes of the accepted objects under the prefix', async () => {
    await storage.create(`${PREFIX}a`, secret('a', 'bootstrap.kubernetes.io/token'));
    await storage.create(`${PREFIX}b`, secret('b', 'Opaque'));
    await storage.create('/registry/core/secrets/default/c', {
      ...secret('c', 'bootstrap.kubernetes.io/token'),
      metadata: { name: 'c', namespace: 'default' },
    });
    const cache = new WatchedObjects({ storage, prefix: PREFIX, filter: (o) => o.type === 'bootstrap.kubernetes.io/token', name: 'test' });
    const changes: string[] = [];
    cache.onChange((k) => changes.push(k));
    cache.start();
    await cache.whenSynced();
    expect(cache.values().map((o) => o.metadata.name)).toEqual(['a']);
    expect(changes).toEqual(['kube-system/a']);

    await storage.create(`${PREFIX}d`, secret('d', 'bootstrap.kubernetes.io/token'));
    await until(() => cache.get(objectCacheKey('kube-system', 'd')) !== undefined);
    await storage.guaranteedUpdate(`${PREFIX}a`, (cur) => ({ ...cur, data: { v: '2' } }));
    await until(() => (cache.get('kube-system/a')?.data as { v: string }).v === '2');
    await storage.delete(`${PREFIX}d`);
    await until(() => cache.get('kube-system/d') === undefined);
    // An object that changes to a type the filter refuses leaves the cache.
    await storage.guaranteedUpdate(`${PREFIX}a`, (cur) => ({ ...cur, type: 'Opaque' }));
    await until(() => cache.get('kube-system/a') === undefined);
    // Changes of refused objects are not reported.
    await storage.guaranteedUpdate(`${PREFIX}b`, (cur) => ({ ...cur, data: { v: '3' } }));
    await storage.create(`${PREFIX}e`, secret('e', 'bootstrap.kubernetes.io/token'));
    await until(() => cache.get('kube-system/e') !== undefined);
    expect(changes).toEqual(['kube-system/a', 'kube-system/d', 'kube-system/a', 'kube-system/d', 'kube-system/a', 'kube-system/e']);
    cache.stop();
  });
});
