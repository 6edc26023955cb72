import type { KubeObject } from '@app/apimachinery';
import { startEtcd, type EtcdCluster } from '../../../test/support/etcd.js';
import { prerequisite } from '../../../test/support/prereq.js';
import { Etcd3Client, Etcd3Error } from './etcd3.client.js';
import { Etcd3Compactor } from './etcd3.compactor.js';
import { Etcd3Storage } from './etcd3.storage.js';
import { CorruptListError, NO_CHANGE, StorageError, type StorageEvent } from './storage.interface.js';

// Against a real etcd (Debian's etcd-server), one member on loopback.
let etcd: EtcdCluster;
// false only when the run opted out of etcd (KAPI_TEST_WITHOUT=etcd): recorded, tests return at once.
let haveEtcd = false;
const opened: Etcd3Storage[] = [];

async function open(prefix?: string, extra: { compactionIntervalMs?: number; freezeSharedEvents?: boolean } = {}): Promise<Etcd3Storage> {
  const s = await new Etcd3Storage(new Etcd3Client({ endpoints: etcd.servers.split(',') }), {
    prefix,
    compactionIntervalMs: extra.compactionIntervalMs ?? 0,
    freezeSharedEvents: extra.freezeSharedEvents ?? false,
    watchProgressIntervalMs: 200,
    revisionWaitMs: 500,
  }).open();
  opened.push(s);
  return s;
}

const cm = (name: string, data: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns' },
  data,
});

async function waitFor<T>(what: string, f: () => T | undefined): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = f();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

beforeAll(async () => {
  haveEtcd = prerequisite('etcd', 'Etcd3Storage against a real etcd (libs/storage/src/etcd3.storage.spec.ts)');
  if (!haveEtcd) return;
  etcd = await startEtcd({ members: 1 });
}, 60_000);

afterAll(async () => {
  for (const s of opened) await s.close();
  await etcd?.cleanup();
});

