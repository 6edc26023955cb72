/**
 * Garbage collection through ownerReferences, with real kubectl:
 * `kubectl delete --cascade=background|foreground|orphan` on ConfigMaps owning ConfigMaps and
 * Secrets; uid checks; blockOwnerDeletion; dangling references; cluster-scoped owners of
 * namespaced dependents; namespaced owners resolving only in the dependent's namespace.
 * "Still there" checks wait for the collector to report (kapi_garbage_collector_processed_revision
 * on /metrics) that it has processed a write made after the deletion, never for a fixed time.
 */
import { kubectl, request, startServer, type ServerHandle, waitFor } from './support/server.js';

let server: ServerHandle;
const NS = 'gc';

beforeAll(async () => {
  server = await startServer();
  await kubectl(server, ['create', 'ns', NS]);
  await kubectl(server, ['create', 'ns', 'gc-other']);
});

afterAll(async () => {
  await server?.cleanup();
});

const k = (args: string[], opts: { input?: string; expectFail?: boolean; timeoutMs?: number } = {}) => kubectl(server, args, opts);

interface Meta {
  name: string;
  uid: string;
  resourceVersion: string;
  finalizers?: string[];
  deletionTimestamp?: string;
  ownerReferences?: Array<{ uid: string; name: string; kind: string; apiVersion: string; blockOwnerDeletion?: boolean }>;
}
interface Obj {
  metadata: Meta;
}

interface Ref {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  blockOwnerDeletion?: boolean;
  controller?: boolean;
}

const path = (kind: 'configmaps' | 'secrets', name: string, ns = NS) => `/api/v1/namespaces/${ns}/${kind}/${name}`;

async function create(kind: 'configmaps' | 'secrets', name: string, meta: Record<string, unknown> = {}, ns = NS): Promise<Obj> {
  const body =
    kind === 'configmaps'
      ? { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...meta }, data: { k: 'v' } }
      : { apiVersion: 'v1', kind: 'Secret', metadata: { name, ...meta }, stringData: { k: 'v' } };
  const r = await request(server, 'POST', `/api/v1/namespaces/${ns}/${kind}`, { body });
  if (r.status !== 201) throw new Error(`create ${kind}/${name}: ${r.status} ${r.body}`);
  return r.json<Obj>();
}

const refTo = (o: Obj, kind = 'ConfigMap', extra: Partial<Ref> = {}): Ref => ({ apiVersion: 'v1', kind, name: o.metadata.name, uid: o.metadata.uid, ...extra });

async function read(p: string): Promise<Obj | undefined> {
  const r = await request(server, 'GET', p);
  if (r.status === 404) return undefined;
  if (r.status !== 200) throw new Error(`GET ${p}: ${r.status} ${r.body}`);
  return r.json<Obj>();
}

/** Asserts that the object at `p` disappears (404) within waitFor's bound; throws naming it otherwise. */
const expectGone = (p: string) => waitFor(`${p} to be gone`, async () => (await read(p)) === undefined);

