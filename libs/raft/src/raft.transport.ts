import { X509Certificate, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, existsSync } from 'node:fs';
import { type FileHandle, open, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type PeerCertificate, checkServerIdentity } from 'node:tls';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';
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
 * trusted only when their certificate chains to `ca` AND carries an allowed common name (etcd's
 * --peer-cert-allowed-cn): the CA also signs the API's client certificates, and those must not
 * open the peer port.
 */
export interface PeerTls {
  /** PEM of the CA(s) peer certificates must chain to (both directions). */
  readonly ca: string | Buffer;
  /** PEM certificate chain presented to peers. */
  readonly cert: string | Buffer;
  /** PEM private key of `cert`. */
  readonly key: string | Buffer;
  /** Common names a peer's certificate may carry. Default: the common name of `cert`. */
  readonly allowedCN?: readonly string[];
}

/** The common name(s) in a certificate subject as Node's TLS layer reports it. */
function commonNames(subject: PeerCertificate['subject'] | undefined): string[] {
  const cn = (subject as Record<string, string | string[] | undefined> | undefined)?.CN;
  return cn === undefined ? [] : Array.isArray(cn) ? cn : [cn];
}

/** True when a peer certificate has exactly one common name and it is allowed. */
function peerCertificateAllowed(cert: PeerCertificate | undefined, allowed: ReadonlySet<string>): boolean {
  const cns = commonNames(cert?.subject);
  return cns.length === 1 && allowed.has(cns[0]!);
}

/** The common names peers must present: `tls.allowedCN`, else the CN of our own certificate. */
function allowedPeerNames(tls: PeerTls): Set<string> {
  if (tls.allowedCN !== undefined) {
    if (tls.allowedCN.length === 0 || tls.allowedCN.some((n) => n === '')) throw new TransportConfigError('allowed peer common names must be non-empty');
    return new Set(tls.allowedCN);
  }
  let own: X509Certificate;
  try {
    own = new X509Certificate(pem(tls.cert));
  } catch (e) {
    throw new TransportConfigError(`peer TLS material is unusable: ${(e as Error).message}`);
  }
  const cn = own.subject.split('\n').find((l) => l.startsWith('CN='))?.slice(3);
  if (!cn) throw new TransportConfigError('the peer certificate has no common name: name the allowed peer common names');
  return new Set([cn]);
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

/** MessageType values of proto/raft.proto (kapi.raft.v1.MessageType). */
const TYPE_TO_WIRE: Partial<Record<MessageType, number>> = {
  prop: 1, // MSG_PROP
  app: 2, // MSG_APP
  appResp: 3, // MSG_APP_RESP
  vote: 4, // MSG_VOTE
  voteResp: 5, // MSG_VOTE_RESP
  preVote: 6, // MSG_PRE_VOTE
  preVoteResp: 7, // MSG_PRE_VOTE_RESP
  snap: 8, // MSG_SNAP
  heartbeat: 9, // MSG_HEARTBEAT
  heartbeatResp: 10, // MSG_HEARTBEAT_RESP
  transferLeader: 11, // MSG_TRANSFER_LEADER
  timeoutNow: 12, // MSG_TIMEOUT_NOW
  readIndex: 13, // MSG_READ_INDEX
  readIndexResp: 14, // MSG_READ_INDEX_RESP
};
const WIRE_TO_TYPE = new Map<number, MessageType>(Object.entries(TYPE_TO_WIRE).map(([k, v]) => [v, k as MessageType]));
/** EntryType values of proto/raft.proto. */
const ENTRY_NORMAL = 0;
const ENTRY_CONF = 1;

/**
 * A 64-bit field as protobufjs decodes it: a Long when the `long` package is installed (it is a
 * dependency of protobufjs), a number otherwise. Encoding accepts plain numbers.
 */
type U64 = number | { toNumber(): number };
const num = (v: U64 | null | undefined): number => (v === undefined || v === null ? 0 : typeof v === 'number' ? v : v.toNumber());

/**
 * The wire form of Entry and Message (proto/raft.proto field names in protobufjs' camelCase,
 * enums as numbers): what protobufjs encodes directly and decodes to, with no conversion of
 * enum names or 64-bit values in between (proto-loader's generic objects cost a third of the
 * codec's time on the append path).
 */
export interface WireEntry {
  term: U64;
  index: U64;
  type: number;
  data: Uint8Array;
}
export interface WireMessage {
  type: number;
  from: U64;
  to: U64;
  term: U64;
  logTerm: U64;
  index: U64;
  entries: WireEntry[];
  commit: U64;
  reject: boolean;
  rejectHint: U64;
  context: string;
  snapshot?: { index: U64; term: U64; confState?: { voters: U64[]; learners: U64[] } | null } | null;
}
interface WireChunk {
  header?: WireMessage | null;
  data: Uint8Array;
  last: boolean;
}

/**
 * Finds `proto/<file>` of the repository by walking up from this file (works from src and from
 * dist, and from the image, whose proto/ sits beside dist/), else under the working directory.
 */
export function findProtoFile(file: string): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 8; i++) {
    const p = join(dir, 'proto', file);
    if (existsSync(p)) return p;
    dir = dirname(dir);
  }
  const p = join(process.cwd(), 'proto', file);
  if (existsSync(p)) return p;
  throw new RaftError('ErrUnavailable', `proto/${file} not found`);
}

