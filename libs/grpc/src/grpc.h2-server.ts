/**
 * A lean gRPC server on our own HTTP/2 connections (h2/h2.connection.ts), serving the etcd
 * endpoint (docs/etcd-api.md "Transport") and the Raft peer port (docs/cluster.md "Peer
 * transport"): it dispatches on :path to handlers of services, decodes requests straight from
 * the received DATA chunks (grpc.h2-framing.ts) and answers with headers, length-prefixed
 * messages and grpc-status trailers (gRPC's PROTOCOL-HTTP2.md). Messages are encoded and decoded
 * by @grpc/proto-loader's definitions, the same as grpc-js would use.
 *
 * What a request costs is kept small: a unary call is one object besides its stream (no
 * EventEmitter), its answer leaves as one buffer (headers, message, trailers), and response
 * headers and OK trailers are shared, encoded once.
 *
 * What a connection can make the server hold is bounded: the streams it may have open at once
 * (SETTINGS_MAX_CONCURRENT_STREAMS), and the request bytes its calls keep before a handler has
 * them (unfinished messages, a single request waiting for the client's half-close).
 */
import { EventEmitter } from 'node:events';
import * as http from 'node:http';
import * as net from 'node:net';
import * as tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import type { PackageDefinition } from '@grpc/proto-loader';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { MAX_REQUEST_MESSAGE_BYTES, MessageDecoder, SerializedMessage, encodeGrpcMessage, encodeMessage, parseGrpcTimeout } from './grpc.h2-framing.js';
import { CLIENT_PREFACE, H2_ERROR, H2ServerConnection, type H2Stream, type H2StreamListener, type RequestHeaders } from './h2/h2.connection.js';
import { encodeHeaders } from './h2/hpack.js';

/** A message as handlers see it: what the method's deserializer made (or takes to serialize). */
export type Msg = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A gRPC status to end a call with (etcd.convert.ts's toServiceError makes them). */
export interface CallStatus {
  code?: number;
  details?: string;
}

/** A unary call: its one request, answered once by respond() or fail(); later answers are ignored. */
export interface UnaryCall {
  readonly request: Msg;
  /** True once the client went away or the deadline passed (an answer is then dropped). */
  readonly cancelled: boolean;
  respond(msg: Msg): void;
  fail(status: CallStatus): void;
}

/** What streaming calls share: writing responses and ending with a status. */
export interface StreamingCall {
  /** True once the client went away, the deadline passed or the server stopped. */
  readonly cancelled: boolean;
  /**
   * Sends the response headers now rather than with the first response or the status (a
   * client-streaming caller such as grpc-js's keeps what it wrote until they arrive).
   */
  sendHeaders(): void;
  /** Stops reading requests (HTTP/2 flow control then holds the client back) until resume(). */
  pause(): void;
  resume(): void;
  /** Sends one response; false when the stream's buffer is full (wait for 'drain'). Ignored once ended. */
  write(msg: Msg): boolean;
  /** Bytes of responses written and not yet handed to the connection (HTTP/2 flow control holds them while the client does not read). */
  readonly bufferedBytes: number;
  /** Ends the call with status OK after the responses written. */
  end(): void;
  /** Ends the call with an error status. */
  fail(status: CallStatus): void;
  on(event: 'drain' | 'cancelled', listener: () => void): this;
  once(event: 'drain' | 'cancelled', listener: () => void): this;
  off(event: 'drain' | 'cancelled', listener: () => void): this;
}

/** A server-streaming call: one request, any number of responses. */
export interface ServerWritableCall extends StreamingCall {
  readonly request: Msg;
}

/** A bidirectional call: requests arrive as 'data', the client's half-close as 'end'. */
export interface DuplexCall extends StreamingCall {
  on(event: 'data', listener: (msg: Msg) => void): this;
  on(event: 'end' | 'drain' | 'cancelled', listener: () => void): this;
}

/** Resolves on the call's next 'drain' (its buffered responses were taken), or once it is cancelled. */
export function drained(call: StreamingCall): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      call.off('drain', done);
      call.off('cancelled', done);
      resolve();
    };
    call.once('drain', done);
    call.once('cancelled', done);
  });
}

