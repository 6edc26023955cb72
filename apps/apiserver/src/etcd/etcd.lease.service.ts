/**
 * etcd's Lease service (docs/etcd-api.md "Leases"). Grant, revoke and keep-alive are etcd
 * commands through Raft, so every replica's lease table agrees; time-to-live and the lease list
 * read this node's table after a ReadIndex barrier. A server-chosen lease id is drawn here, on
 * the proposing node, and travels in the command (as etcd's lessor ids do).
 */
import { randomBytes } from 'node:crypto';
import { drained, type DuplexCall, type ServiceHandlers } from '@app/grpc';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { EtcdApiError, keyBytes, leaseIn, num, toServiceError, type Msg } from './etcd.convert.js';
import { unary, type EtcdContext } from './etcd.context.js';
import { proposeEtcd } from './etcd.kv.service.js';

/** Largest TTL etcd accepts (seconds). */
const MAX_LEASE_TTL = 9_000_000_000;

/** Keep-alives one stream queues before it stops reading more. */
const KEEPALIVES_QUEUED = 64;

function newLeaseId(): string {
  // A positive int64, as etcd's ids (never 0: that means "no lease").
  const n = randomBytes(8).readBigUInt64BE(0) & 0x3fffffffffffffffn;
  return (n === 0n ? 1n : n).toString();
}

/** The Lease service's handlers. */
export function leaseService(ctx: EtcdContext): ServiceHandlers {
  return {
    LeaseGrant: unary(async (req: Msg) => {
      const ttl = num(req.TTL);
      if (ttl > MAX_LEASE_TTL) throw new EtcdApiError(GrpcStatus.OUT_OF_RANGE, 'etcdserver: too large lease TTL');
      let id = leaseIn(req.ID);
      if (BigInt(id) < 0n) throw new EtcdApiError(GrpcStatus.INVALID_ARGUMENT, 'etcdserver: negative lease id');
      if (id === '0') id = newLeaseId();
      const r = await proposeEtcd(ctx, { grant: { id, ttl: Math.max(ctx.minLeaseTtl, ttl) } });
      return { header: ctx.header(r.revision), ID: r.grant!.id, TTL: r.grant!.ttl };
    }),
    LeaseRevoke: unary(async (req: Msg) => {
      const r = await proposeEtcd(ctx, { revoke: { id: leaseIn(req.ID) } });
      return { header: ctx.header(r.revision) };
    }),
    LeaseKeepAlive: (call: DuplexCall) => {
      // Answers in request order, one keep-alive at a time per stream. A client that sends
      // faster than it takes the answers is held back by HTTP/2 flow control: the stream stops
      // reading requests while KEEPALIVES_QUEUED wait, and an answer the stream cannot take
      // holds the queue until it drains.
      let chain = Promise.resolve();
      let queued = 0;
      let paused = false;
      call.on('data', (req: Msg) => {
        const id = leaseIn(req.ID);
        if (++queued >= KEEPALIVES_QUEUED && !paused) {
          paused = true;
          call.pause();
        }
        chain = chain.then(async () => {
          try {
            const r = await ctx.proposer.proposeEtcd({ keepalive: { id } });
            // etcd answers a keep-alive of an unknown lease with TTL 0, not with an error.
            if (!call.write({ header: ctx.header(r.revision), ID: id, TTL: r.keepalive?.ttl ?? 0 })) await drained(call);
          } catch (e) {
            call.fail(toServiceError(e));
          } finally {
            if (--queued < KEEPALIVES_QUEUED / 2 && paused) {
              paused = false;
              call.resume();
            }
          }
        });
      });
      call.on('end', () => {
        void chain.then(() => call.end());
      });
    },
    LeaseTimeToLive: unary(async (req: Msg) => {
      await ctx.proposer.readBarrier();
      const id = leaseIn(req.ID);
      const l = ctx.leases.lease(id);
      if (!l) return { header: ctx.header(), ID: id, TTL: -1 };
      // Whole seconds left, rounded down as etcd's (a lease granted for 60 s answers 59 at once).
      const remaining = Math.max(0, Math.floor((l.expiry - Date.now()) / 1000));
      return {
        header: ctx.header(),
        ID: id,
        TTL: remaining,
        grantedTTL: l.ttl,
        keys: req.keys ? [...l.keys].sort().map((k) => keyBytes(k)) : [],
      };
    }),
    LeaseLeases: unary(async () => {
      await ctx.proposer.readBarrier();
      return { header: ctx.header(), leases: ctx.leases.leaseIds().map((ID) => ({ ID })) };
    }),
  };
}
