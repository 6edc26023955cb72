/**
 * The sending side of the peer transport, one PeerSender per peer (docs/cluster.md "Peer
 * transport"): Raft messages go on one long-lived gRPC client stream, RaftTransport.Stream,
 * spoken directly on a node:http2 session of the sender's own; snapshots go on grpc-js calls.
 * Either works against any gRPC server of proto/raft.proto (the peer port of this build, or
 * grpc-js's).
 */
import * as http2 from 'node:http2';
import type { ClientHttp2Session, ClientHttp2Stream, IncomingHttpHeaders, OutgoingHttpHeaders, SecureClientSessionOptions } from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { encodeMessage } from '@app/grpc';
import type { Message, NodeId } from './raft.types.js';
import type { PeerConnectTls } from './raft.peer-tls.js';
import type { ServiceClient } from './raft.wire-codec.js';
import { dropSnapshotFile, sendSnapshot, type SnapshotTransferCounts } from './raft.snapshot-stream.js';

/** What a member tells a removed member that still sends it Raft messages (etcd's words). */
export const REMOVED_MEMBER_MESSAGE = 'the member has been permanently removed from the cluster';
const FAILED_PRECONDITION = 9;

/** What a PeerSender reads from its transport (limits, callbacks, credentials, codec). */
export interface PeerSenderHost {
  readonly maxQueue: number;
  readonly maxBatch: number;
  readonly snapshotChunkBytes: number;
  readonly minBackoffMs: number;
  readonly maxBackoffMs: number;
  /** How often an open connection is PINGed; a PING unanswered by the next one ends the connection. */
  readonly keepaliveMs: number;
  /** A connection not established this long after it was reported unreachable is given up (and tried again after the backoff). */
  readonly connectTimeoutMs: number;
  readonly events: {
    onUnreachable?(id: NodeId): void;
    onSnapshotStatus?(id: NodeId, failed: boolean): void;
    onConnectionLost?(id: NodeId): void;
    onUndelivered?(id: NodeId, msgs: readonly Message[]): void;
    onRemoved?(by: NodeId): void;
  };
  readonly snapshotTransfers: { readonly sent: Map<NodeId, SnapshotTransferCounts> };
  /** TLS of the peer stream's connection; undefined: plaintext (HTTP/2 with prior knowledge). */
  readonly connectTls: PeerConnectTls | undefined;
  /** Credentials of the grpc-js channel that carries snapshots. */
  channelCredentials(): grpc.ChannelCredentials;
  /** The RaftTransport client of grpc-js (snapshots). */
  readonly snapshotClient: grpc.ServiceClientConstructor;
  /** Encodes messages as one kapi.raft.v1.MessageBatch. */
  encodeBatch(msgs: readonly Message[]): Uint8Array;
}

/** The peer stream's request headers (gRPC's PROTOCOL-HTTP2.md); :authority and :scheme come from the session. */
const STREAM_HEADERS: OutgoingHttpHeaders = {
  ':method': 'POST',
  ':path': '/kapi.raft.v1.RaftTransport/Stream',
  'content-type': 'application/grpc',
  te: 'trailers',
  'user-agent': 'kapi-raft-peer',
};
const STREAM_OPTIONS = { endStream: false };
/** How long close() lets the stream end politely before the connection is destroyed. */
const CLOSE_GRACE_MS = 1000;
/**
 * Payloads from this size on are written as the 5-byte prefix and the payload itself (one
 * writev) rather than copied behind the prefix.
 */
const COPY_BELOW_BYTES = 64 << 10;
/** Message size limits of the snapshot channel (as the peer port's server). */
const MAX_MESSAGE_BYTES = 64 << 20;

function noop(): void {}

/**
 * A proposal or read request forwarded to the leader: one that was never written can be retried
 * by its sender without any risk of applying it twice.
 */
export function isRequest(m: Message): boolean {
  return m.type === 'prop' || m.type === 'readIndex';
}

/** The gRPC message prefix of an uncompressed payload of `length` bytes. */
function messagePrefix(length: number): Buffer {
  const p = Buffer.allocUnsafe(5);
  p[0] = 0;
  p.writeUInt32BE(length, 1);
  return p;
}

/**
 * One outgoing peer: bounded queue, one client stream on a node:http2 session, reconnect with
 * exponential backoff, keepalive PINGs. Snapshots go on their own grpc-js call (sendSnapshot).
 */
export class PeerSender {
  private queue: Message[] = [];
  private session: ClientHttp2Session | undefined;
  /** The session finished its handshake (streams can be opened). */
  private connected = false;
  private stream: ClientHttp2Stream | undefined;
  private waitingDrain = false;
  private backoffMs: number;
  private retryTimer: NodeJS.Timeout | undefined;
  /** While connecting: reports the peer unreachable when the connection takes long, then gives up on it. */
  private connectTimer: NodeJS.Timeout | undefined;
  private keepalive: NodeJS.Timeout | undefined;
  private closed = false;
  private snapshots: ServiceClient | undefined;
  private readonly onDrain = (): void => {
    this.waitingDrain = false;
    this.flush();
  };

