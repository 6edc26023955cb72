import { LeaderElector, microTime, type LeaseLock, type LeaseRecord } from './leader-election.js';

/** An in-memory Lease with resourceVersion preconditions, like the API's optimistic concurrency. */
class MemoryLock implements LeaseLock {
  record: LeaseRecord | undefined;
  rv = 0;
  failing = false;
  async get() {
    if (this.failing) throw new Error('unavailable');
    return this.record ? { record: { ...this.record }, resourceVersion: String(this.rv) } : undefined;
  }
  async create(r: LeaseRecord) {
    if (this.failing) throw new Error('unavailable');
    if (this.record) throw new Error('AlreadyExists');
    this.record = { ...r };
    this.rv++;
  }
  async update(r: LeaseRecord, rv: string) {
    if (this.failing) throw new Error('unavailable');
    if (rv !== String(this.rv)) throw new Error('Conflict');
    this.record = { ...r };
    this.rv++;
  }
}

describe('LeaderElector', () => {
  let clock = 1_000_000;
  const now = () => clock;
  const make = (lock: LeaseLock, identity: string, log: string[]) =>
    new LeaderElector({
      lock,
      identity,
      now,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      onStartedLeading: () => log.push(`${identity}+`),
      onStoppedLeading: () => log.push(`${identity}-`),
    });

  it('one candidate acquires, the other waits a full lease duration of silence, then takes over', async () => {
    const lock = new MemoryLock();
    const log: string[] = [];
    const a = make(lock, 'n1_a', log);
    const b = make(lock, 'n2_b', log);
    await a.tick();
    await b.tick();
    expect(a.leading).toBe(true);
    expect(b.leading).toBe(false);
    expect(lock.record).toMatchObject({ holderIdentity: 'n1_a', leaseDurationSeconds: 15, leaseTransitions: 0 });
    // a renews: b keeps seeing changes and never takes over.
    for (let i = 0; i < 10; i++) {
      clock += 2_000;
      await a.tick();
      await b.tick();
    }
    expect(b.leading).toBe(false);
    const acquired = lock.record!.acquireTime;
    expect(lock.record!.renewTime).toBe(microTime(clock));
    expect(acquired).not.toBe(lock.record!.renewTime);
    // a dies (stops renewing): b waits 15 s from when it last saw a change.
    clock += 14_000;
    await b.tick();
    expect(b.leading).toBe(false);
    clock += 1_000;
    await b.tick();
    expect(b.leading).toBe(true);
    expect(lock.record).toMatchObject({ holderIdentity: 'n2_b', leaseTransitions: 1 });
    expect(log).toEqual(['n1_a+', 'n2_b+']);
  });

  it('a holder that cannot renew within the renew deadline stops leading', async () => {
    const lock = new MemoryLock();
    const log: string[] = [];
    const a = make(lock, 'n1_a', log);
    await a.tick();
    lock.failing = true;
    clock += 8_000;
    await a.tick();
    expect(a.leading).toBe(true);
    clock += 2_000;
    await a.tick();
    expect(a.leading).toBe(false);
    expect(log).toEqual(['n1_a+', 'n1_a-']);
  });

  it('a lost race (resourceVersion conflict) does not make two leaders', async () => {
    const lock = new MemoryLock();
    const a = make(lock, 'a', []);
    const b = make(lock, 'b', []);
    await Promise.all([a.tick(), b.tick()]);
    expect([a.leading, b.leading].filter(Boolean)).toHaveLength(1);
  });

  it('releases the lease on stop so a successor acquires at once', async () => {
    const lock = new MemoryLock();
    const log: string[] = [];
    const a = make(lock, 'a', log);
    const b = make(lock, 'b', log);
    await a.tick();
    await b.tick();
    await a.stop();
    expect(lock.record).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 });
    await b.tick();
    expect(b.leading).toBe(true);
    expect(log).toEqual(['a+', 'a-', 'b+']);
  });

  it('rejects a renew deadline not below the lease duration', () => {
    expect(
      () =>
        new LeaderElector({
          lock: new MemoryLock(),
          identity: 'x',
          leaseDurationMs: 5000,
          renewDeadlineMs: 5000,
          onStartedLeading() {},
          onStoppedLeading() {},
        }),
    ).toThrow(RangeError);
  });
});
