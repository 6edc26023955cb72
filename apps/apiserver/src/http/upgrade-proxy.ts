/**
 * Requests that switch protocols (HTTP/1.1 `Connection: Upgrade`, as kubectl exec, attach and
 * port-forward send them for SPDY/3.1 or WebSocket), and the tunnel that connects such a
 * request to its backend (kube's UpgradeAwareHandler).
 *
 * Node hands an upgrade request to the server's 'upgrade' event with the bare socket, outside
 * the request path. `routeUpgrades` gives it a response on that socket and routes it through
 * Fastify like any request, so that it passes the whole pipeline (authentication, audit,
 * impersonation, flow control, authorization) and its route; a refusal is an ordinary Status
 * answer, after which the connection closes. A route that connects (the resource handler, for a
 * connect subresource) calls `tunnel` with the backend's location:
 *
 * - the request goes to the backend with the headers the switch needs (Upgrade, Connection, the
 *   WebSocket and stream-protocol headers, every value of each) and never the client's
 *   credentials or impersonation headers;
 * - a backend that cannot be reached is a 500 `error dialing backend: <error>`, as kube's;
 * - a backend that switches (101) has its answer passed to the client, and from then on bytes
 *   flow both ways untouched until either side closes;
 * - a backend that answers anything else has its answer passed on as it is (a kubelet refusing
 *   a WebSocket protocol it does not speak makes kubectl fall back to SPDY).
 *
 * Such a connection is long-running: it has no request deadline and is not counted against the
 * in-flight limits (request-info.ts isLongRunning), and the connection guard's idle timers stop
 * following its socket once it is handed over (connection.guard.ts). A stopping server closes
 * the connections still open.
 */
import type { EventEmitter } from 'node:events';
import { request as httpRequest, ServerResponse, type IncomingMessage } from 'node:http';
import { request } from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { StatusError } from '@app/apimachinery';
import type { ConnectTarget } from '@app/registry';
import { stateOf } from '../pipeline/request-state.js';

/** An upgrade request's connection, from the server's 'upgrade' event. */
export interface UpgradeConnection {
  socket: Duplex;
  /** Bytes the client sent after the request's header, before any answer. */
  head: Buffer;
  /** Set once the connection is a tunnel: the response object no longer owns the socket. */
  tunneled: boolean;
}

const connections = new WeakMap<IncomingMessage, UpgradeConnection>();

/** The connection of an upgrade request routed by `routeUpgrades`, if `req` is one. */
export function upgradeOf(req: IncomingMessage | object): UpgradeConnection | undefined {
  return connections.get(req as IncomingMessage);
}

/** The upgrade connections of a server, open until each closes. */
export interface UpgradeConnections {
  readonly open: number;
  /** Closes every one (the server is stopping: a tunnel would otherwise hold its close up). */
  closeAll(): void;
}

/**
 * Routes the upgrade requests of `server` through `route` (Fastify's `routing`), each with a
 * response written on its socket. An answer that does not switch protocols is the connection's
 * last.
 */
export function routeUpgrades(server: EventEmitter, route: (req: IncomingMessage, res: ServerResponse) => void): UpgradeConnections {
  const open = new Set<Duplex>();
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // A write to a client that is gone must not become an unhandled error.
    socket.on('error', () => socket.destroy());
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    const conn: UpgradeConnection = { socket, head, tunneled: false };
    connections.set(req, conn);
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket as Socket);
    res.once('finish', () => {
      if (!conn.tunneled) socket.end();
    });
    route(req, res);
  });
  return {
    get open() {
      return open.size;
    },
    closeAll() {
      for (const socket of open) socket.destroy();
    },
  };
}

/**
 * The request headers a backend gets: what switching protocols needs (every value, in the
 * client's order), never the credentials or impersonation headers the API server consumed.
 */
const FORWARDED_HEADERS = new Set([
  'connection',
  'upgrade',
  'sec-websocket-key',
  'sec-websocket-version',
  'sec-websocket-protocol',
  'sec-websocket-extensions',
  'x-stream-protocol-version',
  'user-agent',
]);

/** Response headers that belong to one connection and are not passed on. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection']);

/** How long a backend may take to answer the switch. */
const SWITCH_TIMEOUT_MS = 30_000;
/** How long a client may keep its side open after the backend closed the tunnel. */
const CLOSE_GRACE_MS = 5_000;

/** The headers of the request to the backend, as raw name/value pairs. */
export function forwardedHeaders(rawHeaders: readonly string[], host: string): string[] {
  const out = ['Host', host];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (FORWARDED_HEADERS.has(rawHeaders[i]!.toLowerCase())) out.push(rawHeaders[i]!, rawHeaders[i + 1]!);
  }
  return out;
}

