import type { KubeObject } from '@app/apimachinery';
import { claimOwnerRefs, claimsOf, ordinalOf, plan, podFor, statefulSetStatus, statusChanged, usesCurrentRevision, type Action } from './statefulset.logic.js';

const NOW = new Date('2026-03-01T00:00:00Z');
const set = (spec: Record<string, unknown> = {}, status: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name: 'db', namespace: 'default', uid: 'set-uid', generation: 2 },
  spec: {
    replicas: 3,
    serviceName: 'db',
    selector: { matchLabels: { app: 'db' } },
    template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'c', image: 'pg' }] } },
    ...spec,
  },
  status,
});
const pod = (n: number, opts: { rev?: string; phase?: string; ready?: boolean; deleting?: boolean } = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: `db-${n}`,
    labels: { app: 'db', 'controller-revision-hash': opts.rev ?? 'db-new' },
    ...(opts.deleting ? { deletionTimestamp: '2026-03-01T00:00:00Z' } : {}),
  },
  status: { phase: opts.phase ?? 'Running', conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }] },
});
const brief = (actions: Action[]): string[] =>
  actions.map((a) => (a.type === 'create' ? `create ${a.ordinal} ${a.revision}` : a.type === 'delete' ? `delete ${a.pod.metadata.name} ${a.reason}` : 'wait'));

describe('StatefulSet identities', () => {
  it('names pods by ordinal, with hostname, subdomain, labels and claim volumes', () => {
    const s = set({ volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'] } }] });
    const p = podFor(
      s,
      {
        metadata: { labels: { app: 'db' } },
        spec: {
          containers: [],
          volumes: [
            { name: 'data', emptyDir: {} },
            { name: 'x', emptyDir: {} },
          ],
        },
      },
      'db-abc',
      2,
    );
    expect(p.metadata).toMatchObject({
      name: 'db-2',
      labels: { app: 'db', 'controller-revision-hash': 'db-abc', 'statefulset.kubernetes.io/pod-name': 'db-2', 'apps.kubernetes.io/pod-index': '2' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: 'set-uid', controller: true, blockOwnerDeletion: true }],
    });
    expect(p.spec).toMatchObject({
      hostname: 'db-2',
      subdomain: 'db',
      volumes: [
        { name: 'x', emptyDir: {} },
        { name: 'data', persistentVolumeClaim: { claimName: 'data-db-2' } },
      ],
    });
    expect(claimsOf(s, 2)).toEqual([
      {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'data-db-2', namespace: 'default', labels: { app: 'db' } },
        spec: { accessModes: ['ReadWriteOnce'] },
      },
    ]);
    expect(ordinalOf(s, p)).toBe(2);
    expect(ordinalOf(s, { ...p, metadata: { name: 'db-02' } })).toBeUndefined();
    expect(ordinalOf(s, { ...p, metadata: { name: 'dbx-1' } })).toBeUndefined();
  });

  it('gives claims the owners the retention policy asks for', () => {
    const claim = (refs: Record<string, unknown>[] = []): KubeObject => ({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data-db-2', ownerReferences: refs as never },
    });
    const p = { ...pod(2), metadata: { ...pod(2).metadata, uid: 'pod-uid' } };
    const other = { apiVersion: 'example.com/v1', kind: 'Backup', name: 'b', uid: 'other' };
    const setRef = { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: 'set-uid' };
    const podRef = { apiVersion: 'v1', kind: 'Pod', name: 'db-2', uid: 'pod-uid' };
    const policy = (whenDeleted: string, whenScaled: string) => set({ persistentVolumeClaimRetentionPolicy: { whenDeleted, whenScaled } });
    expect(claimOwnerRefs(policy('Retain', 'Retain'), claim([other]), p, true)).toBeUndefined();
    expect(claimOwnerRefs(policy('Retain', 'Retain'), claim([other, setRef, podRef]), p, true)).toEqual([other]);
    expect(claimOwnerRefs(policy('Delete', 'Retain'), claim(), p, false)).toEqual([setRef]);
    expect(claimOwnerRefs(policy('Delete', 'Retain'), claim([setRef]), p, true)).toBeUndefined();
    expect(claimOwnerRefs(policy('Retain', 'Delete'), claim(), p, false)).toBeUndefined();
    expect(claimOwnerRefs(policy('Retain', 'Delete'), claim(), p, true)).toEqual([podRef]);
    expect(claimOwnerRefs(policy('Delete', 'Delete'), claim([setRef]), p, true)).toEqual([podRef]);
    expect(claimOwnerRefs(policy('Delete', 'Delete'), claim([podRef]), p, false)).toEqual([setRef]);
  });

  it('gives ordinals below the partition the current revision', () => {
    expect(usesCurrentRevision(set({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } }), 1)).toBe(true);
    expect(usesCurrentRevision(set({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } }), 2)).toBe(false);
    expect(usesCurrentRevision(set({ ordinals: { start: 5 }, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } }), 6)).toBe(true);
    expect(usesCurrentRevision(set({ ordinals: { start: 5 }, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } }), 7)).toBe(false);
    expect(usesCurrentRevision(set({ updateStrategy: { type: 'OnDelete' } }, { currentReplicas: 2 }), 1)).toBe(false);
  });
});

