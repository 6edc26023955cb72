/**
 * HTTP/2 connections (RFC 9113) for gRPC: the server side under GrpcH2Server, the client side
 * under the Raft peer sender. Frames in and out of a socket (TCP or TLS), HPACK (hpack.ts), flow
 * control both ways, SETTINGS, PING, RST_STREAM and GOAWAY. It is what gRPC needs and no more:
 * no server push, no priorities (PRIORITY frames are read and ignored), header blocks handed
 * over once complete.
 *
 * Why not node:http2: nghttp2 refuses requests whose `:authority` is not a bare host[:port]
 * (etcdctl 3.4 sends the endpoint's whole URL there on cleartext connections), and node:http2
 * builds a stream object with readable and writable sides for every request, which was a third
 * of the leader's CPU per Put. Here a request costs one small object, responses of one turn of
 * the event loop leave in one write, and a response's headers, message and trailers travel
 * together.
 */
import type { Socket } from 'node:net';
import { HpackDecoder, HpackError, encodeHeaders } from './hpack.js';

/** The client connection preface every HTTP/2 connection starts with. */
export const CLIENT_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

const FRAME_HEADER_BYTES = 9;

const enum FrameType {
  Data = 0,
  Headers = 1,
  Priority = 2,
  RstStream = 3,
  Settings = 4,
  PushPromise = 5,
  Ping = 6,
  GoAway = 7,
  WindowUpdate = 8,
  Continuation = 9,
}

const FLAG_END_STREAM = 0x1;
const FLAG_ACK = 0x1;
const FLAG_END_HEADERS = 0x4;
const FLAG_PADDED = 0x8;
const FLAG_PRIORITY = 0x20;

/** HTTP/2 error codes (RFC 9113 section 7). */
export const H2_ERROR = {
  NO_ERROR: 0,
  PROTOCOL_ERROR: 1,
  INTERNAL_ERROR: 2,
  FLOW_CONTROL_ERROR: 3,
  SETTINGS_TIMEOUT: 4,
  STREAM_CLOSED: 5,
  FRAME_SIZE_ERROR: 6,
  REFUSED_STREAM: 7,
  CANCEL: 8,
  COMPRESSION_ERROR: 9,
  ENHANCE_YOUR_CALM: 11,
} as const;

const SETTINGS_ENABLE_PUSH = 2;
const SETTINGS_MAX_CONCURRENT_STREAMS = 3;
const SETTINGS_INITIAL_WINDOW_SIZE = 4;
const SETTINGS_MAX_FRAME_SIZE = 5;
const SETTINGS_MAX_HEADER_LIST_SIZE = 6;

/** HTTP/2's defaults until the peer's SETTINGS say otherwise. */
const DEFAULT_WINDOW_BYTES = 65_535;
const DEFAULT_MAX_FRAME_BYTES = 16_384;
const MAX_WINDOW_BYTES = 2 ** 31 - 1;
/** The largest frame payload this side accepts (the default; it is not raised). */
const MAX_RECEIVED_FRAME_BYTES = DEFAULT_MAX_FRAME_BYTES;
/**
 * The largest header list a request may carry (SETTINGS_MAX_HEADER_LIST_SIZE, as node:http2's
 * default); the header block arriving for one request (HEADERS and CONTINUATIONs) may be at
 * most this much too, or the connection ends (a CONTINUATION flood).
 */
const MAX_HEADER_LIST_BYTES = 65_536;
/**
 * How many bytes of frames this side may have waiting in the socket's buffer, unread by a peer
 * that keeps asking for answers (PINGs, SETTINGS, resets of its own streams), before the
 * connection is dropped. Responses' DATA are bounded by the peer's flow-control windows instead.
 */
const MAX_QUEUED_CONTROL_BYTES = 16 << 20;
/** A stream's write() reports a full buffer over this many bytes held back by flow control. */
const STREAM_HIGH_WATER_BYTES = 16_384;
/**
 * How long a new connection has to finish its start: the client's preface, the peer's SETTINGS,
 * and the peer's acknowledgement of this side's SETTINGS. A peer that connects and stalls is
 * dropped instead of holding a socket forever.
 */
const HANDSHAKE_TIMEOUT_MS = 10_000;
/**
 * Streams a client may make the server abandon before answering them (resets of its own
 * requests, requests refused over the concurrency limit or as malformed, streams reset for the
 * client's errors on them): a burst of this many, then ABANDONED_STREAMS_PER_MS. A client over
 * it (the "rapid reset" attack, which makes a server start work it never finishes) loses the
 * connection with ENHANCE_YOUR_CALM.
 */
const ABANDONED_STREAMS_BURST = 1000;
/** 100 a second. */
const ABANDONED_STREAMS_PER_MS = 0.1;
/**
 * The most frames one header block may span (HEADERS and its CONTINUATIONs): a 64 KiB block in
 * frames of 512 bytes. Empty CONTINUATIONs would otherwise never reach the block's byte limit.
 */
const MAX_HEADER_BLOCK_FRAMES = 128;

/** Where a request's stream and its call talk to each other. */
export interface H2StreamListener {
  /** A DATA chunk (a view of the received bytes). */
  onData(chunk: Buffer): void;
  /** On a client's stream: the response's headers, then its trailers (`trailers` true). */
  onHeaders?(headers: RequestHeaders, trailers: boolean): void;
  /** The client half-closed its side (END_STREAM): no more data comes. */
  onEnd(): void;
  /** The stream is gone: both sides ended, either side reset it, or the connection closed. */
  onClose(): void;
  /** The data held back by flow control after a write() that returned false went out. */
  onDrain(): void;
}

