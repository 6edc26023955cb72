import { createServer, type AddressInfo } from 'node:net';
import { readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MvccStore, encodeCommand, type TxnCommand } from '@app/mvcc';
import { openClusterStorage, type ClusterStorage, type ClusterStorageOptions } from './cluster.storage.js';
import { LevelDbRaftStorage, type RaftNode } from '@app/raft';
import { MvccStateMachine, emptyMvccSnapshot, mvccSnapshotHeader } from './mvcc.state-machine.js';
import { RaftProposer } from './raft.proposer.js';
import { ETCD_PUTS_LOG_FORMAT, type EtcdCommand } from './etcd.command.js';
import type { KubeObject } from '@app/apimachinery';
import { StorageError } from './storage.interface.js';
import { ALARM_PREFIX, SpaceQuota, directorySize } from './space.quota.js';
import { objectKey } from './storage.keys.js';

const cm = (name: string, v = '1'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default', uid: `u-${name}` },
  data: { v },
});
const key = (name: string): string => objectKey({ group: '', resource: 'configmaps', namespace: 'default', name });
const put = (k: string, v: string): TxnCommand => ({ compares: [], success: [{ type: 'put', key: k, value: new TextEncoder().encode(v) }], failure: [] });

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

async function waitFor(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * A three-member Raft group over gRPC on loopback (plaintext peers): its members' data dirs,
 * open(i) for member i + 1 (10 ms ticks, no periodic compaction, then `extra`), and for tests
 * that stop members: startAll() (all three open, a leader elected), stop(n), closeAll().
 */
async function threeMembers(name: string, extra: Partial<ClusterStorageOptions> = {}) {
  const ports = await Promise.all([0, 1, 2].map(() => freePort()));
  const peers = new Map(ports.map((p, i) => [i + 1, `127.0.0.1:${p}`] as [number, string]));
  const dirs = await Promise.all([1, 2, 3].map((i) => mkdtemp(join(tmpdir(), `cluster-${name}-${i}-`))));
  const open = (i: number): Promise<ClusterStorage> =>
    openClusterStorage({
      dataDir: dirs[i]!,
      nodeId: i + 1,
      bootstrapVoters: [1, 2, 3],
      listen: peers.get(i + 1)!,
      peers,
      insecurePeers: true,
      tickMs: 10,
      compactionIntervalMs: 0,
      ...extra,
    });
  const removeDirs = async (): Promise<void> => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  };
  const running = new Set<ClusterStorage>();
  const startAll = async (): Promise<{ nodes: ClusterStorage[]; leader: ClusterStorage }> => {
    const nodes: ClusterStorage[] = [];
    for (let i = 0; i < 3; i++) {
      const n = await open(i);
      nodes.push(n);
      running.add(n);
    }
    await waitFor(() => nodes.some((n) => n.node.status().role === 'leader'));
    return { nodes, leader: nodes.find((n) => n.node.status().role === 'leader')! };
  };
  const stop = async (n: ClusterStorage): Promise<void> => {
    running.delete(n);
    await n.close();
  };
  /** Closes the members still running and removes the data dirs. */
  const closeAll = async (): Promise<void> => {
    for (const n of running) await n.close();
    running.clear();
    await removeDirs();
  };
  return { dirs, open, removeDirs, startAll, stop, closeAll, running };
}

