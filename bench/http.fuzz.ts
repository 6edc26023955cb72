/**
 * HTTP fuzzer (`npm run fuzz`, i.e. `node dist/bench/http.fuzz.js` after the build).
 *
 * Starts one API server node with the e2e harness and sends it FUZZ_CASES (default 100000)
 * generated requests (bench/http.cases.ts: random and mutated JSON, YAML, protobuf and garbage
 * bodies; Content-Type, Accept, Impersonate-* and Authorization headers; paths and query strings)
 * over HTTPS, half over HTTP/1.1 (node:https, keep-alive) and half over HTTP/2 (node:http2), with
 * FUZZ_CONCURRENCY (default 32) requests in flight, for at most FUZZ_SECONDS (default 1200).
 * FUZZ_SEED (default: random, printed) makes a run repeatable.
 *
 * Pass conditions: the server process is alive at the end; no 5xx other than 503/504; every
 * error answer is a Status (JSON, or the protobuf envelope when the answer is protobuf); every
 * request gets an answer; the server's RSS and open file descriptors (/proc/<pid>/fd), measured
 * with the client's connections closed and the server idle (RSS: the lowest of a bounded poll),
 * end within 10% of their values after the warm-up.
 * Prints cases/s, the status code histogram and RSS/fds, and for each violation (up to 10) a
 * reproducer. Exit code 0 on a pass, 1 on a violation, 2 when the run could not be made.
 */
import * as http2 from 'node:http2';
import * as https from 'node:https';
import { readdirSync, readFileSync } from 'node:fs';
import { metricValue, type ServerHandle, startServer } from '../test/support/server.js';
import { isEntryPoint } from '../cluster/entry-point.js';
import { allowedServerError, describeCase, type FuzzCase, generateCase, statusViolation } from './http.cases.js';

/** Settings of one run. */
export interface FuzzOptions {
  readonly cases: number;
  readonly concurrency: number;
  readonly seconds: number;
  readonly seed: number;
  /**
   * Judge RSS growth (default true). A short run's RSS after its warm-up is mostly V8 settling
   * (heap growth, code compiled on first use), not a leak, so `npm test`'s short run reports it
   * without judging it; `npm run fuzz` judges it.
   */
  readonly judgeRss?: boolean;
}

/** Outcome of one run. */
export interface FuzzReport {
  readonly sent: number;
  readonly seconds: number;
  readonly histogram: Readonly<Record<string, number>>;
  readonly violations: readonly string[];
  readonly rss: { readonly warm: number; readonly end: number };
  readonly fds: { readonly warm: number; readonly end: number };
}

interface Answer {
  readonly status: number;
  readonly contentType: string | undefined;
  readonly body: Buffer;
  /** The body was cut off after BODY_MS (a watch or other stream); the status still counts. */
  readonly streamed: boolean;
}

/**
 * Node flags of the fuzzed server: none, as in production. Capping the old space
 * (`--max-old-space-size=512`) made the server die in V8's regexp compiler ("RegExpCompiler
 * Allocation failed - process out of memory") with a 50 MB heap, in two of three short runs on
 * Node 20, and in none without the cap. A leak shows as RSS growth in the full run.
 */
export const SERVER_NODE_ARGS: readonly string[] = [];

/** How long a request may wait for its response headers; longer is a violation. */
const ANSWER_MS = 30_000;
/** How long a body is read before it counts as a stream and is cut off. */
const BODY_MS = 3_000;

/** A client-side refusal to send a generated header or path (not the server's doing). */
function clientRefused(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' && /^ERR_(INVALID_|UNESCAPED_|HTTP2_INVALID_|HTTP_INVALID_)/.test(code);
}

class Clients {
  private readonly agents: Record<'admin' | 'anon', https.Agent>;
  private readonly sessions: Partial<Record<'admin' | 'anon', http2.ClientHttp2Session>> = {};