export type UnaryHandler = (call: UnaryCall) => void;
export type ServerStreamHandler = (call: ServerWritableCall) => void;
export type DuplexHandler = (call: DuplexCall) => void;
/** One service's handlers by method name (as in the .proto). */
export type ServiceHandlers = Record<string, UnaryHandler | ServerStreamHandler | DuplexHandler>;

const enum Kind {
  Unary,
  ServerStream,
  Duplex,
}

interface Route {
  kind: Kind;
  handler: (call: never) => void;
  deserialize: (b: Buffer) => Msg;
  serialize: (m: Msg) => Buffer;
  maxMessageBytes: number;
}

/**
 * One method as @grpc/proto-loader (or grpc-js's ServiceDefinition) describes it: what routing
 * and the codec need.
 */
export interface GrpcMethodDefinition {
  path: string;
  requestStream: boolean;
  responseStream: boolean;
  requestDeserialize(b: Buffer): unknown;
  responseSerialize(m: never): Buffer;
}
/** A service's methods by name (as in the .proto). */
export type GrpcServiceDefinition = Record<string, GrpcMethodDefinition>;

/** Bounds of a {@link GrpcH2Server}, per connection and for all of them; each defaults to the constant of the same name. */
export interface GrpcServerLimits {
  /** See MAX_HELD_REQUEST_BYTES. */
  maxHeldRequestBytes?: number;
  /** See MAX_SERVER_HELD_REQUEST_BYTES. */
  maxServerHeldRequestBytes?: number;
  /** See MAX_CONCURRENT_STREAMS. */
  maxConcurrentStreams?: number;
  /** The largest request message (MAX_REQUEST_MESSAGE_BYTES of grpc.h2-framing.ts). */
  maxMessageBytes?: number;
}

/** Options of a {@link GrpcH2Server}: its limits, who may call, how it stops. */
export interface GrpcServerOptions extends GrpcServerLimits {
  /**
   * Decides once per connection, before its first call is dispatched, whether its calls are
   * served: undefined serves them, a status refuses every call of the connection with it (e.g.
   * PERMISSION_DENIED for a client certificate that is not one of the allowed names). `socket`
   * is a TLSSocket on a TLS port.
   */
  authorize?(socket: net.Socket): CallStatus | undefined;
  /** grpc-message of the UNAVAILABLE that open streaming calls end with on stop(). */
  stopDetails?: string;
  /** How long stop() lets calls finish before it destroys the connections (SHUTDOWN_GRACE_MS). */
  shutdownGraceMs?: number;
  /**
   * How long a new connection has for its start (HANDSHAKE_TIMEOUT_MS): the TLS handshake, then
   * (or in cleartext, from the connection) HTTP/2's preface and SETTINGS exchange. A connection
   * that stalls there is dropped.
   */
  handshakeTimeoutMs?: number;
}

/** Listening options of {@link GrpcH2Server.listen}. */
export interface GrpcListenOptions {
  host: string;
  port: number;
  /** TLS material; absent: cleartext HTTP/2 with prior knowledge (h2c). */
  tls?: { cert: Buffer; key: Buffer; /** When set, clients must present a certificate this CA signed. */ clientCa?: Buffer };
  /**
   * Also serves HTTP/1.x on the same port, with this handler (etcd's /health, /version and
   * /metrics beside its gRPC API): over TLS, a client that negotiates `http/1.1` or no
   * protocol at all (gRPC clients negotiate `h2`); in cleartext, a client whose first bytes
   * are not HTTP/2's connection preface. Without it only HTTP/2 is served.
   */
  http1?: http.RequestListener;
}

/** The start of HTTP/2's client connection preface ("PRI * HTTP/2.0..."), which no HTTP/1 request starts with. */
const H2_PREFACE_START = CLIENT_PREFACE.subarray(0, 3);