describe('MvccStateMachine', () => {
  let dir: string;
  let store: MvccStore;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mvcc-sm-'));
    store = await MvccStore.open(dir);
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('applies entry N with appliedIndex N and rejects malformed bytes deterministically', async () => {
    const sm = new MvccStateMachine(store);
    const r = await sm.apply({ index: 2, term: 1, data: encodeCommand(put('a', 'x')) });
    expect((await r.deferred).revision).toBe(1);
    expect(sm.appliedIndex()).toBe(2);
    const bad = await sm.apply({ index: 3, term: 1, data: new Uint8Array([99, 1, 2]) });
    expect((await bad.deferred).error).toBeDefined();
    expect(sm.appliedIndex()).toBe(3);
    expect(store.currentRevision()).toBe(1);
  });

  it('writes entries handed over together as one batch, in order, and waitApplied covers them all', async () => {
    const sm = new MvccStateMachine(store);
    const handed = await Promise.all([1, 2, 3].map((i) => sm.apply({ index: i + 1, term: 1, data: encodeCommand(put('k', `v${i}`)) })));
    // Nothing is written before the batch runs; then all three land with consecutive revisions.
    expect(sm.appliedIndex()).toBe(0);
    await sm.waitApplied();
    expect(sm.appliedIndex()).toBe(4);
    expect(await Promise.all(handed.map(async (h) => (await h.deferred).revision))).toEqual([1, 2, 3]);
    expect(new TextDecoder().decode((await store.get('k'))!.value)).toBe('v3');
  });

  it('snapshots at its applied index and restores, including the empty founding snapshot', async () => {
    const sm = new MvccStateMachine(store);
    await (
      await sm.apply({ index: 5, term: 1, data: encodeCommand(put('a', 'x')) })
    ).deferred;
    const snap = await sm.snapshot();
    expect(snap.index).toBe(5);
    expect(mvccSnapshotHeader(snap.data)).toEqual({ revision: 1, appliedIndex: 5 });
    await sm.restore({ index: 1, term: 1, data: new Uint8Array() });
    expect(sm.appliedIndex()).toBe(1);
    expect(await store.get('a')).toBeUndefined();
    await sm.restore(snap);
    expect(new TextDecoder().decode((await store.get('a'))!.value)).toBe('x');
    expect(mvccSnapshotHeader(emptyMvccSnapshot(7)).appliedIndex).toBe(7);
    await expect(sm.restore({ index: 9, term: 1, data: new Uint8Array([1, 2, 3]) })).rejects.toMatchObject({ code: 'Corrupt' });
  });
});

