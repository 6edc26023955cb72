/**
 * The local three-node cluster (`npm run cluster`) and the one topology description that the
 * launcher, the haproxy config generator and docker-compose.yml are all derived from, so that
 * they cannot drift (test/deploy.test.ts checks the compose file against
 * {@link clusterTopology}).
 *
 * Two halves:
 * - pure: {@link clusterTopology}, {@link nodeArgs}, {@link initialClusterFlag},
 *   {@link pkiCliArgs}, {@link kubeconfigLayout} (no I/O, unit-tested);
 * - runtime: {@link launchCluster} spawns one `main.js` per node with the node contract of
 *   DESIGN.md "Contracts" (`--name --data-dir --pki-dir --secure-port --listen-peer-port
 *   --initial-cluster --bind-address`), one shared PKI, an optional haproxy, and stops them all.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import * as https from 'node:https';
import * as net from 'node:net';
import * as path from 'node:path';
import { haproxyConfig } from './haproxy.js';
import { ensurePki, loadPki } from '@app/pki';
import { type KubeconfigContext, writeKubeconfig } from '@app/pki';

/** Where a topology is meant to run: processes on this machine, or docker compose services. */
export type TopologyTarget = 'local' | 'compose';

/** One API server node of a topology. */
export interface ClusterNode {
  /** Raft member name (`--name`), also the compose service name. */
  readonly name: string;
  /** Address peers and the balancer use to reach this node (IP locally, service name in compose). */
  readonly address: string;
  /** HTTPS port (`--secure-port`). */
  readonly securePort: number;
  /** Raft peer port (`--listen-peer-port`). */
  readonly peerPort: number;
  /** etcd v3 API port (`--listen-client-urls https://ADDR:PORT`). */
  readonly clientPort: number;
  /** `--data-dir` (absolute locally; the in-container path in compose). */
  readonly dataDir: string;
}

/** The load balancer in front of the nodes (haproxy, TCP passthrough). */
export interface ClusterBalancer {
  /** Compose service name and kubeconfig context name. */
  readonly name: string;
  /** Address the balancer listens on (`bind` line of haproxy.cfg). */
  readonly bindAddress: string;
  readonly port: number;
}

/** Everything that defines a cluster deployment; see {@link clusterTopology}. */
export interface ClusterTopology {
  readonly target: TopologyTarget;
  readonly nodes: readonly ClusterNode[];
  readonly balancer: ClusterBalancer;
  /** `--bind-address` of every node. */
  readonly bindAddress: string;
  /** The shared `--pki-dir` of every node. */
  readonly pkiDir: string;
  /** Names/addresses the shared serving certificate must cover (every node and the balancer). */
  readonly pkiHosts: readonly string[];
  /** Host an operator's kubectl uses to reach the balancer and nodes (published ports in compose). */
  readonly clientHost: string;
  /** Where the admin kubeconfig with one context per node is written. */
  readonly kubeconfigPath: string;
}

/** Options of {@link clusterTopology}; every field has the documented default. */
export interface TopologyOptions {
  /** Default `local`. */
  readonly target?: TopologyTarget;
  /** Root of data dirs, PKI and kubeconfig. Default `./data/cluster` (resolved) locally,
   * `/var/lib/kapi` in compose. */
  readonly baseDir?: string;
  /** Node count (names n1..nN) or explicit names. Default 3. */
  readonly nodes?: number | readonly string[];
  /** First HTTPS port (then +1 per node) or one port per node. Default 6444. */
  readonly securePorts?: number | readonly number[];
  /** First Raft peer port (then +1 per node) or one per node. Default 2381. */
  readonly peerPorts?: number | readonly number[];
  /** First etcd v3 API port (then +1 per node) or one per node. Default 2379, 2479, 2579, ... */
  readonly clientPorts?: number | readonly number[];
  /** Balancer port. Default 6443 (DESIGN.md: the API on 6443). */
  readonly balancerPort?: number;
  /** Local target only: the address every node and the balancer listen on. Default 127.0.0.1. */
  readonly host?: string;
}

/** Bad topology input (duplicate port or name, bad count): the CLI prints it, exit code 2. */
export class TopologyError extends Error {
  override readonly name = 'TopologyError';
}

