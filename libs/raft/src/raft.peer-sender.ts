/**
 * The sending side of the peer transport, one PeerSender per peer (docs/cluster.md "Peer
 * transport"): Raft messages go on one long-lived gRPC client stream, RaftTransport.Stream,
 * spoken directly on an HTTP/2 connection of the sender's own (libs/grpc's H2ClientConnection);
 * snapshots go on grpc-js calls.
 * Either works against any gRPC server of proto/raft.proto (the peer port of this build, or
 * grpc-js's).
 */
import * as net from 'node:net';
import * as tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { H2ClientConnection, H2_ERROR, type H2Stream, encodeHeaders, encodeMessage } from '@app/grpc';
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

/** The peer stream's request header block (gRPC's PROTOCOL-HTTP2.md). */
function streamHeaders(secure: boolean, authority: string): Buffer {
  return encodeHeaders([
    [':method', 'POST'],
    [':scheme', secure ? 'https' : 'http'],
    [':path', '/kapi.raft.v1.RaftTransport/Stream'],
    [':authority', authority],
    ['content-type', 'application/grpc'],
    ['te', 'trailers'],
    ['user-agent', 'kapi-raft-peer'],
  ]);
}
/**
 * The windows the sender grants the peer's server: it sends nothing on the stream but its
 * final Ack, so HTTP/2's defaults do.
 */
const CLIENT_WINDOWS = { streamWindowBytes: 65_535, connectionWindowBytes: 65_535 };

/** Host and port of a peer address ("host:port", "[v6]:port"). */
function hostPort(addr: string): { host: string; port: number } {
  const u = new URL(`http://${addr}`);
  return { host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port || 80) };
}
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
 * One outgoing peer: bounded queue, one client stream on an HTTP/2 connection, reconnect with
 * exponential backoff, keepalive PINGs. Snapshots go on their own grpc-js call (sendSnapshot).
 */
export class PeerSender {
  private queue: Message[] = [];
  private session: H2ClientConnection | undefined;
  /** The connection finished its handshake (streams can be opened). */
  private connected = false;
  private stream: H2Stream | undefined;
  private waitingDrain = false;
  private backoffMs: number;
  private retryTimer: NodeJS.Timeout | undefined;
  /** While connecting: reports the peer unreachable when the connection takes long, then gives up on it. */
  private connectTimer: NodeJS.Timeout | undefined;
  private keepalive: NodeJS.Timeout | undefined;
  private closed = false;
  /** The stream's request header block on the current connection. */
  private headers: Buffer | undefined;
  private snapshots: ServiceClient | undefined;
  private readonly onDrain = (): void => {
    if (!this.waitingDrain) return;
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
        return;
      }
    }
  }

  /** Frames one batch onto the stream; false when the stream's buffer is full (wait for 'drain'). */
  private write(s: H2Stream, batch: readonly Message[]): boolean {
    let payload: Uint8Array;
    try {
      payload = this.t.encodeBatch(batch);
    } catch {
      // A message that has no wire form (a bug): the batch is lost, which Raft tolerates.
      return true;
    }
    if (payload.length < COPY_BELOW_BYTES) return s.write(encodeMessage(payload));
    s.write(messagePrefix(payload.length));
    return s.write(Buffer.from(payload.buffer, payload.byteOffset, payload.length));
  }

  private connect(): void {
    const secure = this.t.connectTls;
    let socket: net.Socket;
    try {
      const { host, port } = hostPort(this.addr);
      socket = secure
        ? tls.connect({
            host,
            port,
            ca: secure.ca,
            cert: secure.cert,
            key: secure.key,
            checkServerIdentity: secure.checkServerIdentity,
            ALPNProtocols: ['h2'],
            ...(net.isIP(host) ? {} : { servername: host }),
          })
        : net.connect(port, host);
    } catch {
      // An address that cannot be dialled at all.
      this.broken();
      return;
    }
    const session: H2ClientConnection = new H2ClientConnection(socket, {
      ...CLIENT_WINDOWS,
      onClose: () => {
        if (this.session === session) this.sessionLost();
      },
      // A server going away (GOAWAY): the open stream may finish, new streams go to a new connection.
      onGoAway: () => {
        if (this.session === session) this.detachSession();
      },
    });
    this.session = session;
    this.connected = false;
    this.headers = streamHeaders(secure !== undefined, this.addr);
    socket.once(secure ? 'secureConnect' : 'connect', () => {
      if (this.session !== session) return;
      // A TLS server that did not choose h2 does not speak this protocol.
      if (secure && (socket as tls.TLSSocket).alpnProtocol !== 'h2') {
        session.destroy();
        return;
      }
      this.clearConnectTimer();
      this.connected = true;
      this.startKeepalive(session);
      this.flush();
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
  private open(): H2Stream | undefined {
    const session = this.session!;
    if (session.closing) {
      this.sessionLost();
      return undefined;
    }
    // A peer that knows this node was removed ends the stream saying so (trailers, or headers
    // only when it refused at once).
    const status = (headers: Record<string, string>): void => {
      if (headers['grpc-status'] !== String(FAILED_PRECONDITION)) return;
      let text = headers['grpc-message'] ?? '';
      try {
        text = decodeURIComponent(text);
      } catch {
        // not percent-encoded as gRPC asks: compared as it came
      }
      if (text === REMOVED_MEMBER_MESSAGE) this.t.events.onRemoved?.(this.id);
    };
    // Any end of the stream (a status from the server, a reset, the connection gone) breaks it.
    const ended = (): void => {
      if (this.stream !== s) return;
      this.stream = undefined;
      if (!s.closed) s.reset(H2_ERROR.CANCEL);
      this.broken();
    };
    const s: H2Stream = session.request(this.headers!, {
      // The server sends nothing but its final Ack.
      onData: noop,
      onHeaders: (headers, trailers) => {
        // Answered with headers only, not with a status (trailers-only): the server took the
        // stream, so the next failure starts the backoff afresh.
        if (!trailers && this.stream === s && headers['grpc-status'] === undefined) this.backoffMs = this.t.minBackoffMs;
        status(headers);
      },
      onEnd: ended,
      onClose: ended,
      onDrain: this.onDrain,
    });
    this.stream = s;
    return s;
  }

  private startKeepalive(session: H2ClientConnection): void {
    let outstanding = false;
    const answered = (): void => {
      outstanding = false;
    };
    this.keepalive = setInterval(() => {
      if (outstanding) {
        // A PING unanswered by the next one: the connection is given up.
        session.destroy();
        return;
      }
      outstanding = true;
      session.ping(answered);
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
    if (s !== undefined && !s.closed) s.end(undefined, undefined);
    if (session !== undefined) {
      session.close();
      setTimeout(() => session.destroy(), CLOSE_GRACE_MS).unref();
    }
    this.snapshots?.close();
  }
}
