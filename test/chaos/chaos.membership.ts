/**
 * The chaos suite's membership phase (cluster.chaos.test.ts, docs/chaos.md): runtime membership
 * changes through the HTTP API (docs/cluster.md "Membership") while the workload runs, each
 * with a kill -9 while the change is pending:
 * - add-member: a new node joins (`--initial-cluster-state existing`), is added through a
 *   follower (forwarded to the leader) as a learner, catches up and is promoted; a follower is
 *   killed while the new member is still pending;
 * - replace-wiped: a follower loses its data dir (kill -9, dir deleted), is removed through the
 *   leader's API and added back under the same name with an empty dir, as docs/cluster.md says;
 *   the leader is killed while the re-added member is pending; the member must install a
 *   snapshot;
 * - remove-member: a voter is removed (through the leader, or through a follower on odd
 *   rounds); it must stop serving (/readyz fails) before it is shut down.
 * The workload and the watchers follow: a member leaves their endpoint lists before it is
 * removed or killed, and joins them once it is a voter.
 */
import { delay } from '../support/server.js';
import { ctl, isOk, metric, type CtlResponse, type FaultRecord } from './chaos.client.js';
import type { ChaosCluster, Member } from './chaos.cluster.js';

/** The longest a membership change may take, retries included. */
const CHANGE_TIMEOUT_MS = 90_000;

/** Time figures of the membership phase (ms), for the report. */
export interface MembershipTimings {
  kind: 'add' | 're-add' | 'remove';
  name: string;
  /** Request sent to the change acknowledged (201 voter, or 200 removed). */
  ms: number;
  attempts: number;
}

/** What one member believes the membership is (GET /cluster/members). */
interface MemberList {
  leader?: string;
  members: Array<{ name: string; role: string }>;
}

async function localList(c: ChaosCluster, i: number): Promise<MemberList | undefined> {
  const r = await ctl(c.members[i]!.handle, 'GET', '/cluster/members?local=true', { timeoutMs: 2000 });
  return isOk(r) && r.status === 200 ? r.json<MemberList>() : undefined;
}

const describe = (r: CtlResponse | { status: string }): string => `${r.status}${isOk(r) ? ` ${r.text.replace(/\s+/g, ' ').slice(0, 200)}` : ''}`;

/**
 * Sends the change to `pick()` (a member index, chosen again for every attempt) until it is
 * acknowledged. Retried: transport errors and timeouts (the node was killed), 503 (no leader,
 * leadership lost, forward failed), 504, and 409 "in progress" (an earlier attempt is still
 * running on the leader). The change is idempotent: adding a member that is already in the
 * configuration only waits for it and promotes it; removing a member already gone answers 409
 * "no member named", which counts as done once an earlier attempt may have applied.
 */
async function change(
  c: ChaosCluster,
  f: FaultRecord,
  op: 'add' | 'remove',
  name: string,
  peerURL: string,
  pick: () => Promise<number>,
): Promise<{ ms: number; attempts: number }> {
  const t0 = Date.now();
  let attempts = 0;
  while (Date.now() - t0 < CHANGE_TIMEOUT_MS) {
    attempts++;
    let via: number;
    try {
      via = await pick();
    } catch {
      continue;
    }
    const target = c.members[via]!;
    const r =
      op === 'add'
        ? await ctl(target.handle, 'POST', '/cluster/members', { body: { name, peerURL }, timeoutMs: 75_000 })
        : await ctl(target.handle, 'DELETE', `/cluster/members/${name}`, { timeoutMs: 20_000 });
    if (op === 'add' && r.status === 201) return { ms: Date.now() - t0, attempts };
    if (op === 'remove' && r.status === 200) return { ms: Date.now() - t0, attempts };
    if (op === 'remove' && attempts > 1 && r.status === 409 && isOk(r) && r.text.includes('no member named')) return { ms: Date.now() - t0, attempts };
    const retry = !isOk(r) || r.status === 503 || r.status === 504 || r.status === 202 || (r.status === 409 && r.text.includes('in progress'));
    f.notes.push(`${op} ${name} via ${target.name}: ${describe(r).slice(0, 120)}`);
    if (!retry) throw new Error(`${op} ${name} via ${target.name} answered ${describe(r)}`);
    await delay(500);
  }
  throw new Error(`${op} ${name} not acknowledged within ${CHANGE_TIMEOUT_MS} ms (${attempts} attempts)`);
}

