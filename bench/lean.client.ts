/**
 * A lean HTTP/1.1 client for the benchmarks' load phases (docs/performance.md, "Fourth
 * round"): keep-alive TLS connections with client certificates, one request in flight per
 * connection and no pipelining (what kubectl's HTTP/1.1 transport does), requests written as one
 * buffer, responses framed by Content-Length or chunked encoding.
 *
 * Why not undici for these phases: the benchmarks run the load generator on the same cores as
 * the servers it measures. undici cost ~55-65 µs of CPU per create here (more on a slow host),
 * this client ~30-38 (most of it TLS): CPU the servers under test do not get, so a lighter
 * client measures them more and itself less. Setup requests and the apply and watch benchmarks still use undici.
 */
import * as tls from 'node:tls';

/** A request of a load phase. */
export interface LeanRequest {
  readonly method: string;
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

/** What a load phase reads of a response (the subset of undici's it uses). */
export interface LeanResponse {
  readonly statusCode: number;
  readonly body: { text(): Promise<string> };
}

/** What a load phase sends requests through (LeanPool; the phases need nothing more). */
export interface BenchClient {
  request(r: LeanRequest): Promise<LeanResponse>;
  close(): Promise<void>;
}

/** TLS material of the client: the CA to verify the server with, and the client certificate (none: the client presents no certificate). */
export interface LeanTls {
  readonly ca: string | Buffer;
  readonly cert?: string | Buffer;
  readonly key?: string | Buffer;
}

export interface LeanPoolOptions {
  /** Connections opened at most (each carries one request at a time). */
  readonly connections: number;
  readonly tls: LeanTls;
  /** A request without a complete response after this long fails and its connection is closed. */
  readonly timeoutMs?: number;
  /** Largest response accepted, in bytes (default 64 MiB). */
  readonly maxResponseBytes?: number;
  /**
   * A connection idle for longer is closed and a new one opened before the next request
   * (default 4 s, less when the server announces a shorter `Keep-Alive: timeout`), so a request
   * is never written into a connection the server is closing for idleness.
   */
  readonly maxIdleMs?: number;
}

const HEADER_END = Buffer.from('\r\n\r\n');

interface Pending {
  resolve(r: LeanResponse): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
  /** Offset of the body in `buf` once the head is parsed, else -1. */
  bodyStart: number;
  status: number;
  /** Body length by Content-Length; -1 for chunked. */
  length: number;
  close: boolean;
}

/** Parses a response head (status line and headers, without the final CRLFCRLF). */
export function parseHead(head: string, method: string): { status: number; length: number; close: boolean; keepAliveMs?: number } {
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(head);
  if (!m) throw new Error(`malformed response status line: ${JSON.stringify(head.slice(0, 40))}`);
  const status = Number(m[1]);
  let length = 0;
  let close = head.startsWith('HTTP/1.0');
  let framed = false;
  let keepAliveMs: number | undefined;
  for (const line of head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line
      .slice(colon + 1)
      .trim()
      .toLowerCase();
    if (name === 'content-length') {
      length = Number(value);
      if (!Number.isSafeInteger(length) || length < 0) throw new Error(`bad content-length ${JSON.stringify(value)}`);
      framed = true;
    } else if (name === 'transfer-encoding' && value.split(',').some((v) => v.trim() === 'chunked')) {
      length = -1;
      framed = true;
    } else if (name === 'connection') {
      close = value.split(',').some((v) => v.trim() === 'close');
    } else if (name === 'keep-alive') {
      const t = /(?:^|,)\s*timeout=(\d+)/.exec(value);
      if (t) keepAliveMs = Number(t[1]) * 1000;
    }
  }
  // Responses that never have a body (RFC 9112 6.3); an unframed body would run to the close.
  if (method === 'HEAD' || status === 204 || status === 304 || (status >= 100 && status < 200)) length = 0;
  else if (!framed) throw new Error('response without Content-Length or chunked encoding');
  return keepAliveMs === undefined ? { status, length, close } : { status, length, close, keepAliveMs };
}

/**
 * Decodes a chunked body starting at `buf[from]`: the body and the offset after it, or undefined
 * while incomplete. Trailers are skipped.
 */
export function decodeChunked(buf: Buffer, from: number): { body: Buffer; end: number } | undefined {
  const parts: Buffer[] = [];
  let off = from;
  for (;;) {
    const eol = buf.indexOf('\r\n', off);
    if (eol < 0) return undefined;
    const size = parseInt(buf.subarray(off, eol).toString('latin1').split(';')[0]!.trim(), 16);
    if (!Number.isSafeInteger(size) || size < 0) throw new Error('bad chunk size');
    if (size === 0) {
      // Trailer section: header lines up to an empty line.
      let p = eol + 2;
      for (;;) {
        const e = buf.indexOf('\r\n', p);
        if (e < 0) return undefined;
        if (e === p) return { body: Buffer.concat(parts), end: e + 2 };
        p = e + 2;
      }
    }
    if (buf.length < eol + 2 + size + 2) return undefined;
    parts.push(buf.subarray(eol + 2, eol + 2 + size));
    off = eol + 2 + size + 2;
  }
}

class Connection {
  /** The current socket (set as soon as it is created); events of older sockets are ignored. */
  private socket: tls.TLSSocket | undefined;
  private connected: Promise<void> | undefined;
  private buf: Buffer = Buffer.alloc(0);
  private pending: Pending | undefined;
  private method = 'GET';
  /** When the last response ended, and how long the server keeps an idle connection. */
  private idleSince = 0;
  private serverIdleMs = Number.POSITIVE_INFINITY;