/** `raw` with the target's own headers added (every value of a list as a header of its own). */
function withTargetHeaders(raw: string[], target: ConnectTarget): string[] {
  for (const [name, value] of Object.entries(target.headers ?? {})) {
    for (const v of typeof value === 'string' ? [value] : value) raw.push(name, v);
  }
  return raw;
}

/** The status line and headers of a backend's 101, as the client gets them. */
export function switchingHead(statusMessage: string | undefined, rawHeaders: readonly string[]): string {
  let head = `HTTP/1.1 101 ${statusMessage || 'Switching Protocols'}\r\n`;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) head += `${rawHeaders[i]}: ${rawHeaders[i + 1]}\r\n`;
  return `${head}\r\n`;
}

type BackendAnswer = { res: IncomingMessage; socket: Duplex; head: Buffer } | { res: IncomingMessage; socket?: undefined; head?: undefined };

/** Sends the upgrade request to the backend; resolves with its answer, a switch or not. */
function askBackend(req: FastifyRequest, conn: UpgradeConnection, target: ConnectTarget): Promise<BackendAnswer> {
  return new Promise<BackendAnswer>((resolve, reject) => {
    const out = (target.url.protocol === 'http:' ? httpRequest : request)(target.url, {
      method: req.method,
      agent: target.agent,
      headers: withTargetHeaders(forwardedHeaders(req.raw.rawHeaders, target.url.host), target) as unknown as Record<string, string>,
      timeout: SWITCH_TIMEOUT_MS,
    });
    const gone = (): void => {
      out.destroy(new Error('the client closed the connection'));
    };
    conn.socket.once('close', gone);
    const settle = (): void => {
      conn.socket.off('close', gone);
      out.setTimeout(0);
    };
    out.once('upgrade', (res: IncomingMessage, socket: Duplex, head: Buffer) => {
      settle();
      resolve({ res, socket, head });
    });
    out.once('response', (res: IncomingMessage) => {
      settle();
      resolve({ res });
    });
    out.once('timeout', () => out.destroy(new Error(`no answer within ${SWITCH_TIMEOUT_MS / 1000}s`)));
    out.once('error', (e: Error) => {
      settle();
      // kube's: a Status without a reason (an error that is not an API status).
      reject(new StatusError(500, '', `error dialing backend: ${e.message}`));
    });
    out.end();
  });
}

/**
 * Joins the client's connection and the backend's into one tunnel; resolves when it closes.
 * The switch is the answer's start: its audit event (ResponseStarted, 101, as kube records a
 * hijacked connection) is recorded first, and a blocking audit webhook holds the switch until it
 * has taken it.
 */
async function join(
  req: FastifyRequest,
  reply: FastifyReply,
  conn: UpgradeConnection,
  answer: { res: IncomingMessage; socket: Duplex; head: Buffer },
): Promise<void> {
  const client = conn.socket;
  const backend = answer.socket;
  reply.hijack();
  conn.tunneled = true;
  // For the audit record and the logs: the request was answered with the switch.
  reply.raw.statusCode = 101;
  const taken = stateOf(req)?.audit?.emit('ResponseStarted', 101);
  if (taken) await taken.catch(() => undefined);
  if (client.destroyed) {
    backend.destroy();
    return;
  }
  client.write(switchingHead(answer.res.statusMessage, answer.res.rawHeaders));
  if (answer.head.length) client.write(answer.head);
  if (conn.head.length) backend.write(conn.head);
  backend.on('error', () => backend.destroy());
  backend.pipe(client);
  client.pipe(backend);
  // The client going ends the backend's side at once; the backend going ends the client's
  // after what it sent is flushed, and the connection at the latest a grace period later.
  client.once('close', () => backend.destroy());
  backend.once('close', () => {
    client.end();
    setTimeout(() => client.destroy(), CLOSE_GRACE_MS).unref();
  });
  return new Promise<void>((resolve) => client.once('close', () => resolve()));
}

/**
 * Connects an upgrade request to `target`: the backend's switch makes a tunnel, any other
 * answer of the backend is passed on. Throws the Status of a backend that cannot be reached.
 */
export async function tunnel(req: FastifyRequest, reply: FastifyReply, conn: UpgradeConnection, target: ConnectTarget): Promise<void> {
  const answer = await askBackend(req, conn, target);
  if (answer.socket) return join(req, reply, conn, answer);
  const { res } = answer;
  reply.code(res.statusCode ?? 502);
  for (const [name, value] of Object.entries(res.headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name)) reply.header(name, value);
  }
  const done = new Promise<void>((resolve) => reply.raw.once('close', () => resolve()));
  await reply.send(res);
  return done;
}
