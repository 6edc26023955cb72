/**
 * The three-node chaos suite: three real API server processes, each in its own network namespace
 * (root + `ip netns`, see faults.ts NetnsLab), haproxy in front of the three. Both are test
 * prerequisites (test/support/prereq.ts): missing, the suite fails, unless the run opted out
 * with KAPI_TEST_WITHOUT. Without namespaces the nodes share loopback and the two faults that
 * need them (partition-leader, isolate-follower, with the minority read and write checks) are
 * not run; without haproxy the balancer endpoint is left out; the run's summary line names
 * what was not covered. A workload of concurrent creates, conditional updates,
 * conditional deletes, gets and lists runs through every node and the balancer while faults are
 * injected one after the other:
 *   kill -9 the leader; kill -9 a follower; SIGSTOP the leader longer than the election timeout;
 *   partition the leader from the followers (both directions); isolate one follower; restart
 *   all three at once; a follower down long enough to need a snapshot, then back.
 * Checks afterwards: no acknowledged write lost (final Most Recent reads on every node are part
 * of the linearizability check), every node converges to the same revision and content hash,
 * per-key histories are linearizable, no watch (one following each node) sees revisions go
 * backwards or misses an event, a minority side never answers a Most Recent read, a continue
 * token from one node is accepted by another.
 *
 * Length: CHAOS_SECONDS (default 20) of workload at least, and CHAOS_ROUNDS (default 1, or 2 when
 * CHAOS_SECONDS >= 45) passes over the fault list at least; the fault list keeps cycling until
 * both are reached. CHAOS_CLIENTS (default 6). CHAOS_NETNS=0 forces the loopback mode (recorded
 * as not covered like the opt-out).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { haproxyConfig } from '../../cluster/haproxy.js';
import { clusterTopology, findExecutable } from '../../cluster/launcher.js';
import { createPki } from '@app/pki';
import { delay, getFreePort, startServer, type HttpTarget, type ServerHandle } from '../support/server.js';
import { prerequisite, recordUncovered } from '../support/prereq.js';
import { closeCtlAgents, ctl, isOk, metric, quantile, type CtlResponse, type FaultRecord, type ListObj } from './chaos.client.js';
import { faultKinds, loopbackNetwork, netnsNetwork, type Network } from './chaos.network.js';
import { pause, resume } from './faults.js';
import { checkHistory, formatFailure, type KeyOp } from './linearizability.js';
import { checkWatch, nowNs, runWorkload, startWatcher, type RecordedOp, type Watcher } from './workload.js';

const SECONDS = Number(process.env.CHAOS_SECONDS ?? '20');
const ROUNDS = Number(process.env.CHAOS_ROUNDS ?? (SECONDS >= 45 ? '2' : '1'));
const CLIENTS = Number(process.env.CHAOS_CLIENTS ?? '6');
const KEYS = 6;
const NS = 'chaos3';
const PAGES_NS = 'chaos3-pages';
/** Objects written on the majority and then updated/deleted through the minority side. */
const MINORITY_NS = 'chaos3-minority';
const NAMES = ['n1', 'n2', 'n3'] as const;
const NETNS_NEEDS = 'three-node chaos: partition-leader and isolate-follower, with the minority read and write checks (test/chaos/cluster.chaos.test.ts)';
/** Low snapshot interval so that a follower down a few seconds needs a snapshot to catch up. */
const SNAPSHOT_COUNT = 60;
const SNAPSHOT_CATCHUP = 10;
/** Raft: tick 100 ms, election timeout 10 ticks randomised to [1, 2) s (libs/raft defaults). */
const ELECTION_TIMEOUT_MAX_MS = 2000;
const READ_INDEX_TIMEOUT_MS = 2000;
const ENV: Record<string, string> = {
  KAPI_RAFT_TICK_MS: '100',
  KAPI_READ_INDEX_TIMEOUT_MS: String(READ_INDEX_TIMEOUT_MS),
  KAPI_LEASE_DURATION_MS: '6000',
  KAPI_LEASE_RENEW_DEADLINE_MS: '4000',
  KAPI_LEASE_RETRY_PERIOD_MS: '1000',
  KAPI_SNAPSHOT_COUNT: String(SNAPSHOT_COUNT),
  KAPI_SNAPSHOT_CATCHUP_ENTRIES: String(SNAPSHOT_CATCHUP),
};

