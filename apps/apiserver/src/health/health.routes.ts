/**
 * The HTTP edge of the health checks (health.checks.ts): `/livez`, `/readyz`, `/healthz` for
 * everyone (Kubernetes' system:public-info-viewer), `/<endpoint>/<check>` not for anonymous
 * clients, since that answer carries the failure's reason: the bootstrap RBAC policy grants
 * system:unauthenticated PUBLIC_HEALTH_PATHS and no other, and under AlwaysAllow the pipeline
 * lets anonymous requests reach these paths only (pipeline/anonymous.method.ts).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { StatusError } from '@app/apimachinery';
import { runHealthChecks, runOneHealthCheck, type HealthAnswer, type HealthCheckSets, type HealthEndpoint } from './health.checks.js';

/** The paths open to clients without credentials. */
export const PUBLIC_HEALTH_PATHS: readonly string[] = ['/healthz', '/livez', '/readyz'];

/** Options of registerHealthRoutes. */
export interface HealthRoutesOptions {
  readonly sets: HealthCheckSets;
  /** Where failed checks are logged, with their reasons: once per change of the failing set. */
  readonly log: (line: string) => void;
}

function queryValues(q: unknown, key: string): string[] | undefined {
  const v = (q as Record<string, unknown> | undefined)?.[key];
  if (v === undefined) return undefined;
  return (Array.isArray(v) ? v : [v]).map(String);
}

/** Registers the three endpoints and their per-check paths on `scope`. */
export function registerHealthRoutes(scope: FastifyInstance, o: HealthRoutesOptions): void {
  const lastLogged = new Map<string, string>();
  const send = (reply: FastifyReply, what: string, a: HealthAnswer): void => {
    const failed = a.failures.join('; ');
    if ((lastLogged.get(what) ?? '') !== failed) {
      lastLogged.set(what, failed);
      o.log(failed === '' ? `${what} check passed` : `${what} check failed: ${failed}`);
    }
    reply.code(a.status).header('Content-Type', 'text/plain; charset=utf-8').header('X-Content-Type-Options', 'nosniff').send(a.body);
  };
  for (const endpoint of ['livez', 'readyz', 'healthz'] as HealthEndpoint[]) {
    const checks = o.sets[endpoint];
    scope.get(`/${endpoint}`, async (req, reply) => {
      const verbose = queryValues(req.query, 'verbose') !== undefined;
      send(reply, endpoint, runHealthChecks(endpoint, checks, { verbose, exclude: queryValues(req.query, 'exclude') ?? [] }));
    });
    scope.get(`/${endpoint}/*`, async (req, reply) => {
      const name = (req.params as { '*': string })['*'];
      const a = runOneHealthCheck(checks, name);
      if (!a) throw new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});
      send(reply, `${endpoint}/${name}`, a);
    });
  }
}
