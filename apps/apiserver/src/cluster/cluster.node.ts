/**
 * Node bootstrap of the replicated cluster (docs/cluster.md): flags -> Raft id, peers and
 * founding voters -> storage on Raft (@app/storage openClusterStorage) + member records +
 * metrics + the Raft readiness signal.
 *
 * - No `--initial-cluster`: a Raft group of one (same code path as a cluster). It listens for
 *   peers only when `--listen-peer-port` is given explicitly, so that it can grow later.
 * - `--initial-cluster n1=h:p,...` with `--initial-cluster-state new` (default): founding
 *   member; the voters are the listed nodes. Used ONLY when the data dir has no Raft state: a
 *   restarted node rejoins from its data dir whatever the flags say.
 * - `--initial-cluster-state existing`: a node joining a running cluster (after
 *   POST /cluster/members on the leader); it starts with an empty log and receives the
 *   state by snapshot. The list gives it the existing members' peer addresses.
 * - Peer traffic is always mutual TLS (docs/cluster.md "Peer TLS"): `--peer-cert-file`,
 *   `--peer-key-file`, `--peer-trusted-ca-file` (etcd's flags), each defaulting to the node's
 *   PKI (`peer.crt`, `peer.key`, `ca.crt` of --pki-dir or `<data-dir>/pki`), and
 *   `--peer-cert-allowed-cn` (default: the common name of the node's own peer certificate).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Registry } from 'prom-client';
import { PROPOSAL_DEDUP_FORMAT, type PeerTls } from '@app/raft';
import { DEFAULT_QUOTA_BACKEND_BYTES, SpaceQuota, directorySize, openClusterStorage, type ClusterStorage } from '@app/storage';
import type { PkiMaterial } from '@app/pki';
import type { ServerConfig } from '../config/flags.js';
import { parseClientUrls } from '../etcd/etcd.url.js';
import { ClusterConfigError, nodeIdFromName, parseInitialCluster, validateNodeName, type ClusterMemberSpec } from './cluster.ids.js';
import { ClusterAdminClient, serveClusterAdmin } from './cluster.forward.js';
import { ClusterMembership } from './cluster.members.js';
import { RaftMetrics } from './raft.metrics.js';
import { envInt } from '../config/env.js';

/** How often a node checks that its member record is current. */
const REGISTER_CHECK_MS = 10_000;

/** A started cluster node's storage side. */
export interface ClusterNode {
  name: string;
  id: number;
  cs: ClusterStorage;
  membership: ClusterMembership;
  /** The store's space quota and the replicated alarms (etcd's NOSPACE). */
  quota: SpaceQuota;
  /**
   * Readiness check `raft` (docs/health.md): undefined while this node can serve a linearizable
   * request, i.e. it leads or heard from its leader within the last election timeout; else why
   * not. Kept current by the Raft driver's leader-state events, not computed when asked.
   */
  raftCheck(): string | undefined;
  /** Check `storage`: undefined while the storage is open and no write of it failed. */
  storageCheck(): string | undefined;
  /** The storage failure that stopped this node's Raft for good, if one did (RaftNode.failure). */
  failure(): Error | undefined;
  /** Starts the background self-registration (after the API serves). */
  startBackground(): void;
  close(): Promise<void>;
}

/**
 * The peer transport's TLS material: each of --peer-cert-file, --peer-key-file and
 * --peer-trusted-ca-file when given (read now; an unreadable file is a ClusterConfigError
 * naming the flag), else the PKI's peer pair and CA; the common names a peer may present from
 * --peer-cert-allowed-cn (comma-separated), else the transport's default (its own CN).
 */
export async function resolvePeerTls(
  cfg: Pick<ServerConfig, 'peerCertFile' | 'peerKeyFile' | 'peerTrustedCaFile' | 'peerCertAllowedCn'>,
  pki: Pick<PkiMaterial, 'caPem' | 'peerCertPem' | 'peerKeyPem'>,
): Promise<PeerTls> {
  const read = async (flag: string, file: string | undefined, fallback: string): Promise<string> => {
    if (file === undefined || file === '') return fallback;
    try {
      return await readFile(file, 'utf8');
    } catch (e) {
      throw new ClusterConfigError(`--${flag}: cannot read ${file}: ${(e as Error).message}`);
    }
  };
  let allowedCN: string[] | undefined;
  if (cfg.peerCertAllowedCn !== undefined) {
    allowedCN = cfg.peerCertAllowedCn.split(',').map((n) => n.trim());
    if (allowedCN.some((n) => n === '')) throw new ClusterConfigError('--peer-cert-allowed-cn: give one or more common names, comma-separated');
  }
  return {
    ca: await read('peer-trusted-ca-file', cfg.peerTrustedCaFile, pki.caPem),
    cert: await read('peer-cert-file', cfg.peerCertFile, pki.peerCertPem),
    key: await read('peer-key-file', cfg.peerKeyFile, pki.peerKeyPem),
    ...(allowedCN ? { allowedCN } : {}),
  };
}

