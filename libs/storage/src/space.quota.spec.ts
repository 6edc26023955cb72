import type { TxnCommand } from '@app/mvcc';
import type { EtcdCommand } from './etcd.command.js';
import {
  ALARM_PREFIX,
  LEASE_GRANT_BYTES,
  PUT_OVERHEAD_BYTES,
  SpaceQuota,
  etcdCommandCost,
  onlyClusterRecords,
  parseAlarmKey,
  txnCommandCost,
  type QuotaStore,
} from './space.quota.js';
import { StorageError } from './storage.interface.js';

const bytes = (n: number): Uint8Array => new Uint8Array(n);

/** A store of keys that tells its subscribers about puts and deletes, and a quota on it whose writes land there. */
function setup(quotaBytes: number, size: number) {
  const keys = new Set<string>();
  const listeners = new Set<(e: { key: string; type: 'put' | 'delete' }) => void>();
  const store: QuotaStore = {
    subscribe: (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    onReset: () => () => undefined,
    range: async (prefix) => ({ kvs: [...keys].filter((k) => k.startsWith(prefix)).map((key) => ({ key })) }),
  };
  const writes: TxnCommand[] = [];
  const raised: number[] = [];
  let current = size;
  const quota = new SpaceQuota({
    quotaBytes,
    selfId: 7,
    sizeOf: async () => current,
    store,
    write: async (command) => {
      writes.push(command);
      for (const op of command.success) {
        if (op.type === 'put') keys.add(op.key);
        if (op.type === 'delete') keys.delete(op.key);
        for (const l of listeners) l({ key: op.key, type: op.type === 'put' ? 'put' : 'delete' });
      }
    },
    onRaise: (s) => raised.push(s),
  });
  return {
    quota,
    writes,
    raised,
    keys,
    setSize: (n: number) => (current = n),
    /** A put of another member's alarm record, as applying it from the log would tell. */
    applied: (key: string, type: 'put' | 'delete') => {
      if (type === 'put') keys.add(key);
      else keys.delete(key);
      for (const l of listeners) l({ key, type });
    },
  };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('space quota', () => {
  it('costs a command the bytes its larger branch puts; deletes, gets, compaction and the cluster records cost nothing', () => {
    const put = (key: string, n: number) => ({ type: 'put' as const, key, value: bytes(n) });
    expect(txnCommandCost({ compares: [], success: [put('/registry/a', 100), { type: 'delete', key: '/x' }], failure: [] })).toBe(
      11 + 100 + PUT_OVERHEAD_BYTES,
    );
    expect(txnCommandCost({ compares: [], success: [put('/a', 10)], failure: [put('/b', 10), put('/c', 10)] })).toBe(2 * (2 + 10 + PUT_OVERHEAD_BYTES));
    expect(
      txnCommandCost({
        compares: [],
        success: [
          { type: 'delete', key: '/a' },
          { type: 'get', key: '/b' },
        ],
        failure: [],
      }),
    ).toBe(0);
    expect(txnCommandCost({ compares: [], success: [], failure: [], compact: 5 })).toBe(0);
    expect(txnCommandCost({ compares: [], success: [put('/kapi/cluster/members/n1', 500)], failure: [] })).toBe(0);

    const ePut = (key: string, n: number) => ({ put: { key, value: bytes(n), lease: '0' } });
    const nested: EtcdCommand = {
      txn: { compare: [], success: [ePut('k', 5), { txn: { compare: [], success: [ePut('kk', 7)], failure: [] } }], failure: [{ del: { key: 'k' } }] },
    };
    expect(etcdCommandCost(nested)).toBe(1 + 5 + 2 + 7 + 2 * PUT_OVERHEAD_BYTES);
    expect(etcdCommandCost({ txn: { compare: [], success: [{ del: { key: 'a', end: '\u0000' } }, { range: { key: 'a' } }], failure: [] } })).toBe(0);
    expect(etcdCommandCost({ grant: { id: '1', ttl: 5 } })).toBe(LEASE_GRANT_BYTES);
    expect(etcdCommandCost({ revoke: { id: '1' } })).toBe(0);
    expect(etcdCommandCost({ keepalive: { id: '1' } })).toBe(0);
  });

  it('tells commands that touch only the cluster records', () => {
    const del = (key: string) => ({ type: 'delete' as const, key });
    expect(onlyClusterRecords({ compares: [], success: [del('/kapi/cluster/alarms/1/NOSPACE')], failure: [] })).toBe(true);
    expect(onlyClusterRecords({ compares: [], success: [del('/kapi/cluster/alarms/1/NOSPACE')], failure: [del('/registry/a')] })).toBe(false);
    expect(onlyClusterRecords({ compares: [{ key: '/registry/a', target: 'absent' }], success: [del('/kapi/cluster/x')], failure: [] })).toBe(false);
    expect(onlyClusterRecords({ compares: [], success: [], failure: [], compact: 2 })).toBe(false);
  });

  it('reads alarm records by member id and name only', () => {
    expect(parseAlarmKey(`${ALARM_PREFIX}12/NOSPACE`)).toEqual({ memberId: 12, alarm: 'NOSPACE' });
    expect(parseAlarmKey(`${ALARM_PREFIX}12/CORRUPT`)).toEqual({ memberId: 12, alarm: 'CORRUPT' });
    expect(parseAlarmKey(`${ALARM_PREFIX}12/NONE`)).toBeUndefined();
    expect(parseAlarmKey(`${ALARM_PREFIX}x/NOSPACE`)).toBeUndefined();
    expect(parseAlarmKey(`${ALARM_PREFIX}12/NOSPACE/more`)).toBeUndefined();
    expect(parseAlarmKey('/kapi/cluster/members/12')).toBeUndefined();
  });

  it('over its quota, refuses a write that adds data and raises its own alarm once; deletes go on', async () => {
    const t = setup(1000, 950);
    await t.quota.start();
    try {
      t.quota.check(40); // 990: under the quota
      let refused: unknown;
      try {
        t.quota.check(100);
      } catch (e) {
        refused = e;
      }
      expect(refused).toBeInstanceOf(StorageError);
      expect(refused).toMatchObject({ code: 'NoSpace' });
      expect((refused as Error).message).toMatch(/^etcdserver: mvcc: database space exceeded/);
      expect(() => t.quota.check(200)).toThrow(/database space exceeded/);
      t.quota.check(0); // a delete
      await settle();
      // One alarm write, however many writes were refused meanwhile.
      expect(t.writes).toHaveLength(1);
      expect(t.raised).toEqual([950]);
      expect(t.quota.list()).toEqual([{ memberId: 7, alarm: 'NOSPACE' }]);
      // With the alarm raised even a small write is refused.
      expect(() => t.quota.check(10)).toThrow(/database space exceeded/);
    } finally {
      t.quota.stop();
    }
  });

  it("another member's alarm refuses writes here until it is disarmed; disarmed over the quota, the next write raises again", async () => {
    const t = setup(1000, 100);
    await t.quota.start();
    try {
      t.quota.check(500);
      t.applied(`${ALARM_PREFIX}9/NOSPACE`, 'put');
      expect(t.quota.noSpace()).toBe(true);
      expect(() => t.quota.check(500)).toThrow(/database space exceeded/);
      // A CORRUPT alarm refuses every write, deletes and compaction too, but the cluster's own records.
      t.applied(`${ALARM_PREFIX}9/NOSPACE`, 'delete');
      t.quota.check(500);
      t.applied(`${ALARM_PREFIX}9/CORRUPT`, 'put');
      const corrupt = (f: () => void): unknown => {
        try {
          f();
        } catch (e) {
          return e;
        }
        return undefined;
      };
      expect(corrupt(() => t.quota.check(500))).toMatchObject({ code: 'Corrupt', message: expect.stringMatching(/^etcdserver: corrupt cluster/) });
      expect(corrupt(() => t.quota.checkTxn({ compares: [], success: [{ type: 'delete', key: '/registry/x' }], failure: [] }))).toMatchObject({
        code: 'Corrupt',
      });
      expect(corrupt(() => t.quota.checkTxn({ compares: [], success: [], failure: [], compact: 3 }))).toMatchObject({ code: 'Corrupt' });
      expect(corrupt(() => t.quota.checkEtcd({ revoke: { id: '5' } }))).toMatchObject({ code: 'Corrupt' });
      t.quota.checkTxn({ compares: [], success: [{ type: 'put', key: '/kapi/cluster/members/n1', value: bytes(10) }], failure: [] });
      await t.quota.deactivate({ memberId: 9, alarm: 'CORRUPT' });
      t.quota.checkTxn({ compares: [], success: [{ type: 'delete', key: '/registry/x' }], failure: [] });
      expect(t.quota.list()).toEqual([]);

      // Disarmed while the store is still too large: the next write that adds data raises it again.
      t.setSize(2000);
      await t.quota.sample();
      expect(() => t.quota.check(1)).toThrow(/database space exceeded/);
      await settle();
      expect(t.quota.list()).toEqual([{ memberId: 7, alarm: 'NOSPACE' }]);
      t.setSize(10);
      await t.quota.deactivate({ memberId: 7, alarm: 'NOSPACE' });
      t.quota.check(500);
    } finally {
      t.quota.stop();
    }
  });

  it('settles a refusal once its alarm is raised; a raise that failed is retried by the next sample while the store is over its quota', async () => {
    const t = setup(1000, 2000);
    let failing = true;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const quota = new SpaceQuota({
      quotaBytes: 1000,
      selfId: 7,
      sizeOf: async () => 2000,
      store: { subscribe: () => () => undefined, onReset: () => () => undefined, range: async () => ({ kvs: [] }) },
      write: async () => {
        await gate;
        if (failing) throw new Error('no leader');
      },
      onRaise: (s) => t.raised.push(s),
    });
    await quota.start();
    try {
      expect(() => quota.check(1)).toThrow(/database space exceeded/);
      let settled = false;
      const s = quota.alarmSettled().then(() => (settled = true));
      await settle();
      expect(settled).toBe(false);
      release();
      await s;
      // The raise failed: nothing listed, nothing to wait for.
      expect(quota.list()).toEqual([]);
      await quota.alarmSettled();
      // The next sample, still over the quota, raises again (reported once).
      failing = false;
      await quota.sample();
      await quota.alarmSettled();
      expect(quota.list()).toEqual([{ memberId: 7, alarm: 'NOSPACE' }]);
      expect(t.raised).toEqual([2000]);
    } finally {
      quota.stop();
      t.quota.stop();
    }
  });

  it('loads the alarms already applied when it starts; without a quota it refuses only for a raised alarm', async () => {
    const t = setup(0, 1e12);
    t.keys.add(`${ALARM_PREFIX}3/NOSPACE`);
    await t.quota.start();
    try {
      expect(t.quota.list()).toEqual([{ memberId: 3, alarm: 'NOSPACE' }]);
      expect(() => t.quota.check(1)).toThrow(/database space exceeded/);
      await t.quota.deactivate({ memberId: 3, alarm: 'NOSPACE' });
      t.quota.check(1e9);
      await settle();
      expect(t.writes).toHaveLength(1);
    } finally {
      t.quota.stop();
    }
  });
});
