/**
 * The garbage collector and namespace controller in-process, on real storage and real generic
 * stores, with custom kinds only (a namespaced `Widget` and a cluster-scoped `Fleet` of group
 * example.com): proves the controllers are not tied to core kinds.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  applyDefaults,
  applyJsonPatch,
  applyMergePatch,
  findUnknownFields,
  generateName,
  parseFieldSelector,
  parseLabelSelector,
  prune,
  StatusError,
  validateObjectMetaCreate,
  validateObjectMetaUpdate,
  validateSchema,
  decodeProblem,
  type KubeObject,
} from '@app/apimachinery';
import {
  finalizeSubresource,
  GenericStore,
  KindRegistry,
  NO_ADMISSION,
  statusSubresource,
  type DeleteOptions,
  type KindDeclaration,
  type Machinery,
  type RequestContext,
} from '@app/registry';
import { openLocalStorage, type MvccStorage } from '@app/storage';
import { GarbageCollector } from './garbage-collector.controller.js';
import { NamespaceController } from './namespace.controller.js';

const machinery: Machinery = {
  validateSchema: (o, s) => validateSchema(o, s),
  decodeProblem: (o, s, k) => decodeProblem(o, s, k),
  findUnknownFields: (o, s) => findUnknownFields(o, s),
  prune: (o, s) => {
    prune(o, s);
  },
  applyDefaults: (o, s) => {
    applyDefaults(o, s);
  },
  validateObjectMetaCreate: (m, namespaced) => validateObjectMetaCreate(m, { namespaced }),
  validateObjectMetaUpdate: (m, old) => validateObjectMetaUpdate(m, old),
  generateName: (b) => generateName(b),
  parseLabelSelector: (s) => {
    const sel = parseLabelSelector(s);
    return { empty: () => sel.isEmpty(), matches: (l) => sel.matches(l) };
  },
  parseFieldSelector: (s) => {
    const sel = parseFieldSelector(s);
    return {
      empty: () => sel.isEmpty(),
      fields: () => sel.requirements().map((r) => r.field),
      matches: (g) => sel.matches(g),
      requiresExactMatch: (f) => sel.requiresExactMatch(f),
    };
  },
  mergePatch: (t, p) => applyMergePatch(t, p),
  jsonPatch: (t, p) => applyJsonPatch(t, p),
  strategicMergePatch: (t, p) => applyMergePatch(t, p),
};

const anySchema = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } as KindDeclaration['schema'];

const WIDGET: KindDeclaration = {
  group: 'example.com',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  singular: 'widget',
  namespaced: true,
  schema: anySchema,
};
const FLEET: KindDeclaration = {
  group: 'example.com',
  version: 'v1',
  kind: 'Fleet',
  plural: 'fleets',
  singular: 'fleet',
  namespaced: false,
  schema: anySchema,
};
/** A minimal Namespace: the `kubernetes` spec finalizer, Terminating on delete. */
const NAMESPACE: KindDeclaration = {
  group: '',
  version: 'v1',
  kind: 'Namespace',
  plural: 'namespaces',
  singular: 'namespace',
  namespaced: false,
  schema: anySchema,
  subresources: { status: statusSubresource(), finalize: finalizeSubresource() },
  strategy: {
    prepareForCreate(o) {
      o.spec = { finalizers: ['kubernetes'] };
      o.status = { phase: 'Active' };
    },
    pendingFinalizers: (o) => (o.spec as { finalizers?: string[] } | undefined)?.finalizers ?? [],
    prepareForDelete(o) {
      o.status = { ...(o.status as object), phase: 'Terminating' };
    },
  },
};

const ctx = (): RequestContext => ({ user: { username: 'test', groups: [] }, dryRun: false, warnings: [], now: () => new Date() });

let dir: string;
let storage: MvccStorage;
let close: () => Promise<void>;
let registry: KindRegistry;
let stores: Map<KindDeclaration, GenericStore>;
let gc: GarbageCollector | undefined;
let nsc: NamespaceController | undefined;

const storeFor = (d: KindDeclaration): GenericStore => {
  let s = stores.get(d);
  if (!s) stores.set(d, (s = new GenericStore(d, { storage, machinery, admission: NO_ADMISSION })));
  return s;
};

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gc-spec-'));
  const opened = await openLocalStorage({ dataDir: dir, sync: false, compactionIntervalMs: 0 });
  storage = opened.storage;
  close = opened.close;
  registry = new KindRegistry();
  for (const d of [NAMESPACE, WIDGET, FLEET]) registry.register(d);
  stores = new Map();
});

afterEach(async () => {
  gc?.stop();
  nsc?.stop();
  gc = undefined;
  nsc = undefined;
  await close();
  await rm(dir, { recursive: true, force: true });
});

async function startGc(): Promise<GarbageCollector> {
  gc = new GarbageCollector({ registry, storage, storeFor, log: () => undefined });
  await gc.start();
  return gc;
}