/**
 * The headers of a request or response: each name's first value, names lower case as on the
 * wire, in an object without a prototype (any name a peer sends is a plain key).
 */
export type RequestHeaders = Record<string, string>;

/** The receive windows a connection grants its peer. */
export interface H2Windows {
  /** SETTINGS_INITIAL_WINDOW_SIZE: what the peer may send on one stream before it is read. */
  streamWindowBytes: number;
  /** The connection's receive window (a WINDOW_UPDATE on stream 0 raises it from 65,535). */
  connectionWindowBytes: number;
}

/** Settings of a server connection. */
export interface H2ConnectionOptions extends H2Windows {
  /** SETTINGS_MAX_CONCURRENT_STREAMS: more open streams are refused (RST_STREAM REFUSED_STREAM). */
  maxConcurrentStreams: number;
  /**
   * The client's preface and the SETTINGS exchange must be done within this (HANDSHAKE_TIMEOUT_MS
   * by default). A client connection has no such timer: its user's keepalive PINGs find a
   * server that went silent.
   */
  handshakeTimeoutMs?: number;
  /** A request whose headers are complete; the handler sets stream.listener to follow it. */
  onRequest(stream: H2Stream, headers: RequestHeaders): void;
  /** The connection ended (socket closed); every stream was closed before. */
  onClose?(): void;
}

/** Settings of a client connection. */
export interface H2ClientOptions extends H2Windows {
  /** The connection ended (socket closed); every stream was closed before. */
  onClose?(): void;
  /** The server sent GOAWAY: streams it did not take are closed, no new one should be opened. */
  onGoAway?(): void;
}

/** One stream, on either side. */
export class H2Stream {
  listener: H2StreamListener | undefined = undefined;
  /** The peer sent END_STREAM. */
  remoteEnded = false;
  /** This side sent (or queued) END_STREAM: nothing more may be written. */
  localEnded = false;
  /** Gone: reset, both sides ended, or the connection closed. */
  closed = false;
  /** What this side may still send on the stream (the peer's window). */
  sendWindow: number;
  /** Bytes of DATA read and not yet returned to the peer by a WINDOW_UPDATE. */
  unacked = 0;
  /** DATA held back by flow control, oldest first, and their bytes. */
  pending: Buffer[] = [];
  pendingBytes = 0;
  /** END_STREAM is to follow `pending`: with the trailers' header block, or (undefined) on an empty DATA frame. */
  endQueued = false;
  trailers: Buffer | undefined = undefined;
  /** A client's stream: the response's headers came (a later header block is its trailers). */
  gotHeaders = false;
  /** A write() returned false: onDrain is due once `pending` empties. */
  needDrain = false;
  /** While paused, received DATA (and the end) wait here instead of reaching the listener. */
  paused = false;
  held: Buffer[] | undefined = undefined;
  heldEnd = false;

  constructor(
    readonly id: number,
    readonly connection: H2Connection,
    sendWindow: number,
  ) {
    this.sendWindow = sendWindow;
  }

  /** Bytes written and not yet handed to the socket (flow control holds them). */
  get writableLength(): number {
    return this.pendingBytes;
  }

  /** Sends the response's header block; with `endStream`, the response ends there (trailers-only). */
  respond(block: Buffer, endStream: boolean): void {
    this.connection.sendHeaders(this, block, endStream);
  }

  /** Sends DATA; false when more than a little is held back by flow control (onDrain follows). */
  write(data: Buffer): boolean {
    return this.connection.sendData(this, data);
  }

  /**
   * Sends a whole response: headers, one message and trailers, in one write when the windows
   * allow (a unary call's answer).
   */
  respondAll(headers: Buffer, data: Buffer, trailers: Buffer): void {
    this.connection.respondAll(this, headers, data, trailers);
  }

  /** Sends `last` (if any), then END_STREAM: with the trailers' block, or (a client) on an empty DATA frame. */
  end(last: Buffer | undefined, trailers: Buffer | undefined): void {
    this.connection.endStream(this, last, trailers);
  }

  /** Resets the stream (RST_STREAM with `code`); the listener's onClose follows. */
  reset(code: number = H2_ERROR.CANCEL): void {
    this.connection.resetStream(this, code, true);
  }

  /** Stops handing received DATA to the listener (and granting the peer window) until resume(). */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.connection.releaseHeld(this);
  }
}

/** A connection error: GOAWAY with `code`, then the socket ends. */
class ConnectionError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** Writes a frame header into `b` at `at`; returns where the payload goes. */
function putFrameHeader(b: Buffer, at: number, length: number, type: number, flags: number, streamId: number): number {
  b[at] = (length >>> 16) & 0xff;
  b[at + 1] = (length >>> 8) & 0xff;
  b[at + 2] = length & 0xff;
  b[at + 3] = type;
  b[at + 4] = flags;
  b.writeUInt32BE(streamId, at + 5);
  return at + FRAME_HEADER_BYTES;
}

function frameHeader(length: number, type: number, flags: number, streamId: number): Buffer {
  const b = Buffer.allocUnsafe(FRAME_HEADER_BYTES);
  putFrameHeader(b, 0, length, type, flags, streamId);
  return b;
}

function frame(type: number, flags: number, streamId: number, payload: Buffer): Buffer {
  const b = Buffer.allocUnsafe(FRAME_HEADER_BYTES + payload.length);
  payload.copy(b, putFrameHeader(b, 0, payload.length, type, flags, streamId));
  return b;
}

