import {
  decideDependent,
  FINALIZER_FOREGROUND,
  FINALIZER_ORPHAN,
  groupOf,
  nodeFromObject,
  OwnerGraph,
  ownerReferencesOf,
  referenceMatches,
  type OwnerReference,
  type WorkItem,
} from './owner.graph.js';
import type { KubeObject } from '@app/apimachinery';

interface Opts {
  ns?: string;
  kind?: string;
  apiVersion?: string;
  owners?: OwnerReference[];
  finalizers?: string[];
  deleting?: boolean;
}

function obj(name: string, uid: string, o: Opts = {}): KubeObject {
  return {
    apiVersion: o.apiVersion ?? 'v1',
    kind: o.kind ?? 'ConfigMap',
    metadata: {
      name,
      uid,
      ...(o.ns === '' ? {} : { namespace: o.ns ?? 'a' }),
      ...(o.owners ? { ownerReferences: o.owners } : {}),
      ...(o.finalizers ? { finalizers: o.finalizers } : {}),
      ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z', deletionGracePeriodSeconds: 0 } : {}),
    },
  };
}

function ref(name: string, uid: string, extra: Partial<OwnerReference> = {}): OwnerReference {
  return { apiVersion: 'v1', kind: 'ConfigMap', name, uid, ...extra };
}

const del = (uid: string): WorkItem => ({ kind: 'attemptToDelete', uid });

describe('owner references and identity', () => {
  it('derives the group from apiVersion (core is empty)', () => {
    expect(groupOf('v1')).toBe('');
    expect(groupOf('apps/v1')).toBe('apps');
  });

  it('ignores malformed owner references instead of failing', () => {
    const o = obj('d', 'u-d');
    o.metadata.ownerReferences = [null, 'x', { uid: 'u1' }, { apiVersion: 'v1', kind: 'ConfigMap', name: 'o', uid: 'u-o', blockOwnerDeletion: true }];
    expect(ownerReferencesOf(o)).toEqual([{ apiVersion: 'v1', kind: 'ConfigMap', name: 'o', uid: 'u-o', blockOwnerDeletion: true }]);
  });

  it('builds no node for objects without uid or type', () => {
    expect(nodeFromObject({ metadata: { name: 'x' } })).toBeUndefined();
    const n = nodeFromObject(obj('o', 'u', { deleting: true, finalizers: [FINALIZER_FOREGROUND] }))!;
    expect(n.deletingDependents).toBe(true);
    expect(n.orphaning).toBe(false);
  });

  it('an owner with the same name but another uid does not match', () => {
    const owner = nodeFromObject(obj('o', 'u-new'))!.identity;
    expect(referenceMatches(ref('o', 'u-old'), 'a', owner)).toBe(false);
    expect(referenceMatches(ref('o', 'u-new'), 'a', owner)).toBe(true);
  });

  it('namespaced owners resolve only within the dependent namespace', () => {
    const owner = nodeFromObject(obj('o', 'u-o', { ns: 'a' }))!.identity;
    expect(referenceMatches(ref('o', 'u-o'), 'a', owner)).toBe(true);
    expect(referenceMatches(ref('o', 'u-o'), 'b', owner)).toBe(false);
    // A cluster-scoped dependent can never have a namespaced owner.
    expect(referenceMatches(ref('o', 'u-o'), '', owner)).toBe(false);
  });

  it('cluster-scoped owners resolve from any namespace', () => {
    const owner = nodeFromObject(obj('team', 'u-ns', { ns: '', kind: 'Namespace' }))!.identity;
    const r = { apiVersion: 'v1', kind: 'Namespace', name: 'team', uid: 'u-ns' };
    expect(referenceMatches(r, 'a', owner)).toBe(true);
    expect(referenceMatches(r, '', owner)).toBe(true);
    expect(referenceMatches({ ...r, kind: 'ConfigMap' }, 'a', owner)).toBe(false);
    expect(referenceMatches({ ...r, apiVersion: 'apps/v1' }, 'a', owner)).toBe(false);
  });
});