/** A launch that could not complete (port in use, node exited or never became ready). */
export class LaunchError extends Error {
  override readonly name = 'LaunchError';
}

/** Default ports of the cluster contract (README, docker-compose.yml): balancer 6443, nodes 6444-6446, peers 2381-2383. */
export const DEFAULT_BALANCER_PORT = 6443;
export const DEFAULT_FIRST_SECURE_PORT = 6444;
export const DEFAULT_FIRST_PEER_PORT = 2381;
/** First etcd v3 API port; node i gets DEFAULT_FIRST_CLIENT_PORT + 100 * i (2379, 2479, 2579: etcd's habit). */
export const DEFAULT_FIRST_CLIENT_PORT = 2379;
/** In-container root of the compose deployment (one volume per node below it, plus the PKI). */
export const COMPOSE_BASE_DIR = '/var/lib/kapi';
/** Name of the balancer service and of its kubeconfig context. */
export const BALANCER_NAME = 'lb';

/** etcd/Raft member names double as DNS names (compose services, certificate SANs). */
const NODE_NAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

function validPort(p: number, what: string): number {
  if (!Number.isInteger(p) || p < 1 || p > 65535) throw new TopologyError(`${what} ${p} is not a TCP port (1-65535)`);
  return p;
}

function ports(spec: number | readonly number[], count: number, what: string): number[] {
  if (typeof spec === 'number') return Array.from({ length: count }, (_, i) => validPort(spec + i, what));
  if (spec.length !== count) throw new TopologyError(`${spec.length} ${what}s given for ${count} nodes`);
  return spec.map((p) => validPort(p, what));
}

/**
 * The cluster layout for `target`. Local: every node on `host` with its own ports and
 * `<baseDir>/<name>` data dir, PKI in `<baseDir>/pki`, kubeconfig `<baseDir>/admin.kubeconfig`.
 * Compose: the same names and ports (so flags are identical but for addresses and paths), nodes
 * reached by service name, listening on 0.0.0.0, paths under {@link COMPOSE_BASE_DIR}, the
 * kubeconfig at `<pki>/admin.kubeconfig` (what the pki CLI writes). Pure; throws
 * {@link TopologyError} on a bad name, a bad or duplicated port.
 */
export function clusterTopology(opts: TopologyOptions = {}): ClusterTopology {
  const target = opts.target ?? 'local';
  const names = typeof opts.nodes === 'object' ? [...opts.nodes] : Array.from({ length: opts.nodes ?? 3 }, (_, i) => `n${i + 1}`);
  if (names.length < 1) throw new TopologyError('a cluster needs at least one node');
  for (const n of names) {
    if (!NODE_NAME.test(n) || n === BALANCER_NAME) throw new TopologyError(`node name ${JSON.stringify(n)} must be a DNS label other than ${BALANCER_NAME}`);
  }
  if (new Set(names).size !== names.length) throw new TopologyError(`duplicate node name in ${names.join(',')}`);
  const secure = ports(opts.securePorts ?? DEFAULT_FIRST_SECURE_PORT, names.length, 'secure port');
  const peer = ports(opts.peerPorts ?? DEFAULT_FIRST_PEER_PORT, names.length, 'peer port');
  const client =
    opts.clientPorts !== undefined
      ? ports(opts.clientPorts, names.length, 'client port')
      : names.map((_, i) => validPort(DEFAULT_FIRST_CLIENT_PORT + 100 * i, 'client port'));
  const balancerPort = validPort(opts.balancerPort ?? DEFAULT_BALANCER_PORT, 'balancer port');
  const all = [...secure, ...peer, ...client, balancerPort];
  const dup = all.find((p, i) => all.indexOf(p) !== i);
  if (dup !== undefined) throw new TopologyError(`port ${dup} is used twice`);

  const local = target === 'local';
  const host = opts.host ?? '127.0.0.1';
  if (local && (host === '0.0.0.0' || host === '::' || host === '')) {
    throw new TopologyError(`--host must be an address peers can dial, not ${JSON.stringify(host)}`);
  }
  const base = local ? path.resolve(opts.baseDir ?? path.join('data', 'cluster')) : (opts.baseDir ?? COMPOSE_BASE_DIR);
  const join = local ? path.join : path.posix.join;
  const pkiDir = join(base, 'pki');
  const nodes: ClusterNode[] = names.map((name, i) => ({
    name,
    address: local ? host : name,
    securePort: secure[i]!,
    peerPort: peer[i]!,
    clientPort: client[i]!,
    dataDir: join(base, name),
  }));
  // One certificate for every way a client reaches a node: loopback, this host (added by
  // servingSans), the compose service names and the balancer, so the same PKI works for the
  // local launcher, compose and a client going through haproxy (TCP passthrough keeps the
  // node's own certificate on the wire, so it must name the balancer too).
  const pkiHosts = [...new Set(['127.0.0.1', 'localhost', host, ...names, BALANCER_NAME])];
  return {
    target,
    nodes,
    balancer: { name: BALANCER_NAME, bindAddress: local ? host : '0.0.0.0', port: balancerPort },
    bindAddress: local ? host : '0.0.0.0',
    pkiDir,
    pkiHosts,
    clientHost: local ? host : '127.0.0.1',
    kubeconfigPath: local ? join(base, 'admin.kubeconfig') : join(pkiDir, 'admin.kubeconfig'),
  };
}