describe('openClusterStorage (single-node Raft group)', () => {
  let dir: string;
  let cs: ClusterStorage | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cluster-storage-'));
  });
  afterEach(async () => {
    await cs?.close();
    cs = undefined;
    await rm(dir, { recursive: true, force: true });
  });
  const open = async (extra: Partial<Parameters<typeof openClusterStorage>[0]> = {}): Promise<ClusterStorage> =>
    openClusterStorage({ dataDir: dir, nodeId: 7, bootstrapVoters: [7], tickMs: 10, compactionIntervalMs: 0, ...extra });

  it('writes through Raft, reads Most Recent, and replays the log after a restart', async () => {
    cs = await open();
    await waitFor(() => cs!.node.status().role === 'leader');
    const created = await cs.storage.create(key('a'), cm('a'));
    expect(created.metadata.resourceVersion).toBe('1');
    // The store's applied index is the Raft index of the entry, not a local counter.
    expect(cs.store.appliedIndex()).toBe(cs.node.status().applied);
    expect((await cs.storage.get(key('a'), { mode: 'MostRecent' }))?.data).toEqual({ v: '1' });
    await Promise.all(Array.from({ length: 30 }, (_, i) => cs!.storage.create(key(`b${i}`), cm(`b${i}`))));
    expect(cs.storage.currentRevision()).toBe(31);
    expect(cs.proposer.stats.committed).toBe(31);
    await cs.close();
    cs = await open();
    await waitFor(() => cs!.node.status().role === 'leader');
    expect(cs.storage.currentRevision()).toBe(31);
    const next = await cs.storage.create(key('c'), cm('c'));
    expect(next.metadata.resourceVersion).toBe('32');
    expect((await cs.storage.list('/registry/core/configmaps/', { consistency: { mode: 'MostRecent' } })).items).toHaveLength(32);
  });

  it('compacts the log every N entries behind metadata-only snapshots of the synced store, and refuses a store that fell behind them', async () => {
    cs = await open({ snapshotEntries: 10, keepEntries: 2 });
    await waitFor(() => cs!.node.status().role === 'leader');
    for (let i = 0; i < 40; i++) await cs.storage.create(key(`s${i}`), cm(`s${i}`));
    const snap = cs.raftStorage.snapshot();
    expect(snap.metadata.index).toBeGreaterThan(20);
    expect(cs.raftStorage.firstIndex()).toBeGreaterThan(1);
    // The store is the snapshot: the Raft storage keeps index, term and membership only.
    expect(snap.data.length).toBe(0);
    expect(cs.stateMachine.stats.snapshotsTaken).toBe(0);
    await cs.close();
    // The store was synced before the log was compacted: a restart replays only the tail.
    cs = await open({ snapshotEntries: 10, keepEntries: 2 });
    await waitFor(() => cs!.node.status().role === 'leader');
    await waitFor(() => cs!.node.status().applied === cs!.node.status().commit);
    await cs.stateMachine.waitApplied();
    expect(cs.storage.currentRevision()).toBe(40);
    expect(cs.stateMachine.stats.snapshotsRestored).toBe(0);
    expect((await cs.storage.get(key('s39'), { mode: 'MostRecent' }))?.metadata.name).toBe('s39');
    await cs.close();
    cs = undefined;
    // Without its store the node cannot rebuild the compacted prefix: it must not start empty.
    await rm(join(dir, 'mvcc'), { recursive: true, force: true });
    await expect(open({ snapshotEntries: 10, keepEntries: 2 })).rejects.toThrow(/state-machine data is missing/);
  });

  it('installs at open a received snapshot whose install a crash cut off, and clears stale snapshot files', async () => {
    // The state of another node, exported to a file as a leader does for a lagging follower.
    const otherDir = await mkdtemp(join(tmpdir(), 'cluster-storage-other-'));
    const other = await openClusterStorage({ dataDir: otherDir, nodeId: 7, bootstrapVoters: [7], tickMs: 10, compactionIntervalMs: 0 });
    let exported: { index: number; term: number; file: string };
    try {
      await waitFor(() => other.node.status().role === 'leader');
      for (let i = 0; i < 12; i++) await other.storage.create(key(`x${i}`), cm(`x${i}`));
      await other.storage.guaranteedUpdate(key('x0'), (o) => ({ ...o, data: { v: '2' } }));
      const s = await other.stateMachine.snapshot();
      expect(s.file).toBeDefined();
      exported = { index: s.index, term: other.raftStorage.term(s.index), file: s.file! };
    } finally {
      await other.close();
    }
    // This node received that snapshot: the file is in its snapshot directory and the log's
    // storage recorded it, but the process died before the store was replaced. Beside it, the
    // leftovers of an export and of a transfer cut off.
    await mkdir(join(dir, 'snap'), { recursive: true });
    const received = join(dir, 'snap', 'recv-1.snap');
    await rename(exported.file, received);
    await writeFile(join(dir, 'snap', 'send-1.snap'), 'stale export');
    await writeFile(join(dir, 'snap', 'recv-2.snap'), 'cut off');
    await rm(otherDir, { recursive: true, force: true });
    const rs = await LevelDbRaftStorage.open(join(dir, 'raft'));
    await rs.save({
      snapshot: { metadata: { index: exported.index, term: exported.term, confState: { voters: [7], learners: [] } }, data: new Uint8Array(0), file: received },
      hardState: { term: exported.term, vote: 0, commit: exported.index },
      entries: [],
    });
    await rs.close();

    cs = await open();
    // Installed from the file at open; the log's storage keeps only metadata now.
    expect(cs.stateMachine.stats.snapshotsRestored).toBe(1);
    expect(cs.store.appliedIndex()).toBe(exported.index);
    expect([cs.raftStorage.snapshot().data.length, cs.raftStorage.snapshot().file]).toEqual([0, undefined]);
    expect(await readdir(join(dir, 'snap'))).toEqual([]);
    await waitFor(() => cs!.node.status().role === 'leader');
    expect(cs.storage.currentRevision()).toBe(13);
    expect((await cs.storage.get(key('x0'), { mode: 'MostRecent' }))?.data).toEqual({ v: '2' });
    expect((await cs.storage.get(key('x0'), { mode: 'Exact', revision: 1 }))?.data).toEqual({ v: '1' });
    const next = await cs.storage.create(key('y'), cm('y'));
    expect(next.metadata.resourceVersion).toBe('14');
  });

  it('refuses a data dir written without Raft', async () => {
    const store = await MvccStore.open(join(dir, 'mvcc'));
    await store.apply(1, put('x', 'y'));
    await store.close();
    await expect(open()).rejects.toBeInstanceOf(StorageError);
  });

  it('without a quorum, writes and Most Recent reads fail as Unavailable while resourceVersion=0 reads answer', async () => {
    // Three founding voters, two of which never run: no leader can be elected.
    cs = await open({ bootstrapVoters: [7, 8, 9], leaderWaitMs: 300, readTimeoutMs: 300 });
    const w = await cs.storage.create(key('a'), cm('a')).catch((e: unknown) => e);
    expect(w).toBeInstanceOf(StorageError);
    expect(w).toMatchObject({ code: 'Unavailable' });
    const r = await cs.storage.get(key('a'), { mode: 'MostRecent' }).catch((e: unknown) => e);
    expect(r).toMatchObject({ code: 'Unavailable' });
    expect(await cs.storage.get(key('a'), { mode: 'Any' })).toBeUndefined();
    expect(cs.proposer.stats.failed).toBe(1);
    expect(cs.proposer.stats.readIndexFailed).toBe(1);
  });

  it('refuses a write at once with TooManyRequests while pending proposals hold their bound, and takes writes again once they end', async () => {
    // No leader can be elected: proposals wait leaderWaitMs, and stay pending meanwhile.
    cs = await open({ bootstrapVoters: [7, 8, 9], leaderWaitMs: 1500, maxPendingProposalBytes: 100_000 });
    const value = 'x'.repeat(40_000);
    // One proposal alone is always taken, however large.
    const huge = cs.storage.create(key('huge'), cm('huge', 'y'.repeat(200_000))).catch((e: unknown) => e);
    expect(cs.proposer.stats.pending).toBe(1);
    expect(cs.proposer.stats.pendingBytes).toBeGreaterThan(200_000);
    const refusedAtOnce = await cs.storage.create(key('small'), cm('small')).catch((e: unknown) => e);
    expect(refusedAtOnce).toMatchObject({ code: 'TooManyRequests' });
    expect((refusedAtOnce as Error).message).toMatch(/too many requests: proposals of \d+ bytes are pending on this node \(at most 100000\)/);
    expect(await huge).toMatchObject({ code: 'Unavailable' });
    expect(cs.proposer.stats.pending).toBe(0);
    expect(cs.proposer.stats.pendingBytes).toBe(0);

    // Two of 40 KB fit under 100,000 bytes; the third is refused, the first two wait on.
    const first = cs.storage.create(key('a'), cm('a', value)).catch((e: unknown) => e);
    const second = cs.storage.create(key('b'), cm('b', value)).catch((e: unknown) => e);
    const third = await cs.storage.create(key('c'), cm('c', value)).catch((e: unknown) => e);
    expect(third).toBeInstanceOf(StorageError);
    expect(third).toMatchObject({ code: 'TooManyRequests' });
    expect(cs.proposer.stats.pending).toBe(2);
    expect(cs.proposer.stats.refused).toBe(2);
    expect(await first).toMatchObject({ code: 'Unavailable' });
    expect(await second).toMatchObject({ code: 'Unavailable' });
    expect(cs.proposer.stats.pendingBytes).toBe(0);
  });

  it('over the space quota, refuses writes that add data before proposing them, raises a replicated NOSPACE alarm, and takes deletes', async () => {
    cs = await open();
    await cs.storage.create(key('kept'), cm('kept'));
    let quotaBytes = 1; // the store is larger already
    const quota = new SpaceQuota({
      get quotaBytes() {
        return quotaBytes;
      },
      selfId: 7,
      sizeOf: () => directorySize(join(dir, 'mvcc')),
      store: cs.store,
      write: (c) => cs!.proposer.propose(c),
    });
    await quota.start();
    try {
      cs.proposer.setQuota(quota);
      const revision = cs.store.currentRevision();
      const refused = await cs.storage.create(key('more'), cm('more')).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(StorageError);
      expect(refused).toMatchObject({ code: 'NoSpace' });
      // The refusal is answered once the alarm went through the log: a record in the store, the
      // write's revision never taken.
      expect(quota.list()).toEqual([{ memberId: 7, alarm: 'NOSPACE' }]);
      expect((await cs.store.range(ALARM_PREFIX)).kvs.map((kv) => kv.key)).toEqual([`${ALARM_PREFIX}7/NOSPACE`]);
      expect(cs.store.currentRevision()).toBe(revision + 1);
      expect(await cs.storage.get(key('more'), { mode: 'MostRecent' })).toBeUndefined();
      // etcd commands too; a delete is taken.
      await expect(
        cs.proposer.proposeEtcd({ txn: { compare: [], success: [{ put: { key: 'e', value: new Uint8Array(1), lease: '0' } }], failure: [] } }),
      ).rejects.toMatchObject({
        code: 'NoSpace',
      });
      await cs.storage.delete(key('kept'));
      expect(await cs.storage.get(key('kept'), { mode: 'MostRecent' })).toBeUndefined();
      // Disarmed with room again: writes are taken.
      quotaBytes = 1 << 30;
      await quota.deactivate({ memberId: 7, alarm: 'NOSPACE' });
      await cs.storage.create(key('more'), cm('more'));
    } finally {
      quota.stop();
      cs.proposer.setQuota(undefined);
    }
  });
});