describe('OwnerGraph', () => {
  it('indexes dependents by owner uid and keeps the index when references change', () => {
    const g = new OwnerGraph();
    g.upsert(obj('o1', 'u1'));
    g.upsert(obj('o2', 'u2'));
    g.upsert(obj('d', 'ud', { owners: [ref('o1', 'u1')] }));
    expect(g.dependentsOf('u1').map((n) => n.identity.name)).toEqual(['d']);
    g.upsert(obj('d', 'ud', { owners: [ref('o2', 'u2')] }));
    expect(g.dependentsOf('u1')).toEqual([]);
    expect(g.dependentsOf('u2').map((n) => n.identity.name)).toEqual(['d']);
  });

  it('a dependent whose owner is solid needs no work', () => {
    const g = new OwnerGraph();
    g.upsert(obj('o', 'uo'));
    expect(g.upsert(obj('d', 'ud', { owners: [ref('o', 'uo')] }))).toEqual([]);
  });

  it('a dependent whose owner is unknown to the graph is judged (dangling check)', () => {
    const g = new OwnerGraph();
    expect(g.upsert(obj('d', 'ud', { owners: [ref('gone', 'u-gone')] }))).toEqual([del('ud')]);
  });

  it('a reference to an owner in another namespace is judged, not trusted', () => {
    const g = new OwnerGraph();
    g.upsert(obj('o', 'uo', { ns: 'b' }));
    expect(g.upsert(obj('d', 'ud', { ns: 'a', owners: [ref('o', 'uo')] }))).toEqual([del('ud')]);
  });

  it('deleting an owner enqueues its dependents (Background cascade, dangling cleanup)', () => {
    const g = new OwnerGraph();
    const owner = obj('o', 'uo');
    g.upsert(owner);
    g.upsert(obj('d1', 'u1', { owners: [ref('o', 'uo')] }));
    g.upsert(obj('d2', 'u2', { owners: [ref('o', 'uo')] }));
    expect(g.remove(owner).sort((a, b) => a.uid.localeCompare(b.uid))).toEqual([del('u1'), del('u2')]);
    expect(g.get('uo')).toBeUndefined();
    // The index still finds them: they point at the vanished uid until they change.
    expect(g.dependentsOf('uo')).toHaveLength(2);
  });

  it('foreground deletion of an owner enqueues the owner and all its dependents', () => {
    const g = new OwnerGraph();
    g.upsert(obj('o', 'uo'));
    g.upsert(obj('d1', 'u1', { owners: [ref('o', 'uo', { blockOwnerDeletion: true })] }));
    g.upsert(obj('d2', 'u2', { owners: [ref('o', 'uo')] }));
    const work = g.upsert(obj('o', 'uo', { deleting: true, finalizers: [FINALIZER_FOREGROUND] }));
    expect(work).toEqual(expect.arrayContaining([del('uo'), del('u1'), del('u2')]));
    expect(g.blockingDependentsOf('uo').map((n) => n.identity.name)).toEqual(['d1']);
  });

  it('a foreground owner is re-checked when a blocking dependent goes away or stops blocking', () => {
    const g = new OwnerGraph();
    g.upsert(obj('o', 'uo', { deleting: true, finalizers: [FINALIZER_FOREGROUND] }));
    const d1 = obj('d1', 'u1', { owners: [ref('o', 'uo', { blockOwnerDeletion: true })] });
    g.upsert(d1);
    g.upsert(obj('d2', 'u2', { owners: [ref('o', 'uo', { blockOwnerDeletion: true })] }));
    expect(g.remove(d1)).toEqual([del('uo')]);
    expect(g.upsert(obj('d2', 'u2', { owners: [ref('o', 'uo', { blockOwnerDeletion: false })] }))).toContainEqual(del('uo'));
    expect(g.blockingDependentsOf('uo')).toEqual([]);
  });

  it('the orphan finalizer on a deleting owner enqueues orphaning once', () => {
    const g = new OwnerGraph();
    g.upsert(obj('o', 'uo'));
    const terminating = obj('o', 'uo', { deleting: true, finalizers: [FINALIZER_ORPHAN] });
    expect(g.upsert(terminating)).toEqual([{ kind: 'attemptToOrphan', uid: 'uo' }]);
    expect(g.upsert(terminating)).toEqual([]);
  });

  it('resync re-judges only suspicious nodes, from memory', () => {
    const g = new OwnerGraph();
    g.upsert(obj('o', 'uo'));
    g.upsert(obj('ok', 'u-ok', { owners: [ref('o', 'uo')] }));
    g.upsert(obj('lost', 'u-lost', { owners: [ref('x', 'u-x')] }));
    g.upsert(obj('fg', 'u-fg', { deleting: true, finalizers: [FINALIZER_FOREGROUND] }));
    g.upsert(obj('or', 'u-or', { deleting: true, finalizers: [FINALIZER_ORPHAN] }));
    expect(g.resyncWork()).toEqual(expect.arrayContaining([del('u-lost'), del('u-fg'), { kind: 'attemptToOrphan', uid: 'u-or' }]));
    expect(g.resyncWork()).not.toContainEqual(del('u-ok'));
    expect(g.resyncWork()).toHaveLength(3);
  });

  it('keeps thousands of dependents of one owner: repeated events change nothing, the owner going hands out each once', () => {
    // The per-event cost is measured with every write in api.bench (the collector runs there).
    const g = new OwnerGraph();
    g.upsert(obj('o', 'uo'));
    for (let i = 0; i < 5000; i++) g.upsert(obj(`d${i}`, `u${i}`, { owners: [ref('o', 'uo', { blockOwnerDeletion: true })] }));
    expect(g.size).toBe(5001);
    for (let i = 0; i < 5000; i++) g.upsert(obj(`d${i}`, `u${i}`, { owners: [ref('o', 'uo', { blockOwnerDeletion: true })] }));
    expect(g.size).toBe(5001);
    expect(g.blockingDependentsOf('uo')).toHaveLength(5000);
    const work = g.remove(obj('o', 'uo'));
    expect(work).toHaveLength(5000);
    expect(new Set(work.map((w) => w.uid)).size).toBe(5000);
  });
});

