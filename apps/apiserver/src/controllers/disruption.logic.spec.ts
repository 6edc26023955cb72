import type { KubeObject } from '@app/apimachinery';
import { computeBudgetStatus, failSafeStatus, scaledValue, statusChanged, type ScaleFinder } from './disruption.logic.js';

const NOW = new Date('2026-12-01T12:00:00Z');
type Obj = Record<string, unknown>;

const pdb = (spec: Obj, status: Obj = {}, generation = 1): KubeObject => ({
  metadata: { name: 'b', namespace: 'ns', generation },
  spec: { selector: { matchLabels: { app: 'a' } }, ...spec },
  status,
});
const pod = (name: string, opts: { ready?: boolean; labels?: Record<string, string>; owner?: string; deleting?: boolean; ns?: string } = {}): KubeObject => ({
  metadata: {
    name,
    namespace: opts.ns ?? 'ns',
    labels: opts.labels ?? { app: 'a' },
    ...(opts.owner ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: opts.owner, uid: `uid-${opts.owner}`, controller: true }] } : {}),
    ...(opts.deleting ? { deletionTimestamp: '2026-12-01T11:59:00Z' } : {}),
  },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }] },
});
/** Finds ReplicaSets rs1 (scale 5) and rs2 (scale 3). */
const finder: ScaleFinder = async (ref) => ({ rs1: { uid: 'uid-rs1', replicas: 5 }, rs2: { uid: 'uid-rs2', replicas: 3 } })[ref.name];
const statusOf = async (b: KubeObject, pods: KubeObject[]) => {
  const r = await computeBudgetStatus(b, pods, [finder], NOW);
  if ('error' in r) throw new Error(r.error);
  return r;
};

describe('the disruption controller computation', () => {
  it('counts selected ready pods against an integer minAvailable', async () => {
    const { status } = await statusOf(pdb({ minAvailable: 2 }), [
      pod('p1'),
      pod('p2'),
      pod('p3', { ready: false }),
      pod('p4'),
      pod('x', { labels: { app: 'b' } }),
      pod('y', { ns: 'other' }),
    ]);
    expect(status).toMatchObject({ expectedPods: 4, desiredHealthy: 2, currentHealthy: 3, disruptionsAllowed: 1, observedGeneration: 1 });
    expect(status.conditions).toEqual([
      { type: 'DisruptionAllowed', status: 'True', reason: 'SufficientPods', message: '', observedGeneration: 1, lastTransitionTime: '2026-12-01T12:00:00Z' },
    ]);
    expect('disruptedPods' in status).toBe(false);
  });

  it('selects nothing with a null selector and every pod with an empty one', async () => {
    expect((await statusOf(pdb({ minAvailable: 0, selector: null }), [pod('p1')])).status).toMatchObject({ expectedPods: 0, disruptionsAllowed: 0 });
    expect((await statusOf(pdb({ minAvailable: 0, selector: {} }), [pod('p1', { labels: {} })])).status).toMatchObject({
      expectedPods: 1,
      disruptionsAllowed: 1,
    });
  });

  it('uses the sum of the controllers’ scales for percentages and maxUnavailable, rounding up', async () => {
    const pods = [pod('a', { owner: 'rs1' }), pod('b', { owner: 'rs1' }), pod('c', { owner: 'rs2' }), pod('d')];
    expect((await statusOf(pdb({ minAvailable: '50%' }), pods)).status).toMatchObject({
      expectedPods: 8,
      desiredHealthy: 4,
      currentHealthy: 4,
      disruptionsAllowed: 0,
    });
    expect((await statusOf(pdb({ maxUnavailable: '10%' }), pods)).status).toMatchObject({ expectedPods: 8, desiredHealthy: 7, disruptionsAllowed: 0 });
    expect((await statusOf(pdb({ maxUnavailable: 6 }), pods)).status).toMatchObject({ desiredHealthy: 2, disruptionsAllowed: 2 });
    expect((await statusOf(pdb({ maxUnavailable: 20 }), pods)).status).toMatchObject({ desiredHealthy: 0, disruptionsAllowed: 4 });
  });

  it('reports a pod whose controller is not found', async () => {
    const r = await computeBudgetStatus(pdb({ maxUnavailable: 1 }), [pod('a', { owner: 'gone' })], [finder], NOW);
    expect(r).toEqual({ error: 'found no controllers for pod "a"' });
    const safe = failSafeStatus(pdb({}, { disruptionsAllowed: 3, observedGeneration: 1 }), 'found no controllers for pod "a"', NOW);
    expect(safe).toMatchObject({ disruptionsAllowed: 0, observedGeneration: 1 });
    expect(safe.conditions).toEqual([expect.objectContaining({ status: 'False', reason: 'SyncFailed', message: 'found no controllers for pod "a"' })]);
  });

  it('keeps recent disruptedPods out of the count, drops expired ones and those of pods gone or terminating', async () => {
    const disruptedPods = { p1: '2026-12-01T11:59:30Z', p2: '2026-12-01T11:57:00Z', p3: '2026-12-01T11:59:50Z', gone: '2026-12-01T11:59:59Z' };
    const r = await statusOf(pdb({ minAvailable: 1 }, { disruptedPods }), [pod('p1'), pod('p2'), pod('p3', { deleting: true }), pod('p4')]);
    expect(r.status.disruptedPods).toEqual({ p1: '2026-12-01T11:59:30Z' });
    expect(r.status).toMatchObject({ currentHealthy: 2, disruptionsAllowed: 1 });
    expect(r.recheckAt).toBe(Date.parse('2026-12-01T12:01:30Z'));
  });

  it('keeps the condition’s transition time while its status holds, and writes only changes', async () => {
    const first = (await statusOf(pdb({ minAvailable: 1 }), [pod('p1'), pod('p2')])).status;
    const later = new Date(NOW.getTime() + 60_000);
    const again = await computeBudgetStatus(pdb({ minAvailable: 1 }, first), [pod('p1'), pod('p2')], [finder], later);
    expect('status' in again && again.status).toEqual(first);
    expect(statusChanged(pdb({ minAvailable: 1 }, first), first)).toBe(false);
    const fewer = await computeBudgetStatus(pdb({ minAvailable: 1 }, first), [pod('p1')], [finder], later);
    expect('status' in fewer && (fewer.status.conditions as Obj[])[0]).toMatchObject({
      status: 'False',
      reason: 'InsufficientPods',
      lastTransitionTime: '2026-12-01T12:01:00Z',
    });
  });

  it('scales percentages as Kubernetes does', () => {
    expect(scaledValue(3, 10)).toBe(3);
    expect(scaledValue('25%', 10)).toBe(3);
    expect(scaledValue('0%', 10)).toBe(0);
    expect(() => scaledValue('x', 10)).toThrow('invalid value for IntOrString');
  });
});