describe('openClusterStorage (three nodes over gRPC)', () => {
  it('compacts history through the log: the leader proposes, every replica compacts at the same revision', async () => {
    const group = await threeMembers('compact');
    const nodes: ClusterStorage[] = [];
    try {
      for (let i = 0; i < 3; i++) nodes.push(await group.open(i));
      await waitFor(() => nodes.some((n) => n.node.status().role === 'leader'));
      const leader = nodes.find((n) => n.node.status().role === 'leader')!;
      const followers = nodes.filter((n) => n !== leader);
      for (let i = 0; i < 5; i++) await leader.storage.create(key(`c${i}`), cm(`c${i}`));
      await waitFor(() => nodes.every((n) => n.storage.currentRevision() === 5));
      // First tick on every node: records the mark (revision 5), compacts nothing yet.
      for (const n of nodes) await n.storage.compactionTick();
      for (let i = 0; i < 5; i++) await leader.storage.guaranteedUpdate(key(`c${i}`), (o) => ({ ...o, data: { v: '2' } }));
      await waitFor(() => nodes.every((n) => n.storage.currentRevision() === 10));
      // A follower's tick proposes nothing.
      await followers[0]!.storage.compactionTick();
      expect(nodes.map((n) => n.store.compactedRevision())).toEqual([0, 0, 0]);
      await leader.storage.compactionTick();
      await waitFor(() => nodes.every((n) => n.store.compactedRevision() === 5));
      for (const n of nodes) {
        await n.store.whenPurged();
        const old = await n.storage.get(key('c0'), { mode: 'Exact', revision: 4 }).catch((e: unknown) => e);
        expect(old).toMatchObject({ code: 'Compacted' });
        expect((await n.storage.get(key('c0'), { mode: 'Exact', revision: 5 }))?.data).toEqual({ v: '1' });
      }
      // The compaction took no revision.
      expect(nodes.map((n) => n.storage.currentRevision())).toEqual([10, 10, 10]);
    } finally {
      for (const n of nodes) await n.close();
      await group.removeDirs();
    }
  });
});

