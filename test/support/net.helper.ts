/**
 * Small network helpers for tests and benchmarks.
 */
import * as net from 'node:net';

/**
 * Returns a TCP port that was free a moment ago on `host`: listens on port 0, reads the port the
 * kernel chose, closes. Another process may take it before the caller binds it (unavoidable with
 * this technique); callers that must not flake should retry on EADDRINUSE.
 */
export async function getFreePort(host = '127.0.0.1'): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen({ port: 0, host, exclusive: true }, () => {
      const addr = srv.address();
      if (addr === null || typeof addr === 'string') {
        srv.close();
        reject(new Error('listen on port 0 returned no TCP address'));
        return;
      }
      srv.close(() => resolve(addr.port));
    });
  });
}

/** `n` distinct ports from {@link getFreePort} (same caveat). */
export async function getFreePorts(n: number, host = '127.0.0.1'): Promise<number[]> {
  const out: number[] = [];
  while (out.length < n) {
    const p = await getFreePort(host);
    if (!out.includes(p)) out.push(p);
  }
  return out;
}

/** Resolves after `ms` milliseconds. */
export function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * Polls `fn` every 100 ms until it returns a truthy value (resolved with it), or throws
 * `timed out waiting for <what>` after `timeoutMs`.
 */
export async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await delay(100);
  }
}
