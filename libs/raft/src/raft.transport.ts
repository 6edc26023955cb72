import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { type Entry, type Message, type MessageType, type NodeId, type Snapshot, EMPTY_DATA, EMPTY_ENTRIES, RaftError } from './raft.types.js';

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
}

/**
 * Mutual TLS material of the peer transport (docs/cluster.md "Peer TLS", etcd's
 * --peer-cert-file/--peer-key-file/--peer-trusted-ca-file). The same certificate is presented
 * as server and as client, so it needs ExtKeyUsage serverAuth AND clientAuth; peers are
 * trusted only when their certificate chains to `ca`.
 */
export interface PeerTls {
  /** PEM of the CA(s) peer certificates must chain to (both directions). */
  readonly ca: string | Buffer;
  /** PEM certificate chain presented to peers. */
  readonly cert: string | Buffer;
  /** PEM private key of `cert`. */
  readonly key: string | Buffer;
}

/** A transport that cannot be built as configured (no security posture, unusable TLS material). */
export class TransportConfigError extends Error {
  override readonly name = 'TransportConfigError';
}

const pem = (v: string | Buffer): Buffer => (typeof v === 'string' ? Buffer.from(v) : v);

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

const TYPE_TO_WIRE: Partial<Record<MessageType, string>> = {
  prop: 'MSG_PROP',
  app: 'MSG_APP',
  appResp: 'MSG_APP_RESP',
  vote: 'MSG_VOTE',
  voteResp: 'MSG_VOTE_RESP',
  preVote: 'MSG_PRE_VOTE',
  preVoteResp: 'MSG_PRE_VOTE_RESP',
  snap: 'MSG_SNAP',
  heartbeat: 'MSG_HEARTBEAT',
  heartbeatResp: 'MSG_HEARTBEAT_RESP',
  transferLeader: 'MSG_TRANSFER_LEADER',
  timeoutNow: 'MSG_TIMEOUT_NOW',
  readIndex: 'MSG_READ_INDEX',
  readIndexResp: 'MSG_READ_INDEX_RESP',
};
const WIRE_TO_TYPE = new Map<string, MessageType>(Object.entries(TYPE_TO_WIRE).map(([k, v]) => [v, k as MessageType]));

interface WireEntry {
  term: number;
  index: number;
  type: string;
  data: Uint8Array;
}
interface WireMessage {
  type: string;
  from: number;
  to: number;
  term: number;
  logTerm: number;
  index: number;
  entries: WireEntry[];
  commit: number;
  reject: boolean;
  rejectHint: number;
  context: string;
  snapshot?: { index: number; term: number; confState?: { voters: number[]; learners: number[] } } | null;
}

/** Finds proto/raft.proto by walking up from this file (works from src and from dist). */
export function findRaftProto(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 8; i++) {
    const p = join(dir, 'proto', 'raft.proto');
    if (existsSync(p)) return p;
    dir = dirname(dir);
  }
  const p = join(process.cwd(), 'proto', 'raft.proto');
  if (existsSync(p)) return p;
  throw new RaftError('ErrUnavailable', 'proto/raft.proto not found');
}

/** Converts a core message to its wire form (snapshot data is sent separately, chunked). */
export function toWire(m: Message): WireMessage {
  const type = TYPE_TO_WIRE[m.type];
  if (!type) throw new RaftError('ErrInvariant', `message type ${m.type} is local and never sent`);
  return {
    type,
    from: m.from,
    to: m.to,
    term: m.term,
    logTerm: m.logTerm,
    index: m.index,
    entries: m.entries.map((e) => ({ term: e.term, index: e.index, type: e.type === 'conf' ? 'ENTRY_CONF' : 'ENTRY_NORMAL', data: e.data })),
    commit: m.commit,
    reject: m.reject,
    rejectHint: m.rejectHint,
    context: m.context,
    snapshot: m.snapshot ? { index: m.snapshot.metadata.index, term: m.snapshot.metadata.term, confState: { voters: [...m.snapshot.metadata.confState.voters], learners: [...m.snapshot.metadata.confState.learners] } } : null,
  };
}

