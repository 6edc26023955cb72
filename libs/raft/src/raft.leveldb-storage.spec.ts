import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { DiskFaultSwitch, installDiskFaults, storageDisk } from '@app/level';
import { LevelDbRaftStorage } from './raft.leveldb-storage.js';
import { type Entry, isRaftError } from './raft.types.js';

const bytes = (s: string) => new TextEncoder().encode(s);
const ent = (index: number, term: number, s: string): Entry => ({ index, term, type: 'normal', data: bytes(s) });

describe('LevelDbRaftStorage', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'raft-ldb-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  /** Keys of log entries on disk (the storage must be closed). */
  const keyOf = (i: number) => 'e' + i.toString(16).padStart(16, '0');
  const range = (lo: number, hi: number) => Array.from({ length: hi - lo + 1 }, (_, k) => keyOf(lo + k));
  const onDisk = async (): Promise<string[]> => {
    const db = new ClassicLevel<string, Uint8Array>(dir, { keyEncoding: 'utf8', valueEncoding: 'view' });
    await db.open();
    const keys = await db.keys({ gt: 'e', lt: 'f' }).all();
    await db.close();
    return keys;
  };

  it('recovers entries, hard state and snapshot after reopening', async () => {
    const s = await LevelDbRaftStorage.open(dir);
    expect(s.isEmpty()).toBe(true);
    await s.bootstrap([1, 2, 3]);
    await s.save({ entries: [ent(2, 2, 'a'), ent(3, 2, 'b'), ent(4, 2, 'c')], hardState: { term: 2, vote: 1, commit: 3 } });
    await s.close();

    const r = await LevelDbRaftStorage.open(dir);
    expect(r.isEmpty()).toBe(false);
    expect(r.initialState()).toEqual({ hardState: { term: 2, vote: 1, commit: 3 }, confState: { voters: [1, 2, 3], learners: [] } });
    expect(r.firstIndex()).toBe(2);
    expect(r.lastIndex()).toBe(4);
    expect(r.entries(2, 5, 1 << 20).map((e) => new TextDecoder().decode(e.data))).toEqual(['a', 'b', 'c']);
    expect(r.term(1)).toBe(1);
    await r.close();
  });

  it('truncates a conflicting suffix durably', async () => {
    const s = await LevelDbRaftStorage.open(dir);
    await s.bootstrap([1]);
    await s.save({ entries: [ent(2, 2, 'a'), ent(3, 2, 'b'), ent(4, 2, 'c')] });
    await s.save({ entries: [ent(3, 3, 'x')] });
    await s.close();
    const r = await LevelDbRaftStorage.open(dir);
    expect(r.lastIndex()).toBe(3);
    expect(r.term(3)).toBe(3);
    await r.close();
  });

  it('compacts the log behind a snapshot and installs a leader snapshot', async () => {
    const s = await LevelDbRaftStorage.open(dir);
    await s.bootstrap([1, 2]);
    await s.save({ entries: [ent(2, 2, 'a'), ent(3, 2, 'b'), ent(4, 2, 'c'), ent(5, 2, 'd')] });
    await s.createSnapshot(4, { voters: [1, 2], learners: [] }, bytes('state@4'), 3);
    await s.close();
    let r = await LevelDbRaftStorage.open(dir);
    expect(r.snapshot().metadata).toEqual({ index: 4, term: 2, confState: { voters: [1, 2], learners: [] } });
    expect(new TextDecoder().decode(r.snapshot().data)).toBe('state@4');
    expect(r.firstIndex()).toBe(5);
    expect(r.lastIndex()).toBe(5);
    let err: unknown;
    try {
      r.entries(3, 5, 100);
    } catch (e) {
      err = e;
    }
    expect(isRaftError(err, 'ErrCompacted')).toBe(true);
    await r.save({ snapshot: { metadata: { index: 10, term: 3, confState: { voters: [1, 2, 3], learners: [] } }, data: bytes('s10') }, entries: [] });
    await r.close();
    r = await LevelDbRaftStorage.open(dir);
    expect(r.firstIndex()).toBe(11);
    expect(r.lastIndex()).toBe(10);
    expect(r.initialState().confState.voters).toEqual([1, 2, 3]);
    await r.close();
  });

  it('deletes compacted entries from disk, and entries below the log at open', async () => {
    const s = await LevelDbRaftStorage.open(dir);
    await s.bootstrap([1]);
    await s.save({ entries: Array.from({ length: 20 }, (_, k) => ent(k + 2, 2, `v${k + 2}`)) });
    // Snapshot at 15, entries 13-15 kept in the log for slow followers.
    await s.createSnapshot(15, { voters: [1], learners: [] }, new Uint8Array(0), 12);
    expect(s.firstIndex()).toBe(13);
    await s.compacted();
    await s.close();
    expect(await onDisk()).toEqual(range(13, 21));

    // After a restart the log starts after the snapshot: 13-15 are below it, as the entries of
    // a compaction interrupted by a crash would be, and are removed at open.
    const r = await LevelDbRaftStorage.open(dir);
    expect(r.firstIndex()).toBe(16);
    expect(r.lastIndex()).toBe(21);
    await r.close();
    expect(await onDisk()).toEqual(range(16, 21));
    const again = await LevelDbRaftStorage.open(dir);
    expect(again.entries(16, 22, 1 << 20).map((e) => new TextDecoder().decode(e.data))).toEqual(['v16', 'v17', 'v18', 'v19', 'v20', 'v21']);
    await again.close();
  });

  it('installing a leader snapshot drops the log after it at once and clears the rest in the background', async () => {
    const s = await LevelDbRaftStorage.open(dir);
    await s.bootstrap([1, 2]);
    // A follower's log 2..300 of an old term; the leader's snapshot at 200 (term 5) replaces it,
    // and the leader sends 201..202 of its own term with it.
    await s.save({ entries: Array.from({ length: 299 }, (_, k) => ent(k + 2, 2, `old${k + 2}`)) });
    await s.save({
      snapshot: { metadata: { index: 200, term: 5, confState: { voters: [1, 2], learners: [] } }, data: bytes('s200') },
      entries: [ent(201, 5, 'n201'), ent(202, 5, 'n202')],
    });
    expect([s.firstIndex(), s.lastIndex()]).toEqual([201, 202]);
    await s.compacted();
    await s.close();
    expect(await onDisk()).toEqual(range(201, 202));
    const r = await LevelDbRaftStorage.open(dir);
    expect([r.firstIndex(), r.lastIndex(), r.term(202)]).toEqual([201, 202, 5]);
    expect(r.entries(201, 203, 1 << 20).map((e) => new TextDecoder().decode(e.data))).toEqual(['n201', 'n202']);
    await r.close();
  });

  it('records a snapshot held in a file by its path, keeps the file until a later record replaces it, and drops data once the state machine holds it', async () => {
    const files = mkdtempSync(join(tmpdir(), 'raft-ldb-files-'));
    try {
      const cs = { voters: [1, 2], learners: [] };
      const f10 = join(files, 'recv-10.snap');
      const f20 = join(files, 'recv-20.snap');
      writeFileSync(f10, 'state@10');
      writeFileSync(f20, 'state@20');
      const s = await LevelDbRaftStorage.open(dir);
      await s.bootstrap([1, 2]);
      await s.save({ snapshot: { metadata: { index: 10, term: 2, confState: cs }, data: new Uint8Array(0), file: f10 }, entries: [ent(11, 2, 'a')] });
      await s.close();
      // The record names the file (relative to the storage's directory, resolved on open).
      let r = await LevelDbRaftStorage.open(dir);
      expect(r.snapshot()).toEqual({ metadata: { index: 10, term: 2, confState: cs }, data: new Uint8Array(0), file: f10 });
      // A newer received snapshot replaces it: the old file goes once the new record is durable.
      await r.save({ snapshot: { metadata: { index: 20, term: 3, confState: cs }, data: new Uint8Array(0), file: f20 }, entries: [] });
      expect(existsSync(f10)).toBe(false);
      expect(existsSync(f20)).toBe(true);
      // Installed by a durable state machine: metadata only from here, the file deleted.
      await r.dropSnapshotData();
      expect(existsSync(f20)).toBe(false);
      const metadataOnly = (): void => {
        expect(r.snapshot().metadata).toEqual({ index: 20, term: 3, confState: cs });
        expect([r.snapshot().data.length, r.snapshot().file]).toEqual([0, undefined]);
      };
      metadataOnly();
      await r.close();
      r = await LevelDbRaftStorage.open(dir);
      metadataOnly();
      // The same for a snapshot whose data is in the record itself.
      await r.save({ snapshot: { metadata: { index: 30, term: 3, confState: cs }, data: bytes('state@30') }, entries: [ent(31, 3, 'b')] });
      await r.dropSnapshotData();
      await r.close();
      r = await LevelDbRaftStorage.open(dir);
      expect(r.snapshot().data.length).toBe(0);
      expect([r.snapshot().metadata.index, r.firstIndex(), r.lastIndex()]).toEqual([30, 31, 31]);
      // createSnapshot replacing a file snapshot deletes the file too.
      const f40 = join(files, 'recv-40.snap');
      writeFileSync(f40, 'state@40');
      await r.save({
        snapshot: { metadata: { index: 40, term: 4, confState: cs }, data: new Uint8Array(0), file: f40 },
        entries: [ent(41, 4, 'c'), ent(42, 4, 'd')],
      });
      await r.createSnapshot(41, cs, new Uint8Array(0));
      expect(existsSync(f40)).toBe(false);
      await r.close();
    } finally {
      rmSync(files, { recursive: true, force: true });
    }
  });

  it('keeps the index of its own removal across reopening until it is cleared, and reports a damaged record', async () => {
    const s = await LevelDbRaftStorage.open(dir);
    await s.bootstrap([1, 2]);
    expect(s.removedAt()).toBeUndefined();
    await s.setRemovedAt(7);
    await s.close();
    const r = await LevelDbRaftStorage.open(dir);
    expect(r.removedAt()).toBe(7);
    await r.setRemovedAt(undefined);
    await r.close();
    const t = await LevelDbRaftStorage.open(dir);
    expect(t.removedAt()).toBeUndefined();
    await t.setRemovedAt(9);
    await t.close();
    const db = new ClassicLevel<string, Uint8Array>(dir, { keyEncoding: 'utf8', valueEncoding: 'view' });
    await db.open();
    const bad = (await db.get('r'))!.slice();
    bad[bad.length - 2] = bad[bad.length - 2]! ^ 0xff;
    await db.put('r', bad);
    await db.close();
    await expect(LevelDbRaftStorage.open(dir)).rejects.toThrow(`raft log in ${dir}: checksum mismatch in record r`);
  });

  it('reports a corrupted record as ErrCorrupt instead of applying it', async () => {
    const s = await LevelDbRaftStorage.open(dir);
    await s.bootstrap([1]);
    await s.save({ entries: [ent(2, 2, 'good'), ent(3, 2, 'also-good')] });
    await s.close();
    // Flip one byte of entry 3's payload behind the storage's back.
    const db = new ClassicLevel<string, Uint8Array>(dir, { keyEncoding: 'utf8', valueEncoding: 'view' });
    await db.open();
    const key = 'e' + (3).toString(16).padStart(16, '0');
    const raw = (await db.get(key))!;
    const bad = raw.slice();
    bad[bad.length - 1] = bad[bad.length - 1]! ^ 0xff;
    await db.put(key, bad);
    await db.close();
    let err: unknown;
    try {
      await LevelDbRaftStorage.open(dir);
    } catch (e) {
      err = e;
    }
    expect(isRaftError(err, 'ErrCorrupt')).toBe(true);
    expect(String(err)).toContain(`raft log in ${dir}: checksum mismatch in record ${key} (log entry 3)`);
  });

  it('reports lost records at the end of the log (hard state commits past it) as ErrCorrupt', async () => {
    const s = await LevelDbRaftStorage.open(dir);
    await s.bootstrap([1]);
    await s.save({ entries: [ent(2, 2, 'a'), ent(3, 2, 'b')], hardState: { term: 2, vote: 1, commit: 3 } });
    await s.close();
    const db = new ClassicLevel<string, Uint8Array>(dir, { keyEncoding: 'utf8', valueEncoding: 'view' });
    await db.open();
    await db.del(keyOf(3));
    await db.close();
    await expect(LevelDbRaftStorage.open(dir)).rejects.toThrow(/hard state commits index 3 but the log ends at index 2/);
  });

  describe('under injected disk faults', () => {
    let control: string;
    beforeEach(() => {
      control = join(dir, '..', `${dir.split('/').pop()}-faults.json`);
      writeFileSync(control, '');
      installDiskFaults(new DiskFaultSwitch(control));
    });
    afterEach(() => {
      installDiskFaults(undefined);
      rmSync(control, { force: true });
    });
    const setFaults = (plan: object) => writeFileSync(control, JSON.stringify(plan));

    it('waits out a full disk: the same batch is written once space is back, and the disk state says so meanwhile', async () => {
      const s = await LevelDbRaftStorage.open(dir);
      await s.bootstrap([1]);
      setFaults({ write: 'ENOSPC' });
      let done = false;
      const saving = s.save({ entries: [ent(2, 2, 'a')], hardState: { term: 2, vote: 1, commit: 2 } }).then(() => (done = true));
      const until = async (cond: () => boolean) => {
        for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
      };
      await until(() => storageDisk.retries > 0);
      expect(storageDisk.full).toBe(true);
      expect(storageDisk.error).toMatch(/No space left on device/);
      expect(done).toBe(false);
      // Nothing of the refused batch is visible while it waits.
      expect(s.lastIndex()).toBe(1);
      setFaults({});
      await saving;
      expect(storageDisk.full).toBe(false);
      expect(s.lastIndex()).toBe(2);
      await s.save({ entries: [ent(3, 2, 'b')] });
      await s.close();
      const r = await LevelDbRaftStorage.open(dir);
      expect(r.entries(2, 4, 1 << 20).map((e) => new TextDecoder().decode(e.data))).toEqual(['a', 'b']);
      expect(r.hardState()).toEqual({ term: 2, vote: 1, commit: 2 });
      await r.close();
    });

    it('keeps a commit-only change in memory and writes it with the next batch, or at close', async () => {
      const s = await LevelDbRaftStorage.open(dir);
      await s.bootstrap([1]);
      await s.save({ entries: [ent(2, 2, 'a'), ent(3, 2, 'b')], hardState: { term: 2, vote: 1, commit: 1 } });
      // Any write would fail now: the commit-only save must not write.
      setFaults({ write: 'EIO' });
      await s.save({ entries: [], hardState: { term: 2, vote: 1, commit: 2 } }, false);
      expect(s.hardState()).toEqual({ term: 2, vote: 1, commit: 2 });
      // A vote is durable state: it is written (and fails here) even without mustSync.
      await expect(s.save({ entries: [], hardState: { term: 3, vote: 1, commit: 2 } }, false)).rejects.toThrow(/Input\/output error/);
      setFaults({});
      // The next batch carries the commit index kept in memory.
      await s.save({ entries: [ent(4, 2, 'c')] });
      await s.save({ entries: [], hardState: { term: 2, vote: 1, commit: 4 } }, false);
      // close() writes commit 4; here that write fails, and only commit 4 is lost.
      setFaults({ write: 'EIO' });
      await s.close();
      setFaults({});
      const r = await LevelDbRaftStorage.open(dir);
      expect(r.hardState()).toEqual({ term: 2, vote: 1, commit: 2 });
      expect(r.lastIndex()).toBe(4);
      await r.save({ entries: [], hardState: { term: 2, vote: 1, commit: 3 } }, false);
      await r.close();
      const again = await LevelDbRaftStorage.open(dir);
      expect(again.hardState()).toEqual({ term: 2, vote: 1, commit: 3 });
      await again.close();
    });

    it('fails at once on an I/O error of a write or of its fsync, leaving memory and disk as they were', async () => {
      const s = await LevelDbRaftStorage.open(dir);
      await s.bootstrap([1]);
      for (const plan of [{ write: 'EIO' }, { fsync: 'EIO' }]) {
        setFaults(plan);
        await expect(s.save({ entries: [ent(2, 2, 'a')] })).rejects.toThrow(/Input\/output error/);
        expect(s.lastIndex()).toBe(1);
      }
      setFaults({});
      await s.close();
      expect(await onDisk()).toEqual([]);
    });
  });

  it('reports a gap in the log as ErrCorrupt', async () => {
    const s = await LevelDbRaftStorage.open(dir);
    await s.bootstrap([1]);
    await s.save({ entries: [ent(2, 2, 'a'), ent(3, 2, 'b'), ent(4, 2, 'c')] });
    await s.close();
    const db = new ClassicLevel<string, Uint8Array>(dir, { keyEncoding: 'utf8', valueEncoding: 'view' });
    await db.open();
    await db.del('e' + (3).toString(16).padStart(16, '0'));
    await db.close();
    await expect(LevelDbRaftStorage.open(dir)).rejects.toThrow(/ErrCorrupt/);
  });
});
