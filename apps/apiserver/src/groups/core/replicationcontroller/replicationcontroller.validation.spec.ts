import type { KubeObject } from '@app/apimachinery';
import { mapSelectorString, scaleOf } from '../../apps/deployment/deployment.scale.js';
import { defaultReplicationController } from './replicationcontroller.strategy.js';
import { validateReplicationController, validateReplicationControllerStatusUpdate } from './replicationcontroller.validation.js';

type Obj = Record<string, unknown>;

/** A ReplicationController as it reaches validation: schema and strategy defaults applied. */
function rc(spec: Obj = {}, template: Obj = {}, labels: Obj = { app: 'web' }): KubeObject {
  const r: KubeObject = {
    metadata: { name: 'web', namespace: 'ns' },
    spec: {
      replicas: 1,
      template: { metadata: { labels }, spec: { restartPolicy: 'Always', containers: [{ name: 'c', image: 'nginx:1.27' }], ...template } },
      ...spec,
    },
  };
  defaultReplicationController(r);
  return r;
}

const fields = (errs: { field: string; detail?: string }[]) => errs.map((e) => `${e.field}: ${e.detail ?? ''}`);

describe('ReplicationController defaults', () => {
  it('takes an empty selector and empty object labels from the template labels', () => {
    const r = rc();
    expect(r.spec).toMatchObject({ selector: { app: 'web' } });
    expect(r.metadata.labels).toEqual({ app: 'web' });
    expect(((r.spec as { template: { spec: { containers: Obj[] } } }).template.spec.containers[0] as Obj).imagePullPolicy).toBe('IfNotPresent');
  });
  it('keeps a selector and labels the object has', () => {
    const r: KubeObject = {
      metadata: { name: 'x', labels: { own: 'yes' } },
      spec: { selector: { app: 'a' }, template: { metadata: { labels: { app: 'a', v: '1' } } } },
    };
    defaultReplicationController(r);
    expect(r.spec).toMatchObject({ selector: { app: 'a' } });
    expect(r.metadata.labels).toEqual({ own: 'yes' });
  });
});

describe('ReplicationController validation', () => {
  it('accepts a valid one', () => {
    expect(validateReplicationController(rc())).toEqual([]);
  });
  it('requires a selector and a template', () => {
    expect(fields(validateReplicationController({ metadata: { name: 'x' }, spec: { replicas: 1 } }))).toEqual(['spec.selector: ', 'spec.template: ']);
  });
  it('refuses negative counts, a selector the template does not match, another restart policy and a deadline', () => {
    const errs = validateReplicationController(
      rc({ replicas: -1, minReadySeconds: -1, selector: { app: 'other' } }, { restartPolicy: 'Never', activeDeadlineSeconds: 5 }),
    );
    expect(fields(errs)).toEqual([
      'spec.minReadySeconds: must be greater than or equal to 0',
      'spec.replicas: must be greater than or equal to 0',
      'spec.template.metadata.labels: `selector` does not match template `labels`',
      'spec.template.spec.restartPolicy: supported values: "Always"',
      'spec.template.spec.activeDeadlineSeconds: must not be specified',
    ]);
  });
  it('validates the template as a Pod, at its path', () => {
    expect(fields(validateReplicationController(rc({}, { containers: [{ name: 'Bad_Name', image: 'x' }] })))[0]).toMatch(
      /^spec\.template\.spec\.containers\[0\]\.name: /,
    );
  });
  it('checks status counts against each other', () => {
    const r = rc();
    r.status = { replicas: 1, readyReplicas: 2, availableReplicas: 3, observedGeneration: -1 };
    expect(fields(validateReplicationControllerStatusUpdate(r))).toEqual([
      'status.observedGeneration: must be greater than or equal to 0',
      'status.readyReplicas: cannot be greater than status.replicas',
      'status.availableReplicas: cannot be greater than status.replicas',
      'status.availableReplicas: cannot be greater than readyReplicas',
    ]);
  });
});

describe('ReplicationController scale', () => {
  it('prints the map selector sorted by key, as labels.SelectorFromSet does', () => {
    const r = rc({ selector: { tier: 'web', app: 'x' } }, {}, { app: 'x', tier: 'web' });
    expect(mapSelectorString(r)).toBe('app=x,tier=web');
    expect(scaleOf(r, mapSelectorString)).toMatchObject({ kind: 'Scale', spec: { replicas: 1 }, status: { replicas: 0, selector: 'app=x,tier=web' } });
  });
});
