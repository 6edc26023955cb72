/**
 * Small network helpers for tests and benchmarks.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';

/** Lowest port of the kernel's ephemeral range (outgoing connections take their local ports there). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 2048 && low <= 65535) return low;
  } catch {
    // Not Linux: fall back to the IANA dynamic range's start.
  }
  return 49152;
}

/**
 * Ports handed out by any test process of the machine lately, one file per port: a port is free
 * to bind from its check until the server it is for binds it (seconds later, once that server has
 * started), and in that window another process (another Jest worker, a benchmark it started)
 * could check the same port and hand it out too. A reservation holds for RESERVATION_MS; by then
 * the port is bound, or no longer wanted, and the bind check alone decides.
 */
const RESERVATIONS = join(tmpdir(), 'kapi-test-ports');
const RESERVATION_MS = 120_000;

/** Takes `port` for this process unless another one reserved it lately. */
function reserve(port: number): boolean {
  const file = join(RESERVATIONS, String(port));
  const take = (): boolean => {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
        mkdirSync(RESERVATIONS, { recursive: true });
        return take();
      }
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
      // Reservations cannot be written here: the bind check alone decides, as it would.
      return true;
    }
  };
  if (take()) return true;
  try {
    if (Date.now() - statSync(file).mtimeMs < RESERVATION_MS) return false;
    // Stale: another run's. Whoever removes it first and writes it anew has it.
    unlinkSync(file);
  } catch {
    // Removed or renewed by another process meanwhile.
  }
  return take();
}

/** Gives back a reservation of this process (the port turned out not to be bindable). */
function unreserve(port: number): void {
  try {
    unlinkSync(join(RESERVATIONS, String(port)));
  } catch {
    // Already gone.
  }
}

/** Ports handed out by this process, never handed out twice. */
const handedOut = new Set<number>();
let nextCandidate: number | undefined;

function bindable(port: number, host: string): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/**
 * Returns a TCP port that is free on `host`, chosen BELOW the kernel's ephemeral range: a port
 * from port 0 is an ephemeral one, which any outgoing connection on the machine (a client of
 * another test's server, a peer dialling) may take between this check and the caller's bind.
 * Ports below the range are only ever taken by an explicit bind. Each process starts at a
 * random place in a window of up to 16,384 ports under the range and walks upwards, one process
 * never hands out a port twice, and a port one process handed out lately is not handed out by
 * another (see RESERVATIONS).
 */
export async function getFreePort(host = '127.0.0.1'): Promise<number> {
  const high = ephemeralLow();
  const low = Math.max(1024, high - 16_384);
  const span = high - low;
  nextCandidate ??= low + Math.floor(Math.random() * span);
  for (let tries = 0; tries < span; tries++) {
    const port = nextCandidate;
    nextCandidate = nextCandidate + 1 >= high ? low : nextCandidate + 1;
    if (handedOut.has(port) || !reserve(port)) continue;
    if (await bindable(port, host)) {
      handedOut.add(port);
      return port;
    }
    unreserve(port);
  }
  throw new Error(`no free TCP port on ${host} in ${low}-${high - 1}`);
}

/** `n` distinct free ports from {@link getFreePort}. */
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

/** The addresses `outsideAddress` added to the loopback interface for the run. */
const added = new Set<string>();

/**
 * The first IPv4 address of this machine that is not loopback (proxies and Endpoints refuse
 * loopback addresses, as kube-apiserver does). A machine without one gets `fallback` added to
 * its loopback interface for the run (root only): an address outside 127/8 there is still
 * reached locally, and is global unicast. Test files that may run at once each name their own
 * fallback (198.18.0.0/15 is for benchmarking); `releaseOutsideAddresses` removes them again.
 */
export function outsideAddress(fallback: string): string {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  if (!added.has(fallback)) {
    try {
      execFileSync('ip', ['addr', 'add', `${fallback}/32`, 'dev', 'lo'], { stdio: 'pipe' });
    } catch (e) {
      // Left behind by a run that was killed: take it over.
      if (!String((e as { stderr?: Buffer }).stderr ?? '').includes('File exists')) throw e;
    }
    added.add(fallback);
  }
  return fallback;
}

/** Removes the addresses `outsideAddress` added. */
export function releaseOutsideAddresses(): void {
  for (const a of added) execFileSync('ip', ['addr', 'del', `${a}/32`, 'dev', 'lo']);
  added.clear();
}
