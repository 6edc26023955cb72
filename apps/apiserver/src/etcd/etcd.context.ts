/**
 * What the etcd services of one node share: its storage side, its identity in etcd's terms
 * (member and cluster ids) and the response header every etcd answer carries.
 */
import { createHash } from 'node:crypto';
import type { ClusterNode } from '../cluster/cluster.node.js';
import { toServiceError, type Msg } from './etcd.convert.js';
import type { UnaryCall, UnaryHandler } from '@app/grpc';

/** The node's etcd identity and its header. */
export class EtcdContext {
  /** Member id: the node's Raft id (what MemberList and Status call it). */
  readonly memberId: string;
  /** Cluster id: derived from the founding members' ids, equal on every node. */
  readonly clusterId: string;
  /**
   * The Raft term, kept current by the driver's leader-state events: every answer carries it,
   * and RaftNode.status() copies every peer's progress to say it.
   */
  private term: number;
  /**
   * Open watch streams, their watchers, and the watchers catching up from the history (etcd's
   * watch_stream_total, watcher_total and slow_watcher_total on /metrics).
   */
  readonly watchCounts = { streams: 0, watchers: 0, slow: 0 };

  /**
   * @param minLeaseTtl the shortest lease TTL granted, in seconds: etcd's, one and a half
   * election timeouts rounded up, so that a lease outlives the election that follows a leader's
   * loss (a new leader restarts every lease's clock).
   */
  constructor(
    readonly node: ClusterNode,
    readonly clientURL: string,
    readonly minLeaseTtl = 2,
  ) {
    this.memberId = String(node.id);
    const h = createHash('sha256')
      .update(`kapi-etcd-cluster:${[...node.membership.founders()].sort((a, b) => a - b).join(',')}`)
      .digest();
    this.clusterId = (h.readBigUInt64BE(0) & 0x7fffffffffffffffn).toString();
    this.term = node.cs.node.status().term;
    node.cs.node.onLeaderState((st) => {
      this.term = st.term;
    });
  }

  get store() {
    return this.node.cs.store;
  }

  get proposer() {
    return this.node.cs.proposer;
  }

  get leases() {
    return this.node.cs.stateMachine.etcd;
  }

  /** etcd's ResponseHeader at `revision` (default: the store's current one). */
  header(revision?: number): Msg {
    return {
      cluster_id: this.clusterId,
      member_id: this.memberId,
      revision: revision ?? this.store.currentRevision(),
      raft_term: this.term,
    };
  }
}

/** A unary handler from an async function; failures become etcd's gRPC errors. */
export function unary(fn: (req: Msg) => Promise<Msg>): UnaryHandler {
  return (call: UnaryCall) => {
    fn(call.request).then(
      (r) => call.respond(r),
      (e: unknown) => call.fail(toServiceError(e)),
    );
  };
}
