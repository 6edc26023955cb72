/**
 * Starts a real etcd cluster (Debian's etcd-server binary) on loopback for tests: `members`
 * members on free ports, each with its own data directory, optionally with TLS from a PKI
 * directory of ours (peer.crt serves and authenticates peers, ca.crt verifies clients: any
 * certificate of that CA, such as admin.crt, is a client). Ready when every member answers a
 * linearizable read; `kill(i)` SIGKILLs one member, `cleanup()` stops all and removes the dirs.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { delay, getFreePort } from './net.helper.js';

const execFileP = promisify(execFile);

const running = new Set<ChildProcess>();
let exitHookInstalled = false;
/** A crashed test must not leave etcd members running on the shared machine. */
function track(p: ChildProcess): void {
  running.add(p);
  p.once('exit', () => running.delete(p));
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const c of running) c.kill('SIGKILL');
  });
}

/** Options of {@link startEtcd}. */
export interface StartEtcdOptions {
  /** Number of members (default 1). */
  members?: number;
  /** PKI directory (ca.crt, peer.crt/.key) for TLS on client and peer URLs; absent: plain http. */
  pkiDir?: string;
  /** Readiness timeout (default 30 s). */
  readyTimeoutMs?: number;
  /** Extra etcd flags for every member. */
  args?: readonly string[];
  /** A snapshot file (`etcdctl snapshot save`, or our `npm run snapshot -- to-etcd`): each member's data dir is made from it with `etcdctl snapshot restore`. */
  restoreFrom?: string;
}

/** One member. */
export interface EtcdMember {
  name: string;
  clientURL: string;
  peerURL: string;
  dataDir: string;
  process: ChildProcess | undefined;
  log: string;
}

/** A running etcd cluster under test. */
export class EtcdCluster {
  constructor(
    readonly members: EtcdMember[],
    private readonly baseDir: string,
    readonly pkiDir: string | undefined,
  ) {}

  /** `--etcd-servers` value: every member's client URL. */
  get servers(): string {
    return this.members.map((m) => m.clientURL).join(',');
  }

  /** API server flags that use this cluster (TLS client files from the PKI: admin.crt). */
  apiServerArgs(): string[] {
    const args = ['--storage-backend', 'etcd3', '--etcd-servers', this.servers];
    if (this.pkiDir) {
      args.push(
        '--etcd-cafile',
        path.join(this.pkiDir, 'ca.crt'),
        '--etcd-certfile',
        path.join(this.pkiDir, 'admin.crt'),
        '--etcd-keyfile',
        path.join(this.pkiDir, 'admin.key'),
      );
    }
    return args;
  }

  /** Runs etcdctl (v3 API) against the members still running; resolves with stdout. */
  async etcdctl(args: readonly string[]): Promise<string> {
    const endpoints = this.members.filter((m) => m.process).map((m) => m.clientURL);
    const tls = this.pkiDir
      ? [`--cacert=${path.join(this.pkiDir, 'ca.crt')}`, `--cert=${path.join(this.pkiDir, 'admin.crt')}`, `--key=${path.join(this.pkiDir, 'admin.key')}`]
      : [];
    const { stdout } = await execFileP('etcdctl', [`--endpoints=${endpoints.join(',')}`, ...tls, ...args], { env: { ...process.env, ETCDCTL_API: '3' } });
    return stdout;
  }

  /** SIGKILLs member `i` and waits for it to exit. */
  async kill(i: number): Promise<void> {
    const p = this.members[i]!.process;
    if (!p) return;
    const exited = new Promise<void>((r) => p.once('exit', () => r()));
    p.kill('SIGKILL');
    await exited;
  }

  /** Stops every member and removes the data directories. */
  async cleanup(): Promise<void> {
    await Promise.all(this.members.map((_m, i) => this.kill(i)));
    await fs.rm(this.baseDir, { recursive: true, force: true });
  }
}

/** Starts a cluster and waits until it serves (rejects with the members' log tails otherwise). */
export async function startEtcd(opts: StartEtcdOptions = {}): Promise<EtcdCluster> {
  const n = opts.members ?? 1;
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'kapi-etcd-'));
  const scheme = opts.pkiDir ? 'https' : 'http';
  const members: EtcdMember[] = [];
  for (let i = 0; i < n; i++) {
    const name = `e${i + 1}`;
    members.push({
      name,
      clientURL: `${scheme}://127.0.0.1:${await getFreePort()}`,
      peerURL: `${scheme}://127.0.0.1:${await getFreePort()}`,
      dataDir: path.join(base, name),
      process: undefined,
      log: '',
    });
  }
  const initial = members.map((m) => `${m.name}=${m.peerURL}`).join(',');
  const token = `kapi-test-${path.basename(base)}`;
  if (opts.restoreFrom) {
    for (const m of members) {
      await execFileP(
        'etcdctl',
        [
          'snapshot',
          'restore',
          opts.restoreFrom,
          `--name=${m.name}`,
          `--data-dir=${m.dataDir}`,
          `--initial-cluster=${initial}`,
          `--initial-cluster-token=${token}`,
          `--initial-advertise-peer-urls=${m.peerURL}`,
        ],
        { env: { ...process.env, ETCDCTL_API: '3' } },
      );
    }
  }
  const cluster = new EtcdCluster(members, base, opts.pkiDir);
  for (const m of members) {
    const args = [
      `--name=${m.name}`,
      `--data-dir=${m.dataDir}`,
      `--listen-client-urls=${m.clientURL}`,
      `--advertise-client-urls=${m.clientURL}`,
      `--listen-peer-urls=${m.peerURL}`,
      `--initial-advertise-peer-urls=${m.peerURL}`,
      `--initial-cluster=${initial}`,
      '--initial-cluster-state=new',
      `--initial-cluster-token=${token}`,
      // Periodic progress notifications every few seconds (etcd's default is 10 minutes).
      '--experimental-watch-progress-notify-interval=5s',
      ...(opts.args ?? []),
    ];
    if (opts.pkiDir) {
      const f = (x: string): string => path.join(opts.pkiDir!, x);
      args.push(
        `--cert-file=${f('peer.crt')}`,
        `--key-file=${f('peer.key')}`,
        `--trusted-ca-file=${f('ca.crt')}`,
        '--client-cert-auth',
        `--peer-cert-file=${f('peer.crt')}`,
        `--peer-key-file=${f('peer.key')}`,
        `--peer-trusted-ca-file=${f('ca.crt')}`,
        '--peer-client-cert-auth',
      );
    }
    const p = spawn('etcd', args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ETCD_UNSUPPORTED_ARCH: process.env.ETCD_UNSUPPORTED_ARCH ?? '' },
    });
    m.process = p;
    track(p);
    const append = (c: Buffer): void => {
      m.log = (m.log + c.toString('utf8')).slice(-20_000);
    };
    p.stdout!.on('data', append);
    p.stderr!.on('data', append);
    p.once('exit', () => {
      m.process = undefined;
    });
  }
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 30_000);
  let last = '';
  while (Date.now() < deadline) {
    if (members.some((m) => !m.process)) break;
    try {
      await cluster.etcdctl(['endpoint', 'health', '--cluster=false']);
      return cluster;
    } catch (e) {
      last = (e as Error).message;
    }
    await delay(200);
  }
  const tails = members.map((m) => `--- ${m.name}:\n${m.log.split('\n').slice(-15).join('\n')}`).join('\n');
  await cluster.cleanup();
  throw new Error(`etcd did not become ready (${last}):\n${tails}`);
}