/** Waits until the leader's view lists `name` (its record is written: the change is pending). */
async function waitListed(c: ChaosCluster, leader: number, name: string): Promise<string> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const role = (await localList(c, leader))?.members.find((m) => m.name === name)?.role;
    if (role !== undefined) return role;
    await delay(50);
  }
  throw new Error(`${name} never appeared in ${c.name(leader)}'s member list`);
}

/** Kills member `victim` (kill -9), 1.5 s down, restarts it on its data dir. */
async function bounce(m: Member): Promise<void> {
  await m.handle.kill();
  await delay(1500);
  await m.handle.start();
}

/** add-member: see the module comment. Returns the new member's name. */
export async function addMember(c: ChaosCluster, f: FaultRecord, timings: MembershipTimings[]): Promise<string> {
  const leader = await c.leaderIndex();
  const followers = c.members.map((_, i) => i).filter((i) => i !== leader);
  const via = c.members[followers[0]!]!;
  const victim = c.members[followers[1]!]!;
  const plan = await c.plan(c.newName(), c.freeSlot());
  f.node = plan.name;
  const joining = c.launch(plan, c.initialCluster(plan), 'existing');
  const adding = change(c, f, 'add', plan.name, plan.peerURL, async () => c.members.indexOf(via));
  // A follower dies while the new member is pending (a learner, or already a voter when its
  // catch-up was that quick: the note says which).
  const killed = waitListed(c, leader, plan.name).then(async (role) => {
    f.notes.push(`killed ${victim.name} while ${plan.name} was a ${role}`);
    await bounce(victim);
  });
  const [m, t] = await Promise.all([joining, adding, killed]);
  c.attach(m);
  timings.push({ kind: 'add', name: plan.name, ...t });
  f.notes.push(`${plan.name} voter after ${t.ms} ms, ${t.attempts} attempt(s)`);
  return plan.name;
}

/**
 * replace-wiped: see the module comment. `round` picks the follower. Returns the replaced
 * member's name and the leader that was killed while it was pending.
 */
export async function replaceWiped(
  c: ChaosCluster,
  f: FaultRecord,
  round: number,
  timings: MembershipTimings[],
): Promise<{ replaced: string; killedLeader: string }> {
  const leader = await c.leaderIndex();
  const followers = c.members.map((_, i) => i).filter((i) => i !== leader);
  const old = c.members[followers[round % followers.length]!]!;
  f.node = old.name;
  c.detach(old);
  await old.handle.kill();
  // Its disk is gone: the only way back is remove + add with an empty data dir.
  const removed = await change(c, f, 'remove', old.name, old.peerURL, async () => c.leaderIndex());
  timings.push({ kind: 'remove', name: old.name, ...removed });
  await c.dispose(old);
  const plan = { name: old.name, slot: old.slot, port: old.port, peerPort: old.peerPort, peerURL: old.peerURL, dataDir: old.dataDir };
  const lead = c.members[await c.leaderIndex()]!;
  const joining = c.launch(plan, c.initialCluster(plan), 'existing');
  // The first attempt goes to the leader, later ones to whoever leads then.
  let first = true;
  const adding = change(c, f, 'add', plan.name, plan.peerURL, async () => {
    if (!first) return c.leaderIndex();
    first = false;
    return c.members.indexOf(lead);
  });
  // The leader dies while the re-added member is pending.
  const killed = waitListed(c, c.members.indexOf(lead), plan.name).then(async (role) => {
    f.notes.push(`killed leader ${lead.name} while ${plan.name} was a ${role}`);
    await bounce(lead);
  });
  const [m, t] = await Promise.all([joining, adding, killed]);
  c.attach(m);
  timings.push({ kind: 're-add', name: plan.name, ...t });
  f.notes.push(`${plan.name} removed in ${removed.ms} ms, back as a voter after ${t.ms} ms, ${t.attempts} attempt(s)`);
  f.notes.push(`snapshots restored ${await metric(m.handle, 'kapi_raft_snapshots_restored_total')}`);
  return { replaced: plan.name, killedLeader: lead.name };
}