function u32(n: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(n >>> 0, 0);
  return b;
}

const SETTINGS_ACK = frameHeader(0, FrameType.Settings, FLAG_ACK, 0);

/** Pseudo-headers a request may carry (RFC 9113 8.3.1). */
const REQUEST_PSEUDO = new Set([':method', ':scheme', ':authority', ':path', ':protocol']);

/** What both sides of an HTTP/2 connection do: frames, flow control, settings, PING, resets, GOAWAY. */
export abstract class H2Connection {
  protected readonly streams = new Map<number, H2Stream>();
  /** Streams with DATA or trailers held back by flow control, in the order they were held. */
  protected readonly blocked = new Set<H2Stream>();
  protected readonly decoder = new HpackDecoder();
  /** Received bytes not yet cut into frames, and whether the preface was read. */
  protected input: Buffer | undefined = undefined;
  protected prefaceRead = false;
  /** The header block being gathered (HEADERS then CONTINUATIONs) and its stream. */
  protected blockParts: Buffer[] | undefined = undefined;
  protected blockBytes = 0;
  protected blockStream = 0;
  protected blockEndStream = false;
  /** The highest stream id opened: by the client on a server, by this side on a client. */
  protected lastStreamId = 0;
  /** PINGs sent and not yet acknowledged: their callbacks, oldest first. */
  protected pings: (() => void)[] = [];
  /** The peer's settings that matter to this side. */
  protected peerInitialWindow = DEFAULT_WINDOW_BYTES;
  protected peerMaxFrame = DEFAULT_MAX_FRAME_BYTES;
  /** What this side may still send on the connection, and what it read and has not granted back. */
  protected sendWindow = DEFAULT_WINDOW_BYTES;
  protected recvUnacked = 0;
  /** Output of this turn of the event loop, written as one batch. */
  protected corked = false;
  protected goingAway = false;
  protected ended = false;
  /** The connection's start: the peer's SETTINGS came, and acknowledged ours; a server's timer ends it otherwise. */
  protected peerSettingsSeen = false;
  protected settingsAcked = false;
  protected handshakeTimer: NodeJS.Timeout | undefined = undefined;
  /** Streams the peer may still make this side abandon now (a token bucket), and when it was filled. */
  protected abandonTokens = ABANDONED_STREAMS_BURST;
  protected abandonFilledAt = 0;

  /** Pseudo-headers the peer's header blocks may carry. */
  protected abstract readonly pseudoHeaders: ReadonlySet<string>;

  /**
   * Starts the connection on `socket`: the client's preface (`isServer` false), this side's
   * SETTINGS (`settings`, and the window of `windows`) and the connection's window.
   */
  constructor(
    readonly socket: Socket,
    protected readonly windows: H2Windows,
    settings: Buffer,
    protected readonly isServer: boolean,
  ) {
    socket.setNoDelay?.(true);
    if (!isServer) {
      this.prefaceRead = true;
      this.writeRaw(CLIENT_PREFACE);
    }
    this.writeRaw(
      frame(
        FrameType.Settings,
        0,
        0,
        Buffer.concat([
          settings,
          setting(SETTINGS_INITIAL_WINDOW_SIZE, windows.streamWindowBytes),
          setting(SETTINGS_MAX_HEADER_LIST_SIZE, MAX_HEADER_LIST_BYTES),
        ]),
      ),
    );
    if (windows.connectionWindowBytes > DEFAULT_WINDOW_BYTES) {
      this.writeRaw(frame(FrameType.WindowUpdate, 0, 0, u32(windows.connectionWindowBytes - DEFAULT_WINDOW_BYTES)));
    }
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', () => socket.destroy());
    socket.on('close', () => this.onSocketClose());
  }

  /** The connection ended: every stream was closed. */
  protected abstract onClosed(): void;
  /** A complete header block of `streamId`, decoded (`fits`: within the header list limit). */
  protected abstract onHeaders(streamId: number, headers: RequestHeaders, fits: boolean, malformed: boolean, endStream: boolean): void;

  /** Sends a PING; `acked` is called when its ACK comes. */
  ping(acked: () => void): void {
    this.pings.push(acked);
    this.writeRaw(frame(FrameType.Ping, 0, 0, Buffer.alloc(8)));
  }

  /** Open streams. */
  get streamCount(): number {
    return this.streams.size;
  }

  /**
   * Ends the connection gracefully: GOAWAY NO_ERROR naming the last stream opened, no new
   * streams served, and the socket ends once the open ones are done.
   */
  close(): void {
    if (this.goingAway || this.ended) return;
    this.goingAway = true;
    this.writeRaw(this.goAwayFrame(H2_ERROR.NO_ERROR, ''));
    if (this.streams.size === 0) this.endSocket();
  }

  /** Drops the connection now: every open stream is closed. */
  destroy(): void {
    this.socket.destroy();
  }

  /** Whether the socket ended (or a GOAWAY went or came): no stream should be opened. */
  get closing(): boolean {
    return this.ended || this.goingAway;
  }

  // ---------------------------------------------------------------- input

