/**
 * The sending side of the peer transport, one PeerSender per peer.
 */
import * as grpc from '@grpc/grpc-js';
import type { Message, NodeId } from './raft.types.js';
import type { ServiceClient } from './raft.wire-codec.js';
import { dropSnapshotFile, sendSnapshot, type SnapshotTransferCounts } from './raft.snapshot-stream.js';

/** What a PeerSender reads from its transport (limits, callbacks, credentials). */
export interface PeerSenderHost {
  readonly maxQueue: number;
  readonly maxBatch: number;
  readonly snapshotChunkBytes: number;
  readonly minBackoffMs: number;
  readonly maxBackoffMs: number;
  readonly events: {
    onUnreachable?(id: NodeId): void;
    onSnapshotStatus?(id: NodeId, failed: boolean): void;
    onConnectionLost?(id: NodeId): void;
  };
  readonly snapshotTransfers: { readonly sent: Map<NodeId, SnapshotTransferCounts> };
  channelCredentials(): grpc.ChannelCredentials;
}

/**
 * One outgoing peer: bounded queue, one client stream, reconnect with exponential backoff.
 * Snapshots go on their own call (sendSnapshot).
 */
export class PeerSender {
  private queue: Message[] = [];
  private stream: grpc.ClientWritableStream<readonly Message[]> | undefined;
  private waitingDrain = false;
  private backoffMs: number;
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private connecting = false;
  private readonly client: ServiceClient;

  constructor(
    readonly id: NodeId,
    addr: string,
    ctor: grpc.ServiceClientConstructor,
    private readonly t: PeerSenderHost,
  ) {
    this.client = new ctor(addr, t.channelCredentials(), {
      'grpc.keepalive_time_ms': 10_000,
      'grpc.max_receive_message_length': 64 << 20,
      'grpc.max_send_message_length': 64 << 20,
      // The sender reconnects and Raft retransmits by itself; gRPC's retry layer would only
      // track every message written to the stream. (Even with retries off, grpc-js keeps the
      // messages until the call commits: the receiving side sends headers at once for that.)
      'grpc.enable_retries': 0,
    }) as unknown as ServiceClient;
    this.backoffMs = t.minBackoffMs;
  }

  enqueue(m: Message): void {
    if (this.closed) {
      dropSnapshotFile(m);
      return;
    }
    if (m.type === 'snap') {
      void sendSnapshot(m, {
        peer: this.id,
        chunkBytes: this.t.snapshotChunkBytes,
        sent: this.t.snapshotTransfers.sent,
        open: (cb) => this.client.Snapshot(cb),
        onStatus: (failed) => this.t.events.onSnapshotStatus?.(this.id, failed),
      });
      return;
    }
    if (this.queue.length >= this.t.maxQueue) {
      // Bounded memory: a slow or dead peer loses messages instead of growing the leader.
      this.t.events.onUnreachable?.(this.id);
      return;
    }
    this.queue.push(m);
    this.flush();
  }

  private open(): void {
    const s = this.client.Stream((err) => {
      if (this.stream === s) this.broken(err ?? undefined);
    });
    s.on('error', () => {
      if (this.stream === s) this.broken();
    });
    this.stream = s;
  }

  private broken(_err?: Error): void {
    this.stream = undefined;
    this.waitingDrain = false;
    if (this.closed) return;
    this.t.events.onUnreachable?.(this.id);
    this.t.events.onConnectionLost?.(this.id);
    if (this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.flush();
    }, this.backoffMs);
    this.backoffMs = Math.min(this.backoffMs * 2, this.t.maxBackoffMs);
  }

  flush(): void {
    if (this.closed || this.waitingDrain || this.retryTimer || this.connecting || this.queue.length === 0) return;
    if (!this.stream) {
      // Keep messages queued (bounded) until the channel is connected, rather than writing
      // them into a stream that is bound to fail.
      this.connecting = true;
      this.client.waitForReady(Date.now() + Math.max(this.backoffMs, 200), (err) => {
        this.connecting = false;
        if (this.closed) return;
        if (err) {
          this.broken(err);
          return;
        }
        this.open();
        this.flush();
      });
      return;
    }
    const s = this.stream;
    while (this.queue.length > 0) {
      const batch = this.queue.length <= this.t.maxBatch ? this.queue : this.queue.slice(0, this.t.maxBatch);
      this.queue = this.queue.length <= this.t.maxBatch ? [] : this.queue.slice(this.t.maxBatch);
      const ok = s.write(batch);
      this.backoffMs = this.t.minBackoffMs;
      if (!ok) {
        this.waitingDrain = true;
        s.once('drain', () => {
          this.waitingDrain = false;
          this.flush();
        });
        return;
      }
    }
  }

  close(): void {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.stream?.end();
    this.stream = undefined;
    this.client.close();
  }
}
