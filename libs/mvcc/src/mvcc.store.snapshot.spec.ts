import { createReadStream } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { BinWriter } from './mvcc.codec.js';
import { MvccStore } from './mvcc.store.js';
import type { SnapshotSource } from './mvcc.snapshot-format.js';
import { TempDirs, chunked, dec, del, enc, observe, put, sleep, watchingFileWrites, writeSampleHistory } from './mvcc.store.fixture.js';
import { type TxnCommand } from './mvcc.types.js';

describe('MvccStore snapshots', () => {
  let dir: string;
  let store: MvccStore;
  let index = 0;
  const apply = async (cmd: TxnCommand) => (await store.apply(++index, cmd))!;
  const dirs = new TempDirs();
  const tempDir = () => dirs.make();
  const writeHistory = () => writeSampleHistory(apply, store);

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mvcc-'));
    store = await MvccStore.open(dir);
    index = 0;
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
    await dirs.removeAll();
  });
  const watchFileWrites = async <T>(fn: (writes: number[]) => Promise<T>, failAt?: number) => watchingFileWrites(await tempDir(), fn, failAt);

  it('exports and imports a snapshot with the retained history', async () => {
    await apply(put('/s/a', '1'));
    await apply(put('/s/b', '1'));
    await apply(del('/s/a'));
    const snap = await store.exportSnapshot();
    const dir2 = await mkdtemp(join(tmpdir(), 'mvcc-'));
    const other = await MvccStore.open(dir2);
    try {
      await other.apply(1, put('/junk', 'x'));
      let resets = 0;
      other.onReset(() => resets++);
      await other.importSnapshot(snap);
      expect(resets).toBe(1);
      expect(other.currentRevision()).toBe(3);
      expect(other.appliedIndex()).toBe(3);
      // Nothing was compacted on the exporter: the importer can read and replay all of it.
      expect(other.compactedRevision()).toBe(0);
      expect(await other.get('/junk')).toBeUndefined();
      const kvs = (await other.range('/')).kvs;
      expect(kvs.map((kv) => [kv.key, kv.createRevision, kv.modRevision, kv.version])).toEqual([['/s/b', 2, 2, 1]]);
      expect((await other.range('/', { atRevision: 3 })).kvs).toHaveLength(1);
      expect((await other.range('/', { atRevision: 2 })).kvs.map((kv) => kv.key)).toEqual(['/s/a', '/s/b']);
      expect((await other.eventsAfter(0)).events.map((e) => `${e.type}:${e.key}@${e.revision}`)).toEqual(['put:/s/a@1', 'put:/s/b@2', 'delete:/s/a@3']);
      // A compacted exporter passes its compacted revision on.
      await store.compact(2);
      await other.importSnapshot(await store.exportSnapshot());
      expect(other.compactedRevision()).toBe(2);
      await expect(other.eventsAfter(1)).rejects.toMatchObject({ code: 'Compacted' });
      expect((await other.eventsAfter(2)).events.map((e) => e.revision)).toEqual([3]);
      await expect(other.importSnapshot(new Uint8Array([1, 2, 3]))).rejects.toMatchObject({ code: 'Corrupt' });
    } finally {
      await other.close();
      await rm(dir2, { recursive: true, force: true });
    }
  });

  it('exports to a file exactly the bytes of exportSnapshot(), in the format it always had, mode 0o600', async () => {
    await store.close();
    const db = new ClassicLevel<string, Buffer>(dir, { keyEncoding: 'utf8', valueEncoding: 'buffer' });
    store = await MvccStore.open(dir, { db });
    await writeHistory();
    const snap = await store.exportSnapshot();
    const file = join(await tempDir(), 'snap.bin');
    expect(await store.exportSnapshotToFile(file)).toEqual({ revision: 7, appliedIndex: 7, bytes: snap.length });
    expect(new Uint8Array(await readFile(file))).toEqual(snap);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    // Format 2: header, then every latest, history and event record as stored, then 0.
    const w = new BinWriter();
    w.str('kapi-mvcc-snapshot').u8(2).num(7).num(7).num(3);
    for (const space of ['k:', 'h:', 'e:']) {
      for (const [k, v] of await db.iterator({ gte: space, lt: `${space[0]};` }).all()) w.u8(1).str(k).bytes(v);
    }
    expect(snap).toEqual(new Uint8Array(w.u8(0).finish()));
  });

  it('exports a store larger than a piece in several writes of about 1 MiB, and removes the file when a write fails', async () => {
    for (let i = 0; i < 40; i++) await apply(put(`/big/${i}`, String(i).repeat(100 * 1024)));
    const file = join(await tempDir(), 'snap.bin');
    const { bytes } = await watchFileWrites(async (writes) => {
      const exported = await store.exportSnapshotToFile(file);
      expect(writes.length).toBeGreaterThanOrEqual(4);
      expect(Math.max(...writes)).toBeLessThan(1.2 * 1024 * 1024);
      return exported;
    });
    expect(bytes).toBeGreaterThan(4 * 1024 * 1024);
    // (Buffer.equals: jest's toEqual walks a typed array element by element.)
    expect((await readFile(file)).equals(await store.exportSnapshot())).toBe(true);
    await expect(watchFileWrites(() => store.exportSnapshotToFile(file), 2)).rejects.toThrow('disk full');
    await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('imports from a file stream and from 1-byte chunks the same state as from one buffer (formats 2 and 1)', async () => {
    await writeHistory();
    const snap = await store.exportSnapshot();
    const file = join(await tempDir(), 'snap.bin');
    await store.exportSnapshotToFile(file);
    // Format 1: the live state only (still read).
    const w = new BinWriter();
    w.str('kapi-mvcc-snapshot').u8(1).num(9).num(12);
    w.u8(1)
      .str('/f/a')
      .num(2)
      .num(9)
      .num(3)
      .bytes(enc('ä'.repeat(20)));
    w.u8(1).str('/f/b').num(4).num(4).num(1).bytes(enc(''));
    const legacy = new Uint8Array(w.u8(0).finish());
    const importInto = async (data: Uint8Array, source: () => SnapshotSource) => {
      const s = await MvccStore.open(await tempDir());
      try {
        await s.apply(1, put('/junk', 'x'));
        await s.apply(2, put('/s/a', 'old'));
        await s.importSnapshotFrom(source);
        return await observe(s);
      } finally {
        await s.close();
      }
    };
    const whole = await importInto(snap, () => [snap]);
    expect(whole).toMatchObject({ revision: 7, applied: 7, compacted: 3, live: 3 });
    expect(whole).toEqual(await observe(store));
    expect(await importInto(snap, () => createReadStream(file, { highWaterMark: 7 }))).toEqual(whole);
    expect(await importInto(snap, chunked(snap, 1))).toEqual(whole);
    const legacyWhole = await importInto(legacy, () => [legacy]);
    expect(legacyWhole).toMatchObject({ revision: 9, applied: 12, compacted: 9, live: 2, events: [] });
    expect(legacyWhole.kvs).toEqual([
      { key: '/f/a', createRevision: 2, modRevision: 9, version: 3, value: 'ä'.repeat(20) },
      { key: '/f/b', createRevision: 4, modRevision: 4, version: 1, value: '' },
    ]);
    expect(await importInto(legacy, chunked(legacy, 1))).toEqual(legacyWhole);
  });

  it('rejects a corrupt snapshot before writing anything, wherever the corruption is, leaving the store as it was', async () => {
    await writeHistory();
    const snap = await store.exportSnapshot();
    const bytes = (...parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts));
    const outside = new BinWriter().u8(1).str('x:evil').bytes(enc('v')).u8(0).finish();
    const corrupt: [string, Uint8Array][] = [
      ['truncated inside a record', snap.subarray(0, snap.length - 12)],
      ['without its terminator', snap.subarray(0, snap.length - 1)],
      ['with a trailing byte', bytes(snap, new Uint8Array([0]))],
      ['with a key outside the keyspaces', bytes(snap.subarray(0, snap.length - 1), outside)],
      ['with an unknown record flag', bytes(snap.subarray(0, snap.length - 1), new Uint8Array([7]))],
      ['with an unknown format', bytes(snap.subarray(0, 22), new Uint8Array([3]), snap.subarray(23))],
    ];
    const d = await tempDir();
    const db = new ClassicLevel<string, Buffer>(d, { keyEncoding: 'utf8', valueEncoding: 'buffer' });
    const other = await MvccStore.open(d, { db });
    try {
      await other.apply(1, put('/o/a', '1'));
      await other.apply(2, put('/o/a', '2'));
      await other.compact(1);
      const before = await observe(other);
      const records = await db.iterator().all();
      for (const [what, data] of corrupt) {
        // One buffer, odd chunks, and the corrupt end alone in the last chunk.
        const sources = [() => [data], chunked(data, 7), () => [data.subarray(0, data.length - 3), data.subarray(data.length - 3)]];
        for (const source of sources) {
          await expect(other.importSnapshotFrom(source)).rejects.toMatchObject({ code: 'Corrupt', message: expect.stringMatching(/^invalid snapshot: /) });
          expect([what, await observe(other)]).toEqual([what, before]);
          expect([what, await db.iterator().all()]).toEqual([what, records]);
        }
      }
      // Still a working store.
      expect((await other.apply(3, put('/o/b', '1')))?.revision).toBe(3);
    } finally {
      await other.close();
    }
  });

  it('after a failure midway through the rewrite it refuses to serve; reopened, it is empty (the marker wiped it)', async () => {
    for (let i = 0; i < 5; i++) await apply(put(`/big/${i}`, String(i).repeat(1024 * 1024)));
    const snap = await store.exportSnapshot();
    await apply(put('/big/0', 'small'));
    const small = await store.exportSnapshot();
    let opens = 0;
    // Pass 1 reads it all; pass 2 fails after more than one batch (4 MiB) was written.
    const failing = async function* (): AsyncGenerator<Uint8Array> {
      const second = ++opens % 2 === 0;
      for (let i = 0; i < snap.length; i += 64 * 1024) {
        if (second && i >= 4.5 * 1024 * 1024) throw new Error('connection lost');
        yield snap.subarray(i, i + 64 * 1024);
      }
    };
    const d = await tempDir();
    let other = await MvccStore.open(d);
    try {
      await other.apply(1, put('/o/a', '1'));
      await expect(other.importSnapshotFrom(failing)).rejects.toThrow('connection lost');
      expect(opens).toBe(2);
      const unusable = { code: 'Corrupt', message: expect.stringContaining('connection lost') };
      await expect(other.get('/o/a')).rejects.toMatchObject(unusable);
      await expect(other.range('/')).rejects.toMatchObject(unusable);
      await expect(other.eventsAfter(0)).rejects.toMatchObject(unusable);
      await expect(other.exportSnapshot()).rejects.toMatchObject(unusable);
      await expect(other.apply(2, put('/o/b', '1'))).rejects.toMatchObject(unusable);
      await other.close();
      // On disk: the marker and part of the snapshot, no counters.
      const raw = new ClassicLevel<string, Buffer>(d, { keyEncoding: 'utf8', valueEncoding: 'buffer' });
      const left = await raw.keys().all();
      await raw.close();
      expect(left).toEqual(['k:/big/0', 'k:/big/1', 'k:/big/2', 'k:/big/3', 'm:importing']);
      other = await MvccStore.open(d);
      expect(await observe(other)).toEqual({ revision: 0, applied: 0, compacted: 0, live: 0, kvs: [], atCompacted: [], events: [] });
      // A later import over a failed one makes the store whole again.
      await expect(other.importSnapshotFrom(failing)).rejects.toThrow('connection lost');
      await other.importSnapshot(small);
      expect(dec((await other.get('/big/0'))?.value)).toBe('small');
      expect(await observe(other)).toEqual(await observe(store));
    } finally {
      await other.close();
    }
  });

  it('reads wait while the import rewrites the store and then see the imported state; during validation they go on', async () => {
    await apply(put('/s/a', 'new'));
    await apply(put('/s/b', 'b'));
    const snap = await store.exportSnapshot();
    const other = await MvccStore.open(await tempDir());
    try {
      await other.apply(1, put('/s/a', 'old'));
      expect(dec((await other.get('/s/a'))?.value)).toBe('old'); // now cached
      let pass = 0;
      let finished = 0;
      const reached: (() => void)[] = [];
      const inPass = [1, 2].map((n) => new Promise<void>((resolve) => (reached[n - 1] = resolve)));
      const slow = async function* (): AsyncGenerator<Uint8Array> {
        const n = ++pass;
        for (let i = 0; i < snap.length; i += 16) {
          if (i === 32) reached[n - 1]!();
          await sleep(2);
          yield snap.subarray(i, i + 16);
        }
        finished = n;
      };
      const importing = other.importSnapshotFrom(slow);
      await inPass[0];
      expect(dec((await other.get('/s/a'))?.value)).toBe('old');
      expect(finished).toBe(0);
      await inPass[1];
      const read = other.get('/s/a').then((kv) => ({ value: dec(kv?.value), finished }));
      const listed = other.range('/s/').then((r) => ({ keys: r.kvs.map((kv) => kv.key), revision: r.revision, finished }));
      expect(await read).toEqual({ value: 'new', finished: 2 });
      expect(await listed).toEqual({ keys: ['/s/a', '/s/b'], revision: 2, finished: 2 });
      await importing;
    } finally {
      await other.close();
    }
  });
});