/** Opens this node's storage on Raft from its configuration; peers talk mutual TLS with `peerTls`. */
export async function openClusterNode(cfg: ServerConfig, dataDir: string, clientURL: string, registry: Registry, peerTls: PeerTls): Promise<ClusterNode> {
  const name = cfg.name;
  const bad = validateNodeName(name);
  if (bad) throw new ClusterConfigError(`--name: ${bad}`);
  const id = nodeIdFromName(name);
  const host = cfg.bindAddress;
  const advertise = cfg.advertiseAddress ?? (host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host);
  const portGiven = cfg.raw['listen-peer-port'] !== undefined;

  let initial: ClusterMemberSpec[];
  let listen: string | undefined;
  let bootstrapVoters: number[];
  if (cfg.initialCluster) {
    initial = parseInitialCluster(cfg.initialCluster);
    const self = initial.find((m) => m.name === name);
    if (!self) throw new ClusterConfigError(`--initial-cluster does not list this node (--name ${name})`);
    const selfPort = self.peerAddress.slice(self.peerAddress.lastIndexOf(':') + 1);
    listen = `${host.includes(':') ? `[${host}]` : host}:${portGiven ? cfg.listenPeerPort : selfPort}`;
    bootstrapVoters = cfg.initialClusterState === 'existing' ? [] : initial.map((m) => m.id);
  } else {
    const addr = `${advertise}:${cfg.listenPeerPort}`;
    initial = [{ name, id, peerAddress: addr }];
    listen = portGiven ? `${host.includes(':') ? `[${host}]` : host}:${cfg.listenPeerPort}` : undefined;
    bootstrapVoters = [id];
  }
  const selfPeerURL = initial.find((m) => m.name === name)!.peerAddress;

  const snapshotEntries = cfg.snapshotCount ?? envInt('KAPI_SNAPSHOT_COUNT');
  const cs = await openClusterStorage({
    dataDir,
    nodeId: id,
    listen,
    peers: new Map(initial.map((m) => [m.id, m.peerAddress])),
    peerTls,
    bootstrapVoters,
    snapshotEntries: snapshotEntries && snapshotEntries > 0 ? snapshotEntries : undefined,
    keepEntries: cfg.snapshotCatchupEntries ?? envInt('KAPI_SNAPSHOT_CATCHUP_ENTRIES'),
    // One tick per heartbeat, as etcd: the election timeout is a whole number of heartbeats.
    tickMs: envInt('KAPI_RAFT_TICK_MS') ?? cfg.heartbeatIntervalMs,
    electionTick: Math.max(5, Math.round(cfg.electionTimeoutMs / (envInt('KAPI_RAFT_TICK_MS') ?? cfg.heartbeatIntervalMs))),
    compactionIntervalMs: cfg.compactionIntervalSeconds * 1000,
    readTimeoutMs: envInt('KAPI_READ_INDEX_TIMEOUT_MS'),
    maxPendingProposalBytes: envInt('KAPI_MAX_PENDING_PROPOSAL_BYTES'),
    replayWindowRevisions: envInt('KAPI_WATCH_WINDOW_REVISIONS'),
    replayWindowBytes: envInt('KAPI_WATCH_WINDOW_BYTES'),
    replayHeldEvents: envInt('KAPI_WATCH_HELD_EVENTS'),
    freezeSharedEvents: envInt('KAPI_FREEZE_COPIES') === 1,
  });
  const membership = new ClusterMembership({
    selfName: name,
    selfId: id,
    selfPeerURL,
    selfClientURL: clientURL,
    ...(cfg.listenClientUrls ? { selfEtcdClientURL: etcdClientUrlsOf(cfg) } : {}),
    initial,
    node: cs.node,
    store: cs.store,
    proposer: cs.proposer,
    transport: cs.transport,
    catchUpTimeoutMs: envInt('KAPI_MEMBER_CATCH_UP_TIMEOUT_MS'),
  });
  await membership.start();
  // A negative --quota-backend-bytes: no quota; 0 or none: the default (etcd's meaning of both).
  const quotaFlag = cfg.quotaBackendBytes ?? 0;
  const quota = new SpaceQuota({
    quotaBytes: quotaFlag === 0 ? DEFAULT_QUOTA_BACKEND_BYTES : quotaFlag,
    selfId: id,
    sizeOf: () => directorySize(join(dataDir, 'mvcc')),
    store: cs.store,
    write: (command) => cs.proposer.propose(command),
    onRaise: (size, limit) =>
      process.stderr.write(
        `${name}: the store holds ${size} bytes, over its quota of ${limit} (--quota-backend-bytes): raising a NOSPACE alarm; writes that add data are refused until it is disarmed\n`,
      ),
  });
  await quota.start();
  cs.proposer.setQuota(quota);
  // Optional log formats (the binary etcd Put) only once every member's build applies them.
  cs.proposer.setFormatGate((format) => membership.applies(format));
  // Proposals are resent across leader changes and lost copies only once every member's leader
  // would append each of them once (docs/raft.md "Resent proposals").
  cs.node.setResendGate(() => membership.applies(PROPOSAL_DEDUP_FORMAT));
  // Membership changes sent to a follower are carried out by the leader (cluster.forward.ts).
  let admin: ClusterAdminClient | undefined;
  if (cs.transport) {
    const client = new ClusterAdminClient(cs.transport);
    admin = client;
    serveClusterAdmin(cs.transport, membership, (line) => process.stderr.write(`${name}: ${line}\n`));
    membership.setForwarder((change, leader) => client.forward(change, leader));
  }
  const metrics = new RaftMetrics(registry, cs, dataDir, quota);

  let closed = false;
  let registerTimer: NodeJS.Timeout | undefined;
  // The readiness signal: updated on each change of the driver's leader state. A node that never
  // heard from a leader since it started (restarted into a minority) is as unready as one that
  // lost its leader; balancers send its clients to nodes that can answer them.
  const names = new Map<number, string>(initial.map((m) => [m.id, m.name]));
  let raftReason: string | undefined = 'no leader known yet';
  cs.node.onLeaderState((st) => {
    if (st.leaderContact) raftReason = undefined;
    else if (st.lead === 0) raftReason = `no leader known (term ${st.term}, ${st.role})`;
    else raftReason = `nothing heard from leader ${names.get(st.lead) ?? st.lead} within the election timeout (term ${st.term})`;
  });
  let removedSaid = false;
  const raftCheck = (): string | undefined => {
    const failed = cs.node.failure();
    if (failed) return `stopped by a storage failure: ${failed.message}`;
    const removed = cs.node.removed();
    if (removed !== undefined) {
      const reason = `this node was removed from the cluster (${removed}): stop it, or add it back (docs/cluster.md "Membership")`;
      if (!removedSaid) {
        removedSaid = true;
        process.stderr.write(`${name}: ${reason}\n`);
      }
      return reason;
    }
    return raftReason;
  };
  const storageCheck = (): string | undefined => {
    const failed = cs.node.failure();
    if (failed) return `a storage write failed: ${failed.message}`;
    return closed ? 'storage closed' : undefined;
  };
  const register = (): void => {
    if (closed) return;
    // Checked again now and then: a record rewritten by another node (a promotion racing the
    // registration) is put right, as is one an earlier build of this node left.
    membership.registerSelf().then(
      () => {
        if (!closed) registerTimer = setTimeout(register, REGISTER_CHECK_MS);
      },
      () => {
        if (!closed) registerTimer = setTimeout(register, 1000);
      },
    );
  };
  return {
    name,
    id,
    cs,
    membership,
    quota,
    raftCheck,
    storageCheck,
    failure: () => cs.node.failure(),
    startBackground: register,
    close: async () => {
      closed = true;
      if (registerTimer) clearTimeout(registerTimer);
      metrics.stop();
      quota.stop();
      membership.stop();
      admin?.close();
      await cs.close();
    },
  };
}

/** The etcd client URLs a member record lists for this node: --advertise-client-urls, else --listen-client-urls. */
function etcdClientUrlsOf(cfg: ServerConfig): string {
  const raw = cfg.advertiseClientUrls ?? cfg.listenClientUrls ?? '';
  return parseClientUrls(raw, cfg.advertiseClientUrls !== undefined ? 'advertise-client-urls' : 'listen-client-urls')
    .map((u) => u.url)
    .join(',');
}
