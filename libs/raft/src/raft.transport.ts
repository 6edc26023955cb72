import * as grpc from '@grpc/grpc-js';
import type { Message, NodeId } from './raft.types.js';
import { type PeerTls, peerCredentials } from './raft.peer-tls.js';
import { PeerSender } from './raft.peer-sender.js';
import { type SnapshotTransferCounts, dropSnapshotFile, receiveSnapshot } from './raft.snapshot-stream.js';
import { type WireChunk, findRaftProto, raftService } from './raft.wire-codec.js';

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
 * gRPC transport between Raft nodes (proto/raft.proto, see raftService): one
 * long-lived client stream per peer carrying batches of messages, reconnect with exponential
 * backoff, snapshots chunked on a separate stream, and a bounded queue per peer.
 */
export class GrpcTransport implements RaftTransport {
  readonly maxQueue: number;
  readonly maxBatch: number;
  readonly snapshotChunkBytes: number;
  readonly minBackoffMs: number;
  readonly maxBackoffMs: number;
  private readonly server: grpc.Server;
  private readonly senders = new Map<NodeId, PeerSender>();
  private readonly ctor: grpc.ServiceClientConstructor;
  private readonly service: grpc.ServiceDefinition;
  private stopped = false;
  /** Snapshot transfers by peer: sent to it, received from it. */
  readonly snapshotTransfers = { sent: new Map<NodeId, SnapshotTransferCounts>(), received: new Map<NodeId, SnapshotTransferCounts>() };
  private readonly serverCreds: grpc.ServerCredentials;
  private readonly clientCreds: grpc.ChannelCredentials;

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
    const creds = peerCredentials(opts.tls, opts.insecure);
    this.serverCreds = creds.server;
    this.clientCreds = creds.client;
    this.server = new grpc.Server(creds.serverOptions);
    // Messages addressed to another node are dropped as they are decoded.
    this.service = raftService(opts.protoPath ?? findRaftProto(), (m) => m.to === opts.id);
    this.ctor = grpc.makeGenericClientConstructor(this.service, 'RaftTransport');
    for (const [id, addr] of opts.peers) if (id !== opts.id) this.senders.set(id, new PeerSender(id, addr, this.ctor, this));
  }

  /** Whether peer traffic is mutually authenticated TLS. */
  get secure(): boolean {
    return this.opts.tls !== undefined;
  }

  /** Credentials of outgoing peer channels (internal to the transport's senders). */
  channelCredentials(): grpc.ChannelCredentials {
    return this.clientCreds;
  }

  /** Starts the server; resolves with the bound port. */
  async start(): Promise<number> {
    this.server.addService(this.service, {
      Stream: (call: grpc.ServerReadableStream<Message[], object>, cb: grpc.sendUnaryData<object>) => {
        // Response headers at once, not only with the final Ack: grpc-js keeps every message a
        // client writes (in its retry buffer, even with retries off) until the call is
        // "committed" by the server's first response, or until 1 MiB of them piled up. A
        // follower's stream carries small acks, each pinning an 8 KiB Buffer pool slab: tens of
        // MiB held per stream and an old-generation GC load paid on every write (docs/performance.md).
        call.sendMetadata(new grpc.Metadata());
        // The peer this stream comes from, once a message told (one stream per sending peer).
        let from = 0;
        call.on('data', (batch: Message[]) => {
          if (this.stopped) return;
          for (const m of batch) {
            from = m.from;
            this.events.onMessage(m);
          }
        });
        call.on('end', () => cb(null, {}));
        call.on('error', () => {
          if (from > 0 && !this.stopped) this.events.onConnectionLost?.(from);
        });
      },
      Snapshot: (call: grpc.ServerReadableStream<WireChunk, object>, cb: grpc.sendUnaryData<object>) =>
        receiveSnapshot(call, cb, {
          snapshotDir: this.opts.snapshotDir,
          received: this.snapshotTransfers.received,
          deliver: (m) => {
            if (m.to !== this.opts.id || this.stopped) return false;
            this.events.onMessage(m);
            return true;
          },
        }),
    });
    return new Promise<number>((resolve, reject) => {
      this.server.bindAsync(this.opts.listen, this.serverCreds, (err, port) => (err ? reject(err) : resolve(port)));
    });
  }

  /**
   * Serves another gRPC service on the peer port, behind the same mutual TLS (callable before or
   * after start()). Used for node-to-node administration beside Raft (proto/cluster.proto).
   */
  addService(service: grpc.ServiceDefinition, implementation: grpc.UntypedServiceImplementation): void {
    this.server.addService(service, implementation);
  }

  send(msgs: readonly Message[]): void {
    for (const m of msgs) {
      const s = this.stopped ? undefined : this.senders.get(m.to);
      if (s) s.enqueue(m);
      else {
        dropSnapshotFile(m);
        if (!this.stopped) this.events.onUnreachable?.(m.to);
      }
    }
  }

  /** Adds (or re-addresses) a peer. */
  addPeer(id: NodeId, addr: string): void {
    this.senders.get(id)?.close();
    this.senders.set(id, new PeerSender(id, addr, this.ctor, this));
  }

  removePeer(id: NodeId): void {
    this.senders.get(id)?.close();
    this.senders.delete(id);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const s of this.senders.values()) s.close();
    // A graceful shutdown waits for open calls; a peer stuck mid-handshake (or refused) must not
    // hold a stopping node, so it is forced after a short grace.
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, 1000);
      this.server.tryShutdown(() => {
        clearTimeout(t);
        resolve();
      });
    });
    this.server.forceShutdown();
  }
}