describe('decideDependent', () => {
  const base = { finalizers: [] as string[], hasDependents: false, aDependentIsDeletingDependents: false };

  it('leaves objects without owners', () => {
    expect(decideDependent({ ...base, refs: [] })).toEqual({ action: 'none' });
  });

  it('keeps an object with a solid owner and drops its dangling and waiting references', () => {
    expect(decideDependent({ ...base, refs: [{ ref: ref('a', 'ua'), state: 'solid' }] })).toEqual({ action: 'none' });
    expect(
      decideDependent({
        ...base,
        refs: [
          { ref: ref('a', 'ua'), state: 'solid' },
          { ref: ref('b', 'ub'), state: 'dangling' },
          { ref: ref('c', 'uc'), state: 'waiting' },
        ],
      }),
    ).toEqual({ action: 'removeOwnerReferences', uids: ['ub', 'uc'] });
  });

  it('deletes in the background when every owner is absent', () => {
    expect(decideDependent({ ...base, refs: [{ ref: ref('a', 'ua'), state: 'dangling' }] })).toEqual({ action: 'delete', policy: 'Background', unblock: [] });
  });

  it('honours an orphan or foreground finalizer already on the dependent', () => {
    const refs = [{ ref: ref('a', 'ua'), state: 'dangling' as const }];
    expect(decideDependent({ ...base, refs, finalizers: [FINALIZER_ORPHAN] })).toMatchObject({ policy: 'Orphan' });
    expect(decideDependent({ ...base, refs, finalizers: [FINALIZER_FOREGROUND] })).toMatchObject({ policy: 'Foreground' });
  });

  it('deletes a dependent of a waiting owner; in the foreground when it has dependents itself', () => {
    const refs = [{ ref: ref('a', 'ua', { blockOwnerDeletion: true }), state: 'waiting' as const }];
    expect(decideDependent({ ...base, refs })).toEqual({ action: 'delete', policy: 'Background', unblock: [] });
    expect(decideDependent({ ...base, refs, hasDependents: true })).toEqual({ action: 'delete', policy: 'Foreground', unblock: [] });
    // A possible cycle: unblock the waiting owner first.
    expect(decideDependent({ ...base, refs, hasDependents: true, aDependentIsDeletingDependents: true })).toEqual({
      action: 'delete',
      policy: 'Foreground',
      unblock: ['ua'],
    });
  });

  it('never deletes while an owner kind cannot be resolved', () => {
    expect(
      decideDependent({
        ...base,
        refs: [
          { ref: ref('a', 'ua'), state: 'unknown' },
          { ref: ref('b', 'ub'), state: 'dangling' },
        ],
      }),
    ).toEqual({ action: 'none' });
  });
});
