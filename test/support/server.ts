/**
 * The e2e harness: starts the real API server as a child process on a free port with a fresh
 * data directory, waits until it is ready, and hands back everything a test needs to talk to it
 * (kubeconfig for kubectl, PEMs for HTTPS clients), plus stop/kill/restart.
 *
 * Server contract relied on (DESIGN.md "Contracts"):
 *   node dist/apps/apiserver/src/main.js --data-dir D --secure-port P [--bind-address 127.0.0.1]
 * creates its PKI, writes `D/admin.kubeconfig`, prints `Admin kubeconfig: <path>` when ready,
 * and `GET /readyz` answers 200 `ok`.
 *
 * Readiness: every 50 ms the harness looks for credentials (the printed kubeconfig, else
 * `D/admin.kubeconfig`, else a PKI directory: `--pki-dir`, `D/pki`, `D`) and, once it has them,
 * asks `/readyz` with the admin client certificate. Timeout 45 s (a node is ready in 1-2 s; on
 * two cores shared with a test run it has taken over 20); the error carries the tail of the
 * server's stderr. The harness then writes its own kubeconfig pointing at the actual port
 * (the server's may name the default 6443), which `handle.kubeconfig` is.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseKubeconfig, writeKubeconfig } from '@app/pki';
import { type HttpTarget, closeHttpClients, request } from './http.helper.js';
import { type KubectlOptions, type KubectlResult, type KubectlTarget, runKubectl } from './kubectl.helper.js';
import { type EtcdCluster, startEtcd } from './etcd.js';
import { delay, getFreePort } from './net.helper.js';

export * from './http.helper.js';
export * from './kubectl.helper.js';
export * from './net.helper.js';

/** Options of {@link startServer}. */
export interface StartServerOptions {
  /** Extra server flags after `--data-dir` and `--secure-port`. */
  readonly args?: readonly string[];
  /** Use this data dir (kept on cleanup); default: a fresh temp dir (removed on cleanup). */
  readonly dataDir?: string;
  /** Extra environment for the server process. */
  readonly env?: Readonly<Record<string, string>>;
  /** Port to serve on; default a free one. */
  readonly port?: number;
  /** Script to run with node; default `<repo>/dist/apps/apiserver/src/main.js` (env KAPI_SERVER_ENTRY overrides). */
  readonly entry?: string;
  /** Readiness timeout. Default 45 s. */
  readonly readyTimeoutMs?: number;
  /** Extra node flags (e.g. `--max-old-space-size=512`). */
  readonly nodeArgs?: readonly string[];
  /** Command prefix the server runs under, e.g. `['ip', 'netns', 'exec', 'ns1']` (chaos tests put
   * each node in its own network namespace). It must exec the server (not fork it), so that
   * `pid` and signals reach the server itself. Default: none. */
  readonly wrap?: readonly string[];
  /** Address the server binds (`--bind-address`, unless args give one) and the harness dials.
   * Default 127.0.0.1. */
  readonly host?: string;
}

/** Typed failure of the harness (server exited early, never became ready, bad state). */
export class ServerStartError extends Error {
  override readonly name = 'ServerStartError';
}

/** Keeps the last `max` characters written to a stream, and lines for waiting on. */
class LogBuffer {
  private text = '';
  constructor(private readonly max = 1_000_000) {}
  append(chunk: string): void {
    this.text += chunk;
    if (this.text.length > this.max) this.text = this.text.slice(this.text.length - this.max);
  }
  get value(): string {
    return this.text;
  }
  tail(lines = 40): string {
    return this.text
      .split('\n')
      .slice(-lines - 1)
      .join('\n');
  }
}

/**
 * Runs the built server with `args` (and `env` added to this process's) until it exits, killed
 * after `timeoutMs`: its exit code and stderr. For start-up refusals.
 */
export function runServerToExit(
  args: readonly string[],
  env: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const entry = path.join(repoRoot(), 'dist', 'apps', 'apiserver', 'src', 'main.js');
    const child = spawn(process.execPath, [entry, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

/** Repository root: the nearest ancestor of this file holding package.json (works from
 * test/support in ts-jest and from dist/test/support in the build). */
export function repoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'package.json')) && !dir.endsWith(`${path.sep}dist`)) return dir;
    const up = path.dirname(dir);
    if (up === dir) return process.cwd();
    dir = up;
  }
}

interface Credentials {
  readonly caPem: string;
  readonly adminCertPem: string;
  readonly adminKeyPem: string;
  readonly source: string;
}

