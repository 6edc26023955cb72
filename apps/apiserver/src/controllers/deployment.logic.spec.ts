import type { KubeObject } from '@app/apimachinery';
import {
  DESIRED_REPLICAS_ANNOTATION,
  deploymentStatus,
  findNewReplicaSet,
  MAX_REPLICAS_ANNOTATION,
  maxRevision,
  newReplicaSetFor,
  newRSReplicas,
  oldReplicaSets,
  oldReplicaSetScaleDowns,
  podTemplateHash,
  replicaSetAnnotations,
  replicaSetsToCleanUp,
  resolveFenceposts,
  revisionOf,
  REVISION_ANNOTATION,
  REVISION_HISTORY_ANNOTATION,
  templateMatches,
} from './deployment.logic.js';

type Obj = Record<string, unknown>;
const NOW = new Date('2026-12-05T21:00:00.123Z');
const T = '2026-12-05T21:00:00Z';
const EARLIER = '2026-12-05T20:00:00Z';

const template = (image = 'nginx:1', labels: Record<string, string> = { app: 'web' }): Obj => ({
  metadata: { labels },
  spec: { containers: [{ name: 'c', image }] },
});
const deployment = (spec: Obj = {}, opts: { status?: Obj; annotations?: Record<string, string>; generation?: number } = {}): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'ns', uid: 'd-uid', generation: opts.generation ?? 1, ...(opts.annotations ? { annotations: opts.annotations } : {}) },
  spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template: template(), ...spec },
  ...(opts.status ? { status: opts.status } : {}),
});
const rs = (
  name: string,
  opts: { replicas?: number; available?: number; ready?: number; actual?: number; image?: string; created?: string; revision?: string; extra?: Obj } = {},
): KubeObject => {
  const replicas = opts.replicas ?? 0;
  return {
    metadata: {
      name,
      namespace: 'ns',
      uid: `uid-${name}`,
      creationTimestamp: opts.created ?? '2026-12-01T00:00:00Z',
      ...(opts.revision !== undefined ? { annotations: { [REVISION_ANNOTATION]: opts.revision } } : {}),
      ...asObj(opts.extra?.metadata),
    },
    spec: { replicas, template: template(opts.image ?? 'nginx:1', { app: 'web', 'pod-template-hash': name }) },
    status: {
      replicas: opts.actual ?? replicas,
      readyReplicas: opts.ready ?? opts.available ?? replicas,
      availableReplicas: opts.available ?? replicas,
      ...asObj(opts.extra?.status),
    },
  };
};
function asObj(v: unknown): Obj {
  return v && typeof v === 'object' ? (v as Obj) : {};
}

describe('podTemplateHash', () => {
  it('is FNV-1a over the canonical JSON, spelled with the safe alphabet', () => {
    expect(podTemplateHash({})).toBe('5859f96865');
    expect(podTemplateHash({})).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]+$/);
    expect(podTemplateHash(template())).toBe('79bfd649dc');
  });
  it('is stable across key order and differs for other templates and collision counts', () => {
    const reordered = { spec: { containers: [{ image: 'nginx:1', name: 'c' }] }, metadata: { labels: { app: 'web' } } };
    expect(podTemplateHash(reordered)).toBe(podTemplateHash(template()));
    expect(podTemplateHash(template('nginx:2'))).not.toBe(podTemplateHash(template()));
    expect(podTemplateHash({}, 2)).toBe('64874c7875');
    expect(podTemplateHash({}, 0)).not.toBe(podTemplateHash({}));
  });
});

describe('resolveFenceposts', () => {
  it('rounds surge up and unavailable down', () => {
    expect(resolveFenceposts('25%', '25%', 10)).toEqual({ surge: 3, unavailable: 2 });
    expect(resolveFenceposts(undefined, undefined, 10)).toEqual({ surge: 3, unavailable: 2 });
    expect(resolveFenceposts(undefined, undefined, 3)).toEqual({ surge: 1, unavailable: 0 });
    expect(resolveFenceposts(2, '50%', 5)).toEqual({ surge: 2, unavailable: 2 });
  });
  it('makes unavailable 1 when both resolve to 0', () => {
    expect(resolveFenceposts(0, 0, 10)).toEqual({ surge: 0, unavailable: 1 });
    expect(resolveFenceposts('0%', '10%', 5)).toEqual({ surge: 0, unavailable: 1 });
  });
  it('rejects values that are neither a number nor a percentage', () => {
    expect(() => resolveFenceposts('5', 0, 10)).toThrow(/invalid value/);
  });
});