  constructor(
    readonly id: NodeId,
    private readonly addr: string,
    private readonly t: PeerSenderHost,
  ) {
    this.backoffMs = t.minBackoffMs;
  }

  /** Queues `m` and sends what can be sent now. */
  enqueue(m: Message): void {
    if (this.push(m)) this.flush();
  }

  /**
   * Queues `m` without sending (the caller flushes once after queuing a batch); false when it
   * was not queued (a snapshot goes on its own call at once; a full queue drops it).
   */
  push(m: Message): boolean {
    if (this.closed) {
      dropSnapshotFile(m);
      return false;
    }
    if (m.type === 'snap') {
      void sendSnapshot(m, {
        peer: this.id,
        chunkBytes: this.t.snapshotChunkBytes,
        sent: this.t.snapshotTransfers.sent,
        open: (cb) => this.snapshotChannel().Snapshot(cb),
        onStatus: (failed) => this.t.events.onSnapshotStatus?.(this.id, failed),
      });
      return false;
    }
    if (isRequest(m) && (this.retryTimer !== undefined || !this.connected)) {
      // A forwarded proposal or read is not kept for a connection that is down: it is handed
      // back at once as never sent, so that its proposer may retry it (through whichever leader
      // is elected) instead of waiting on a leader that may be gone.
      if (this.session === undefined && this.retryTimer === undefined) this.connect();
      this.t.events.onUndelivered?.(this.id, [m]);
      return false;
    }
    if (this.queue.length >= this.t.maxQueue) {
      // Bounded memory: a slow or dead peer loses messages instead of growing the leader.
      this.t.events.onUnreachable?.(this.id);
      if (isRequest(m)) this.t.events.onUndelivered?.(this.id, [m]);
      return false;
    }
    this.queue.push(m);
    return true;
  }

  /** Hands back the queued requests (never written) and keeps the rest queued. */
  private returnQueuedRequests(): void {
    if (!this.queue.some(isRequest)) return;
    const requests = this.queue.filter(isRequest);
    this.queue = this.queue.filter((m) => !isRequest(m));
    this.t.events.onUndelivered?.(this.id, requests);
  }

  /** Writes the queue to the stream, in batches of at most maxBatch, until it is empty or the stream is full. */
  flush(): void {
    if (this.closed || this.waitingDrain || this.retryTimer || this.queue.length === 0) return;
    let s = this.stream;
    if (s === undefined) {
      // Messages stay queued (bounded) until the connection is up, rather than being written
      // into a stream that is bound to fail.
      if (this.session === undefined) this.connect();
      if (!this.connected) return;
      s = this.open();
      if (s === undefined) return;
    }
    while (this.queue.length > 0) {
      const all = this.queue.length <= this.t.maxBatch;
      const batch = all ? this.queue : this.queue.slice(0, this.t.maxBatch);
      this.queue = all ? [] : this.queue.slice(this.t.maxBatch);
      if (!this.write(s, batch)) {
        this.waitingDrain = true;
        s.once('drain', this.onDrain);
        return;
      }
    }
  }

  /** Frames one batch onto the stream; false when the stream's buffer is full (wait for 'drain'). */
  private write(s: ClientHttp2Stream, batch: readonly Message[]): boolean {
    let payload: Uint8Array;
    try {
      payload = this.t.encodeBatch(batch);
    } catch {
      // A message that has no wire form (a bug): the batch is lost, which Raft tolerates.
      return true;
    }
    if (payload.length < COPY_BELOW_BYTES) return s.write(encodeMessage(payload));
    s.cork();
    s.write(messagePrefix(payload.length));
    const ok = s.write(payload);
    s.uncork();
    return ok;
  }

  private connect(): void {
    const tls = this.t.connectTls;
    const common = { settings: { enablePush: false }, maxSessionMemory: 64 };
    const options: SecureClientSessionOptions = tls
      ? { ...common, ca: tls.ca, cert: tls.cert, key: tls.key, checkServerIdentity: tls.checkServerIdentity }
      : common;
    let session: ClientHttp2Session;
    try {
      session = http2.connect(`${tls ? 'https' : 'http'}://${this.addr}`, options);
    } catch {
      // An address that cannot be dialled at all.
      this.broken();
      return;
    }
    this.session = session;
    this.connected = false;
    session.on('error', noop);
    session.once('connect', () => {
      if (this.session !== session) return;
      this.clearConnectTimer();
      this.connected = true;
      this.startKeepalive(session);
      this.flush();
    });
    session.once('close', () => {
      if (this.session === session) this.sessionLost();
    });
    // A server going away (GOAWAY): the open stream may finish, new streams go to a new connection.
    session.once('goaway', () => {
      if (this.session === session) this.detachSession();
    });
    // Slow to connect: the peer is reported as unreachable after the current backoff, as when
    // the connection is refused, but the attempt goes on (a distant peer may just be slow).
    this.connectTimer = setTimeout(
      () => {
        if (this.session !== session || this.connected) return;
        this.t.events.onUnreachable?.(this.id);
        this.t.events.onConnectionLost?.(this.id);
        this.connectTimer = setTimeout(() => {
          if (this.session === session && !this.connected) session.destroy();
        }, this.t.connectTimeoutMs);
      },
      Math.max(this.backoffMs, 200),
    );
  }