  constructor(
    private readonly url: URL,
    private readonly o: LeanPoolOptions,
  ) {}

  private connect(): Promise<void> {
    const host = this.url.hostname.replace(/^\[|\]$/g, '');
    const s = tls.connect({
      host,
      port: Number(this.url.port || 443),
      ca: this.o.tls.ca,
      cert: this.o.tls.cert,
      key: this.o.tls.key,
      ALPNProtocols: ['http/1.1'],
      ...(/^[\d.]+$|:/.test(host) ? {} : { servername: host }),
    });
    this.socket = s;
    this.buf = Buffer.alloc(0);
    s.setNoDelay(true);
    s.on('data', (d: Buffer) => {
      if (this.socket === s) this.onData(d);
    });
    s.on('close', () => {
      if (this.socket === s) this.drop(new Error('connection closed by the server'));
    });
    this.connected = new Promise<void>((resolve, reject) => {
      s.once('secureConnect', () => {
        this.idleSince = Date.now();
        resolve();
      });
      s.on('error', (e) => {
        reject(e);
        if (this.socket === s) this.drop(e);
      });
      // A close during the handshake without an error must not leave the request waiting.
      s.once('close', () => reject(new Error('connection closed before the TLS handshake completed')));
    });
    return this.connected;
  }

  /** Closes the socket; a request in flight fails (the next one reconnects). */
  private drop(e: Error): void {
    this.socket?.destroy();
    this.socket = undefined;
    this.connected = undefined;
    this.buf = Buffer.alloc(0);
    const p = this.pending;
    this.pending = undefined;
    if (p) {
      clearTimeout(p.timer);
      p.reject(e);
    }
  }

