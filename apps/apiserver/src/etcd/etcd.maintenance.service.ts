/**
 * etcd's Cluster and Maintenance services (docs/etcd-api.md "Cluster and maintenance").
 * MemberList reads the replicated member records; MemberRemove and MemberPromote carry out the
 * same changes as the API's /cluster/members (forwarded to the leader), while members are added
 * there: etcd's MemberAdd names no member. Status reports this node's Raft state and the raised
 * alarms; Alarm lists, raises and disarms the replicated alarms (space.quota.ts); Defragment
 * gives back the space of deleted and compacted records; Snapshot streams the store as etcd's
 * backend file (bbolt, with etcd's buckets); HashKV hashes the keys and values at a revision;
 * MoveLeader hands leadership to another voter.
 */
import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { drained, type ServerWritableCall, type ServiceHandlers } from '@app/grpc';
import { directorySize, type AlarmMember, type AlarmName } from '@app/storage';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { EtcdApiError, num, toServiceError, type Msg } from './etcd.convert.js';
import { unary, type EtcdContext } from './etcd.context.js';
import { ClusterConfigError } from '../cluster/cluster.ids.js';
import { etcdBackendOf } from '../cluster/cluster.etcd-export.js';
import { MembershipConflictError, NotLeaderError, type MemberView } from '../cluster/cluster.members.js';

/** The version string Status reports: etcd's API level this server speaks. */
export const ETCD_VERSION = '3.4.0';

function peerURL(addr: string): string {
  return addr.includes('://') ? addr : `https://${addr}`;
}

/** A member as etcd's Cluster service lists it. */
function memberOut(m: MemberView): Msg {
  return {
    ID: String(m.id),
    name: m.name,
    peerURLs: [peerURL(m.peerURL)],
    clientURLs: m.etcdClientURL ? m.etcdClientURL.split(',') : [],
    isLearner: m.role === 'learner',
  };
}

/** A failed membership change as etcd's Cluster service reports it. */
function memberError(e: unknown): unknown {
  if (e instanceof MembershipConflictError) return new EtcdApiError(GrpcStatus.FAILED_PRECONDITION, `etcdserver: ${e.message}`);
  if (e instanceof NotLeaderError) return new EtcdApiError(GrpcStatus.UNAVAILABLE, `etcdserver: ${e.message}`);
  if (e instanceof ClusterConfigError) return new EtcdApiError(GrpcStatus.INVALID_ARGUMENT, `etcdserver: ${e.message}`);
  return e;
}

/** The Cluster service's handlers. */
export function clusterService(ctx: EtcdContext): ServiceHandlers {
  const members = async (linearizable: boolean): Promise<MemberView[]> => (await ctx.node.membership.list({ local: !linearizable })).members;
  /** The member `ID` names, from the linearizable list: a member added a moment ago counts. */
  const named = async (req: Msg): Promise<MemberView> => {
    const id = num(req.ID);
    const m = (await members(true)).find((x) => x.id === id);
    if (!m) throw new EtcdApiError(GrpcStatus.NOT_FOUND, 'etcdserver: member not found');
    return m;
  };
  // etcd's Cluster service answers with a header without a revision.
  const header = (): Msg => ({ ...ctx.header(), revision: 0 });
  const change = (fn: (req: Msg) => Promise<void>) =>
    unary(async (req: Msg) => {
      try {
        await fn(req);
      } catch (e) {
        throw memberError(e);
      }
      // The list as it is after the change; a node that just removed itself answers from its
      // own replica, as it takes part in no read barrier any more.
      const after = await members(true).catch(() => members(false));
      return { header: header(), members: after.map(memberOut) };
    });
  return {
    MemberList: unary(async (req: Msg) => ({ header: header(), members: (await members(Boolean(req.linearizable))).map(memberOut) })),
    MemberRemove: change(async (req) => {
      const m = await named(req);
      await ctx.node.membership.remove(m.name, { requestedBy: 'an etcd API client' });
    }),
    MemberPromote: change(async (req) => {
      const m = await named(req);
      await ctx.node.membership.promote(m.name, { requestedBy: 'an etcd API client' });
    }),
    // Member ids are derived from member names here (docs/cluster.md "Node ids"), and etcd's
    // MemberAdd carries no name; a member's peer URL is the one it starts with.
    MemberAdd: unary(async () => {
      throw new EtcdApiError(
        GrpcStatus.UNIMPLEMENTED,
        'etcdserver: MemberAdd carries no member name, and member ids are derived from names here: add members with POST /cluster/members {"name", "peerURL"}',
      );
    }),
    MemberUpdate: unary(async () => {
      throw new EtcdApiError(
        GrpcStatus.UNIMPLEMENTED,
        'etcdserver: a member registers the peer URL it is started with: restart it with the new --initial-cluster entry',
      );
    }),
  };
}

