/**
 * gRPC's health service on the etcd client URL (docs/etcd-api.md "Health"), as etcd serves it:
 * the server as a whole (service "") is the only service it knows; any other name is NOT_FOUND
 * `unknown service` for Check and SERVICE_UNKNOWN for Watch. Unlike etcd 3.4, which answers
 * SERVING for as long as it runs, the answer follows the node's readiness: NOT_SERVING while its
 * Raft check or its storage check fails (no leader known, removed from the cluster, stopped by
 * a storage failure), so a balancer probing gRPC health sends clients elsewhere.
 */
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { ServerWritableCall, ServiceHandlers, UnaryCall } from '@app/grpc';
import type { EtcdContext } from './etcd.context.js';

/** How often a Watch looks at the node's state. */
const WATCH_POLL_MS = 1000;

type ServingStatus = 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN';

/** The Health service's handlers. */
export function healthService(ctx: Pick<EtcdContext, 'node'>): ServiceHandlers {
  const status = (service: unknown): ServingStatus => {
    if (service !== '' && service !== undefined && service !== null) return 'SERVICE_UNKNOWN';
    return ctx.node.raftCheck() === undefined && ctx.node.storageCheck() === undefined ? 'SERVING' : 'NOT_SERVING';
  };
  return {
    Check: (call: UnaryCall) => {
      const s = status(call.request.service);
      if (s === 'SERVICE_UNKNOWN') call.fail({ code: GrpcStatus.NOT_FOUND, details: 'unknown service' });
      else call.respond({ status: s });
    },
    Watch: (call: ServerWritableCall) => {
      let last = status(call.request.service);
      call.write({ status: last });
      const timer = setInterval(() => {
        if (call.cancelled) return clearInterval(timer);
        const now = status(call.request.service);
        if (now === last) return;
        last = now;
        call.write({ status: now });
      }, WATCH_POLL_MS);
      timer.unref();
      call.once('cancelled', () => clearInterval(timer));
    },
  };
}