async function make(decl: KindDeclaration, name: string, meta: Record<string, unknown> = {}, ns = 'a'): Promise<KubeObject> {
  return storeFor(decl).create(
    decl.namespaced ? ns : '',
    { apiVersion: 'example.com/v1', kind: decl.kind, metadata: { name, ...meta } },
    { ctx: ctx(), fieldValidation: 'Strict' },
  );
}

async function find(decl: KindDeclaration, name: string, ns = 'a'): Promise<KubeObject | undefined> {
  try {
    return await storeFor(decl).get(decl.namespaced ? ns : '', name);
  } catch (e) {
    if (e instanceof StatusError && e.code === 404) return undefined;
    throw e;
  }
}

/** Asserts that `fn` turns true within `ms` (polled); throws `timed out: <what>` otherwise. */
async function expectEventually(what: string, fn: () => Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const ref = (o: KubeObject, extra: Record<string, unknown> = {}) => ({
  apiVersion: o.apiVersion,
  kind: o.kind,
  name: o.metadata.name,
  uid: o.metadata.uid,
  ...extra,
});
/** Deletes through the store; every object here decodes, so the answer always has one. */
const del = async (decl: KindDeclaration, name: string, opts: DeleteOptions = {}, ns = 'a') => {
  const r = await storeFor(decl).delete(decl.namespaced ? ns : '', name, opts, ctx());
  if (!r.object) throw new Error(`delete of ${name} answered without an object`);
  return { deleted: r.deleted, object: r.object };
};

describe('GenericStore.delete propagation finalizers', () => {
  it('Foreground adds foregroundDeletion, Orphan adds orphan, Background removes both (explicit option wins)', async () => {
    await make(WIDGET, 'w');
    const fg = await del(WIDGET, 'w', { propagationPolicy: 'Foreground' });
    expect(fg.deleted).toBe(false);
    expect(fg.object.metadata.finalizers).toEqual(['foregroundDeletion']);
    expect(fg.object.metadata.deletionGracePeriodSeconds).toBe(0);
    const stamp = fg.object.metadata.deletionTimestamp;
    const or = await del(WIDGET, 'w', { propagationPolicy: 'Orphan' });
    expect(or.object.metadata.finalizers).toEqual(['orphan']);
    expect(or.object.metadata.deletionTimestamp).toBe(stamp);
    const bg = await del(WIDGET, 'w', { orphanDependents: false });
    expect(bg.deleted).toBe(true);
    expect(await find(WIDGET, 'w')).toBeUndefined();
  });

  it('without options the finalizer already present decides; the default is Background', async () => {
    await make(WIDGET, 'plain');
    expect((await del(WIDGET, 'plain')).deleted).toBe(true);
    await make(WIDGET, 'pre-orphan', { finalizers: ['orphan'] });
    const r = await del(WIDGET, 'pre-orphan');
    expect(r.deleted).toBe(false);
    expect(r.object.metadata.finalizers).toEqual(['orphan']);
  });

  it('dry run reports the outcome and writes nothing', async () => {
    const w = await make(WIDGET, 'dry');
    const r = await storeFor(WIDGET).delete('a', 'dry', { propagationPolicy: 'Foreground' }, { ...ctx(), dryRun: true });
    expect(r.object?.metadata.finalizers).toEqual(['foregroundDeletion']);
    expect((await find(WIDGET, 'dry'))?.metadata.resourceVersion).toBe(w.metadata.resourceVersion);
  });
});

describe('GarbageCollector on custom kinds', () => {
  it('Background: dependents of a deleted owner are collected', async () => {
    await startGc();
    const owner = await make(WIDGET, 'owner');
    await make(WIDGET, 'd1', { ownerReferences: [ref(owner)] });
    await make(WIDGET, 'd2', { ownerReferences: [ref(owner)] });
    await del(WIDGET, 'owner');
    await expectEventually('dependents gone', async () => !(await find(WIDGET, 'd1')) && !(await find(WIDGET, 'd2')));
  });

  it('reports a revision as processed only once the work it caused is done', async () => {
    const g = await startGc();
    const owner = await make(WIDGET, 'owner');
    await make(WIDGET, 'dep', { ownerReferences: [ref(owner)] });
    const gone = await del(WIDGET, 'owner');
    const rv = Number(gone.object.metadata.resourceVersion);
    await expectEventually('owner deletion processed', async () => g.processedRevision >= rv);
    // No poll here: reaching the revision means the dependent's deletion is already done.
    expect(await find(WIDGET, 'dep')).toBeUndefined();
    // A write that gives the collector nothing to do is processed without a work item.
    await g.whenIdle();
    const items = g.itemsProcessed;
    expect(items).toBeGreaterThan(0);
    const plain = await make(WIDGET, 'plain');
    await expectEventually('plain write processed', async () => g.processedRevision >= Number(plain.metadata.resourceVersion));
    expect(g.itemsProcessed).toBe(items);
  });

  it('Foreground: the owner waits for a blocking dependent held by a finalizer', async () => {
    await startGc();
    const owner = await make(WIDGET, 'owner');
    await make(WIDGET, 'blocker', { ownerReferences: [ref(owner, { blockOwnerDeletion: true })], finalizers: ['example.com/hold'] });
    await make(WIDGET, 'loose', { ownerReferences: [ref(owner)] });
    await del(WIDGET, 'owner', { propagationPolicy: 'Foreground' });
    await expectEventually(
      'loose gone, blocker terminating',
      async () => !(await find(WIDGET, 'loose')) && (await find(WIDGET, 'blocker'))?.metadata.deletionTimestamp !== undefined,
    );
    await gc!.whenIdle();
    expect((await find(WIDGET, 'owner'))?.metadata.finalizers).toEqual(['foregroundDeletion']);
    const b = (await find(WIDGET, 'blocker'))!;
    await storeFor(WIDGET).update('a', 'blocker', { ...b, metadata: { ...b.metadata, finalizers: [] } }, { ctx: ctx(), fieldValidation: 'Strict' });
    await expectEventually('owner removed', async () => !(await find(WIDGET, 'owner')));
  });

  it('Orphan: dependents lose the reference and stay', async () => {
    await startGc();
    const owner = await make(WIDGET, 'owner');
    const other = await make(WIDGET, 'other');
    await make(WIDGET, 'dep', { ownerReferences: [ref(owner), ref(other)] });
    await del(WIDGET, 'owner', { propagationPolicy: 'Orphan' });
    await expectEventually('owner removed', async () => !(await find(WIDGET, 'owner')));
    const dep = await find(WIDGET, 'dep');
    expect((dep?.metadata.ownerReferences as Array<{ name: string }>).map((r) => r.name)).toEqual(['other']);
  });

  it('a cluster-scoped owner owns namespaced dependents in any namespace', async () => {
    await startGc();
    const fleet = await make(FLEET, 'fleet');
    await make(WIDGET, 'in-a', { ownerReferences: [ref(fleet)] }, 'a');
    await make(WIDGET, 'in-b', { ownerReferences: [ref(fleet)] }, 'b');
    await gc!.whenIdle();
    expect(await find(WIDGET, 'in-b', 'b')).toBeDefined();
    await del(FLEET, 'fleet');
    await expectEventually('both gone', async () => !(await find(WIDGET, 'in-a', 'a')) && !(await find(WIDGET, 'in-b', 'b')));
  });

  it('a cluster-scoped dependent cannot have a namespaced owner: the reference is dangling', async () => {
    await startGc();
    const w = await make(WIDGET, 'ns-owner');
    await make(FLEET, 'bad-fleet', { ownerReferences: [ref(w)] });
    await expectEventually('fleet collected', async () => !(await find(FLEET, 'bad-fleet')));
    expect(await find(WIDGET, 'ns-owner')).toBeDefined();
  });

  it('cleans up dangling references that predate its start (initial sync)', async () => {
    const owner = await make(WIDGET, 'gone-owner');
    await make(WIDGET, 'left', { ownerReferences: [ref(owner)] });
    await del(WIDGET, 'gone-owner');
    expect(await find(WIDGET, 'left')).toBeDefined();
    await startGc();
    await expectEventually('left collected', async () => !(await find(WIDGET, 'left')));
  });

  it('never deletes on account of an owner kind the server does not serve', async () => {
    await startGc();
    await make(WIDGET, 'odd', { ownerReferences: [{ apiVersion: 'nowhere.io/v1', kind: 'Thing', name: 't', uid: 'u-t' }] });
    await new Promise((r) => setTimeout(r, 200));
    await gc!.whenIdle();
    expect(await find(WIDGET, 'odd')).toBeDefined();
  });
});

describe('NamespaceController on custom kinds', () => {
  it('deletes custom-kind content, reports a held object, then finalizes and removes the namespace', async () => {
    nsc = new NamespaceController({ registry, storage, storeFor, retryMs: 50, log: () => undefined });
    nsc.start();
    const nsStore = storeFor(NAMESPACE);
    await nsStore.create('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } }, { ctx: ctx(), fieldValidation: 'Strict' });
    await make(WIDGET, 'w1', {}, 'team');
    await make(WIDGET, 'held', { finalizers: ['example.com/hold'] }, 'team');
    await nsStore.delete('', 'team', {}, ctx());
    await expectEventually('conditions', async () => {
      const ns = await nsStore.get('', 'team');
      const c = ((ns.status as { conditions?: Array<{ type: string; message: string }> }).conditions ?? []).find((x) => x.type === 'NamespaceContentRemaining');
      return c?.message === 'Some resources are remaining: widgets.example.com has 1 resource instances';
    });
    expect(await find(WIDGET, 'w1', 'team')).toBeUndefined();
    const held = (await find(WIDGET, 'held', 'team'))!;
    await storeFor(WIDGET).update('team', 'held', { ...held, metadata: { ...held.metadata, finalizers: [] } }, { ctx: ctx(), fieldValidation: 'Strict' });
    await expectEventually('namespace removed', async () => {
      try {
        await nsStore.get('', 'team');
        return false;
      } catch (e) {
        return e instanceof StatusError && e.code === 404;
      }
    });
  });
});