/** Finds proto/raft.proto (see findProtoFile). */
export function findRaftProto(): string {
  return findProtoFile('raft.proto');
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
    entries: m.entries.map((e) => ({ term: e.term, index: e.index, type: e.type === 'conf' ? ENTRY_CONF : ENTRY_NORMAL, data: e.data })),
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
  const from = num(w.from);
  if (!type || !(from > 0)) return undefined;
  // Entry data stays a view into the received message (no copy): nothing writes to it.
  const entries: Entry[] = (w.entries ?? []).map((e) => ({
    term: num(e.term),
    index: num(e.index),
    type: e.type === ENTRY_CONF ? 'conf' : 'normal',
    data: e.data && e.data.length > 0 ? e.data : EMPTY_DATA,
  }));
  let snapshot: Snapshot | undefined;
  if (type === 'snap') {
    if (!w.snapshot) return undefined;
    snapshot = {
      metadata: { index: num(w.snapshot.index), term: num(w.snapshot.term), confState: { voters: (w.snapshot.confState?.voters ?? []).map(num), learners: (w.snapshot.confState?.learners ?? []).map(num) } },
      data: snapshotData ?? EMPTY_DATA,
    };
  }
  return {
    type,
    from,
    to: num(w.to),
    term: num(w.term),
    logTerm: num(w.logTerm),
    index: num(w.index),
    entries: entries.length > 0 ? entries : EMPTY_ENTRIES,
    commit: num(w.commit),
    reject: Boolean(w.reject),
    rejectHint: num(w.rejectHint),
    context: w.context ?? '',
    snapshot,
  };
}

/**
 * The RaftTransport service of proto/raft.proto: methods as @grpc/proto-loader reads them from
 * the file, requests encoded by protobufjs directly instead of through proto-loader's generic
 * objects. A Stream write takes core Messages and the server receives core Messages (bad ones,
 * and those `accept` refuses, already dropped), so each message is converted once per direction.
 */
export function raftService(protoPath: string, accept: (m: Message) => boolean = () => true): grpc.ServiceDefinition {
  const methods = protoLoader.loadSync(protoPath, { keepCase: false, longs: Number, enums: String, defaults: true })['kapi.raft.v1.RaftTransport'] as grpc.ServiceDefinition;
  const root = protobuf.loadSync(protoPath);
  const batchType = root.lookupType('kapi.raft.v1.MessageBatch');
  const chunkType = root.lookupType('kapi.raft.v1.SnapshotChunk');
  const buf = (u: Uint8Array): Buffer => (Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength));
  return {
    Stream: {
      ...methods.Stream!,
      requestSerialize: (msgs: readonly Message[]) => buf(batchType.encode({ messages: msgs.map(toWire) }).finish()),
      requestDeserialize: (b: Buffer): Message[] => {
        const out: Message[] = [];
        for (const w of (batchType.decode(b) as unknown as { messages?: WireMessage[] }).messages ?? []) {
          const m = fromWire(w);
          if (m && accept(m)) out.push(m);
        }
        return out;
      },
    },
    Snapshot: {
      ...methods.Snapshot!,
      requestSerialize: (c: WireChunk) => buf(chunkType.encode(c).finish()),
      requestDeserialize: (b: Buffer): WireChunk => chunkType.decode(b) as unknown as WireChunk,
    },
  };
}

