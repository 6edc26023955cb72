/**
 * HTTPS clients for tests: HTTP/1.1 through an undici Agent, and HTTP/2 through node:http2, both
 * trusting the cluster CA and presenting a client certificate (the admin's unless told otherwise).
 */
import * as http2 from 'node:http2';
// undici 8 (the `undici` dependency) requires Node >= 22.19 and fails to load on Node 20;
// `undici7` is an npm alias of undici 7, which supports Node >= 20.18.1.
import { Agent, request as undiciRequest } from 'undici7';

/** Where to send a request and with which TLS material. A ServerHandle satisfies this. */
export interface HttpTarget {
  /** Base URL, e.g. `https://127.0.0.1:6443`. */
  readonly url: string;
  readonly caPem: string;
  readonly adminCertPem: string;
  readonly adminKeyPem: string;
}

/** Who the client is: the admin (default), another client certificate, or nobody. */
export type HttpIdentity = 'admin' | 'anonymous' | { readonly certPem: string; readonly keyPem: string };

/** Options of {@link request} and {@link request2}. */
export interface RequestOptions {
  /** A string or Buffer is sent as is; anything else is JSON-encoded (content-type defaults to JSON). */
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  readonly identity?: HttpIdentity;
  /** Sent as `Authorization: Bearer <token>`. */
  readonly token?: string;
  /** Whole-request timeout. Default 30 s. */
  readonly timeoutMs?: number;
}

/** A buffered response. */
export interface HttpResponse {
  readonly status: number;
  /** Header names lower-cased; repeated headers joined with `, `. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** `JSON.parse(body)`; throws a SyntaxError naming the status and a body excerpt. */
  json<T = unknown>(): T;
}

function makeResponse(status: number, headers: Record<string, string>, body: string): HttpResponse {
  return {
    status,
    headers,
    body,
    json<T>(): T {
      try {
        return JSON.parse(body) as T;
      } catch {
        throw new SyntaxError(`response ${status} is not JSON: ${body.slice(0, 200)}`);
      }
    },
  };
}

function identityOf(target: HttpTarget, id: HttpIdentity | undefined): { cert?: string; key?: string } {
  if (id === undefined || id === 'admin') return { cert: target.adminCertPem, key: target.adminKeyPem };
  if (id === 'anonymous') return {};
  return { cert: id.certPem, key: id.keyPem };
}

function encodeBody(opts: RequestOptions, headers: Record<string, string>): string | Buffer | undefined {
  const b = opts.body;
  if (b === undefined) return undefined;
  if (typeof b === 'string' || Buffer.isBuffer(b)) return b;
  if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
  return JSON.stringify(b);
}

const agents = new Map<string, Agent>();

/**
 * The keep-alive undici Agent for `target` + identity (one per distinct pair, reused). Close all
 * with {@link closeHttpClients} (ServerHandle.stop does) so Jest can exit.
 */
export function agentFor(target: HttpTarget, identity?: HttpIdentity, connections?: number): Agent {
  const tls = identityOf(target, identity);
  const key = `${target.url}\0${tls.cert ?? ''}\0${connections ?? ''}`;
  let a = agents.get(key);
  if (a === undefined) {
    a = new Agent({
      connect: { ca: target.caPem, ...tls },
      keepAliveTimeout: 10_000,
      ...(connections !== undefined ? { connections } : {}),
    });
    agents.set(key, a);
  }
  return a;
}

/**
 * Destroys every cached Agent, or those of `target` (idle keep-alive sockets would otherwise
 * hold the event loop).
 * Destroy, not close: a server being stopped or killed must not wait for a live watch.
 */
export async function closeHttpClients(target?: HttpTarget): Promise<void> {
  const all: Agent[] = [];
  for (const [key, a] of agents) {
    // With a target: only its agents. Servers starting side by side each retry their own
    // readiness probe; destroying the others' agents mid-request made them fail and destroy
    // everyone's in turn, which could go on until the start timeout.
    if (target && !key.startsWith(`${target.url}\0`)) continue;
    agents.delete(key);
    all.push(a);
  }
  await Promise.all(all.map((a) => a.destroy().catch(() => undefined)));
}

/** The value of an unlabelled metric on the target's /metrics (NaN when it is not there). */
export async function metricValue(target: HttpTarget, name: string): Promise<number> {
  const body = (await request(target, 'GET', '/metrics')).body;
  const line = body.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : NaN;
}

/** Sum of every series of a metric on /metrics (labelled or not); 0 when it has none. */
export async function metricSum(target: HttpTarget, name: string): Promise<number> {
  const body = (await request(target, 'GET', '/metrics')).body;
  let sum = 0;
  for (const line of body.split('\n')) if (line.startsWith(`${name} `) || line.startsWith(`${name}{`)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

/**
 * HTTP/1.1 request over TLS to `target.url + path`. Never throws on a status code; throws on
 * connection errors and on timeout.
 */
export async function request(target: HttpTarget, method: string, path: string, opts: RequestOptions = {}): Promise<HttpResponse> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
  const body = encodeBody(opts, headers);
  const timeout = opts.timeoutMs ?? 30_000;
  const res = await undiciRequest(new URL(path, target.url), {
    method,
    headers,
    ...(body !== undefined ? { body } : {}),
    dispatcher: agentFor(target, opts.identity),
    headersTimeout: timeout,
    bodyTimeout: timeout,
    signal: AbortSignal.timeout(timeout),
  });
  const text = await res.body.text();
  const h: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) {
    if (v !== undefined) h[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  }
  return makeResponse(res.statusCode, h, text);
}

/** A setup step: POSTs `body` to `path` and throws unless it was created (201). */
export async function createOrThrow(target: HttpTarget, path: string, body: unknown): Promise<void> {
  const r = await request(target, 'POST', path, { body });
  if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${r.body}`);
}

/**
 * The same over HTTP/2 (ALPN h2; fails if the server does not offer it). One session per call,
 * closed afterwards, so the test sees a fresh connection each time.
 */
export async function request2(target: HttpTarget, method: string, path: string, opts: RequestOptions = {}): Promise<HttpResponse> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
  const body = encodeBody(opts, headers);
  const tls = identityOf(target, opts.identity);
  const session = http2.connect(target.url, { ca: target.caPem, ...tls });
  try {
    return await new Promise<HttpResponse>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`HTTP/2 ${method} ${path} timed out`)), opts.timeoutMs ?? 30_000);
      session.once('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      const req = session.request({ ...headers, ':method': method, ':path': path });
      let status = 0;
      const h: Record<string, string> = {};
      const chunks: Buffer[] = [];
      req.on('response', (rh) => {
        status = Number(rh[':status']);
        for (const [k, v] of Object.entries(rh)) {
          if (!k.startsWith(':') && v !== undefined) h[k] = Array.isArray(v) ? v.join(', ') : String(v);
        }
      });
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        clearTimeout(timer);
        resolve(makeResponse(status, h, Buffer.concat(chunks).toString('utf8')));
      });
      req.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      req.end(body);
    });
  } finally {
    session.close();
  }
}