/** Converts a wire message back; returns undefined for an unknown type (bad input is dropped). */
export function fromWire(w: WireMessage, snapshotData?: Uint8Array): Message | undefined {
  const type = WIRE_TO_TYPE.get(w.type);
  if (!type || !(w.from > 0)) return undefined;
  const entries: Entry[] = (w.entries ?? []).map((e) => ({
    term: Number(e.term),
    index: Number(e.index),
    type: e.type === 'ENTRY_CONF' ? 'conf' : 'normal',
    data: e.data ? new Uint8Array(e.data) : EMPTY_DATA,
  }));
  let snapshot: Snapshot | undefined;
  if (type === 'snap') {
    if (!w.snapshot) return undefined;
    snapshot = {
      metadata: { index: Number(w.snapshot.index), term: Number(w.snapshot.term), confState: { voters: (w.snapshot.confState?.voters ?? []).map(Number), learners: (w.snapshot.confState?.learners ?? []).map(Number) } },
      data: snapshotData ?? EMPTY_DATA,
    };
  }
  return {
    type,
    from: Number(w.from),
    to: Number(w.to),
    term: Number(w.term),
    logTerm: Number(w.logTerm),
    index: Number(w.index),
    entries: entries.length > 0 ? entries : EMPTY_ENTRIES,
    commit: Number(w.commit),
    reject: Boolean(w.reject),
    rejectHint: Number(w.rejectHint),
    context: w.context ?? '',
    snapshot,
  };
}

type ServiceClient = grpc.Client & {
  Stream(cb: (err: grpc.ServiceError | null) => void): grpc.ClientWritableStream<{ messages: WireMessage[] }>;
  Snapshot(cb: (err: grpc.ServiceError | null) => void): grpc.ClientWritableStream<{ header?: WireMessage; data: Uint8Array; last: boolean }>;
};