describe('openClusterStorage (a write through a follower while its leader is gone)', () => {
  it('hands back a proposal the follower could not send to its stopped leader, and retries it through the next one', async () => {
    // 100 ms ticks: an election takes a few hundred ms, time enough to write before it.
    const group = await threeMembers('undelivered', { tickMs: 100 });
    try {
      const { nodes, leader } = await group.startAll();
      const follower = nodes.find((n) => n !== leader)!;
      await follower.storage.create(key('before'), cm('before'));
      await group.stop(leader);
      // The follower has seen its connection to the leader close, but no election has run yet
      // (it campaigns two heartbeats later): its proposal has nowhere to go.
      await new Promise((r) => setTimeout(r, 50));
      expect(follower.node.status().lead).toBe(leader.node.id);
      await follower.storage.create(key('after'), cm('after'));
      expect(follower.node.status().lead).not.toBe(leader.node.id);
      for (const n of group.running) await waitFor(() => n.storage.currentRevision() === 2);
      expect((await follower.storage.get(key('after'), { mode: 'MostRecent' }))?.data).toEqual({ v: '1' });
    } finally {
      await group.closeAll();
    }
  });
});

/** A write of `value` to `key` through member `n`, resolving with the revision it was answered with. */
type Write = (n: ClusterStorage, key: string, value: string) => Promise<number>;

