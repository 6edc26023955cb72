import type { KubeObject } from '@app/apimachinery';
import { defaultLimitRange } from '../groups/core/limitrange/limitrange.strategy.js';
import { aggregate, claimViolations, defaultPodResources, LIMIT_RANGER_ANNOTATION, podTotals, podViolations } from './limit-ranger.provider.js';

const lr = (...limits: Record<string, unknown>[]): KubeObject => ({ metadata: { name: 'lr' }, spec: { limits } });
const container = (name: string, resources?: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  name,
  image: 'x',
  ...(resources ? { resources } : {}),
  ...extra,
});
const pod = (containers: unknown[], initContainers?: unknown[]): KubeObject => ({
  metadata: { name: 'p' },
  spec: { containers, ...(initContainers ? { initContainers } : {}) },
});

describe('LimitRanger admission', () => {
  it("gives containers the defaults they lack and says so in the pod's annotation", () => {
    const p = pod([container('a'), container('b', { limits: { cpu: '2' } })], [container('i')]);
    defaultPodResources(p, lr({ type: 'Container', default: { cpu: '500m', memory: '128Mi' }, defaultRequest: { cpu: '100m' } }));
    const [a, b] = (p.spec as { containers: Array<{ resources: unknown }> }).containers;
    expect(a!.resources).toEqual({ limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '100m' } });
    expect(b!.resources).toEqual({ limits: { cpu: '2', memory: '128Mi' }, requests: { cpu: '100m' } });
    expect((p.metadata.annotations as Record<string, string> | undefined)?.[LIMIT_RANGER_ANNOTATION]).toBe(
      'LimitRanger plugin set: cpu request for container a; cpu, memory limit for container a; cpu request for container b; memory limit for container b; cpu request for init container i; cpu, memory limit for init container i',
    );
    const none = pod([container('a')]);
    defaultPodResources(none, lr({ type: 'Pod', max: { cpu: '1' } }));
    expect(none.metadata.annotations).toBeUndefined();
  });

  it('checks each container against min, max and the limit to request ratio, with Kubernetes messages', () => {
    const range = lr({ type: 'Container', min: { cpu: '100m' }, max: { cpu: '1' }, maxLimitRequestRatio: { cpu: '2' } });
    expect(podViolations(pod([container('a', { requests: { cpu: '200m' }, limits: { cpu: '300m' } })]), range)).toEqual([]);
    expect(podViolations(pod([container('a', { requests: { cpu: '50m' }, limits: { cpu: '2' } })]), range)).toEqual([
      'minimum cpu usage per Container is 100m, but request is 50m',
      'maximum cpu usage per Container is 1, but limit is 2',
      'cpu max limit to request ratio per Container is 2, but provided ratio is 40.000000',
    ]);
    expect(podViolations(pod([container('a')]), range)).toEqual([
      'minimum cpu usage per Container is 100m.  No request is specified',
      'maximum cpu usage per Container is 1.  No limit is specified',
      'cpu max limit to request ratio per Container is 2, but no request is specified or request is 0',
    ]);
  });

  it('sums a pod: containers and sidecars, or the largest init container with the sidecars before it', () => {
    const p = pod(
      [container('a', { requests: { cpu: '100m' } }), container('b', { requests: { cpu: '200m', memory: '1Gi' } })],
      [container('side', { requests: { cpu: '50m' } }, { restartPolicy: 'Always' }), container('init', { requests: { cpu: '1', memory: '100Mi' } })],
    );
    const totals = podTotals(p, 'requests');
    expect(totals.get('cpu')!.toString()).toBe('1050m');
    expect(totals.get('memory')!.toString()).toBe('1Gi');
    expect(podViolations(p, lr({ type: 'Pod', max: { cpu: '1' } }))).toEqual(['maximum cpu usage per Pod is 1.  No limit is specified']);
    expect(podViolations(p, lr({ type: 'Pod', min: { cpu: '2' } }))).toEqual(['minimum cpu usage per Pod is 2, but request is 1050m']);
  });

  it("checks a claim's storage request against min and max", () => {
    const range = lr({ type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '10Gi' } });
    const claim = (storage: string): KubeObject => ({ metadata: { name: 'c' }, spec: { resources: { requests: { storage } } } });
    expect(claimViolations(claim('5Gi'), range)).toEqual([]);
    expect(claimViolations(claim('500Mi'), range)).toEqual(['minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi']);
    expect(claimViolations(claim('20Gi'), range)).toEqual(['maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi']);
  });

  it('joins several violations as an aggregate does', () => {
    expect(aggregate(['a'])).toBe('a');
    expect(aggregate(['a', 'b', 'a'])).toBe('[a, b]');
  });

  it('defaults Container items from max and min, as Kubernetes does', () => {
    const range = lr(
      { type: 'Container', max: { cpu: '1', memory: '1Gi' }, min: { memory: '64Mi' }, default: { memory: '512Mi' } },
      { type: 'Pod', max: { cpu: '4' } },
    );
    defaultLimitRange(range);
    const [c, p] = (range.spec as { limits: Array<Record<string, unknown>> }).limits;
    expect(c!.default).toEqual({ memory: '512Mi', cpu: '1' });
    expect(c!.defaultRequest).toEqual({ memory: '512Mi', cpu: '1' });
    expect(p!.default).toBeUndefined();
    const minOnly = lr({ type: 'Container', min: { cpu: '100m' } });
    defaultLimitRange(minOnly);
    expect((minOnly.spec as { limits: Array<Record<string, unknown>> }).limits[0]).toEqual({
      type: 'Container',
      min: { cpu: '100m' },
      defaultRequest: { cpu: '100m' },
    });
  });
});