/** One outgoing peer: bounded queue, one client stream, reconnect with exponential backoff. */
class PeerSender {
  private queue: Message[] = [];
  private stream: grpc.ClientWritableStream<{ messages: WireMessage[] }> | undefined;
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
    private readonly t: GrpcTransport,
  ) {
    this.client = new ctor(addr, t.channelCredentials(), {
      'grpc.keepalive_time_ms': 10_000,
      'grpc.max_receive_message_length': 64 << 20,
      'grpc.max_send_message_length': 64 << 20,
    }) as unknown as ServiceClient;
    this.backoffMs = t.minBackoffMs;
  }

  enqueue(m: Message): void {
    if (this.closed) return;
    if (m.type === 'snap') {
      void this.sendSnapshot(m);
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
      const ok = s.write({ messages: batch.map(toWire) });
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

  /** Chunked snapshot transfer on its own stream (etcd's rafthttp snapshot channel). */
  private async sendSnapshot(m: Message): Promise<void> {
    const snap = m.snapshot!;
    const header = toWire(m);
    const size = this.t.snapshotChunkBytes;
    try {
      await new Promise<void>((resolve, reject) => {
        const call = this.client.Snapshot((err) => (err ? reject(err) : resolve()));
        call.on('error', reject);
        const data = snap.data;
        let off = 0;
        let first = true;
        const pump = (): void => {
          while (first || off < data.length) {
            const chunk = data.subarray(off, Math.min(off + size, data.length));
            off += chunk.length;
            const last = off >= data.length;
            const ok = call.write({ header: first ? header : undefined, data: chunk, last });
            first = false;
            if (last) {
              call.end();
              return;
            }
            if (!ok) {
              call.once('drain', pump);
              return;
            }
          }
        };
        pump();
      });
      this.t.events.onSnapshotStatus?.(this.id, false);
    } catch {
      this.t.events.onSnapshotStatus?.(this.id, true);
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

/**
 * gRPC transport between Raft nodes (proto/raft.proto, loaded with @grpc/proto-loader): one
 * long-lived client stream per peer carrying batches of messages, reconnect with exponential
 * backoff, snapshots chunked on a separate stream, and a bounded queue per peer.
 */
export class GrpcTransport implements RaftTransport {
  readonly maxQueue: number;
  readonly maxBatch: number;
  readonly snapshotChunkBytes: number;
  readonly minBackoffMs: number;
  readonly maxBackoffMs: number;
  private readonly server = new grpc.Server({ 'grpc.max_receive_message_length': 64 << 20 });
  private readonly senders = new Map<NodeId, PeerSender>();
  private readonly ctor: grpc.ServiceClientConstructor;
  private readonly service: grpc.ServiceDefinition;
  private stopped = false;
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
    if (opts.tls) {
      const { ca, cert, key } = opts.tls;
      try {
        // checkClientCertificate=true: a peer without a certificate from `ca` is refused during
        // the handshake (etcd's --peer-client-cert-auth, always on here).
        this.serverCreds = grpc.ServerCredentials.createSsl(pem(ca), [{ private_key: pem(key), cert_chain: pem(cert) }], true);
        // The default checkServerIdentity compares the server certificate's SANs with the host
        // of the address we dialled (the peer address from --initial-cluster / member records).
        this.clientCreds = grpc.credentials.createSsl(pem(ca), pem(key), pem(cert));
      } catch (e) {
        throw new TransportConfigError(`peer TLS material is unusable: ${(e as Error).message}`);
      }
    } else if (opts.insecure === true) {
      this.serverCreds = grpc.ServerCredentials.createInsecure();
      this.clientCreds = grpc.credentials.createInsecure();
    } else {
      throw new TransportConfigError('the peer transport needs TLS material (tls) or an explicit insecure: true');
    }
    const def = protoLoader.loadSync(opts.protoPath ?? findRaftProto(), { longs: Number, enums: String, defaults: true, arrays: true, keepCase: false });
    const pkg = grpc.loadPackageDefinition(def) as unknown as { kapi: { raft: { v1: { RaftTransport: grpc.ServiceClientConstructor } } } };
    this.ctor = pkg.kapi.raft.v1.RaftTransport;
    this.service = this.ctor.service;
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
      Stream: (call: grpc.ServerReadableStream<{ messages: WireMessage[] }, object>, cb: grpc.sendUnaryData<object>) => {
        call.on('data', (batch: { messages: WireMessage[] }) => {
          if (this.stopped) return;
          for (const w of batch.messages ?? []) {
            const m = fromWire(w);
            if (m && m.to === this.opts.id) this.events.onMessage(m);
          }
        });
        call.on('end', () => cb(null, {}));
        call.on('error', () => undefined);
      },
      Snapshot: (call: grpc.ServerReadableStream<{ header?: WireMessage; data: Uint8Array; last: boolean }, object>, cb: grpc.sendUnaryData<object>) => {
        let header: WireMessage | undefined;
        const chunks: Uint8Array[] = [];
        let total = 0;
        let done = false;
        call.on('data', (c: { header?: WireMessage; data: Uint8Array; last: boolean }) => {
          if (c.header && !header) header = c.header;
          if (c.data && c.data.length > 0) {
            chunks.push(new Uint8Array(c.data));
            total += c.data.length;
          }
          if (c.last) done = true;
        });
        call.on('end', () => {
          if (!header || !done) {
            cb({ code: grpc.status.INVALID_ARGUMENT, details: 'incomplete snapshot' }, null);
            return;
          }
          const data = new Uint8Array(total);
          let off = 0;
          for (const ch of chunks) {
            data.set(ch, off);
            off += ch.length;
          }
          const m = fromWire(header, data);
          if (m && m.to === this.opts.id && !this.stopped) this.events.onMessage(m);
          cb(null, {});
        });
        call.on('error', () => undefined);
      },
    });
    return new Promise<number>((resolve, reject) => {
      this.server.bindAsync(this.opts.listen, this.serverCreds, (err, port) => (err ? reject(err) : resolve(port)));
    });
  }

  send(msgs: readonly Message[]): void {
    if (this.stopped) return;
    for (const m of msgs) {
      const s = this.senders.get(m.to);
      if (s) s.enqueue(m);
      else this.events.onUnreachable?.(m.to);
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