/** A value from /metrics (unlabelled series), or undefined when absent. */
async function metric(name: string): Promise<number | undefined> {
  const r = await request(server, 'GET', '/metrics');
  if (r.status !== 200) throw new Error(`GET /metrics: ${r.status}`);
  const line = r.body.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

let barriers = 0;
/**
 * Resolves once the garbage collector has finished with every write made before the call: it
 * writes a ConfigMap without owners and waits until the collector reports that revision as
 * processed (every event up to it applied and the work it caused done, see
 * GarbageCollector.processedRevision). Returns the number of work items handled so far.
 */
async function gcCaughtUp(): Promise<number> {
  const barrier = await create('configmaps', `gc-barrier-${++barriers}`);
  const rv = Number(barrier.metadata.resourceVersion);
  await waitFor(`garbage collector to process revision ${rv}`, async () => ((await metric('kapi_garbage_collector_processed_revision')) ?? 0) >= rv);
  return (await metric('kapi_garbage_collector_items_processed_total'))!;
}

describe('kubectl delete --cascade', () => {
  it('background: the owner goes at once, then its dependents (ConfigMap and Secret)', async () => {
    const owner = await create('configmaps', 'bg-owner');
    await create('configmaps', 'bg-dep', { ownerReferences: [refTo(owner)] });
    await create('secrets', 'bg-secret', { ownerReferences: [refTo(owner, 'ConfigMap', { controller: true, blockOwnerDeletion: true })] });
    const r = await k(['delete', 'cm', 'bg-owner', '-n', NS, '--cascade=background']);
    expect(r.stdout).toContain('configmap "bg-owner" deleted');
    expect(await read(path('configmaps', 'bg-owner'))).toBeUndefined();
    await expectGone(path('configmaps', 'bg-dep'));
    await expectGone(path('secrets', 'bg-secret'));
  });

  it('default propagation for ConfigMaps is background (orphanDependents defaults false)', async () => {
    const owner = await create('configmaps', 'def-owner');
    await create('configmaps', 'def-dep', { ownerReferences: [refTo(owner)] });
    const r = await request(server, 'DELETE', path('configmaps', 'def-owner'));
    expect(r.status).toBe(200);
    await expectGone(path('configmaps', 'def-dep'));
  });

  it('foreground: the owner stays Terminating with foregroundDeletion until its blocking dependents are gone', async () => {
    const owner = await create('configmaps', 'fg-owner');
    // A blocking dependent that a test-held finalizer keeps around for a while.
    await create('configmaps', 'fg-blocker', { ownerReferences: [refTo(owner, 'ConfigMap', { blockOwnerDeletion: true })], finalizers: ['example.com/hold'] });
    await create('secrets', 'fg-secret', { ownerReferences: [refTo(owner, 'ConfigMap', { blockOwnerDeletion: true })] });
    await create('configmaps', 'fg-loose', { ownerReferences: [refTo(owner)] });
    const r = await k(['delete', 'cm', 'fg-owner', '-n', NS, '--cascade=foreground', '--wait=false']);
    expect(r.stdout).toContain('configmap "fg-owner" deleted');
    const o = await read(path('configmaps', 'fg-owner'));
    expect(o?.metadata.deletionTimestamp).toBeDefined();
    expect(o?.metadata.finalizers).toEqual(['foregroundDeletion']);
    // Dependents are deleted; the held one is Terminating.
    await expectGone(path('secrets', 'fg-secret'));
    await expectGone(path('configmaps', 'fg-loose'));
    await waitFor('blocker terminating', async () => (await read(path('configmaps', 'fg-blocker')))?.metadata.deletionTimestamp);
    await gcCaughtUp();
    expect((await read(path('configmaps', 'fg-owner')))?.metadata.finalizers).toEqual(['foregroundDeletion']);
    // Release the blocker: it goes, then the owner.
    await k(['patch', 'cm', 'fg-blocker', '-n', NS, '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
    await expectGone(path('configmaps', 'fg-blocker'));
    await expectGone(path('configmaps', 'fg-owner'));
  });

  it('foreground: kubectl waits for the owner to be removed', async () => {
    const owner = await create('configmaps', 'fgw-owner');
    await create('configmaps', 'fgw-dep', { ownerReferences: [refTo(owner, 'ConfigMap', { blockOwnerDeletion: true })] });
    const r = await k(['delete', 'cm', 'fgw-owner', '-n', NS, '--cascade=foreground', '--timeout=30s']);
    expect(r.stdout).toContain('configmap "fgw-owner" deleted');
    expect(await read(path('configmaps', 'fgw-owner'))).toBeUndefined();
    expect(await read(path('configmaps', 'fgw-dep'))).toBeUndefined();
  });

  it('orphan: the owner goes, dependents stay with their references to it removed', async () => {
    const owner = await create('configmaps', 'or-owner');
    const other = await create('configmaps', 'or-other-owner');
    await create('configmaps', 'or-dep', { ownerReferences: [refTo(owner), refTo(other)] });
    await create('secrets', 'or-secret', { ownerReferences: [refTo(owner, 'ConfigMap', { blockOwnerDeletion: true })] });
    const r = await k(['delete', 'cm', 'or-owner', '-n', NS, '--cascade=orphan', '--timeout=30s']);
    expect(r.stdout).toContain('configmap "or-owner" deleted');
    expect(await read(path('configmaps', 'or-owner'))).toBeUndefined();
    const dep = await read(path('configmaps', 'or-dep'));
    expect(dep?.metadata.ownerReferences?.map((x) => x.name)).toEqual(['or-other-owner']);
    const sec = await read(path('secrets', 'or-secret'));
    expect(sec).toBeDefined();
    expect(sec?.metadata.ownerReferences).toBeUndefined();
    // Still there once the collector has processed the owner's removal: orphaned, not collected.
    await gcCaughtUp();
    expect(await read(path('secrets', 'or-secret'))).toBeDefined();
  });
});

describe('owner identity and dangling references', () => {
  it('a dependent whose owner never existed is deleted', async () => {
    await create('configmaps', 'dangling', {
      ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'ghost', uid: '00000000-0000-0000-0000-000000000001' }],
    });
    await expectGone(path('configmaps', 'dangling'));
  });

  it('an owner with the same name but another uid counts as absent', async () => {
    await create('configmaps', 'same-name');
    await create('configmaps', 'wrong-uid-dep', {
      ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'same-name', uid: '00000000-0000-0000-0000-000000000002' }],
    });
    await expectGone(path('configmaps', 'wrong-uid-dep'));
    expect(await read(path('configmaps', 'same-name'))).toBeDefined();
  });

  it('a dependent with one live owner keeps living; its dangling reference is removed', async () => {
    const owner = await create('configmaps', 'live-owner');
    await create('configmaps', 'half-dep', {
      ownerReferences: [refTo(owner), { apiVersion: 'v1', kind: 'ConfigMap', name: 'ghost2', uid: '00000000-0000-0000-0000-000000000003' }],
    });
    const dep = await waitFor('dangling ref removed', async () => {
      const d = await read(path('configmaps', 'half-dep'));
      return d && d.metadata.ownerReferences?.length === 1 ? d : undefined;
    });
    expect(dep.metadata.ownerReferences?.[0]?.uid).toBe(owner.metadata.uid);
  });

  it('a namespaced owner reference resolves only within the dependent namespace', async () => {
    const elsewhere = await create('configmaps', 'ns-owner', {}, 'gc-other');
    await create('configmaps', 'cross-ns-dep', { ownerReferences: [refTo(elsewhere)] });
    await expectGone(path('configmaps', 'cross-ns-dep'));
    expect(await read(path('configmaps', 'ns-owner', 'gc-other'))).toBeDefined();
  });

  it('a cluster-scoped owner (a Namespace) owns namespaced dependents; they go when it goes', async () => {
    await k(['create', 'ns', 'gc-cluster-owner']);
    const ns = (await request(server, 'GET', '/api/v1/namespaces/gc-cluster-owner')).json<Obj>();
    await create('configmaps', 'owned-by-ns', { ownerReferences: [refTo(ns, 'Namespace')] });
    await create('secrets', 'owned-by-ns', { ownerReferences: [refTo(ns, 'Namespace')] });
    // The collector has judged both dependents (their owner exists) and kept them.
    await gcCaughtUp();
    expect(await read(path('configmaps', 'owned-by-ns'))).toBeDefined();
    expect(await read(path('secrets', 'owned-by-ns'))).toBeDefined();
    await k(['delete', 'ns', 'gc-cluster-owner', '--timeout=30s']);
    await expectGone(path('configmaps', 'owned-by-ns'));
    await expectGone(path('secrets', 'owned-by-ns'));
  });

  it('deletes a chain (owner -> dependent -> grand-dependent)', async () => {
    const a = await create('configmaps', 'chain-a');
    const b = await create('configmaps', 'chain-b', { ownerReferences: [refTo(a)] });
    await create('secrets', 'chain-c', { ownerReferences: [refTo(b)] });
    await k(['delete', 'cm', 'chain-a', '-n', NS]);
    await expectGone(path('configmaps', 'chain-b'));
    await expectGone(path('secrets', 'chain-c'));
  });
});

describe('scale and idleness', () => {
  it('collects 1000 dependents of one owner, then goes idle (no work without writes)', async () => {
    const owner = await create('configmaps', 'big-owner');
    const ref = refTo(owner, 'ConfigMap', { blockOwnerDeletion: true });
    for (let i = 0; i < 1000; i += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, j) => create('configmaps', `big-${i + j}`, { labels: { big: 'yes' }, ownerReferences: [ref] })));
    }
    // kubectl fails when the owner is not removed within its --timeout.
    await k(['delete', 'cm', 'big-owner', '-n', NS, '--cascade=foreground', '--timeout=120s'], { timeoutMs: 130_000 });
    const count = async () =>
      (await request(server, 'GET', `/api/v1/namespaces/${NS}/configmaps?labelSelector=big%3Dyes`)).json<{ items: unknown[] }>().items.length;
    expect(await count()).toBe(0);
    // Idle: once caught up, writes that give the collector nothing to judge cause no work items
    // (a busy loop, e.g. work re-queued forever, would count up between the two barriers).
    const before = await gcCaughtUp();
    const after = await gcCaughtUp();
    expect(after).toBe(before);
  }, 180_000);
});
