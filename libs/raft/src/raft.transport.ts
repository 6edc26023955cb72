import * as grpc from '@grpc/grpc-js';
import type { PackageDefinition } from '@grpc/proto-loader';
import { type DuplexCall, GrpcH2Server, type GrpcServiceDefinition, type Msg, type ServiceHandlers } from '@app/grpc';
import type { Message, NodeId } from './raft.types.js';
import { type PeerConnectTls, type PeerCredentials, type PeerTls, TransportConfigError, peerCredentials } from './raft.peer-tls.js';
import { PeerSender, REMOVED_MEMBER_MESSAGE, isRequest } from './raft.peer-sender.js';

export { REMOVED_MEMBER_MESSAGE };
import { type SnapshotTransferCounts, dropSnapshotFile, receiveSnapshot } from './raft.snapshot-stream.js';
import { findRaftProto, raftService } from './raft.wire-codec.js';

/**
 * The largest message the peer port takes (a MessageBatch, a snapshot chunk): as grpc-js's
 * `grpc.max_receive_message_length` of the peers' channels.
 */
const MAX_PEER_MESSAGE_BYTES = 64 << 20;
/**
 * What one peer connection's calls may hold of unfinished messages: its Raft stream's, a
 * snapshot's and an administrative call's largest message at once. Only an authorized peer's
 * calls get that far.
 */
const MAX_PEER_HELD_BYTES = 4 * MAX_PEER_MESSAGE_BYTES;
/** How long stop() lets calls finish before the peer connections are destroyed. */
const STOP_GRACE_MS = 1000;
const ACK: Msg = {};

/** "host:port" or "[v6]:port" as a host and a port. */
function hostPort(addr: string): { host: string; port: number } {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(addr) ?? /^([^:]+):(\d+)$/.exec(addr);
  const port = Number(m?.[2]);
  if (!m || !(port >= 0 && port < 65536)) throw new TransportConfigError(`peer listen address ${JSON.stringify(addr)} is not host:port`);
  return { host: m[1]!, port };
}

/** What the node driver needs from a transport. */
export interface RaftTransport {
  /** Queues messages for their peers; never blocks, may drop (Raft tolerates loss). */
  send(msgs: readonly Message[]): void;
}

/** Callbacks from the transport into the node driver. */
export interface TransportEvents {
  /** A message arrived from a peer. */
  onMessage(m: Message): void;
  /** A peer could not be reached or its queue overflowed (RawNode.reportUnreachable). */
  onUnreachable?(id: NodeId): void;
  /** A snapshot send finished (RawNode.reportSnapshot). */
  onSnapshotStatus?(id: NodeId, failed: boolean): void;
  /**
   * A connection with a peer broke: our stream to it failed or was refused, or its stream to us
   * ended with an error (RawNode.reportConnectionLost: a follower may campaign early).
   */
  onConnectionLost?(id: NodeId): void;
  /**
   * Forwarded proposals or read requests ('prop', 'readIndex') for peer `id` that were never
   * sent: no connection to it was up, its queue was full, or its stream broke while they waited
   * (RaftNode.reportUndelivered).
   */
  onUndelivered?(id: NodeId, msgs: readonly Message[]): void;
  /** A peer ended this node's stream to it with REMOVED_MEMBER_MESSAGE: this node was removed. */
  onRemoved?(by: NodeId): void;
}

/** Options of GrpcTransport. */
export interface GrpcTransportOptions {
  id: NodeId;
  /** Address to listen on, e.g. "127.0.0.1:2381" (port 0 picks a free port). */
  listen: string;
  /** Peer id -> "host:port". */
  peers: ReadonlyMap<NodeId, string>;
  /** Max queued messages per peer; beyond it messages are dropped and the peer reported unreachable. */
  maxQueue?: number;
  /** Max messages per stream write. */
  maxBatch?: number;
  /** Snapshot chunk size in bytes. */
  snapshotChunkBytes?: number;
  /**
   * Directory for received snapshots: each is written to a file there (fsynced) and delivered
   * as Snapshot.file, so a snapshot of any size is never held in memory. Without it a received
   * snapshot is assembled in memory (state machines that snapshot to memory, tests).
   */
  snapshotDir?: string;
  /** Reconnect backoff bounds in ms. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** How often a peer connection is PINGed (default 10 s); a PING unanswered by the next ends it. */
  keepaliveMs?: number;
  /**
   * How long a connection attempt goes on after the peer was reported unreachable for being
   * slow to connect (default 20 s).
   */
  connectTimeoutMs?: number;
  /** Path of proto/raft.proto (found automatically when omitted). */
  protoPath?: string;
  /**
   * Mutual TLS (the default posture): the server demands and verifies a client certificate
   * against `tls.ca`, clients present `tls.cert` and verify the server against `tls.ca` and the
   * host of the peer address. Required unless `insecure` is set.
   */
  tls?: PeerTls;
  /** Plaintext peers, explicitly (single-machine tests and benchmarks only). */
  insecure?: boolean;
}