/**
 * remove-member: see the module comment. Even rounds remove `prefer` (the leader killed during
 * replace-wiped, a follower again) through the current leader's API; odd rounds remove the
 * oldest follower not in `keep` (the members this round added or replaced) through another
 * follower.
 */
export async function removeMember(
  c: ChaosCluster,
  f: FaultRecord,
  round: number,
  keep: readonly string[],
  prefer: string | undefined,
  timings: MembershipTimings[],
): Promise<string> {
  const leader = c.members[await c.leaderIndex()]!;
  const followers = c.members.filter((m) => m !== leader);
  const byLeader = round % 2 === 0;
  const target = (byLeader ? followers.find((m) => m.name === prefer) : undefined) ?? followers.find((m) => !keep.includes(m.name)) ?? followers[0]!;
  f.node = target.name;
  const via = byLeader ? leader : followers.find((m) => m !== target)!;
  c.detach(target);
  let first = true;
  const t = await change(c, f, 'remove', target.name, target.peerURL, async () => {
    if (!first) return c.leaderIndex();
    first = false;
    return c.members.indexOf(via);
  });
  timings.push({ kind: 'remove', name: target.name, ...t });
  // The removed node hears from no leader any more: it must stop serving (not ready), so
  // that balancers leave it, before it is shut down.
  const t0 = Date.now();
  let status: number | string = 0;
  while (Date.now() - t0 < 20_000) {
    status = (await ctl(target.handle, 'GET', '/readyz', { timeoutMs: 1500 })).status;
    if (status !== 200) break;
    await delay(100);
  }
  f.notes.push(`removed via ${via.name} in ${t.ms} ms; not ready (${status}) ${Date.now() - t0} ms later`);
  if (status === 200) f.notes.push('removed node still ready');
  await c.dispose(target);
  c.removed.push(target.name);
  return target.name;
}

/**
 * Final membership check: every member's own view (`?local=true`) lists exactly the current
 * members, all voters, and names a leader among them; one linearizable list agrees. Polled
 * (bounded), since records reach each node by replication. Returns the problems found.
 */
export async function membershipProblems(c: ChaosCluster): Promise<string[]> {
  const expected = c.members.map((m) => m.name).sort();
  let problems: string[] = [];
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    problems = [];
    const views = await Promise.all(c.members.map((_, i) => localList(c, i)));
    views.forEach((v, i) => {
      if (v === undefined) return problems.push(`${c.name(i)}: no member list`);
      const names = v.members.map((m) => m.name).sort();
      const learners = v.members.filter((m) => m.role !== 'voter').map((m) => m.name);
      if (names.join(',') !== expected.join(',')) problems.push(`${c.name(i)} lists members ${names.join(',')}, expected ${expected.join(',')}`);
      if (learners.length > 0) problems.push(`${c.name(i)} lists non-voters ${learners.join(',')}`);
      if (v.leader === undefined || !expected.includes(v.leader)) problems.push(`${c.name(i)} names leader ${v.leader ?? 'none'}`);
      return undefined;
    });
    const lin = await ctl(c.members[0]!.handle, 'GET', '/cluster/members', { timeoutMs: 5000 });
    if (!isOk(lin) || lin.status !== 200) problems.push(`linearizable member list on ${c.name(0)}: ${describe(lin)}`);
    else {
      const names = lin
        .json<MemberList>()
        .members.map((m) => m.name)
        .sort();
      if (names.join(',') !== expected.join(',')) problems.push(`linearizable member list lists ${names.join(',')}, expected ${expected.join(',')}`);
    }
    if (problems.length === 0) return [];
    await delay(200);
  }
  return problems;
}
