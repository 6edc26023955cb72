import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { DiskFaultSwitch, installDiskFaults, storageDisk } from '@app/level';
import { MvccStore, NOT_NOW } from './mvcc.store.js';
import { dec, del, enc, put } from './mvcc.store.fixture.js';
import { MvccError, decodeCommand, encodeCommand, type TxnCommand, type MvccEvent } from './mvcc.types.js';

describe('MvccStore', () => {
  let dir: string;
  let store: MvccStore;
  let index = 0;
  const apply = async (cmd: TxnCommand) => (await store.apply(++index, cmd))!;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mvcc-'));
    store = await MvccStore.open(dir);
    index = 0;
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('bumps the revision per writing txn and tracks create/mod revision and version', async () => {
    expect((await apply(put('/a', '1'))).revision).toBe(1);
    expect((await apply(put('/a', '2'))).revision).toBe(2);
    expect((await apply(put('/b', 'x'))).revision).toBe(3);
    const a = await store.get('/a');
    expect(dec(a?.value)).toBe('2');
    expect(a).toMatchObject({ createRevision: 1, modRevision: 2, version: 2 });
    expect(store.currentRevision()).toBe(3);
    expect(store.appliedIndex()).toBe(3);
    // A txn that writes nothing (delete of a missing key) takes no revision.
    const r = await apply(del('/missing'));
    expect(r.revision).toBe(3);
    expect(store.currentRevision()).toBe(3);
    expect(store.appliedIndex()).toBe(4);
  });

  it('reads the current version on the calling thread, from disk too, and not while an import rewrites the store', async () => {
    await apply(put('/a', '1'));
    await apply(put('/a', '2'));
    const now = store.getLatestNow('/a');
    expect(now === NOT_NOW ? undefined : dec(now?.value)).toBe('2');
    expect(store.getLatestNow('/missing')).toBeUndefined();
    // Reopened with an empty cache: the value comes from LevelDB, still synchronously.
    await store.close();
    store = await MvccStore.open(dir);
    const fromDisk = store.getLatestNow('/a');
    expect(fromDisk === NOT_NOW ? undefined : fromDisk).toMatchObject({ modRevision: 2, version: 2 });
    // During the writing pass of an import the store has no state to read at once.
    const snap = await store.exportSnapshot();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let opened = 0;
    const importing = store.importSnapshotFrom(() => {
      opened++;
      if (opened === 1) return [snap];
      return (async function* () {
        await gate;
        yield snap;
      })();
    });
    while (opened < 2) await new Promise((r) => setTimeout(r, 5));
    expect(store.getLatestNow('/a')).toBe(NOT_NOW);
    const waiting = store.get('/a');
    release();
    await importing;
    expect(dec((await waiting)?.value)).toBe('2');
    expect(store.getLatestNow('/a')).toMatchObject({ modRevision: 2 });
  });

  it('reads and deletes keys of multi-byte characters of every length synchronously (none missed)', async () => {
    // Keys like the escapes of non-UTF-8 etcd key bytes (4-byte characters), of growing length.
    const keys = Array.from({ length: 40 }, (_, n) => `/p/${'a'.repeat(n % 7)}${String.fromCodePoint(0x10ff80).repeat(n)}`);
    for (const k of keys) await apply(put(k, 'v'));
    await store.close();
    store = await MvccStore.open(dir);
    expect(keys.filter((k) => store.getLatestNow(k) === undefined)).toEqual([]);
    // A delete finds the current version the same way: every key goes.
    for (const k of keys) expect((await apply(del(k))).results[0]).toMatchObject({ prev: { key: k } });
    expect((await store.range('/p/')).kvs).toEqual([]);
  });

  it('evaluates compares: absent, modRevision; failure branch returns fresh state', async () => {
    const create: TxnCommand = {
      compares: [{ key: '/k', target: 'absent' }],
      success: [{ type: 'put', key: '/k', value: enc('v1') }],
      failure: [{ type: 'get', key: '/k' }],
    };
    expect((await apply(create)).succeeded).toBe(true);
    const again = await apply(create);
    expect(again.succeeded).toBe(false);
    expect(dec(again.results[0]!.current?.value)).toBe('v1');
    const cas = (rev: number, v: string): TxnCommand => ({
      compares: [{ key: '/k', target: 'modRevision', value: rev }],
      success: [{ type: 'put', key: '/k', value: enc(v) }],
      failure: [{ type: 'get', key: '/k' }],
    });
    const ok = await apply(cas(1, 'v2'));
    expect(ok).toMatchObject({ succeeded: true, revision: 2 });
    expect(dec(ok.results[0]!.prev?.value)).toBe('v1');
    const stale = await apply(cas(1, 'v3'));
    expect(stale.succeeded).toBe(false);
    expect(stale.results[0]!.current?.modRevision).toBe(2);
    expect(dec((await store.get('/k'))?.value)).toBe('v2');
  });

  it('rejects malformed commands deterministically without effect', async () => {
    const r = await apply({ compares: [], success: [{ type: 'put', key: 'a\u0000b', value: enc('x') }], failure: [] });
    expect(r.succeeded).toBe(false);
    expect(r.error).toMatch(/NUL/);
    expect(store.currentRevision()).toBe(0);
    expect(store.appliedIndex()).toBe(1);
  });

  it('ranges over a prefix at the current and at past revisions, with limit and startAfter', async () => {
    await apply(put('/r/a', 'a1')); // 1
    await apply(put('/r/b', 'b1')); // 2
    await apply(put('/r/c', 'c1')); // 3
    await apply(put('/s/x', 'x')); // 4: other prefix
    await apply(put('/r/a', 'a2')); // 5
    await apply(del('/r/b')); // 6
    await apply(put('/r/0', 'z')); // 7

    const now = await store.range('/r/');
    expect(now.revision).toBe(7);
    expect(now.kvs.map((kv) => `${kv.key}=${dec(kv.value)}`)).toEqual(['/r/0=z', '/r/a=a2', '/r/c=c1']);

    const at3 = await store.range('/r/', { atRevision: 3 });
    expect(at3.revision).toBe(3);
    expect(at3.kvs.map((kv) => `${kv.key}=${dec(kv.value)}@${kv.modRevision}`)).toEqual(['/r/a=a1@1', '/r/b=b1@2', '/r/c=c1@3']);
    const at5 = await store.range('/r/', { atRevision: 5 });
    expect(at5.kvs.map((kv) => dec(kv.value))).toEqual(['a2', 'b1', 'c1']);

    const page1 = await store.range('/r/', { limit: 2 });
    expect(page1.kvs.map((kv) => kv.key)).toEqual(['/r/0', '/r/a']);
    expect(page1).toMatchObject({ more: true, remaining: 1 });
    const page2 = await store.range('/r/', { limit: 2, startAfter: '/r/a' });
    expect(page2.kvs.map((kv) => kv.key)).toEqual(['/r/c']);
    expect(page2).toMatchObject({ more: false, remaining: 0 });

    const hp1 = await store.range('/r/', { atRevision: 3, limit: 1 });
    expect(hp1.kvs.map((kv) => kv.key)).toEqual(['/r/a']);
    expect(hp1.remaining).toBe(2);
    const hp2 = await store.range('/r/', { atRevision: 3, limit: 1, startAfter: '/r/a' });
    expect(hp2.kvs.map((kv) => kv.key)).toEqual(['/r/b']);

    const filtered = await store.range('/r/', { limit: 1, filter: (kv) => dec(kv.value) === 'c1' });
    expect(filtered.kvs.map((kv) => kv.key)).toEqual(['/r/c']);
    expect(filtered.more).toBe(false);

    expect(dec((await store.get('/r/b', 2))?.value)).toBe('b1');
    expect(await store.get('/r/b', 6)).toBeUndefined();
    expect(await store.get('/r/b')).toBeUndefined();
    await expect(store.get('/r/a', 99)).rejects.toMatchObject({ code: 'FutureRevision' });
  });

  it('replays events after a revision filtered by prefix or key, and emits live events', async () => {
    const live: MvccEvent[] = [];
    store.subscribe((e) => live.push(e));
    await apply(put('/w/a', '1'));
    await apply(put('/x/a', '1'));
    await apply(put('/w/a', '2'));
    await apply(del('/w/a'));
    expect(live.map((e) => `${e.type}:${e.key}@${e.revision}`)).toEqual(['put:/w/a@1', 'put:/x/a@2', 'put:/w/a@3', 'delete:/w/a@4']);
    const del4 = live[3]!;
    expect(dec(del4.prevValue?.value)).toBe('2');
    const { events, revision } = await store.eventsAfter(1, { prefix: '/w/' });
    expect(revision).toBe(4);
    expect(events.map((e) => `${e.type}@${e.revision}`)).toEqual(['put@3', 'delete@4']);
    expect(dec(events[0]!.prevValue?.value)).toBe('1');
    const exact = await store.eventsAfter(0, { key: '/x/a' });
    expect(exact.events.map((e) => e.revision)).toEqual([2]);
  });

  it('replays exactly the events it emitted live (values and previous values from history), also across a compaction', async () => {
    const live: MvccEvent[] = [];
    store.subscribe((e) => live.push(e));
    await apply(put('/r/a', 'a1')); // 1
    await apply(put('/r/b', 'b1')); // 2
    await apply(put('/r/a', 'a2')); // 3
    await apply(del('/r/b')); // 4
    await apply(put('/r/c', 'c1')); // 5
    await apply(put('/r/a', 'a3')); // 6: its previous version (3) predates the compaction below
    await apply(put('/r/b', 'b2')); // 7: re-created, no previous version
    await apply(del('/r/c')); // 8
    const plain = (evs: MvccEvent[]) =>
      evs.map((e) => ({
        type: e.type,
        key: e.key,
        revision: e.revision,
        value: { ...e.value, value: dec(e.value.value) },
        prev: e.prevValue ? { ...e.prevValue, value: dec(e.prevValue.value) } : undefined,
      }));
    expect(plain((await store.eventsAfter(0)).events)).toEqual(plain(live));
    await store.compact(5);
    expect(plain((await store.eventsAfter(5)).events)).toEqual(plain(live.slice(5)));
    const a3 = (await store.eventsAfter(5, { key: '/r/a' })).events[0]!;
    expect([dec(a3.value.value), a3.prevValue?.modRevision, dec(a3.prevValue?.value)]).toEqual(['a3', 3, 'a2']);
    const c8 = (await store.eventsAfter(7)).events[0]!;
    expect([c8.type, c8.value.version, c8.value.createRevision, c8.value.modRevision, dec(c8.prevValue?.value)]).toEqual(['delete', 0, 5, 8, 'c1']);
  });

  it('reads at every past revision match a model of the history (gets, ranges, pages), also after compactions', async () => {
    // Deterministic pseudo-random puts and deletes over a few keys, some never rewritten.
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const keys = ['/m/a', '/m/b', '/m/c', '/m/d', '/m/e'];
    const model: Map<string, string>[] = [new Map()];
    for (let i = 0; i < 60; i++) {
      const key = keys[rnd(keys.length)]!;
      const state = new Map(model[model.length - 1]);
      if (state.has(key) && rnd(3) === 0) {
        await apply(del(key));
        state.delete(key);
      } else {
        const v = `${key}-${i}`;
        await apply(put(key, v));
        state.set(key, v);
      }
      model.push(state);
    }
    const check = async (from: number) => {
      const current = store.currentRevision();
      for (let rev = from; rev <= current; rev++) {
        const want = [...model[rev]!].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `${k}=${v}`);
        const all = await store.range('/m/', { atRevision: rev });
        expect(all.kvs.map((kv) => `${kv.key}=${dec(kv.value)}`)).toEqual(want);
        const paged: string[] = [];
        let after: string | undefined;
        for (;;) {
          const page = await store.range('/m/', { atRevision: rev, limit: 2, ...(after !== undefined ? { startAfter: after } : {}) });
          paged.push(...page.kvs.map((kv) => `${kv.key}=${dec(kv.value)}`));
          expect(page.remaining).toBe(want.length - paged.length);
          if (!page.more) break;
          after = page.kvs[page.kvs.length - 1]!.key;
        }
        expect(paged).toEqual(want);
        for (const k of keys) expect(dec((await store.get(k, rev))?.value)).toBe(model[rev]!.get(k));
      }
    };
    await check(1);
    await store.compact(25);
    await check(25);
    await apply(put('/m/a', 'late'));
    model.push(new Map([...model[model.length - 1]!, ['/m/a', 'late']]));
    await store.compact(50);
    await check(50);
  });

  it('compaction deletes exactly the records no read at or after it can reach', async () => {
    await store.close();
    const db = new ClassicLevel<string, Buffer>(dir, { keyEncoding: 'utf8', valueEncoding: 'buffer' });
    store = await MvccStore.open(dir, { db });
    await apply(put('/p/a', '1')); // 1
    await apply(put('/p/a', '2')); // 2: supersedes a@1
    await apply(put('/p/b', '1')); // 3
    await apply(del('/p/b')); // 4: b@3 superseded, tombstone b@4
    await apply(put('/p/c', '1')); // 5
    await apply(put('/p/a', '3')); // 6: supersedes a@2, which is live at 5
    await apply(put('/p/c', '2')); // 7: supersedes c@5, live at 5
    const records = async () =>
      (await db.keys({ gte: 'e:', lt: 'i' }).all())
        .filter((k) => k.startsWith('e:') || k.startsWith('h:'))
        .map((k) => (k.startsWith('h:') ? k.replace('\u0000', '@').replace(/@0+/, '@') : `e:${parseInt(k.slice(2, 18), 16)}`));
    expect(await records()).toEqual(['e:1', 'e:2', 'e:3', 'e:4', 'e:5', 'e:6', 'e:7', 'h:/p/a@1', 'h:/p/a@2', 'h:/p/b@3', 'h:/p/b@4', 'h:/p/c@5']);
    await store.compact(5);
    // Kept: the events after 5, the put of 5 itself, and the versions live at 5 that were
    // superseded later.
    expect(await records()).toEqual(['e:5', 'e:6', 'e:7', 'h:/p/a@2', 'h:/p/c@5']);
    expect((await store.range('/p/', { atRevision: 5 })).kvs.map((kv) => `${kv.key}=${dec(kv.value)}`)).toEqual(['/p/a=2', '/p/c=1']);
    const history = async (after: number, opts = {}) =>
      (await store.eventsAfter(after, {}, opts)).events.map((e) => `${e.type} ${e.key}@${e.revision}<${e.prevValue?.modRevision}`);
    expect(await history(5)).toEqual(['put /p/a@6<2', 'put /p/c@7<5']);
    await expect(store.eventsAfter(4)).rejects.toMatchObject({ code: 'Compacted' });
    // From the compacted revision itself (etcd's watch): its put, without a previous version.
    expect(await history(4, { fromCompacted: true })).toEqual(['put /p/c@5<undefined', 'put /p/a@6<2', 'put /p/c@7<5']);
    await expect(store.eventsAfter(3, {}, { fromCompacted: true })).rejects.toMatchObject({ code: 'Compacted' });

    // A delete at the compacted revision is not kept: nothing is live of its key there.
    await apply(del('/p/c')); // 8: supersedes c@7, tombstone c@8
    await apply(put('/p/a', '4')); // 9: supersedes a@6
    await store.compact(8);
    expect(await records()).toEqual(['e:9', 'h:/p/a@6']);
    expect(await history(7, { fromCompacted: true })).toEqual(['put /p/a@9<6']);
    expect((await store.range('/p/', { atRevision: 8 })).kvs.map((kv) => `${kv.key}=${dec(kv.value)}`)).toEqual(['/p/a=3']);
  });

  it('leaves out the deletes of the compacted revision and the previous versions of its puts, before and after the purge', async () => {
    await apply(put('/d/a', '1')); // 1
    await apply(put('/d/b', '1')); // 2
    // 3: one transaction puts a again and deletes b.
    await apply({
      compares: [],
      success: [
        { type: 'put', key: '/d/a', value: enc('2') },
        { type: 'delete', key: '/d/b' },
      ],
      failure: [],
    });
    await apply(put('/d/c', '1')); // 4
    const fromThree = async () =>
      (await store.eventsAfter(2, {}, { fromCompacted: true })).events.map((e) => `${e.type} ${e.key}@${e.revision}<${e.prevValue?.modRevision}`);
    expect(await fromThree()).toEqual(['put /d/a@3<1', 'delete /d/b@3<2', 'put /d/c@4<undefined']);
    await store.compact(3);
    expect(await fromThree()).toEqual(['put /d/a@3<undefined', 'put /d/c@4<undefined']);
  });

  it('applies go on while a compaction deletes a long history', async () => {
    for (let i = 0; i < 5000; i++) await apply(put(`/h/k${i % 50}`, `v${i}`));
    const compacted = store.compact(store.currentRevision());
    let compactionDone = false;
    void compacted.then(() => (compactionDone = true));
    // Queued behind the compaction's first step (recording the revision): with the deletions
    // held in the apply queue too, this write would wait for all of them.
    const r = await apply(put('/h/late', 'x'));
    expect(r.revision).toBe(5001);
    expect(compactionDone).toBe(false);
    await compacted;
    expect(store.compactedRevision()).toBe(5000);
    expect((await store.range('/h/', { atRevision: 5000 })).kvs).toHaveLength(50);
    await expect(store.get('/h/k0', 4999)).rejects.toMatchObject({ code: 'Compacted' });
  });

  it('applies a compaction command at its place in the log: the same decision on every replica', async () => {
    for (let i = 0; i < 4; i++) await apply(put('/q/a', `v${i}`)); // revisions 1-4
    const cmd = (r: number): TxnCommand => ({ compares: [], success: [], failure: [], compact: r });
    expect(decodeCommand(encodeCommand(cmd(3)))).toEqual(cmd(3));
    await expect(store.apply(++index, { ...cmd(2), success: [{ type: 'get', key: '/q/a' }] })).resolves.toMatchObject({
      succeeded: false,
      error: expect.stringMatching(/compaction carries no/),
    });
    // Beyond the current revision at its position: a no-op, like a stale one.
    expect(await apply(cmd(9))).toMatchObject({ succeeded: false, revision: 4 });
    expect(await apply(cmd(3))).toMatchObject({ succeeded: true, revision: 4, results: [] });
    expect(store.compactedRevision()).toBe(3);
    expect(await apply(cmd(2))).toMatchObject({ succeeded: false });
    // Takes no revision; in one batch, later commands see the earlier ones' effects.
    const [, c, d] = await store.applyBatch([
      { index: ++index, command: put('/q/a', 'v5') },
      { index: ++index, command: cmd(5) },
      { index: ++index, command: cmd(4) },
    ]);
    expect(c).toMatchObject({ succeeded: true, revision: 5 });
    expect(d).toMatchObject({ succeeded: false, revision: 5 });
    expect(store.currentRevision()).toBe(5);
    await store.whenPurged();
    await expect(store.get('/q/a', 4)).rejects.toMatchObject({ code: 'Compacted' });
    expect(dec((await store.get('/q/a', 5))?.value)).toBe('v5');
    // Replayed after a restart from an older applied index: skipped, still compacted.
    await store.close();
    store = await MvccStore.open(dir);
    expect(store.compactedRevision()).toBe(5);
    expect(await store.apply(index, cmd(5))).toBeUndefined();
  });

  it('finishes at the next start a compaction whose deletions were cut short', async () => {
    for (let i = 0; i < 6; i++) await apply(put('/r/a', `v${i}`)); // revisions 1-6
    await store.close();
    // As if the process stopped right after recording the compacted revision.
    const raw = new ClassicLevel<string, Buffer>(dir, { keyEncoding: 'utf8', valueEncoding: 'buffer' });
    await raw.put('m:compacted', Buffer.from('4'));
    await raw.close();
    const db = new ClassicLevel<string, Buffer>(dir, { keyEncoding: 'utf8', valueEncoding: 'buffer' });
    store = await MvccStore.open(dir, { db });
    expect(store.compactedRevision()).toBe(4);
    await store.whenPurged();
    const left = (await db.keys({ gte: 'e:', lt: 'i' }).all()).filter((k) => k.startsWith('e:') || k.startsWith('h:'));
    expect(left.map((k) => (k.startsWith('e:') ? parseInt(k.slice(2, 18), 16) : `h@${parseInt(k.slice(-16), 16)}`))).toEqual([4, 5, 6, 'h@4', 'h@5']);
    expect(store.purgeErrors).toBe(0);
  });

  it('gives the event loop turns while it reads and builds a batch of many operations, none of it visible before the write', async () => {
    const keys = Array.from({ length: 3000 }, (_, i) => `/many/${String(i).padStart(5, '0')}`);
    await store.apply(++index, { compares: [], success: keys.map((key) => ({ type: 'put' as const, key, value: enc('v') })), failure: [] });
    await store.close();
    // Reopened with an empty cache, so that the delete reads every key from LevelDB, and with
    // a slice of 0 ms: a turn every 256 operations.
    const db = new ClassicLevel<string, Buffer>(dir, { keyEncoding: 'utf8', valueEncoding: 'buffer' });
    store = await MvccStore.open(dir, { db, applySliceMs: 0 });
    const before = store.currentRevision();
    // What happens in order: the apply's reads of LevelDB, and turns of the event loop (in
    // which a reader looks at the store).
    const log: string[] = [];
    const seen = new Set<string>();
    let inTurn = false;
    const getSync = db.getSync.bind(db);
    db.getSync = ((...a: Parameters<typeof getSync>) => (inTurn || log.push('read'), getSync(...a))) as typeof db.getSync;
    let running = true;
    const turn = (): void => {
      if (!running) return;
      inTurn = true;
      log.push('turn');
      const first = store.getLatestNow(keys[0]!);
      seen.add(`${store.currentRevision()} ${first === NOT_NOW ? 'not now' : dec(first?.value)}`);
      inTurn = false;
      setImmediate(turn);
    };
    setImmediate(turn);
    const r = await store.apply(++index, { compares: [], success: keys.map((key) => ({ type: 'delete' as const, key })), failure: [] });
    running = false;
    expect(r?.revision).toBe(before + 1);
    // The reads were spread over several turns...
    const reads = log.slice(log.indexOf('read'), log.lastIndexOf('read') + 1);
    expect(reads.filter((e) => e === 'read').length).toBe(keys.length);
    expect(reads.filter((e) => e === 'turn').length).toBeGreaterThan(3);
    // ...in which readers saw the store as it was before the batch, which then went in whole.
    expect([...seen]).toEqual([`${before} v`]);
    expect((await store.range('/many/')).kvs).toEqual([]);
    expect((await store.eventsAfter(before)).events.length).toBe(keys.length);
  });

  it('compacts history: older reads fail with Compacted, the state at the compacted revision stays', async () => {
    await apply(put('/c/a', '1')); // 1
    await apply(put('/c/a', '2')); // 2
    await apply(put('/c/b', '1')); // 3
    await apply(del('/c/b')); // 4
    await apply(put('/c/a', '3')); // 5
    await store.compact(4);
    expect(store.compactedRevision()).toBe(4);
    await expect(store.get('/c/a', 3)).rejects.toMatchObject({ code: 'Compacted' });
    await expect(store.range('/c/', { atRevision: 2 })).rejects.toBeInstanceOf(MvccError);
    await expect(store.eventsAfter(3)).rejects.toMatchObject({ code: 'Compacted' });
    expect((await store.range('/c/', { atRevision: 4 })).kvs.map((kv) => dec(kv.value))).toEqual(['2']);
    expect((await store.eventsAfter(4)).events.map((e) => e.revision)).toEqual([5]);
    expect(dec((await store.get('/c/a'))?.value)).toBe('3');
    // A second compaction only visits keys written since the first, and still keeps live state.
    await apply(put('/c/d', 'd')); // 6
    await store.compact(6);
    expect((await store.range('/c/', { atRevision: 6 })).kvs.map((kv) => `${kv.key}=${dec(kv.value)}`)).toEqual(['/c/a=3', '/c/d=d']);
    await expect(store.compact(99)).rejects.toMatchObject({ code: 'FutureRevision' });
    // Persisted across reopen.
    await store.close();
    store = await MvccStore.open(dir);
    expect(store.compactedRevision()).toBe(6);
  });

  it('survives a crash between batches: appliedIndex and state agree, replayed entries are skipped', async () => {
    await store.applyBatch([
      { index: 1, command: put('/p/a', '1') },
      { index: 2, command: put('/p/b', '1') },
    ]);
    // "Crash": the process dies before entry 3 is applied; reopen from disk.
    await store.close();
    store = await MvccStore.open(dir);
    expect(store.appliedIndex()).toBe(2);
    expect(store.currentRevision()).toBe(2);
    // The log replays from an older point: 1 and 2 are skipped, 3 applies.
    const results = await store.applyBatch([
      { index: 1, command: put('/p/a', 'REPLAY') },
      { index: 2, command: put('/p/b', 'REPLAY') },
      { index: 3, command: put('/p/c', '1') },
    ]);
    expect(results[0]).toBeUndefined();
    expect(results[1]).toBeUndefined();
    expect(results[2]?.revision).toBe(3);
    expect(dec((await store.get('/p/a'))?.value)).toBe('1');
    expect(store.appliedIndex()).toBe(3);
  });

  it('refuses to open a store that lost an unsynced batch and kept a later one; a synced write ends the marks before it', async () => {
    const marks = async (): Promise<string[]> => {
      const db = new ClassicLevel<string, string>(dir);
      const out: string[] = [];
      for await (const [k, v] of db.iterator({ gte: 'm:b:', lt: 'm:b;' })) out.push(`${parseInt(k.slice(4), 16)}-${v}`);
      const synced = await db.get('m:synced');
      await db.close();
      return [`synced ${synced}`, ...out];
    };
    await store.applyBatch([{ index: 1, command: put('/h/a', '1') }]);
    await store.applyBatch([
      { index: 2, command: put('/h/b', '1') },
      { index: 3, command: put('/h/c', '1') },
    ]);
    await store.applyBatch([{ index: 5, command: put('/h/d', '1') }]);
    await store.close();
    // Each unsynced batch left a mark: the first index after the one before it, its last one.
    expect(await marks()).toEqual(['synced 0', '1-1', '2-3', '4-5']);
    store = await MvccStore.open(dir);
    expect(store.appliedIndex()).toBe(5);
    // A synced write: the marks it covers go, later batches leave theirs.
    expect(await store.sync()).toBe(5);
    await store.applyBatch([{ index: 6, command: put('/h/e', '1') }]);
    await store.applyBatch([{ index: 7, command: put('/h/f', '1') }]);
    await store.close();
    expect(await marks()).toEqual(['synced 5', '6-6', '7-7']);
    // The batch of entry 6 lost (as a system crash may lose it), the one of entry 7 kept.
    const db = new ClassicLevel<string, string>(dir);
    await db.batch([
      { type: 'del', key: 'm:b:' + (6).toString(16).padStart(16, '0') },
      { type: 'del', key: 'k:/h/e' },
    ]);
    await db.close();
    const err = await MvccStore.open(dir).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MvccError);
    expect(err).toMatchObject({ code: 'Corrupt' });
    expect((err as Error).message).toContain('applied through index 7 but lost the batch of entries from 6');
    // A lost last batch is a suffix: the store opens at the one before, for the log to replay.
    const db2 = new ClassicLevel<string, string>(dir);
    await db2.batch([
      { type: 'del', key: 'm:b:' + (7).toString(16).padStart(16, '0') },
      { type: 'del', key: 'k:/h/f' },
      { type: 'put', key: 'm:applied', value: '5' },
    ]);
    await db2.close();
    store = await MvccStore.open(dir);
    expect(store.appliedIndex()).toBe(5);
    // Batches without marks after the chain (a node downgraded to a version that writes none,
    // then upgraded again): nothing to check them against, the chain starts again from them.
    await store.applyBatch([{ index: 6, command: put('/h/g', '1') }]);
    await store.applyBatch([{ index: 7, command: put('/h/h', '1') }]);
    await store.close();
    const db3 = new ClassicLevel<string, string>(dir);
    await db3.batch([
      { type: 'del', key: 'm:b:' + (6).toString(16).padStart(16, '0') },
      { type: 'del', key: 'm:b:' + (7).toString(16).padStart(16, '0') },
    ]);
    await db3.close();
    store = await MvccStore.open(dir);
    expect(store.appliedIndex()).toBe(7);
    await store.close();
    expect((await marks())[0]).toBe('synced 7');
    store = await MvccStore.open(dir);
  });

  it('sync() leaves nothing it reports durable in a LevelDB log file: the memtable is flushed to synced tables', async () => {
    const logBytes = async (): Promise<number> => {
      let n = 0;
      for (const f of await readdir(dir)) if (/^\d+\.log$/.test(f)) n += (await stat(join(dir, f))).size;
      return n;
    };
    await store.applyBatch([{ index: 1, command: put('/big/a', 'a'.repeat(64 * 1024)) }]);
    await store.applyBatch([{ index: 2, command: put('/big/b', 'b'.repeat(64 * 1024)) }]);
    expect(await logBytes()).toBeGreaterThan(128 * 1024);
    expect(await store.sync()).toBe(2);
    // Only the synced `m:synced` record (and no batch) is left in the log after the flush.
    expect(await logBytes()).toBeLessThan(4096);
    await store.close();
    store = await MvccStore.open(dir);
    expect(dec((await store.get('/big/b'))?.value)?.length).toBe(64 * 1024);
  });

  it('applyBatch gives each command its own revision and later commands see earlier ones', async () => {
    const create = (v: string): TxnCommand => ({
      compares: [{ key: '/g', target: 'absent' }],
      success: [{ type: 'put', key: '/g', value: enc(v) }],
      failure: [],
    });
    const results = await store.applyBatch([
      { index: 1, command: create('first') },
      { index: 2, command: create('second') },
      { index: 3 },
      { index: 4, command: put('/h', 'x') },
    ]);
    expect(results.map((r) => r && [r.succeeded, r.revision])).toEqual([[true, 1], [false, 1], undefined, [true, 2]]);
    expect(dec((await store.get('/g'))?.value)).toBe('first');
    expect(store.appliedIndex()).toBe(4);
  });

  it('current reads stay coherent through the latest-value cache, also with reads racing writes', async () => {
    const val = async (k: string) => {
      const kv = await store.get(k);
      return kv ? Buffer.from(kv.value).toString() : undefined;
    };
    await apply(put('/c', '1'));
    expect(await val('/c')).toBe('1');
    expect(await val('/c')).toBe('1');
    await apply(put('/c', '2'));
    expect(await val('/c')).toBe('2');
    await apply(del('/c'));
    expect(await val('/c')).toBeUndefined();
    for (let i = 0; i < 50; i++) {
      const racing = Promise.all([val('/r'), apply(put('/r', String(i))), val('/r')]);
      await racing;
      expect(await val('/r')).toBe(String(i));
    }
  });

  it('keeps the latest-value cache within its bound and reads evicted keys from disk', async () => {
    const dir2 = await mkdtemp(join(tmpdir(), 'mvcc-'));
    const small = await MvccStore.open(dir2, { cacheMaxEntries: 100 });
    try {
      const cacheSize = () => (small as unknown as { latestCache: Map<string, unknown> }).latestCache.size;
      let i = 0;
      let nk = 0;
      // Each new key is written twice: the create does not fill the cache, the update does.
      const write = async (n: number) => {
        const ns = Array.from({ length: n }, () => ++nk);
        const key = (x: number) => `/e/${String(x).padStart(4, '0')}`;
        const before = cacheSize();
        await small.applyBatch(ns.map((x) => ({ index: ++i, command: put(key(x), 'first') })));
        expect(cacheSize()).toBe(before);
        await small.applyBatch(ns.map((x) => ({ index: ++i, command: put(key(x), `v${x}`) })));
        return before;
      };
      await write(100);
      expect(cacheSize()).toBe(100);
      // One key over the bound: one pass evicts the oldest down to 90% of it.
      await write(1);
      expect(cacheSize()).toBe(90);
      for (let b = 0; b < 8; b++) {
        await write(50);
        expect(cacheSize()).toBeLessThanOrEqual(100);
        expect(cacheSize()).toBeGreaterThanOrEqual(90);
      }
      const val = async (k: string) => Buffer.from((await small.get(k))!.value).toString();
      expect(await val('/e/0001')).toBe('v1');
      expect(await val('/e/0500')).toBe('v500');
      expect(await val('/e/0501')).toBe('v501');
      await small.apply(++i, put('/e/0001', 'again'));
      expect(await val('/e/0001')).toBe('again');
      expect((await small.range('/e/')).kvs).toHaveLength(501);
      // A read fills the cache (a key just created is not in it until read or updated).
      await small.apply(++i, put('/e/new', 'x'));
      const cached = () => (small as unknown as { latestCache: Map<string, unknown> }).latestCache.has('/e/new');
      expect(cached()).toBe(false);
      expect(await val('/e/new')).toBe('x');
      expect(cached()).toBe(true);
    } finally {
      await small.close();
      await rm(dir2, { recursive: true, force: true });
    }
  });

  it('keeps the live keys in memory: creates and reads of missing keys skip LevelDB, the index survives reopen and snapshot import', async () => {
    // Count the store's point reads of LevelDB (get/getMany/getSync) through the db it was given.
    const counted = async (d: string, keyIndex?: boolean) => {
      const db = new ClassicLevel<string, Buffer>(d, { keyEncoding: 'utf8', valueEncoding: 'buffer' });
      const reads = { n: 0 };
      const getMany = db.getMany.bind(db);
      const get = db.get.bind(db);
      const getSync = db.getSync.bind(db);
      db.getMany = ((...a: Parameters<typeof getMany>) => (reads.n++, getMany(...a))) as typeof db.getMany;
      db.get = ((...a: Parameters<typeof get>) => (reads.n++, get(...a))) as typeof db.get;
      db.getSync = ((...a: Parameters<typeof getSync>) => (reads.n++, getSync(...a))) as typeof db.getSync;
      const s = await MvccStore.open(d, { db, ...(keyIndex === undefined ? {} : { keyIndex }), cacheMaxEntries: 1 });
      reads.n = 0; // the counters open() reads
      return { s, reads };
    };
    const create = (key: string, v: string): TxnCommand => ({
      compares: [{ key, target: 'absent' }],
      success: [{ type: 'put', key, value: enc(v) }],
      failure: [],
    });
    const dir2 = await mkdtemp(join(tmpdir(), 'mvcc-'));
    const dir3 = await mkdtemp(join(tmpdir(), 'mvcc-'));
    let i = 0;
    let { s, reads } = await counted(dir2);
    try {
      expect((await s.apply(++i, create('/k/a', '1')))?.succeeded).toBe(true);
      expect((await s.apply(++i, create('/k/b', '1')))?.succeeded).toBe(true);
      expect(await s.get('/k/missing')).toBeUndefined();
      expect(reads.n).toBe(0);
      // An existing key evicted from the (one-entry) cache is read from disk: it is in the index.
      expect((await s.apply(++i, create('/k/a', '2')))?.succeeded).toBe(false);
      expect(reads.n).toBe(1);
      expect((await s.apply(++i, del('/k/a')))?.succeeded).toBe(true);
      expect(s.liveKeyCount()).toBe(1);
      expect((await s.apply(++i, create('/k/a', '3')))?.succeeded).toBe(true);
      await s.close();
      // Reopened: the index is loaded from the `k:` keyspace.
      ({ s, reads } = await counted(dir2));
      expect(s.liveKeyCount()).toBe(2);
      expect((await s.apply(++i, create('/k/b', 'again')))?.succeeded).toBe(false);
      expect((await s.apply(++i, create('/k/c', '1')))?.succeeded).toBe(true);
      expect(dec((await s.get('/k/a'))?.value)).toBe('3');
      const snap = await s.exportSnapshot();
      // Import replaces the index: keys only the importer had are gone, imported ones exist.
      const other = await counted(dir3);
      try {
        await other.s.apply(1, put('/k/only-here', 'x'));
        await other.s.importSnapshot(snap);
        expect(other.s.liveKeyCount()).toBe(3);
        expect(await other.s.get('/k/only-here')).toBeUndefined();
        expect((await other.s.apply(other.s.appliedIndex() + 1, create('/k/c', 'x')))?.succeeded).toBe(false);
        expect((await other.s.apply(other.s.appliedIndex() + 1, create('/k/only-here', 'y')))?.succeeded).toBe(true);
      } finally {
        await other.s.close();
      }
      await s.close();
      // Without the index every create of an uncached key reads LevelDB first.
      ({ s, reads } = await counted(dir2, false));
      expect(s.liveKeyCount()).toBeUndefined();
      expect((await s.apply(++i, create('/k/d', '1')))?.succeeded).toBe(true);
      expect(reads.n).toBe(1);
    } finally {
      await s.close();
      await rm(dir2, { recursive: true, force: true });
      await rm(dir3, { recursive: true, force: true });
    }
  });

  it('waitForRevision resolves when the revision is applied or times out', async () => {
    const waiting = store.waitForRevision(1, 5000);
    expect(await store.waitForRevision(1, 10)).toBe(false);
    await apply(put('/x', '1'));
    expect(await waiting).toBe(true);
  });

  it('refuses mutations after close with a typed error', async () => {
    await store.close();
    await expect(store.apply(1, put('/a', '1'))).rejects.toMatchObject({ code: 'Closed' });
    store = await MvccStore.open(dir);
  });

  it('encodes and decodes commands; rejects garbage with a typed error', () => {
    const cmd: TxnCommand = {
      compares: [
        { key: '/a', target: 'modRevision', value: 7 },
        { key: '/b', target: 'absent' },
      ],
      success: [
        { type: 'put', key: '/a', value: enc('ü') },
        { type: 'delete', key: '/b' },
      ],
      failure: [{ type: 'get', key: '/a' }],
    };
    const back = decodeCommand(encodeCommand(cmd));
    expect(back.compares).toEqual(cmd.compares);
    expect(back.success[1]).toEqual({ type: 'delete', key: '/b' });
    expect(dec((back.success[0] as { value: Uint8Array }).value)).toBe('ü');
    expect(() => decodeCommand(new Uint8Array([1, 0, 0]))).toThrow(MvccError);
    expect(() => decodeCommand(new Uint8Array([9]))).toThrow(/format/);
  });

  it('waits out a full disk: the refused batch is written once there is space, nothing of it visible before', async () => {
    await apply(put('/a', '1'));
    const control = join(dir, '..', `${dir.split('/').pop()}-faults.json`);
    await writeFile(control, JSON.stringify({ write: 'ENOSPC' }));
    installDiskFaults(new DiskFaultSwitch(control));
    try {
      const pending = apply(put('/a', '2'));
      for (let i = 0; i < 200 && storageDisk.retries === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(storageDisk.full).toBe(true);
      expect(dec((await store.get('/a'))?.value)).toBe('1');
      expect(store.appliedIndex()).toBe(1);
      await writeFile(control, '');
      expect((await pending).revision).toBe(2);
      expect(storageDisk.full).toBe(false);
    } finally {
      installDiskFaults(undefined);
      await rm(control, { force: true });
    }
    await store.close();
    store = await MvccStore.open(dir);
    expect(dec((await store.get('/a'))?.value)).toBe('2');
    expect(store.appliedIndex()).toBe(2);
  });
});
