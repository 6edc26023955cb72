import type { KubeObject } from '@app/apimachinery';
import { daemonSetStrategy, defaultDaemonSet, TEMPLATE_GENERATION_ANNOTATION } from './daemonset.strategy.js';
import { validateDaemonSet, validateDaemonSetStatusUpdate, validateDaemonSetUpdate } from './daemonset.validation.js';

type Obj = Record<string, unknown>;

/** A DaemonSet as it reaches validation: schema and strategy defaults applied. */
function ds(spec: Obj = {}, template: Obj = {}): KubeObject {
  const d: KubeObject = {
    metadata: { name: 'agent', namespace: 'ns' },
    spec: {
      revisionHistoryLimit: 10,
      selector: { matchLabels: { app: 'agent' } },
      template: {
        metadata: { labels: { app: 'agent' } },
        spec: { restartPolicy: 'Always', containers: [{ name: 'c', image: 'fluentd:1' }], ...template },
      },
      ...spec,
    },
  };
  defaultDaemonSet(d);
  return d;
}

const fields = (errs: { field: string; detail?: string }[]) => errs.map((e) => `${e.field}: ${e.detail ?? ''}`);

describe('DaemonSet defaults', () => {
  it('rolls out one node at a time without surge; OnDelete gets no rollingUpdate', () => {
    expect((ds().spec as Obj).updateStrategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } });
    expect((ds({ updateStrategy: { type: 'OnDelete' } }).spec as Obj).updateStrategy).toEqual({ type: 'OnDelete' });
  });
  it('keeps the template generation in an annotation, one more on each template change', () => {
    const created = ds();
    daemonSetStrategy.prepareForCreate!(created, {} as never);
    expect(created.metadata.annotations).toEqual({ [TEMPLATE_GENERATION_ANNOTATION]: '1' });
    const same = ds({ minReadySeconds: 3 });
    daemonSetStrategy.prepareForUpdate!(same, created, {} as never);
    expect(same.metadata.annotations).toEqual({ [TEMPLATE_GENERATION_ANNOTATION]: '1' });
    const changed = ds({}, { containers: [{ name: 'c', image: 'fluentd:2' }] });
    daemonSetStrategy.prepareForUpdate!(changed, created, {} as never);
    expect(changed.metadata.annotations).toEqual({ [TEMPLATE_GENERATION_ANNOTATION]: '2' });
  });
});

describe('DaemonSet validation', () => {
  it('accepts a valid DaemonSet', () => {
    expect(validateDaemonSet(ds())).toEqual([]);
  });
  it('refuses an empty selector, a mismatching template and a restartPolicy other than Always', () => {
    expect(fields(validateDaemonSet(ds({ selector: {} })))).toEqual(['spec.selector: empty selector is invalid for daemonset']);
    expect(fields(validateDaemonSet(ds({ selector: { matchLabels: { app: 'x' } } })))).toEqual([
      'spec.template.metadata.labels: `selector` does not match template `labels`',
    ]);
    expect(fields(validateDaemonSet(ds({}, { restartPolicy: 'Never', activeDeadlineSeconds: 1 })))).toEqual([
      'spec.template.spec.restartPolicy: supported values: "Always"',
      'spec.template.spec.activeDeadlineSeconds: activeDeadlineSeconds in DaemonSet is not Supported',
    ]);
  });
  it('wants exactly one of maxUnavailable and maxSurge non-zero', () => {
    const ru = (rollingUpdate: Obj) => fields(validateDaemonSet(ds({ updateStrategy: { type: 'RollingUpdate', rollingUpdate } })));
    expect(ru({ maxUnavailable: 0, maxSurge: '10%' })).toEqual([]);
    expect(ru({ maxUnavailable: 1, maxSurge: 1 })).toEqual(['spec.updateStrategy.rollingUpdate.maxSurge: may not be set when maxUnavailable is non-zero']);
    expect(ru({ maxUnavailable: 0, maxSurge: 0 })).toEqual(['spec.updateStrategy.rollingUpdate.maxUnavailable: cannot be 0 when maxSurge is 0']);
    expect(ru({ maxUnavailable: '120%', maxSurge: 0 })).toEqual(['spec.updateStrategy.rollingUpdate.maxUnavailable: must not be greater than 100%']);
  });
  it('keeps the selector immutable and the status counts not negative', () => {
    const moved = ds({ selector: { matchLabels: { app: 'agent', tier: 'x' } } });
    (moved.spec as { template: { metadata: Obj } }).template.metadata.labels = { app: 'agent', tier: 'x' };
    expect(fields(validateDaemonSetUpdate(moved, ds()))).toEqual(['spec.selector: field is immutable']);
    const withStatus = (status: Obj): KubeObject => ({ ...ds(), status });
    expect(fields(validateDaemonSetStatusUpdate(withStatus({ numberReady: -1 }), ds()))).toEqual(['status.numberReady: must be greater than or equal to 0']);
  });
});