/**
 * Three members; 150 puts of distinct keys in flight through the two followers when the leader
 * stops: what each put ended with, how many revisions each survivor added (one per put applied,
 * plus one settling write through the new leader), and the followers' proposers.
 */
async function putsThroughLeaderStop(write: Write): Promise<{ failed: string[]; added: number[]; proposers: RaftProposer[] }> {
  const group = await threeMembers('failover', { tickMs: 20 });
  try {
    const { nodes, leader } = await group.startAll();
    const followers = nodes.filter((n) => n !== leader);
    const before = await write(followers[0]!, '/warm', 'x');
    for (const n of nodes) await waitFor(() => n.store.currentRevision() === before);
    const writes = Array.from({ length: 150 }, (_, i) =>
      write(followers[i % 2]!, `/w/${i}`, `v${i}`).then(
        () => undefined,
        (e: unknown) => `${i}: ${(e as Error).message}`,
      ),
    );
    // The leader stops while the puts are on their way to it, in its log, or replicated.
    await new Promise((r) => setTimeout(r, 5));
    await group.stop(leader);
    const failed = (await Promise.all(writes)).filter((f): f is string => f !== undefined);
    await waitFor(() => followers.some((n) => n.node.status().role === 'leader'), 10_000);
    const next = followers.find((n) => n.node.status().role === 'leader')!;
    const settled = await write(next, '/last', 'x');
    for (const n of followers) await waitFor(() => n.store.currentRevision() === settled);
    return { failed, added: followers.map((n) => n.store.currentRevision() - before), proposers: followers.map((n) => n.proposer) };
  } finally {
    await group.closeAll();
  }
}

describe('openClusterStorage (writes across a leader change)', () => {
  it('answers every write in flight through a stopped leader, and applies each once', async () => {
    const { failed, added } = await putsThroughLeaderStop(async (n, k, v) => (await n.proposer.propose(put(k, v))).revision);
    expect(failed).toEqual([]);
    // One revision per put and one for the settling write: none was applied twice.
    expect(added).toEqual([151, 151]);
  });
});