/** Request bytes calls keep that no handler has yet, and how many they may. */
interface HeldBudget {
  total: number;
  readonly limit: number;
}
/** One connection's budget of held request bytes, inside the server's. */
interface HeldBytes extends HeldBudget {
  readonly server: HeldBudget;
}
/** What the server keeps per connection: its held request bytes and its authorization. */
interface ConnectionState {
  held: HeldBytes;
  /** Undefined until decided; null when its calls are served, else the status refusing them. */
  refusal: CallStatus | null | undefined;
}

// No date header: gRPC clients have no use for it, and it costs every response.
const RESPONSE_HEADERS = encodeHeaders([
  [':status', '200'],
  ['content-type', 'application/grpc'],
]);
const OK_TRAILERS = encodeHeaders([['grpc-status', '0']]);
/**
 * HTTP/2 flow-control windows the server grants, per stream and per connection: larger than the
 * 64 KiB default, so hundreds of concurrent Puts on one connection, or one large message, flow
 * without waiting for WINDOW_UPDATEs. Requests are read as they arrive, so the windows bound no
 * buffering of ours: MAX_HELD_REQUEST_BYTES does.
 */
const STREAM_WINDOW_BYTES = 1 << 20;
const CONNECTION_WINDOW_BYTES = 8 << 20;
/**
 * How many request bytes one connection's calls may keep before their handlers have them:
 * unfinished messages, and the request of a unary or server-streaming call until the client
 * half-closes. Requests are read as they arrive (flow control does not hold them back), so
 * without it a client could leave a message of up to 2 MiB half-sent on every stream it opens.
 * The call whose bytes would cross it fails with RESOURCE_EXHAUSTED; the connection's other
 * calls go on. Clients interleave the DATA frames of concurrent calls, so N large requests
 * sent at once are all unfinished together: 64 MiB lets 32 messages of the largest size (42 of
 * etcd's 1.5 MiB request limit) be in flight on one connection (at 16 MiB, 30 of 40 concurrent
 * 1.5 MiB Puts on one grpc-js channel fail), while kube-apiserver's writes are KiBs; without
 * it, one connection could pin 2 GiB (MAX_CONCURRENT_STREAMS half-sent 2 MiB messages).
 */
const MAX_HELD_REQUEST_BYTES = 64 << 20;
/**
 * The same across all of the server's connections: without it, each new connection could hold
 * MAX_HELD_REQUEST_BYTES more. 512 MiB is eight connections at their bound, or 340 messages of
 * etcd's 1.5 MiB request limit half-sent at once; a call that would cross it fails with
 * RESOURCE_EXHAUSTED as above.
 */
const MAX_SERVER_HELD_REQUEST_BYTES = 512 << 20;
/**
 * SETTINGS_MAX_CONCURRENT_STREAMS, the streams a client may have open at once on one connection
 * (gRPC clients queue calls beyond it). etcd advertises no limit (grpc-go's default,
 * math.MaxUint32); 1000 stays above what its clients open: kube-apiserver's requests in flight
 * are capped at 600 by default (--max-requests-inflight 400 plus --max-mutating-requests-inflight
 * 200), and etcd's client multiplexes its watches onto few streams. It bounds what one
 * connection's streams cost the server. Each stream a client opens beyond it is refused with
 * RST_STREAM REFUSED_STREAM (h2.connection.ts).
 */
const MAX_CONCURRENT_STREAMS = 1000;
/** How long stop() lets calls finish before it destroys the connections. */
const SHUTDOWN_GRACE_MS = 2000;
/** See GrpcServerOptions.handshakeTimeoutMs. */
const HANDSHAKE_TIMEOUT_MS = 10_000;

function noop(): void {}

function statusFields(code: number, details: string): [string, string][] {
  return details
    ? [
        ['grpc-status', String(code)],
        ['grpc-message', encodeGrpcMessage(details)],
      ]
    : [['grpc-status', String(code)]];
}