describe('new and old ReplicaSets', () => {
  it('compares templates without the hash label, key order or empty values', () => {
    expect(templateMatches(template('nginx:1', { app: 'web', 'pod-template-hash': 'abc' }), template())).toBe(true);
    expect(templateMatches(template('nginx:2'), template())).toBe(false);
    expect(
      templateMatches(template('nginx:1', { 'pod-template-hash': 'abc' }), { spec: { containers: [{ image: 'nginx:1', name: 'c' }] }, metadata: {} }),
    ).toBe(true);
    expect(templateMatches(template('nginx:1', { app: 'web', tier: 'x' }), template())).toBe(false);
  });

  it('finds the oldest matching ReplicaSet, by name on a tie', () => {
    const d = deployment();
    const late = rs('late', { created: '2026-12-03T00:00:00Z' });
    const b = rs('b', { created: '2026-12-02T00:00:00Z' });
    const a = rs('a', { created: '2026-12-02T00:00:00Z' });
    const other = rs('other', { image: 'nginx:0', created: '2026-11-01T00:00:00Z' });
    expect(findNewReplicaSet(d, [late, b, other, a])?.metadata.name).toBe('a');
    expect(findNewReplicaSet(deployment({ template: template('nginx:9') }), [late, a])).toBeUndefined();
    expect(oldReplicaSets([late, b, other, a], a).map((r) => r.metadata.name)).toEqual(['late', 'b', 'other']);
    expect(oldReplicaSets([late, a], undefined)).toHaveLength(2);
  });

  it('reads revisions', () => {
    expect(revisionOf(rs('a', { revision: '7' }))).toBe(7);
    expect(revisionOf(rs('a'))).toBe(0);
    expect(revisionOf(rs('a', { revision: 'x' }))).toBe(0);
    expect(maxRevision([rs('a', { revision: '2' }), rs('b', { revision: '11' }), rs('c', { revision: 'bad' })])).toBe(11);
    expect(maxRevision([])).toBe(0);
  });

  it('builds the ReplicaSet to create', () => {
    const d = deployment(
      { minReadySeconds: 5, selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'Exists' }] } },
      {
        annotations: {
          team: 'a',
          'kubectl.kubernetes.io/last-applied-configuration': '{}',
          [REVISION_ANNOTATION]: '4',
          [DESIRED_REPLICAS_ANNOTATION]: '9',
          'deprecated.deployment.rollback.to': '1',
        },
      },
    );
    expect(newReplicaSetFor(d, 'h4sh', 5, 1)).toEqual({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: 'web-h4sh',
        namespace: 'ns',
        labels: { app: 'web', 'pod-template-hash': 'h4sh' },
        annotations: { team: 'a', [REVISION_ANNOTATION]: '5', [DESIRED_REPLICAS_ANNOTATION]: '3', [MAX_REPLICAS_ANNOTATION]: '4' },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'd-uid', controller: true, blockOwnerDeletion: true }],
      },
      spec: {
        replicas: 1,
        minReadySeconds: 5,
        selector: { matchLabels: { app: 'web', 'pod-template-hash': 'h4sh' }, matchExpressions: [{ key: 'tier', operator: 'Exists' }] },
        template: { metadata: { labels: { app: 'web', 'pod-template-hash': 'h4sh' } }, spec: { containers: [{ name: 'c', image: 'nginx:1' }] } },
      },
    });
    expect(asObj(d.spec).template).toEqual(template()); // the deployment is not changed
    const recreate = newReplicaSetFor(deployment({ strategy: { type: 'Recreate' } }), 'h', 1, 3);
    expect(recreate.metadata.annotations).toMatchObject({ [MAX_REPLICAS_ANNOTATION]: '3' });
  });
});