/** `--initial-cluster` value: `name=address:peerPort,...` in node order (etcd's syntax). */
export function initialClusterFlag(t: ClusterTopology): string {
  return t.nodes.map((n) => `${n.name}=${n.address}:${n.peerPort}`).join(',');
}

/**
 * The server flags of `node` (everything after `main.js`): the cluster node contract of
 * DESIGN.md, identical in shape for the launcher and compose. Throws {@link TopologyError} for a
 * node not in `t`.
 */
export function nodeArgs(t: ClusterTopology, node: ClusterNode | string): string[] {
  const name = typeof node === 'string' ? node : node.name;
  const n = t.nodes.find((x) => x.name === name);
  if (n === undefined) throw new TopologyError(`no node ${JSON.stringify(name)} in the topology`);
  return [
    '--name',
    n.name,
    '--data-dir',
    n.dataDir,
    '--pki-dir',
    t.pkiDir,
    '--secure-port',
    String(n.securePort),
    '--listen-peer-port',
    String(n.peerPort),
    '--initial-cluster',
    initialClusterFlag(t),
    '--bind-address',
    t.bindAddress,
    '--listen-client-urls',
    `https://${hostPort(t.bindAddress, n.clientPort)}`,
    // Where etcd clients reach it (the member list's client URLs), not the address it binds.
    '--advertise-client-urls',
    `https://${hostPort(n.address, n.clientPort)}`,
    '--client-cert-auth',
  ];
}

/** Balancer URL as clients see it. */
export function balancerUrl(t: ClusterTopology): string {
  return `https://${hostPort(t.clientHost, t.balancer.port)}`;
}

/** A node's URL as clients see it. */
export function nodeUrl(t: ClusterTopology, n: ClusterNode): string {
  return `https://${hostPort(t.clientHost, n.securePort)}`;
}

function hostPort(host: string, port: number): string {
  return `${net.isIPv6(host) ? `[${host}]` : host}:${port}`;
}

/** Flags of the pki CLI (`dist/cluster/pki.cli.js`) that create this topology's shared PKI. */
export function pkiCliArgs(t: ClusterTopology): string[] {
  return ['--out', t.pkiDir, '--hosts', t.pkiHosts.join(','), '--server', balancerUrl(t)];
}

/** The admin kubeconfig's contexts: the default context and its server, then one per node. */
export interface KubeconfigLayout {
  /** Name of the default (current) context. */
  readonly current: string;
  readonly server: string;
  /** Further contexts (one per node, minus the one that is the default). */
  readonly contexts: readonly KubeconfigContext[];
}

/**
 * With a balancer: current context `lb` (the balancer) plus one context per node. Without:
 * current context is the first node, plus one context per other node.
 */
export function kubeconfigLayout(t: ClusterTopology, withBalancer: boolean): KubeconfigLayout {
  const perNode = t.nodes.map((n) => ({ name: n.name, server: nodeUrl(t, n) }));
  if (withBalancer) return { current: t.balancer.name, server: balancerUrl(t), contexts: perNode };
  return { current: perNode[0]!.name, server: perNode[0]!.server, contexts: perNode.slice(1) };
}

