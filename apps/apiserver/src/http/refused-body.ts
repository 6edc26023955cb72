/**
 * What happens to the body of a request that is answered before its body is read (413 for a
 * declared Content-Length over --max-request-body-bytes, 401 without credentials).
 *
 * A client sends its body while it waits for the answer. Closing the connection as soon as the
 * answer is written (what Fastify does for a too-large body) makes the kernel reset it while
 * body bytes keep arriving, and the client then sees EPIPE or ECONNRESET instead of the Status,
 * depending on which it notices first. So:
 * - HTTP/1.1, a declared length up to `capBytes`: the body is read to its end and thrown away;
 *   the connection stays usable for the next request.
 * - HTTP/1.1, a longer or chunked body: the answer says `Connection: close`; once it is written
 *   the server stops reading and gives the client `lingerMs` to read it before the socket is
 *   destroyed (Go's server waits the same way before it closes a connection with an unread
 *   body). The client's writes stall on the full window meanwhile; nothing is read into nowhere.
 * - HTTP/2 needs nothing here: Node's HTTP/2 layer ends a stream whose body is unread with
 *   RST_STREAM(NO_ERROR) once the answer is written (RFC 9113 section 8.1: "stop sending, no
 *   error"), and the connection's other streams go on (test/api.http.test.ts checks it).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';

export interface RefusedBodyOptions {
  /** Longest declared HTTP/1.1 body read through (and discarded) to keep the connection. */
  readonly capBytes: number;
  /** HTTP/1.1: time the client gets to read the answer before the socket is destroyed. */
  readonly lingerMs?: number;
}

/** Time a client gets to read the answer when the server stopped reading (Go: 500 ms). */
const DEFAULT_LINGER_MS = 2_000;

/** Call before the answer is sent; see the file comment. */
export function discardRefusedBody(raw: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse, opts: RefusedBodyOptions): void {
  if ((raw as Http2ServerRequest).stream !== undefined) return;
  const req = raw as IncomingMessage;
  const lengthHeader = req.headers['content-length'];
  const chunked = req.headers['transfer-encoding'] !== undefined;
  const declared = lengthHeader === undefined ? 0 : Number(lengthHeader);
  if (!chunked && !(declared > 0)) return;
  if (!chunked && declared <= opts.capBytes) {
    req.resume();
    return;
  }
  (res as ServerResponse).setHeader('Connection', 'close');
  // Node ends a `Connection: close` exchange with socket.destroySoon() once the answer is
  // written, which resets a connection with unread bytes at once: linger instead.
  // Read into nowhere until then. Reading it ourselves also keeps Node from "dumping" the
  // request when the answer is written, which would read on regardless of any pause.
  req.on('data', () => undefined);
  const socket = req.socket;
  socket.destroySoon = (): void => {
    // Both pauses count: a flowing request stream would resume its socket.
    req.pause();
    socket.pause();
    setTimeout(() => socket.destroy(), opts.lingerMs ?? DEFAULT_LINGER_MS).unref();
  };
}
