import type { KubeObject } from '@app/apimachinery';
import { claimPods, isAvailable, podFromTemplate, podsToDelete, replicaSetStatus, selects, slowStartBatches, statusDiffers } from './replicaset.logic.js';

const rs = (extra: Record<string, unknown> = {}): KubeObject =>
  ({
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: 'web', namespace: 'ns', uid: 'rs-uid', generation: 2 },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web', tier: 'front' }, annotations: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
    },
    ...extra,
  }) as KubeObject;

const pod = (name: string, labels: Record<string, string>, extra: Record<string, unknown> = {}, owner?: string): KubeObject =>
  ({
    metadata: {
      name,
      labels,
      creationTimestamp: '2026-12-05T10:00:00Z',
      ...(owner ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'x', uid: owner, controller: true }] } : {}),
    },
    status: { phase: 'Pending' },
    ...extra,
  }) as KubeObject;

describe('replicaset logic', () => {
  it('selects by label selector for a ReplicaSet and by map for a ReplicationController; empty selects nothing', () => {
    expect(selects('ReplicaSet', rs(), pod('a', { app: 'web' }))).toBe(true);
    expect(selects('ReplicaSet', rs(), pod('a', { app: 'api' }))).toBe(false);
    const exprs = rs({ spec: { selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'api'] }] } } });
    expect(selects('ReplicaSet', exprs, pod('a', { app: 'api' }))).toBe(true);
    expect(selects('ReplicaSet', rs({ spec: { selector: {} } }), pod('a', { app: 'web' }))).toBe(false);
    const rc = rs({ spec: { selector: { app: 'web' } } });
    expect(selects('ReplicationController', rc, pod('a', { app: 'web', x: 'y' }))).toBe(true);
    expect(selects('ReplicationController', rc, pod('a', { x: 'y' }))).toBe(false);
    expect(selects('ReplicationController', rs({ spec: { selector: {} } }), pod('a', { app: 'web' }))).toBe(false);
  });

  it('keeps its own selected pods, adopts selected orphans, releases its unselected pods, leaves others alone', () => {
    const mine = pod('mine', { app: 'web' }, {}, 'rs-uid');
    const orphan = pod('orphan', { app: 'web' });
    const leaving = pod('leaving', { app: 'other' }, {}, 'rs-uid');
    const foreign = pod('foreign', { app: 'web' }, {}, 'other-uid');
    const deletedOrphan = pod('gone', { app: 'web' });
    deletedOrphan.metadata.deletionTimestamp = '2026-12-05T10:00:00Z';
    const c = claimPods('ReplicaSet', rs(), [mine, orphan, leaving, foreign, deletedOrphan]);
    expect(c.owned.map((p) => p.metadata.name)).toEqual(['mine', 'orphan']);
    expect(c.adopt.map((p) => p.metadata.name)).toEqual(['orphan']);
    expect(c.release.map((p) => p.metadata.name)).toEqual(['leaving']);
    // A controller being deleted adopts nothing.
    const dying = rs();
    dying.metadata.deletionTimestamp = '2026-12-05T10:00:00Z';
    expect(claimPods('ReplicaSet', dying, [orphan]).adopt).toEqual([]);
  });

  it('builds the pod from the template, owned by the controller and named after it by the server', () => {
    const p = podFromTemplate('ReplicaSet', rs());
    expect(p).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        generateName: 'web-',
        namespace: 'ns',
        labels: { app: 'web', tier: 'front' },
        annotations: { a: 'b' },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'rs-uid', controller: true, blockOwnerDeletion: true }],
      },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    });
    expect(podFromTemplate('ReplicationController', rs()).metadata.ownerReferences).toEqual([
      { apiVersion: 'v1', kind: 'ReplicationController', name: 'web', uid: 'rs-uid', controller: true, blockOwnerDeletion: true },
    ]);
  });

  it('deletes the least useful pods first: unassigned, pending, not ready, newest', () => {
    const ready = { conditions: [{ type: 'Ready', status: 'True' }] };
    const pods = [
      pod('running-ready', {}, { spec: { nodeName: 'n1' }, status: { phase: 'Running', ...ready } }),
      pod('running', {}, { spec: { nodeName: 'n1' }, status: { phase: 'Running' } }),
      pod('pending-assigned', {}, { spec: { nodeName: 'n1' } }),
      pod('pending-old', {}),
      { ...pod('pending-new', {}), metadata: { name: 'pending-new', creationTimestamp: '2026-12-05T11:00:00Z' } } as KubeObject,
    ];
    expect(podsToDelete(pods, 5).map((p) => p.metadata.name)).toEqual(['pending-new', 'pending-old', 'pending-assigned', 'running', 'running-ready']);
    expect(podsToDelete(pods, 1).map((p) => p.metadata.name)).toEqual(['pending-new']);
  });

  it('counts active, fully labelled, ready and available pods, and reports a failure to create', () => {
    const now = new Date('2026-12-05T12:00:00Z');
    const readySince = (t: string) => ({ status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: t }] } });
    const owned = [
      pod('a', { app: 'web', tier: 'front' }, readySince('2026-12-05T11:59:00Z')),
      pod('b', { app: 'web', tier: 'front' }, readySince('2026-12-05T11:59:58Z')),
      pod('c', { app: 'web' }),
      pod('done', { app: 'web' }, { status: { phase: 'Succeeded' } }),
    ];
    const withMinReady = rs();
    (withMinReady.spec as Record<string, unknown>).minReadySeconds = 10;
    expect(isAvailable(owned[1]!, 10, now)).toBe(false);
    expect(replicaSetStatus(withMinReady, owned, now)).toEqual({
      replicas: 3,
      fullyLabeledReplicas: 2,
      readyReplicas: 2,
      availableReplicas: 1,
      observedGeneration: 2,
    });
    const failed = replicaSetStatus(rs(), [], now, { reason: 'FailedCreate', message: 'pods "web-x" is forbidden: exceeded quota' });
    expect(failed.conditions).toEqual([
      {
        type: 'ReplicaFailure',
        status: 'True',
        lastTransitionTime: '2026-12-05T12:00:00Z',
        reason: 'FailedCreate',
        message: 'pods "web-x" is forbidden: exceeded quota',
      },
    ]);
    // Once pods can be created again the condition goes.
    expect(replicaSetStatus(rs({ status: { conditions: failed.conditions } }), [], now).conditions).toBeUndefined();
    expect(statusDiffers(rs({ status: { replicas: 0 } }), { replicas: 0, observedGeneration: 2 })).toBe(true);
    expect(statusDiffers(rs({ status: { replicas: 1, observedGeneration: 2 } }), { replicas: 1, observedGeneration: 2, readyReplicas: 0 })).toBe(false);
  });

  it('creates in slow-start batches of 1, 2, 4, ...', () => {
    expect(slowStartBatches(0)).toEqual([]);
    expect(slowStartBatches(1)).toEqual([1]);
    expect(slowStartBatches(10)).toEqual([1, 2, 4, 3]);
  });
});