type ServiceClient = grpc.Client & {
  Stream(cb: (err: grpc.ServiceError | null) => void): grpc.ClientWritableStream<readonly Message[]>;
  Snapshot(cb: (err: grpc.ServiceError | null) => void): grpc.ClientWritableStream<WireChunk>;
};

/** One outgoing peer: bounded queue, one client stream, reconnect with exponential backoff. */
class PeerSender {
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
    private readonly t: GrpcTransport,
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

  /**
   * Chunked snapshot transfer on its own stream (etcd's rafthttp snapshot channel), read from
   * the snapshot's file piece by piece when it has one (the file is deleted afterwards, sent or
   * not: the next attempt exports anew).
   */
  private async sendSnapshot(m: Message): Promise<void> {
    const snap = m.snapshot!;
    const header = toWire(m);
    const started = performance.now();
    let bytes = 0;
    try {
      await new Promise<void>((resolve, reject) => {
        const call = this.client.Snapshot((err) => (err ? reject(err) : resolve()));
        call.on('error', reject);
        const pump = async (): Promise<void> => {
          let first = true;
          for await (const data of snapshotChunks(snap, this.t.snapshotChunkBytes)) {
            const ok = call.write({ header: first ? header : null, data, last: false });
            first = false;
            bytes += data.length;
            if (!ok) await once(call, 'drain');
          }
          call.write({ header: first ? header : null, data: EMPTY_DATA, last: true });
          call.end();
        };
        pump().catch((e: unknown) => {
          call.cancel();
          reject(e instanceof Error ? e : new Error(String(e)));
        });
      });
      countTransfer(this.t.snapshotTransfers.sent, this.id, true, bytes, started);
      this.t.events.onSnapshotStatus?.(this.id, false);
    } catch {
      countTransfer(this.t.snapshotTransfers.sent, this.id, false, bytes, started);
      this.t.events.onSnapshotStatus?.(this.id, true);
    } finally {
      dropSnapshotFile(m);
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
    const serverOptions: grpc.ServerOptions = { 'grpc.max_receive_message_length': 64 << 20 };
    if (opts.tls) {
      const { ca, cert, key } = opts.tls;
      const allowed = allowedPeerNames(opts.tls);
      try {
        // checkClientCertificate=true: a peer without a certificate from `ca` is refused during
        // the handshake (etcd's --peer-client-cert-auth, always on here).
        this.serverCreds = grpc.ServerCredentials.createSsl(pem(ca), [{ private_key: pem(key), cert_chain: pem(cert) }], true);
        // Node's checkServerIdentity compares the server certificate's SANs with the host of the
        // address we dialled (the peer address from --initial-cluster / member records); the
        // server must also be a peer, not another certificate of the CA.
        this.clientCreds = grpc.credentials.createSsl(pem(ca), pem(key), pem(cert), {
          checkServerIdentity: (host, c) =>
            checkServerIdentity(host, c) ?? (peerCertificateAllowed(c, allowed) ? undefined : new Error(`peer certificate CN ${JSON.stringify(commonNames(c.subject).join(','))} is not an allowed peer name`)),
        });
      } catch (e) {
        throw new TransportConfigError(`peer TLS material is unusable: ${(e as Error).message}`);
      }
      // Every call on the peer port (Raft streams, snapshots, the node-to-node administration of
      // addService) must come from a peer certificate: a client certificate of the API, signed
      // by the same CA, is refused with PERMISSION_DENIED before any handler sees the call.
      serverOptions.interceptors = [
        (_method, call) =>
          new grpc.ServerInterceptingCall(call, {
            start: (next) => {
              if (peerCertificateAllowed(call.getAuthContext()?.sslPeerCertificate, allowed)) next();
              else call.sendStatus({ code: grpc.status.PERMISSION_DENIED, details: 'not a peer certificate', metadata: new grpc.Metadata() });
            },
          }),
      ];
    } else if (opts.insecure === true) {
      this.serverCreds = grpc.ServerCredentials.createInsecure();
      this.clientCreds = grpc.credentials.createInsecure();
    } else {
      throw new TransportConfigError('the peer transport needs TLS material (tls) or an explicit insecure: true');
    }
    this.server = new grpc.Server(serverOptions);
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
        call.on('data', (batch: Message[]) => {
          if (this.stopped) return;
          for (const m of batch) this.events.onMessage(m);
        });
        call.on('end', () => cb(null, {}));
        call.on('error', () => undefined);
      },
      Snapshot: (call: grpc.ServerReadableStream<WireChunk, object>, cb: grpc.sendUnaryData<object>) => {
        // Headers at once for the same reason as Stream: the sender then releases each chunk
        // once written, whatever the chunk size.
        call.sendMetadata(new grpc.Metadata());
        const sink = this.opts.snapshotDir !== undefined ? new FileSnapshotSink(this.opts.snapshotDir) : new MemorySnapshotSink();
        let header: WireMessage | undefined;
        let done = false;
        const started = performance.now();
        let bytes = 0;
        // Counted once per transfer, under the sender's id when its header arrived.
        let counted = false;
        const count = (ok: boolean): void => {
          const from = header ? num(header.from) : 0;
          if (counted || !(from > 0)) return;
          counted = true;
          countTransfer(this.snapshotTransfers.received, from, ok, bytes, started);
        };
        call.on('data', (c: WireChunk) => {
          if (c.header && !header) header = c.header;
          if (c.data && c.data.length > 0) {
            bytes += c.data.length;
            // Bounded memory: the stream pauses while the sink is behind (gRPC flow control
            // then holds the sender back).
            if (!sink.write(c.data)) {
              call.pause();
              void sink.drained().then(() => call.resume());
            }
          }
          if (c.last) done = true;
        });
        call.on('end', () => {
          void (async () => {
            if (!header || !done) {
              count(false);
              await sink.discard();
              cb({ code: grpc.status.INVALID_ARGUMENT, details: 'incomplete snapshot' }, null);
              return;
            }
            let received: { data: Uint8Array; file?: string };
            try {
              received = await sink.finish();
            } catch (e) {
              count(false);
              await sink.discard();
              cb({ code: grpc.status.INTERNAL, details: `snapshot not stored: ${(e as Error).message}` }, null);
              return;
            }
            count(true);
            const m = fromWire(header, received.data);
            if (m?.snapshot && received.file !== undefined) m.snapshot = { ...m.snapshot, file: received.file };
            if (m && m.to === this.opts.id && !this.stopped) this.events.onMessage(m);
            else dropSnapshotFile(m ?? { snapshot: received.file === undefined ? undefined : { file: received.file } });
            cb(null, {});
          })().catch((e: unknown) => cb({ code: grpc.status.INTERNAL, details: `snapshot not delivered: ${(e as Error).message}` }, null));
        });
        call.on('error', () => {
          count(false);
          void sink.discard();
        });
      },
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

/** Snapshot transfers with one peer in one direction (for metrics). */
export interface SnapshotTransferCounts {
  success: number;
  failures: number;
  /** Bytes of the successful transfers. */
  bytes: number;
  /** Time the successful transfers took. */
  seconds: number;
}

function countTransfer(byPeer: Map<NodeId, SnapshotTransferCounts>, peer: NodeId, ok: boolean, bytes: number, startedMs: number): void {
  let c = byPeer.get(peer);
  if (!c) byPeer.set(peer, (c = { success: 0, failures: 0, bytes: 0, seconds: 0 }));
  if (!ok) {
    c.failures++;
    return;
  }
  c.success++;
  c.bytes += bytes;
  c.seconds += (performance.now() - startedMs) / 1000;
}

/** Deletes the file of a snapshot message that will not be sent or delivered (see Snapshot.file). */
function dropSnapshotFile(m: { snapshot?: { file?: string } }): void {
  const file = m.snapshot?.file;
  if (file !== undefined) void unlink(file).catch(() => undefined);
}

/** A snapshot's data in pieces of at most `size` bytes: from its file, or slices of `data`. */
async function* snapshotChunks(snap: Snapshot, size: number): AsyncGenerator<Uint8Array> {
  if (snap.file !== undefined) {
    for await (const piece of createReadStream(snap.file, { highWaterMark: size })) yield piece as Buffer;
    return;
  }
  for (let off = 0; off < snap.data.length; off += size) yield snap.data.subarray(off, off + size);
}

/** Where a received snapshot's data goes while it arrives. */
interface SnapshotSink {
  /** Takes a piece; false when the caller should wait for drained() before the next. */
  write(data: Uint8Array): boolean;
  drained(): Promise<void>;
  /** All data received: the data in memory, or the durable file that holds it. */
  finish(): Promise<{ data: Uint8Array; file?: string }>;
  /** Forgets what was received (an incomplete or refused transfer). */
  discard(): Promise<void>;
}

class MemorySnapshotSink implements SnapshotSink {
  private readonly chunks: Uint8Array[] = [];

  write(data: Uint8Array): boolean {
    this.chunks.push(new Uint8Array(data));
    return true;
  }

  drained(): Promise<void> {
    return Promise.resolve();
  }

  finish(): Promise<{ data: Uint8Array }> {
    return Promise.resolve({ data: new Uint8Array(Buffer.concat(this.chunks)) });
  }

  discard(): Promise<void> {
    this.chunks.length = 0;
    return Promise.resolve();
  }
}

/** Up to this many pieces wait for the disk before the stream is paused. */
const SNAPSHOT_WRITES_AHEAD = 4;

/**
 * Writes a received snapshot to a new file in `dir` (mode 0600), in arrival order; finish()
 * fsyncs the file and the directory, so the file survives a crash once the log's storage
 * records it.
 */
class FileSnapshotSink implements SnapshotSink {
  readonly file: string;
  private handle: Promise<FileHandle>;
  private writing: Promise<unknown>;
  private pending = 0;
  private waiters: (() => void)[] = [];
  private failed: Error | undefined;
  /** Set once the file is complete and handed over: discard() no longer deletes it. */
  private finished = false;

  constructor(private readonly dir: string) {
    this.file = join(dir, `recv-${Date.now()}-${randomBytes(4).toString('hex')}.snap`);
    this.handle = open(this.file, 'wx', 0o600);
    // A failed open is reported by finish() (or ignored by discard()); until the first of them
    // awaits it, it must not count as an unhandled rejection, which would end the process.
    this.handle.catch(() => undefined);
    this.writing = this.handle;
  }

  write(data: Uint8Array): boolean {
    this.pending++;
    this.writing = this.writing
      .then(async () => {
        if (this.failed) return;
        await (await this.handle).write(data);
      })
      .catch((e: unknown) => {
        this.failed ??= e instanceof Error ? e : new Error(String(e));
      })
      .finally(() => {
        this.pending--;
        if (this.pending < SNAPSHOT_WRITES_AHEAD) for (const w of this.waiters.splice(0)) w();
      });
    return this.pending < SNAPSHOT_WRITES_AHEAD;
  }

  drained(): Promise<void> {
    return this.pending < SNAPSHOT_WRITES_AHEAD ? Promise.resolve() : new Promise((r) => this.waiters.push(r));
  }

  async finish(): Promise<{ data: Uint8Array; file: string }> {
    await this.writing;
    if (this.failed) throw this.failed;
    const fh = await this.handle;
    await fh.sync();
    await fh.close();
    const d = await open(this.dir, 'r');
    try {
      await d.sync();
    } finally {
      await d.close();
    }
    this.finished = true;
    return { data: EMPTY_DATA, file: this.file };
  }

  async discard(): Promise<void> {
    if (this.finished) return;
    await this.writing.catch(() => undefined);
    await this.handle.then((fh) => fh.close()).catch(() => undefined);
    await unlink(this.file).catch(() => undefined);
  }
}