  constructor(
    private readonly server: ServerHandle,
    concurrency: number,
  ) {
    const tls = { ca: server.caPem, keepAlive: true, maxSockets: Math.max(1, Math.ceil(concurrency / 2)) };
    this.agents = {
      admin: new https.Agent({ ...tls, cert: server.adminCertPem, key: server.adminKeyPem }),
      anon: new https.Agent(tls),
    };
  }

  private session(who: 'admin' | 'anon'): http2.ClientHttp2Session {
    const s = this.sessions[who];
    if (s !== undefined && !s.closed && !s.destroyed) return s;
    const made = http2.connect(this.server.url, {
      ca: this.server.caPem,
      ...(who === 'admin' ? { cert: this.server.adminCertPem, key: this.server.adminKeyPem } : {}),
    });
    made.on('error', () => undefined); // surfaced on the streams
    this.sessions[who] = made;
    return made;
  }

  send(c: FuzzCase): Promise<Answer> {
    return c.protocol === 'h2' ? this.sendH2(c) : this.sendH1(c);
  }

  private sendH1(c: FuzzCase): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string | number> = { ...c.headers };
      if (c.body !== undefined) headers['content-length'] = c.body.length;
      const req = https.request(this.server.url + c.path, { method: c.method, headers, agent: this.agents[c.admin ? 'admin' : 'anon'] });
      const timer = setTimeout(() => req.destroy(new Error(`no answer within ${ANSWER_MS} ms`)), ANSWER_MS);
      req.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      req.on('response', (res) => {
        clearTimeout(timer);
        const chunks: Buffer[] = [];
        const cut = setTimeout(() => {
          res.destroy();
          resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'], body: Buffer.concat(chunks), streamed: true });
        }, BODY_MS);
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('error', () => undefined);
        res.on('end', () => {
          clearTimeout(cut);
          resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'], body: Buffer.concat(chunks), streamed: false });
        });
      });
      req.end(c.body);
    });
  }

  private sendH2(c: FuzzCase): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const stream = this.session(c.admin ? 'admin' : 'anon').request(
        { ':method': c.method, ':path': c.path, ...c.headers },
        { endStream: c.body === undefined },
      );
      const timer = setTimeout(() => stream.close(http2.constants.NGHTTP2_CANCEL), ANSWER_MS);
      let answered = false;
      stream.on('error', (e) => {
        clearTimeout(timer);
        if (!answered) reject(e);
      });
      stream.on('close', () => {
        clearTimeout(timer);
        if (!answered) reject(new Error(`HTTP/2 stream closed without an answer (code ${stream.rstCode})`));
      });
      stream.on('response', (h) => {
        clearTimeout(timer);
        const status = Number(h[':status']);
        const ct = h['content-type'];
        const chunks: Buffer[] = [];
        const cut = setTimeout(() => {
          answered = true;
          stream.close(http2.constants.NGHTTP2_CANCEL);
          resolve({ status, contentType: ct, body: Buffer.concat(chunks), streamed: true });
        }, BODY_MS);
        stream.on('data', (d: Buffer) => chunks.push(d));
        stream.on('end', () => {
          clearTimeout(cut);
          answered = true;
          resolve({ status, contentType: ct, body: Buffer.concat(chunks), streamed: false });
        });
      });
      if (c.body !== undefined) stream.end(c.body);
    });
  }

  /** Closes every connection (so the server's descriptors can be counted without them). */
  close(): void {
    this.agents.admin.destroy();
    this.agents.anon.destroy();
    for (const s of Object.values(this.sessions)) s?.destroy();
    this.sessions.admin = undefined;
    this.sessions.anon = undefined;
  }
}

/** The process's resident set in bytes; NaN once it is gone. */
function rssBytes(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** The process's open file descriptors; NaN once it is gone. */
function fdCount(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return NaN;
  }
}

/** The server's fd count once it stops changing (closed connections take a moment), bounded. */
async function settledFds(pid: number): Promise<number> {
  let last = fdCount(pid);
  for (let i = 0; i < 50; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const now = fdCount(pid);
    if (now === last && i >= 4) return now;
    last = now;
  }
  return last;
}

