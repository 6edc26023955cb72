import { StatusError, type KubeObject } from '@app/apimachinery';
import { decrementedBudget } from './pod.eviction.js';

const NOW = new Date('2026-12-01T12:00:00Z');
const pdb = (status: Record<string, unknown>, generation = 2): KubeObject => ({
  metadata: { name: 'web', namespace: 'ns', generation, resourceVersion: '7' },
  spec: {},
  status,
});
const refusal = (f: () => unknown): StatusError => {
  try {
    f();
  } catch (e) {
    return e as StatusError;
  }
  throw new Error('not refused');
};

describe('spending a disruption budget (checkAndDecrement)', () => {
  it('spends one disruption and records the pod, keeping the resourceVersion the write is conditional on', () => {
    const next = decrementedBudget(pdb({ observedGeneration: 2, disruptionsAllowed: 2, currentHealthy: 3, desiredHealthy: 1 }), 'p1', NOW, false)!;
    expect(next.metadata.resourceVersion).toBe('7');
    expect(next.status).toMatchObject({ disruptionsAllowed: 1, disruptedPods: { p1: '2026-12-01T12:00:00Z' } });
    expect((next.status as Record<string, unknown>).conditions).toBeUndefined();
  });

  it('sets the condition False when the last disruption is spent', () => {
    const next = decrementedBudget(pdb({ observedGeneration: 2, disruptionsAllowed: 1, disruptedPods: { p0: '2026-12-01T11:59:00Z' } }), 'p1', NOW, false)!;
    expect(next.status).toMatchObject({ disruptionsAllowed: 0, disruptedPods: { p0: '2026-12-01T11:59:00Z', p1: '2026-12-01T12:00:00Z' } });
    expect((next.status as { conditions: unknown[] }).conditions).toEqual([
      expect.objectContaining({ type: 'DisruptionAllowed', status: 'False', reason: 'InsufficientPods' }),
    ]);
  });

  it('writes nothing on a dry run', () => {
    expect(decrementedBudget(pdb({ observedGeneration: 2, disruptionsAllowed: 1 }), 'p1', NOW, true)).toBeUndefined();
  });

  it('answers 429 while the status is older than the spec or no disruption is left, 403 when the status is broken', () => {
    const stale = refusal(() => decrementedBudget(pdb({ observedGeneration: 1, disruptionsAllowed: 5 }), 'p1', NOW, false));
    expect(stale.toStatus()).toMatchObject({
      code: 429,
      details: {
        retryAfterSeconds: 10,
        causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget web is still being processed by the server.' }],
      },
    });
    const none = refusal(() =>
      decrementedBudget(pdb({ observedGeneration: 2, disruptionsAllowed: 0, desiredHealthy: 3, currentHealthy: 3 }), 'p1', NOW, false),
    );
    expect(none.toStatus()).toMatchObject({ code: 429, message: "Cannot evict pod as it would violate the pod's disruption budget." });
    expect(none.toStatus().details).toEqual({
      causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget web needs 3 healthy pods and has 3 currently' }],
    });
    const negative = refusal(() => decrementedBudget(pdb({ observedGeneration: 2, disruptionsAllowed: -1 }), 'p1', NOW, false));
    expect(negative.toStatus()).toMatchObject({ code: 403, message: 'poddisruptionbudget.policy "web" is forbidden: pdb disruptions allowed is negative' });
    const full = Object.fromEntries(Array.from({ length: 2001 }, (_, i) => [`p${i}`, '2026-12-01T11:59:00Z']));
    expect(refusal(() => decrementedBudget(pdb({ observedGeneration: 2, disruptionsAllowed: 1, disruptedPods: full }), 'x', NOW, false)).code).toBe(403);
  });
});