  private onData(d: Buffer): void {
    this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
    const p = this.pending;
    if (!p) {
      this.drop(new Error('unexpected data without a request in flight'));
      return;
    }
    try {
      if (this.buf.length > (this.o.maxResponseBytes ?? 64 << 20)) throw new Error('response too large');
      for (;;) {
        if (p.bodyStart < 0) {
          const end = this.buf.indexOf(HEADER_END);
          if (end < 0) return;
          const h = parseHead(this.buf.subarray(0, end).toString('latin1'), this.method);
          p.bodyStart = end + 4;
          p.status = h.status;
          p.length = h.length;
          p.close = h.close;
          if (h.keepAliveMs !== undefined) this.serverIdleMs = h.keepAliveMs;
        }
        // An interim 1xx response: its head is dropped and the real one awaited.
        if (p.status < 200) {
          this.buf = this.buf.subarray(p.bodyStart);
          p.bodyStart = -1;
          continue;
        }
        break;
      }
      let body: Buffer;
      let end: number;
      if (p.length >= 0) {
        end = p.bodyStart + p.length;
        if (this.buf.length < end) return;
        body = this.buf.subarray(p.bodyStart, end);
      } else {
        const c = decodeChunked(this.buf, p.bodyStart);
        if (!c) return;
        ({ body, end } = c);
      }
      const text = body.toString('utf8');
      this.buf = this.buf.subarray(end);
      this.pending = undefined;
      clearTimeout(p.timer);
      this.idleSince = Date.now();
      if (p.close) this.drop(new Error('closed'));
      p.resolve({ statusCode: p.status, body: { text: () => Promise.resolve(text) } });
    } catch (e) {
      this.drop(e as Error);
    }
  }

  async request(r: LeanRequest): Promise<LeanResponse> {
    if (this.pending) throw new Error('a request is already in flight on this connection');
    // Leave a second of margin below the server's announced idle timeout.
    const maxIdle = Math.min(this.o.maxIdleMs ?? 4_000, this.serverIdleMs - 1_000);
    if (this.socket && this.connected && Date.now() - this.idleSince > maxIdle) this.drop(new Error('idle'));
    await (this.connected ?? this.connect());
    const socket = this.socket;
    if (!socket) throw new Error('connection lost');
    const body = r.body ?? '';
    let head = `${r.method} ${r.path} HTTP/1.1\r\nhost: ${this.url.host}\r\n`;
    for (const [k, v] of Object.entries(r.headers ?? {})) head += `${k}: ${v}\r\n`;
    if (body.length > 0 || r.method === 'POST' || r.method === 'PUT' || r.method === 'PATCH') head += `content-length: ${Buffer.byteLength(body)}\r\n`;
    this.method = r.method;
    return new Promise<LeanResponse>((resolve, reject) => {
      const timer = setTimeout(() => this.drop(new Error(`no response within ${this.o.timeoutMs ?? 60_000} ms`)), this.o.timeoutMs ?? 60_000);
      this.pending = { resolve, reject, timer, bodyStart: -1, status: 0, length: 0, close: false };
      socket.write(`${head}\r\n${body}`);
    });
  }

  close(): void {
    this.socket?.end();
    this.socket = undefined;
    this.connected = undefined;
  }
}

/** A fixed-size pool of Connections to one origin (https://host:port). */
export class LeanPool implements BenchClient {
  private readonly url: URL;
  private readonly idle: Connection[] = [];
  private readonly all: Connection[] = [];
  private readonly waiters: ((c: Connection) => void)[] = [];

  constructor(
    origin: string,
    private readonly o: LeanPoolOptions,
  ) {
    this.url = new URL(origin);
    if (this.url.protocol !== 'https:') throw new Error(`LeanPool speaks HTTPS only, got ${origin}`);
    if (!(o.connections >= 1)) throw new Error('connections must be at least 1');
  }

  async request(r: LeanRequest): Promise<LeanResponse> {
    let c = this.idle.pop();
    if (!c) {
      if (this.all.length < this.o.connections) {
        c = new Connection(this.url, this.o);
        this.all.push(c);
      } else {
        c = await new Promise<Connection>((resolve) => this.waiters.push(resolve));
      }
    }
    try {
      return await c.request(r);
    } finally {
      const next = this.waiters.shift();
      if (next) next(c);
      else this.idle.push(c);
    }
  }

  async close(): Promise<void> {
    for (const c of this.all) c.close();
  }
}
