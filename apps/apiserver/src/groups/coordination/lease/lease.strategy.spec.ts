import type { RequestContext } from '@app/registry';
import { leaseStrategy } from './lease.strategy.js';

const ctx: RequestContext = { user: { username: 'u', groups: [] }, dryRun: false, warnings: [], now: () => new Date() };

describe('Lease strategy', () => {
  it('accepts a well-formed spec', () => {
    expect(leaseStrategy.validate!({ metadata: { name: 'l' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 0 } }, ctx)).toEqual([]);
  });

  it('refuses a non-positive duration, negative transitions and preferredHolder without strategy', () => {
    const errs = leaseStrategy.validateUpdate!(
      { metadata: { name: 'l' }, spec: { leaseDurationSeconds: 0, leaseTransitions: -1, preferredHolder: 'b' } },
      { metadata: { name: 'l' } },
      ctx,
    );
    expect(errs.map((e) => [e.type, e.field])).toEqual([
      ['FieldValueInvalid', 'spec.leaseDurationSeconds'],
      ['FieldValueInvalid', 'spec.leaseTransitions'],
      ['FieldValueForbidden', 'spec.preferredHolder'],
    ]);
    expect(leaseStrategy.validate!({ metadata: { name: 'l' }, spec: { preferredHolder: 'b', strategy: 'OldestEmulationVersion' } }, ctx)).toEqual([]);
  });
});
