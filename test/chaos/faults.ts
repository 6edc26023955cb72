/**
 * Fault injectors for real processes and the network between them:
 *  - process faults: kill -9, SIGSTOP/SIGCONT (a paused node looks alive at the TCP level but
 *    answers nothing, like a long GC pause or a VM freeze), restart;
 *  - a TCP fault proxy (node:net) in front of a port: pass, delay, drop (refuse/reset), or
 *    black-hole, one way or both; works anywhere, but it sees only the connections into its port,
 *    not who dials, so it cannot cut one node off from some peers and not others;
 *  - network namespaces (root + `ip netns`): each node in its own namespace on a bridge, with
 *    isolation by taking its veth down and pairwise partitions by blackhole routes (this machine
 *    has no iptables/nft; `ip route add blackhole` needs only iproute2).
 * Everything created is tracked and removed by cleanup(), also from a process exit hook.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as net from 'node:net';

// ---------------------------------------------------------------------------------------------
// Process faults

/** Anything with a child process that can be killed and started again (ServerHandle is one). */
export interface ProcessTarget {
  readonly pid: number | undefined;
  kill(): Promise<void>;
  start(): Promise<void>;
}

/** kill -9 then start again; resolves when the target is ready. Returns ms from kill to ready. */
export async function crashAndRestart(t: ProcessTarget): Promise<number> {
  const t0 = Date.now();
  await t.kill();
  await t.start();
  return Date.now() - t0;
}

/** SIGSTOP: freezes the process (its sockets stay open, nothing is answered). */
export function pause(t: ProcessTarget): void {
  if (t.pid === undefined) throw new Error('pause: process is not running');
  process.kill(t.pid, 'SIGSTOP');
}

/** SIGCONT: resumes a paused process. */
export function resume(t: ProcessTarget): void {
  if (t.pid === undefined) throw new Error('resume: process is not running');
  process.kill(t.pid, 'SIGCONT');
}

// ---------------------------------------------------------------------------------------------
// TCP fault proxy

/** Which way a fault applies: client->server (`up`), server->client (`down`), or both. */
export type Direction = 'up' | 'down' | 'both';

/** What the proxy does. `drop`: new connections are reset and live ones destroyed (a crashed
 * peer); `blackhole`: bytes in `direction` are silently discarded, connections stay open (a
 * partition: the sender times out); `delay`: bytes in `direction` are held `ms` first. */
export type ProxyFault =
  | { readonly kind: 'pass' }
  | { readonly kind: 'drop' }
  | { readonly kind: 'blackhole'; readonly direction: Direction }
  | { readonly kind: 'delay'; readonly ms: number; readonly direction: Direction };

/**
 * A TCP proxy on 127.0.0.1 forwarding to `targetHost:targetPort`, whose behaviour can be changed
 * at any time with {@link TcpFaultProxy.setFault}. Faults apply to live connections at once.
 */
export class TcpFaultProxy {
  private server: net.Server | undefined;
  private readonly conns = new Set<{ client: net.Socket; upstream: net.Socket }>();
  private fault: ProxyFault = { kind: 'pass' };
  /** Bytes discarded by black-holing (for tests and figures). */
  discarded = 0;
  port = 0;

  constructor(
    readonly targetPort: number,
    readonly targetHost = '127.0.0.1',
  ) {}

  /** Starts listening on `port` (0: a free one, see `.port`). */
  async listen(port = 0): Promise<number> {
    const srv = net.createServer((client) => this.accept(client));
    this.server = srv;
    await new Promise<void>((resolve, reject) => {
      srv.once('error', reject);
      srv.listen({ port, host: '127.0.0.1' }, () => resolve());
    });
    this.port = (srv.address() as net.AddressInfo).port;
    return this.port;
  }

  /** The current fault. */
  get current(): ProxyFault {
    return this.fault;
  }

  /** Changes behaviour; `drop` also destroys every live connection. */
  setFault(f: ProxyFault): void {
    this.fault = f;
    if (f.kind === 'drop') for (const c of this.conns) this.destroy(c);
  }

  /** Number of live proxied connections. */
  get connections(): number {
    return this.conns.size;
  }

  private destroy(c: { client: net.Socket; upstream: net.Socket }): void {
    c.client.resetAndDestroy();
    c.upstream.destroy();
    this.conns.delete(c);
  }

  private applies(dir: 'up' | 'down'): ProxyFault | undefined {
    const f = this.fault;
    if (f.kind === 'blackhole' || f.kind === 'delay') return f.direction === 'both' || f.direction === dir ? f : undefined;
    return undefined;
  }

