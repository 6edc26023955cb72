import { createHmac } from 'node:crypto';
import { Errors, type KubeObject } from '@app/apimachinery';
import { BootstrapSigner, signedClusterInfoData } from './bootstrap-signer.controller.js';
import { TokenCleaner } from './token-cleaner.controller.js';

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
function tokenSecret(id: string, data: Record<string, string>, uid = `uid-${id}`): KubeObject {
  const all = { 'token-id': id, 'token-secret': `${id}0123456789`, ...data };
  return {
    metadata: { name: `bootstrap-token-${id}`, namespace: 'kube-system', uid },
    type: 'bootstrap.kubernetes.io/token',
    data: Object.fromEntries(Object.entries(all).map(([k, v]) => [k, b64(v)])),
  };
}

/** A tiny watched cache: set/delete notify listeners as the storage watch would. */
class FakeCache {
  readonly items = new Map<string, KubeObject>();
  readonly listeners = new Set<(key: string) => void>();
  set(o: KubeObject) {
    const k = `${o.metadata.namespace}/${o.metadata.name}`;
    this.items.set(k, o);
    for (const l of this.listeners) l(k);
  }
  delete(k: string) {
    this.items.delete(k);
    for (const l of this.listeners) l(k);
  }
  onChange(l: (key: string) => void) {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
}

const until = async (cond: () => boolean, ms = 3000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met');
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('TokenCleaner', () => {
  function cleaner(cache: FakeCache, deleted: string[], fail?: () => Error | undefined) {
    return new TokenCleaner({
      secrets: () => cache.items.entries(),
      secret: (k) => cache.items.get(k),
      onChange: (l) => cache.onChange(l),
      delete: async (s) => {
        const err = fail?.();
        if (err) throw err;
        deleted.push(`${s.metadata.name}@${s.metadata.uid}`);
        cache.delete(`${s.metadata.namespace}/${s.metadata.name}`);
      },
      retryMs: 10,
      log: () => undefined,
    });
  }

  it('deletes expired and unparsable-expiration Secrets at start, leaves the rest', async () => {
    const cache = new FakeCache();
    cache.set(tokenSecret('aaaaaa', { expiration: '2000-01-01T00:00:00Z' }));
    cache.set(tokenSecret('bbbbbb', { expiration: 'soon' }));
    cache.set(tokenSecret('cccccc', {}));
    cache.set(tokenSecret('dddddd', { expiration: '2999-01-01T00:00:00Z' }));
    const deleted: string[] = [];
    const c = cleaner(cache, deleted);
    c.start();
    await until(() => deleted.length === 2);
    expect(deleted.sort()).toEqual(['bootstrap-token-aaaaaa@uid-aaaaaa', 'bootstrap-token-bbbbbb@uid-bbbbbb']);
    expect(c.pending).toBe(1); // dddddd, far in the future: one timer, no polling
    c.stop();
    expect(c.pending).toBe(0);
  });

  it('deletes a Secret when its expiration time comes, and follows a changed expiration', async () => {
    const cache = new FakeCache();
    const deleted: string[] = [];
    const c = cleaner(cache, deleted);
    c.start();
    cache.set(tokenSecret('eeeeee', { expiration: new Date(Date.now() + 3_600_000).toISOString() }));
    expect(c.pending).toBe(1);
    cache.set(tokenSecret('eeeeee', { expiration: new Date(Date.now() + 150).toISOString() }));
    expect(deleted).toEqual([]);
    await until(() => deleted.length === 1);
    expect(deleted).toEqual(['bootstrap-token-eeeeee@uid-eeeeee']);
    expect(c.pending).toBe(0);
    c.stop();
  });

  it('retries a failed delete, and takes 404/409 as done', async () => {
    const cache = new FakeCache();
    const deleted: string[] = [];
    let failures = 2;
    const c = cleaner(cache, deleted, () => (failures-- > 0 ? new Error('unavailable') : undefined));
    c.start();
    cache.set(tokenSecret('ffffff', { expiration: '2000-01-01T00:00:00Z' }));
    await until(() => deleted.length === 1);
    c.stop();

    const gone = new FakeCache();
    const none: string[] = [];
    const c2 = cleaner(gone, none, () => Errors.notFound({ group: '', resource: 'secrets' }, 'x'));
    gone.set(tokenSecret('gggggg', { expiration: '2000-01-01T00:00:00Z' }));
    c2.start();
    await new Promise((r) => setTimeout(r, 50));
    expect(c2.pending).toBe(0);
    c2.stop();
  });
});

describe('bootstrap signer', () => {
  const KUBECONFIG = 'apiVersion: v1\nkind: Config\nclusters: []\n';
  const verify = (content: string, jws: string, token: string): boolean => {
    const [h, p, s] = jws.split('.');
    expect(p).toBe('');
    return (
      createHmac('sha256', token)
        .update(`${h}.${Buffer.from(content).toString('base64url')}`)
        .digest('base64url') === s
    );
  };

  it('computes the signatures of the signing tokens and reports no change when they are current', async () => {
    const data = { kubeconfig: KUBECONFIG, other: 'kept', 'jws-kubeconfig-zzzzzz': 'stale' };
    const next = await signedClusterInfoData(data, [{ id: 'abcdef', secret: '0123456789abcdef' }]);
    expect(Object.keys(next!).sort()).toEqual(['jws-kubeconfig-abcdef', 'kubeconfig', 'other']);
    expect(verify(KUBECONFIG, next!['jws-kubeconfig-abcdef']!, 'abcdef.0123456789abcdef')).toBe(true);
    expect(await signedClusterInfoData(next!, [{ id: 'abcdef', secret: '0123456789abcdef' }])).toBeUndefined();
    expect(await signedClusterInfoData({ other: 'x' }, [{ id: 'abcdef', secret: '0123456789abcdef' }])).toBeUndefined();
    expect(await signedClusterInfoData({ kubeconfig: 'changed', ...next }, [{ id: 'abcdef', secret: '0123456789abcdef' }])).toBeUndefined();
    const resigned = await signedClusterInfoData({ ...next, kubeconfig: 'changed' }, [{ id: 'abcdef', secret: '0123456789abcdef' }]);
    expect(verify('changed', resigned!['jws-kubeconfig-abcdef']!, 'abcdef.0123456789abcdef')).toBe(true);
  });

  it('keeps cluster-info signed as tokens come, stop signing, expire and go', async () => {
    const secrets = new FakeCache();
    let cm: KubeObject = { metadata: { name: 'cluster-info', namespace: 'kube-public', resourceVersion: '1' }, data: { kubeconfig: KUBECONFIG } };
    const listeners = new Set<() => void>();
    const updates: KubeObject[] = [];
    const signer = new BootstrapSigner({
      secrets: () => [...secrets.items.values()],
      clusterInfo: () => cm,
      onChange: (l) => {
        listeners.add(l);
        const off = secrets.onChange(() => l());
        return () => {
          listeners.delete(l);
          off();
        };
      },
      update: async (next) => {
        updates.push(next);
        cm = { ...next, metadata: { ...next.metadata, resourceVersion: String(Number(next.metadata.resourceVersion) + 1) } };
        for (const l of listeners) l();
      },
      log: () => undefined,
    });
    const sigKeys = () => Object.keys(cm.data as object).filter((k) => k.startsWith('jws-'));
    signer.start();
    await signer.idle();
    expect(updates).toHaveLength(0);

    secrets.set(tokenSecret('aaaaaa', { 'usage-bootstrap-signing': 'true' }));
    secrets.set(tokenSecret('bbbbbb', { 'usage-bootstrap-signing': 'false' }));
    secrets.set(tokenSecret('cccccc', { 'usage-bootstrap-signing': 'true', expiration: new Date(Date.now() + 1500).toISOString() }));
    await until(() => sigKeys().length === 2);
    await signer.idle();
    expect(sigKeys().sort()).toEqual(['jws-kubeconfig-aaaaaa', 'jws-kubeconfig-cccccc']);
    const data = cm.data as Record<string, string>;
    expect(verify(KUBECONFIG, data['jws-kubeconfig-aaaaaa']!, 'aaaaaa.aaaaaa0123456789')).toBe(true);

    // cccccc expires: its signature goes without any Secret event.
    await until(() => sigKeys().length === 1, 5000);
    expect(sigKeys()).toEqual(['jws-kubeconfig-aaaaaa']);

    // A new kubeconfig is signed again.
    cm = { ...cm, data: { ...(cm.data as object), kubeconfig: 'new' } };
    for (const l of listeners) l();
    await until(() => verify('new', (cm.data as Record<string, string>)['jws-kubeconfig-aaaaaa']!, 'aaaaaa.aaaaaa0123456789'));

    secrets.delete('kube-system/bootstrap-token-aaaaaa');
    await until(() => sigKeys().length === 0);
    const writes = updates.length;
    await signer.idle();
    signer.stop();
    expect(updates.length).toBe(writes);
  });
});
