/**
 * The three-node chaos suite's cluster as its membership changes (cluster.chaos.test.ts,
 * chaos.membership.ts): the current members (name, network slot, process), the endpoint lists
 * the workload and the watchers read live, and the waits every fault uses (leader agreed on,
 * every member ready).
 *
 * A slot is a node's place in the network (its namespace and address, chaos.network.ts); a
 * member that is removed frees its slot for a later new member. Member indexes (leaderIndex,
 * `nodes`) are positions in `members`, which change when members come and go.
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { delay, getFreePort, startServer, type HttpTarget, type ServerHandle } from '../support/server.js';
import { ctl, isOk, type CtlResponse } from './chaos.client.js';
import type { Network } from './chaos.network.js';

/** One member of the cluster (or one about to join). */
export interface Member {
  readonly name: string;
  /** Network slot (namespace and address) it runs in. */
  readonly slot: number;
  /** Its process; replaced when the member is replaced. */
  handle: ServerHandle;
  readonly port: number;
  readonly peerPort: number;
  /** `host:port` of its Raft transport, as in --initial-cluster and POST /cluster/members. */
  readonly peerURL: string;
  readonly dataDir: string;
}

/** What every node of the suite is started with. */
export interface ChaosClusterOptions {
  readonly dir: string;
  readonly pkiDir: string;
  readonly net: Network;
  readonly env: Readonly<Record<string, string>>;
  /** Slots of the network (members at most at the same time). */
  readonly slots: number;
}

/** The cluster under test; see the module comment. */
export class ChaosCluster {
  readonly members: Member[] = [];
  /** Every member's API and the balancer (last): the workload's endpoints, kept in place. */
  readonly endpoints: HttpTarget[] = [];
  /** Every member's API: the watchers' endpoints, kept in place. */
  readonly watchEndpoints: HttpTarget[] = [];
  /** Names of the members removed (and shut down) during the run. */
  readonly removed: string[] = [];
  balancer: HttpTarget | undefined;
  /** Called after the members changed (a balancer in front of them follows them). */
  onMembersChanged: (() => void) | undefined;
  private named = 0;

  constructor(readonly o: ChaosClusterOptions) {}

  /** The members' processes, by member index. */
  get nodes(): ServerHandle[] {
    return this.members.map((m) => m.handle);
  }

  name(i: number): string {
    return this.members[i]?.name ?? `#${i}`;
  }

  /** A name no member has had in this run (n1, n2, ...). */
  newName(): string {
    return `n${++this.named}`;
  }

  /** A slot no member uses. */
  freeSlot(): number {
    for (let s = 0; s < this.o.slots; s++) if (!this.members.some((m) => m.slot === s)) return s;
    throw new Error(`no free network slot: ${this.members.length} members in ${this.o.slots} slots`);
  }

  /** Ports and addresses of a new member `name` in `slot` (not started). */
  async plan(name: string, slot: number): Promise<Omit<Member, 'handle'>> {
    const [port, peerPort] = [await getFreePort(), await getFreePort()];
    return { name, slot, port, peerPort, peerURL: await this.o.net.peerAddress(slot, peerPort), dataDir: join(this.o.dir, `${name}-${port}`) };
  }

  /**
   * Starts `m`'s process and waits until it is ready. `initial` is its --initial-cluster
   * (name=peerURL list, itself included); `existing` makes it a joiner that waits to be added
   * and gets the state by snapshot (docs/cluster.md "Starting nodes").
   */
  async launch(m: Omit<Member, 'handle'>, initial: string, state: 'new' | 'existing'): Promise<Member> {
    const wrap = this.o.net.wrap(m.slot);
    const handle = await startServer({
      args: [
        '--name',
        m.name,
        '--pki-dir',
        this.o.pkiDir,
        '--listen-peer-port',
        String(m.peerPort),
        '--initial-cluster',
        initial,
        ...(state === 'existing' ? ['--initial-cluster-state', 'existing'] : []),
      ],
      dataDir: m.dataDir,
      env: this.o.env,
      port: m.port,
      host: this.o.net.host(m.slot),
      readyTimeoutMs: 90_000,
      ...(wrap !== undefined ? { wrap } : {}),
    });
    return { ...m, handle };
  }