// ---------------------------------------------------------------------------------------------
// Runtime
// ---------------------------------------------------------------------------------------------

/** Options of {@link launchCluster}. */
export interface LaunchOptions {
  /** A `local` topology (see {@link clusterTopology}). */
  readonly topology: ClusterTopology;
  /** The server program (`dist/apps/apiserver/src/main.js`). */
  readonly serverEntry: string;
  /** haproxy binary; `null` disables the balancer; undefined looks `haproxy` up on PATH. */
  readonly haproxy?: string | null;
  /** Extra flags for every node, after the topology's. */
  readonly extraServerArgs?: readonly string[];
  /** Per-node and balancer readiness timeout. Default 60 s. */
  readonly readyTimeoutMs?: number;
  /** Time between SIGTERM and SIGKILL on stop. Default 10 s. */
  readonly graceMs?: number;
  /** Receives every output line: the launcher's and prefixed child lines. Default stdout/stderr. */
  readonly log?: (line: string, stream: 'out' | 'err') => void;
  /**
   * Start a member again when it exits after the cluster came up (compose's `restart:
   * unless-stopped`): after 1 s, doubling up to 30 s while it keeps exiting within 10 s of its
   * start. `members` then holds the new process. Default false (tests kill nodes on purpose).
   */
  readonly restart?: boolean;
}

/** Restart back-off: first delay, ceiling, and the run time after which the delay starts over. */
export const RESTART_BACKOFF = { firstMs: 1_000, maxMs: 30_000, resetAfterMs: 10_000 };

/** The delay before the next start of a member that ran `ranMs` after a delay of `lastDelayMs` (0: none yet). */
export function nextRestartDelay(lastDelayMs: number, ranMs: number): number {
  if (lastDelayMs === 0 || ranMs >= RESTART_BACKOFF.resetAfterMs) return RESTART_BACKOFF.firstMs;
  return Math.min(lastDelayMs * 2, RESTART_BACKOFF.maxMs);
}

/** One child process of a running cluster. */
export interface ClusterMember {
  readonly name: string;
  readonly kind: 'node' | 'balancer';
  readonly url: string;
  readonly process: ChildProcess;
  /** Resolves once the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** A started cluster; {@link stop} it exactly once (further calls return the same promise). */
export interface RunningCluster {
  readonly topology: ClusterTopology;
  readonly members: readonly ClusterMember[];
  /** Whether haproxy runs in front of the nodes. */
  readonly balanced: boolean;
  readonly kubeconfigPath: string;
  /** URL of the kubeconfig's default context. */
  readonly url: string;
  /** SIGTERM every child, SIGKILL those still alive after the grace period; resolves when all exited. */
  stop(): Promise<void>;
}

/** Looks `name` up on PATH (plus the sbin directories where Debian puts haproxy). */
export function findExecutable(name: string, envPath: string = process.env.PATH ?? ''): string | undefined {
  const dirs = [...envPath.split(path.delimiter), '/usr/sbin', '/usr/local/sbin', '/sbin'].filter((d) => d !== '');
  for (const d of dirs) {
    const p = path.join(d, name);
    if (existsSync(p)) return p;
  }
  return undefined;
}

/** Rejects with LaunchError when `port` on `host` is taken, so the operator gets a clear message
 * instead of a node dying with EADDRINUSE in the middle of its log. */
async function assertPortFree(host: string, port: number, what: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', (e: NodeJS.ErrnoException) => reject(new LaunchError(`${what} port ${host}:${port} is not available (${e.code ?? e.message})`)));
    srv.listen({ host, port, exclusive: true }, () => srv.close(() => resolve()));
  });
}

/** Splits a stream into lines and hands each to `emit`; a trailing partial line is flushed at end. */
function forwardLines(stream: NodeJS.ReadableStream | null, emit: (line: string) => void): void {
  if (stream === null) return;
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    rest += chunk;
    let i: number;
    while ((i = rest.indexOf('\n')) >= 0) {
      emit(rest.slice(0, i));
      rest = rest.slice(i + 1);
    }
  });
  stream.on('end', () => {
    if (rest !== '') emit(rest);
    rest = '';
  });
}

