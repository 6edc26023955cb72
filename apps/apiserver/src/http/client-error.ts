/**
 * The answer to a request that Node's HTTP/1.1 parser refused before any handler saw it
 * (Fastify's `clientErrorHandler`): headers larger than the server takes, a malformed request
 * line, a client timeout. It is a `Status` like every other error of the API, on a connection
 * that is then closed.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { StatusError } from '@app/apimachinery';

/** The raw HTTP/1.1 response for parser error `err`; undefined when nothing should be written. */
export function clientErrorResponse(err: { code?: string }): string | undefined {
  if (err.code === 'ECONNRESET') return undefined;
  let se: StatusError;
  if (err.code === 'HPE_HEADER_OVERFLOW')
    se = new StatusError(431, '', 'the request headers are too large (the request line and headers together may take 1 MiB)');
  else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') se = new StatusError(408, '', 'the request was not received in time');
  else se = new StatusError(400, 'BadRequest', 'the request could not be parsed as HTTP/1.1');
  const body = JSON.stringify(se.toStatus());
  return `HTTP/1.1 ${se.code} ${STATUS_CODES[se.code]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/** Fastify's clientErrorHandler: writes clientErrorResponse and closes the connection. */
export function handleClientError(err: Error & { code?: string }, socket: Socket): void {
  if (socket.destroyed) return;
  const res = clientErrorResponse(err);
  if (res === undefined || !socket.writable) {
    socket.destroy();
    return;
  }
  // end() flushes the answer asynchronously (through TLS): destroying the socket at once lost
  // it now and then. The client closes on `Connection: close`; one that does not is cut off.
  socket.end(res);
  const timer = setTimeout(() => socket.destroy(), 1000);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}
