import type { KubeObject } from '@app/apimachinery';
import { MANDATORY_PRIORITY_LEVELS } from '../flowcontrol.kinds.js';
import { validatePriorityLevelConfiguration } from './prioritylevelconfiguration.strategy.js';

const pl = (name: string, spec: Record<string, unknown>): KubeObject => ({ metadata: { name }, spec });
const msgs = (o: KubeObject, version = 'v1') => validatePriorityLevelConfiguration(o, version).map((e) => `${e.field}: ${e.detail}`);
const queue = (queuing: Record<string, unknown>) => ({ type: 'Queue', queuing });

describe('PriorityLevelConfiguration rules', () => {
  it('accepts the mandatory levels', () => {
    for (const m of MANDATORY_PRIORITY_LEVELS) expect(msgs(structuredClone(m))).toEqual([]);
  });
  it('keeps Exempt for the level named exempt and needs the right parameters per type', () => {
    expect(msgs(pl('exempt', { type: 'Limited', limited: { nominalConcurrencyShares: 1, limitResponse: { type: 'Reject' } } }))).toEqual([
      "spec.type: type must be 'Exempt' if and only if name is 'exempt'",
    ]);
    expect(msgs(pl('x', { type: 'Limited', exempt: {} }))).toEqual([
      'spec.limited: must not be empty when type is Limited',
      'spec.exempt: must be nil if the type is Limited',
    ]);
    expect(msgs(pl('x', { type: 'Fast' }))).toEqual(['spec.type: supported values: "Exempt", "Limited"']);
  });
  it('checks shares per version, percentages, and the limit response', () => {
    const limited = {
      nominalConcurrencyShares: 0,
      lendablePercent: 101,
      borrowingLimitPercent: -1,
      limitResponse: queue({ queues: 4, handSize: 5, queueLengthLimit: 0 }),
    };
    expect(msgs(pl('x', { type: 'Limited', limited }))).toEqual([
      'spec.limited.lendablePercent: must be between 0 and 100, inclusive',
      'spec.limited.borrowingLimitPercent: if specified, must be a non-negative integer',
      'spec.limited.limitResponse.queuing.queueLengthLimit: must be positive',
      'spec.limited.limitResponse.queuing.handSize: should not be greater than queues (4)',
    ]);
    expect(msgs(pl('x', { type: 'Limited', limited: { nominalConcurrencyShares: 0, limitResponse: { type: 'Reject' } } }), 'v1beta3')).toEqual([
      'spec.limited.nominalConcurrencyShares: must be positive',
    ]);
    expect(msgs(pl('x', { type: 'Limited', limited: { assuredConcurrencyShares: 0, limitResponse: { type: 'Reject', queuing: {} } } }), 'v1beta2')).toEqual([
      'spec.limited.assuredConcurrencyShares: must be positive',
      'spec.limited.limitResponse.queuing: must be nil if limited.limitResponse.type is not Limited',
    ]);
    expect(msgs(pl('x', { type: 'Limited', limited: { nominalConcurrencyShares: 1, limitResponse: { type: 'Queue' } } }))).toEqual([
      'spec.limited.limitResponse.queuing: must not be empty if the type is Queue',
    ]);
  });
});