describe('scaling', () => {
  const d10 = deployment({ replicas: 10 });

  it('sizes the new ReplicaSet within the surge', () => {
    expect(newRSReplicas(d10, [rs('old', { replicas: 10 })], undefined)).toBe(3);
    expect(newRSReplicas(d10, [rs('old', { replicas: 10 }), rs('new', { replicas: 3 })], rs('new', { replicas: 3 }))).toBe(3);
    expect(newRSReplicas(d10, [rs('old', { replicas: 8 })], rs('new', { replicas: 3 }))).toBe(5);
    expect(newRSReplicas(d10, [rs('old', { replicas: 0 })], rs('new', { replicas: 9 }))).toBe(10);
    expect(newRSReplicas(deployment({ replicas: 10, strategy: { type: 'Recreate' } }), [rs('old', { replicas: 10 })], undefined)).toBe(10);
  });

  it('rolls an old ReplicaSet of 3 over to a new one step by step', () => {
    const d = deployment(); // 3 replicas, 25%/25%: surge 1, unavailable 0
    const sizes = { old: 3, new: 0 };
    const steps: string[] = [];
    const state = () => {
      const old = rs('old', { replicas: sizes.old, created: '2026-11-01T00:00:00Z' });
      const nw = rs('new', { replicas: sizes.new });
      return { old, nw, all: [old, nw] };
    };
    for (let i = 0; i < 10 && !(sizes.old === 0 && sizes.new === 3); i++) {
      let s = state();
      const target = newRSReplicas(d, s.all, s.nw);
      if (target !== sizes.new) {
        sizes.new = target;
        steps.push(`new=${target}`);
        continue; // the controller waits for the next sync after scaling up
      }
      s = state();
      const downs = oldReplicaSetScaleDowns(d, s.all, [s.old], s.nw);
      if (downs.has('old')) {
        sizes.old = downs.get('old')!;
        steps.push(`old=${sizes.old}`);
      }
    }
    expect(steps).toEqual(['new=1', 'old=2', 'new=2', 'old=1', 'new=3', 'old=0']);
  });

  it('does not scale old ReplicaSets down while the new one is not available', () => {
    const d = deployment();
    const old = rs('old', { replicas: 3 });
    const nw = rs('new', { replicas: 1, available: 0 });
    expect(oldReplicaSetScaleDowns(d, [old, nw], [old], nw).size).toBe(0);
  });

  it('drops unavailable old replicas first, within the budget', () => {
    const d = deployment({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } } });
    const old = rs('old', { replicas: 3, available: 1 });
    const nw = rs('new', { replicas: 1, available: 0 });
    // budget 4 - 2 - 1 = 1: one unhealthy replica goes; the available ones (1) are below minAvailable (2)
    expect(oldReplicaSetScaleDowns(d, [old, nw], [old], nw)).toEqual(new Map([['old', 2]]));
  });

  it('scales the oldest old ReplicaSets down first, counting only active ones as available', () => {
    const d = deployment({ replicas: 4, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } } });
    const a = rs('a', { replicas: 2, created: '2026-11-01T00:00:00Z' });
    const b = rs('b', { replicas: 2, created: '2026-11-02T00:00:00Z' });
    const draining = rs('draining', { replicas: 0, available: 5, created: '2026-10-01T00:00:00Z' });
    const nw = rs('new', { replicas: 2 });
    expect(oldReplicaSetScaleDowns(d, [b, draining, a, nw], [b, draining, a], nw)).toEqual(
      new Map([
        ['a', 0],
        ['b', 1],
      ]),
    );
  });

  it('scales every old ReplicaSet to 0 for Recreate', () => {
    const d = deployment({ strategy: { type: 'Recreate' } });
    const downs = oldReplicaSetScaleDowns(d, [], [rs('a', { replicas: 2 }), rs('b', { replicas: 0 })], undefined);
    expect(downs).toEqual(new Map([['a', 0]]));
  });
});

