/**
 * The small HTTPS client the token methods use to reach their identity provider or webhook: one
 * JSON request with a chosen CA (and client certificate), bounded in time and size.
 */
import * as https from 'node:https';

/** Options of {@link httpsJson}. */
export interface HttpsJsonOptions {
  method?: 'GET' | 'POST';
  body?: unknown;
  /** CA bundle the server's certificate must chain to; default Node's root CAs. */
  ca?: string;
  /** Client certificate and key presented to the server. */
  cert?: string;
  key?: string;
  /** Whole-request time limit; default 10 s. */
  timeoutMs?: number;
}

/** Largest answer read (discovery documents, key sets, TokenReviews are small). */
const MAX_BYTES = 1 << 20;

/** The answer of {@link httpsJson}. */
export interface HttpsJsonAnswer {
  status: number;
  /** The parsed JSON body (undefined when not JSON). */
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
}

/** Sends one request; resolves with the status, the parsed JSON body and the headers. */
export function httpsJson(url: string, opts: HttpsJsonOptions = {}): Promise<HttpsJsonAnswer> {
  const payload = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method: opts.method ?? 'GET',
        ...(opts.ca ? { ca: opts.ca } : {}),
        ...(opts.cert ? { cert: opts.cert, key: opts.key } : {}),
        headers: { accept: 'application/json', ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}) },
        timeout: opts.timeoutMs ?? 10_000,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_BYTES) req.destroy(new Error(`answer of ${url} is larger than ${MAX_BYTES} bytes`));
          else chunks.push(c);
        });
        res.on('end', () => {
          let body: unknown;
          try {
            body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, body, headers: res.headers });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`request to ${url} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}
