import type { KubeObject } from '@app/apimachinery';
import { validatePodDisruptionBudget, validatePodDisruptionBudgetStatus, validatePodDisruptionBudgetUpdate } from './pdb.validation.js';

const pdb = (spec: Record<string, unknown>, status: Record<string, unknown> = {}): KubeObject => ({ metadata: { name: 'p', namespace: 'ns' }, spec, status });
const messages = (errs: { field: string; detail?: string }[]) => errs.map((e) => `${e.field}: ${e.detail ?? ''}`);

describe('PodDisruptionBudget validation', () => {
  it('accepts a number or a percentage of minAvailable or maxUnavailable, or neither', () => {
    for (const spec of [{ minAvailable: 2 }, { minAvailable: '100%' }, { maxUnavailable: 0 }, { maxUnavailable: '25%' }, {}]) {
      expect(validatePodDisruptionBudget(pdb({ selector: { matchLabels: { app: 'a' } }, ...spec }))).toEqual([]);
    }
  });

  it('refuses both bounds, negative numbers, bad percentages and over 100%', () => {
    expect(messages(validatePodDisruptionBudget(pdb({ minAvailable: 1, maxUnavailable: 1 })))).toEqual([
      'spec: minAvailable and maxUnavailable cannot be both set',
    ]);
    expect(messages(validatePodDisruptionBudget(pdb({ minAvailable: -1 })))).toEqual(['spec.minAvailable: must be greater than or equal to 0']);
    expect(messages(validatePodDisruptionBudget(pdb({ maxUnavailable: '101%' })))).toEqual(['spec.maxUnavailable: must not be greater than 100%']);
    expect(validatePodDisruptionBudget(pdb({ maxUnavailable: 'x' }))[0]?.detail).toMatch(/^a valid percent string must be/);
  });

  it('checks the selector and the unhealthy-pod policy', () => {
    expect(messages(validatePodDisruptionBudget(pdb({ selector: { matchExpressions: [{ key: 'a', operator: 'In' }] } })))).toEqual([
      "spec.selector.matchExpressions[0].values: must be specified when `operator` is 'In' or 'NotIn'",
    ]);
    expect(messages(validatePodDisruptionBudget(pdb({ unhealthyPodEvictionPolicy: 'Sometimes' })))).toEqual([
      'spec.unhealthyPodEvictionPolicy: supported values: "AlwaysAllow", "IfHealthyBudget"',
    ]);
  });

  it('keeps accepting a selector value that is not a label value on update when the old one had it', () => {
    const odd = { selector: { matchExpressions: [{ key: 'a', operator: 'In', values: ['not a label value!'] }] } };
    expect(validatePodDisruptionBudget(pdb(odd))).not.toEqual([]);
    expect(validatePodDisruptionBudgetUpdate(pdb({ ...odd, minAvailable: 1 }), pdb(odd))).toEqual([]);
    expect(validatePodDisruptionBudgetUpdate(pdb(odd), pdb({}))).not.toEqual([]);
  });

  it('checks status counters and conditions', () => {
    const ok = { type: 'DisruptionAllowed', status: 'True', reason: 'SufficientPods', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' };
    expect(validatePodDisruptionBudgetStatus(pdb({}, { disruptionsAllowed: 1, conditions: [ok] }))).toEqual([]);
    expect(messages(validatePodDisruptionBudgetStatus(pdb({}, { disruptionsAllowed: -1, expectedPods: -2 })))).toEqual([
      'status.disruptionsAllowed: must be greater than or equal to 0',
      'status.expectedPods: must be greater than or equal to 0',
    ]);
    const bad = validatePodDisruptionBudgetStatus(pdb({}, { conditions: [ok, { ...ok, status: 'Maybe', reason: '', lastTransitionTime: undefined }] }));
    expect(bad.map((e) => `${e.type} ${e.field}`)).toEqual([
      'FieldValueDuplicate status.conditions[1].type',
      'FieldValueNotSupported status.conditions[1].status',
      'FieldValueRequired status.conditions[1].lastTransitionTime',
      'FieldValueRequired status.conditions[1].reason',
    ]);
    expect(validatePodDisruptionBudgetStatus(pdb({}, { conditions: [{ ...ok, reason: 'Not-Valid' }] }))[0]?.detail).toMatch(
      /^a condition reason must start with alphabetic character/,
    );
  });
});
