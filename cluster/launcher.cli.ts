/**
 * `npm run cluster [-- flags]` (compiled: `node dist/cluster/launcher.cli.js`): a local
 * three-node cluster with haproxy in front when it is installed. Runs until
 * SIGINT/SIGTERM, then stops every child (SIGTERM, SIGKILL after the grace period) and exits 0.
 *
 *   launcher.cli.js [--base-dir ./data/cluster] [--nodes 3] [--host 127.0.0.1]
 *                   [--secure-port 6444 | --secure-port 6444,6445,6446]
 *                   [--peer-port 2381 | --peer-port 2381,2382,2383] [--lb-port 6443]
 *                   [--client-port 2379,2479,2579]  (each node's etcd v3 API)
 *                   [--no-lb] [--haproxy PATH] [--server-entry PATH] [--server-arg=--flag=value]...
 *                   [--ready-timeout SECONDS] [--grace SECONDS] [--no-restart]
 *   launcher.cli.js haproxy-config [--compose] [same topology flags]   prints haproxy.cfg
 *
 * A node (or haproxy) that exits once the cluster is up is started again, as compose's
 * `restart: unless-stopped` does: after 1 s, doubling up to 30 s while it keeps failing.
 * `--no-restart` leaves it down instead; the launcher then stops when every node has exited.
 *
 * Exit codes: 0 stopped on a signal, 1 launch failure or (with --no-restart) every node died,
 * 2 bad usage.
 * Once ready it prints `Admin kubeconfig: <path>` (the line the single-node server prints too).
 */
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { haproxyConfig } from './haproxy.js';
import { ignoreClosedOutput, isEntryPoint } from './entry-point.js';
import { type ClusterTopology, LaunchError, type TopologyOptions, TopologyError, clusterTopology, launchCluster } from './launcher.js';

/** Usage text, printed on --help and usage errors. */
export const LAUNCHER_USAGE = [
  'usage: cluster [--base-dir DIR] [--nodes N] [--host ADDR] [--secure-port P|P1,P2,..] [--peer-port P|P1,P2,..] [--client-port P|P1,P2,..]',
  '               [--lb-port P] [--no-lb] [--haproxy PATH] [--server-entry PATH] [--server-arg=--flag=value]...',
  '               [--ready-timeout SECONDS] [--grace SECONDS] [--no-restart]',
  '       cluster haproxy-config [--compose] [topology flags]   (prints haproxy.cfg)',
].join('\n');

/** A usage error (unknown flag, bad number). */
export class LauncherUsageError extends Error {
  override readonly name = 'LauncherUsageError';
}

/** Parsed command line of the launcher. */
export interface LauncherArgs {
  readonly command: 'run' | 'haproxy-config' | 'help';
  readonly topology: ClusterTopology;
  readonly noBalancer: boolean;
  readonly haproxy?: string;
  readonly serverEntry?: string;
  readonly serverArgs: readonly string[];
  readonly readyTimeoutMs: number;
  readonly graceMs: number;
  /** Start a member again when it exits (default true; --no-restart). */
  readonly restart: boolean;
}

function portList(raw: string | undefined, flag: string): number | number[] | undefined {
  if (raw === undefined) return undefined;
  const parts = raw.split(',').map((p) => p.trim());
  const nums = parts.map((p) => {
    if (!/^\d+$/.test(p)) throw new LauncherUsageError(`${flag}: ${JSON.stringify(p)} is not a port`);
    return Number(p);
  });
  return nums.length === 1 ? nums[0]! : nums;
}

/** `raw` seconds (default `fallback` seconds) in milliseconds. */
function seconds(raw: string | undefined, fallback: number, flag: string): number {
  if (raw === undefined) return fallback * 1000;
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n) || n <= 0)
    throw new LauncherUsageError(`${flag} must be a positive number of seconds, got ${JSON.stringify(raw)}`);
  return Math.round(n * 1000);
}

/**
 * Parses argv (without node and script). Throws {@link LauncherUsageError} or
 * {@link TopologyError} on bad input; never starts anything.
 */
