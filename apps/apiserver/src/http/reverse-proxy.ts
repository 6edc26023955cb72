/**
 * The proxy subresources' plain HTTP requests (kube's UpgradeAwareHandler with its proxy
 * transport; upgrade requests to a proxy are tunneled by upgrade-proxy.ts): the request goes to
 * the backend as the client sent it, its answer comes back as the backend sent it.
 *
 * - Method, query, body and headers are passed on, but for the client's credentials and
 *   impersonation headers (the API server consumed them, as kube's authentication and
 *   impersonation filters remove them) and the headers of one connection (hop-by-hop).
 *   `X-Forwarded-Uri`, `-Host`, `-Proto` and `-For` tell the backend where the client was.
 * - A backend that cannot be reached is a 503 `error trying to reach service: <error>`.
 * - A redirect to the backend itself (`Location` on its host, or a path) is rewritten to go
 *   through the proxy again, so that a client following it stays on the API server.
 * - The answer's body is streamed: the request is long-running (request-info.ts isLongRunning).
 *
 * kube also rewrites the links of HTML pages; this proxy passes HTML through as it is.
 */
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { StatusError } from '@app/apimachinery';
import type { ConnectTarget } from '@app/registry';

/** Headers of one connection, never passed on (RFC 9110 7.6.1, and Go's list). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** True for a request header the backend must not get: credentials the API server consumed, or one connection's. */
export function isWithheldHeader(name: string): boolean {
  const n = name.toLowerCase();
  // HTTP/2's pseudo-headers (:authority and the others) are not headers of the request to pass on.
  return (
    n.startsWith(':') ||
    HOP_BY_HOP.has(n) ||
    n === 'host' ||
    n === 'authorization' ||
    n === 'content-length' ||
    n.startsWith('impersonate-') ||
    n.startsWith('x-remote-')
  );
}

/** Where the client was, for the backend. */
export interface ForwardedFrom {
  /** The request's path on the API server. */
  uri: string;
  /** The Host the client asked for. */
  host: string;
  /** http or https. */
  proto: string;
  /** The client's address. */
  for?: string;
}

/** The headers of the request to the backend (name/value pairs, every value in the client's order). */
export function proxiedRequestHeaders(rawHeaders: readonly string[], target: URL, from: ForwardedFrom, bodyLength: number | undefined): OutgoingHttpHeaders {
  const out: Record<string, string | string[]> = {};
  const add = (name: string, value: string): void => {
    const k = name.toLowerCase();
    const prev = out[k];
    out[k] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  };
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (!isWithheldHeader(rawHeaders[i]!) && !rawHeaders[i]!.toLowerCase().startsWith('x-forwarded-')) add(rawHeaders[i]!, rawHeaders[i + 1]!);
  }
  out.host = target.host;
  if (bodyLength !== undefined) out['content-length'] = String(bodyLength);
  out['x-forwarded-uri'] = from.uri;
  if (from.host) out['x-forwarded-host'] = from.host;
  out['x-forwarded-proto'] = from.proto;
  if (from.for) out['x-forwarded-for'] = from.for;
  return out;
}

/**
 * The Location of a backend's redirect as the client gets it: a path, or a URL on the backend's
 * own host (or the API server's), goes through `prefix` on the API server; anything else is kept.
 */
export function rewriteLocation(location: string, target: URL, from: Pick<ForwardedFrom, 'host' | 'proto'>, prefix: string): string {
  let url: URL;
  try {
    url = new URL(location, target);
  } catch {
    return location;
  }
  const absolute = /^[a-z][a-z0-9+.-]*:/i.test(location) || location.startsWith('//');
  // A relative path (not starting with '/') resolves against the backend's path: kept as sent.
  if (!absolute && !location.startsWith('/')) return location;
  if (absolute && url.host !== target.host && url.host !== from.host) return location;
  if (url.pathname.startsWith(prefix)) return `${from.proto}://${from.host}${url.pathname}${url.search}${url.hash}`;
  const joined = `${prefix}${url.pathname === '/' ? '/' : url.pathname}`;
  return `${from.proto}://${from.host}${joined}${url.search}${url.hash}`;
}

/**
 * Sends `req` to `target` (the backend's path and the request's query) and streams the
 * answer back; `prefix` is the proxy's own path on the API server (for redirects). Throws the
 * 503 Status of a backend that cannot be reached.
 */
export async function proxyRequest(req: FastifyRequest, reply: FastifyReply, target: ConnectTarget, prefix: string): Promise<void> {
  const url = target.url;
  const body = Buffer.isBuffer(req.body) ? req.body : undefined;
  const encrypted = (req.raw.socket as TLSSocket).encrypted === true;
  const from: ForwardedFrom = {
    uri: req.url.split('?')[0]!,
    host: req.headers.host ?? req.headers[':authority']?.toString() ?? '',
    proto: encrypted ? 'https' : 'http',
    ...(req.raw.socket.remoteAddress ? { for: req.raw.socket.remoteAddress } : {}),
  };
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    const out = send(url, {
      method: req.method,
      agent: target.agent,
      headers: proxiedRequestHeaders(
        req.raw.rawHeaders,
        url,
        from,
        body?.length ?? (req.method === 'POST' || req.method === 'PUT' || req.method === 'PATCH' ? 0 : undefined),
      ),
    });
    const gone = (): void => {
      out.destroy(new Error('the client closed the connection'));
    };
    reply.raw.once('close', gone);
    out.once('response', (r: IncomingMessage) => {
      reply.raw.off('close', gone);
      // The client going ends the backend's answer too.
      reply.raw.once('close', () => r.destroy());
      resolve(r);
    });
    out.once('error', (e: Error) => {
      reply.raw.off('close', gone);
      // kube's proxy transport: a 503 without details.
      reject(new StatusError(503, 'ServiceUnavailable', `error trying to reach service: ${e.message}`));
    });
    out.end(body);
  });
  reply.code(res.statusCode ?? 502);
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    reply.header(name, name === 'location' && typeof value === 'string' ? rewriteLocation(value, url, from, prefix) : value);
  }
  // A backend that breaks off its answer ends the client's too.
  res.on('error', () => reply.raw.destroy());
  const done = new Promise<void>((resolve) => reply.raw.once('close', () => resolve()));
  await reply.send(res);
  return done;
}