const live = new Set<ServerHandle>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // A crashed test must not leave servers running on the shared machine.
  process.once('exit', () => {
    for (const h of live) h.process?.kill('SIGKILL');
  });
  // Nor does a harness process stopped by a signal (a benchmark killed with `kill`): Node's
  // default for these signals exits without the 'exit' event. Only when nothing else handles them.
  for (const sig of ['SIGTERM', 'SIGHUP'] as const) {
    if (process.listenerCount(sig) > 0) continue;
    process.once(sig, () => {
      for (const h of live) h.process?.kill('SIGKILL');
      process.exit(128 + (sig === 'SIGTERM' ? 15 : 1));
    });
  }
}

/**
 * A running (or stopped) server under test. Fields that change on restart (`pid`, `process`)
 * are read through the handle, so keep the handle, not copies.
 */
export class ServerHandle implements HttpTarget, KubectlTarget {
  /** The child process; undefined while stopped. */
  process: ChildProcess | undefined;
  caPem = '';
  adminCertPem = '';
  adminKeyPem = '';
  /** The kubeconfig path the server printed (or `dataDir/admin.kubeconfig`), if any. */
  serverKubeconfig: string | undefined;
  private readonly out = new LogBuffer();
  private readonly err = new LogBuffer();
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private exitWaiters: Array<() => void> = [];
  /** Run by cleanup() after the server stopped (the external etcd of KAPI_TEST_STORAGE=etcd3). */
  readonly cleanups: Array<() => Promise<void>> = [];

  /** @internal use {@link startServer}. */
  constructor(
    readonly port: number,
    readonly dataDir: string,
    /** Harness-private dir: kubeconfig, kubectl cache, HOME. Removed by cleanup(). */
    readonly harnessDir: string,
    /** Temp dir holding harnessDir and, when the harness chose it, dataDir. */
    private readonly baseDir: string,
    private readonly command: readonly string[],
    private readonly env: Readonly<Record<string, string>>,
    private readonly readyTimeoutMs: number,
    private readonly pkiDirArg: string | undefined,
    /** Address the harness dials (StartServerOptions.host). */
    readonly host = '127.0.0.1',
  ) {}

  /** `https://<host>:<port>` (host 127.0.0.1 unless StartServerOptions.host). */
  get url(): string {
    return `https://${this.host.includes(':') ? `[${this.host}]` : this.host}:${this.port}`;
  }
  /** Harness-written kubeconfig for this server's actual port (admin credentials). */
  get kubeconfig(): string {
    return path.join(this.harnessDir, 'kubeconfig');
  }
  get kubectlCacheDir(): string {
    return path.join(this.harnessDir, 'kube-cache');
  }
  get homeDir(): string {
    return path.join(this.harnessDir, 'home');
  }
  get pid(): number | undefined {
    return this.process?.pid;
  }
  /** Everything the server wrote to stdout (last 1 MB). */
  get stdout(): string {
    return this.out.value;
  }
  /** Everything the server wrote to stderr (last 1 MB). */
  get stderr(): string {
    return this.err.value;
  }
  /** Exit status of the last run, once it exited. */
  get exited(): { code: number | null; signal: NodeJS.Signals | null } | undefined {
    return this.exitInfo;
  }