  /** Reads bytes from the peer (the socket's, or ones read before the connection took it). */
  receive(chunk: Buffer): void {
    if (this.ended) return;
    let buf = chunk;
    if (this.input !== undefined) {
      buf = Buffer.concat([this.input, chunk]);
      this.input = undefined;
    }
    try {
      let off = 0;
      if (!this.prefaceRead) {
        const n = Math.min(buf.length, CLIENT_PREFACE.length);
        if (!buf.subarray(0, n).equals(CLIENT_PREFACE.subarray(0, n))) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'invalid connection preface');
        if (n < CLIENT_PREFACE.length) {
          this.input = buf;
          return;
        }
        this.prefaceRead = true;
        off = CLIENT_PREFACE.length;
      }
      const end = buf.length;
      while (end - off >= FRAME_HEADER_BYTES && !this.ended) {
        const length = (buf[off]! << 16) | (buf[off + 1]! << 8) | buf[off + 2]!;
        if (length > MAX_RECEIVED_FRAME_BYTES) throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, `frame of ${length} bytes`);
        const next = off + FRAME_HEADER_BYTES + length;
        if (next > end) break;
        const type = buf[off + 3]!;
        const flags = buf[off + 4]!;
        const streamId = buf.readUInt32BE(off + 5) & 0x7fffffff;
        this.onFrame(type, flags, streamId, buf.subarray(off + FRAME_HEADER_BYTES, next));
        off = next;
      }
      if (off < end && !this.ended) this.input = buf.subarray(off);
    } catch (e) {
      if (e instanceof ConnectionError) this.fail(e.code, e.message);
      else this.fail(H2_ERROR.INTERNAL_ERROR, 'internal error');
    }
  }

  protected onFrame(type: number, flags: number, streamId: number, payload: Buffer): void {
    if (this.blockParts !== undefined && type !== FrameType.Continuation) {
      throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'a header block was interrupted');
    }
    // Each side's preface ends with a SETTINGS frame (RFC 9113 3.4).
    if (!this.peerSettingsSeen && (type !== FrameType.Settings || (flags & FLAG_ACK) !== 0)) {
      throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'the first frame was not SETTINGS');
    }
    switch (type) {
      case FrameType.Data:
        return this.onDataFrame(flags, streamId, payload);
      case FrameType.Headers:
        return this.onHeadersFrame(flags, streamId, payload);
      case FrameType.Priority:
        if (streamId === 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'PRIORITY on stream 0');
        if (payload.length !== 5) {
          this.abandoned();
          this.resetId(streamId, H2_ERROR.FRAME_SIZE_ERROR);
        }
        return;
      case FrameType.RstStream: {
        if (streamId === 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'RST_STREAM on stream 0');
        if (payload.length !== 4) throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, 'RST_STREAM of a wrong size');
        if (streamId > this.lastStreamId) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'RST_STREAM on an idle stream');
        const s = this.streams.get(streamId);
        if (s === undefined) return;
        // A client abandoning a request it has not seen answered (a response ends the stream here).
        this.abandoned();
        this.closeStream(s);
        return;
      }
      case FrameType.Settings:
        return this.onSettings(flags, streamId, payload);
      case FrameType.PushPromise:
        throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'PUSH_PROMISE from a client');
      case FrameType.Ping:
        if (streamId !== 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'PING on a stream');
        if (payload.length !== 8) throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, 'PING of a wrong size');
        if ((flags & FLAG_ACK) === 0) this.writeControl(frame(FrameType.Ping, FLAG_ACK, 0, payload));
        else this.pings.shift()?.();
        return;
      case FrameType.GoAway:
        if (streamId !== 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'GOAWAY on a stream');
        if (payload.length < 8) throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, 'GOAWAY of a wrong size');
        return this.onGoAway(payload.readUInt32BE(0) & 0x7fffffff);
      case FrameType.WindowUpdate:
        return this.onWindowUpdate(streamId, payload);
      case FrameType.Continuation:
        return this.onContinuation(flags, streamId, payload);
      default:
        // Unknown frame types are ignored (RFC 9113 4.1).
        return;
    }
  }

  /** The peer sent GOAWAY: it takes no stream above `lastId`; the open ones finish, then the socket ends. */
  protected onGoAway(lastId: number): void {
    void lastId;
    this.goingAway = true;
    if (this.streams.size === 0) this.endSocket();
  }

  protected onSettings(flags: number, streamId: number, payload: Buffer): void {
    if (streamId !== 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'SETTINGS on a stream');
    if ((flags & FLAG_ACK) !== 0) {
      if (payload.length !== 0) throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, 'SETTINGS ACK with a payload');
      if (!this.settingsAcked) {
        this.settingsAcked = true;
        this.handshakeDone();
      }
      return;
    }
    if (payload.length % 6 !== 0) throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, 'SETTINGS of a wrong size');
    if (!this.peerSettingsSeen) {
      this.peerSettingsSeen = true;
      this.handshakeDone();
    }
    for (let i = 0; i < payload.length; i += 6) {
      const id = payload.readUInt16BE(i);
      const value = payload.readUInt32BE(i + 2);
      if (id === SETTINGS_INITIAL_WINDOW_SIZE) {
        if (value > MAX_WINDOW_BYTES) throw new ConnectionError(H2_ERROR.FLOW_CONTROL_ERROR, 'SETTINGS_INITIAL_WINDOW_SIZE over 2^31-1');
        const delta = value - this.peerInitialWindow;
        this.peerInitialWindow = value;
        for (const s of this.streams.values()) {
          s.sendWindow += delta;
          if (s.sendWindow > MAX_WINDOW_BYTES) throw new ConnectionError(H2_ERROR.FLOW_CONTROL_ERROR, 'a stream window over 2^31-1');
        }
      } else if (id === SETTINGS_MAX_FRAME_SIZE) {
        if (value < DEFAULT_MAX_FRAME_BYTES || value > 16_777_215) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'SETTINGS_MAX_FRAME_SIZE out of range');
        this.peerMaxFrame = value;
      } else if (id === SETTINGS_ENABLE_PUSH && value > 1) {
        throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'SETTINGS_ENABLE_PUSH other than 0 or 1');
      }
      // SETTINGS_HEADER_TABLE_SIZE needs nothing: the encoder here keeps no dynamic table.
    }
    this.writeControl(SETTINGS_ACK);
    this.flushBlocked();
  }

  /** Stops the start's timer once both SETTINGS were exchanged. */
  protected handshakeDone(): void {
    if (this.peerSettingsSeen && this.settingsAcked && this.handshakeTimer !== undefined) {
      clearTimeout(this.handshakeTimer);
      this.handshakeTimer = undefined;
    }
  }

  /**
   * The peer made this side abandon a stream (see ABANDONED_STREAMS_BURST): on a server, one
   * token of the bucket, and a connection error once it is empty. A client counts nothing.
   */
  protected abandoned(): void {
    if (!this.isServer) return;
    const now = performance.now();
    this.abandonTokens = Math.min(ABANDONED_STREAMS_BURST, this.abandonTokens + (now - this.abandonFilledAt) * ABANDONED_STREAMS_PER_MS);
    this.abandonFilledAt = now;
    if (this.abandonTokens < 1) throw new ConnectionError(H2_ERROR.ENHANCE_YOUR_CALM, 'too many streams reset or refused');
    this.abandonTokens -= 1;
  }

  protected onWindowUpdate(streamId: number, payload: Buffer): void {
    if (payload.length !== 4) throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, 'WINDOW_UPDATE of a wrong size');
    const inc = payload.readUInt32BE(0) & 0x7fffffff;
    if (streamId === 0) {
      if (inc === 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'WINDOW_UPDATE of 0');
      this.sendWindow += inc;
      if (this.sendWindow > MAX_WINDOW_BYTES) throw new ConnectionError(H2_ERROR.FLOW_CONTROL_ERROR, 'connection window over 2^31-1');
      this.flushBlocked();
      return;
    }
    const s = this.streams.get(streamId);
    if (s === undefined) {
      if (streamId > this.lastStreamId) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'WINDOW_UPDATE on an idle stream');
      return;
    }
    if (inc === 0) return this.streamError(s, H2_ERROR.PROTOCOL_ERROR);
    s.sendWindow += inc;
    if (s.sendWindow > MAX_WINDOW_BYTES) return this.streamError(s, H2_ERROR.FLOW_CONTROL_ERROR);
    if (this.blocked.has(s)) this.flushBlocked();
  }

  protected onDataFrame(flags: number, streamId: number, payload: Buffer): void {
    if (streamId === 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'DATA on stream 0');
    let data = payload;
    if ((flags & FLAG_PADDED) !== 0) {
      if (payload.length < 1 || payload[0]! >= payload.length) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'DATA padding too long');
      data = payload.subarray(1, payload.length - payload[0]!);
    }
    // The whole frame counts against the connection's window, whatever becomes of it.
    this.recvUnacked += payload.length;
    if (this.recvUnacked >= this.windows.connectionWindowBytes / 2) {
      this.writeRaw(frame(FrameType.WindowUpdate, 0, 0, u32(this.recvUnacked)));
      this.recvUnacked = 0;
    }
    const s = this.streams.get(streamId);
    if (s === undefined || s.remoteEnded) {
      if (streamId > this.lastStreamId) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'DATA on an idle stream');
      // A stream closed here (answered, reset) may still receive what the client had in flight.
      if (s !== undefined) this.streamError(s, H2_ERROR.STREAM_CLOSED);
      return;
    }
    const end = (flags & FLAG_END_STREAM) !== 0;
    if (end) s.remoteEnded = true;
    if (s.paused) {
      if (data.length > 0) (s.held ??= []).push(data);
      s.unacked += payload.length;
      if (end) s.heldEnd = true;
      return;
    }
    if (!end) this.consumed(s, payload.length);
    if (data.length > 0) s.listener?.onData(data);
    if (end && !s.closed) this.remoteEnd(s);
  }

  /** `bytes` of the stream's DATA were read: the client's window is given back in halves. */
  protected consumed(s: H2Stream, bytes: number): void {
    s.unacked += bytes;
    if (s.unacked >= this.windows.streamWindowBytes / 2 && !s.remoteEnded && !s.closed) {
      this.writeRaw(frame(FrameType.WindowUpdate, 0, s.id, u32(s.unacked)));
      s.unacked = 0;
    }
  }

  /** Hands a paused stream's held DATA (and end) to its listener. */
  releaseHeld(s: H2Stream): void {
    const held = s.held;
    s.held = undefined;
    if (held !== undefined) {
      for (const d of held) {
        if (s.closed || s.paused) {
          // Paused again (or gone) by a listener: the rest waits.
          if (!s.closed) (s.held ??= []).push(d);
          continue;
        }
        if (d.length > 0) s.listener?.onData(d);
      }
    }
    if (s.closed || s.paused) return;
    this.consumed(s, 0);
    this.cork();
    if (s.heldEnd) {
      s.heldEnd = false;
      this.remoteEnd(s);
    }
  }

  protected remoteEnd(s: H2Stream): void {
    s.listener?.onEnd();
    // A client's stream whose END_STREAM went out closes when the server's comes.
    if (!s.closed && s.localEnded && !s.endQueued) this.closeStream(s);
  }

  protected onHeadersFrame(flags: number, streamId: number, payload: Buffer): void {
    if (streamId === 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'HEADERS on stream 0');
    let start = 0;
    let end = payload.length;
    if ((flags & FLAG_PADDED) !== 0) {
      if (payload.length < 1) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'HEADERS padding missing');
      start = 1;
      end -= payload[0]!;
    }
    if ((flags & FLAG_PRIORITY) !== 0) {
      if (end - start < 5) throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, 'HEADERS too short for its priority');
      if ((payload.readUInt32BE(start) & 0x7fffffff) === streamId) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'a stream depends on itself');
      start += 5;
    }
    if (end < start) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'HEADERS padding too long');
    const fragment = payload.subarray(start, end);
    this.blockStream = streamId;
    this.blockEndStream = (flags & FLAG_END_STREAM) !== 0;
    if ((flags & FLAG_END_HEADERS) !== 0) return this.onHeaderBlock(fragment);
    this.blockParts = [fragment];
    this.blockBytes = fragment.length;
  }

  protected onContinuation(flags: number, streamId: number, payload: Buffer): void {
    if (this.blockParts === undefined || streamId !== this.blockStream) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'CONTINUATION out of place');
    this.blockParts.push(payload);
    this.blockBytes += payload.length;
    if (this.blockBytes > MAX_HEADER_LIST_BYTES || this.blockParts.length > MAX_HEADER_BLOCK_FRAMES) {
      throw new ConnectionError(H2_ERROR.ENHANCE_YOUR_CALM, 'header block too large');
    }
    if ((flags & FLAG_END_HEADERS) === 0) return;
    const block = Buffer.concat(this.blockParts, this.blockBytes);
    this.blockParts = undefined;
    this.blockBytes = 0;
    this.onHeaderBlock(block);
  }

  protected onHeaderBlock(block: Buffer): void {
    const headers: RequestHeaders = Object.create(null) as RequestHeaders;
    const pseudo = this.pseudoHeaders;
    let malformed = false;
    let regularSeen = false;
    let fits: boolean;
    try {
      fits = this.decoder.decode(
        block,
        (name, value) => {
          if (name.charCodeAt(0) === 58 /* ':' */) {
            if (regularSeen || !pseudo.has(name) || headers[name] !== undefined) malformed = true;
          } else regularSeen = true;
          if (headers[name] === undefined) headers[name] = value;
        },
        MAX_HEADER_LIST_BYTES,
      );
    } catch (e) {
      if (e instanceof HpackError) throw new ConnectionError(H2_ERROR.COMPRESSION_ERROR, e.message);
      throw e;
    }
    this.onHeaders(this.blockStream, headers, fits, malformed, this.blockEndStream);
  }

  /** The peer's END_STREAM came with a header block: the stream's listener hears it (now, or after a pause). */
  protected headersEnd(s: H2Stream): void {
    s.remoteEnded = true;
    if (s.paused) s.heldEnd = true;
    else this.remoteEnd(s);
  }

  protected openStream(id: number): H2Stream {
    const s = new H2Stream(id, this, this.peerInitialWindow);
    this.streams.set(id, s);
    return s;
  }

  // ---------------------------------------------------------------- output

  /** Batches this turn's output: the socket is corked until the microtasks of this turn ran. */
  protected cork(): void {
    if (this.corked) return;
    this.corked = true;
    this.socket.cork();
    queueMicrotask(() => {
      this.corked = false;
      this.socket.uncork();
    });
  }

  protected writeRaw(b: Buffer): void {
    if (this.socket.destroyed) return;
    this.cork();
    this.socket.write(b);
  }

  /** A frame answering the peer's own: dropped with the connection when the peer does not read. */
  protected writeControl(b: Buffer): void {
    if (this.socket.writableLength > MAX_QUEUED_CONTROL_BYTES) {
      this.socket.destroy();
      return;
    }
    this.writeRaw(b);
  }

  /** Writes a header block as HEADERS (and CONTINUATIONs when it is larger than a frame). */
  sendHeaders(s: H2Stream, block: Buffer, endStream: boolean): void {
    if (s.closed || s.localEnded) return;
    if (endStream) s.localEnded = true;
    this.writeHeaderBlock(s.id, block, endStream);
    if (endStream) this.localEnd(s);
  }

  protected writeHeaderBlock(id: number, block: Buffer, endStream: boolean): void {
    const max = this.peerMaxFrame;
    const es = endStream ? FLAG_END_STREAM : 0;
    if (block.length <= max) {
      this.writeRaw(frame(FrameType.Headers, es | FLAG_END_HEADERS, id, block));
      return;
    }
    this.writeRaw(frame(FrameType.Headers, es, id, block.subarray(0, max)));
    for (let off = max; off < block.length; off += max) {
      const last = off + max >= block.length;
      this.writeRaw(frame(FrameType.Continuation, last ? FLAG_END_HEADERS : 0, id, block.subarray(off, Math.min(off + max, block.length))));
    }
  }

  respondAll(s: H2Stream, headers: Buffer, data: Buffer, trailers: Buffer): void {
    if (s.closed || s.localEnded) return;
    const n = data.length;
    const max = this.peerMaxFrame;
    if (s.pendingBytes > 0 || n > max || n > this.sendWindow || n > s.sendWindow || headers.length > max || trailers.length > max) {
      this.sendHeaders(s, headers, false);
      this.endStream(s, data, trailers);
      return;
    }
    const out = Buffer.allocUnsafe(3 * FRAME_HEADER_BYTES + headers.length + n + trailers.length);
    let at = putFrameHeader(out, 0, headers.length, FrameType.Headers, FLAG_END_HEADERS, s.id);
    at += headers.copy(out, at);
    at = putFrameHeader(out, at, n, FrameType.Data, 0, s.id);
    out.set(data, at);
    at += n;
    at = putFrameHeader(out, at, trailers.length, FrameType.Headers, FLAG_END_HEADERS | FLAG_END_STREAM, s.id);
    trailers.copy(out, at);
    this.sendWindow -= n;
    s.sendWindow -= n;
    s.localEnded = true;
    this.writeRaw(out);
    this.localEnd(s);
  }

  sendData(s: H2Stream, data: Buffer): boolean {
    if (s.closed || s.localEnded) return true;
    if (data.length === 0) return true;
    if (s.pendingBytes === 0) {
      const sent = this.writeData(s, data, 0);
      if (sent === data.length) return true;
      data = data.subarray(sent);
    }
    s.pending.push(data);
    s.pendingBytes += data.length;
    this.blocked.add(s);
    if (s.pendingBytes > STREAM_HIGH_WATER_BYTES) {
      s.needDrain = true;
      return false;
    }
    return true;
  }

  endStream(s: H2Stream, last: Buffer | undefined, trailers: Buffer | undefined): void {
    if (s.closed || s.localEnded) return;
    if (last !== undefined && last.length > 0) this.sendData(s, last);
    s.localEnded = true;
    s.trailers = trailers;
    s.endQueued = true;
    if (s.pendingBytes === 0) this.writeEnd(s);
    else this.blocked.add(s);
  }

  /** Writes the stream's END_STREAM: its trailers, or an empty DATA frame. */
  protected writeEnd(s: H2Stream): void {
    const t = s.trailers;
    s.trailers = undefined;
    s.endQueued = false;
    if (t !== undefined) this.writeHeaderBlock(s.id, t, true);
    else this.writeRaw(frameHeader(0, FrameType.Data, FLAG_END_STREAM, s.id));
    this.localEnd(s);
  }

  /**
   * Writes as much of `data` from `off` as the windows allow, in frames of at most the peer's
   * frame size; returns how far it got.
   */
  protected writeData(s: H2Stream, data: Buffer, off: number): number {
    while (off < data.length) {
      const room = Math.min(this.sendWindow, s.sendWindow, this.peerMaxFrame, data.length - off);
      if (room <= 0) break;
      this.writeRaw(frameHeader(room, FrameType.Data, 0, s.id));
      this.writeRaw(off === 0 && room === data.length ? data : data.subarray(off, off + room));
      this.sendWindow -= room;
      s.sendWindow -= room;
      off += room;
    }
    return off;
  }

  /** Sends what flow control held back, as far as the windows now allow. */
  protected flushBlocked(): void {
    for (const s of this.blocked) {
      if (s.closed) {
        this.blocked.delete(s);
        continue;
      }
      while (s.pending.length > 0) {
        const head = s.pending[0]!;
        const sent = this.writeData(s, head, 0);
        s.pendingBytes -= sent;
        if (sent < head.length) {
          s.pending[0] = head.subarray(sent);
          break;
        }
        s.pending.shift();
      }
      if (s.pendingBytes > 0) {
        if (this.sendWindow <= 0) return;
        continue;
      }
      this.blocked.delete(s);
      if (s.endQueued) this.writeEnd(s);
      else if (s.needDrain) {
        s.needDrain = false;
        s.listener?.onDrain();
      }
    }
  }

  /**
   * This side's END_STREAM went out. A server's stream closes, resetting the client's side if it
   * is still sending (a call answered before its request ended: RST_STREAM NO_ERROR tells it to
   * stop, RFC 9113 8.1); a client's stream waits for the response's end.
   */
  protected localEnd(s: H2Stream): void {
    if (s.closed) return;
    if (!this.isServer && !s.remoteEnded) return;
    if (!s.remoteEnded) this.writeRaw(frame(FrameType.RstStream, 0, s.id, u32(H2_ERROR.NO_ERROR)));
    this.closeStream(s);
  }

  resetStream(s: H2Stream, code: number, send: boolean): void {
    if (s.closed) return;
    if (send) this.writeControl(frame(FrameType.RstStream, 0, s.id, u32(code)));
    this.closeStream(s);
  }

  /** A stream error the peer caused: the stream is reset, and (on a server) counts as abandoned. */
  protected streamError(s: H2Stream, code: number): void {
    this.abandoned();
    this.resetStream(s, code, true);
  }

  protected resetId(id: number, code: number): void {
    this.writeControl(frame(FrameType.RstStream, 0, id, u32(code)));
  }

  protected closeStream(s: H2Stream): void {
    if (s.closed) return;
    s.closed = true;
    s.pending = [];
    s.pendingBytes = 0;
    s.held = undefined;
    this.blocked.delete(s);
    this.streams.delete(s.id);
    try {
      s.listener?.onClose();
    } finally {
      if (this.goingAway && this.streams.size === 0) this.endSocket();
    }
  }

  protected goAwayFrame(code: number, debug: string): Buffer {
    const d = Buffer.from(debug, 'utf8');
    const p = Buffer.allocUnsafe(8 + d.length);
    // The last stream the peer opened that this side took: a client takes none.
    p.writeUInt32BE(this.isServer ? this.lastStreamId : 0, 0);
    p.writeUInt32BE(code, 4);
    d.copy(p, 8);
    return frame(FrameType.GoAway, 0, 0, p);
  }

  /** A connection error: GOAWAY, then the socket ends and every stream is closed. */
  protected fail(code: number, debug: string): void {
    if (this.ended) return;
    this.writeRaw(this.goAwayFrame(code, debug));
    this.endSocket();
  }

  protected endSocket(): void {
    if (this.ended) return;
    this.ended = true;
    this.socket.end();
    // A peer that never closes its side would keep the socket: it gets a moment to read the GOAWAY.
    setTimeout(() => this.socket.destroy(), 1000).unref();
  }

  protected onSocketClose(): void {
    this.ended = true;
    if (this.handshakeTimer !== undefined) clearTimeout(this.handshakeTimer);
    for (const s of [...this.streams.values()]) this.closeStream(s);
    this.pings = [];
    this.onClosed();
  }
}

