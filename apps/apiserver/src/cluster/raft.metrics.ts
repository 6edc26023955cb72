/**
 * Raft and storage figures on /metrics, named after etcd's where a counterpart exists
 * (etcd server/etcdserver/metrics.go, server/storage/mvcc/metrics.go) so etcd dashboards and
 * alerts carry over; kapi_* where etcd has none. Values are read at scrape time from the node,
 * except leader changes and compactions, which a sampler counts as they happen.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { SnapshotTransferCounts } from '@app/raft';
import { directorySize, type ClusterStorage, type SpaceQuota } from '@app/storage';

/** Registers the figures on `registry` and samples leader changes; stop() ends the sampler. */
export class RaftMetrics {
  private readonly leaderChanges: Counter;
  private readonly compactions: Counter;
  private timer: NodeJS.Timeout | undefined;
  private lastLead = 0;
  private lastCompacted: number;

  constructor(registry: Registry, cs: ClusterStorage, dataDir: string, quota?: Pick<SpaceQuota, 'quotaBytes' | 'list'>) {
    const status = () => cs.node.status();
    const gauge = (name: string, help: string, value: () => number | Promise<number>): void => {
      new Gauge({
        name,
        help,
        registers: [registry],
        async collect() {
          this.set(await value());
        },
      });
    };
    gauge('etcd_server_has_leader', 'Whether or not a leader exists. 1 is existence, 0 is not.', () => (status().lead !== 0 ? 1 : 0));
    gauge('etcd_server_is_leader', 'Whether or not this member is a leader. 1 if is, 0 otherwise.', () => (status().role === 'leader' ? 1 : 0));
    gauge('kapi_raft_term', 'The current Raft term of this node.', () => status().term);
    gauge('etcd_server_proposals_committed_total', 'The total number of consensus proposals committed (the commit index).', () => status().commit);
    gauge('etcd_server_proposals_applied_total', 'The total number of consensus proposals applied (the applied index).', () => status().applied);
    gauge('etcd_server_proposals_pending', 'The current number of pending proposals to commit.', () => cs.proposer.stats.pending);
    gauge(
      'kapi_proposals_pending_bytes',
      'Bytes of the proposals made on this node and not yet answered, as KAPI_MAX_PENDING_PROPOSAL_BYTES bounds them.',
      () => cs.proposer.stats.pendingBytes,
    );
    new Counter({
      name: 'kapi_proposals_refused_total',
      help: 'Writes refused before they were proposed because the pending proposals would have passed KAPI_MAX_PENDING_PROPOSAL_BYTES (429, or "etcdserver: too many requests").',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(cs.proposer.stats.refused);
      },
    });
    for (const [name, help, value] of [
      ['kapi_etcd_put_packs_total', 'Raft entries this node proposed with several etcd Puts packed into them.', () => cs.proposer.stats.putPacks],
      ['kapi_etcd_packed_puts_total', 'The etcd Puts those entries carried.', () => cs.proposer.stats.packedPuts],
    ] as const) {
      new Counter({
        name,
        help,
        registers: [registry],
        collect() {
          this.reset();
          this.inc(value());
        },
      });
    }
    gauge('kapi_raft_apply_lag_entries', 'Committed entries not yet applied on this node (commit index - applied index).', () => {
      const s = status();
      return Math.max(0, s.commit - s.applied);
    });
    gauge('kapi_raft_last_index', 'Index of the last entry in the local Raft log.', () => status().lastIndex);
    gauge(
      'kapi_raft_snapshot_index',
      'Index of the latest Raft snapshot (the log is compacted up to about it).',
      () => cs.raftStorage.snapshot().metadata.index,
    );
    if (quota) {
      gauge('etcd_server_quota_backend_bytes', "The store's space quota in bytes (--quota-backend-bytes; 0: none).", () => quota.quotaBytes);
      gauge('kapi_alarms_raised', 'Alarms (NOSPACE, CORRUPT) raised in the cluster, as this node has them.', () => quota.list().length);
    }
    gauge('etcd_mvcc_db_total_size_in_bytes', 'Total size of the underlying databases (MVCC store and Raft log) in bytes.', () => directorySize(dataDir));
    gauge('etcd_debugging_mvcc_current_revision', 'The current revision of the store.', () => cs.store.currentRevision());
    gauge('etcd_debugging_mvcc_compact_revision', 'The revision of the last compaction in the store.', () => cs.store.compactedRevision());
    new Counter({
      name: 'etcd_server_proposals_failed_total',
      help: 'The total number of failed proposals seen.',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(cs.proposer.stats.failed);
      },
    });
    gauge(
      'kapi_raft_proposal_resend_enabled',
      "Whether this node resends proposals (1: every member's build appends each proposal once; 0: a member's does not, as during a rolling upgrade).",
      () => (cs.node.resendsProposals() ? 1 : 0),
    );
    new Counter({
      name: 'kapi_raft_proposals_resent_total',
      help: 'Proposals this node sent again because its leader changed, or a copy was lost or sent back.',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(cs.node.proposalCounts().resent);
      },
    });
    new Counter({
      name: 'kapi_raft_proposal_copies_refused_total',
      help: 'Copies of proposals this node did not append as leader: already in its log (duplicate), or not checkable (uncheckable).',
      labelNames: ['reason'],
      registers: [registry],
      collect() {
        this.reset();
        const c = cs.node.proposalCounts();
        this.inc({ reason: 'duplicate' }, c.duplicates);
        this.inc({ reason: 'uncheckable' }, c.uncheckable);
      },
    });
    new Counter({
      name: 'kapi_raft_commit_notices_sent_total',
      help: 'Appends this node, as leader, sent only to carry the commit index (docs/raft.md, commit notices): at once to a follower waiting for it (urgent), or after the notice delay (timer).',
      labelNames: ['reason'],
      registers: [registry],
      collect() {
        this.reset();
        const c = cs.node.commitNoticeCounts();
        this.inc({ reason: 'urgent' }, c.urgent);
        this.inc({ reason: 'timer' }, c.timer);
      },
    });
    new Counter({
      name: 'kapi_raft_read_index_failed_total',
      help: 'ReadIndex barriers (Most Recent reads) that failed or timed out.',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(cs.proposer.stats.readIndexFailed);
      },
    });
    // Snapshot transfers by peer (etcd's rafthttp figures, labelled with the peer's member id).
    const transfers = cs.transport?.snapshotTransfers;
    const transferCounter = (name: string, help: string, dir: 'sent' | 'received', pick: (c: SnapshotTransferCounts) => number): void => {
      const label = dir === 'sent' ? 'To' : 'From';
      new Counter({
        name,
        help,
        labelNames: [label],
        registers: [registry],
        collect() {
          this.reset();
          for (const [peer, c] of transfers?.[dir] ?? []) this.inc({ [label]: String(peer) }, pick(c));
        },
      });
    };
    transferCounter('etcd_network_snapshot_send_success', 'Snapshots sent to a peer in full.', 'sent', (c) => c.success);
    transferCounter('etcd_network_snapshot_send_failures', 'Snapshot sends to a peer that failed.', 'sent', (c) => c.failures);
    transferCounter('kapi_raft_snapshot_sent_bytes_total', 'Bytes of the snapshots sent to a peer in full.', 'sent', (c) => c.bytes);
    transferCounter('kapi_raft_snapshot_send_seconds_total', 'Time spent sending the snapshots sent to a peer in full.', 'sent', (c) => c.seconds);
    transferCounter('etcd_network_snapshot_receive_success', 'Snapshots received from a peer in full and stored.', 'received', (c) => c.success);
    transferCounter(
      'etcd_network_snapshot_receive_failures',
      'Snapshot receptions from a peer that failed (cut off, or not stored).',
      'received',
      (c) => c.failures,
    );
    transferCounter('kapi_raft_snapshot_received_bytes_total', 'Bytes of the snapshots received from a peer in full.', 'received', (c) => c.bytes);
    transferCounter(
      'kapi_raft_snapshot_receive_seconds_total',
      'Time spent receiving the snapshots received from a peer in full.',
      'received',
      (c) => c.seconds,
    );
    new Counter({
      name: 'kapi_raft_snapshots_taken_total',
      help: 'Exports of the whole store for a peer that needed a snapshot.',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(cs.stateMachine.stats.snapshotsTaken);
      },
    });
    new Counter({
      name: 'kapi_raft_snapshots_restored_total',
      help: 'Raft snapshots installed into the state machine (startup or InstallSnapshot).',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(cs.stateMachine.stats.snapshotsRestored);
      },
    });
    this.leaderChanges = new Counter({ name: 'etcd_server_leader_changes_seen_total', help: 'The number of leader changes seen.', registers: [registry] });
    this.compactions = new Counter({ name: 'kapi_mvcc_compactions_total', help: 'MVCC history compactions completed on this node.', registers: [registry] });
    this.lastCompacted = cs.store.compactedRevision();
    this.timer = setInterval(() => {
      const lead = status().lead;
      if (lead !== 0 && lead !== this.lastLead) this.leaderChanges.inc();
      if (lead !== 0) this.lastLead = lead;
      const c = cs.store.compactedRevision();
      if (c > this.lastCompacted) this.compactions.inc();
      this.lastCompacted = c;
    }, 100);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