describe('replicaSetAnnotations', () => {
  it('raises a reused ReplicaSet’s revision and records the old one (rollback)', () => {
    const d = deployment({}, { annotations: { team: 'a', 'kubectl.kubernetes.io/last-applied-configuration': '{}', [REVISION_ANNOTATION]: '2' } });
    const rs1 = rs('rs1', { revision: '1' });
    const rs2 = rs('rs2', { revision: '2', image: 'nginx:2' });
    expect(findNewReplicaSet(d, [rs1, rs2])?.metadata.name).toBe('rs1');
    const newRevision = maxRevision(oldReplicaSets([rs1, rs2], rs1)) + 1;
    expect(newRevision).toBe(3);
    const annotations = replicaSetAnnotations(d, rs1, newRevision, true);
    expect(annotations).toEqual({
      team: 'a',
      [REVISION_ANNOTATION]: '3',
      [REVISION_HISTORY_ANNOTATION]: '1',
      [DESIRED_REPLICAS_ANNOTATION]: '3',
      [MAX_REPLICAS_ANNOTATION]: '4',
    });
    const again = { ...rs1, metadata: { ...rs1.metadata, annotations } };
    expect(replicaSetAnnotations(d, again, 3, true)).toBeUndefined();
    expect(replicaSetAnnotations(d, again, 5, true)).toMatchObject({ [REVISION_ANNOTATION]: '5', [REVISION_HISTORY_ANNOTATION]: '1,3' });
    expect(replicaSetAnnotations(d, again, 2, true)).toBeUndefined(); // never lowered
  });

  it('gives a fresh ReplicaSet its revision without history', () => {
    expect(replicaSetAnnotations(deployment(), rs('x'), 1, true)).toEqual({
      [REVISION_ANNOTATION]: '1',
      [DESIRED_REPLICAS_ANNOTATION]: '3',
      [MAX_REPLICAS_ANNOTATION]: '4',
    });
  });

  it('only sets the replicas annotations of an old ReplicaSet', () => {
    const d = deployment({ replicas: 5 }, { annotations: { team: 'a' } });
    const old = rs('old', {
      revision: '1',
      extra: { metadata: { annotations: { [REVISION_ANNOTATION]: '1', [DESIRED_REPLICAS_ANNOTATION]: '3', [MAX_REPLICAS_ANNOTATION]: '4' } } },
    });
    expect(replicaSetAnnotations(d, old, 9, false)).toEqual({ [REVISION_ANNOTATION]: '1', [DESIRED_REPLICAS_ANNOTATION]: '5', [MAX_REPLICAS_ANNOTATION]: '7' });
    expect(replicaSetAnnotations(deployment(), old, 9, false)).toBeUndefined();
  });
});

