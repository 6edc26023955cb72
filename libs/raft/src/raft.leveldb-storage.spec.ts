import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
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
    expect(String(err)).toContain(key);
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