describe('Etcd3Storage', () => {
  it('maps etcd\'s "too many requests" to TooManyRequests (429), other exhaustion to Internal', () => {
    const s = new Etcd3Storage(new Etcd3Client({ endpoints: ['http://127.0.0.1:1'] }), {});
    expect(s.mapError('/k', new Etcd3Error('etcd: etcdserver: too many requests', 8, false))).toMatchObject({ code: 'TooManyRequests', key: '/k' });
    expect(s.mapError('/k', new Etcd3Error('etcd: received message larger than max', 8, false))).toMatchObject({ code: 'Internal' });
  });

  it("maps etcd's NOSPACE refusal to NoSpace", () => {
    const s = new Etcd3Storage(new Etcd3Client({ endpoints: ['http://127.0.0.1:1'] }), {});
    expect(s.mapError('/k', new Etcd3Error('etcd: etcdserver: mvcc: database space exceeded', 8, false))).toMatchObject({ code: 'NoSpace', key: '/k' });
  });

  it('creates, reads, updates with compare-and-swap and deletes; resourceVersions are etcd revisions', async () => {
    if (!haveEtcd) return;
    const s = await open();
    const created = await s.create('/registry/core/configmaps/ns/a', cm('a', { x: '1' }));
    const rv = Number(created.metadata.resourceVersion);
    expect(rv).toBeGreaterThan(0);
    expect(s.currentRevision()).toBeGreaterThanOrEqual(rv);
    // The value in etcd is the object without resourceVersion, under the prefix.
    const raw = JSON.parse(await etcd.etcdctl(['get', '/registry/core/configmaps/ns/a', '--print-value-only']));
    expect(raw).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns' }, data: { x: '1' } });
    await expect(s.create('/registry/core/configmaps/ns/a', cm('a'))).rejects.toMatchObject({ code: 'KeyExists' });

    const got = await s.get('/registry/core/configmaps/ns/a', { mode: 'Any' });
    expect(got?.metadata.resourceVersion).toBe(String(rv));

    // A concurrent write makes the first attempt lose; tryUpdate runs again on fresh state.
    let calls = 0;
    const res = await s.guaranteedUpdate('/registry/core/configmaps/ns/a', async (cur) => {
      calls++;
      if (calls === 1) await etcd.etcdctl(['put', '/registry/core/configmaps/ns/a', JSON.stringify({ ...cm('a', { x: 'other' }) })]);
      return { ...cur, data: { ...(cur.data as object), y: '2' } };
    });
    expect(calls).toBe(2);
    expect(res.object.data).toEqual({ x: 'other', y: '2' });
    expect(Number(res.object.metadata.resourceVersion)).toBeGreaterThan(rv + 1);

    const same = await s.guaranteedUpdate('/registry/core/configmaps/ns/a', () => NO_CHANGE);
    expect(same.changed).toBe(false);
    await expect(s.guaranteedUpdate('/registry/core/configmaps/ns/a', (c) => c, { preconditions: { resourceVersion: String(rv) } })).rejects.toMatchObject({
      code: 'Conflict',
    });
    await expect(s.guaranteedUpdate('/registry/core/configmaps/ns/missing', (c) => c)).rejects.toMatchObject({ code: 'KeyNotFound' });
    const made = await s.guaranteedUpdate('/registry/core/configmaps/ns/made', (c) => c, { createIfMissing: () => cm('made') });
    expect(made.created).toBe(true);

    await expect(s.delete('/registry/core/configmaps/ns/a', { preconditions: { uid: 'nope' } })).rejects.toMatchObject({ code: 'Conflict' });
    const deleted = await s.delete('/registry/core/configmaps/ns/a');
    expect(Number(deleted.metadata.resourceVersion)).toBeGreaterThan(Number(res.object.metadata.resourceVersion));
    expect(await s.get('/registry/core/configmaps/ns/a', { mode: 'MostRecent' })).toBeUndefined();
    await expect(s.delete('/registry/core/configmaps/ns/a')).rejects.toMatchObject({ code: 'KeyNotFound' });
  });

  it('pages a list at one revision with remaining counts and a predicate', async () => {
    if (!haveEtcd) return;
    const s = await open();
    for (let i = 0; i < 7; i++)
      await s.create(`/registry/core/configmaps/pg/c${i}`, {
        ...cm(`c${i}`),
        metadata: { name: `c${i}`, namespace: 'pg', labels: { odd: String(i % 2 === 1) } },
      });
    await s.create('/registry/core/configmaps/pgx/other', cm('other'));
    const p1 = await s.list('/registry/core/configmaps/pg/', { consistency: { mode: 'MostRecent' }, limit: 3 });
    expect(p1.items.map((o) => o.metadata.name)).toEqual(['c0', 'c1', 'c2']);
    expect(p1.remaining).toBe(4);
    // A write between pages is not seen by the next page, read at the first page's revision.
    await s.create('/registry/core/configmaps/pg/c9', cm('c9'));
    const p2 = await s.list('/registry/core/configmaps/pg/', {
      consistency: { mode: 'Exact', revision: p1.revision },
      limit: 10,
      startAfterKey: p1.continueAfterKey,
    });
    expect(p2.items.map((o) => o.metadata.name)).toEqual(['c3', 'c4', 'c5', 'c6']);
    expect(p2.continueAfterKey).toBeUndefined();
    expect(p2.revision).toBe(p1.revision);
    const odd = await s.list('/registry/core/configmaps/pg/', {
      consistency: { mode: 'Any' },
      limit: 2,
      predicate: (o) => (o.metadata.labels as Record<string, string> | undefined)?.odd === 'true',
    });
    expect(odd.items.map((o) => o.metadata.name)).toEqual(['c1', 'c3']);
    expect(odd.continueAfterKey).toBe('/registry/core/configmaps/pg/c3');
    await expect(
      s.list('/registry/core/configmaps/pg/', { consistency: { mode: 'NotOlderThan', revision: s.currentRevision() + 1000 } }),
    ).rejects.toMatchObject({
      code: 'TooLargeResourceVersion',
    });
  });

  it("narrows a list to one key: that key alone, never a key it prefixes, at the read's revision", async () => {
    if (!haveEtcd) return;
    const s = await open();
    const prefix = '/registry/core/configmaps/one/';
    for (const n of ['x', 'x-1', 'xa', 'y']) await s.create(`${prefix}${n}`, { ...cm(n), metadata: { name: n, namespace: 'one' } });
    const one = await s.list(prefix, { consistency: { mode: 'MostRecent' }, key: `${prefix}x`, limit: 1 });
    expect(one.items.map((o) => o.metadata.name)).toEqual(['x']);
    expect(one.revision).toBe(s.currentRevision());
    expect(one.continueAfterKey).toBeUndefined();
    const before = one.revision;
    const rvX = one.items[0]!.metadata.resourceVersion;
    await s.delete(`${prefix}x`);
    const gone = await s.list(prefix, { consistency: { mode: 'MostRecent' }, key: `${prefix}x` });
    expect(gone.items).toEqual([]);
    expect(gone.revision).toBeGreaterThan(before);
    const past = await s.list(prefix, { consistency: { mode: 'Exact', revision: before }, key: `${prefix}x` });
    expect(past.items.map((o) => [o.metadata.name, o.metadata.resourceVersion])).toEqual([['x', rvX]]);
    expect(past.revision).toBe(before);
    expect((await s.list(prefix, { consistency: { mode: 'Any' }, key: `${prefix}y`, predicate: () => false })).items).toEqual([]);
    expect((await s.list(prefix, { consistency: { mode: 'Any' }, key: `${prefix}y`, startAfterKey: `${prefix}y` })).items).toEqual([]);
    expect((await s.list(prefix, { consistency: { mode: 'Any' }, key: `${prefix}y`, startAfterKey: `${prefix}x` })).items).toHaveLength(1);
  });

  it('maps /registry to --etcd-prefix', async () => {
    if (!haveEtcd) return;
    const s = await open('/other-prefix/');
    await s.create('/registry/core/configmaps/ns/p', cm('p'));
    expect(await etcd.etcdctl(['get', '/other-prefix/core/configmaps/ns/p', '--keys-only'])).toContain('/other-prefix/core/configmaps/ns/p');
    const l = await s.list('/registry/core/configmaps/ns/', { consistency: { mode: 'MostRecent' } });
    expect(l.items.map((o) => o.metadata.name)).toEqual(['p']);
  });

  it('names undecodable values by their etcd key (the prefix included), and deletes one only while it is undecodable', async () => {
    if (!haveEtcd) return;
    const s = await open('/pfx/');
    await s.create('/registry/core/configmaps/bad/ok', cm('ok'));
    await etcd.etcdctl(['put', '/pfx/core/configmaps/bad/x', 'not json']);
    await etcd.etcdctl(['put', '/pfx/core/configmaps/bad/y', '[1]']);
    await expect(s.get('/registry/core/configmaps/bad/x', { mode: 'MostRecent' })).rejects.toMatchObject({
      code: 'CorruptObject',
      key: '/pfx/core/configmaps/bad/x',
    });
    const listed = await s.list('/registry/core/configmaps/bad/', { consistency: { mode: 'MostRecent' } }).catch((e: unknown) => e);
    expect(listed).toBeInstanceOf(CorruptListError);
    expect((listed as CorruptListError).objects.map((o) => o.key)).toEqual(['/pfx/core/configmaps/bad/x', '/pfx/core/configmaps/bad/y']);
    expect(await s.deleteUndecodable('/registry/core/configmaps/bad/ok')).toEqual({ readable: true });
    expect(await s.deleteUndecodable('/registry/core/configmaps/bad/x', { dryRun: true })).toMatchObject({ readable: false });
    expect(await s.deleteUndecodable('/registry/core/configmaps/bad/x')).toMatchObject({ readable: false });
    await expect(s.deleteUndecodable('/registry/core/configmaps/bad/x')).rejects.toMatchObject({ code: 'KeyNotFound' });
    await etcd.etcdctl(['del', '/pfx/core/configmaps/bad/y']);
    expect((await s.list('/registry/core/configmaps/bad/', { consistency: { mode: 'MostRecent' } })).items.map((o) => o.metadata.name)).toEqual(['ok']);
  });

  it('watches from a revision with prev values, announces progress, and ends with Compacted below the compacted revision', async () => {
    if (!haveEtcd) return;
    const s = await open();
    const start = (await s.create('/registry/core/configmaps/w/a', cm('a'))).metadata.resourceVersion!;
    await s.guaranteedUpdate('/registry/core/configmaps/w/a', (c) => ({ ...c, data: { v: '2' } }));
    await s.delete('/registry/core/configmaps/w/a');
    const events: StorageEvent[] = [];
    const errors: StorageError[] = [];
    const h = s.watch(
      { key: '/registry/core/configmaps/w/', recursive: true, afterRevision: Number(start) - 1 },
      { event: (e) => events.push(e), error: (e) => errors.push(e) },
    );
    await waitFor('three events', () => (events.length === 3 ? true : undefined));
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    expect(events[1]!.prevObject?.metadata.resourceVersion).toBe(start);
    expect(events[2]!.object.metadata.resourceVersion).toBe(String(events[2]!.revision));
    // Writes elsewhere move the progress of an idle watch past its last event.
    const later = await s.create('/registry/core/configmaps/elsewhere/x', cm('x'));
    await waitFor('progress', () => (h.progress!() >= Number(later.metadata.resourceVersion) ? true : undefined));
    h.stop();

    const c = new Etcd3Compactor(s.client, 1000, (r) => s.observeCompacted(r));
    expect(await c.tick()).toBe(0); // records the revision, compacts nothing yet
    const target = s.currentRevision();
    await s.create('/registry/core/configmaps/w/b', cm('b'));
    expect(await c.tick()).toBeGreaterThanOrEqual(target);
    const late: StorageError[] = [];
    s.watch({ key: '/registry/core/configmaps/w/', recursive: true, afterRevision: Number(start) }, { event: () => undefined, error: (e) => late.push(e) });
    const err = await waitFor('Compacted', () => late[0]);
    expect(err.code).toBe('Compacted');
    await expect(s.get('/registry/core/configmaps/w/b', { mode: 'Exact', revision: Number(start) })).rejects.toMatchObject({ code: 'Compacted' });
    expect(errors).toEqual([]);
  });

  it('shares one etcd watch among the watches of a prefix from recent revisions, decoding each event once', async () => {
    if (!haveEtcd) return;
    const s = await open();
    const P = '/registry/core/configmaps/share/';
    const rv = (o: KubeObject) => Number(o.metadata.resourceVersion);
    const watcher = (afterRevision: number, fail = false) => {
      const events: StorageEvent[] = [];
      const errors: StorageError[] = [];
      const handle = s.watch(
        { key: P, recursive: true, afterRevision },
        {
          event: (e) => {
            if (fail) throw new Error('sink broke');
            events.push(e);
          },
          error: (e) => errors.push(e),
        },
      );
      return { events, errors, handle, revs: () => events.map((e) => e.revision) };
    };
    const r0 = rv(await s.create(`${P}zero`, cm('zero')));
    const base = s.etcdWatchCount;
    const w1 = watcher(r0);
    expect(s.etcdWatchCount).toBe(base + 1);
    const r1 = rv(await s.create(`${P}a`, cm('a')));
    const r2 = rv((await s.guaranteedUpdate(`${P}a`, (c) => ({ ...c, data: { v: '2' } }))).object);
    await waitFor('two events', () => (w1.events.length === 2 ? true : undefined));
    // Joins the shared watch, and is handed what it holds after its revision just after the
    // call returns (never from inside it).
    const w2 = watcher(r1);
    expect(w2.revs()).toEqual([]);
    await Promise.resolve();
    expect(w2.revs()).toEqual([r2]);
    expect(s.etcdWatchCount).toBe(base + 1);
    // Older than what the shared watch holds: a watch of its own, with the history from etcd.
    const w3 = watcher(r0 - 1);
    expect(s.etcdWatchCount).toBe(base + 2);
    // A sink that throws ends its own watch only.
    const w4 = watcher(r2, true);
    const r3 = rv(await s.create(`${P}b`, cm('b')));
    await waitFor('the new event everywhere', () => (w2.events.length === 2 && w3.events.length === 4 ? true : undefined));
    expect(w1.revs()).toEqual([r1, r2, r3]);
    expect(w2.revs()).toEqual([r2, r3]);
    expect(w3.revs()).toEqual([r0, r1, r2, r3]);
    expect(w4.errors.map((e) => e.message)).toEqual(['watch sink failed: sink broke']);
    // Decoded once for the watches that share.
    expect(w2.events[1]!.object).toBe(w1.events[2]!.object);
    expect(w2.events[0]!.prevObject?.metadata.resourceVersion).toBe(String(r1));
    expect(w2.handle.progress!()).toBeGreaterThanOrEqual(r3);
    // The shared etcd watch ends with its last watch.
    w1.handle.stop();
    expect(s.etcdWatchCount).toBe(base + 2);
    w2.handle.stop();
    expect(s.etcdWatchCount).toBe(base + 1);
    w3.handle.stop();
    expect(s.etcdWatchCount).toBe(base);
    // A new watch after that starts a new shared one.
    const w5 = watcher(r3);
    const r4 = rv(await s.create(`${P}c`, cm('c')));
    await waitFor('w5', () => (w5.events.length === 1 ? true : undefined));
    expect(w5.revs()).toEqual([r4]);
    w5.handle.stop();
    for (const w of [w1, w2, w3, w5]) expect(w.errors).toEqual([]);

    // Without sharing, every watch has its own.
    const own = await new Etcd3Storage(new Etcd3Client({ endpoints: etcd.servers.split(',') }), { compactionIntervalMs: 0, shareWatches: false }).open();
    opened.push(own);
    const hs = [0, 1].map(() => own.watch({ key: P, recursive: true, afterRevision: r4 }, { event: () => undefined, error: () => undefined }));
    expect(own.etcdWatchCount).toBe(2);
    for (const h of hs) h.stop();
  });

  it('with freezeSharedEvents hands every shared watch the same frozen objects, and ends a watch that changes one', async () => {
    if (!haveEtcd) return;
    const plain = await open();
    const s = await open(undefined, { freezeSharedEvents: true });
    const P = '/registry/core/configmaps/frozen/';
    const r0 = Number((await s.create(`${P}a`, cm('a', { v: '1' }))).metadata.resourceVersion);
    const seen: StorageEvent[][] = [[], [], []];
    const errors: StorageError[] = [];
    const handles = [0, 1].map((i) =>
      s.watch({ key: P, recursive: true, afterRevision: r0 }, { event: (e) => seen[i]!.push(e), error: (e) => errors.push(e) }),
    );
    const bad = s.watch(
      { key: P, recursive: true, afterRevision: r0 },
      {
        event: (e) => {
          (e.object.data as Record<string, string>).v = 'changed';
        },
        error: (e) => errors.push(e),
      },
    );
    const unfrozen = plain.watch({ key: P, recursive: true, afterRevision: r0 }, { event: (e) => seen[2]!.push(e), error: (e) => errors.push(e) });
    await s.guaranteedUpdate(`${P}a`, (c) => ({ ...c, data: { v: '2' } }));
    await waitFor('the update everywhere', () => (seen.every((x) => x.length === 1) && errors.length === 1 ? true : undefined));
    expect(seen[0]![0]!.object).toBe(seen[1]![0]!.object);
    for (const o of [seen[0]![0]!.object, seen[0]![0]!.object.data, seen[0]![0]!.prevObject]) expect(Object.isFrozen(o)).toBe(true);
    expect((seen[1]![0]!.object.data as Record<string, string>).v).toBe('2');
    expect(errors[0]!.message).toMatch(/^watch sink failed: Cannot assign to read only property 'v'/);
    expect(Object.isFrozen(seen[2]![0]!.object)).toBe(false);
    for (const h of [...handles, bad, unfrozen]) h.stop();
  });

  it('lets one of several servers compact per period (compact_rev_key)', async () => {
    if (!haveEtcd) return;
    const a = await open();
    const b = await open();
    const ca = new Etcd3Compactor(a.client, 1000, () => undefined);
    const cb = new Etcd3Compactor(b.client, 1000, () => undefined);
    const version = async (): Promise<number> => Number(JSON.parse(await etcd.etcdctl(['get', 'compact_rev_key', '-w', 'json'])).kvs?.[0]?.version ?? 0);
    // A first round lets each learn the key's version; then each period (a tick of both) has
    // exactly one winner, where uncoordinated servers would both write (and compact).
    await ca.tick();
    await cb.tick();
    const before = await version();
    for (let round = 0; round < 3; round++) {
      await ca.tick();
      await cb.tick();
    }
    expect((await version()) - before).toBe(3);
  });
});
