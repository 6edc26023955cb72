/**
 * /healthz, /livez and /readyz. Ready: every post-start hook has completed, the node is not
 * shutting down, and Raft has a leader (cluster.node.ts raftCheck). Live: no fatal storage
 * failure stopped this node's Raft.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ClusterNode } from '../cluster/cluster.node.js';
import { firstValues } from '../pipeline/request-state.js';

/** Registers the health endpoints on `scope`; `ready()` says whether the node finished starting and is not stopping. */
export function registerHealthRoutes(scope: FastifyInstance, node: ClusterNode, ready: () => boolean): void {
  const health = (name: string, ok: () => boolean) => async (req: FastifyRequest, reply: FastifyReply) => {
    const q = firstValues(req.query as Record<string, unknown>);
    const raft = node.raftCheck();
    const good = ok() && (name !== 'readyz' || raft.ok);
    let body = good ? 'ok' : `[-]${name} failed: reason withheld\n${name} check failed`;
    if (q.verbose !== undefined) {
      const checks = ['ping', 'log', 'etcd', 'poststarthook/start-apiserver'].map((c) => `[+]${c} ok`);
      if (name === 'readyz') checks.push(ok() ? '[+]storage-ready ok' : '[-]storage-ready failed: reason withheld');
      if (name === 'readyz') checks.push(raft.ok ? `[+]raft ok: ${raft.detail}` : `[-]raft failed: ${raft.detail}`);
      body = `${checks.join('\n')}\n${name} check ${good ? 'passed' : 'failed'}\n`;
    }
    reply.code(good ? 200 : 500).header('Content-Type', 'text/plain; charset=utf-8').send(body);
  };
  scope.get('/healthz', health('healthz', () => true));
  scope.get('/livez', health('livez', () => node.failure() === undefined));
  scope.get('/readyz', health('readyz', ready));
}