/** The server side of one HTTP/2 connection on `socket`. */
export class H2ServerConnection extends H2Connection {
  protected readonly pseudoHeaders = REQUEST_PSEUDO;

  /** `head`: bytes of the connection already read from the socket (its preface's start). */
  constructor(
    socket: Socket,
    private readonly options: H2ConnectionOptions,
    head: Buffer | undefined = undefined,
  ) {
    super(socket, options, setting(SETTINGS_MAX_CONCURRENT_STREAMS, options.maxConcurrentStreams), true);
    this.handshakeTimer = setTimeout(() => {
      if (!this.ended)
        this.fail(
          H2_ERROR.SETTINGS_TIMEOUT,
          this.prefaceRead && this.peerSettingsSeen ? 'SETTINGS not acknowledged in time' : 'no preface and SETTINGS in time',
        );
    }, options.handshakeTimeoutMs ?? HANDSHAKE_TIMEOUT_MS);
    this.handshakeTimer.unref();
    if (head !== undefined && head.length > 0) this.receive(head);
  }

  protected onClosed(): void {
    this.options.onClose?.();
  }

  protected onHeaders(streamId: number, headers: RequestHeaders, fits: boolean, malformed: boolean, endStream: boolean): void {
    const existing = this.streams.get(streamId);
    if (existing !== undefined) {
      // Trailers from the client: they must end the stream; gRPC has no use for their fields.
      if (existing.remoteEnded) return this.streamError(existing, H2_ERROR.STREAM_CLOSED);
      if (!endStream) return this.streamError(existing, H2_ERROR.PROTOCOL_ERROR);
      return this.headersEnd(existing);
    }
    if (streamId <= this.lastStreamId) {
      // A closed stream's trailers, arriving after this side reset it: nothing to do.
      return;
    }
    if ((streamId & 1) === 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'a client opened an even stream id');
    this.lastStreamId = streamId;
    if (this.goingAway) return this.resetId(streamId, H2_ERROR.REFUSED_STREAM);
    if (this.streams.size >= this.options.maxConcurrentStreams) {
      this.abandoned();
      return this.resetId(streamId, H2_ERROR.REFUSED_STREAM);
    }
    if (!fits) {
      const s = this.openStream(streamId);
      if (endStream) s.remoteEnded = true;
      s.respond(encodeHeaders([[':status', '431']]), true);
      return;
    }
    if (malformed || headers[':method'] === undefined || (headers[':method'] !== 'CONNECT' && (!headers[':path'] || headers[':scheme'] === undefined))) {
      this.abandoned();
      return this.resetId(streamId, H2_ERROR.PROTOCOL_ERROR);
    }
    const s = this.openStream(streamId);
    if (endStream) s.remoteEnded = true;
    this.options.onRequest(s, headers);
    if (endStream && !s.closed) this.headersEnd(s);
  }
}

