/**
 * The replicated cluster with real processes (docs/cluster.md): three API servers started with
 * --name / --initial-cluster / --listen-peer-port and one shared PKI. Covers: writes on any node
 * readable (Most Recent) on every node; kubectl against a follower; list on one node and watch
 * from that resourceVersion on another; a node cut off from the others (its peers SIGSTOPped)
 * answers resourceVersion=0 reads but not Most Recent reads (504 Status); kill -9 of the leader
 * (new leader, writes continue, no acknowledged write lost, the old leader catches up on
 * restart); a node down across a snapshot catches up by snapshot; a 4th node added as learner,
 * promoted to voter and removed; the controller Lease moving when its holder dies, with a
 * namespace deletion completing afterwards.
 *
 * Test-only tunings (env): Lease 6 s / renew deadline 4 s / retry 1 s (the defaults are
 * 15/10/2 s), ReadIndex bound 2 s; flags: --snapshot-count 40 --snapshot-catchup-entries 5.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { tlsChannelCredentials } from '@app/grpc';
import { findRaftProto, msg, raftService } from '@app/raft';
import { createPki, issueClientCertificate, loadPki } from '@app/pki';
import { clusterAdminService } from '../apps/apiserver/src/cluster/cluster.forward.js';
import { rawPost } from './support/cluster.helper.js';
import { delay, getFreePort, kubectl, metricSum, metricValue, request, startServer, type ServerHandle } from './support/server.js';

interface Member {
  name: string;
  role: string;
  isLeader: boolean;
}
interface Members {
  leader?: string;
  reportedBy: string;
  linearizable: boolean;
  members: Member[];
}
interface Obj {
  metadata: { name: string; resourceVersion: string };
  items?: Obj[];
  spec?: { holderIdentity?: string };
}

const NAMES = ['n1', 'n2', 'n3'];

const ENV = {
  KAPI_LEASE_DURATION_MS: '6000',
  KAPI_LEASE_RENEW_DEADLINE_MS: '4000',
  KAPI_LEASE_RETRY_PERIOD_MS: '1000',
  KAPI_READ_INDEX_TIMEOUT_MS: '2000',
};

describe('replicated cluster (3 real nodes)', () => {
  let dir: string;
  const nodes = new Map<string, ServerHandle>();
  const peerPorts = new Map<string, number>();
  let initial = '';
  /** Every write the cluster acknowledged: name -> data value. */
  const acked = new Map<string, string>();

  const node = (name: string): ServerHandle => nodes.get(name)!;
  const args = (name: string, extra: string[] = [], cluster = initial): string[] => [
    '--name',
    name,
    '--pki-dir',
    join(dir, 'pki'),
    '--listen-peer-port',
    String(peerPorts.get(name)),
    '--initial-cluster',
    cluster,
    '--snapshot-count',
    '40',
    '--snapshot-catchup-entries',
    '5',
    ...extra,
  ];

  const cmPath = (ns = 'default', name?: string) => `/api/v1/namespaces/${ns}/configmaps${name ? `/${name}` : ''}`;
  const create = async (on: ServerHandle, name: string, v = name, ns = 'default') => {
    const r = await request(on, 'POST', cmPath(ns), { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v } }, timeoutMs: 15_000 });
    if (r.status === 201 && ns === 'default') acked.set(name, v);
    return r;
  };
  const members = async (on: ServerHandle, local = false): Promise<Members> =>
    (await request(on, 'GET', `/cluster/members${local ? '?local=true' : ''}`)).json<Members>();
  const leaderName = async (among: string[]): Promise<string> => {
    for (let i = 0; i < 100; i++) {
      for (const n of among) {
        // Each node's own view (a node cut off from the majority cannot answer a linearizable list).
        const m = await members(node(n), true).catch(() => undefined);
        if (m?.leader && among.includes(m.leader)) return m.leader;
      }
      await delay(100);
    }
    throw new Error('no leader elected');
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kapi-cluster-'));
    await createPki({ outDir: join(dir, 'pki'), hosts: ['127.0.0.1'] });
    for (const n of [...NAMES, 'n4']) peerPorts.set(n, await getFreePort());
    initial = NAMES.map((n) => `${n}=127.0.0.1:${peerPorts.get(n)}`).join(',');
    // Founding members start together: none is ready before a quorum elected a leader.
    const started = await Promise.all(NAMES.map((n) => startServer({ args: args(n), dataDir: join(dir, n), env: ENV, readyTimeoutMs: 40_000 })));
    started.forEach((h, i) => nodes.set(NAMES[i]!, h));
  });

  afterAll(async () => {
    for (const h of nodes.values()) {
      if (h.pid) process.kill(h.pid, 'SIGCONT');
      await h.cleanup();
    }
    await rm(dir, { recursive: true, force: true });
  });

  it('a write on any node is readable with a Most Recent read on every node; /readyz passes its raft check', async () => {
    for (const n of NAMES) expect((await create(node(n), `w-${n}`)).status).toBe(201);
    for (const reader of NAMES) {
      for (const writer of NAMES) {
        const r = await request(node(reader), 'GET', cmPath('default', `w-${writer}`));
        expect(r.status).toBe(200);
      }
    }
    const ready = await request(node('n1'), 'GET', '/readyz?verbose');
    expect(ready.body).toContain('[+]raft ok\n');
    const m = await members(node('n2'));
    expect(m.members.map((x) => `${x.name}:${x.role}`).sort()).toEqual(['n1:voter', 'n2:voter', 'n3:voter']);
    expect(await metricValue(node('n1'), 'etcd_server_has_leader')).toBe(1);
    // The writes through the two followers: the leader told each of them of its own write's
    // commit at once (an urgent commit notice), without waiting for a later append.
    const leader = await leaderName(NAMES);
    const notices = (await request(node(leader), 'GET', '/metrics')).body;
    expect(Number(/^kapi_raft_commit_notices_sent_total\{reason="urgent"\} (\d+)$/m.exec(notices)?.[1])).toBeGreaterThanOrEqual(2);
    expect(notices).toMatch(/^kapi_raft_commit_notices_sent_total\{reason="timer"\} \d+$/m);
  });

  it("the peer port refuses the API's client certificates (same CA): no Raft message, no membership change", async () => {
    const pki = await loadPki(join(dir, 'pki'));
    const alice = await issueClientCertificate(join(dir, 'pki'), 'alice', ['dev']);
    const admin = { certPem: pki.adminCertPem, keyPem: pki.adminKeyPem };
    const leader = await leaderName(NAMES);
    const follower = NAMES.find((n) => n !== leader)!;
    const Admin = grpc.makeGenericClientConstructor(clusterAdminService(), 'ClusterAdmin');
    const Raft = grpc.makeGenericClientConstructor(raftService(findRaftProto()), 'RaftTransport');
    for (const id of [alice, admin]) {
      const creds = tlsChannelCredentials({ ca: pki.caPem, key: id.keyPem, cert: id.certPem });
      const address = `127.0.0.1:${peerPorts.get(leader)}`;
      const adminClient = new Admin(address, creds, { 'grpc.enable_retries': 0 }) as unknown as {
        ChangeMember(req: object, cb: (e: grpc.ServiceError | null) => void): void;
        close(): void;
      };
      const removal = await new Promise<grpc.ServiceError | null>((resolve) =>
        adminClient.ChangeMember({ op: 'remove', name: follower, requestedBy: 'mallory' }, resolve),
      );
      expect(removal?.code).toBe(grpc.status.PERMISSION_DENIED);
      adminClient.close();
      // An append from a forged leader of a later term.
      const raftClient = new Raft(`127.0.0.1:${peerPorts.get(follower)}`, creds, { 'grpc.enable_retries': 0 }) as unknown as {
        Stream(cb: (e: grpc.ServiceError | null) => void): grpc.ClientWritableStream<unknown>;
        close(): void;
      };
      const forged = await new Promise<grpc.ServiceError | null>((resolve) => {
        const s = raftClient.Stream(resolve);
        s.on('error', () => undefined);
        s.write([msg({ type: 'app', from: 99, to: 0, term: 1_000_000, index: 0, logTerm: 0, commit: 0 })]);
        s.end();
      });
      expect(forged?.code).toBe(grpc.status.PERMISSION_DENIED);
      raftClient.close();
    }
    // Nothing moved: the same three voters, the same leader, writes go on.
    const m = await members(node(follower));
    expect(
      m.members
        .filter((x) => x.role === 'voter')
        .map((x) => x.name)
        .sort(),
    ).toEqual([...NAMES].sort());
    expect(m.leader).toBe(leader);
    expect((await create(node(follower), 'after-peer-probe')).status).toBe(201);
  });

  it('kubectl against a follower creates, gets and lists', async () => {
    const leader = await leaderName(NAMES);
    const follower = node(NAMES.find((n) => n !== leader)!);
    const c = await kubectl(follower, ['create', 'configmap', 'kc-1', '--from-literal=a=b']);
    expect(c.code).toBe(0);
    acked.set('kc-1', '');
    const g = await kubectl(follower, ['get', 'configmap', 'kc-1', '-o', 'jsonpath={.data.a}']);
    expect(g.stdout).toBe('b');
    const l = await kubectl(node(leader), ['get', 'configmaps', '-o', 'name']);
    expect(l.stdout).toContain('configmap/kc-1');
  });

  it('a client lists on one node and watches from that resourceVersion on another', async () => {
    const list = (await request(node('n1'), 'GET', cmPath())).json<Obj>();
    const rv = list.metadata.resourceVersion;
    const watching = request(node('n3'), 'GET', `${cmPath()}?watch=1&resourceVersion=${rv}&timeoutSeconds=3`, { timeoutMs: 10_000 });
    await delay(300);
    expect((await create(node('n2'), 'watched-1')).status).toBe(201);
    expect((await create(node('n1'), 'watched-2')).status).toBe(201);
    const events = (await watching).body
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as { type: string; object: Obj });
    expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED watched-1', 'ADDED watched-2']);
    expect(Number(events[0]!.object.metadata.resourceVersion)).toBeGreaterThan(Number(rv));
  });

  it('a node cut off from the others answers resourceVersion=0 reads but not Most Recent reads', async () => {
    const [alone, ...others] = NAMES;
    for (const o of others) process.kill(node(o).pid!, 'SIGSTOP');
    try {
      await delay(500);
      // Answered (the request's own 20 s bound catches a hang), with a Status and no data.
      const fresh = await request(node(alone!), 'GET', cmPath('default', 'w-n1'), { timeoutMs: 20_000 });
      expect([503, 504]).toContain(fresh.status);
      expect(fresh.json<{ kind: string }>().kind).toBe('Status');
      expect(fresh.headers['retry-after']).toBeDefined();
      const stale = await request(node(alone!), 'GET', `${cmPath('default', 'w-n1')}?resourceVersion=0`);
      expect(stale.status).toBe(200);
      // The member list is a linearizable read as well; ?local=true shows this node's replica.
      const list = await request(node(alone!), 'GET', '/cluster/members', { timeoutMs: 20_000 });
      expect([503, 504]).toContain(list.status);
      expect(list.json<{ kind: string }>().kind).toBe('Status');
      const local = await request(node(alone!), 'GET', '/cluster/members?local=true');
      expect(local.status).toBe(200);
      expect(local.json<Members>()).toMatchObject({ reportedBy: alone, linearizable: false });
      expect(local.json<Members>().members.map((m) => m.name)).toEqual(NAMES);
    } finally {
      for (const o of others) process.kill(node(o).pid!, 'SIGCONT');
    }
    await leaderName(NAMES);
  });

  it('kill -9 of the leader: a new leader, writes continue, nothing acknowledged is lost, the old leader catches up', async () => {
    const leader = await leaderName(NAMES);
    const rest = NAMES.filter((n) => n !== leader);
    // Writes in flight through the followers while the leader dies: their nodes send them again
    // to the next leader, which appends each once (docs/raft.md "Resent proposals"), so every
    // one is answered 201 rather than 504 "outcome unknown".
    const inflight = Array.from({ length: 20 }, (_, i) =>
      create(node(rest[i % 2]!), `during-${i}`).then(
        (r) => r.status,
        (e: unknown) => String(e),
      ),
    );
    await node(leader).kill();
    // A client writing every 100 ms to the survivors: failover = kill to the first 201.
    const t0 = Date.now();
    let firstOk = -1;
    const attempts: Promise<unknown>[] = [];
    for (let i = 0; i < 150 && firstOk < 0; i++) {
      attempts.push(
        create(node(rest[i % 2]!), `after-kill-${i}`).then(
          (r) => {
            if (r.status === 201 && firstOk < 0) firstOk = Date.now() - t0;
          },
          () => undefined,
        ),
      );
      await delay(100);
    }
    await Promise.all(attempts);
    expect(await Promise.all(inflight)).toEqual(Array.from({ length: 20 }, () => 201));
    expect(firstOk).toBeGreaterThanOrEqual(0);
    const newLeader = await leaderName(rest);
    expect(newLeader).not.toBe(leader);
    for (const n of rest) {
      for (const name of acked.keys()) expect((await request(node(n), 'GET', cmPath('default', name))).status).toBe(200);
    }
    await node(leader).start();
    const latest = (await request(node(rest[0]!), 'GET', cmPath())).json<Obj>().metadata.resourceVersion;
    // "Not older than" the latest list: the restarted node waits until it applied that far.
    const caught = (await request(node(leader), 'GET', `${cmPath()}?resourceVersion=${latest}`, { timeoutMs: 20_000 })).json<Obj>();
    // Every acknowledged write is there (others whose outcome was unknown, e.g. 504, may be too).
    const names = new Set(caught.items!.map((o) => o.metadata.name));
    for (const name of acked.keys()) expect(names).toContain(name);
    console.log(`cluster.test: failover (kill -9 of the leader to the first acknowledged write): ${firstOk} ms\n`);
  });

  it('a node that was down across a snapshot catches up by snapshot', async () => {
    const leader = await leaderName(NAMES);
    const down = NAMES.find((n) => n !== leader)!;
    await node(down).kill();
    const writers = NAMES.filter((n) => n !== down);
    for (let i = 0; i < 100; i += 10) {
      const batch = await Promise.all(Array.from({ length: 10 }, (_, j) => create(node(writers[j % 2]!), `snap-${i + j}`)));
      for (const r of batch) expect(r.status).toBe(201);
    }
    expect(await metricValue(node(leader), 'kapi_raft_snapshot_index')).toBeGreaterThan(40);
    await node(down).start();
    const latest = (await request(node(leader), 'GET', cmPath())).json<Obj>().metadata.resourceVersion;
    const caught = (await request(node(down), 'GET', `${cmPath()}?resourceVersion=${latest}`, { timeoutMs: 20_000 })).json<Obj>();
    expect(caught.items!.map((o) => o.metadata.name)).toContain('snap-99');
    expect(await metricValue(node(down), 'kapi_raft_snapshots_restored_total')).toBeGreaterThanOrEqual(1);
    // The transfer shows on both sides, labelled with the peer.
    expect(await metricSum(node(down), 'etcd_network_snapshot_receive_success')).toBeGreaterThanOrEqual(1);
    expect(await metricSum(node(down), 'kapi_raft_snapshot_received_bytes_total')).toBeGreaterThan(0);
    const sent = await Promise.all(writers.map((n) => metricSum(node(n), 'etcd_network_snapshot_send_success')));
    expect(sent.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(1);
    expect((await request(node(leader), 'GET', '/metrics')).body).toMatch(/^etcd_network_snapshot_send_success\{To="\d+"\} \d+$/m);
  });

  it('adds a 4th node as learner then voter, and removes it, through a follower (forwarded to the leader)', async () => {
    const leaderNm = await leaderName(NAMES);
    const leader = node(leaderNm);
    // A follower forwards changes to the leader over the peer port: a client behind the
    // balancer does not need to find the leader.
    const follower = node(NAMES.find((n) => n !== leaderNm)!);
    const all = `${initial},n4=127.0.0.1:${peerPorts.get('n4')}`;
    // The leader's refusals come back as they are: a member that does not exist is 409.
    const nobody = await request(follower, 'DELETE', '/cluster/members/nobody');
    expect(nobody.status).toBe(409);
    expect(nobody.json<{ reason: string; message: string }>()).toMatchObject({
      reason: 'Conflict',
      message: expect.stringContaining('no member named nobody'),
    });
    expect((await members(leader)).members.map((m) => m.name)).toContain(leaderNm);
    // Raw https: the harness closes its pooled clients while it waits for n4 to become ready.
    const adding = rawPost(follower, '/cluster/members', { name: 'n4', peerURL: `127.0.0.1:${peerPorts.get('n4')}` });
    await delay(300);
    const n4 = await startServer({
      args: args('n4', ['--initial-cluster-state', 'existing'], all),
      dataDir: join(dir, 'n4'),
      env: ENV,
      readyTimeoutMs: 40_000,
    });
    nodes.set('n4', n4);
    const added = await adding;
    expect(added.status).toBe(201);
    expect((JSON.parse(added.body) as { role: string }).role).toBe('voter');
    // GET /cluster/members is linearizable: once the add was acknowledged, every node lists n4
    // as a voter at once, whichever answers.
    for (const n of NAMES) {
      const view = await members(node(n));
      expect(view).toMatchObject({ reportedBy: n, linearizable: true });
      expect(view.members.find((m) => m.name === 'n4')?.role).toBe('voter');
    }
    expect((await request(follower, 'GET', '/cluster/members?local=maybe')).status).toBe(400);
    expect((await create(n4, 'from-n4')).status).toBe(201);
    expect((await request(node('n1'), 'GET', cmPath('default', 'from-n4'))).status).toBe(200);
    // n4 is paused while it is removed, so that it misses the entry (usually): then only a
    // member refusing its messages can tell it.
    n4.process!.kill('SIGSTOP');
    const removed = await request(follower, 'DELETE', '/cluster/members/n4');
    await delay(500);
    n4.process!.kill('SIGCONT');
    expect(removed.status).toBe(200);
    expect((await members(leader)).members.map((m) => m.name)).not.toContain('n4');
    // n4 learns that it was removed (it applied its removal, or a member refused its messages as
    // a removed member's) and says so, instead of waiting for a leader that will never come.
    let why = '';
    for (let i = 0; i < 100 && !why.includes('removed from the cluster'); i++) {
      why = (await request(n4, 'GET', '/readyz/raft', { timeoutMs: 2_000 })).body;
      if (!why.includes('removed from the cluster')) await delay(200);
    }
    expect(why).toContain('this node was removed from the cluster');
    await n4.cleanup();
    nodes.delete('n4');
    expect((await create(node('n1'), 'after-remove')).status).toBe(201);
  });

  it('controllers follow the kube-controller-manager Lease: it moves when the holder dies and namespace deletion still completes', async () => {
    const leasePath = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager';
    const lease = (await request(node('n1'), 'GET', leasePath)).json<Obj>();
    const holder = lease.spec!.holderIdentity!;
    const holderNode = holder.split('_')[0]!;
    expect(NAMES).toContain(holderNode);
    const table = await kubectl(node('n1'), ['get', 'lease', '-n', 'kube-system']);
    expect(table.stdout).toMatch(/NAME\s+HOLDER\s+AGE/);
    await node(holderNode).kill();
    const rest = NAMES.filter((n) => n !== holderNode);
    const on = node(rest[0]!);
    // The holder may also have been the Raft leader: retry like a client while a new one is elected.
    const retry = async (fn: () => Promise<{ status: number }>, ok: number[]): Promise<number> => {
      let status = 0;
      for (let i = 0; i < 50 && !ok.includes(status); i++) {
        status = (await fn()).status;
        if (!ok.includes(status)) await delay(200);
      }
      return status;
    };
    expect(
      await retry(() => request(on, 'POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } } }), [201, 409]),
    ).not.toBe(0);
    expect([201, 409]).toContain(await retry(() => create(on, 'inside', 'x', 'doomed'), [201, 409]));
    expect(await retry(() => request(on, 'DELETE', '/api/v1/namespaces/doomed'), [200, 202])).toBe(200);
    let gone = false;
    for (let i = 0; i < 250 && !gone; i++) {
      gone = (await request(on, 'GET', '/api/v1/namespaces/doomed')).status === 404;
      if (!gone) await delay(100);
    }
    expect(gone).toBe(true);
    const moved = (await request(on, 'GET', leasePath)).json<Obj>().spec!.holderIdentity!;
    expect(moved.split('_')[0]).not.toBe(holderNode);
    await node(holderNode).start();
  });
});
