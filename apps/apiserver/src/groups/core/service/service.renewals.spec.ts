import { ObservedRenewals } from './service.renewals.js';

describe('ObservedRenewals', () => {
  it('expires a record only after it went the TTL unchanged on this clock, whatever it says of itself', () => {
    let now = 1_000;
    const r = new ObservedRenewals(30_000, () => now);
    // First seen: fresh, however old its own renewTime may claim to be.
    expect(r.expired('10.0.0.1:6443', '5')).toBe(false);
    now += 30_000;
    expect(r.expired('10.0.0.1:6443', '5')).toBe(false);
    now += 1;
    expect(r.expired('10.0.0.1:6443', '5')).toBe(true);
    // A renewal (a new resourceVersion) starts the count again.
    expect(r.expired('10.0.0.1:6443', '9')).toBe(false);
    now += 20_000;
    expect(r.expired('10.0.0.1:6443', '9')).toBe(false);
  });

  it('forgets removed records: one that comes back counts from when it is seen again', () => {
    let now = 0;
    const r = new ObservedRenewals(100, () => now);
    expect(r.expired('a', '1')).toBe(false);
    expect(r.expired('b', '2')).toBe(false);
    now = 500;
    r.retain(new Set(['b']));
    expect(r.expired('a', '1')).toBe(false);
    expect(r.expired('b', '2')).toBe(true);
  });
});
