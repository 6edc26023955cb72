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
 *   through the proxy again, so that a client following it stays on the API server; so are the
 *   links of an HTML page (html-rewrite.ts), which is read whole for it (up to
 *   HTML_REWRITE_MAX_BYTES; gzip and deflate are decoded and encoded again).
 * - Any other answer's body is streamed: the request is long-running (request-info.ts
 *   isLongRunning).
 */
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { promisify } from 'node:util';
import { deflate, gunzip, gzip, inflate } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { StatusError } from '@app/apimachinery';
import type { ConnectTarget } from '@app/registry';
import { rewriteHtml } from './html-rewrite.js';

const gunzipAsync = promisify(gunzip);
const inflateAsync = promisify(inflate);
const gzipAsync = promisify(gzip);
const deflateAsync = promisify(deflate);

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

/** The host of an absolute URL's authority, normalized as URL does it (default port dropped), or undefined. */
function hostOf(scheme: string, authority: string): string | undefined {
  try {
    return new URL(`${scheme || 'http:'}//${authority}`).host;
  } catch {
    return undefined;
  }
}

/**
 * A link of the backend's (a redirect's Location, a URL in an HTML page) as the client gets it
 * (kube's proxy transport rewriteURL): an absolute path, or a URL on the backend's own host or
 * the API server's, becomes the same path below `prefix` on the API server, as a path (kube's
 * proxy answers host-relative links too); a relative path, another host or another kind of URL
 * (mailto:, data:) is kept. The rest of the link is kept as written, not re-encoded.
 */
export function rewriteLink(link: string, target: URL, from: Pick<ForwardedFrom, 'host'>, prefix: string): string {
  let rest: string;
  if (link.startsWith('/') && !link.startsWith('//')) rest = link;
  else {
    const m = /^([a-z][a-z0-9+.-]*:)?\/\/([^/?#]*)(.*)$/is.exec(link);
    if (!m) return link;
    const host = hostOf(m[1] ?? '', m[2]!);
    if (host === undefined || (host !== target.host && host !== from.host)) return link;
    rest = m[3]!.startsWith('/') ? m[3]! : `/${m[3]!}`;
  }
  return rest === prefix || rest.startsWith(`${prefix}/`) ? rest : `${prefix}${rest}`;
}

/** Answers larger than this (as sent, before decompression) are passed on without their HTML links rewritten. */
export const HTML_REWRITE_MAX_BYTES = 16 * 1024 * 1024;

/** An answer's Content-Encoding, lower-cased ('' for none). */
function contentEncoding(res: Pick<IncomingMessage, 'headers'>): string {
  return String(res.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
}

/** True when an answer's body is HTML whose links are rewritten: text/html in an encoding read here. */
function rewritesHtml(res: IncomingMessage, method: string): boolean {
  if (method === 'HEAD' || res.statusCode === 204 || res.statusCode === 304) return false;
  const type = String(res.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  return type === 'text/html' && ['', 'identity', 'gzip', 'deflate'].includes(contentEncoding(res));
}

/**
 * The body of an HTML answer with its links rewritten (html-rewrite.ts), re-encoded as it came.
 * A body past HTML_REWRITE_MAX_BYTES, as sent or once decoded (a small gzip body may inflate to
 * gigabytes), or one that does not decode, is passed on as it came. Read as latin1, so that
 * every byte comes back unchanged whatever the page's charset.
 */
export async function rewrittenHtml(
  res: Pick<IncomingMessage, 'headers' | typeof Symbol.asyncIterator>,
  rewrite: (url: string) => string,
  maxBytes = HTML_REWRITE_MAX_BYTES,
): Promise<{ body: Buffer | Readable; encoded: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  const iterator = res[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  for (;;) {
    const next = await iterator.next();
    if (next.done) break;
    chunks.push(next.value);
    size += next.value.length;
    if (size > maxBytes) {
      // Too large to hold: what was read, then the rest, as sent.
      const rest = { [Symbol.asyncIterator]: () => iterator };
      return {
        body: Readable.from(
          (async function* () {
            yield* chunks;
            yield* rest;
          })(),
        ),
        encoded: false,
      };
    }
  }
  const encoding = contentEncoding(res);
  const raw = Buffer.concat(chunks);
  let plain: Buffer;
  try {
    const limit = { maxOutputLength: maxBytes };
    plain = encoding === 'gzip' ? await gunzipAsync(raw, limit) : encoding === 'deflate' ? await inflateAsync(raw, limit) : raw;
  } catch {
    return { body: raw, encoded: true };
  }
  const html = rewriteHtml(plain.toString('latin1'), rewrite);
  const out = Buffer.from(html, 'latin1');
  const body = encoding === 'gzip' ? await gzipAsync(out) : encoding === 'deflate' ? await deflateAsync(out) : out;
  return { body, encoded: true };
}

/**
 * Sends `req` to `target` (the backend's path and the request's query, with the target's own
 * headers) and streams the answer back; `prefix` is the proxy's own path on the API server,
 * below which redirects and HTML links are rewritten (undefined: the answer is passed on as it
 * came, as the aggregation layer does). Throws the 503 Status of a backend that cannot be
 * reached.
 */
export async function proxyRequest(req: FastifyRequest, reply: FastifyReply, target: ConnectTarget, prefix: string | undefined): Promise<void> {
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
      headers: {
        ...proxiedRequestHeaders(
          req.raw.rawHeaders,
          url,
          from,
          body?.length ?? (req.method === 'POST' || req.method === 'PUT' || req.method === 'PATCH' ? 0 : undefined),
        ),
        ...(target.headers as OutgoingHttpHeaders | undefined),
      },
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
  const link = (l: string): string => (prefix === undefined ? l : rewriteLink(l, url, from, prefix));
  // A backend that breaks off its answer ends the client's too.
  res.on('error', () => reply.raw.destroy());
  const html = prefix !== undefined && rewritesHtml(res, req.method) ? await rewrittenHtml(res, link) : undefined;
  reply.code(res.statusCode ?? 502);
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    // A rewritten page has a length of its own; one passed on in pieces has none known.
    if (name === 'content-length' && html) continue;
    reply.header(name, name === 'location' && typeof value === 'string' ? link(value) : value);
  }
  if (html?.encoded) reply.header('content-length', String((html.body as Buffer).length));
  const done = new Promise<void>((resolve) => reply.raw.once('close', () => resolve()));
  await reply.send(html ? html.body : res);
  return done;
}