/**
 * The server's RSS once idle: V8 gives memory back only when it collects, which an idle process
 * does within seconds (its memory reducer). Samples for up to `maxMs`, stopping early once a
 * sample is at or below `target`; returns the lowest sample.
 */
async function idleRss(pid: number, maxMs: number, target = 0): Promise<number> {
  let low = rssBytes(pid);
  for (const end = Date.now() + maxMs; Date.now() < end && !(low <= target);) {
    await new Promise((r) => setTimeout(r, 250));
    const now = rssBytes(pid);
    if (!(now >= low)) low = now;
  }
  return low;
}

/** Sends the cases to a running server and checks its answers and footprint. */
export async function runFuzz(server: ServerHandle, opts: FuzzOptions, log: (line: string) => void = () => undefined): Promise<FuzzReport> {
  const pid = server.pid;
  if (pid === undefined) throw new Error('server is not running');
  const histogram: Record<string, number> = {};
  const violations: string[] = [];
  // The warm-up is the first 10% of the cases, at least 1000 (half of a short run): the server's
  // first requests of each kind still load code and fill caches.
  const warmup = Math.min(Math.floor(opts.cases / 2), Math.max(1000, Math.floor(opts.cases / 10)));
  const deadline = Date.now() + opts.seconds * 1000;
  let next = 0;
  let sent = 0;
  const note = (c: FuzzCase, why: string): void => {
    if (violations.length < 10) violations.push(`${why}\n${describeCase(c)}`);
    else if (violations.length === 10) violations.push('(more violations left out)');
  };
  const runUntil = async (clients: Clients, end: number): Promise<void> => {
    const worker = async (): Promise<void> => {
      while (next < end && Date.now() < deadline && violations.length <= 10) {
        const c = generateCase(opts.seed, next++);
        sent++;
        let a: Answer;
        try {
          a = await clients.send(c);
        } catch (e) {
          if (clientRefused(e)) {
            histogram['client-refused'] = (histogram['client-refused'] ?? 0) + 1;
            continue;
          }
          histogram['no-answer'] = (histogram['no-answer'] ?? 0) + 1;
          note(c, `no answer: ${(e as Error).message}`);
          if (server.pid === undefined) return;
          continue;
        }
        const key = a.streamed ? `${a.status} (stream)` : String(a.status);
        histogram[key] = (histogram[key] ?? 0) + 1;
        if (!allowedServerError(a.status)) note(c, `answer ${a.status}: ${a.body.toString('utf8', 0, 500)}`);
        const bad = a.streamed ? undefined : statusViolation(c.method, a.status, a.contentType, a.body);
        if (bad !== undefined) note(c, `answer ${a.status}: ${bad}: ${a.body.toString('utf8', 0, 300)}`);
      }
    };
    await Promise.all(Array.from({ length: opts.concurrency }, worker));
  };

  const started = Date.now();
  let clients = new Clients(server, opts.concurrency);
  await runUntil(clients, warmup);
  clients.close();
  if (server.pid === undefined) return exited(server, sent, (Date.now() - started) / 1000, histogram, violations);
  const warm = { fds: await settledFds(pid), rss: await idleRss(pid, 5000) };
  log(`warm-up: ${sent} cases; server RSS ${(warm.rss / 2 ** 20).toFixed(1)} MiB, ${warm.fds} fds`);
  clients = new Clients(server, opts.concurrency);
  let reported = Date.now();
  const progress = setInterval(() => {
    if (Date.now() - reported < 10_000 || server.pid === undefined) return;
    reported = Date.now();
    const line = `${sent} cases, ${((sent * 1000) / (Date.now() - started)).toFixed(0)}/s, server RSS ${(rssBytes(pid) / 2 ** 20).toFixed(1)} MiB, ${fdCount(pid)} fds`;
    void metricValue(server, 'nodejs_heap_size_used_bytes').then(
      (heap) => log(`${line}, JS heap used ${(heap / 2 ** 20).toFixed(1)} MiB`),
      () => log(line),
    );
  }, 1000);
  try {
    await runUntil(clients, opts.cases);
  } finally {
    clearInterval(progress);
    clients.close();
  }
  const seconds = (Date.now() - started) / 1000;
  if (server.pid === undefined) return exited(server, sent, seconds, histogram, violations, warm);
  const end = { fds: await settledFds(pid), rss: await idleRss(pid, 30_000, warm.rss * 1.1) };
  if (end.fds > Math.ceil(warm.fds * 1.1)) violations.push(`open file descriptors grew from ${warm.fds} to ${end.fds}`);
  if (opts.judgeRss !== false && end.rss > warm.rss * 1.1)
    violations.push(`RSS grew from ${(warm.rss / 2 ** 20).toFixed(1)} to ${(end.rss / 2 ** 20).toFixed(1)} MiB`);
  return { sent, seconds, histogram, violations, rss: { warm: warm.rss, end: end.rss }, fds: { warm: warm.fds, end: end.fds } };
}

