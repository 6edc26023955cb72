/**
 * Test prerequisites outside npm: haproxy, etcd, etcdctl and Linux network namespaces. A test that needs
 * one asks {@link prerequisite}; when it is missing the test FAILS with what to install, unless
 * the run opted out of it explicitly with `KAPI_TEST_WITHOUT=haproxy,etcd,etcdctl,netns` (any subset).
 * An opted-out gap is recorded under .tmp/test-run/uncovered/ and the run's reporter
 * (test/support/run.reporter.js) prints one line at the end naming every path not covered, so
 * a run without the tools can never look like a full one.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The prerequisites a test may ask for, as named in KAPI_TEST_WITHOUT. */
export type Prerequisite = 'haproxy' | 'etcd' | 'etcdctl' | 'netns';

/** What to install (or do) to get each prerequisite; part of the failure message. */
export const INSTALL_HINT: Readonly<Record<Prerequisite, string>> = {
  haproxy: 'install haproxy (Debian: apt-get install haproxy) so that `haproxy` is on PATH',
  etcd: 'install etcd (Debian: apt-get install etcd-server) so that `etcd` is on PATH',
  etcdctl: 'install etcdctl v3.4 (Debian: apt-get install etcd-client) so that `etcdctl` is on PATH',
  netns: 'run the tests as root on Linux with iproute2 (`ip netns`, veth and bridge links); in a container, give it CAP_NET_ADMIN',
};

/** Where opted-out gaps are recorded for the run's summary line (relative to the repo root). */
export const UNCOVERED_DIR = path.join('.tmp', 'test-run', 'uncovered');

/** The prerequisites named in KAPI_TEST_WITHOUT (unknown names throw: a typo must not pass silently). */
export function optedOut(env: NodeJS.ProcessEnv = process.env): Set<Prerequisite> {
  const out = new Set<Prerequisite>();
  for (const raw of (env.KAPI_TEST_WITHOUT ?? '').split(',')) {
    const name = raw.trim();
    if (name === '') continue;
    if (name !== 'haproxy' && name !== 'etcd' && name !== 'etcdctl' && name !== 'netns')
      throw new Error(`KAPI_TEST_WITHOUT: unknown prerequisite ${JSON.stringify(name)} (known: haproxy, etcd, etcdctl, netns)`);
    out.add(name);
  }
  return out;
}

/** An executable named `name` on PATH or in the sbin directories where Debian puts haproxy (the
 * directories the launcher's findExecutable also searches), or undefined. */
export function onPath(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of [...(env.PATH ?? '').split(path.delimiter), '/usr/sbin', '/usr/local/sbin', '/sbin']) {
    if (dir === '') continue;
    const file = path.join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * Whether this machine lets us create namespaces and veth pairs: tries it with a throwaway
 * namespace and pair, removed again. Needs root (CAP_NET_ADMIN) and iproute2.
 */
export function probeNetns(): { readonly available: boolean; readonly reason?: string } {
  const tag = `kp${process.pid.toString(36)}`;
  const ip = (args: readonly string[]): string => execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    if (typeof process.getuid === 'function' && process.getuid() !== 0) return { available: false, reason: 'not root' };
    if (onPath('ip') === undefined) return { available: false, reason: '`ip` (iproute2) is not on PATH' };
    ip(['netns', 'add', tag]);
    try {
      ip(['link', 'add', `${tag}a`, 'type', 'veth', 'peer', 'name', `${tag}b`]);
      ip(['link', 'del', `${tag}a`]);
    } finally {
      ip(['netns', 'del', tag]);
    }
    return { available: true };
  } catch (e) {
    return { available: false, reason: (e as Error).message.split('\n')[0] };
  }
}

/** Raised when a prerequisite is missing and the run did not opt out of it. */
export class MissingPrerequisiteError extends Error {
  constructor(
    readonly prerequisite: Prerequisite,
    reason: string,
    needs: string,
  ) {
    super(
      `missing test prerequisite ${prerequisite} (${reason}), needed for ${needs}: ${INSTALL_HINT[prerequisite]}. ` +
        `To run without it on purpose, set KAPI_TEST_WITHOUT=${prerequisite}; the run then reports this path as not covered.`,
    );
    this.name = 'MissingPrerequisiteError';
  }
}

function available(p: Prerequisite, env: NodeJS.ProcessEnv): { ok: boolean; reason: string } {
  if (p === 'netns') {
    const r = probeNetns();
    return { ok: r.available, reason: r.reason ?? '' };
  }
  return onPath(p, env) !== undefined ? { ok: true, reason: '' } : { ok: false, reason: `no \`${p}\` executable on PATH` };
}

/** The repository root: the nearest ancestor of this file with a package.json, outside dist/. */
function repoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'package.json')) && !dir.endsWith(`${path.sep}dist`)) return dir;
    const up = path.dirname(dir);
    if (up === dir) return process.cwd();
    dir = up;
  }
}

/** Records that `needs` was not covered because `p` was opted out (read by the run reporter). */
export function recordUncovered(p: Prerequisite, needs: string, dir = path.join(repoRoot(), UNCOVERED_DIR)): void {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${process.pid}-${randomBytes(4).toString('hex')}.json`);
  writeFileSync(file, JSON.stringify({ prerequisite: p, needs }));
}

/**
 * Whether prerequisite `p` is present. Present: true. Missing and opted out via
 * KAPI_TEST_WITHOUT: records `needs` (what goes untested, in words) as not covered and returns
 * false, so the caller takes its documented reduced path. Missing and not opted out: throws
 * {@link MissingPrerequisiteError} naming what to install. Call it inside a test or hook, so
 * the failure is reported against that test. `opts` replace the environment and the record
 * directory (for the helper's own test).
 */
export function prerequisite(p: Prerequisite, needs: string, opts: { env?: NodeJS.ProcessEnv; recordDir?: string } = {}): boolean {
  const env = opts.env ?? process.env;
  const skip = optedOut(env);
  const a = available(p, env);
  if (a.ok) return true;
  if (skip.has(p)) {
    recordUncovered(p, needs, opts.recordDir);
    return false;
  }
  throw new MissingPrerequisiteError(p, a.reason, needs);
}
