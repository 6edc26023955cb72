/**
 * What the H2 connection specs share: raw frames, a client that speaks them, and an echo server
 * on H2ServerConnection whose behaviour a test may change.
 */
import * as http2 from 'node:http2';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { CLIENT_PREFACE, H2ServerConnection, type H2Stream, type RequestHeaders } from './h2.connection.js';
import { HpackDecoder, encodeHeaders } from './hpack.js';

export interface Frame {
  type: number;
  flags: number;
  stream: number;
  payload: Buffer;
}

export const DATA = 0;
export const HEADERS = 1;
export const RST_STREAM = 3;
export const SETTINGS = 4;
export const PING = 6;
export const GOAWAY = 7;
export const WINDOW_UPDATE = 8;
export const CONTINUATION = 9;

export function frame(type: number, flags: number, stream: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const h = Buffer.alloc(9);
  h.writeUIntBE(payload.length, 0, 3);
  h[3] = type;
  h[4] = flags;
  h.writeUInt32BE(stream, 5);
  return Buffer.concat([h, payload]);
}

export const REQUEST = (authority = '127.0.0.1'): Buffer =>
  encodeHeaders([
    [':method', 'POST'],
    [':scheme', 'http'],
    [':path', '/svc/Echo'],
    [':authority', authority],
    ['content-type', 'application/grpc'],
  ]);

/**
 * A client speaking raw frames: what it sent is up to the test, what came back is parsed. It
 * acknowledges the server's SETTINGS, as every client must, unless `ack` is false.
 */
export class RawClient {
  readonly socket: net.Socket;
  readonly frames: Frame[] = [];
  readonly decoder = new HpackDecoder();
  closed = false;
  private buf = Buffer.alloc(0);
  private waiters: (() => void)[] = [];

  constructor(port: number, settings: Buffer = Buffer.alloc(0), ack = true) {
    this.socket = net.connect(port, '127.0.0.1');
    this.socket.on('error', () => undefined);
    this.socket.write(Buffer.concat([CLIENT_PREFACE, frame(SETTINGS, 0, 0, settings)]));
    this.socket.on('data', (chunk: Buffer) => {
      this.buf = Buffer.concat([this.buf, chunk]);
      while (this.buf.length >= 9) {
        const len = this.buf.readUIntBE(0, 3);
        if (this.buf.length < 9 + len) break;
        const f = { type: this.buf[3]!, flags: this.buf[4]!, stream: this.buf.readUInt32BE(5) & 0x7fffffff, payload: this.buf.subarray(9, 9 + len) };
        this.frames.push(f);
        if (ack && f.type === SETTINGS && (f.flags & 1) === 0) this.socket.write(frame(SETTINGS, 1, 0));
        this.buf = this.buf.subarray(9 + len);
      }
      this.wake();
    });
    this.socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  write(...frames: Buffer[]): void {
    this.socket.write(Buffer.concat(frames));
  }

  /** Resolves with the first frame received that matches, waiting for it. */
  async next(match: (f: Frame) => boolean): Promise<Frame> {
    for (;;) {
      const f = this.frames.find(match);
      if (f !== undefined) return f;
      if (this.closed) throw new Error('connection closed before the frame came');
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  async untilClosed(): Promise<void> {
    while (!this.closed) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  headersOf(f: Frame): Record<string, string> {
    const h: Record<string, string> = {};
    this.decoder.decode(f.payload, (n, v) => (h[n] = v));
    return h;
  }

  close(): void {
    this.socket.destroy();
  }
}

/** A server answering every request with its body echoed, under test-chosen behaviour. */
export class EchoServer {
  server!: net.Server;
  port = 0;
  readonly connections: H2ServerConnection[] = [];
  readonly requests: RequestHeaders[] = [];
  readonly closedStreams: number[] = [];
  /** How a request is served; by default its DATA is echoed back once the client ends. */
  serve: (s: H2Stream, h: RequestHeaders) => void = (s) => {
    const parts: Buffer[] = [];
    s.listener = {
      onData: (c) => parts.push(Buffer.from(c)),
      onEnd: () => s.respondAll(encodeHeaders([[':status', '200']]), Buffer.concat(parts), encodeHeaders([['grpc-status', '0']])),
      onClose: () => this.closedStreams.push(s.id),
      onDrain: () => undefined,
    };
  };

  async start(maxConcurrentStreams = 100, streamWindowBytes = 1 << 20, handshakeTimeoutMs?: number): Promise<void> {
    this.server = net.createServer((socket) => {
      this.connections.push(
        new H2ServerConnection(socket, {
          maxConcurrentStreams,
          streamWindowBytes,
          connectionWindowBytes: 8 << 20,
          handshakeTimeoutMs,
          onRequest: (s, h) => {
            this.requests.push(h);
            this.serve(s, h);
          },
        }),
      );
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    for (const c of this.connections) c.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export async function h2request(
  session: http2.ClientHttp2Session,
  body: Buffer,
  headers: http2.OutgoingHttpHeaders = {},
): Promise<{ status: number; body: Buffer; trailers: http2.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = session.request({ ':method': 'POST', ':path': '/svc/Echo', 'content-type': 'application/grpc', ...headers });
    const parts: Buffer[] = [];
    let status = 0;
    let trailers: http2.IncomingHttpHeaders = {};
    req.on('response', (h) => (status = Number(h[':status'])));
    req.on('trailers', (t) => (trailers = t));
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve({ status, body: Buffer.concat(parts), trailers }));
    req.on('error', reject);
    req.end(body);
  });
}