/** GET `url`/readyz with the admin client certificate; true on 200. Never throws. */
export async function probeReady(url: string, tls: { caPem: string; certPem: string; keyPem: string }, timeoutMs = 2_000): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const req = https.request(
      `${url}/readyz`,
      { method: 'GET', ca: tls.caPem, cert: tls.certPem, key: tls.keyPem, agent: false, timeout: timeoutMs },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200));
        res.on('error', () => resolve(false));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(false));
    req.end();
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Starts the cluster described by `opts.topology` (must be `local`): ensures the shared PKI,
 * spawns every node (log lines prefixed `[name]`), starts haproxy when available (config written
 * to `<baseDir>/haproxy.cfg`), waits until every node and the balancer answer /readyz, writes the
 * admin kubeconfig (see {@link kubeconfigLayout}). On any failure everything started is stopped
 * and the promise rejects with {@link LaunchError} (carrying the failing child's last lines).
 */
export async function launchCluster(opts: LaunchOptions): Promise<RunningCluster> {
  const t = opts.topology;
  if (t.target !== 'local') throw new LaunchError('launchCluster runs a local topology; compose runs the compose one');
  const log = opts.log ?? ((line, stream) => (stream === 'out' ? process.stdout : process.stderr).write(`${line}\n`));
  const say = (line: string): void => log(`[launcher] ${line}`, 'out');
  const readyTimeoutMs = opts.readyTimeoutMs ?? 60_000;
  const graceMs = opts.graceMs ?? 10_000;
  if (!existsSync(opts.serverEntry)) throw new LaunchError(`server entry ${opts.serverEntry} does not exist (run npm run build first)`);

  const haproxyBin = opts.haproxy === null ? undefined : (opts.haproxy ?? findExecutable('haproxy'));
  if (opts.haproxy !== undefined && opts.haproxy !== null && !existsSync(opts.haproxy)) {
    throw new LaunchError(`haproxy binary ${opts.haproxy} does not exist`);
  }
  for (const n of t.nodes) {
    await assertPortFree(t.bindAddress, n.securePort, `${n.name} HTTPS`);
    await assertPortFree(t.bindAddress, n.peerPort, `${n.name} peer`);
    await assertPortFree(t.bindAddress, n.clientPort, `${n.name} etcd API`);
  }
  if (haproxyBin !== undefined) await assertPortFree(t.balancer.bindAddress, t.balancer.port, 'balancer');

  const pki = await ensurePki(t.pkiDir, { hosts: t.pkiHosts, server: balancerUrl(t) });
  say(`PKI in ${pki.dir}${pki.created.length > 0 ? ` (created ${pki.created.length} files)` : ' (kept)'}`);
  const material = await loadPki(t.pkiDir);
  const tls = { caPem: material.caPem, certPem: material.adminCertPem, keyPem: material.adminKeyPem };

  const members: ClusterMember[] = [];
  const tails = new Map<string, string[]>();
  let stopping: Promise<void> | undefined;
  // Set once every member is up: from then on an exit is restarted (opts.restart).
  let supervising = false;
  const restartTimers = new Set<NodeJS.Timeout>();
  const killAll = (): void => {
    for (const m of members) if (m.process.exitCode === null && m.process.signalCode === null) m.process.kill('SIGKILL');
  };
  // The launcher must never leave servers behind, even when it dies of an exception.
  process.once('exit', killAll);

  const start = (
    name: string,
    kind: 'node' | 'balancer',
    url: string,
    cmd: string,
    args: readonly string[],
    slot = members.length,
    lastDelayMs = 0,
  ): ClusterMember => {
    const startedAt = Date.now();
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
    const tail: string[] = [];
    tails.set(name, tail);
    const emit =
      (stream: 'out' | 'err') =>
      (line: string): void => {
        tail.push(line);
        if (tail.length > 30) tail.shift();
        log(`[${name}] ${line}`, stream);
      };
    forwardLines(child.stdout, emit('out'));
    forwardLines(child.stderr, emit('err'));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.once('error', (e) => {
        emit('err')(`spawn failed: ${e.message}`);
        resolve({ code: null, signal: null });
      });
      child.once('exit', (code, signal) => resolve({ code, signal }));
    });
    const m: ClusterMember = { name, kind, url, process: child, exited };
    void exited.then(({ code, signal }) => {
      if (stopping !== undefined) return;
      if (!(opts.restart === true && supervising)) {
        say(`${name} exited unexpectedly (code ${code}, signal ${signal})`);
        return;
      }
      const delay = nextRestartDelay(lastDelayMs, Date.now() - startedAt);
      say(`${name} exited unexpectedly (code ${code}, signal ${signal}): restarting in ${delay / 1000} s`);
      const timer = setTimeout(() => {
        restartTimers.delete(timer);
        if (stopping !== undefined) return;
        const again = start(name, kind, url, cmd, args, slot, delay);
        say(`${name} restarted (pid ${again.process.pid})`);
      }, delay);
      restartTimers.add(timer);
    });
    members[slot] = m;
    return m;
  };

  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      for (const t of restartTimers) clearTimeout(t);
      restartTimers.clear();
      const alive = members.filter((m) => m.process.exitCode === null && m.process.signalCode === null);
      for (const m of alive) m.process.kill('SIGTERM');
      const timer = setTimeout(() => {
        for (const m of alive) {
          if (m.process.exitCode === null && m.process.signalCode === null) {
            say(`${m.name} did not exit within ${graceMs} ms: SIGKILL`);
            m.process.kill('SIGKILL');
          }
        }
      }, graceMs);
      await Promise.all(members.map((m) => m.exited));
      clearTimeout(timer);
      process.removeListener('exit', killAll);
    })();
    return stopping;
  };

  const waitReady = async (m: ClusterMember): Promise<void> => {
    const deadline = Date.now() + readyTimeoutMs;
    let exited = false;
    void m.exited.then(() => (exited = true));
    while (Date.now() < deadline) {
      if (exited) throw new LaunchError(`${m.name} exited before it was ready; last lines:\n${(tails.get(m.name) ?? []).join('\n')}`);
      if (await probeReady(m.url, tls)) return;
      await sleep(100);
    }
    throw new LaunchError(`${m.name} not ready at ${m.url}/readyz after ${readyTimeoutMs} ms; last lines:\n${(tails.get(m.name) ?? []).join('\n')}`);
  };

  try {
    for (const n of t.nodes) {
      await fs.mkdir(n.dataDir, { recursive: true, mode: 0o700 });
      start(n.name, 'node', nodeUrl(t, n), process.execPath, [opts.serverEntry, ...nodeArgs(t, n), ...(opts.extraServerArgs ?? [])]);
    }
    say(`started ${t.nodes.map((n) => `${n.name} (${nodeUrl(t, n)}, peer ${n.peerPort})`).join(', ')}`);
    // Nodes first, in parallel; the balancer starts once they answer, so its first health
    // checks pass instead of logging every backend as down.
    await Promise.all(members.filter((m) => m.kind === 'node').map(waitReady));
    let balanced = false;
    if (haproxyBin !== undefined) {
      const cfgPath = path.join(path.dirname(t.pkiDir), 'haproxy.cfg');
      await fs.writeFile(cfgPath, haproxyConfig(t));
      // -db: stay in the foreground, so the launcher owns its lifetime; -q: its messages also go
      // to the configured log (stdout), so do not print them twice.
      const lb = start(t.balancer.name, 'balancer', balancerUrl(t), haproxyBin, ['-db', '-q', '-f', cfgPath]);
      say(`haproxy ${haproxyBin} on ${balancerUrl(t)} (config ${cfgPath})`);
      await waitReady(lb);
      balanced = true;
    } else {
      const why = opts.haproxy === null ? 'balancer disabled' : 'haproxy is not installed (not found on PATH)';
      say(`${why}: no load balancer; the kubeconfig default context is ${t.nodes[0]!.name}`);
    }
    const layout = kubeconfigLayout(t, balanced);
    await writeKubeconfig(t.kubeconfigPath, {
      server: layout.server,
      clusterName: layout.current,
      contexts: layout.contexts,
      caPem: material.caPem,
      certPem: material.adminCertPem,
      keyPem: material.adminKeyPem,
    });
    supervising = true;
    return { topology: t, members, balanced, kubeconfigPath: t.kubeconfigPath, url: layout.server, stop };
  } catch (e) {
    await stop();
    throw e instanceof LaunchError ? e : new LaunchError((e as Error).message);
  }
}
