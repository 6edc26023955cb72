import { fieldErrorMessage, type KubeObject } from '@app/apimachinery';
import { defaultDeployment } from './deployment.strategy.js';
import { scaleOf, validateScale } from './deployment.scale.js';
import { validateDeployment, validateDeploymentStatusUpdate, validateDeploymentUpdate } from './deployment.validation.js';

type Obj = Record<string, unknown>;

/** A Deployment as it reaches validation: schema and strategy defaults applied. */
function dep(spec: Obj = {}, template: Obj = {}): KubeObject {
  const d: KubeObject = {
    metadata: { name: 'web', namespace: 'ns' },
    spec: {
      replicas: 1,
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { restartPolicy: 'Always', containers: [{ name: 'c', image: 'nginx' }], ...template },
      },
      ...spec,
    },
  };
  defaultDeployment(d);
  return d;
}

describe('Deployment defaults', () => {
  it('rolls out with 25% surge and unavailability, and defaults the pull policy of template containers', () => {
    const d = dep();
    expect((d.spec as Obj).strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } });
    const tpl = (d.spec as { template: { spec: Obj } }).template.spec;
    expect(tpl.securityContext).toEqual({});
    expect((tpl.containers as Obj[])[0]!.imagePullPolicy).toBe('Always');
  });
  it('gives Recreate no rollingUpdate and keeps values that are set', () => {
    expect((dep({ strategy: { type: 'Recreate' } }).spec as Obj).strategy).toEqual({ type: 'Recreate' });
    const ru = (dep({ strategy: { rollingUpdate: { maxSurge: 1 } } }).spec as Obj).strategy;
    expect(ru).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: '25%' } });
  });
});

describe('Deployment validation', () => {
  it('accepts a defaulted Deployment', () => {
    expect(validateDeployment(dep())).toEqual([]);
  });
  it('wants a selector that selects something and matches the template labels', () => {
    // The values print as kube-apiserver prints the Go values (`%#v`).
    expect(validateDeployment(dep({ selector: {} })).map(fieldErrorMessage)).toEqual([
      'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment',
    ]);
    expect(validateDeployment(dep({ selector: { matchLabels: { app: 'other' } } })).map(fieldErrorMessage)).toEqual([
      'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`',
    ]);
  });
  it('validates the pod template at spec.template.spec and only lets it restart Always', () => {
    expect(validateDeployment(dep({}, { restartPolicy: 'Never' }))).toEqual([
      { type: 'FieldValueNotSupported', field: 'spec.template.spec.restartPolicy', value: 'Never', detail: 'supported values: "Always"' },
    ]);
    expect(validateDeployment(dep({}, { containers: [{ name: 'c' }] }))).toEqual([
      { type: 'FieldValueRequired', field: 'spec.template.spec.containers[0].image', detail: '' },
    ]);
  });
  it('checks counts and the progress deadline', () => {
    expect(validateDeployment(dep({ replicas: -1, revisionHistoryLimit: -1, minReadySeconds: 600 }))).toEqual([
      { type: 'FieldValueInvalid', field: 'spec.replicas', value: -1, detail: 'must be greater than or equal to 0' },
      { type: 'FieldValueInvalid', field: 'spec.revisionHistoryLimit', value: -1, detail: 'must be greater than or equal to 0' },
      { type: 'FieldValueInvalid', field: 'spec.progressDeadlineSeconds', value: 600, detail: 'must be greater than minReadySeconds' },
    ]);
  });
  it('applies the strategy rules', () => {
    expect(validateDeployment(dep({ strategy: { type: 'Recreate', rollingUpdate: {} } }))).toEqual([
      { type: 'FieldValueForbidden', field: 'spec.strategy.rollingUpdate', detail: "may not be specified when strategy `type` is 'Recreate'" },
    ]);
    expect(validateDeployment(dep({ strategy: { rollingUpdate: { maxUnavailable: 0, maxSurge: '0%' } } }))).toEqual([
      { type: 'FieldValueInvalid', field: 'spec.strategy.rollingUpdate.maxUnavailable', value: 0, detail: 'may not be 0 when `maxSurge` is 0' },
    ]);
    expect(validateDeployment(dep({ strategy: { rollingUpdate: { maxUnavailable: '110%', maxSurge: '200%' } } }))).toEqual([
      { type: 'FieldValueInvalid', field: 'spec.strategy.rollingUpdate.maxUnavailable', value: '110%', detail: 'must not be greater than 100%' },
    ]);
    const bad = validateDeployment(dep({ strategy: { rollingUpdate: { maxSurge: 'half' } } }));
    expect(bad).toEqual([expect.objectContaining({ field: 'spec.strategy.rollingUpdate.maxSurge', detail: expect.stringMatching(/^a valid percent string/) })]);
  });
  it('never lets the selector change', () => {
    const next = dep({ selector: { matchLabels: { app: 'web', tier: 'x' } } }, {});
    ((next.spec as { template: { metadata: Obj } }).template.metadata as Obj).labels = { app: 'web', tier: 'x' };
    expect(validateDeploymentUpdate(next, dep())).toEqual([
      { type: 'FieldValueInvalid', field: 'spec.selector', value: { matchLabels: { app: 'web', tier: 'x' } }, detail: 'field is immutable' },
    ]);
    expect(validateDeploymentUpdate(dep({ replicas: 5 }), dep())).toEqual([]);
  });
  it('validates status counts and a collision count that only grows', () => {
    const withStatus = (status: Obj): KubeObject => ({ ...dep(), status });
    expect(validateDeploymentStatusUpdate(withStatus({ replicas: 2, readyReplicas: 2, availableReplicas: 1 }), withStatus({}))).toEqual([]);
    expect(
      validateDeploymentStatusUpdate(withStatus({ replicas: 1, readyReplicas: 2, availableReplicas: 3, collisionCount: 0 }), withStatus({ collisionCount: 1 })),
    ).toEqual([
      { type: 'FieldValueInvalid', field: 'status.readyReplicas', value: 2, detail: 'cannot be greater than status.replicas' },
      { type: 'FieldValueInvalid', field: 'status.availableReplicas', value: 3, detail: 'cannot be greater than status.replicas' },
      { type: 'FieldValueInvalid', field: 'status.availableReplicas', value: 3, detail: 'cannot be greater than readyReplicas' },
      { type: 'FieldValueInvalid', field: 'status.collisionCount', value: 0, detail: 'cannot be decremented' },
    ]);
  });
});

describe('Deployment scale', () => {
  it('shows spec.replicas, status.replicas and the selector as a string', () => {
    const d = dep({ replicas: 3, selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['b', 'a'] }] } });
    d.metadata.resourceVersion = '7';
    expect(scaleOf({ ...d, status: { replicas: 2 } })).toEqual({
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      metadata: { name: 'web', namespace: 'ns', resourceVersion: '7' },
      spec: { replicas: 3 },
      status: { replicas: 2, selector: 'app=web,tier in (a,b)' },
    });
  });
  it('refuses negative replicas', () => {
    expect(validateScale({ metadata: {}, spec: { replicas: -1 } })).toEqual([
      { type: 'FieldValueInvalid', field: 'spec.replicas', value: -1, detail: 'must be greater than or equal to 0' },
    ]);
  });
});
