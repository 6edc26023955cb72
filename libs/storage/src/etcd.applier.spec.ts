import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MvccStore } from '@app/mvcc';
import { EtcdApplier } from './etcd.applier.js';
import { decodeEtcdCommand, encodeEtcdCommand, type EtcdCommand, type EtcdOp } from './etcd.command.js';
import { inRange, readRange, shapeRange, visibleIn } from './etcd.range.js';

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const put = (key: string, value: string, lease = '0'): EtcdOp => ({ put: { key, value: Buffer.from(value), lease } });

describe('EtcdApplier (on a real MvccStore)', () => {
  let dir: string;
  let store: MvccStore;
  let clock: number;
  let applier: EtcdApplier;
  let index: number;
  const apply = (cmd: EtcdCommand) => applier.apply(++index, decodeEtcdCommand(encodeEtcdCommand(cmd)));

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'etcd-applier-'));
    store = await MvccStore.open(dir);
    clock = 1_000_000;
    applier = new EtcdApplier(store, () => clock);
    index = 0;
  });

  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('runs a whole Txn at one revision; later ops of the Txn see its earlier writes', async () => {
    const r = await apply({ txn: { compare: [], success: [put('/a', '1'), put('/b', '2'), { range: { key: '/', end: '0' } }], failure: [] } });
    expect(r.revision).toBe(1);
    const range = r.txn!.responses[2]!;
    expect('range' in range && range.range.kvs.map((kv) => [kv.key, kv.modRevision])).toEqual([
      ['/a', 1],
      ['/b', 1],
    ]);
    expect(store.appliedIndex()).toBe(1);
  });

  it('compares MOD/VERSION/VALUE over a key and a range, choosing the branch', async () => {
    await apply({ txn: { compare: [], success: [put('/k/1', 'x'), put('/k/2', 'y')], failure: [] } });
    const r = await apply({
      txn: {
        compare: [
          { key: '/k/1', target: 'VALUE', result: 'EQUAL', value: b64('x') },
          { key: '/k/', end: '/k0', target: 'MOD', result: 'GREATER', value: 0 },
          { key: '/missing', target: 'VERSION', result: 'EQUAL', value: 0 },
        ],
        success: [put('/k/1', 'won')],
        failure: [put('/k/1', 'lost')],
      },
    });
    expect(r.txn!.succeeded).toBe(true);
    const f = await apply({
      txn: {
        compare: [{ key: '/k/1', target: 'VALUE', result: 'EQUAL', value: b64('x') }],
        success: [],
        failure: [{ del: { key: '/k/', end: '/k0', prevKv: true } }],
      },
    });
    expect(f.txn!.succeeded).toBe(false);
    const d = f.txn!.responses[0]!;
    expect('del' in d && d.del.deleted).toBe(2);
    expect((await readRange(store, { key: '/k/', end: '/k0' })).kvs).toEqual([]);
  });

  it('a failing Put (unknown lease, ignore_value of a missing key) changes nothing but advances the index', async () => {
    const r = await apply({ txn: { compare: [], success: [put('/a', '1', '42')], failure: [] } });
    expect(r.error).toEqual({ code: 'NOT_FOUND', message: 'etcdserver: requested lease not found' });
    const r2 = await apply({ txn: { compare: [], success: [{ put: { key: '/a', value: new Uint8Array(0), lease: '0', ignoreValue: true } }], failure: [] } });
    expect(r2.error?.message).toBe('etcdserver: key not found');
    expect(store.currentRevision()).toBe(0);
    expect(store.appliedIndex()).toBe(2);
  });

  it('leases: attach, keep-alive, expiry on the clock, revoke deletes the keys; reload rebuilds the table', async () => {
    await apply({ grant: { id: '7', ttl: 10 } });
    await apply({ txn: { compare: [], success: [put('/l/1', 'a', '7'), put('/l/2', 'b', '7'), put('/free', 'c')], failure: [] } });
    expect(applier.leaseOf('/l/1')).toBe('7');
    expect([...applier.lease('7')!.keys].sort()).toEqual(['/l/1', '/l/2']);
    // Lease records are invisible to etcd ranges.
    expect((await readRange(store, { key: '\u0000', end: '\u0000' })).kvs.map((kv) => kv.key)).toEqual(['/free', '/l/1', '/l/2']);
    clock += 11_000;
    expect(applier.expired()).toEqual(['7']);
    await apply({ keepalive: { id: '7' } });
    expect(applier.expired()).toEqual([]);
    const again = new EtcdApplier(store, () => clock);
    await again.ready();
    expect([...again.lease('7')!.keys].sort()).toEqual(['/l/1', '/l/2']);
    await apply({ revoke: { id: '7' } });
    expect((await readRange(store, { key: '/', end: '0' })).kvs.map((kv) => kv.key)).toEqual(['/free']);
    expect(applier.lease('7')).toBeUndefined();
    expect((await apply({ revoke: { id: '7' } })).error?.code).toBe('NOT_FOUND');
  });

  it('applies a run of entries as one batch: each sees the ones before it, one revision each', async () => {
    const cmds: EtcdCommand[] = [
      { grant: { id: '5', ttl: 30 } },
      { txn: { compare: [], success: [put('/g', '1', '5')], failure: [] } },
      {
        txn: {
          compare: [{ key: '/g', target: 'VERSION', result: 'EQUAL', value: 1 }],
          success: [{ put: { key: '/g', value: Buffer.from('2'), lease: '0', ignoreLease: true, prevKv: true } }],
          failure: [],
        },
      },
      { txn: { compare: [], success: [put('/bad', 'x', '404')], failure: [] } },
      { txn: { compare: [], success: [{ range: { key: '/', end: '0' } }], failure: [] } },
    ];
    const rs = await applier.applyMany(cmds.map((cmd) => ({ index: ++index, cmd })));
    expect(rs.map((r) => r.revision)).toEqual([1, 2, 3, 3, 3]);
    expect(rs[2]!.txn!.succeeded).toBe(true);
    expect(rs[3]!.error?.code).toBe('NOT_FOUND');
    const range = rs[4]!.txn!.responses[0]!;
    expect('range' in range && range.range.kvs.map((kv) => [kv.key, kv.version, kv.lease, Buffer.from(kv.value).toString()])).toEqual([['/g', 2, '5', '2']]);
    expect(await store.get('/g')).toMatchObject({ version: 2, modRevision: 3, createRevision: 2 });
    expect(store.appliedIndex()).toBe(5);
  });

  it('a key deleted earlier in the batch reads as absent to later entries', async () => {
    await apply({ txn: { compare: [], success: [put('/z', '1')], failure: [] } });
    const rs = await applier.applyMany([
      { index: ++index, cmd: { txn: { compare: [], success: [{ del: { key: '/z' } }], failure: [] } } },
      { index: ++index, cmd: { txn: { compare: [{ key: '/z', target: 'VERSION', result: 'EQUAL', value: 0 }], success: [put('/z', 'new')], failure: [] } } },
    ]);
    expect(rs[1]!.txn!.succeeded).toBe(true);
    expect(await store.get('/z')).toMatchObject({ version: 1, createRevision: 3 });
  });

  it("evaluates a Txn in etcd's order: nested compares against the state before it, Put checks before Range revisions", async () => {
    // The nested compare does not see the Put before it in the same Txn (etcd decides the whole
    // path first); a Range does see it.
    const r = await apply({
      txn: {
        compare: [],
        success: [
          put('/n/k', 'v1'),
          {
            txn: {
              compare: [{ key: '/n/k', target: 'VALUE', result: 'EQUAL', value: b64('v1') }],
              success: [put('/n/k2', 'yes')],
              failure: [put('/n/k2', 'no')],
            },
          },
          { range: { key: '/n/k' } },
        ],
        failure: [],
      },
    });
    expect(r.txn!.responses[1]).toMatchObject({ txn: { succeeded: false } });
    expect(Buffer.from((await store.get('/n/k2'))!.value).toString()).toBe('no');
    const seen = r.txn!.responses[2]!;
    expect('range' in seen && seen.range.kvs.map((kv) => Buffer.from(kv.value).toString())).toEqual(['v1']);
    // A Range at a future revision and an ignore_value Put of a missing key: the Put's error wins.
    const both = await apply({
      txn: {
        compare: [],
        success: [{ range: { key: '/n/k', revision: 99 } }, { put: { key: '/n/none', value: Buffer.from(''), lease: '0', ignoreValue: true } }],
        failure: [],
      },
    });
    expect(both.error).toEqual({ code: 'INVALID_ARGUMENT', message: 'etcdserver: key not found' });
    // A Put of a missing key with ignore_value and an unknown lease: a Txn reports the key, a
    // KV.Put request the lease.
    const missing: EtcdOp = { put: { key: '/n/none', value: Buffer.from(''), lease: '404', ignoreValue: true } };
    expect((await apply({ txn: { compare: [], success: [missing], failure: [] } })).error?.message).toBe('etcdserver: key not found');
    expect((await apply({ txn: { compare: [], success: [missing], failure: [], kvPut: true } })).error?.message).toBe('etcdserver: requested lease not found');
    // The revision a Txn's own writes will take is in the future for its Range.
    const own = await apply({ txn: { compare: [], success: [put('/n/x', '1'), { range: { key: '/n/x', revision: 2 } }], failure: [] } });
    expect(own.error).toEqual({ code: 'OUT_OF_RANGE', message: 'etcdserver: mvcc: required revision is a future revision' });
  });

  it('a Range at a revision written earlier in the same batch reads it, as on a replica that applied the entries one by one', async () => {
    const rs = await applier.applyMany([
      { index: ++index, cmd: { txn: { compare: [], success: [put('/h', 'one')], failure: [] } } },
      { index: ++index, cmd: { txn: { compare: [], success: [put('/h', 'two')], failure: [] } } },
      { index: ++index, cmd: { txn: { compare: [], success: [{ range: { key: '/h', revision: 1 } }, put('/h2', 'x')], failure: [] } } },
    ]);
    expect(rs.map((r) => r.error)).toEqual([undefined, undefined, undefined]);
    const at1 = rs[2]!.txn!.responses[0]!;
    expect('range' in at1 && at1.range.kvs.map((kv) => Buffer.from(kv.value).toString())).toEqual(['one']);
    expect(rs.map((r) => r.revision)).toEqual([1, 2, 3]);
    expect(store.currentRevision()).toBe(3);
  });

  it('a Range at a past revision shows the lease each key had then', async () => {
    await apply({ grant: { id: '7', ttl: 60 } });
    await apply({ txn: { compare: [], success: [put('/l', 'a', '7')], failure: [] } });
    const detached = await apply({ txn: { compare: [], success: [put('/l', 'b')], failure: [] } });
    const r = await apply({
      txn: { compare: [], success: [{ range: { key: '/l', revision: detached.revision - 1 } }, { range: { key: '/l' } }], failure: [] },
    });
    const [past, now] = r.txn!.responses;
    expect(past && 'range' in past && past.range.kvs.map((kv) => kv.lease)).toEqual(['7']);
    expect(now && 'range' in now && now.range.kvs.map((kv) => kv.lease)).toEqual(['0']);
    expect(await applier.leaseAt('/l', detached.revision - 1)).toBe('7');
    expect(await applier.leaseAt('/l', detached.revision)).toBe('0');
  });

  it("a revoke deletes the lease's keys in key order (the order of their delete events)", async () => {
    await apply({ grant: { id: '9', ttl: 60 } });
    await apply({ txn: { compare: [], success: [put('/r/z', '1', '9')], failure: [] } });
    await apply({ txn: { compare: [], success: [put('/r/a', '1', '9')], failure: [] } });
    const before = store.currentRevision();
    await apply({ revoke: { id: '9' } });
    const { events } = await store.eventsAfter(before, { prefix: '/r/' });
    expect(events.map((e) => [e.type, e.key])).toEqual([
      ['delete', '/r/a'],
      ['delete', '/r/z'],
    ]);
  });

  it('stage answers before the batch is in the store, and pendingRevision covers what it answered', async () => {
    await apply({ txn: { compare: [], success: [put('/s', '1')], failure: [] } });
    const { results, written } = await applier.stage([{ index: ++index, cmd: { txn: { compare: [], success: [put('/s', '2', '0')], failure: [] } } }]);
    expect(results[0]!.revision).toBe(2);
    // The answer is known while the write is still on its way.
    expect(store.currentRevision()).toBe(1);
    expect(applier.pendingRevision()).toBe(2);
    await written;
    expect(store.currentRevision()).toBe(2);
    expect(await store.get('/s')).toMatchObject({ version: 2, modRevision: 2 });
    expect(applier.pendingRevision()).toBe(2);
  });

  it("leaves the cluster's records out of ranges: a DeleteRange of everything keeps them, a request naming one reaches it", async () => {
    const member = '/kapi/cluster/members/n1';
    const alarm = '/kapi/cluster/alarms/1/NOSPACE';
    await apply({ txn: { compare: [], success: [put(member, '{"name":"n1"}'), put(alarm, '1'), put('/kapi/other', 'x'), put('/a', '1')], failure: [] } });
    const everything = { key: '\u0000', end: '\u0000' };
    expect((await readRange(store, everything)).kvs.map((kv) => kv.key)).toEqual(['/a', '/kapi/other']);
    expect((await readRange(store, { key: '/kapi/', end: '/kapi0' })).kvs.map((kv) => kv.key)).toEqual(['/kapi/other']);
    const all = await apply({ txn: { compare: [], success: [{ del: { key: '\u0000', end: '\u0000', prevKv: false } }], failure: [] } });
    const del = all.txn!.responses[0]!;
    expect('del' in del && del.del.deleted).toBe(2);
    expect(Buffer.from((await store.get(member))!.value).toString()).toBe('{"name":"n1"}');
    expect(await store.get(alarm)).toBeDefined();
    // By its exact key, a record is read and deleted.
    expect((await readRange(store, { key: member })).kvs.map((kv) => kv.key)).toEqual([member]);
    const one = await apply({ txn: { compare: [], success: [{ del: { key: alarm, prevKv: false } }], failure: [] } });
    const delOne = one.txn!.responses[0]!;
    expect('del' in delOne && delOne.del.deleted).toBe(1);
    expect(await store.get(alarm)).toBeUndefined();
  });

  it('a put without a lease detaches the key; a delete drops its attachment', async () => {
    await apply({ grant: { id: '9', ttl: 60 } });
    await apply({ txn: { compare: [], success: [put('/x', '1', '9'), put('/y', '1', '9')], failure: [] } });
    await apply({ txn: { compare: [], success: [put('/x', '2')], failure: [] } });
    await apply({ txn: { compare: [], success: [{ del: { key: '/y' } }], failure: [] } });
    expect(applier.leaseOf('/x')).toBe('0');
    expect([...applier.lease('9')!.keys]).toEqual([]);
  });
});