  /** --initial-cluster of the current members plus `extra`. */
  initialCluster(extra: Omit<Member, 'handle'>): string {
    return [...this.members, extra].map((m) => `${m.name}=${m.peerURL}`).join(',');
  }

  /** Makes the workload and watcher endpoint lists name exactly the current members. */
  syncEndpoints(): void {
    const apis = this.members.map((m) => m.handle);
    this.watchEndpoints.splice(0, this.watchEndpoints.length, ...apis);
    this.endpoints.splice(0, this.endpoints.length, ...apis, ...(this.balancer !== undefined ? [this.balancer] : []));
  }

  /** Takes `m` out of the member list and the endpoints (it is being removed or replaced). */
  detach(m: Member): void {
    const i = this.members.indexOf(m);
    if (i >= 0) this.members.splice(i, 1);
    this.syncEndpoints();
    this.onMembersChanged?.();
  }

  /** Adds `m` to the member list and the endpoints. */
  attach(m: Member): void {
    this.members.push(m);
    this.syncEndpoints();
    this.onMembersChanged?.();
  }

  /** Shuts `m`'s process down and deletes its data dir. */
  async dispose(m: Member): Promise<void> {
    await m.handle.cleanup().catch(() => undefined);
    await fs.rm(m.dataDir, { recursive: true, force: true });
  }

  /** The leader (member index) two or more of `among` agree on, bounded wait. */
  async leaderIndex(among: readonly number[] = this.members.map((_, i) => i), timeoutMs = 30_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const votes = new Map<string, number>();
      await Promise.all(
        among.map(async (i) => {
          const r = await ctl(this.members[i]!.handle, 'GET', '/cluster/members?local=true', { timeoutMs: 1500 });
          if (isOk(r) && r.status === 200) {
            const leader = r.json<{ leader?: string }>().leader;
            if (leader !== undefined) votes.set(leader, (votes.get(leader) ?? 0) + 1);
          }
        }),
      );
      for (const [name, n] of votes) {
        const i = this.members.findIndex((m) => m.name === name);
        if (n >= Math.min(2, among.length) && among.includes(i)) return i;
      }
      await delay(100);
    }
    throw new Error(`no leader agreed on by ${among.map((i) => this.name(i)).join(',')} within ${timeoutMs} ms`);
  }

  /** What each member says about itself, for failure messages. */
  async diagnose(): Promise<string> {
    const parts = await Promise.all(
      this.members.map(async (m) => {
        const n = m.handle;
        const ready = await ctl(n, 'GET', '/readyz?verbose', { timeoutMs: 2000 });
        const members = await ctl(n, 'GET', '/cluster/members?local=true', { timeoutMs: 2000 });
        const text = (r: CtlResponse | { status: string }): string => `${r.status} ${isOk(r) ? r.text.replace(/\s+/g, ' ').slice(0, 400) : ''}`;
        // Server log lines without stack frames.
        const log = n.stderr
          .split('\n')
          .filter((l) => l.trim() !== '' && !/^\s+at /.test(l) && !/^\s*\d+ \|/.test(l) && !/^\s*[|>]/.test(l))
          .slice(-12)
          .join('\n    ');
        return `${m.name} pid=${n.pid ?? '-'} exited=${JSON.stringify(n.exited)}\n  readyz: ${text(ready)}\n  members: ${text(members)}\n  log:\n    ${log}`;
      }),
    );
    return parts.join('\n');
  }

  /** Waits until every member is ready and all agree on one leader. */
  async settle(): Promise<void> {
    const deadline = Date.now() + 40_000;
    while (Date.now() < deadline) {
      const nodes = this.nodes;
      const ready = await Promise.all(nodes.map((n) => ctl(n, 'GET', '/readyz', { timeoutMs: 1500 })));
      if (ready.every((r) => r.status === 200)) {
        const leaders = await Promise.all(nodes.map((n) => ctl(n, 'GET', '/cluster/members?local=true', { timeoutMs: 1500 })));
        const names = leaders.map((r) => (isOk(r) && r.status === 200 ? r.json<{ leader?: string }>().leader : undefined));
        if (names[0] !== undefined && names.every((x) => x === names[0])) return;
      }
      await delay(200);
    }
    throw new Error(`cluster did not settle within 40 s:\n${await this.diagnose()}`);
  }
}