describe('openClusterStorage (etcd Puts packed into one entry)', () => {
  const kvPut = (k: string, v: string): EtcdCommand => ({
    txn: { compare: [], success: [{ put: { key: k, value: Buffer.from(v), lease: '0' } }], failure: [], kvPut: true },
  });

  it('packs concurrent Puts into entries of several, each with a revision and an answer of its own, the same on every replica', async () => {
    const group = await threeMembers('packed');
    try {
      const { nodes, leader } = await group.startAll();
      const follower = nodes.find((n) => n !== leader)!;
      const before = (await leader.proposer.proposeEtcd(kvPut('/warm', 'x'))).revision;
      for (const n of nodes) await waitFor(() => n.store.currentRevision() === before);
      const indexBefore = leader.node.status().lastIndex;
      // 300 Puts at once, half through a follower (forwarded as packs), keys written more than once.
      const answers = await Promise.all(
        Array.from({ length: 300 }, (_, i) => (i % 2 ? follower : leader).proposer.proposeEtcd(kvPut(`/p/${i % 120}`, `v${i}`))),
      );
      expect(answers.every((a) => a.error === undefined)).toBe(true);
      expect(new Set(answers.map((a) => a.revision)).size).toBe(300);
      expect(Math.min(...answers.map((a) => a.revision))).toBe(before + 1);
      expect(Math.max(...answers.map((a) => a.revision))).toBe(before + 300);
      const packs = leader.proposer.stats.putPacks + follower.proposer.stats.putPacks;
      const packed = leader.proposer.stats.packedPuts + follower.proposer.stats.packedPuts;
      expect(packs).toBeGreaterThan(0);
      expect(packed).toBeGreaterThan(packs);
      // Fewer log entries than Puts.
      expect(leader.node.status().lastIndex - indexBefore).toBeLessThan(300);
      for (const n of nodes) await waitFor(() => n.store.currentRevision() === before + 300);
      const view = async (n: ClusterStorage) =>
        (await n.store.range('/p/')).kvs.map((kv) => [kv.key, Buffer.from(kv.value).toString(), kv.modRevision, kv.version]);
      const first = await view(nodes[0]!);
      expect(first).toHaveLength(120);
      for (const n of nodes.slice(1)) expect(await view(n)).toEqual(first);
      // Each key holds the value of the Put answered with its highest revision.
      const last = new Map<string, [number, string]>();
      answers.forEach((a, i) => {
        const k = `/p/${i % 120}`;
        if ((last.get(k)?.[0] ?? 0) < a.revision) last.set(k, [a.revision, `v${i}`]);
      });
      for (const [k, v, mod] of first as [string, string, number][]) expect([mod, v]).toEqual(last.get(k));
    } finally {
      await group.closeAll();
    }
  });

  it('sends each Put as an entry of its own while a member does not apply the packed form', async () => {
    const group = await threeMembers('unpacked');
    try {
      const { leader } = await group.startAll();
      leader.proposer.setFormatGate((f) => f !== ETCD_PUTS_LOG_FORMAT);
      const indexBefore = leader.node.status().lastIndex;
      const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => leader.proposer.proposeEtcd(kvPut(`/u/${i}`, 'v'))));
      expect(new Set(answers.map((a) => a.revision)).size).toBe(50);
      expect(leader.proposer.stats.putPacks).toBe(0);
      expect(leader.node.status().lastIndex - indexBefore).toBe(50);
    } finally {
      await group.closeAll();
    }
  });

  it('answers every packed Put in flight through a stopped leader, and applies each once', async () => {
    const { failed, added, proposers } = await putsThroughLeaderStop(async (n, k, v) => (await n.proposer.proposeEtcd(kvPut(k, v))).revision);
    expect(failed).toEqual([]);
    // One revision per Put and one for the settling write: none was applied twice.
    expect(added).toEqual([151, 151]);
    expect(proposers[0]!.stats.packedPuts + proposers[1]!.stats.packedPuts).toBeGreaterThan(0);
  });
});