  /** Spawns the process and waits for readiness; on failure kills it and rejects with ServerStartError. */
  async start(): Promise<void> {
    if (this.process !== undefined) throw new ServerStartError('server is already running');
    installExitHook();
    this.exitInfo = undefined;
    const [cmd, ...args] = this.command;
    const child = spawn(cmd!, args, {
      env: { ...process.env, ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.process = child;
    live.add(this);
    const verbose = process.env.KAPI_E2E_VERBOSE === '1';
    child.stdout!.setEncoding('utf8').on('data', (c: string) => {
      this.out.append(c);
      if (verbose) process.stderr.write(`[srv:${this.port}] ${c}`);
      const m = /^Admin kubeconfig: (.+)$/m.exec(c);
      if (m !== null) this.serverKubeconfig = m[1]!.trim();
    });
    child.stderr!.setEncoding('utf8').on('data', (c: string) => {
      this.err.append(c);
      if (verbose) process.stderr.write(`[srv:${this.port}!] ${c}`);
    });
    child.once('exit', (code, signal) => {
      this.exitInfo = { code, signal };
      this.process = undefined;
      live.delete(this);
      const w = this.exitWaiters;
      this.exitWaiters = [];
      for (const f of w) f();
    });
    child.once('error', (e) => this.err.append(`spawn error: ${e.message}\n`));
    try {
      await this.waitReady();
    } catch (e) {
      await this.kill();
      throw e;
    }
  }

  private async findCredentials(): Promise<Credentials | undefined> {
    const kubeconfigs = [this.serverKubeconfig, path.join(this.dataDir, 'admin.kubeconfig')];
    for (const k of kubeconfigs) {
      if (k === undefined) continue;
      try {
        const c = parseKubeconfig(await fs.readFile(k, 'utf8'));
        return { caPem: c.caPem, adminCertPem: c.certPem, adminKeyPem: c.keyPem, source: k };
      } catch {
        // missing or half-written: try the next source, and again on the next poll
      }
    }
    const pkiDirs = [this.pkiDirArg, path.join(this.dataDir, 'pki'), this.dataDir];
    for (const d of pkiDirs) {
      if (d === undefined) continue;
      try {
        const [caPem, adminCertPem, adminKeyPem] = await Promise.all(['ca.crt', 'admin.crt', 'admin.key'].map((f) => fs.readFile(path.join(d, f), 'utf8')));
        if (caPem!.includes('END CERTIFICATE') && adminKeyPem!.includes('END')) {
          return { caPem: caPem!, adminCertPem: adminCertPem!, adminKeyPem: adminKeyPem!, source: d };
        }
      } catch {
        // not there (yet)
      }
    }
    return undefined;
  }

  private async waitReady(): Promise<void> {
    const started = Date.now();
    const deadline = started + this.readyTimeoutMs;
    let last = 'no credentials found yet';
    while (Date.now() < deadline) {
      if (this.exitInfo !== undefined) {
        throw new ServerStartError(
          `server exited before ready (code ${this.exitInfo.code}, signal ${this.exitInfo.signal}); stderr tail:\n${this.err.tail()}\nstdout tail:\n${this.out.tail(10)}`,
        );
      }
      const creds = await this.findCredentials();
      if (creds !== undefined) {
        this.caPem = creds.caPem;
        this.adminCertPem = creds.adminCertPem;
        this.adminKeyPem = creds.adminKeyPem;
        try {
          const res = await request(this, 'GET', '/readyz', { timeoutMs: 2_000 });
          if (res.status === 200) {
            await this.writeHarnessKubeconfig();
            return;
          }
          last = `/readyz answered ${res.status}: ${res.body.slice(0, 200)}`;
        } catch (e) {
          last = `/readyz failed: ${(e as Error).message}`;
          // a TLS failure may mean we read a stale/other PKI; drop this server's cached agents
          // (only its own: other servers may be starting beside it) and retry
          await closeHttpClients(this);
        }
      }
      await delay(50);
    }
    throw new ServerStartError(
      `server on port ${this.port} not ready after ${this.readyTimeoutMs} ms (${last}); stderr tail:\n${this.err.tail()}\nstdout tail:\n${this.out.tail(10)}`,
    );
  }

  private async writeHarnessKubeconfig(): Promise<void> {
    await fs.mkdir(this.kubectlCacheDir, { recursive: true });
    await fs.mkdir(this.homeDir, { recursive: true });
    await writeKubeconfig(this.kubeconfig, {
      server: this.url,
      caPem: this.caPem,
      certPem: this.adminCertPem,
      keyPem: this.adminKeyPem,
      clusterName: 'e2e',
    });
  }

  /** Resolves when the process has exited (immediately if stopped). */
  waitExit(): Promise<void> {
    if (this.process === undefined) return Promise.resolve();
    return new Promise((r) => this.exitWaiters.push(r));
  }

  /**
   * Sends `signal` (default SIGTERM) and waits for exit; after `graceMs` (default 10 s) sends
   * SIGKILL. Closes this server's cached HTTP clients, and every cached client once no server
   * runs (so Jest can exit); requests in flight to other servers go on. Returns the exit status
   * (undefined if not running).
   */
  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 10_000): Promise<{ code: number | null; signal: NodeJS.Signals | null } | undefined> {
    await closeHttpClients(this);
    const p = this.process;
    if (p === undefined) {
      if (live.size === 0) await closeHttpClients();
      return this.exitInfo;
    }
    const exited = this.waitExit();
    p.kill(signal);
    const timer = setTimeout(() => p.kill('SIGKILL'), graceMs);
    await exited.finally(() => clearTimeout(timer));
    if (live.size === 0) await closeHttpClients();
    return this.exitInfo;
  }

  /** SIGKILL (a crash: nothing is flushed) and wait for exit. */
  async kill(): Promise<void> {
    await this.stop('SIGKILL');
  }

  /** Stops (SIGTERM) if running, then starts again on the same port and data dir and waits ready. */
  async restart(): Promise<void> {
    await this.stop();
    this.serverKubeconfig = undefined;
    await this.start();
  }

  /** Stops the server and removes the harness dir, and the data dir if the harness created it
   * (a data dir passed in by the caller is kept). */
  async cleanup(): Promise<void> {
    await this.stop();
    for (const c of this.cleanups.splice(0)) await c();
    await fs.rm(this.baseDir, { recursive: true, force: true });
  }
}

/** The storage the harness runs servers on: `builtin` (default) or `etcd3` (KAPI_TEST_STORAGE). */
export function testStorage(): 'builtin' | 'etcd3' {
  const v = process.env.KAPI_TEST_STORAGE ?? 'builtin';
  if (v !== 'builtin' && v !== 'etcd3') throw new ServerStartError(`KAPI_TEST_STORAGE: unknown storage ${JSON.stringify(v)} (builtin or etcd3)`);
  return v;
}

/**
 * The server flags of an external etcd for `extra` (see the module comment): the etcd flags
 * added, the built-in store's compaction flag translated. Unchanged when not applicable.
 */
export function etcdServerArgs(extra: readonly string[], etcd: EtcdCluster): string[] {
  const out: string[] = [];
  for (let i = 0; i < extra.length; i++) {
    const a = extra[i]!;
    if (a === '--compaction-interval' || a.startsWith('--compaction-interval=')) {
      const v = a.includes('=') ? a.slice(a.indexOf('=') + 1) : extra[++i]!;
      out.push('--etcd-compaction-interval', v === '0' ? '0' : `${v}s`);
    } else out.push(a);
  }
  return [...etcd.apiServerArgs(), ...out];
}

function flagValue(args: readonly string[], flag: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === flag) return args[i + 1];
    if (a.startsWith(`${flag}=`)) return a.slice(flag.length + 1);
  }
  return undefined;
}

