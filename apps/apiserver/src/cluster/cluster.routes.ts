/**
 * The membership admin endpoints (docs/cluster.md "Membership"):
 *   GET    /cluster/members          any authenticated user (read-only view, like `etcdctl member
 *                                    list`, which any etcd client may run; it reveals addresses
 *                                    and roles, no data); linearizable, `?local=true` for this
 *                                    node's replica as it is
 *   POST   /cluster/members          {name, peerURL}: add as learner, promote when caught up
 *   DELETE /cluster/members/<name>   remove
 * Changes require the system:masters group (the cluster-admin superuser group of Kubernetes)
 * and are carried out by the leader: another node forwards them over the peer port
 * (cluster.forward.ts). When that is not possible (no leader known, the leader unreachable)
 * they fail with 503 naming the leader's API URL (also in a `X-Kapi-Leader` header) for the
 * client to retry there.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Errors, StatusError } from '@app/apimachinery';
import { PRIVILEGED_GROUP, type UserInfo } from '@app/auth';
import { ClusterConfigError } from './cluster.ids.js';
import { MembershipConflictError, NotLeaderError, type ClusterMembership } from './cluster.members.js';

/** Maps membership failures to Status errors. */
export function membershipError(e: unknown): StatusError {
  if (e instanceof StatusError) return e;
  if (e instanceof ClusterConfigError) return Errors.badRequest(e.message);
  if (e instanceof MembershipConflictError) return new StatusError(409, 'Conflict', e.message);
  if (e instanceof NotLeaderError) {
    const se = Errors.serviceUnavailable(e.message);
    return e.leaderURL ? new StatusError(se.code, se.reason, se.message, se.details, { ...se.headers, 'X-Kapi-Leader': e.leaderURL }) : se;
  }
  const err = e as { code?: string; message?: string };
  if (typeof err?.code === 'string' && err.code.startsWith('Err')) return Errors.serviceUnavailable(`raft: ${err.message ?? err.code}`);
  if (err?.code === 'Unavailable') return Errors.timeout(err.message ?? 'unavailable');
  if (err?.code === 'TooManyRequests') return Errors.tooManyRequests(err.message ?? 'too many requests', 1);
  return Errors.internal(err?.message ?? String(e));
}

/** Registers the routes on `scope`; `authenticate` returns the caller or throws 401. */
export function registerClusterRoutes(
  scope: FastifyInstance,
  membership: () => ClusterMembership | undefined,
  authenticate: (req: FastifyRequest) => UserInfo,
): void {
  const send = (reply: FastifyReply, code: number, body: unknown): void => {
    reply
      .code(code)
      .header('Content-Type', 'application/json')
      .send(Buffer.from(JSON.stringify(body)));
  };
  const admin = (req: FastifyRequest): UserInfo => {
    const u = authenticate(req);
    if (!u.groups.includes(PRIVILEGED_GROUP)) {
      throw new StatusError(403, 'Forbidden', `User "${u.username}" cannot change cluster membership: requires the system:masters group`, { kind: 'members' });
    }
    return u;
  };
  const need = (): ClusterMembership => {
    const m = membership();
    if (!m) throw Errors.serviceUnavailable('cluster membership is not available yet');
    return m;
  };
  const wrap =
    (fn: (req: FastifyRequest, reply: FastifyReply) => Promise<void>) =>
    async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
      try {
        await fn(req, reply);
      } catch (e) {
        throw membershipError(e);
      }
    };
  scope.get(
    '/cluster/members',
    wrap(async (req, reply) => {
      authenticate(req);
      const local = (req.query as { local?: string } | undefined)?.local;
      if (local !== undefined && local !== 'true' && local !== 'false') throw Errors.badRequest(`local: must be "true" or "false", got "${local}"`);
      send(reply, 200, await need().list({ local: local === 'true' }));
    }),
  );
  scope.post(
    '/cluster/members',
    wrap(async (req, reply) => {
      const user = admin(req);
      let body: unknown;
      try {
        body = JSON.parse(Buffer.isBuffer(req.body) ? req.body.toString('utf8') : String(req.body ?? ''));
      } catch {
        throw Errors.badRequest('body must be JSON {"name": ..., "peerURL": ...}');
      }
      const b = body as { name?: unknown; peerURL?: unknown };
      if (typeof b?.name !== 'string' || typeof b.peerURL !== 'string') throw Errors.badRequest('body must be JSON {"name": ..., "peerURL": ...}');
      const rec = await need().add(b.name, b.peerURL, { requestedBy: user.username });
      send(reply, rec.role === 'voter' ? 201 : 202, rec);
    }),
  );
  scope.delete(
    '/cluster/members/:name',
    wrap(async (req, reply) => {
      const user = admin(req);
      const name = (req.params as { name: string }).name;
      await need().remove(name, { requestedBy: user.username });
      send(reply, 200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name, kind: 'members' } });
    }),
  );
}