describe('openClusterStorage (snapshot catch-up over gRPC)', () => {
  it('brings a node that was down past the log up to date with a snapshot streamed through files, and keeps no copy of it', async () => {
    const { dirs, open, removeDirs } = await threeMembers('snap', { snapshotEntries: 20, keepEntries: 5 });
    const nodes: (ClusterStorage | undefined)[] = [];
    try {
      for (let i = 0; i < 3; i++) nodes.push(await open(i));
      await waitFor(() => nodes.some((n) => n!.node.status().role === 'leader'));
      // The node to stop is a follower, so the other two keep a quorum.
      const down = nodes.findIndex((n) => n!.node.status().role !== 'leader');
      await nodes[down]!.close();
      nodes[down] = undefined;
      // With 10 ms ticks a busy machine may move leadership meanwhile: wait for the two to agree.
      await waitFor(() => nodes.some((n) => n?.node.status().role === 'leader'));
      const leader = nodes.find((n) => n?.node.status().role === 'leader')!;
      for (let i = 0; i < 60; i++) await leader.storage.create(key(`k${i}`), cm(`k${i}`, `${i}`));
      await leader.storage.guaranteedUpdate(key('k0'), (o) => ({ ...o, data: { v: 'updated' } }));
      // The log no longer holds what the stopped node lacks, on either live node: leadership may
      // move on a busy machine, and whichever leads when the node returns must send a snapshot.
      expect(leader.raftStorage.firstIndex()).toBeGreaterThan(10);
      await waitFor(() => nodes.every((n) => n === undefined || n.raftStorage.firstIndex() > 10), 15_000);

      const back = await open(down);
      nodes[down] = back;
      // The restore counts once its etcd lease state is reloaded too, just after the revisions show.
      await waitFor(() => back.storage.currentRevision() === 61 && back.stateMachine.stats.snapshotsRestored > 0, 15_000);
      expect(back.stateMachine.stats.snapshotsRestored).toBe(1);
      const list = async (n: ClusterStorage): Promise<unknown> => (await n.storage.list('/registry/core/configmaps/', { consistency: { mode: 'Any' } })).items;
      expect(await list(back)).toEqual(await list(leader));
      // The leader's history came along: an old revision reads the same on the new node.
      expect((await back.storage.get(key('k0'), { mode: 'Exact', revision: 1 }))?.data).toEqual({ v: '0' });
      // Neither the export nor the received file is kept; the log's storage holds metadata only.
      await waitFor(() => dirs.every((d) => readdirSync(join(d, 'snap')).length === 0));
      expect([back.raftStorage.snapshot().data.length, back.raftStorage.snapshot().file]).toEqual([0, undefined]);
      // And it goes on replicating.
      await leader.storage.create(key('after'), cm('after'));
      await waitFor(() => back.storage.currentRevision() === 62);
    } finally {
      for (const n of nodes) await n?.close();
      await removeDirs();
    }
  }, 60_000);
});

describe('RaftProposer read barrier', () => {
  it('coalesces concurrent barriers, and a caller never shares a round that started before it arrived', async () => {
    const rounds: { resolve(): void }[] = [];
    const fake = {
      readIndex: () => new Promise<number>((resolve) => rounds.push({ resolve: () => resolve(1) })),
      status: () => ({ role: 'leader', lead: 1 }),
      setProposalSource: () => undefined,
    } as unknown as RaftNode;
    const p = new RaftProposer(fake, { readTimeoutMs: 2000 });
    let firstDone = false;
    const first = p.readBarrier().then(() => (firstDone = true));
    await new Promise((r) => setImmediate(r));
    expect(rounds).toHaveLength(1);
    // Ten callers arrive while round 1 is in flight: they must wait for round 2, and share it.
    let laterDone = 0;
    const later = Array.from({ length: 10 }, () => p.readBarrier().then(() => laterDone++));
    rounds[0]!.resolve();
    await first;
    expect(firstDone).toBe(true);
    await new Promise((r) => setImmediate(r));
    expect(laterDone).toBe(0);
    expect(rounds).toHaveLength(2);
    rounds[1]!.resolve();
    await Promise.all(later);
    expect(laterDone).toBe(10);
    expect(rounds).toHaveLength(2);
  });
});