/** The report of a run whose server died: the crash is the violation, with the server's last words. */
function exited(
  server: ServerHandle,
  sent: number,
  seconds: number,
  histogram: Record<string, number>,
  violations: string[],
  warm: { rss: number; fds: number } = { rss: NaN, fds: NaN },
): FuzzReport {
  violations.unshift(`the server exited (${JSON.stringify(server.exited)}); its stderr ends with:\n${server.stderr.slice(-3000)}`);
  return { sent, seconds, histogram, violations, rss: { warm: warm.rss, end: NaN }, fds: { warm: warm.fds, end: NaN } };
}

function positiveInt(text: string | undefined, fallback: number, what: string): number {
  if (text === undefined || text === '') return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${what} must be a positive integer, got ${JSON.stringify(text)}`);
  return n;
}

/** Renders a report as the lines the command prints. */
export function formatReport(opts: FuzzOptions, r: FuzzReport): string {
  const mib = (b: number): string => (b / 2 ** 20).toFixed(1);
  const codes = Object.entries(r.histogram)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `  ${k}: ${v}`);
  return [
    `seed ${opts.seed}: ${r.sent} cases in ${r.seconds.toFixed(1)} s (${(r.sent / r.seconds).toFixed(0)} cases/s, concurrency ${opts.concurrency})`,
    'answers:',
    ...codes,
    `server RSS after warm-up ${mib(r.rss.warm)} MiB, at the end ${mib(r.rss.end)} MiB`,
    `server open fds after warm-up ${r.fds.warm}, at the end ${r.fds.end}`,
    r.violations.length === 0 ? 'PASS' : `FAIL: ${r.violations.length} violation(s)\n\n${r.violations.join('\n\n')}`,
  ].join('\n');
}

async function main(): Promise<number> {
  const opts: FuzzOptions = {
    cases: positiveInt(process.env.FUZZ_CASES, 100_000, 'FUZZ_CASES'),
    concurrency: positiveInt(process.env.FUZZ_CONCURRENCY, 32, 'FUZZ_CONCURRENCY'),
    seconds: positiveInt(process.env.FUZZ_SECONDS, 1200, 'FUZZ_SECONDS'),
    seed: positiveInt(process.env.FUZZ_SEED, 1 + Math.floor(Math.random() * 2 ** 31), 'FUZZ_SEED'),
  };
  const server = await startServer({ nodeArgs: SERVER_NODE_ARGS });
  try {
    process.stdout.write(`fuzzing ${server.url} (pid ${server.pid}) with seed ${opts.seed}\n`);
    const report = await runFuzz(server, opts, (l) => process.stdout.write(`${l}\n`));
    process.stdout.write(`${formatReport(opts, report)}\n`);
    return report.violations.length === 0 ? 0 : 1;
  } finally {
    await server.cleanup().catch(() => undefined);
  }
}

if (isEntryPoint(import.meta.url)) {
  try {
    process.exit(await main());
  } catch (e) {
    process.stderr.write(`fuzz: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(2);
  }
}