describe('a StatefulSet sync step', () => {
  it('OrderedReady: creates the lowest missing ordinal, and waits for each pod to be ready', () => {
    expect(brief(plan(set(), [], 'db-new', NOW))).toEqual(['create 0 update']);
    expect(brief(plan(set(), [pod(0, { phase: 'Pending', ready: false })], 'db-new', NOW))).toEqual(['wait']);
    expect(brief(plan(set(), [pod(0)], 'db-new', NOW))).toEqual(['create 1 update']);
    expect(brief(plan(set(), [pod(0), pod(1), pod(2)], 'db-new', NOW))).toEqual([]);
  });

  it('Parallel: creates every missing ordinal at once', () => {
    expect(brief(plan(set({ podManagementPolicy: 'Parallel' }), [pod(1, { ready: false })], 'db-new', NOW))).toEqual(['create 0 update', 'create 2 update']);
  });

  it('scales down from the highest ordinal, one at a time once the rest are ready', () => {
    const s = set({ replicas: 1 });
    expect(brief(plan(s, [pod(0), pod(1), pod(2)], 'db-new', NOW))).toEqual(['delete db-2 condemned']);
    expect(brief(plan(s, [pod(0), pod(1), pod(2, { deleting: true })], 'db-new', NOW))).toEqual(['wait']);
    expect(brief(plan(s, [pod(0, { ready: false }), pod(1)], 'db-new', NOW))).toEqual(['wait']);
    expect(brief(plan(set({ replicas: 1, podManagementPolicy: 'Parallel' }), [pod(0), pod(1), pod(2)], 'db-new', NOW))).toEqual([
      'delete db-2 condemned',
      'delete db-1 condemned',
    ]);
  });

  it('deletes a failed pod to create it again', () => {
    expect(brief(plan(set(), [pod(0), pod(1, { phase: 'Failed' })], 'db-new', NOW))).toEqual(['delete db-1 failed']);
  });

  it('RollingUpdate: replaces the highest pod of an old revision, down to the partition', () => {
    const old = [pod(0, { rev: 'db-old' }), pod(1, { rev: 'db-old' }), pod(2, { rev: 'db-old' })];
    expect(brief(plan(set(), old, 'db-new', NOW))).toEqual(['delete db-2 update']);
    expect(brief(plan(set(), [old[0]!, old[1]!, pod(2)], 'db-new', NOW))).toEqual(['delete db-1 update']);
    // Not while a pod is unready.
    expect(brief(plan(set(), [old[0]!, old[1]!, pod(2, { ready: false })], 'db-new', NOW))).toEqual(['wait']);
    const partitioned = set({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } });
    expect(brief(plan(partitioned, [old[0]!, old[1]!, pod(2)], 'db-new', NOW))).toEqual([]);
    expect(brief(plan(set({ updateStrategy: { type: 'OnDelete' } }), old, 'db-new', NOW))).toEqual([]);
    // Parallel: the replaced pod is created again, and the next one waits for it.
    const parallel = set({ podManagementPolicy: 'Parallel' });
    expect(brief(plan(parallel, [old[0]!, old[1]!], 'db-new', NOW))).toEqual(['create 2 update']);
    expect(brief(plan(parallel, [old[0]!, old[1]!, pod(2, { phase: 'Pending', ready: false })], 'db-new', NOW))).toEqual([]);
  });
});

describe('StatefulSet status', () => {
  it('counts pods by readiness and revision, and completes a rolling update', () => {
    const s = set({}, { currentRevision: 'db-old' });
    const mid = statefulSetStatus(s, [pod(0, { rev: 'db-old' }), pod(1), pod(2, { ready: false })], 'db-old', 'db-new', undefined, NOW);
    expect(mid).toEqual({
      observedGeneration: 2,
      replicas: 3,
      readyReplicas: 2,
      currentReplicas: 1,
      updatedReplicas: 2,
      availableReplicas: 2,
      currentRevision: 'db-old',
      updateRevision: 'db-new',
    });
    expect(statusChanged(set({}, { ...mid }), mid)).toBe(false);
    expect(statusChanged(set({}, { ...mid, updateRevision: 'db-older' }), mid)).toBe(true);
    expect(statusChanged(set({}, { ...mid, readyReplicas: undefined }), { ...mid, readyReplicas: 0 })).toBe(false);
    const done = statefulSetStatus(s, [pod(0), pod(1), pod(2)], 'db-old', 'db-new', 1, NOW);
    expect(done).toMatchObject({ currentRevision: 'db-new', currentReplicas: 3, updatedReplicas: 3, collisionCount: 1 });
  });
});