  /** Opens the stream on the connected session; undefined when the session cannot take it (it is then dropped). */
  private open(): ClientHttp2Stream | undefined {
    const session = this.session!;
    let s: ClientHttp2Stream;
    try {
      s = session.request(STREAM_HEADERS, STREAM_OPTIONS);
    } catch {
      this.sessionLost();
      return undefined;
    }
    this.stream = s;
    s.on('error', noop);
    s.on('response', (headers: IncomingHttpHeaders) => {
      // Answered with headers only, not with a status (trailers-only): the server took the
      // stream, so the next failure starts the backoff afresh.
      if (this.stream === s && headers['grpc-status'] === undefined) this.backoffMs = this.t.minBackoffMs;
    });
    // The server sends nothing but its final Ack; reading lets the end be seen.
    s.on('data', noop);
    // A peer that knows this node was removed ends the stream saying so (trailers, or headers
    // only when it refused at once).
    const status = (headers: IncomingHttpHeaders): void => {
      if (headers['grpc-status'] !== String(FAILED_PRECONDITION)) return;
      let text = String(headers['grpc-message'] ?? '');
      try {
        text = decodeURIComponent(text);
      } catch {
        // not percent-encoded as gRPC asks: compared as it came
      }
      if (text === REMOVED_MEMBER_MESSAGE) this.t.events.onRemoved?.(this.id);
    };
    s.on('trailers', status);
    s.on('response', status);
    // Any end of the stream (a status from the server, a reset, the connection gone) breaks it.
    const ended = (): void => {
      if (this.stream !== s) return;
      this.stream = undefined;
      if (!s.destroyed) s.close(http2.constants.NGHTTP2_CANCEL);
      this.broken();
    };
    s.once('end', ended);
    s.once('close', ended);
    return s;
  }

  private startKeepalive(session: ClientHttp2Session): void {
    let outstanding = false;
    this.keepalive = setInterval(() => {
      if (outstanding) {
        session.destroy(new Error('keepalive PING unanswered'));
        return;
      }
      outstanding = true;
      try {
        session.ping((err) => {
          if (!err) outstanding = false;
        });
      } catch {
        session.destroy();
      }
    }, this.t.keepaliveMs);
    this.keepalive.unref();
  }

  private clearConnectTimer(): void {
    if (this.connectTimer !== undefined) clearTimeout(this.connectTimer);
    this.connectTimer = undefined;
  }

  /** Forgets the session: the next stream is opened on a new connection. */
  private detachSession(): void {
    this.session = undefined;
    this.connected = false;
    this.clearConnectTimer();
    if (this.keepalive !== undefined) clearInterval(this.keepalive);
    this.keepalive = undefined;
  }

  /** The connection closed (or failed to open): the stream on it is gone too. */
  private sessionLost(): void {
    const s = this.session;
    this.detachSession();
    s?.destroy();
    this.stream = undefined;
    this.broken();
  }

  /**
   * The stream or its connection broke: report the peer, and try again after the backoff
   * (once per failure; the backoff doubles up to maxBackoffMs until a stream is taken).
   */
  private broken(): void {
    this.stream = undefined;
    this.waitingDrain = false;
    if (!this.closed) this.returnQueuedRequests();
    if (this.closed || this.retryTimer) return;
    this.t.events.onUnreachable?.(this.id);
    this.t.events.onConnectionLost?.(this.id);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.flush();
    }, this.backoffMs);
    this.backoffMs = Math.min(this.backoffMs * 2, this.t.maxBackoffMs);
  }

  /** The grpc-js channel of snapshot transfers, opened at the first. */
  private snapshotChannel(): ServiceClient {
    this.snapshots ??= new this.t.snapshotClient(this.addr, this.t.channelCredentials(), {
      'grpc.keepalive_time_ms': this.t.keepaliveMs,
      'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
      'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
      // Raft retries a failed snapshot by itself; gRPC's retry layer would only keep every chunk
      // written. (Even with retries off, grpc-js keeps the chunks until the call commits: the
      // receiving side sends headers at once for that.)
      'grpc.enable_retries': 0,
    }) as unknown as ServiceClient;
    return this.snapshots;
  }

  close(): void {
    this.returnQueuedRequests();
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const s = this.stream;
    this.stream = undefined;
    const session = this.session;
    this.detachSession();
    // Half-close: the peer answers with its Ack; the connection closes once the stream has ended.
    if (s !== undefined && !s.destroyed) s.end();
    if (session !== undefined) {
      session.close();
      setTimeout(() => session.destroy(), CLOSE_GRACE_MS).unref();
    }
    this.snapshots?.close();
  }
}
