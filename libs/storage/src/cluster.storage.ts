/**
 * Opens a node's storage on Raft (docs/cluster.md): the MVCC store in `<dataDir>/mvcc` as the
 * state machine, the Raft log in `<dataDir>/raft`, a gRPC transport to the peers, and
 * MvccStorage on top with a RaftProposer; snapshots sent to or received from peers pass through
 * files in `<dataDir>/snap`. A single node is a Raft group of one: same code
 * path, and without a peer address it runs without any listener.
 */
import { mkdir, readdir, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { MvccStore } from '@app/mvcc';
import { GrpcTransport, LevelDbRaftStorage, TransportConfigError, RaftNode, type NodeId, type PeerTls } from '@app/raft';
import { EtcdLessor } from './etcd.lessor.js';
import { MvccStateMachine } from './mvcc.state-machine.js';
import { MvccStorage, type MvccStorageOptions } from './mvcc.storage.js';
import { RaftProposer } from './raft.proposer.js';
import { StorageError } from './storage.interface.js';

/** Default number of applied entries between Raft snapshots (etcd's --snapshot-count is 10000 since 3.6). */
export const DEFAULT_SNAPSHOT_ENTRIES = 10_000;
/** Default entries kept behind a snapshot for slow followers (etcd's snapshot catch-up entries: 5000). */
export const DEFAULT_CATCHUP_ENTRIES = 5_000;

/** Options of openClusterStorage. */
export interface ClusterStorageOptions extends MvccStorageOptions {
  /** Node data directory (created when missing). */
  dataDir: string;
  /** This node's Raft id (non-zero uint32). */
  nodeId: NodeId;
  /** `host:port` the peer transport listens on; undefined: no transport (single node that cannot grow). */
  listen?: string;
  /** Mutual TLS of the peer transport (docs/cluster.md "Peer TLS"); required with `listen` unless insecurePeers. */
  peerTls?: PeerTls;
  /** Plaintext peer transport, explicitly (tests only). */
  insecurePeers?: boolean;
  /** Peer addresses by id (this node's own entry is ignored by the transport). */
  peers?: ReadonlyMap<NodeId, string>;
  /** Founding voters, used only when the Raft log is empty; empty/undefined: join an existing cluster. */
  bootstrapVoters?: readonly NodeId[];
  /** Raft tick (default 100 ms); elections time out after 10-20 ticks, heartbeats every tick. */
  tickMs?: number;
  electionTick?: number;
  /** Applied entries between snapshots (default DEFAULT_SNAPSHOT_ENTRIES). */
  snapshotEntries?: number;
  /** Entries kept behind a snapshot (default min(DEFAULT_CATCHUP_ENTRIES, snapshotEntries)). */
  keepEntries?: number;
  /** RaftNode proposal timeout (default 10000 ms). */
  requestTimeoutMs?: number;
  /** ReadIndex bound of Most Recent reads (default 5000 ms). */
  readTimeoutMs?: number;
  /** How long writes wait for a leader during an election (default 5000 ms). */
  leaderWaitMs?: number;
  /** Bound of the bytes of pending proposals (RaftProposerOptions.maxPendingBytes). */
  maxPendingProposalBytes?: number;
  /** fsync the Raft log (default true; false only in tests that do not care). */
  sync?: boolean;
}

/** Everything openClusterStorage built; close() stops them in a safe order. */
export interface ClusterStorage {
  storage: MvccStorage;
  store: MvccStore;
  node: RaftNode;
  raftStorage: LevelDbRaftStorage;
  stateMachine: MvccStateMachine;
  proposer: RaftProposer;
  transport: GrpcTransport | undefined;
  /** The transport's bound port (0 without transport). */
  peerPort: number;
  close(): Promise<void>;
}

/**
 * Opens (or creates) a node. Refuses, with StorageError('Internal'), a data dir whose MVCC store
 * was written without Raft (the local proposer's applied indexes do not name Raft entries, so
 * replaying a fresh Raft log over it would skip writes), and a peer listener with neither
 * `peerTls` nor `insecurePeers` (TransportConfigError, before anything is opened).
 */
export async function openClusterStorage(o: ClusterStorageOptions): Promise<ClusterStorage> {
  if (!Number.isInteger(o.nodeId) || o.nodeId <= 0 || o.nodeId > 0xffffffff) {
    throw new StorageError('Internal', '', `invalid Raft node id ${o.nodeId}`);
  }
  if (o.listen && !o.peerTls && o.insecurePeers !== true) {
    throw new TransportConfigError('a peer listener needs peerTls (or an explicit insecurePeers: true)');
  }
  const mvccDir = join(o.dataDir, 'mvcc');
  const raftDir = join(o.dataDir, 'raft');
  const snapDir = join(o.dataDir, 'snap');
  await mkdir(mvccDir, { recursive: true });
  await mkdir(raftDir, { recursive: true });
  await mkdir(snapDir, { recursive: true, mode: 0o700 });
  const store = await MvccStore.open(mvccDir);
  let raftStorage: LevelDbRaftStorage | undefined;
  try {
    raftStorage = await LevelDbRaftStorage.open(raftDir, { sync: o.sync ?? true });
    if (raftStorage.isEmpty() && store.appliedIndex() > 0) {
      throw new StorageError('Internal', '', `${mvccDir} holds ${store.appliedIndex()} entries written without Raft; start with a fresh data dir`);
    }
    await removeStaleSnapshotFiles(snapDir, raftStorage.snapshot().file);
    const stateMachine = new MvccStateMachine(store, { snapshotDir: snapDir });
    const snapshotEntries = o.snapshotEntries ?? DEFAULT_SNAPSHOT_ENTRIES;
    const node = await RaftNode.create({
      id: o.nodeId,
      storage: raftStorage,
      stateMachine,
      bootstrapVoters: o.bootstrapVoters,
      tickMs: o.tickMs ?? 100,
      electionTick: o.electionTick ?? 10,
      heartbeatTick: 1,
      snapshotEntries,
      keepEntries: o.keepEntries ?? Math.min(DEFAULT_CATCHUP_ENTRIES, snapshotEntries),
      requestTimeoutMs: o.requestTimeoutMs ?? 10_000,
    });
    let transport: GrpcTransport | undefined;
    let peerPort = 0;
    if (o.listen) {
      const peers = new Map(o.peers ?? []);
      peers.set(o.nodeId, o.listen);
      transport = new GrpcTransport(
        { id: o.nodeId, listen: o.listen, peers, snapshotDir: snapDir, ...(o.peerTls ? { tls: o.peerTls } : { insecure: true }) },
        {
          onMessage: (m) => node.step(m),
          onUnreachable: (p) => node.reportUnreachable(p),
          onConnectionLost: (p) => node.reportConnectionLost(p),
          onUndelivered: (_p, msgs) => node.reportUndelivered(msgs),
          onSnapshotStatus: (p, failed) => node.reportSnapshot(p, failed),
          onRemoved: (p) => node.reportRemoved(p),
        },
      );
      node.setTransport(transport);
      peerPort = await transport.start();
    }
    node.start();
    const proposer = new RaftProposer(node, {
      readTimeoutMs: o.readTimeoutMs,
      leaderWaitMs: o.leaderWaitMs,
      maxPendingBytes: o.maxPendingProposalBytes,
      applied: () => stateMachine.waitApplied(),
    });
    const storage = new MvccStorage(store, proposer, o);
    const lessor = new EtcdLessor(stateMachine.etcd, node, proposer);
    lessor.start();
    const rs = raftStorage;
    let closing: Promise<void> | undefined;
    return {
      storage,
      store,
      node,
      raftStorage: rs,
      stateMachine,
      proposer,
      transport,
      peerPort,
      close: () => {
        // Stop Raft first (pending proposals fail with ErrStopped, nothing applies any more),
        // then the storage (proposer + store), then the log.
        closing ??= (async () => {
          lessor.stop();
          await node.stop();
          await stateMachine.waitApplied().catch(() => undefined);
          await transport?.stop();
          await storage.close();
          await rs.close();
        })();
        return closing;
      },
    };
  } catch (e) {
    await raftStorage?.close().catch(() => undefined);
    await store.close().catch(() => undefined);
    throw e;
  }
}

/**
 * Deletes what earlier runs left in the snapshot directory (exports that were being sent,
 * transfers cut off, snapshots the node did not take), except `keep`: the file of a received
 * snapshot the log's storage still records, whose install a crash interrupted.
 */
async function removeStaleSnapshotFiles(dir: string, keep: string | undefined): Promise<void> {
  const kept = keep === undefined ? undefined : resolve(keep);
  for (const name of await readdir(dir)) {
    const file = resolve(dir, name);
    if (name.endsWith('.snap') && file !== kept) await unlink(file).catch(() => undefined);
  }
}
