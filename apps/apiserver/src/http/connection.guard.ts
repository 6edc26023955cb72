/**
 * Time limits on client connections that carry no request, so that nobody (credentials are only
 * checked once a request arrives) can hold sockets open for free: a connection that sends
 * partial headers forever ("slowloris"), or opens and stays silent, is closed.
 *
 * The figures are kube-apiserver's (its http.Server: ReadHeaderTimeout 32 s, IdleTimeout 90 s):
 * - a connection must complete its first request's headers within `headerTimeoutMs` of the TLS
 *   handshake (an HTTP/2 connection: open its first stream);
 * - a connection with no request in progress (HTTP/1.1 keep-alive between requests; HTTP/2 with
 *   no open stream) is closed after `idleTimeoutMs`.
 * - a request must have sent its whole body within `bodyTimeoutMs` of its headers (the server
 *   passes --request-timeout, 60 s by default): a client that trickles a body is cut off.
 * A connection serving a request is never timed out otherwise, however quiet: a watch may send
 * nothing for many minutes (its own length is bounded by --min-request-timeout).
 * The TLS handshake itself is bounded by the server's `handshakeTimeout`.
 */
import { constants as http2constants, type Http2SecureServer, type Http2Session, type ServerHttp2Stream } from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';

export interface ConnectionLimits {
  readonly headerTimeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly bodyTimeoutMs: number;
}

/** kube-apiserver's values. */
export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = { headerTimeoutMs: 32_000, idleTimeoutMs: 90_000, bodyTimeoutMs: 60_000 };

/**
 * Calls `onExpire` after `ms` unless `received()` says the whole request arrived by then (for
 * HTTP/1.1 the parser got all of it, read or not; for HTTP/2 the stream ended with its headers,
 * as a GET's does, or was read to its end). `body`'s 'end' or 'close' clears the timer.
 */
function bodyDeadline(ms: number, received: () => boolean, body: NodeJS.EventEmitter, onExpire: () => void): void {
  if (ms <= 0 || received()) return;
  const timer = setTimeout(() => {
    if (!received()) onExpire();
  }, ms);
  timer.unref();
  const done = (): void => clearTimeout(timer);
  body.once('end', done);
  body.once('close', done);
}

/**
 * One connection's timer: armed while nothing is in progress, cleared while something is.
 * `onExpire` closes the connection.
 */
class IdleTimer {
  private active = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly onExpire: () => void,
    firstMs: number,
    private readonly idleMs: number,
  ) {
    this.arm(firstMs);
  }

  begin(): void {
    this.active++;
    this.clear();
  }

  end(): void {
    this.active = Math.max(0, this.active - 1);
    if (this.active === 0) this.arm(this.idleMs);
  }

  clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(ms: number): void {
    this.clear();
    if (ms <= 0) return;
    this.timer = setTimeout(this.onExpire, ms);
    this.timer.unref();
  }
}

/** Installs the limits on `server` (an HTTP/2 server that also takes HTTP/1.1). */
export function guardConnections(server: Http2SecureServer, limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS): void {
  const http1 = new WeakMap<object, IdleTimer>();

  server.on('secureConnection', (socket: TLSSocket) => {
    // HTTP/2 connections are followed per session (below).
    if (socket.alpnProtocol === 'h2') return;
    const t = new IdleTimer(() => socket.destroy(), limits.headerTimeoutMs, limits.idleTimeoutMs);
    http1.set(socket, t);
    socket.once('close', () => t.clear());
  });

  // HTTP/1.1 requests (HTTP/2 streams come as 'stream' on their session).
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.httpVersionMajor >= 2) return;
    const t = http1.get(req.socket);
    if (!t) return;
    t.begin();
    res.once('close', () => t.end());
    bodyDeadline(
      limits.bodyTimeoutMs,
      () => req.complete,
      req,
      () => req.socket.destroy(),
    );
  });

  // An upgrade request's socket leaves HTTP: once its request is answered it is closed, or it is
  // a tunnel (upgrade-proxy.ts) that may stay quiet for as long as the session it carries.
  server.on('upgrade', (req: IncomingMessage) => {
    http1.get(req.socket)?.clear();
    http1.delete(req.socket);
  });

  server.on('session', (session: Http2Session) => {
    const t = new IdleTimer(
      () => {
        // GOAWAY first, so a client that is about to open a stream learns to reconnect.
        session.close();
        setTimeout(() => session.destroy(), 1000).unref();
      },
      limits.headerTimeoutMs,
      limits.idleTimeoutMs,
    );
    session.on('stream', (stream: ServerHttp2Stream) => {
      t.begin();
      stream.once('close', () => t.end());
      bodyDeadline(
        limits.bodyTimeoutMs,
        () => stream.endAfterHeaders || stream.readableEnded,
        stream,
        () => stream.close(http2constants.NGHTTP2_CANCEL),
      );
    });
    session.once('close', () => t.clear());
  });
}