/**
 * The Nodes tests register have no kubelet behind them: they post status once or never. The
 * node lifecycle controller would turn them Unknown and taint them after a minute, so the test
 * servers give nodes a day of grace unless a test sets its own (test/node-lifecycle.test.ts).
 */
const NO_KUBELET_ENV: Record<string, string> = { KAPI_NODE_STARTUP_GRACE_MS: '86400000', KAPI_NODE_MONITOR_GRACE_MS: '86400000' };
/**
 * Starts an API server process (see the module comment for the contract) and waits until it is
 * ready. Call `handle.cleanup()` (or `stop()`) in afterAll/afterEach.
 */
export async function startServer(opts: StartServerOptions = {}): Promise<ServerHandle> {
  const root = repoRoot();
  const entry = opts.entry ?? process.env.KAPI_SERVER_ENTRY ?? path.join(root, 'dist', 'apps', 'apiserver', 'src', 'main.js');
  if (!existsSync(entry)) throw new ServerStartError(`server entry ${entry} does not exist (run npm run build first)`);
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'kapi-e2e-'));
  const dataDir = opts.dataDir ?? path.join(base, 'data');
  const harnessDir = path.join(base, 'harness');
  await fs.mkdir(harnessDir, { recursive: true });
  const port = opts.port ?? (await getFreePort());
  let extra = opts.args ?? [];
  let etcd: EtcdCluster | undefined;
  if (testStorage() === 'etcd3' && flagValue(extra, '--storage-backend') === undefined && flagValue(extra, '--initial-cluster') === undefined) {
    etcd = await startEtcd({ members: 1 });
    extra = etcdServerArgs(extra, etcd);
  }
  const args = [...(opts.nodeArgs ?? []), entry, '--data-dir', dataDir, '--secure-port', String(port)];
  const host = opts.host ?? '127.0.0.1';
  if (flagValue(extra, '--bind-address') === undefined) args.push('--bind-address', host);
  args.push(...extra);
  const pkiDir = flagValue(extra, '--pki-dir');
  const handle = new ServerHandle(
    port,
    dataDir,
    harnessDir,
    base,
    [...(opts.wrap ?? []), process.execPath, ...args],
    { ...NO_KUBELET_ENV, ...opts.env },
    opts.readyTimeoutMs ?? 45_000,
    pkiDir,
    host,
  );
  if (etcd) handle.cleanups.push(() => etcd.cleanup());
  try {
    await handle.start();
  } catch (e) {
    await etcd?.cleanup();
    await fs.rm(base, { recursive: true, force: true });
    throw e;
  }
  return handle;
}

/** Runs kubectl against `handle` (its harness kubeconfig and private cache dir). */
export function kubectl(handle: KubectlTarget, args: readonly string[], opts: KubectlOptions = {}): Promise<KubectlResult> {
  return runKubectl(handle, args, opts);
}