/** The header block of a trailers-only answer: HTTP status, content-type and the gRPC status. */
function trailersOnly(httpStatus: number, code: number, details: string): Buffer {
  return encodeHeaders([[':status', String(httpStatus)], ['content-type', 'application/grpc'], ...statusFields(code, details)]);
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

const TRAILERS_ONLY_OK = trailersOnly(200, GrpcStatus.OK, '');

/** Answers a stream with a status only (trailers-only); what the client still sends is dropped. */
function refuse(stream: H2Stream, httpStatus: number, code: number, details: string): void {
  stream.respond(trailersOnly(httpStatus, code, details), true);
}

/** One call on one stream: framing in, status out, cancellation. */
abstract class ServerCall extends MessageDecoder implements H2StreamListener {
  cancelled = false;
  /** A status was sent or the stream closed: nothing more is written or read. Set by setDone() only. */
  protected done = false;
  /** This call's part of `held.total`: what heldBytes() was when last counted. */
  private heldShare = 0;
  private headersSent = false;
  timer: NodeJS.Timeout | undefined = undefined;

  constructor(
    protected readonly stream: H2Stream,
    protected readonly route: Route,
    private readonly held: HeldBytes,
  ) {
    super(route.maxMessageBytes);
  }

  /** The client half-closed its side. */
  abstract onEnd(): void;
  /** The call was cancelled (client gone, deadline, server stopping). */
  protected abstract onCancelled(): void;

  onData(chunk: Buffer): void {
    if (this.done) return;
    const err = this.push(chunk);
    if (err !== undefined) this.abort(err);
    // A handler ended the call while its messages were delivered: what push() kept is dropped.
    else if (this.done) this.dropHeld();
    else if (!this.countHeld()) {
      this.abort({
        code: GrpcStatus.RESOURCE_EXHAUSTED,
        details:
          this.held.total + this.heldBytes() - this.heldShare > this.held.limit
            ? `the connection holds too many bytes of unfinished requests (at most ${this.held.limit} across its calls)`
            : `the server holds too many bytes of unfinished requests (at most ${this.held.server.limit} across its connections)`,
      });
    }
  }

  /** Request bytes the call keeps that no handler has yet: those of an unfinished message. */
  protected heldBytes(): number {
    return this.partialBytes;
  }

  /** Drops the request bytes the call keeps (it is done). */
  protected dropHeld(): void {
    this.discard();
  }

  /**
   * Sets this call's part of its connection's (and the server's) held request bytes to what it
   * keeps now (nothing once done). Growing past either limit is refused: false, nothing counted.
   */
  protected countHeld(): boolean {
    const bytes = this.done ? 0 : this.heldBytes();
    const delta = bytes - this.heldShare;
    const held = this.held;
    if (delta > 0 && (held.total + delta > held.limit || held.server.total + delta > held.server.limit)) return false;
    held.total += delta;
    held.server.total += delta;
    this.heldShare = bytes;
    return true;
  }

  /** The call ends here (status sent or stream closed): its request bytes are dropped and no longer counted. */
  private setDone(): void {
    this.done = true;
    this.dropHeld();
    this.countHeld();
  }

  /** The stream closed: a call without a status is cancelled. */
  onClose(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.done) return;
    this.setDone();
    this.cancelled = true;
    this.onCancelled();
  }

  /** Ends the call with `status` on the server's initiative and tells the handler it is cancelled. */
  abort(status: CallStatus): void {
    if (this.done) return;
    this.fail(status);
    this.cancelled = true;
    this.onCancelled();
  }

  sendHeaders(): void {
    if (this.done || this.stream.closed) return;
    this.respondHeaders();
  }

  /** Sends the response headers unless they went already. */
  private respondHeaders(): void {
    if (this.headersSent) return;
    this.headersSent = true;
    this.stream.respond(RESPONSE_HEADERS, false);
  }

  /** Responses written after a write() that returned false have left (streaming calls follow it). */
  onDrain(): void {}

  /** Frames one response; undefined when it could not be serialized (the call then failed). */
  protected frame(msg: Msg): Buffer | undefined {
    if (msg instanceof SerializedMessage) return msg.frame();
    try {
      return encodeMessage(this.route.serialize(msg));
    } catch (e) {
      this.fail({ code: GrpcStatus.INTERNAL, details: `cannot serialize the response: ${message(e)}` });
      return undefined;
    }
  }

  write(msg: Msg): boolean {
    if (this.done || this.stream.closed) return true;
    const f = this.frame(msg);
    if (f === undefined) return true;
    this.respondHeaders();
    return this.stream.write(f);
  }

  end(): void {
    this.finishStatus(GrpcStatus.OK, '');
  }

  fail(status: CallStatus): void {
    this.finishStatus(status.code ?? GrpcStatus.UNKNOWN, status.details ?? '');
  }

  private finishStatus(code: number, details: string): void {
    if (this.done) return;
    // Before any response: trailers-only, the status in the one header block.
    if (!this.headersSent) this.finish(undefined, undefined, code === GrpcStatus.OK && !details ? TRAILERS_ONLY_OK : trailersOnly(200, code, details));
    else this.finish(code === GrpcStatus.OK && !details ? OK_TRAILERS : encodeHeaders(statusFields(code, details)), undefined);
  }

  /**
   * Sends `last` (if any) and the status, or only `alone` (a trailers-only answer); the first
   * status wins. Never throws: it runs in handlers' promise callbacks.
   */
  protected finish(trailers: Buffer | undefined, last: Buffer | undefined, alone?: Buffer): void {
    if (this.done) return;
    this.setDone();
    if (this.timer !== undefined) clearTimeout(this.timer);
    const stream = this.stream;
    if (stream.closed) return;
    if (alone !== undefined) {
      this.headersSent = true;
      stream.respond(alone, true);
    } else if (!this.headersSent && last !== undefined) {
      this.headersSent = true;
      stream.respondAll(RESPONSE_HEADERS, last, trailers!);
    } else {
      this.respondHeaders();
      stream.end(last, trailers!);
    }
  }
}

