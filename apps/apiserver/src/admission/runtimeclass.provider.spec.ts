import type { KubeObject } from '@app/apimachinery';
import { admitPodRuntimeClass, mergeTolerations, toleratesSuperset, validatePodRuntimeClass } from './runtimeclass.provider.js';

const pod = (spec: Record<string, unknown>): KubeObject => ({ metadata: { name: 'p' }, spec: { containers: [{ name: 'a', image: 'x' }], ...spec } });
const rc = (fields: Record<string, unknown>): KubeObject => ({ metadata: { name: 'rc' }, handler: 'runsc', ...fields });
const tol = (t: Record<string, unknown>) => ({ key: '', operator: '', value: '', effect: '', tolerationSeconds: undefined, ...t });

describe('RuntimeClass admission: tolerations', () => {
  it('judges supersets as kube does', () => {
    // An empty key with Exists tolerates every key; an empty effect every effect.
    expect(toleratesSuperset(tol({ operator: 'Exists' }), tol({ key: 'k', operator: 'Equal', value: 'v', effect: 'NoSchedule' }))).toBe(true);
    expect(toleratesSuperset(tol({ key: 'k', operator: 'Exists' }), tol({ key: 'k', operator: 'Equal', value: 'v', effect: 'NoExecute' }))).toBe(true);
    expect(toleratesSuperset(tol({ key: 'k', operator: 'Exists', effect: 'NoSchedule' }), tol({ key: 'k', operator: 'Exists' }))).toBe(false);
    // Equal (or empty, which means Equal) covers only Equal with the same value.
    expect(toleratesSuperset(tol({ key: 'k', value: 'v' }), tol({ key: 'k', operator: 'Equal', value: 'v' }))).toBe(true);
    expect(toleratesSuperset(tol({ key: 'k', operator: 'Equal', value: 'v' }), tol({ key: 'k', operator: 'Exists' }))).toBe(false);
    // NoExecute with a bound covers only tolerations bounded at most as long.
    const bounded = tol({ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 });
    expect(toleratesSuperset(bounded, tol({ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 }))).toBe(true);
    expect(toleratesSuperset(bounded, tol({ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 90 }))).toBe(false);
    expect(toleratesSuperset(bounded, tol({ key: 'k', operator: 'Exists', effect: 'NoExecute' }))).toBe(false);
  });

  it('keeps the pod order, drops what another covers, and keeps the first of two equal ones', () => {
    const a = { key: 'a', operator: 'Equal', value: '1', effect: 'NoSchedule' };
    const b = { key: 'b', operator: 'Exists' };
    const aAll = { key: 'a', operator: 'Exists' };
    expect(mergeTolerations([a, b], [aAll])).toEqual([b, aAll]);
    expect(mergeTolerations([aAll, b], [a])).toEqual([aAll, b]);
    const same = { ...b };
    expect(mergeTolerations([b], [same])).toHaveLength(1);
    expect(mergeTolerations([b], [same])[0]).toBe(b);
    expect(mergeTolerations([], [])).toEqual([]);
  });
});

describe('RuntimeClass admission: pods', () => {
  it('leaves a pod without a class alone, and refuses an overhead without one', () => {
    const p = pod({ nodeSelector: { a: '1' } });
    expect(admitPodRuntimeClass(p, undefined)).toBeUndefined();
    expect(p.spec).toEqual(pod({ nodeSelector: { a: '1' } }).spec);
    expect(validatePodRuntimeClass(pod({ overhead: { cpu: '1' } }), undefined)).toBe(
      'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead',
    );
    expect(validatePodRuntimeClass(pod({ overhead: { cpu: '1' } }), rc({}))).toBe(
      'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead',
    );
  });

  it("sets the class's overhead, and refuses a pod whose own overhead differs", () => {
    const cls = rc({ overhead: { podFixed: { cpu: '250m', memory: '120Mi' } } });
    const p = pod({});
    expect(admitPodRuntimeClass(p, cls)).toBeUndefined();
    expect((p.spec as { overhead: unknown }).overhead).toEqual({ cpu: '250m', memory: '120Mi' });
    expect(validatePodRuntimeClass(p, cls)).toBeUndefined();
    // Equal quantities spelled differently are the same overhead.
    expect(admitPodRuntimeClass(pod({ overhead: { cpu: '0.25', memory: '120Mi' } }), cls)).toBeUndefined();
    expect(admitPodRuntimeClass(pod({ overhead: { cpu: '1' } }), cls)).toBe("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
    expect(validatePodRuntimeClass(pod({ overhead: { cpu: '1' } }), cls)).toBe("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
  });

  it('merges node selectors, refusing a key the two give different values', () => {
    const cls = rc({ scheduling: { nodeSelector: { sandbox: 'true' }, tolerations: [{ key: 'sandbox', operator: 'Exists' }] } });
    const none = pod({});
    expect(admitPodRuntimeClass(none, cls)).toBeUndefined();
    expect(none.spec).toMatchObject({ nodeSelector: { sandbox: 'true' }, tolerations: [{ key: 'sandbox', operator: 'Exists' }] });
    const some = pod({ nodeSelector: { disk: 'ssd', sandbox: 'true' } });
    expect(admitPodRuntimeClass(some, cls)).toBeUndefined();
    expect((some.spec as { nodeSelector: unknown }).nodeSelector).toEqual({ disk: 'ssd', sandbox: 'true' });
    expect(admitPodRuntimeClass(pod({ nodeSelector: { sandbox: 'no' } }), cls)).toBe(
      'conflict: runtimeClass.scheduling.nodeSelector[sandbox] = true; pod.spec.nodeSelector[sandbox] = no',
    );
  });

  it('changes nothing for a class without overhead or scheduling', () => {
    const p = pod({ tolerations: [{ key: 'a', operator: 'Exists' }], overhead: undefined });
    const before = JSON.stringify(p);
    expect(admitPodRuntimeClass(p, rc({}))).toBeUndefined();
    expect(JSON.stringify(p)).toBe(before);
  });
});