describe('deploymentStatus', () => {
  const available = (ltt = EARLIER, lut = EARLIER) => ({
    type: 'Available',
    status: 'True',
    lastUpdateTime: lut,
    lastTransitionTime: ltt,
    reason: 'MinimumReplicasAvailable',
    message: 'Deployment has minimum availability.',
  });
  const progressing = (reason: string, message: string, status = 'True', lut = EARLIER, ltt = EARLIER) => ({
    type: 'Progressing',
    status,
    lastUpdateTime: lut,
    lastTransitionTime: ltt,
    reason,
    message,
  });
  const doneStatus = { observedGeneration: 1, replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3 };

  it('reports a created ReplicaSet, keeping the transition time of a condition whose status stays', () => {
    const d = deployment(
      { template: template('nginx:2') },
      {
        generation: 2,
        status: { ...doneStatus, conditions: [available(), progressing('NewReplicaSetAvailable', 'ReplicaSet "web-old" has successfully progressed.')] },
      },
    );
    const old = rs('web-old', { replicas: 3 });
    const nw = rs('web-new', { replicas: 1, available: 0, actual: 0 });
    expect(deploymentStatus(d, [old, nw], nw, NOW, 'created')).toEqual({
      observedGeneration: 2,
      replicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      unavailableReplicas: 1,
      conditions: [available(), progressing('NewReplicaSetCreated', 'Created new replica set "web-new"', 'True', T, EARLIER)],
    });
  });

  it('moves lastUpdateTime on progress and reports completion', () => {
    const prev = {
      observedGeneration: 2,
      replicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      conditions: [available(), progressing('NewReplicaSetCreated', 'x')],
    };
    const d = deployment({}, { generation: 2, status: prev });
    const old = rs('web-old', { replicas: 2 });
    const nw = rs('web-new', { replicas: 2, available: 1, ready: 1, actual: 2 });
    const mid = deploymentStatus(d, [old, nw], nw, NOW);
    expect(mid).toMatchObject({ replicas: 4, updatedReplicas: 2, readyReplicas: 3, availableReplicas: 3, unavailableReplicas: 1 });
    expect(mid.conditions).toEqual([available(), progressing('ReplicaSetUpdated', 'ReplicaSet "web-new" is progressing.', 'True', T, EARLIER)]);

    const done = deploymentStatus(
      deployment({}, { generation: 2, status: mid }),
      [rs('web-old', { replicas: 0 }), rs('web-new', { replicas: 3 })],
      rs('web-new', { replicas: 3 }),
      NOW,
    );
    expect(done).toEqual({
      observedGeneration: 2,
      replicas: 3,
      updatedReplicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      conditions: [available(), progressing('NewReplicaSetAvailable', 'ReplicaSet "web-new" has successfully progressed.', 'True', T, EARLIER)],
    });
  });

  it('times out a rollout that makes no progress past the deadline', () => {
    const stuck = (lastUpdate: string) =>
      deployment(
        { progressDeadlineSeconds: 600 },
        {
          status: {
            observedGeneration: 1,
            replicas: 4,
            updatedReplicas: 1,
            readyReplicas: 3,
            availableReplicas: 3,
            conditions: [progressing('ReplicaSetUpdated', 'x', 'True', lastUpdate)],
          },
        },
      );
    const all = [rs('web-old', { replicas: 3 }), rs('web-new', { replicas: 1, available: 0, ready: 0, actual: 1 })];
    const late = deploymentStatus(stuck('2026-12-05T20:49:59Z'), all, all[1], NOW);
    expect((late.conditions as Obj[]).find((c) => c.type === 'Progressing')).toEqual(
      progressing('ProgressDeadlineExceeded', 'ReplicaSet "web-new" has timed out progressing.', 'False', T, T),
    );
    const inTime = deploymentStatus(stuck('2026-12-05T20:50:01Z'), all, all[1], NOW);
    expect((inTime.conditions as Obj[]).find((c) => c.type === 'Progressing')).toEqual(progressing('ReplicaSetUpdated', 'x', 'True', '2026-12-05T20:50:01Z'));
  });

  it('reports missing minimum availability', () => {
    const d = deployment({ replicas: 4, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } } });
    const nw = rs('web-new', { replicas: 4, available: 2 });
    const s = deploymentStatus(d, [nw], nw, NOW);
    expect((s.conditions as Obj[])[0]).toEqual({
      type: 'Available',
      status: 'False',
      lastUpdateTime: T,
      lastTransitionTime: T,
      reason: 'MinimumReplicasUnavailable',
      message: 'Deployment does not have minimum availability.',
    });
    const three = rs('web-new', { replicas: 4, available: 3 });
    expect((deploymentStatus(d, [three], three, NOW).conditions as Obj[])[0]).toMatchObject({ status: 'True', reason: 'MinimumReplicasAvailable' });
  });

  it('notes pausing and resuming without estimating progress while paused', () => {
    const nw = rs('web-new', { replicas: 3 });
    const paused = deploymentStatus(
      deployment({ paused: true }, { status: { ...doneStatus, conditions: [progressing('ReplicaSetUpdated', 'x')] } }),
      [nw],
      nw,
      NOW,
    );
    expect((paused.conditions as Obj[]).find((c) => c.type === 'Progressing')).toEqual(
      progressing('DeploymentPaused', 'Deployment is paused', 'Unknown', T, T),
    );
    const resumed = deploymentStatus(deployment({}, { status: { ...paused, replicas: 2 } }), [nw], nw, NOW);
    // resumed, then the rollout is complete in the same sync
    expect((resumed.conditions as Obj[]).find((c) => c.type === 'Progressing')).toMatchObject({ reason: 'NewReplicaSetAvailable', status: 'True' });
    const resumedOnly = deploymentStatus(deployment({}, { status: { ...paused, replicas: 2 } }), [nw], nw, NOW, undefined, { estimateProgress: false });
    expect((resumedOnly.conditions as Obj[]).find((c) => c.type === 'Progressing')).toEqual(
      progressing('DeploymentResumed', 'Deployment is resumed', 'Unknown', T, T),
    );
  });

  it('notes a found ReplicaSet only when there is no Progressing condition yet', () => {
    const nw = rs('web-new', { replicas: 3, available: 0, ready: 0 });
    const fresh = deploymentStatus(deployment(), [nw], nw, NOW, 'found', { estimateProgress: false });
    expect((fresh.conditions as Obj[]).find((c) => c.type === 'Progressing')).toEqual(
      progressing('FoundNewReplicaSet', 'Found new replica set "web-new"', 'True', T, T),
    );
    const known = deploymentStatus(deployment({}, { status: { conditions: [progressing('ReplicaSetUpdated', 'x')] } }), [nw], nw, NOW, 'found', {
      estimateProgress: false,
    });
    expect((known.conditions as Obj[]).find((c) => c.type === 'Progressing')).toEqual(progressing('ReplicaSetUpdated', 'x'));
  });

  it('counts unavailable replicas from the ReplicaSets’ sizes, keeps collisionCount and leaves zero counts out', () => {
    const d = deployment({ progressDeadlineSeconds: 2147483647 }, { status: { collisionCount: 2, conditions: [progressing('ReplicaSetUpdated', 'x')] } });
    const old = rs('web-old', { replicas: 1, available: 1 });
    const nw = rs('web-new', { replicas: 3, available: 0, ready: 0, actual: 0 });
    const s = deploymentStatus(d, [old, nw], nw, NOW);
    expect(s).toEqual({
      observedGeneration: 1,
      replicas: 1,
      readyReplicas: 1,
      availableReplicas: 1,
      unavailableReplicas: 3,
      collisionCount: 2,
      conditions: [
        {
          type: 'Available',
          status: 'False',
          lastUpdateTime: T,
          lastTransitionTime: T,
          reason: 'MinimumReplicasUnavailable',
          message: 'Deployment does not have minimum availability.',
        },
      ],
    });
  });

  it('surfaces a ReplicaFailure of the new ReplicaSet', () => {
    const failure = { type: 'ReplicaFailure', status: 'True', lastTransitionTime: EARLIER, reason: 'FailedCreate', message: 'quota exceeded' };
    const nw = rs('web-new', { replicas: 3, available: 0, ready: 0, actual: 0, extra: { status: { conditions: [failure] } } });
    const s = deploymentStatus(deployment(), [nw], nw, NOW);
    expect((s.conditions as Obj[]).find((c) => c.type === 'ReplicaFailure')).toEqual({ ...failure, lastUpdateTime: EARLIER });
  });
});