/** Unary and server-streaming calls: exactly one request, then the handler runs. */
abstract class SingleRequestCall extends ServerCall {
  request: Msg = undefined as unknown as Msg;
  private payload: Buffer | undefined = undefined;
  private count = 0;

  protected onMessage(payload: Buffer): void {
    if (++this.count === 1) this.payload = payload;
  }

  /** The request waiting for the client's half-close is held too. */
  protected override heldBytes(): number {
    return super.heldBytes() + (this.payload?.length ?? 0);
  }

  protected override dropHeld(): void {
    super.dropHeld();
    this.payload = undefined;
  }

  override onData(chunk: Buffer): void {
    super.onData(chunk);
    if (this.count > 1) this.abort({ code: GrpcStatus.UNIMPLEMENTED, details: 'more than one request message for a method that takes one' });
  }

  onEnd(): void {
    if (this.done || this.stream.closed) return;
    if (this.count !== 1 || this.partial) {
      this.abort({
        code: GrpcStatus.UNIMPLEMENTED,
        details: this.partial ? 'the request ended inside a message' : 'no request message for a method that takes one',
      });
      return;
    }
    try {
      this.request = this.route.deserialize(this.payload!);
    } catch (e) {
      this.abort({ code: GrpcStatus.INTERNAL, details: `cannot parse the request: ${message(e)}` });
      return;
    }
    this.payload = undefined;
    this.countHeld();
    try {
      (this.route.handler as (c: this) => void)(this);
    } catch (e) {
      this.abort({ code: GrpcStatus.UNKNOWN, details: message(e) });
    }
  }
}

class UnaryServerCall extends SingleRequestCall implements UnaryCall {
  respond(msg: Msg): void {
    if (this.done) return;
    const f = this.frame(msg);
    if (f !== undefined) this.finish(OK_TRAILERS, f);
  }

  protected onCancelled(): void {}
}

/** Server-streaming and bidirectional calls: events for the handler, tracked for shutdown. */
class StreamServerCall extends SingleRequestCall implements ServerWritableCall, DuplexCall {
  private readonly events = new EventEmitter();

  constructor(
    stream: H2Stream,
    route: Route,
    held: HeldBytes,
    private readonly active: Set<StreamServerCall>,
  ) {
    super(stream, route, held);
    active.add(this);
  }

  override onDrain(): void {
    this.emit('drain');
  }

  get bufferedBytes(): number {
    return this.done ? 0 : this.stream.writableLength;
  }

  pause(): void {
    if (!this.done) this.stream.pause();
  }