  private accept(client: net.Socket): void {
    if (this.fault.kind === 'drop') {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect({ host: this.targetHost, port: this.targetPort });
    const c = { client, upstream };
    this.conns.add(c);
    const pipe = (from: net.Socket, to: net.Socket, dir: 'up' | 'down'): void => {
      from.on('data', (chunk: Buffer) => {
        const f = this.applies(dir);
        if (f?.kind === 'blackhole') {
          this.discarded += chunk.length;
          return;
        }
        if (f?.kind === 'delay') {
          // Pause reading so order is kept and backpressure reaches the sender.
          from.pause();
          setTimeout(() => {
            if (!to.destroyed) to.write(chunk);
            from.resume();
          }, f.ms);
          return;
        }
        if (!to.destroyed) to.write(chunk);
      });
      from.on('end', () => to.end());
    };
    pipe(client, upstream, 'up');
    pipe(upstream, client, 'down');
    const close = (): void => {
      if (!this.conns.has(c)) return;
      this.conns.delete(c);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  }

  /** Stops listening and closes every connection. */
  async close(): Promise<void> {
    for (const c of [...this.conns]) this.destroy(c);
    const srv = this.server;
    this.server = undefined;
    if (srv !== undefined) await new Promise<void>((r) => srv.close(() => r()));
  }
}

// ---------------------------------------------------------------------------------------------
// Network namespaces

function ip(args: readonly string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Whether namespaces can be made here; lives with the other prerequisites (support/prereq.ts). */
export { probeNetns } from '../support/prereq.js';

/** One node's namespace in a {@link NetnsLab}. */
export interface NetnsNode {
  readonly name: string;
  /** Namespace name. */
  readonly ns: string;
  /** The node's address on the lab bridge. */
  readonly address: string;
  /** The veth end in the root namespace (attached to the bridge). */
  readonly hostIf: string;
}

const labs = new Set<NetnsLab>();
let hook = false;

/**
 * A bridge in the root namespace with one namespace per node behind a veth pair, addresses
 * 10.<subnet>.0.<10+i>/24 (the bridge is .1, so the test process reaches every node). Call
 * {@link NetnsLab.cleanup} in afterAll; an exit hook removes leftovers if a test crashes.
 */
export class NetnsLab {
  readonly nodes: NetnsNode[] = [];
  readonly bridge: string;
  private readonly tag: string;
  private created = false;

  constructor(
    count: number,
    readonly subnet = 77,
  ) {
    // Interface names are limited to 15 bytes: "kc" + pid in base 36 + a suffix.
    this.tag = `kc${process.pid.toString(36)}${labs.size}`;
    this.bridge = `${this.tag}br`;
    for (let i = 0; i < count; i++) {
      this.nodes.push({ name: `n${i + 1}`, ns: `${this.tag}n${i + 1}`, address: `10.${subnet}.0.${10 + i}`, hostIf: `${this.tag}h${i + 1}` });
    }
  }

  /** The bridge's address (the root namespace's side). */
  get hostAddress(): string {
    return `10.${this.subnet}.0.1`;
  }

  /** Creates the bridge, namespaces, veth pairs and addresses. On failure cleans up and throws. */
  create(): void {
    labs.add(this);
    if (!hook) {
      hook = true;
      process.once('exit', () => {
        for (const l of labs) l.cleanup();
      });
    }
    this.created = true;
    try {
      ip(['link', 'add', this.bridge, 'type', 'bridge']);
      ip(['addr', 'add', `${this.hostAddress}/24`, 'dev', this.bridge]);
      ip(['link', 'set', this.bridge, 'up']);
      for (const n of this.nodes) {
        ip(['netns', 'add', n.ns]);
        ip(['link', 'add', n.hostIf, 'type', 'veth', 'peer', 'name', `${n.hostIf}p`]);
        ip(['link', 'set', `${n.hostIf}p`, 'netns', n.ns]);
        ip(['-n', n.ns, 'link', 'set', `${n.hostIf}p`, 'name', 'eth0']);
        ip(['-n', n.ns, 'addr', 'add', `${n.address}/24`, 'dev', 'eth0']);
        ip(['-n', n.ns, 'link', 'set', 'eth0', 'up']);
        ip(['-n', n.ns, 'link', 'set', 'lo', 'up']);
        ip(['link', 'set', n.hostIf, 'master', this.bridge]);
        ip(['link', 'set', n.hostIf, 'up']);
      }
    } catch (e) {
      this.cleanup();
      throw e;
    }
  }

  private node(name: string): NetnsNode {
    const n = this.nodes.find((x) => x.name === name);
    if (n === undefined) throw new Error(`no node ${name} in this lab`);
    return n;
  }

  /** Spawns `cmd args` inside the node's namespace (`ip netns exec`). */
  spawn(name: string, cmd: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): ChildProcess {
    return spawn('ip', ['netns', 'exec', this.node(name).ns, cmd, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  }

  /** The command prefix that runs a program inside the node's namespace. */
  wrapper(name: string): string[] {
    return ['ip', 'netns', 'exec', this.node(name).ns];
  }

  /** Cuts the node off from everyone (its bridge port down). */
  isolate(name: string): void {
    ip(['link', 'set', this.node(name).hostIf, 'down']);
  }

  /** Undoes {@link isolate}. */
  reconnect(name: string): void {
    ip(['link', 'set', this.node(name).hostIf, 'up']);
  }

  /**
   * Drops packets from `from` to `to` (a blackhole route in `from`'s namespace); `both` also the
   * reverse. One-way partitions are what asymmetric network failures look like to Raft.
   */
  partition(from: string, to: string, both = true): void {
    ip(['-n', this.node(from).ns, 'route', 'replace', 'blackhole', `${this.node(to).address}/32`]);
    if (both) ip(['-n', this.node(to).ns, 'route', 'replace', 'blackhole', `${this.node(from).address}/32`]);
  }

  /** Removes every partition route in every namespace (isolations stay; see reconnect). */
  heal(): void {
    for (const n of this.nodes) {
      for (const m of this.nodes) {
        if (m !== n) {
          try {
            ip(['-n', n.ns, 'route', 'del', 'blackhole', `${m.address}/32`]);
          } catch {
            // no such route
          }
        }
      }
    }
  }

  /** Deletes namespaces (which removes their veth ends) and the bridge. Idempotent, never throws. */
  cleanup(): void {
    if (!this.created) return;
    for (const n of this.nodes) {
      for (const args of [
        ['link', 'del', n.hostIf],
        ['netns', 'del', n.ns],
      ]) {
        try {
          ip(args);
        } catch {
          // already gone
        }
      }
    }
    try {
      ip(['link', 'del', this.bridge]);
    } catch {
      // already gone
    }
    this.created = false;
    labs.delete(this);
  }
}
