/**
 * Node 20's HTTP/1.1 server refuses a valid request now and then when the answer before it on
 * the same keep-alive connection is still being written: once more than the socket's writable
 * high-water mark (16 KiB by default) of answers is waiting, the server pauses its parser, and a
 * chunk of the next request's body that was already read is then handed to the paused parser,
 * which fails with HPE_PAUSED. The client sees its connection closed (or our 400 from
 * handleClientError) for a request it sent correctly. It takes answers over 16 KiB and a busy
 * event loop; a 30-minute soak of 17 KiB objects met it 5 times in 70,000 requests, and a bare
 * Node 20 server echoing 17 KiB bodies about once in 500. Node 24 does not do it.
 *
 * Raising the high-water mark of HTTP/1.1 sockets keeps that pause for connections that really
 * fall behind: the parser is only paused once more than WRITE_BUFFER_BYTES of answers wait.
 * The mark also bounds what an answer may buffer before write() asks its writer to wait, which
 * for a watch over HTTP/1.1 is the most one slow reader holds in memory beyond its own queue.
 */
import type { Http2SecureServer } from 'node:http2';
import type { TLSSocket } from 'node:tls';

/** The writable high-water mark of an HTTP/1.1 connection: the largest single object (1.5 MiB). */
export const WRITE_BUFFER_BYTES = 1536 * 1024;

/** Raises the writable high-water mark of every HTTP/1.1 connection `server` accepts. */
export function widenHttp1WriteBuffer(server: Http2SecureServer, bytes: number = WRITE_BUFFER_BYTES): void {
  server.on('secureConnection', (socket: TLSSocket) => {
    if (socket.alpnProtocol === 'h2') return;
    // No public setter exists; the stream reads its mark from this field on every write.
    const state = (socket as unknown as { _writableState?: { highWaterMark: number } })._writableState;
    if (state && state.highWaterMark < bytes) state.highWaterMark = bytes;
  });
}