/** Pseudo-headers a response may carry. */
const RESPONSE_PSEUDO = new Set([':status']);

/**
 * The client side of one HTTP/2 connection on `socket` (connected or connecting; over TLS, one
 * that negotiated `h2`): streams opened by request(), server push refused (SETTINGS_ENABLE_PUSH 0).
 */
export class H2ClientConnection extends H2Connection {
  protected readonly pseudoHeaders = RESPONSE_PSEUDO;

  constructor(
    socket: Socket,
    private readonly options: H2ClientOptions,
  ) {
    super(socket, options, setting(SETTINGS_ENABLE_PUSH, 0), false);
  }

  /** Opens a stream with the request's header block (not ending it); `listener` follows it. */
  request(block: Buffer, listener: H2StreamListener): H2Stream {
    const id = this.lastStreamId === 0 ? 1 : this.lastStreamId + 2;
    this.lastStreamId = id;
    const s = this.openStream(id);
    s.listener = listener;
    this.sendHeaders(s, block, false);
    return s;
  }

  protected onClosed(): void {
    this.options.onClose?.();
  }

  protected override onGoAway(lastId: number): void {
    for (const s of [...this.streams.values()]) if (s.id > lastId) this.closeStream(s);
    super.onGoAway(lastId);
    this.options.onGoAway?.();
  }

  protected onHeaders(streamId: number, headers: RequestHeaders, fits: boolean, malformed: boolean, endStream: boolean): void {
    const s = this.streams.get(streamId);
    if (s === undefined) {
      if ((streamId & 1) === 0 || streamId > this.lastStreamId) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'HEADERS on a stream never opened');
      return;
    }
    if (!fits || malformed || (!s.gotHeaders && headers[':status'] === undefined)) return this.resetStream(s, H2_ERROR.PROTOCOL_ERROR, true);
    const trailers = s.gotHeaders;
    s.gotHeaders = true;
    s.listener?.onHeaders?.(headers, trailers);
    if (endStream && !s.closed) this.headersEnd(s);
  }
}

function setting(id: number, value: number): Buffer {
  const b = Buffer.allocUnsafe(6);
  b.writeUInt16BE(id, 0);
  b.writeUInt32BE(value, 2);
  return b;
}