/**
 * gRPC transport between Raft nodes (proto/raft.proto, see raftService): one long-lived client
 * stream per peer carrying batches of messages, reconnect with exponential backoff, snapshots
 * chunked on a separate stream, and a bounded queue per peer (docs/cluster.md "Peer transport").
 * The peer port is a GrpcH2Server; each peer's stream is written on an HTTP/2 connection of its
 * PeerSender (both on libs/grpc's own HTTP/2), and snapshots and ClusterAdmin calls go through
 * grpc-js clients.
 * It speaks plain gRPC both ways, so it interoperates with a peer whose transport is grpc-js's.
 */
export class GrpcTransport implements RaftTransport {
  readonly maxQueue: number;
  readonly maxBatch: number;
  readonly snapshotChunkBytes: number;
  readonly minBackoffMs: number;
  readonly maxBackoffMs: number;
  readonly keepaliveMs: number;
  readonly connectTimeoutMs: number;
  private readonly server: GrpcH2Server;
  private readonly senders = new Map<NodeId, PeerSender>();
  private removedCheck: ((id: NodeId) => boolean) | undefined;
  /** The grpc-js client of RaftTransport (snapshot transfers). */
  readonly snapshotClient: grpc.ServiceClientConstructor;
  private readonly service: grpc.ServiceDefinition;
  private stopped = false;
  /** Snapshot transfers by peer: sent to it, received from it. */
  readonly snapshotTransfers = { sent: new Map<NodeId, SnapshotTransferCounts>(), received: new Map<NodeId, SnapshotTransferCounts>() };
  private readonly creds: PeerCredentials;
  /** TLS of the connections to peers (undefined: plaintext). */
  readonly connectTls: PeerConnectTls | undefined;
  /** Encodes a MessageBatch (the Stream method's request serializer). */
  readonly encodeBatch: (msgs: readonly Message[]) => Uint8Array;

  /**
   * Throws TransportConfigError when neither `tls` nor `insecure` is given (plaintext
   * is never chosen silently) or when the TLS material is unusable.
   */
  constructor(
    private readonly opts: GrpcTransportOptions,
    readonly events: TransportEvents,
  ) {
    this.maxQueue = opts.maxQueue ?? 8192;
    this.maxBatch = opts.maxBatch ?? 512;
    this.snapshotChunkBytes = opts.snapshotChunkBytes ?? 1 << 20;
    this.minBackoffMs = opts.minBackoffMs ?? 50;
    this.maxBackoffMs = opts.maxBackoffMs ?? 2000;
    this.keepaliveMs = opts.keepaliveMs ?? 10_000;
    this.connectTimeoutMs = opts.connectTimeoutMs ?? 20_000;
    this.creds = peerCredentials(opts.tls, opts.insecure);
    this.connectTls = this.creds.connectTls;
    hostPort(opts.listen);
    // Messages addressed to another node are dropped as they are decoded.
    this.service = raftService(opts.protoPath ?? findRaftProto(), (m) => m.to === opts.id);
    this.snapshotClient = grpc.makeGenericClientConstructor(this.service, 'RaftTransport');
    this.encodeBatch = this.service.Stream!.requestSerialize as (msgs: readonly Message[]) => Uint8Array;
    this.server = new GrpcH2Server(
      {} as PackageDefinition,
      {},
      {
        maxMessageBytes: MAX_PEER_MESSAGE_BYTES,
        maxHeldRequestBytes: MAX_PEER_HELD_BYTES,
        // Peers are few and authorized: each connection's bound is the one that matters.
        maxServerHeldRequestBytes: Number.POSITIVE_INFINITY,
        // A client certificate of the CA that is not a peer's: PERMISSION_DENIED on every call.
        authorize: this.creds.authorize,
        stopDetails: 'the peer is stopping',
        shutdownGraceMs: STOP_GRACE_MS,
      },
    );
    this.server.addService(
      this.service,
      { Stream: (call: DuplexCall) => this.serveStream(call), Snapshot: (call: DuplexCall) => this.serveSnapshot(call) },
      'kapi.raft.v1.RaftTransport',
    );
    for (const [id, addr] of opts.peers) if (id !== opts.id) this.senders.set(id, new PeerSender(id, addr, this));
  }