describe('etcd ranges', () => {
  it('visibleIn: lease records never, cluster records only when the range names the key alone', () => {
    expect(visibleIn('/kapi/cluster/members/n1', { key: '/kapi/cluster/members/n1' })).toBe(true);
    expect(visibleIn('/kapi/cluster/members/n1', { key: '/kapi/', end: '/kapi0' })).toBe(false);
    expect(visibleIn('/kapi/clusters', { key: '/kapi/', end: '/kapi0' })).toBe(true);
    expect(visibleIn('\u0001etcd/lease/1', { key: '\u0001etcd/lease/1' })).toBe(false);
    expect(visibleIn('/b', { key: '/a', end: '/c' })).toBe(true);
  });

  it('inRange: single key, [key, end), and everything from key with "\\0"', () => {
    expect(inRange('/a', { key: '/a' })).toBe(true);
    expect(inRange('/ab', { key: '/a' })).toBe(false);
    expect(inRange('/b', { key: '/a', end: '/c' })).toBe(true);
    expect(inRange('/c', { key: '/a', end: '/c' })).toBe(false);
    expect(inRange('/z', { key: '/a', end: '\u0000' })).toBe(true);
  });

  it('shapeRange: sort, count of the whole range (before filters and limit), keys_only, count_only', () => {
    const kv = (key: string, mod: number) => ({ key, value: Buffer.from('v'), createRevision: 1, modRevision: mod, version: 1 });
    const all = [kv('/a', 3), kv('/b', 1), kv('/c', 2)];
    const r = shapeRange(all, { key: '/', end: '0', sortTarget: 'MOD', sortOrder: 'DESCEND', limit: 2, keysOnly: true }, () => '0');
    expect(r.kvs.map((x) => x.key)).toEqual(['/a', '/c']);
    expect(r.count).toBe(3);
    expect(r.more).toBe(true);
    expect(r.kvs[0]!.value.length).toBe(0);
    expect(shapeRange(all, { key: '/', end: '0', countOnly: true }, () => '0')).toEqual({ kvs: [], count: 3, more: false });
    // The revision filters do not change the count: etcd counts the keys of the range.
    const filtered = shapeRange(all, { key: '/', end: '0', minModRevision: 2 }, () => '0');
    expect(filtered.kvs.map((x) => x.key)).toEqual(['/a', '/c']);
    expect(filtered.count).toBe(3);
    expect(shapeRange(all, { key: '/', end: '0', maxModRevision: 1, countOnly: true }, () => '0').count).toBe(3);
  });

  it('shapeRange: a sort target without an order sorts only the first limit+1 keys, as etcd reads no more', () => {
    const kv = (key: string, value: string) => ({ key, value: Buffer.from(value), createRevision: 1, modRevision: 1, version: 1 });
    const all = [kv('/a', 'x'), kv('/d', 'x'), kv('/e', '')];
    // etcd reads /a and /d, sorts them by value and keeps one: /a (not /e, the smallest value of all).
    const r = shapeRange(all, { key: '/a', end: '0', sortTarget: 'VALUE', sortOrder: 'NONE', limit: 1 }, () => '0');
    expect(r.kvs.map((x) => x.key)).toEqual(['/a']);
    expect(r).toMatchObject({ count: 3, more: true });
    // With an order, the whole range is sorted first.
    expect(shapeRange(all, { key: '/a', end: '0', sortTarget: 'VALUE', sortOrder: 'ASCEND', limit: 1 }, () => '0').kvs.map((x) => x.key)).toEqual(['/e']);
    // Without a limit, the whole range is sorted ascending.
    expect(shapeRange(all, { key: '/a', end: '0', sortTarget: 'VALUE' }, () => '0').kvs.map((x) => x.key)).toEqual(['/e', '/a', '/d']);
  });
});