  resume(): void {
    if (!this.done) this.stream.resume();
  }

  start(): void {
    try {
      (this.route.handler as (c: this) => void)(this);
    } catch (e) {
      this.abort({ code: GrpcStatus.UNKNOWN, details: message(e) });
    }
  }

  protected override onMessage(payload: Buffer): void {
    if (this.route.kind !== Kind.Duplex) return super.onMessage(payload);
    if (this.done) return;
    let msg: Msg;
    try {
      msg = this.route.deserialize(payload);
    } catch (e) {
      this.abort({ code: GrpcStatus.INTERNAL, details: `cannot parse the request: ${message(e)}` });
      return;
    }
    this.emit('data', msg);
  }

  override onEnd(): void {
    if (this.route.kind !== Kind.Duplex) return super.onEnd();
    if (this.done || this.stream.closed) return;
    if (this.partial) this.abort({ code: GrpcStatus.INTERNAL, details: 'the request ended inside a message' });
    else this.emit('end');
  }

  override onClose(): void {
    this.active.delete(this);
    super.onClose();
  }

  protected override finish(trailers: Buffer | undefined, last: Buffer | undefined, alone?: Buffer): void {
    this.active.delete(this);
    super.finish(trailers, last, alone);
  }

  protected onCancelled(): void {
    this.emit('cancelled');
  }

  /** Emits to the handler's listeners; a listener that throws ends the call instead of the process. */
  emit(event: string, arg?: Msg): void {
    try {
      this.events.emit(event, arg);
    } catch (e) {
      this.abort({ code: GrpcStatus.UNKNOWN, details: message(e) });
    }
  }

  on(event: string, listener: (msg: Msg) => void): this {
    this.events.on(event, listener);
    return this;
  }

  once(event: string, listener: (msg: Msg) => void): this {
    this.events.once(event, listener);
    return this;
  }

  off(event: string, listener: (msg: Msg) => void): this {
    this.events.off(event, listener);
    return this;
  }
}

function onDeadline(call: ServerCall): void {
  call.abort({ code: GrpcStatus.DEADLINE_EXCEEDED, details: 'Deadline exceeded' });
}

/** The longest timer Node keeps (a larger grpc-timeout is no deadline in practice). */
const MAX_TIMER_MS = 2 ** 31 - 1;

function isGrpcContentType(ct: string | undefined): boolean {
  if (ct === undefined || !ct.startsWith('application/grpc')) return false;
  const rest = ct.length === 16 ? '' : ct[16];
  return rest === '' || rest === '+' || rest === ';';
}

/** A gRPC server on our own HTTP/2 connections, serving handlers of services from one proto package definition. */
export class GrpcH2Server {
  private readonly routes = new Map<string, Route>();
  private server: net.Server | undefined;
  /** The HTTP/1.x server beside gRPC (GrpcListenOptions.http1), and connections not yet routed. */
  private http1: http.Server | undefined;
  private readonly unrouted = new Set<net.Socket>();
  /** Every accepted connection, to destroy what is left once the stop's grace period is over. */
  private readonly sockets = new Set<net.Socket>();
  private readonly connections = new Set<H2ServerConnection>();
  private readonly active = new Set<StreamServerCall>();
  private stopping = false;
  private readonly maxHeldRequestBytes: number;
  /** What all connections' calls hold (MAX_SERVER_HELD_REQUEST_BYTES). */
  private readonly serverHeld: HeldBudget;
  private readonly maxConcurrentStreams: number;
  private readonly maxMessageBytes: number;
  private readonly handshakeTimeoutMs: number;