export function parseLauncherArgs(argv: readonly string[]): LauncherArgs {
  let parsed;
  try {
    parsed = parseCommandLine(argv);
  } catch (e) {
    // parseArgs throws TypeErrors with code ERR_PARSE_ARGS_*: they are usage errors.
    if (((e as NodeJS.ErrnoException).code ?? '').startsWith('ERR_PARSE_ARGS')) throw new LauncherUsageError((e as Error).message);
    throw e;
  }
  const { values, positionals } = parsed;
  return fromValues(values, positionals);
}

function parseCommandLine(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: true,
    options: {
      'base-dir': { type: 'string' },
      nodes: { type: 'string' },
      host: { type: 'string' },
      'secure-port': { type: 'string' },
      'peer-port': { type: 'string' },
      'client-port': { type: 'string' },
      'lb-port': { type: 'string' },
      'no-lb': { type: 'boolean' },
      haproxy: { type: 'string' },
      'server-entry': { type: 'string' },
      'server-arg': { type: 'string', multiple: true },
      'ready-timeout': { type: 'string' },
      grace: { type: 'string' },
      'no-restart': { type: 'boolean' },
      compose: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

function fromValues(values: ReturnType<typeof parseCommandLine>['values'], positionals: readonly string[]): LauncherArgs {
  if (positionals.length > 1 || (positionals.length === 1 && positionals[0] !== 'haproxy-config')) {
    throw new LauncherUsageError(`unexpected argument ${JSON.stringify(positionals.join(' '))}`);
  }
  const command = values.help === true ? 'help' : positionals[0] === 'haproxy-config' ? 'haproxy-config' : 'run';
  if (values.compose === true && command !== 'haproxy-config') throw new LauncherUsageError('--compose only applies to haproxy-config');
  let nodes: number | undefined;
  if (values.nodes !== undefined) {
    if (!/^\d+$/.test(values.nodes) || Number(values.nodes) < 1 || Number(values.nodes) > 9) {
      throw new LauncherUsageError(`--nodes must be 1-9, got ${JSON.stringify(values.nodes)}`);
    }
    nodes = Number(values.nodes);
  }
  const lbPort = portList(values['lb-port'], '--lb-port');
  if (Array.isArray(lbPort)) throw new LauncherUsageError('--lb-port takes one port');
  const securePorts = portList(values['secure-port'], '--secure-port');
  const peerPorts = portList(values['peer-port'], '--peer-port');
  const clientPorts = portList(values['client-port'], '--client-port');
  const topoOpts: TopologyOptions = {
    target: values.compose === true ? 'compose' : 'local',
    ...(values['base-dir'] !== undefined ? { baseDir: values['base-dir'] } : {}),
    ...(nodes !== undefined ? { nodes } : Array.isArray(securePorts) ? { nodes: securePorts.length } : {}),
    ...(values.host !== undefined ? { host: values.host } : {}),
    ...(securePorts !== undefined ? { securePorts } : {}),
    ...(peerPorts !== undefined ? { peerPorts } : {}),
    ...(clientPorts !== undefined ? { clientPorts } : {}),
    ...(lbPort !== undefined ? { balancerPort: lbPort } : {}),
  };
  return {
    command,
    topology: clusterTopology(topoOpts),
    noBalancer: values['no-lb'] === true,
    ...(values.haproxy !== undefined ? { haproxy: values.haproxy } : {}),
    ...(values['server-entry'] !== undefined ? { serverEntry: values['server-entry'] } : {}),
    serverArgs: values['server-arg'] ?? [],
    readyTimeoutMs: seconds(values['ready-timeout'], 60, '--ready-timeout'),
    graceMs: seconds(values.grace, 10, '--grace'),
    restart: values['no-restart'] !== true,
  };
}

/** `<repo>/dist/apps/apiserver/src/main.js`, located relative to this compiled file. */
export function defaultServerEntry(): string {
  // dist/cluster/launcher.cli.js -> dist/apps/apiserver/src/main.js; from sources (ts-jest) the
  // file sits in cluster/, so look in dist/ beside it.
  const here = path.dirname(fileURLToPath(import.meta.url));
  const inDist = path.basename(path.dirname(here)) === 'dist';
  return path.join(inDist ? path.dirname(here) : path.join(path.dirname(here), 'dist'), 'apps', 'apiserver', 'src', 'main.js');
}

/**
 * Runs the CLI. Resolves with the exit code once the cluster has stopped (after a signal) or
 * failed; `haproxy-config` and `--help` resolve at once.
 */
export async function runLauncherCli(argv: readonly string[]): Promise<number> {
  let args: LauncherArgs;
  try {
    args = parseLauncherArgs(argv);
  } catch (e) {
    if (e instanceof LauncherUsageError || e instanceof TopologyError) {
      process.stderr.write(`cluster: ${(e as Error).message}\n${LAUNCHER_USAGE}\n`);
      return 2;
    }
    throw e;
  }
  if (args.command === 'help') {
    process.stdout.write(`${LAUNCHER_USAGE}\n`);
    return 0;
  }
  if (args.command === 'haproxy-config') {
    process.stdout.write(haproxyConfig(args.topology));
    return 0;
  }

  // Signals that arrive while starting abort the start; afterwards they stop the cluster.
  let signalled: NodeJS.Signals | undefined;
  let onSignal: (sig: NodeJS.Signals) => void = (sig) => (signalled = sig);
  const handler = (sig: NodeJS.Signals): void => onSignal(sig);
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  try {
    const cluster = await launchCluster({
      topology: args.topology,
      serverEntry: args.serverEntry ?? defaultServerEntry(),
      haproxy: args.noBalancer ? null : args.haproxy,
      extraServerArgs: args.serverArgs,
      readyTimeoutMs: args.readyTimeoutMs,
      graceMs: args.graceMs,
      restart: args.restart,
    });
    const t = cluster.topology;
    const out = (l: string): void => void process.stdout.write(`${l}\n`);
    out('');
    out(
      `Cluster ready: ${t.nodes.length} nodes${cluster.balanced ? ' behind haproxy' : args.noBalancer ? ' (no load balancer: --no-lb)' : ' (no load balancer: haproxy is not installed)'}`,
    );
    for (const m of cluster.members)
      out(`  ${m.name.padEnd(4)} ${m.url}  pid ${m.process.pid}${m.kind === 'node' ? `  data ${t.nodes.find((n) => n.name === m.name)?.dataDir}` : ''}`);
    out(`  PKI  ${t.pkiDir}`);
    out(
      `  contexts: ${cluster.balanced ? `${t.balancer.name} (default), ` : ''}${t.nodes.map((n) => n.name).join(', ')}${cluster.balanced ? '' : ` (default ${t.nodes[0]!.name})`}`,
    );
    out(`  try: KUBECONFIG=${path.relative(process.cwd(), cluster.kubeconfigPath) || cluster.kubeconfigPath} kubectl get ns`);
    out('Press Ctrl-C to stop.');
    out(`Admin kubeconfig: ${cluster.kubeconfigPath}`);

    let code = 0;
    let stopRequested = false;
    const stopped = new Promise<void>((resolve) => {
      onSignal = (sig) => {
        if (stopRequested) return;
        stopRequested = true;
        process.stdout.write(`[launcher] ${sig}: stopping the cluster\n`);
        void cluster.stop().then(resolve);
      };
      if (signalled !== undefined) onSignal(signalled);
    });
    // Without restarts, every node gone means nothing is left to serve: stop (the balancer) and
    // fail. With them, nodes come back, and only a signal stops the launcher.
    const nodes = cluster.members.filter((m) => m.kind === 'node');
    const allDied = args.restart
      ? new Promise<void>(() => undefined)
      : Promise.all(nodes.map((m) => m.exited)).then(async () => {
          if (stopRequested) return;
          process.stderr.write('[launcher] every node has exited: stopping\n');
          code = 1;
          await cluster.stop();
        });
    await Promise.race([stopped, allDied]);
    await cluster.stop();
    if (code === 0) process.stdout.write('[launcher] stopped\n');
    return code;
  } catch (e) {
    if (e instanceof LaunchError || e instanceof TopologyError) {
      process.stderr.write(`cluster: ${e.message}\n`);
      return 1;
    }
    throw e;
  } finally {
    process.removeListener('SIGINT', handler);
    process.removeListener('SIGTERM', handler);
  }
}

if (isEntryPoint(import.meta.url)) {
  ignoreClosedOutput();
  process.exitCode = await runLauncherCli(process.argv.slice(2));
}