describe('three-node chaos', () => {
  let dir = '';
  let network: Network | undefined;
  const nodes: ServerHandle[] = [];
  let haproxy: ChildProcess | undefined;
  let balancer: HttpTarget | undefined;
  let balancerNote = '';
  /** Stopped in afterAll too: a live watcher reconnects forever and would keep Jest running. */
  const watchers: Watcher[] = [];
  const killHaproxy = (): void => {
    haproxy?.kill('SIGKILL');
  };

  beforeAll(async () => {
    dir = await fs.mkdtemp(join(tmpdir(), 'kapi-chaos3-'));
    let useNetns: boolean;
    if (process.env.CHAOS_NETNS === '0') {
      recordUncovered('netns', `${NETNS_NEEDS}, by CHAOS_NETNS=0`);
      useNetns = false;
    } else {
      useNetns = prerequisite('netns', NETNS_NEEDS);
    }
    network = useNetns ? netnsNetwork() : loopbackNetwork();
    const net = network;
    const ports = await Promise.all(NAMES.map(() => getFreePort()));
    const peerPorts = await Promise.all(NAMES.map(() => getFreePort()));
    const peers = await Promise.all(NAMES.map((_, i) => net.peerAddress(i, peerPorts[i]!)));
    const hosts = [...new Set(['127.0.0.1', ...NAMES.map((_, i) => net.host(i))])];
    await createPki({ outDir: join(dir, 'pki'), hosts });
    const initial = NAMES.map((n, i) => `${n}=${peers[i]}`).join(',');
    // Founding members start together: none is ready before a quorum elected a leader.
    const started = await Promise.all(
      NAMES.map((n, i) => {
        const wrap = net.wrap(i);
        return startServer({
          args: ['--name', n, '--pki-dir', join(dir, 'pki'), '--listen-peer-port', String(peerPorts[i]), '--initial-cluster', initial],
          dataDir: join(dir, n),
          env: ENV,
          port: ports[i]!,
          host: net.host(i),
          readyTimeoutMs: 60_000,
          ...(wrap !== undefined ? { wrap } : {}),
        });
      }),
    );
    nodes.push(...started);

    const haproxyBin = prerequisite('haproxy', 'three-node chaos: the workload through the balancer (test/chaos/cluster.chaos.test.ts)')
      ? findExecutable('haproxy')
      : undefined;
    if (haproxyBin === undefined) {
      balancerNote = 'without haproxy (KAPI_TEST_WITHOUT)';
    } else {
      const lbPort = await getFreePort();
      const base = clusterTopology({ nodes: [...NAMES], host: '127.0.0.1', balancerPort: lbPort, baseDir: dir });
      const topology = { ...base, nodes: base.nodes.map((n, i) => ({ ...n, address: net.host(i), securePort: ports[i]!, peerPort: peerPorts[i]! })) };
      const cfg = join(dir, 'haproxy.cfg');
      await fs.writeFile(cfg, haproxyConfig(topology));
      haproxy = spawn(haproxyBin, ['-f', cfg, '-db', '-q'], { stdio: ['ignore', 'ignore', 'pipe'] });
      process.once('exit', killHaproxy);
      const lb: HttpTarget = {
        url: `https://127.0.0.1:${lbPort}`,
        caPem: nodes[0]!.caPem,
        adminCertPem: nodes[0]!.adminCertPem,
        adminKeyPem: nodes[0]!.adminKeyPem,
      };
      for (let i = 0; i < 100; i++) {
        const r = await ctl(lb, 'GET', '/readyz', { timeoutMs: 1000 });
        if (r.status === 200) {
          balancer = lb;
          break;
        }
        await delay(100);
      }
      if (balancer === undefined) throw new Error('haproxy never answered /readyz');
    }
    for (const ns of [NS, PAGES_NS, MINORITY_NS]) {
      const r = await ctl(nodes[0]!, 'POST', '/api/v1/namespaces', { body: { metadata: { name: ns } }, timeoutMs: 15_000 });
      if (r.status !== 201) throw new Error(`setup: creating namespace ${ns} answered ${r.status}${'text' in r ? `: ${r.text}` : ''}`);
    }
    // The root-CA publisher writes kube-root-ca.crt into each new namespace; the watches checked
    // below start after it, so every event they see is the workload's.
    for (const ns of [NS, PAGES_NS, MINORITY_NS]) {
      const deadline = Date.now() + 15_000;
      for (;;) {
        const r = await ctl(nodes[0]!, 'GET', `/api/v1/namespaces/${ns}/configmaps/kube-root-ca.crt`, { timeoutMs: 5000 });
        if (isOk(r) && r.status === 200) break;
        if (Date.now() > deadline) throw new Error(`setup: kube-root-ca.crt never appeared in ${ns}`);
        await delay(100);
      }
    }
  }, 180_000);

  afterAll(async () => {
    await Promise.all(watchers.map((w) => w.stop()));
    for (const h of nodes) {
      try {
        if (h.pid !== undefined) resume(h);
      } catch {
        // already gone
      }
    }
    network?.heal();
    await Promise.all(nodes.map((h) => h.cleanup().catch(() => undefined)));
    if (haproxy !== undefined && haproxy.exitCode === null) {
      const child = haproxy;
      // A plain delay() here would hold Jest open for its full length after haproxy exited.
      let timer: NodeJS.Timeout | undefined;
      const exited = new Promise<void>((r) => {
        child.once('exit', () => r());
        timer = setTimeout(() => {
          child.kill('SIGKILL');
          r();
        }, 5000);
      });
      child.kill('SIGTERM');
      await exited;
      clearTimeout(timer);
    }
    process.removeListener('exit', killHaproxy);
    await network?.cleanup();
    await closeCtlAgents();
    if (dir !== '') await fs.rm(dir, { recursive: true, force: true });
  }, 60_000);

  /** The leader two or more nodes agree on (bounded wait). */
  async function leaderIndex(among: readonly number[] = [0, 1, 2], timeoutMs = 30_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const votes = new Map<string, number>();
      await Promise.all(
        among.map(async (i) => {
          const r = await ctl(nodes[i]!, 'GET', '/cluster/members?local=true', { timeoutMs: 1500 });
          if (isOk(r) && r.status === 200) {
            const leader = r.json<{ leader?: string }>().leader;
            if (leader !== undefined) votes.set(leader, (votes.get(leader) ?? 0) + 1);
          }
        }),
      );
      for (const [name, n] of votes) {
        const i = NAMES.indexOf(name as (typeof NAMES)[number]);
        if (n >= Math.min(2, among.length) && among.includes(i)) return i;
      }
      await delay(100);
    }
    throw new Error(`no leader agreed on by nodes ${among.map((i) => NAMES[i]).join(',')} within ${timeoutMs} ms`);
  }

  /** What each node says about itself, for failure messages. */
  async function diagnose(): Promise<string> {
    const parts = await Promise.all(
      nodes.map(async (n, i) => {
        const ready = await ctl(n, 'GET', '/readyz?verbose', { timeoutMs: 2000 });
        const members = await ctl(n, 'GET', '/cluster/members?local=true', { timeoutMs: 2000 });
        const text = (r: CtlResponse | { status: string }): string => `${r.status} ${isOk(r) ? r.text.replace(/\s+/g, ' ').slice(0, 400) : ''}`;
        // Server log lines without stack frames.
        const log = n.stderr
          .split('\n')
          .filter((l) => l.trim() !== '' && !/^\s+at /.test(l) && !/^\s*\d+ \|/.test(l) && !/^\s*[|>]/.test(l))
          .slice(-12)
          .join('\n    ');
        return `${NAMES[i]} pid=${n.pid ?? '-'} exited=${JSON.stringify(n.exited)}\n  readyz: ${text(ready)}\n  members: ${text(members)}\n  log:\n    ${log}`;
      }),
    );
    return parts.join('\n');
  }

  /** Waits until every node is ready and all agree on one leader. */
  async function settle(): Promise<void> {
    const deadline = Date.now() + 40_000;
    while (Date.now() < deadline) {
      const ready = await Promise.all(nodes.map((n) => ctl(n, 'GET', '/readyz', { timeoutMs: 1500 })));
      if (ready.every((r) => r.status === 200)) {
        const leaders = await Promise.all(nodes.map((n) => ctl(n, 'GET', '/cluster/members?local=true', { timeoutMs: 1500 })));
        const names = leaders.map((r) => (isOk(r) && r.status === 200 ? r.json<{ leader?: string }>().leader : undefined));
        if (names[0] !== undefined && names.every((x) => x === names[0])) return;
      }
      await delay(200);
    }
    throw new Error(`cluster did not settle within 40 s:\n${await diagnose()}`);
  }

  /** Most Recent GETs to `i` for `ms`, one after the other; every status is recorded. */
  async function minorityReads(i: number, ms: number, into: Array<number | string>): Promise<void> {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      const r = await ctl(nodes[i]!, 'GET', `/api/v1/namespaces/${NS}/configmaps/chaos-0`, { timeoutMs: READ_INDEX_TIMEOUT_MS + 3000 });
      into.push(r.status);
      await delay(100);
    }
  }

  /**
   * Creates an object on the majority side (retrying while it elects a leader), then sends a
   * conditional PUT and DELETE of it to the cut-off node `i`, which has not seen it. Neither
   * may answer 404 (the object exists), 409 (the precondition holds) or 200 (no quorum): a
   * definite answer there means the node decided a write from its local, stale state.
   */
  async function minorityWrites(i: number, majority: readonly number[], name: string, into: string[]): Promise<void> {
    const base = `/api/v1/namespaces/${MINORITY_NS}/configmaps`;
    let rv: string | undefined;
    const deadline = Date.now() + 10_000;
    for (let k = 0; rv === undefined && Date.now() < deadline; k++) {
      const r = await ctl(nodes[majority[k % majority.length]!]!, 'POST', base, { body: { metadata: { name }, data: { v: name } }, timeoutMs: 4000 });
      if (isOk(r) && r.status === 201) rv = r.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
      else await delay(200);
    }
    if (rv === undefined) {
      into.push('majority create never succeeded');
      return;
    }
    const timeoutMs = READ_INDEX_TIMEOUT_MS + 4000;
    const put = await ctl(nodes[i]!, 'PUT', `${base}/${name}`, { body: { metadata: { name, resourceVersion: rv }, data: { v: 'from-minority' } }, timeoutMs });
    into.push(`PUT ${put.status}`);
    const del = await ctl(nodes[i]!, 'DELETE', `${base}/${name}`, {
      body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { resourceVersion: rv } },
      timeoutMs,
    });
    into.push(`DELETE ${del.status}`);
  }

  it(
    'survives leader/follower crashes, pauses, partitions, full restarts and snapshot catch-up with every check passing',
    async () => {
      const net = network!;
      const origin = process.hrtime.bigint();
      const first = await ctl(nodes[0]!, 'GET', `/api/v1/namespaces/${NS}/configmaps`, { timeoutMs: 10_000 });
      expect(first.status).toBe(200);
      const startRv = Number((first as CtlResponse).json<ListObj>().metadata.resourceVersion);
      // One watcher per node, starting there; on failure it moves to the next node and resumes
      // from its last revision (list on one node, watch on another).
      watchers.push(
        ...NAMES.map((_, i) =>
          startWatcher(
            [0, 1, 2].map((k) => nodes[(i + k) % 3]!),
            NS,
            startRv,
            origin,
          ),
        ),
      );

      const faults: FaultRecord[] = [];
      const active = new Set<FaultRecord>();
      const onOp = (op: RecordedOp): void => {
        for (const f of active) {
          if (op.call < f.start) continue;
          if (op.outcome === 'unknown' || op.outcome === 'dropped') f.failed++;
          if (f.firstWriteMs === undefined && op.outcome === 'ok' && op.kind !== 'get' && op.kind !== 'list') f.firstWriteMs = (op.ret - f.start) / 1e6;
        }
      };

      const stop = new AbortController();
      const endpoints: HttpTarget[] = [...nodes, ...(balancer !== undefined ? [balancer] : [])];
      const workload = runWorkload({
        endpoints,
        namespace: NS,
        clients: CLIENTS,
        keys: KEYS,
        maxOps: 10_000_000,
        durationMs: 3_600_000,
        requestTimeoutMs: 3000,
        origin,
        onOp,
        signal: stop.signal,
      });

      const began = Date.now();
      let round = 0;
      let faultError: unknown;
      try {
        await delay(1000);
        while (round < ROUNDS || Date.now() - began < SECONDS * 1000) {
          for (const kind of faultKinds(net)) {
            await settle();
            await delay(500);
            const leader = await leaderIndex();
            const follower = (leader + 1 + (round % 2)) % 3;
            const target = kind.endsWith('leader') ? leader : kind === 'restart-all' ? -1 : follower;
            const f: FaultRecord = {
              kind,
              round,
              node: target < 0 ? 'all' : NAMES[target]!,
              start: nowNs(origin),
              end: 0,
              failed: 0,
              minorityReads: [],
              minorityWrites: [],
              notes: [],
            };
            faults.push(f);
            active.add(f);
            const others = [0, 1, 2].filter((i) => i !== target);
            switch (kind) {
              case 'kill-leader':
              case 'kill-follower':
                await nodes[target]!.kill();
                await delay(1500);
                await nodes[target]!.start();
                break;
              case 'pause-leader':
                pause(nodes[target]!);
                await delay(ELECTION_TIMEOUT_MAX_MS + 1500);
                resume(nodes[target]!);
                break;
              case 'partition-leader':
              case 'isolate-follower': {
                net.cut([target], others);
                // Reads sent after the cut; all answered (or timed out) before healing, so none
                // can be legitimately served by a quorum restored later.
                await Promise.all([
                  delay(ELECTION_TIMEOUT_MAX_MS + 1500),
                  // Three readers in parallel: each read waits out the ReadIndex timeout.
                  ...[0, 1, 2].map(() => minorityReads(target, ELECTION_TIMEOUT_MAX_MS, f.minorityReads)),
                  minorityWrites(target, others, `m-${faults.length}`, f.minorityWrites),
                ]);
                net.heal();
                break;
              }
              case 'restart-all':
                await Promise.all(nodes.map((n) => n.kill()));
                await delay(500);
                await Promise.all(nodes.map((n) => n.start()));
                break;
              case 'snapshot-catchup': {
                const applied = await metric(nodes[target]!, 'etcd_server_proposals_applied_total');
                await nodes[target]!.kill();
                // Down until the leader's log no longer holds what the node needs next.
                const deadline = Date.now() + 30_000;
                let snap = NaN;
                while (Date.now() < deadline) {
                  snap = await metric(nodes[leader]!, 'kapi_raft_snapshot_index');
                  if (snap - SNAPSHOT_CATCHUP > applied + 5) break;
                  await delay(200);
                }
                f.notes.push(`down at applied ${applied}, leader snapshot ${snap}`);
                await nodes[target]!.start();
                let restored = 0;
                for (let i = 0; i < 50 && !(restored >= 1); i++) {
                  restored = await metric(nodes[target]!, 'kapi_raft_snapshots_restored_total');
                  if (!(restored >= 1)) await delay(200);
                }
                f.notes.push(`snapshots restored ${restored}`);
                break;
              }
            }
            await settle();
            // Let the fault's aftermath show in the figures (requests still failing just after).
            await delay(1000);
            f.end = nowNs(origin);
            active.delete(f);
          }
          round++;
        }
      } catch (e) {
        faultError = e;
        const done = faults.map((f) => `r${f.round} ${f.kind} on ${f.node}${f.end === 0 ? ' (in progress)' : ''}`).join(', ');
        console.log(`chaos cluster: fault loop failed after: ${done}\n${(e as Error).message.slice(0, 3000)}\n${await diagnose()}`);
      } finally {
        stop.abort();
      }
      const result = await workload;
      if (faultError !== undefined) throw faultError;
      net.heal();
      await settle();

      // Final Most Recent reads on every node: part of the history, so a lost acknowledged
      // write (or a node serving an old state) makes it non-linearizable.
      const finalOps: KeyOp[] = [];
      let id = 1e9;
      for (let n = 0; n < 3; n++) {
        for (let k = 0; k < KEYS; k++) {
          const key = `chaos-${k}`;
          for (let attempt = 0; attempt < 10; attempt++) {
            const call = nowNs(origin);
            const r = await ctl(nodes[n]!, 'GET', `/api/v1/namespaces/${NS}/configmaps/${key}`, { timeoutMs: 10_000 });
            const ret = nowNs(origin);
            if (r.status === 404)
              finalOps.push({
                id: id++,
                key,
                client: -1 - n,
                call,
                ret,
                input: { kind: 'get' },
                output: { kind: 'notFound' },
                note: `final read on ${NAMES[n]}`,
              });
            else if (r.status === 200) {
              const o = (r as CtlResponse).json<{ metadata: { resourceVersion: string }; data?: { v?: string } }>();
              finalOps.push({
                id: id++,
                key,
                client: -1 - n,
                call,
                ret,
                input: { kind: 'get' },
                output: { kind: 'ok', rv: Number(o.metadata.resourceVersion), value: o.data?.v ?? '' },
                note: `final read on ${NAMES[n]}`,
              });
            } else {
              await delay(300);
              continue;
            }
            break;
          }
        }
      }
      expect(finalOps).toHaveLength(3 * KEYS);
      const history = [...result.history, ...finalOps];

      // Convergence: each node's local state (resourceVersion=0) of the test namespace: same
      // list revision and the same items. Background writes (the controller Lease) move the
      // revision, so poll until a moment when all three agree.
      const stateOf = async (n: ServerHandle): Promise<string> => {
        const r = await ctl(n, 'GET', `/api/v1/namespaces/${NS}/configmaps?resourceVersion=0`, { timeoutMs: 5000 });
        if (!isOk(r) || r.status !== 200) return `status ${r.status}`;
        const l = r.json<ListObj>();
        const items = l.items.map((it) => `${it.metadata.name}@${it.metadata.resourceVersion}=${JSON.stringify(it.data ?? {})}`).sort();
        return `rv ${l.metadata.resourceVersion} hash ${createHash('sha256').update(items.join('\n')).digest('hex').slice(0, 16)} (${items.length} items)`;
      };
      let states: string[] = [];
      for (let i = 0; i < 100; i++) {
        states = await Promise.all(nodes.map(stateOf));
        if (states.every((s) => s === states[0]) && states[0]!.startsWith('rv')) break;
        await delay(100);
      }

      // A continue token from one node is accepted by another (MVCC read at the token's revision).
      for (let i = 0; i < 5; i++) {
        const r = await ctl(nodes[0]!, 'POST', `/api/v1/namespaces/${PAGES_NS}/configmaps`, { body: { metadata: { name: `page-${i}` } }, timeoutMs: 10_000 });
        expect([201, 409]).toContain(r.status);
      }
      const pagesPath = `/api/v1/namespaces/${PAGES_NS}/configmaps`;
      const page1 = (await ctl(nodes[0]!, 'GET', `${pagesPath}?limit=2`, { timeoutMs: 10_000 })) as CtlResponse;
      expect(page1.status).toBe(200);
      const p1 = page1.json<ListObj>();
      expect(p1.metadata.continue).toBeTruthy();
      const page2 = (await ctl(nodes[1]!, 'GET', `${pagesPath}?limit=2&continue=${encodeURIComponent(p1.metadata.continue!)}`, {
        timeoutMs: 10_000,
      })) as CtlResponse;
      expect(page2.status).toBe(200);
      const p2 = page2.json<ListObj>();
      const page3 = (await ctl(nodes[2]!, 'GET', `${pagesPath}?continue=${encodeURIComponent(p2.metadata.continue ?? '')}`, {
        timeoutMs: 10_000,
      })) as CtlResponse;
      expect(page3.status).toBe(200);
      const paged = [...p1.items, ...p2.items, ...page3.json<ListObj>().items].map((o) => o.metadata.name);
      // The namespace's kube-root-ca.crt (the root-CA publisher's) sorts first.
      expect(paged).toEqual(['kube-root-ca.crt', 'page-0', 'page-1', 'page-2', 'page-3', 'page-4']);

      // Every watcher catches up to a fresh write, then stops.
      const probe = await ctl(nodes[0]!, 'POST', `/api/v1/namespaces/${NS}/configmaps`, {
        body: { metadata: { name: 'chaos-probe' }, data: { v: 'probe' } },
        timeoutMs: 10_000,
      });
      expect(probe.status).toBe(201);
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline && !watchers.every((w) => w.events.some((e) => e.key === 'chaos-probe'))) await delay(100);
      await Promise.all(watchers.map((w) => w.stop()));

      const t0 = Date.now();
      // Unknown outcomes: a write cut by a fault is applied within its proposal timeout (10 s)
      // or never; a partitioned old leader's entry is overwritten once it rejoins.
      const check = checkHistory(history, { unknownWindow: 20e9 });
      const checkMs = Date.now() - t0;
      const watchProblems = watchers
        .map((w, i) =>
          [
            ...w.problems,
            ...checkWatch(
              w.events.filter((e) => e.key !== 'chaos-probe'),
              history,
              startRv,
            ),
          ].map((p) => `watcher ${NAMES[i]}: ${p}`),
        )
        .flat();

      if (process.env.CHAOS_DUMP !== undefined) {
        // For post-mortems: every op and fault, times in ns since the origin.
        await fs.writeFile(process.env.CHAOS_DUMP, JSON.stringify({ faults, ops: result.ops.map(({ keyOps: _k, ...o }) => o), finalOps }, null, 0));
      }
      const n = (p: (o: RecordedOp) => boolean): number => result.ops.filter(p).length;
      const failover = faults
        .filter((f) => f.kind === 'kill-leader')
        .map((f) => f.firstWriteMs)
        .filter((x): x is number => x !== undefined)
        .sort((a, b) => a - b);
      const fmt = (x: number | undefined): string => (x === undefined ? '-' : x.toFixed(0));
      console.log(
        [
          `chaos cluster (${net.mode}${balancer !== undefined ? ' + haproxy' : `; ${balancerNote}`}): ${((Date.now() - began) / 1000).toFixed(0)} s, ${round} rounds, ${CLIENTS} clients, ${KEYS} keys`,
          `ops ${result.ops.length}: ok ${n((o) => o.outcome === 'ok')}, refused-by-model ${n((o) => o.outcome === 'fail')}, unknown ${n((o) => o.outcome === 'unknown')}, not served ${n((o) => o.outcome === 'dropped')}; via balancer ${n((o) => o.endpoint === balancer?.url)}`,
          `failover (kill -9 of the leader to the first acknowledged write, ms): p50 ${fmt(quantile(failover, 0.5))} max ${fmt(failover[failover.length - 1])} over ${failover.length} [${failover.map(fmt).join(', ')}]`,
          ...faults.map(
            (f) =>
              `  r${f.round} ${f.kind.padEnd(17)} ${f.node.padEnd(3)} failed requests ${String(f.failed).padStart(4)}  first write ${fmt(f.firstWriteMs).padStart(5)} ms  fault+recovery ${((f.end - f.start) / 1e6).toFixed(0)} ms` +
              (f.minorityReads.length > 0 ? `  minority reads ${f.minorityReads.length} [${[...new Set(f.minorityReads)].join(',')}]` : '') +
              (f.minorityWrites.length > 0 ? `  minority writes [${f.minorityWrites.join(', ')}]` : '') +
              (f.notes.length > 0 ? `  (${f.notes.join('; ')})` : ''),
          ),
          `final state per node: ${states.map((s, i) => `${NAMES[i]} ${s}`).join(' | ')}`,
          `watch: ${watchers.map((w, i) => `${NAMES[i]} ${w.events.length} events/${w.reconnects() + 1} connections`).join(', ')}`,
          `linearizability: ${history.length} key-ops, ${check.keys.length} keys, ${checkMs} ms`,
        ].join('\n'),
      );

      // Every check is evaluated and reported together, so one run shows every violation.
      const violations: string[] = [];
      for (const kind of faultKinds(net)) {
        const times = faults.filter((f) => f.kind === kind).length;
        if (times < ROUNDS) violations.push(`fault ${kind} injected ${times} times, expected ${ROUNDS}`);
      }
      if (n((o) => o.outcome === 'ok') <= 100) violations.push(`only ${n((o) => o.outcome === 'ok')} acknowledged ops`);
      if (balancer !== undefined && n((o) => o.endpoint === balancer!.url && o.outcome === 'ok') === 0) violations.push('no op succeeded through the balancer');
      if (!states.every((s) => s === states[0] && s.startsWith('rv'))) violations.push(`nodes did not converge: ${states.join(' | ')}`);
      const reads = faults.flatMap((f) => f.minorityReads.map((s) => `${f.kind} r${f.round} on ${f.node}: GET ${s}`));
      if (reads.length === 0 && net.mode === 'netns') violations.push('no Most Recent read reached a minority');
      violations.push(...reads.filter((r) => r.endsWith(' 200')).map((r) => `minority answered a Most Recent read: ${r}`));
      const writes = faults.flatMap((f) => f.minorityWrites.map((w) => `${f.kind} r${f.round} on ${f.node}: ${w}`));
      violations.push(...writes.filter((w) => / (200|404|409)$|never/.test(w)).map((w) => `minority gave a definite answer to a write: ${w}`));
      for (const f of faults) {
        if (f.kind === 'snapshot-catchup' && !f.notes.some((x) => /snapshots restored [1-9]/.test(x)))
          violations.push(`r${f.round} snapshot-catchup: ${f.node} did not install a snapshot (${f.notes.join('; ')})`);
      }
      violations.push(...check.keys.filter((k) => !k.ok).map((k) => formatFailure(k)));
      violations.push(...watchProblems);
      expect(violations).toEqual([]);
    },
    Math.max(SECONDS, ROUNDS * 70) * 1000 + 240_000,
  );
});