describe('replicaSetsToCleanUp', () => {
  const old = (name: string, revision: string, replicas = 0, extra?: Obj) => rs(name, { revision, replicas, extra });
  it('deletes the surplus lowest revisions that are scaled down', () => {
    const list = [old('r5', '5'), old('r1', '1'), old('r3', '3'), old('r2', '2'), old('r4', '4')];
    expect(replicaSetsToCleanUp(deployment({ revisionHistoryLimit: 2 }), list)).toEqual(['r1', 'r2', 'r3']);
    expect(replicaSetsToCleanUp(deployment({ revisionHistoryLimit: 0 }), list)).toEqual(['r1', 'r2', 'r3', 'r4', 'r5']);
    expect(replicaSetsToCleanUp(deployment(), list)).toEqual([]);
    expect(replicaSetsToCleanUp(deployment({ revisionHistoryLimit: 2147483647 }), list)).toEqual([]);
  });
  it('skips (without replacing) ReplicaSets with replicas and leaves out those being deleted', () => {
    const list = [
      old('r1', '1', 1),
      old('r2', '2'),
      old('r3', '3'),
      old('r4', '4', 0, { metadata: { generation: 3 }, status: { observedGeneration: 2 } }),
      old('r0', '0', 0, { metadata: { deletionTimestamp: EARLIER } }),
      old('r5', '5'),
    ];
    expect(replicaSetsToCleanUp(deployment({ revisionHistoryLimit: 1 }), list)).toEqual(['r2', 'r3']);
  });
});