/** The Maintenance service's handlers. */
export function maintenanceService(ctx: EtcdContext, dataDir: string): ServiceHandlers {
  return {
    Status: unary(async () => {
      const st = ctx.node.cs.node.status();
      const size = await directorySize(join(dataDir, 'mvcc'));
      const check = ctx.node.raftCheck();
      // etcd lists the raised alarms among a member's errors, in the text form of AlarmMember.
      const alarms = ctx.node.quota.list().map((a) => `memberID:${a.memberId} alarm:${a.alarm} `);
      return {
        header: ctx.header(),
        version: ETCD_VERSION,
        dbSize: size,
        dbSizeInUse: size,
        leader: String(st.lead),
        raftIndex: st.commit,
        raftTerm: st.term,
        raftAppliedIndex: ctx.store.appliedIndex(),
        errors: [...(check ? [check] : []), ...alarms],
        isLearner: false,
      };
    }),
    Defragment: unary(async () => {
      await ctx.store.defragment();
      await ctx.node.quota.sample();
      return { header: ctx.header() };
    }),
    // etcd answers Alarm without a header.
    Alarm: unary(async (req: Msg) => ({ alarms: (await alarm(ctx, req)).map(alarmOut) })),
    Hash: unary(async () => ({ header: ctx.header(), hash: await hashAt(ctx, undefined) })),
    HashKV: unary(async (req: Msg) => {
      const rev = num(req.revision) || undefined;
      return { header: ctx.header(), hash: await hashAt(ctx, rev), compact_revision: ctx.store.compactedRevision() };
    }),
    MoveLeader: unary(async (req: Msg) => {
      await moveLeader(ctx, num(req.targetID));
      return { header: ctx.header() };
    }),
    Snapshot: (call: ServerWritableCall) => {
      void streamSnapshot(ctx, call).catch((e: unknown) => call.fail(toServiceError(e)));
    },
  };
}

/** How long MoveLeader waits for the target to lead (etcd bounds it by the request's deadline). */
export const MOVE_LEADER_TIMEOUT_MS = 5000;

/**
 * etcd's MoveLeader: only the leader takes it; the target must be a voting member. Raft's
 * transfer (thesis 3.10) brings the target's log up to date and tells it to campaign; the call
 * returns once the target leads, or fails when that took too long (leadership may still move).
 */
async function moveLeader(ctx: EtcdContext, target: number): Promise<void> {
  const raft = ctx.node.cs.node;
  const st = raft.status();
  if (st.role !== 'leader') throw new EtcdApiError(GrpcStatus.FAILED_PRECONDITION, 'etcdserver: not leader');
  if (target === st.id) return;
  const peer = st.peers.find((p) => p.id === target);
  if (!peer || peer.learner) throw new EtcdApiError(GrpcStatus.FAILED_PRECONDITION, 'etcdserver: bad leader transferee');
  try {
    raft.transferLeadership(target);
  } catch {
    throw new EtcdApiError(GrpcStatus.FAILED_PRECONDITION, 'etcdserver: not leader');
  }
  const deadline = Date.now() + MOVE_LEADER_TIMEOUT_MS;
  while (raft.status().lead !== target) {
    if (Date.now() > deadline) throw new EtcdApiError(GrpcStatus.DEADLINE_EXCEEDED, 'etcdserver: request timed out, leader transfer took too long');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const ALARM_NAMES: readonly string[] = ['NOSPACE', 'CORRUPT'];

function alarmOut(a: AlarmMember): Msg {
  return { memberID: String(a.memberId), alarm: a.alarm };
}

/**
 * etcd's Alarm: GET lists the raised alarms (of one kind when `alarm` names one), ACTIVATE raises
 * `alarm` for member `memberID` and answers with it, DEACTIVATE disarms it and answers with it,
 * or with nothing when it was not raised. Raising and disarming go through the log.
 */
async function alarm(ctx: EtcdContext, req: Msg): Promise<AlarmMember[]> {
  const quota = ctx.node.quota;
  const action = String(req.action ?? 'GET');
  const name = String(req.alarm ?? 'NONE');
  if (action === 'GET') return quota.list().filter((a) => name === 'NONE' || a.alarm === name);
  if (!ALARM_NAMES.includes(name)) return [];
  const target = { memberId: num(req.memberID), alarm: name as AlarmName };
  const raised = quota.list().some((a) => a.memberId === target.memberId && a.alarm === target.alarm);
  if (action === 'ACTIVATE') {
    // etcd answers with the alarm whether it was raised before or not.
    if (!raised) await quota.activate(target);
    return [target];
  }
  if (action === 'DEACTIVATE') {
    if (!raised) return [];
    await quota.deactivate(target);
    return [target];
  }
  throw new EtcdApiError(GrpcStatus.INVALID_ARGUMENT, `etcdserver: unknown alarm action ${action}`);
}

/** CRC-free FNV-1a over every visible key and value at `rev` (a cheap consistency probe between members). */
async function hashAt(ctx: EtcdContext, rev: number | undefined): Promise<number> {
  const res = await ctx.store.range('', rev !== undefined ? { atRevision: rev } : {});
  let h = 0x811c9dc5;
  const mix = (b: Uint8Array): void => {
    for (const x of b) h = Math.imul(h ^ x, 0x01000193) >>> 0;
  };
  for (const kv of res.kvs) {
    mix(Buffer.from(kv.key, 'utf8'));
    mix(kv.value);
  }
  return h >>> 0;
}

/**
 * Streams a consistent copy of the store as etcd's backend file (etcdBackendOf: a bbolt database
 * with etcd's buckets, the history since the compaction included, then its SHA-256), 1 MiB per
 * message: what `etcdctl snapshot save` gets from etcd, so `etcdctl snapshot status` and
 * `etcdctl snapshot restore` read it, and `npm run snapshot -- restore` too.
 */
async function streamSnapshot(ctx: EtcdContext, call: ServerWritableCall): Promise<void> {
  const { file, bytes: size } = await etcdBackendOf(ctx.store, tmpdir());
  try {
    let sent = 0;
    const header = ctx.header();
    for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) {
      // The client went away: stop reading (the file is removed below).
      if (call.cancelled) return;
      sent += (chunk as Buffer).length;
      const ok = call.write({ header, remaining_bytes: size - sent, blob: chunk as Buffer });
      if (!ok && !call.cancelled) await drained(call);
    }
    call.end();
  } finally {
    await rm(file, { force: true });
  }
}