  /**
   * `services` by full service name ('etcdserverpb.KV') in `def`; a method without a handler
   * answers UNIMPLEMENTED.
   */
  constructor(
    def: PackageDefinition,
    services: Record<string, ServiceHandlers>,
    private readonly options: GrpcServerOptions = {},
  ) {
    this.maxHeldRequestBytes = options.maxHeldRequestBytes ?? MAX_HELD_REQUEST_BYTES;
    this.serverHeld = { total: 0, limit: options.maxServerHeldRequestBytes ?? MAX_SERVER_HELD_REQUEST_BYTES };
    this.maxConcurrentStreams = options.maxConcurrentStreams ?? MAX_CONCURRENT_STREAMS;
    this.maxMessageBytes = options.maxMessageBytes ?? MAX_REQUEST_MESSAGE_BYTES;
    this.handshakeTimeoutMs = options.handshakeTimeoutMs ?? HANDSHAKE_TIMEOUT_MS;
    for (const [name, handlers] of Object.entries(services)) {
      const svc = def[name];
      if (svc === undefined || 'format' in svc) throw new Error(`no service ${name} in the package definition`);
      this.addService(svc as unknown as GrpcServiceDefinition, handlers, name);
    }
  }

  /**
   * Serves `handlers` of one more service (before or after listen()); `name` only names the
   * service in errors.
   */
  addService(service: GrpcServiceDefinition, handlers: ServiceHandlers, name = 'the service'): void {
    for (const [method, handler] of Object.entries(handlers)) {
      const m = service[method];
      if (m === undefined) throw new Error(`no method ${name}.${method}`);
      this.routes.set(m.path, {
        kind: m.requestStream ? Kind.Duplex : m.responseStream ? Kind.ServerStream : Kind.Unary,
        handler,
        deserialize: m.requestDeserialize as (b: Buffer) => Msg,
        serialize: m.responseSerialize as (m: Msg) => Buffer,
        maxMessageBytes: this.maxMessageBytes,
      });
    }
  }

