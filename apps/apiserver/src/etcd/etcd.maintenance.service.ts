/**
 * etcd's Cluster and Maintenance services (docs/etcd-api.md "Cluster and maintenance").
 * MemberList reads the replicated member records; membership changes stay with the API's
 * /cluster/members. Status reports this node's Raft state; Defragment and Alarm answer as an
 * etcd without alarms would; Snapshot streams the store's own export (docs/etcd-api.md
 * "Snapshot": our format, not bbolt); HashKV hashes the keys and values at a revision; MoveLeader
 * hands leadership to another voter.
 */
import { createReadStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import type { ServerWritableCall, ServiceHandlers } from '@app/grpc';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { EtcdApiError, num, toServiceError, type Msg } from './etcd.convert.js';
import { unary, type EtcdContext } from './etcd.context.js';

/** The version string Status reports: etcd's API level this server speaks. */
export const ETCD_VERSION = '3.4.0';

function peerURL(addr: string): string {
  return addr.includes('://') ? addr : `https://${addr}`;
}

/** The Cluster service's handlers. */
export function clusterService(ctx: EtcdContext): ServiceHandlers {
  const unimplemented = unary(async () => {
    throw new EtcdApiError(GrpcStatus.UNIMPLEMENTED, "etcdserver: membership changes go through the API server's /cluster/members");
  });
  return {
    MemberList: unary(async (req: Msg) => {
      const list = await ctx.node.membership.list({ local: !req.linearizable });
      return {
        // etcd's Cluster service answers with a header without a revision.
        header: { ...ctx.header(), revision: 0 },
        members: list.members.map((m) => ({
          ID: String(m.id),
          name: m.name,
          peerURLs: [peerURL(m.peerURL)],
          clientURLs: m.etcdClientURL ? [m.etcdClientURL] : [],
          isLearner: m.role === 'learner',
        })),
      };
    }),
    MemberAdd: unimplemented,
    MemberRemove: unimplemented,
    MemberUpdate: unimplemented,
    MemberPromote: unimplemented,
  };
}

/** The Maintenance service's handlers. */
export function maintenanceService(ctx: EtcdContext, dataDir: string): ServiceHandlers {
  return {
    Status: unary(async () => {
      const st = ctx.node.cs.node.status();
      const size = await dirSize(join(dataDir, 'mvcc'));
      return {
        header: ctx.header(),
        version: ETCD_VERSION,
        dbSize: size,
        dbSizeInUse: size,
        leader: String(st.lead),
        raftIndex: st.commit,
        raftTerm: st.term,
        raftAppliedIndex: ctx.store.appliedIndex(),
        errors: ctx.node.raftCheck() ? [ctx.node.raftCheck()] : [],
        isLearner: false,
      };
    }),
    Defragment: unary(async () => ({ header: ctx.header() })),
    Alarm: unary(async () => ({ header: ctx.header(), alarms: [] })),
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

async function dirSize(dir: string): Promise<number> {
  const { readdir } = await import('node:fs/promises');
  let total = 0;
  for (const f of await readdir(dir).catch(() => [] as string[])) total += (await stat(join(dir, f)).catch(() => ({ size: 0 }))).size;
  return total;
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

/** Resolves once `call` can take more (or is cancelled: nothing more will be sent). */
function drained(call: ServerWritableCall): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      call.off('drain', done);
      call.off('cancelled', done);
      resolve();
    };
    call.once('drain', done);
    call.once('cancelled', done);
  });
}

/**
 * Streams a consistent export of the store (MvccStore.exportSnapshotToFile), 1 MiB per message,
 * framed as etcdctl expects of a snapshot: zero padding to a multiple of 512 bytes, then the
 * SHA-256 of everything before it (etcdctl refuses a stream whose length is not 512n + 32).
 */
async function streamSnapshot(ctx: EtcdContext, call: ServerWritableCall): Promise<void> {
  const file = join(tmpdir(), `kapi-etcd-snapshot-${randomBytes(6).toString('hex')}.snap`);
  try {
    await ctx.store.exportSnapshotToFile(file);
    const { size: exported } = await stat(file);
    const pad = (512 - (exported % 512)) % 512;
    const size = exported + pad + 32;
    const hash = createHash('sha256');
    let sent = 0;
    const header = ctx.header();
    const write = async (b: Buffer): Promise<void> => {
      sent += b.length;
      const ok = call.write({ header, remaining_bytes: size - sent, blob: b });
      if (!ok && !call.cancelled) await drained(call);
    };
    for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) {
      // The client went away: stop reading (the file is removed below).
      if (call.cancelled) return;
      hash.update(chunk as Buffer);
      await write(chunk as Buffer);
    }
    const zeros = Buffer.alloc(pad);
    hash.update(zeros);
    await write(Buffer.concat([zeros, hash.digest()]));
    call.end();
  } finally {
    await rm(file, { force: true });
  }
}