  /** Whether peer traffic is mutually authenticated TLS. */
  get secure(): boolean {
    return this.opts.tls !== undefined;
  }

  /** grpc-js credentials of calls to peers (snapshot transfers, ClusterAdmin's client). */
  channelCredentials(): grpc.ChannelCredentials {
    return this.creds.client;
  }

  /** Starts the server; resolves with the bound port. */
  async start(): Promise<number> {
    const { host, port } = hostPort(this.opts.listen);
    return this.server.listen({ host, port, tls: this.creds.serverTls });
  }

  /** One peer's stream of message batches to this node (RaftTransport.Stream). */
  private serveStream(call: DuplexCall): void {
    // Response headers at once, not only with the final Ack: grpc-js (the sender of a peer of
    // an earlier build) keeps every message a client writes (in its retry buffer, even with
    // retries off) until the call is "committed" by the server's first response, or until
    // 1 MiB of them piled up. A follower's stream carries small acks, each pinning an 8 KiB
    // Buffer pool slab: tens of MiB held per stream and an old-generation GC load paid on
    // every write (docs/performance.md).
    call.sendHeaders();
    // The peer this stream comes from, once a message told (one stream per sending peer).
    let from = 0;
    let refused = false;
    call.on('data', (batch: Msg) => {
      if (this.stopped || refused) return;
      for (const m of batch as unknown as Message[]) {
        if (this.removedCheck?.(m.from)) {
          refused = true;
          call.fail({ code: grpc.status.FAILED_PRECONDITION, details: REMOVED_MEMBER_MESSAGE });
          return;
        }
        from = m.from;
        this.events.onMessage(m);
      }
    });
    call.on('end', () => {
      call.write(ACK);
      call.end();
    });
    // The sender went away, or the stream broke.
    call.on('cancelled', () => {
      if (from > 0 && !this.stopped) this.events.onConnectionLost?.(from);
    });
  }

  /** One snapshot from a peer (RaftTransport.Snapshot). */
  private serveSnapshot(call: DuplexCall): void {
    receiveSnapshot(call, {
      snapshotDir: this.opts.snapshotDir,
      received: this.snapshotTransfers.received,
      deliver: (m) => {
        if (m.to !== this.opts.id || this.stopped) return false;
        this.events.onMessage(m);
        return true;
      },
    });
  }

  /**
   * Sets what says whether a peer id was removed from the cluster: such a peer's stream to this
   * node is then ended with FAILED_PRECONDITION and REMOVED_MEMBER_MESSAGE instead of being
   * delivered, which tells it (TransportEvents.onRemoved on its side).
   */
  setRemovedCheck(check: ((id: NodeId) => boolean) | undefined): void {
    this.removedCheck = check;
  }

  /**
   * Serves another gRPC service on the peer port, behind the same mutual TLS and peer check
   * (callable before or after start()). Used for node-to-node administration beside Raft
   * (proto/cluster.proto).
   */
  addService(service: GrpcServiceDefinition, handlers: ServiceHandlers): void {
    this.server.addService(service, handlers);
  }

  send(msgs: readonly Message[]): void {
    let queued = false;
    for (const m of msgs) {
      const s = this.stopped ? undefined : this.senders.get(m.to);
      if (s) queued = s.push(m) || queued;
      else {
        dropSnapshotFile(m);
        if (!this.stopped) {
          this.events.onUnreachable?.(m.to);
          if (isRequest(m)) this.events.onUndelivered?.(m.to, [m]);
        }
      }
    }
    // One write per peer for everything this call queued for it, at once (no event-loop turn).
    if (queued) for (const s of this.senders.values()) s.flush();
  }

  /** Adds (or re-addresses) a peer. */
  addPeer(id: NodeId, addr: string): void {
    this.senders.get(id)?.close();
    this.senders.set(id, new PeerSender(id, addr, this));
  }

  removePeer(id: NodeId): void {
    this.senders.get(id)?.close();
    this.senders.delete(id);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const s of this.senders.values()) s.close();
    // Open peer streams end at once (UNAVAILABLE); a peer stuck mid-handshake (or refused) must
    // not hold a stopping node, so connections are destroyed after a short grace.
    await this.server.stop();
  }
}