  /** Binds and serves; resolves with the bound port (the given one, or the one chosen for 0). */
  async listen(opts: GrpcListenOptions): Promise<number> {
    const mutual = opts.tls?.clientCa ? { ca: opts.tls.clientCa, requestCert: true, rejectUnauthorized: true } : {};
    const h1 = opts.http1 ? http.createServer(opts.http1) : undefined;
    this.http1 = h1;
    let server: net.Server;
    if (opts.tls) {
      const alpn = h1 ? ['h2', 'http/1.1'] : ['h2'];
      const tlsOptions = { cert: opts.tls.cert, key: opts.tls.key, ALPNProtocols: alpn, handshakeTimeout: this.handshakeTimeoutMs, ...mutual };
      server = tls.createServer(tlsOptions, (socket) => {
        if (socket.alpnProtocol === 'h2') this.serve(socket, undefined);
        else if (h1) h1.emit('connection', socket);
        else socket.destroy();
      });
      // With a listener here, Node leaves a failed handshake's socket open (a timed-out one too).
      server.on('tlsClientError', (_e: Error, socket: tls.TLSSocket) => socket.destroy());
    } else server = net.createServer((socket) => (h1 ? this.route(socket, h1) : this.serve(socket, undefined)));
    server.on('connection', (socket: net.Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port, opts.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', noop);
    this.server = server;
    return (server.address() as AddressInfo).port;
  }

  /**
   * Routes a cleartext connection by its first bytes: HTTP/2's preface goes to gRPC (with the
   * bytes already read), anything else to `h1`.
   */
  private route(socket: net.Socket, h1: http.Server): void {
    this.unrouted.add(socket);
    let head: Buffer = Buffer.alloc(0);
    // A client that connects and sends nothing is not kept.
    const timer = setTimeout(() => socket.destroy(), this.handshakeTimeoutMs);
    const done = (): void => {
      clearTimeout(timer);
      this.unrouted.delete(socket);
      socket.off('data', onData);
      socket.off('close', done);
    };
    const onData = (chunk: Buffer): void => {
      head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
      const n = Math.min(head.length, H2_PREFACE_START.length);
      const h2c = head.subarray(0, n).equals(H2_PREFACE_START.subarray(0, n));
      if (h2c && n < H2_PREFACE_START.length) return;
      done();
      if (h2c) this.serve(socket, head);
      else {
        socket.pause();
        socket.unshift(head);
        h1.emit('connection', socket);
        socket.resume();
      }
    };
    socket.on('error', noop);
    socket.on('data', onData);
    socket.on('close', done);
    if (this.stopping) socket.destroy();
  }

  /** Serves HTTP/2 on `socket`, whose first bytes (`head`) may have been read already. */
  private serve(socket: net.Socket, head: Buffer | undefined): void {
    if (this.stopping) {
      socket.destroy();
      return;
    }
    const state: ConnectionState = { held: { total: 0, limit: this.maxHeldRequestBytes, server: this.serverHeld }, refusal: undefined };
    const conn = new H2ServerConnection(
      socket,
      {
        maxConcurrentStreams: this.maxConcurrentStreams,
        streamWindowBytes: STREAM_WINDOW_BYTES,
        connectionWindowBytes: CONNECTION_WINDOW_BYTES,
        handshakeTimeoutMs: this.handshakeTimeoutMs,
        onRequest: (stream, headers) => this.onStream(stream, headers, state, socket),
        onClose: () => this.connections.delete(conn),
      },
      head,
    );
    this.connections.add(conn);
  }

  private onStream(stream: H2Stream, headers: RequestHeaders, state: ConnectionState, socket: net.Socket): void {
    try {
      if (this.stopping) return refuse(stream, 200, GrpcStatus.UNAVAILABLE, 'the server is stopping');
      if (this.options.authorize !== undefined) {
        if (state.refusal === undefined) state.refusal = this.options.authorize(socket) ?? null;
        const refusal = state.refusal;
        if (refusal !== null) return refuse(stream, 200, refusal.code ?? GrpcStatus.PERMISSION_DENIED, refusal.details ?? '');
      }
      if (headers[':method'] !== 'POST') return refuse(stream, 405, GrpcStatus.INTERNAL, `method ${headers[':method']} is not POST`);
      const ct = headers['content-type'];
      if (!isGrpcContentType(ct)) return refuse(stream, 415, GrpcStatus.INTERNAL, `invalid gRPC request content-type ${JSON.stringify(ct ?? '')}`);
      const path = headers[':path'] ?? '';
      const route = this.routes.get(path);
      if (route === undefined) return refuse(stream, 200, GrpcStatus.UNIMPLEMENTED, `unknown method ${path}`);
      const enc = headers['grpc-encoding'];
      if (enc !== undefined && enc !== 'identity') return refuse(stream, 200, GrpcStatus.UNIMPLEMENTED, `grpc-encoding ${enc} is not supported`);
      const timeout = parseGrpcTimeout(headers['grpc-timeout']);
      if (timeout !== undefined && Number.isNaN(timeout)) return refuse(stream, 200, GrpcStatus.INTERNAL, 'malformed grpc-timeout');
      const call = route.kind === Kind.Unary ? new UnaryServerCall(stream, route, state.held) : new StreamServerCall(stream, route, state.held, this.active);
      stream.listener = call;
      if (timeout !== undefined && timeout < MAX_TIMER_MS) call.timer = setTimeout(onDeadline, Math.ceil(timeout), call);
      if (route.kind === Kind.Duplex) (call as StreamServerCall).start();
    } catch {
      // A bug: the stream ends, the process does not.
      stream.reset(H2_ERROR.INTERNAL_ERROR);
    }
  }

  /**
   * Stops serving: no new connection or call; open streaming calls end with UNAVAILABLE (clients
   * reconnect to another member), connections close once their unary calls are answered, and
   * whatever is left after SHUTDOWN_GRACE_MS is destroyed.
   */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server || this.stopping) return;
    this.stopping = true;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    const details = this.options.stopDetails ?? 'server stopped';
    for (const call of [...this.active]) call.abort({ code: GrpcStatus.UNAVAILABLE, details });
    for (const c of this.connections) c.close();
    for (const socket of this.unrouted) socket.destroy();
    this.http1?.closeIdleConnections();
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.options.shutdownGraceMs ?? SHUTDOWN_GRACE_MS);
    });
    await Promise.race([closed, grace]);
    clearTimeout(timer);
    for (const c of this.connections) c.destroy();
    this.http1?.closeAllConnections();
    // A connection whose peer never closed its side (a half-closed HTTP/1.x connection, a
    // connection closed gracefully) would hold close() forever.
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }
}
