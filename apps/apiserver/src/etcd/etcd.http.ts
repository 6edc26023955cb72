/**
 * What the etcd endpoint serves over HTTP/1.x beside its gRPC API, on the same port and TLS
 * (docs/etcd-api.md "HTTP endpoints"), as an etcd 3.4 member does on its client URL: `/health`
 * (what load balancers and `etcdctl endpoint health`-style probes ask), `/version` and
 * `/metrics` (the node's Prometheus metrics: what `etcdctl check datascale` reads), and etcd's
 * JSON gateway under `/v3/` (etcd.gateway.ts).
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { EtcdContext } from './etcd.context.js';
import type { EtcdGateway } from './etcd.gateway.js';
import { ETCD_VERSION } from './etcd.maintenance.service.js';

/** Where /metrics comes from: a prom-client Registry has this shape. */
export interface MetricsSource {
  readonly contentType: string;
  metrics(): Promise<string>;
}

/** How long /health waits for its linearizable read, as etcd's check does. */
export const HEALTH_READ_TIMEOUT_MS = 1000;

const TEXT = 'text/plain; charset=utf-8';

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * True when the member can serve: a leader is known, its Raft is not stopped, no alarm is raised
 * (etcd 3.4 answers false for any, NOSPACE included), and (unless `serializable`) a
 * linearizable read confirms within HEALTH_READ_TIMEOUT_MS that a quorum answers.
 */
export async function etcdHealthy(ctx: EtcdContext, serializable: boolean): Promise<boolean> {
  const raft = ctx.node.cs.node;
  if (raft.status().lead === 0 || raft.failure()) return false;
  if (ctx.node.quota.list().length > 0) return false;
  if (serializable) return true;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), HEALTH_READ_TIMEOUT_MS);
  });
  try {
    return await Promise.race([
      ctx.proposer.readBarrier().then(
        () => true,
        () => false,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The HTTP/1.x handler of one node's etcd endpoint. */
export function etcdHttpHandler(
  ctx: EtcdContext,
  metrics: MetricsSource | undefined,
  gateway?: EtcdGateway,
  /** Who may use the gateway (the data), by the request's socket; /health, /version and /metrics are served to every client the TLS let in. */
  allowed?: (socket: unknown) => boolean,
): RequestListener {
  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://etcd.invalid');
    if (gateway?.owns(url.pathname)) {
      if (allowed && !allowed(req.socket)) {
        req.resume();
        return gateway.refuse(res);
      }
      return gateway.handle(req, res, url.pathname);
    }
    // The other endpoints read no body: drain it so that the connection can take the next request.
    req.resume();
    const route = url.pathname === '/health' || url.pathname === '/version' || (url.pathname === '/metrics' && metrics !== undefined);
    if (!route) return send(res, 404, TEXT, '404 page not found\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return send(res, 405, TEXT, 'Method Not Allowed\n');
    }
    if (url.pathname === '/health') {
      const ok = await etcdHealthy(ctx, url.searchParams.get('serializable') === 'true');
      return send(res, ok ? 200 : 503, TEXT, JSON.stringify({ health: String(ok) }));
    }
    if (url.pathname === '/version') return send(res, 200, 'application/json', JSON.stringify({ etcdserver: ETCD_VERSION, etcdcluster: ETCD_VERSION }));
    return send(res, 200, metrics!.contentType, await metrics!.metrics());
  };
  return (req, res) => {
    answer(req, res).catch((e: unknown) => {
      if (!res.headersSent) send(res, 500, TEXT, `${(e as Error).message}\n`);
      else res.destroy();
    });
  };
}
