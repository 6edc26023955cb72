import type { KubeObject } from '@app/apimachinery';
import { defaultStatefulSet } from './statefulset.strategy.js';
import { validateStatefulSet, validateStatefulSetStatusUpdate, validateStatefulSetUpdate } from './statefulset.validation.js';

type Obj = Record<string, unknown>;

/** A StatefulSet as it reaches validation: schema and strategy defaults applied. */
function sts(spec: Obj = {}, template: Obj = {}): KubeObject {
  const s: KubeObject = {
    metadata: { name: 'db', namespace: 'ns' },
    spec: {
      replicas: 1,
      revisionHistoryLimit: 10,
      podManagementPolicy: 'OrderedReady',
      serviceName: 'db',
      selector: { matchLabels: { app: 'db' } },
      template: {
        metadata: { labels: { app: 'db' } },
        spec: { restartPolicy: 'Always', containers: [{ name: 'c', image: 'postgres:17' }], ...template },
      },
      ...spec,
    },
  };
  defaultStatefulSet(s);
  return s;
}

const fields = (errs: { field: string; detail?: string }[]) => errs.map((e) => `${e.field}: ${e.detail ?? ''}`);

describe('StatefulSet defaults', () => {
  it('rolls out with partition 0 and retains claims', () => {
    const spec = sts().spec as Obj;
    expect(spec.updateStrategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { partition: 0 } });
    expect(spec.persistentVolumeClaimRetentionPolicy).toEqual({ whenDeleted: 'Retain', whenScaled: 'Retain' });
  });
  it('gives OnDelete no rollingUpdate and keeps values that are set', () => {
    expect((sts({ updateStrategy: { type: 'OnDelete' } }).spec as Obj).updateStrategy).toEqual({ type: 'OnDelete' });
    const spec = sts({ persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete' } }).spec as Obj;
    expect(spec.persistentVolumeClaimRetentionPolicy).toEqual({ whenDeleted: 'Delete', whenScaled: 'Retain' });
  });
});

describe('StatefulSet validation', () => {
  it('accepts a valid StatefulSet, also without serviceName', () => {
    expect(validateStatefulSet(sts())).toEqual([]);
    expect(validateStatefulSet(sts({ serviceName: '' }))).toEqual([]);
  });
  it('refuses an empty selector, a template that does not match it, and a restartPolicy other than Always', () => {
    expect(fields(validateStatefulSet(sts({ selector: {} })))).toEqual(['spec.selector: empty selector is invalid for statefulset']);
    expect(fields(validateStatefulSet(sts({ selector: { matchLabels: { app: 'x' } } })))).toEqual([
      'spec.template.metadata.labels: `selector` does not match template `labels`',
    ]);
    expect(fields(validateStatefulSet(sts({}, { restartPolicy: 'Never', activeDeadlineSeconds: 3 })))).toEqual([
      'spec.template.spec.restartPolicy: supported values: "Always"',
      'spec.template.spec.activeDeadlineSeconds: activeDeadlineSeconds in StatefulSet is not Supported',
    ]);
  });
  it('checks the policies, the update strategy and the ordinals', () => {
    expect(
      fields(
        validateStatefulSet(
          sts({
            podManagementPolicy: 'Random',
            updateStrategy: { type: 'OnDelete', rollingUpdate: { partition: 1 } },
            persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Keep', whenScaled: 'Retain' },
            ordinals: { start: -1 },
          }),
        ),
      ),
    ).toEqual([
      "spec.podManagementPolicy: must be 'OrderedReady' or 'Parallel'",
      "spec.updateStrategy.rollingUpdate: only allowed for updateStrategy 'RollingUpdate'",
      'spec.persistentVolumeClaimRetentionPolicy.whenDeleted: supported values: "Retain", "Delete"',
      'spec.ordinals.start: must be greater than or equal to 0',
    ]);
    expect(fields(validateStatefulSet(sts({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: -1, maxUnavailable: 0 } } })))).toEqual([
      'spec.updateStrategy.rollingUpdate.partition: must be greater than or equal to 0',
      'spec.updateStrategy.rollingUpdate.maxUnavailable: cannot be 0',
    ]);
  });
  it('lets only replicas, ordinals, template, updateStrategy, the retention policy and minReadySeconds change', () => {
    const old = sts();
    const ok = sts(
      { replicas: 3, minReadySeconds: 5, ordinals: { start: 1 }, updateStrategy: { type: 'OnDelete' } },
      { containers: [{ name: 'c', image: 'postgres:18' }] },
    );
    expect(validateStatefulSetUpdate(ok, old)).toEqual([]);
    expect(fields(validateStatefulSetUpdate(sts({ serviceName: 'other' }), old))).toEqual([
      "spec: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
    ]);
  });
  it('bounds the status counts and keeps collisionCount from going down', () => {
    const withStatus = (status: Obj): KubeObject => ({ ...sts(), status });
    expect(validateStatefulSetStatusUpdate(withStatus({ replicas: 2, readyReplicas: 2, availableReplicas: 2 }), sts())).toEqual([]);
    expect(fields(validateStatefulSetStatusUpdate(withStatus({ replicas: 2, readyReplicas: 1, availableReplicas: 2 }), sts()))).toEqual([
      'status.availableReplicas: cannot be greater than status.readyReplicas',
    ]);
    expect(fields(validateStatefulSetStatusUpdate(withStatus({ replicas: 0, collisionCount: 1 }), withStatus({ collisionCount: 2 })))).toEqual([
      'status.collisionCount: cannot be decremented',
    ]);
  });
});
