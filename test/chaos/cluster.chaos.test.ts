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
 *   all three at once; a follower down long enough to need a snapshot, then back; then the
 *   membership phase (chaos.membership.ts): a fourth node added as a learner and promoted
 *   (a follower killed while it is pending), a follower whose data dir is wiped removed and
 *   added back (the leader killed while it is pending), a voter removed (the round ends with
 *   three voters). The workload and the watchers follow the members.
 * Checks afterwards: no acknowledged write lost (final Most Recent reads on every node are part
 * of the linearizability check), every node converges to the same revision and content hash,
 * per-key histories are linearizable, no watch (one following each node) sees revisions go
 * backwards or misses an event, a minority side never answers a Most Recent read, a continue
 * token from one node is accepted by another; every member lists exactly the current members,
 * all voters; a replaced member installed a snapshot; a removed member stopped being ready.
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
import { delay, getFreePort, type HttpTarget, type ServerHandle } from '../support/server.js';
import { prerequisite, recordUncovered } from '../support/prereq.js';
import { closeCtlAgents, ctl, isOk, metric, quantile, type CtlResponse, type FaultRecord, type ListObj } from './chaos.client.js';
import { ChaosCluster } from './chaos.cluster.js';
import { addMember, membershipProblems, removeMember, replaceWiped, type MembershipTimings } from './chaos.membership.js';
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
/** Network slots: three members, and a fourth while the membership phase adds one. */
const SLOTS = 4;
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
  let cluster: ChaosCluster | undefined;
  /** The balancer's processes: the current one last, earlier ones still finishing their connections. */
  const haproxies: ChildProcess[] = [];
  let balancer: HttpTarget | undefined;
  let balancerNote = '';
  /** Balancer reloads for a change of members, and the errors of any that failed. */
  let reloads = 0;
  const reloadErrors: string[] = [];
  /** Set once the teardown stops the balancer (its exit is then expected). */
  let stoppingBalancer = false;
  /** Stopped in afterAll too: a live watcher reconnects forever and would keep Jest running. */
  const watchers: Watcher[] = [];
  const killHaproxy = (): void => {
    stoppingBalancer = true;
    for (const h of haproxies) h.kill('SIGKILL');
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
    network = useNetns ? netnsNetwork(SLOTS) : loopbackNetwork();
    const net = network;
    const hosts = [...new Set(['127.0.0.1', ...Array.from({ length: SLOTS }, (_, i) => net.host(i))])];
    await createPki({ outDir: join(dir, 'pki'), hosts });
    cluster = new ChaosCluster({ dir, pkiDir: join(dir, 'pki'), net, env: ENV, slots: SLOTS });
    const c = cluster;
    const plans = [];
    for (let i = 0; i < 3; i++) plans.push(await c.plan(c.newName(), i));
    const initial = plans.map((m) => `${m.name}=${m.peerURL}`).join(',');
    // Founding members start together: none is ready before a quorum elected a leader.
    for (const m of await Promise.all(plans.map((p) => c.launch(p, initial, 'new')))) c.attach(m);
    const nodes = c.nodes;

    const haproxyBin = prerequisite('haproxy', 'three-node chaos: the workload through the balancer (test/chaos/cluster.chaos.test.ts)')
      ? findExecutable('haproxy')
      : undefined;
    if (haproxyBin === undefined) {
      balancerNote = 'without haproxy (KAPI_TEST_WITHOUT)';
    } else {
      const lbPort = await getFreePort();
      const cfg = join(dir, 'haproxy.cfg');
      /**
       * Writes the balancer's configuration for the current members and starts haproxy on it. A
       * running balancer is replaced as an operator reloads one (`-sf`): the new process takes
       * new connections, the old one finishes the connections it has and exits.
       */
      const startBalancer = async (): Promise<void> => {
        const base = clusterTopology({ nodes: c.members.map((m) => m.name), host: '127.0.0.1', balancerPort: lbPort, baseDir: dir });
        const topology = {
          ...base,
          nodes: base.nodes.map((n, i) => ({ ...n, address: net.host(c.members[i]!.slot), securePort: c.members[i]!.port, peerPort: c.members[i]!.peerPort })),
        };
        await fs.writeFile(cfg, haproxyConfig(topology));
        const old = haproxies.filter((h) => h.exitCode === null && h.signalCode === null && h.pid !== undefined).map((h) => String(h.pid));
        const child = spawn(haproxyBin, ['-f', cfg, '-db', '-q', ...(old.length > 0 ? ['-sf', ...old] : [])], { stdio: ['ignore', 'ignore', 'pipe'] });
        haproxies.push(child);
        // A balancer that could not start (its configuration refused, its port not bound) is a
        // failed reload; one told to stop by the next reload or by the teardown exits with 0.
        child.once('error', (e) => reloadErrors.push(`haproxy did not start: ${e.message}`));
        child.once('exit', (code) => {
          haproxies.splice(haproxies.indexOf(child) >>> 0, 1);
          if (code !== 0 && !stoppingBalancer) reloadErrors.push(`haproxy exited with ${code ?? child.signalCode}`);
        });
      };
      await startBalancer();
      process.once('exit', killHaproxy);
      // Members come and go in the membership faults: the balancer follows them, as an
      // operator's would, so that its share of the workload keeps reaching the cluster.
      let reloading = Promise.resolve();
      c.onMembersChanged = (): void => {
        reloading = reloading
          .then(async () => {
            await startBalancer();
            reloads++;
          })
          .catch((e: unknown) => {
            reloadErrors.push(String(e));
          });
      };
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
      c.balancer = balancer;
      c.syncEndpoints();
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
    const nodes = cluster?.nodes ?? [];
    for (const h of nodes) {
      try {
        if (h.pid !== undefined) resume(h);
      } catch {
        // already gone
      }
    }
    network?.heal();
    await Promise.all(cluster?.members.map((m) => cluster!.dispose(m)) ?? []);
    if (cluster !== undefined) cluster.onMembersChanged = undefined;
    stoppingBalancer = true;
    for (const child of haproxies.filter((h) => h.exitCode === null && h.signalCode === null)) {
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

  /** Most Recent GETs to `i` for `ms`, one after the other; every status is recorded. */
  async function minorityReads(i: number, ms: number, into: Array<number | string>): Promise<void> {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      const r = await ctl(cluster!.nodes[i]!, 'GET', `/api/v1/namespaces/${NS}/configmaps/chaos-0`, { timeoutMs: READ_INDEX_TIMEOUT_MS + 3000 });
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
      const r = await ctl(cluster!.nodes[majority[k % majority.length]!]!, 'POST', base, { body: { metadata: { name }, data: { v: name } }, timeoutMs: 4000 });
      if (isOk(r) && r.status === 201) rv = r.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
      else await delay(200);
    }
    if (rv === undefined) {
      into.push('majority create never succeeded');
      return;
    }
    const timeoutMs = READ_INDEX_TIMEOUT_MS + 4000;
    const put = await ctl(cluster!.nodes[i]!, 'PUT', `${base}/${name}`, {
      body: { metadata: { name, resourceVersion: rv }, data: { v: 'from-minority' } },
      timeoutMs,
    });
    into.push(`PUT ${put.status}`);
    const del = await ctl(cluster!.nodes[i]!, 'DELETE', `${base}/${name}`, {
      body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { resourceVersion: rv } },
      timeoutMs,
    });
    into.push(`DELETE ${del.status}`);
  }

  it(
    'survives leader/follower crashes, pauses, partitions, full restarts, snapshot catch-up and membership changes with every check passing',
    async () => {
      const net = network!;
      const c = cluster!;
      const origin = process.hrtime.bigint();
      const first = await ctl(c.nodes[0]!, 'GET', `/api/v1/namespaces/${NS}/configmaps`, { timeoutMs: 10_000 });
      expect(first.status).toBe(200);
      const startRv = Number((first as CtlResponse).json<ListObj>().metadata.resourceVersion);
      // One watcher per node, starting there; on failure it moves to the next member and resumes
      // from its last revision (list on one node, watch on another). The members change.
      watchers.push(...[0, 1, 2].map((i) => startWatcher(c.watchEndpoints, NS, startRv, origin, i)));

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
      const timings: MembershipTimings[] = [];
      const workload = runWorkload({
        endpoints: c.endpoints,
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
          // Members this round added or replaced (not removed by its remove-member), and the
          // leader killed during replace-wiped (removed by remove-member on even rounds).
          const fresh: string[] = [];
          let killedLeader: string | undefined;
          for (const kind of faultKinds(net)) {
            await c.settle();
            await delay(500);
            const leader = await c.leaderIndex();
            const nodes = c.nodes;
            const follower = (leader + 1 + (round % 2)) % nodes.length;
            const target = kind.endsWith('leader') ? leader : kind === 'restart-all' || kind.endsWith('member') ? -1 : follower;
            const f: FaultRecord = {
              kind,
              round,
              node: target < 0 ? 'all' : c.name(target),
              start: nowNs(origin),
              end: 0,
              failed: 0,
              minorityReads: [],
              minorityWrites: [],
              notes: [],
            };
            faults.push(f);
            active.add(f);
            const others = nodes.map((_, i) => i).filter((i) => i !== target);
            const slot = (i: number): number => c.members[i]!.slot;
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
                net.cut([slot(target)], others.map(slot));
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
              case 'add-member':
                fresh.push(await addMember(c, f, timings));
                break;
              case 'replace-wiped': {
                const r = await replaceWiped(c, f, round, timings);
                fresh.push(r.replaced);
                killedLeader = r.killedLeader;
                break;
              }
              case 'remove-member':
                await removeMember(c, f, round, fresh, killedLeader, timings);
                break;
            }
            await c.settle();
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
        console.log(`chaos cluster: fault loop failed after: ${done}\n${(e as Error).message.slice(0, 3000)}\n${await c.diagnose()}`);
      } finally {
        stop.abort();
      }
      const result = await workload;
      if (faultError !== undefined) throw faultError;
      net.heal();
      await c.settle();
      const nodes = c.nodes;

      // Final Most Recent reads on every node: part of the history, so a lost acknowledged
      // write (or a node serving an old state) makes it non-linearizable.
      const finalOps: KeyOp[] = [];
      let id = 1e9;
      for (let n = 0; n < nodes.length; n++) {
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
                note: `final read on ${c.name(n)}`,
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
                note: `final read on ${c.name(n)}`,
              });
            } else {
              await delay(300);
              continue;
            }
            break;
          }
        }
      }
      expect(finalOps).toHaveLength(nodes.length * KEYS);
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

      // Every member lists exactly the current members, all voters.
      const membership = await membershipProblems(c);

      if (process.env.CHAOS_DUMP !== undefined) {
        // For post-mortems: every op and fault, and the per-key history the checker read (the
        // final reads included), times in ns since the origin.
        await fs.writeFile(process.env.CHAOS_DUMP, JSON.stringify({ faults, ops: result.ops.map(({ keyOps: _k, ...o }) => o), history }, null, 0));
      }

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
          ].map((p) => `watcher ${i}: ${p}`),
        )
        .flat();

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
          `ops ${result.ops.length}: ok ${n((o) => o.outcome === 'ok')}, refused-by-model ${n((o) => o.outcome === 'fail')}, unknown ${n((o) => o.outcome === 'unknown')}, not served ${n((o) => o.outcome === 'dropped')}; via balancer ${n((o) => o.endpoint === balancer?.url)} (ok ${n((o) => o.endpoint === balancer?.url && o.outcome === 'ok')}, ${reloads} reloads)`,
          `failover (kill -9 of the leader to the first acknowledged write, ms): p50 ${fmt(quantile(failover, 0.5))} max ${fmt(failover[failover.length - 1])} over ${failover.length} [${failover.map(fmt).join(', ')}]`,
          `membership (request to acknowledged, ms): ${timings.map((t) => `${t.kind} ${t.name} ${t.ms}${t.attempts > 1 ? ` (${t.attempts} attempts)` : ''}`).join(', ')}; members now ${c.members.map((m) => m.name).join(',')}, removed ${c.removed.join(',') || '-'}`,
          ...faults.map(
            (f) =>
              `  r${f.round} ${f.kind.padEnd(17)} ${f.node.padEnd(3)} failed requests ${String(f.failed).padStart(4)}  first write ${fmt(f.firstWriteMs).padStart(5)} ms  fault+recovery ${((f.end - f.start) / 1e6).toFixed(0)} ms` +
              (f.minorityReads.length > 0 ? `  minority reads ${f.minorityReads.length} [${[...new Set(f.minorityReads)].join(',')}]` : '') +
              (f.minorityWrites.length > 0 ? `  minority writes [${f.minorityWrites.join(', ')}]` : '') +
              (f.notes.length > 0 ? `  (${f.notes.join('; ')})` : ''),
          ),
          `final state per node: ${states.map((s, i) => `${c.name(i)} ${s}`).join(' | ')}`,
          `watch: ${watchers.map((w, i) => `watcher ${i} ${w.events.length} events/${w.reconnects() + 1} connections`).join(', ')}`,
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
      if (balancer !== undefined) {
        // In every round: the balancer follows the members, so it reaches the cluster after the
        // founding members are gone as well.
        for (const r of [...new Set(faults.map((f) => f.round))]) {
          const inRound = faults.filter((f) => f.round === r);
          const [from, to] = [Math.min(...inRound.map((f) => f.start)), Math.max(...inRound.map((f) => f.end))];
          if (n((o) => o.endpoint === balancer!.url && o.outcome === 'ok' && o.call >= from && o.call <= to) === 0)
            violations.push(`round ${r}: no op succeeded through the balancer`);
        }
        violations.push(...reloadErrors.map((e) => `balancer reload failed: ${e}`));
      }
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
      for (const f of faults) {
        if (f.kind === 'replace-wiped' && !f.notes.some((x) => /snapshots restored [1-9]/.test(x)))
          violations.push(`r${f.round} replace-wiped: ${f.node} did not install a snapshot (${f.notes.join('; ')})`);
        if (f.kind === 'remove-member' && f.notes.includes('removed node still ready'))
          violations.push(`r${f.round} remove-member: ${f.node} still ready after its removal`);
      }
      violations.push(...membership.map((p) => `membership: ${p}`));
      violations.push(...check.keys.filter((k) => !k.ok).map((k) => formatFailure(k)));
      violations.push(...watchProblems);
      expect(violations).toEqual([]);
    },
    Math.max(SECONDS, ROUNDS * 110) * 1000 + 240_000,
  );
});
