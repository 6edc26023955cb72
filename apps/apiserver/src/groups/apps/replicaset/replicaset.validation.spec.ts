import type { KubeObject } from '@app/apimachinery';
import { defaultReplicaSet } from './replicaset.strategy.js';
import { validateReplicaSet, validateReplicaSetStatusUpdate, validateReplicaSetUpdate } from './replicaset.validation.js';

type Obj = Record<string, unknown>;

/** A ReplicaSet as it reaches validation: schema and strategy defaults applied. */
function rs(spec: Obj = {}, template: Obj = {}): KubeObject {
  const r: KubeObject = {
    metadata: { name: 'web', namespace: 'ns' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { restartPolicy: 'Always', containers: [{ name: 'c', image: 'nginx:1.27' }], ...template },
      },
      ...spec,
    },
  };
  defaultReplicaSet(r);
  return r;
}

const fields = (errs: { field: string; detail?: string }[]) => errs.map((e) => `${e.field}: ${e.detail ?? ''}`);

describe('ReplicaSet defaults', () => {
  it('defaults the template as a Pod: pull policy by image tag, an empty securityContext', () => {
    const tpl = (rs().spec as { template: { spec: Obj } }).template.spec;
    expect((tpl.containers as Obj[])[0]!.imagePullPolicy).toBe('IfNotPresent');
    expect(tpl.securityContext).toEqual({});
  });
});

describe('ReplicaSet validation', () => {
  it('accepts a valid ReplicaSet', () => {
    expect(validateReplicaSet(rs())).toEqual([]);
  });
  it('refuses negative replicas and minReadySeconds', () => {
    expect(fields(validateReplicaSet(rs({ replicas: -1, minReadySeconds: -2 })))).toEqual([
      'spec.replicas: must be greater than or equal to 0',
      'spec.minReadySeconds: must be greater than or equal to 0',
    ]);
  });
  it('refuses an empty selector and a selector that does not match the template', () => {
    expect(fields(validateReplicaSet(rs({ selector: {} })))).toEqual(['spec.selector: empty selector is invalid for deployment']);
    expect(fields(validateReplicaSet(rs({ selector: { matchLabels: { app: 'other' } } })))).toEqual([
      'spec.template.metadata.labels: `selector` does not match template `labels`',
    ]);
  });
  it('checks the template as a pod spec with restartPolicy Always and no activeDeadlineSeconds', () => {
    expect(fields(validateReplicaSet(rs({}, { restartPolicy: 'OnFailure', activeDeadlineSeconds: 5 })))).toEqual([
      'spec.template.spec.restartPolicy: supported values: "Always"',
      'spec.template.spec.activeDeadlineSeconds: activeDeadlineSeconds in ReplicaSet is not Supported',
    ]);
    expect(fields(validateReplicaSet(rs({}, { containers: [] })))).toContainEqual('spec.template.spec.containers: ');
  });
  it('keeps the selector immutable but lets replicas and the template change', () => {
    const old = rs();
    expect(validateReplicaSetUpdate(rs({ replicas: 4 }, { containers: [{ name: 'c', image: 'nginx:1.28' }] }), old)).toEqual([]);
    const moved = rs({ selector: { matchLabels: { app: 'web', tier: 'x' } } });
    (moved.spec as { template: { metadata: Obj } }).template.metadata.labels = { app: 'web', tier: 'x' };
    expect(fields(validateReplicaSetUpdate(moved, old))).toEqual(['spec.selector: field is immutable']);
  });
  it('bounds the status counts by status.replicas and readyReplicas', () => {
    const withStatus = (status: Obj): KubeObject => ({ ...rs(), status });
    expect(validateReplicaSetStatusUpdate(withStatus({ replicas: 2, fullyLabeledReplicas: 2, readyReplicas: 2, availableReplicas: 1 }))).toEqual([]);
    expect(fields(validateReplicaSetStatusUpdate(withStatus({ replicas: 1, readyReplicas: 2, availableReplicas: 2, observedGeneration: -1 })))).toEqual([
      'status.observedGeneration: must be greater than or equal to 0',
      'status.readyReplicas: cannot be greater than status.replicas',
      'status.availableReplicas: cannot be greater than status.replicas',
    ]);
    expect(fields(validateReplicaSetStatusUpdate(withStatus({ replicas: 3, readyReplicas: 1, availableReplicas: 2 })))).toEqual([
      'status.availableReplicas: cannot be greater than readyReplicas',
    ]);
  });
});
