import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { Errors } from '@app/apimachinery';
import type { AuthenticationRequest, UserInfo } from '@app/auth';
import type { AuthorizationAttributes, AuthorizationDecision } from '@app/authz';
import { NO_AUDIT, type AuditEvent } from './audit.port.js';
import type { FlowControlTicket } from './flow-control.port.js';
import { createPipeline, PIPELINE_STAGES } from './pipeline.js';
import { stateOf } from './request-state.js';
import { toStatusError, sendStatus } from '../http/status.js';

/** A server whose ports record each call in `calls`, in order. */
async function serverWith(opts: { deny?: (a: AuthorizationAttributes) => boolean; refuse?: boolean; badToken?: boolean; noAudit?: boolean } = {}) {
  const calls: string[] = [];
  const audits: AuditEvent[] = [];
  let released = 0;
  const fastify: FastifyInstance = Fastify();
  const pipeline = createPipeline({
    authenticator: {
      authenticate(req: AuthenticationRequest): UserInfo | undefined {
        calls.push('authentication');
        if (req.headers.authorization === 'Bearer bad') throw Errors.unauthorized();
        const name = req.headers['x-user'] as string | undefined;
        return name ? { username: name, groups: ['system:authenticated'] } : undefined;
      },
    },
    authorizer: {
      authorize(a: AuthorizationAttributes): AuthorizationDecision {
        calls.push(`authorize:${a.verb}:${a.user.username}:${a.resource}:${a.name}`);
        return opts.deny?.(a) ? { decision: 'Deny', reason: 'no' } : { decision: 'Allow' };
      },
    },
    audit: opts.noAudit
      ? NO_AUDIT
      : {
          enabled: true,
          configFor: (a) => ({
            level: a.verb === 'list' ? 'None' : 'Metadata',
            omitStages: new Set(a.user ? [] : (['RequestReceived'] as const)),
            omitManagedFields: false,
          }),
          record: (e) => void audits.push(e),
        },
    flowControl: {
      admit(_m, _i, user): FlowControlTicket {
        calls.push(`flow-control:${user.username}`);
        if (opts.refuse) return { refused: 'readOnly' };
        return { release: () => released++ };
      },
      inFlight: () => 0,
    },
    anonymousAllowed: (p) => p === '/healthz',
    requestTimeoutMs: 60_000,
    maxRequestBodyBytes: 100,
    onDropped: () => calls.push('dropped'),
  });
  fastify.setErrorHandler((err, _req, reply) => sendStatus(reply, toStatusError(err)));
  fastify.addHook('onRequest', pipeline);
  fastify.all('/*', async (req) => {
    calls.push('route');
    const s = stateOf(req)!;
    return { user: s.user, authenticated: s.authenticatedUser, info: s.info, deadlineMs: s.deadlineMs };
  });
  await fastify.listen({ port: 0, host: '127.0.0.1' });
  const port = (fastify.server.address() as AddressInfo).port;
  servers.push(fastify);
  /** A real HTTP request to the server (Fastify's inject cannot load under jest's ESM mode). */
  const call = async (o: { method: string; url: string; headers?: Record<string, string>; payload?: string }) => {
    const res = await fetch(`http://127.0.0.1:${port}${o.url}`, { method: o.method, headers: o.headers, body: o.payload });
    const text = await res.text();
    return { statusCode: res.status, headers: Object.fromEntries(res.headers), json: () => JSON.parse(text) };
  };
  return { fastify: { inject: call }, calls, audits, released: () => released };
}

const servers: FastifyInstance[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

describe('request pipeline', () => {
  it('lists its stages in kube-apiserver order', () => {
    expect(PIPELINE_STAGES).toEqual([
      'panic-recovery',
      'request-info',
      'deadline',
      'authentication',
      'audit',
      'impersonation',
      'flow-control',
      'authorization',
      'body-limit',
      'route',
    ]);
  });

  it('runs authentication, impersonation, flow control and authorization in that order before the route', async () => {
    const { fastify, calls, released } = await serverWith();
    const res = await fastify.inject({
      method: 'GET',
      url: '/api/v1/namespaces/ns1/configmaps/c1?timeout=5s',
      headers: { 'x-user': 'alice', 'impersonate-user': 'bob' },
    });
    expect(res.statusCode).toBe(200);
    expect(calls).toEqual(['authentication', 'authorize:impersonate:alice:users:bob', 'flow-control:bob', 'authorize:get:bob:configmaps:c1', 'route']);
    const body = res.json();
    expect(body.user.username).toBe('bob');
    expect(body.authenticated.username).toBe('alice');
    expect(body.deadlineMs).toBe(5000);
    expect(body.info).toMatchObject({ verb: 'get', namespace: 'ns1', resource: 'configmaps', name: 'c1' });
    expect(res.headers['audit-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(released()).toBe(1);
  });

  it('answers 401 before anything else runs when credentials are missing, except on anonymous paths', async () => {
    const { fastify, calls } = await serverWith();
    const res = await fastify.inject({ method: 'GET', url: '/api/v1/namespaces' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
    expect(calls).toEqual(['authentication']);
    const anon = await fastify.inject({ method: 'GET', url: '/healthz' });
    expect(anon.statusCode).toBe(200);
    expect(anon.json().user).toEqual({ username: 'system:anonymous', groups: ['system:unauthenticated'] });
  });

  it('answers 401 for an invalid credential even on an anonymous path', async () => {
    const { fastify } = await serverWith();
    const res = await fastify.inject({ method: 'GET', url: '/healthz', headers: { authorization: 'Bearer bad' } });
    expect(res.statusCode).toBe(401);
  });

  it('answers a malformed timeout with 400 before authentication, and gives watches no deadline', async () => {
    const { fastify, calls } = await serverWith();
    const res = await fastify.inject({ method: 'GET', url: '/api/v1/configmaps?timeout=soon', headers: { 'x-user': 'alice' } });
    expect(res.statusCode).toBe(400);
    expect(calls).toEqual([]);
    const watch = await fastify.inject({ method: 'GET', url: '/api/v1/configmaps?watch=true', headers: { 'x-user': 'alice' } });
    expect(watch.json().deadlineMs).toBeUndefined();
  });

  it('refuses at flow control with 429 without asking the authorizer', async () => {
    const { fastify, calls } = await serverWith({ refuse: true });
    const res = await fastify.inject({ method: 'GET', url: '/api/v1/configmaps', headers: { 'x-user': 'alice' } });
    expect(res.statusCode).toBe(429);
    expect(calls).toEqual(['authentication', 'flow-control:alice', 'dropped']);
  });

  it("answers a denied request with kube-apiserver's Forbidden wording", async () => {
    const { fastify, calls, released } = await serverWith({ deny: (a) => a.verb === 'list' });
    const res = await fastify.inject({ method: 'GET', url: '/apis/apps/v1/namespaces/prod/deployments', headers: { 'x-user': 'alice' } });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({
      reason: 'Forbidden',
      message: 'deployments.apps is forbidden: User "alice" cannot list resource "deployments" in API group "apps" in the namespace "prod": no',
      details: { group: 'apps', kind: 'deployments' },
    });
    expect(calls).not.toContain('route');
    expect(released()).toBe(1);
  });

  it('authorizes a GET of pods/exec, attach or portforward as create too, and nothing else twice', async () => {
    const { fastify, calls } = await serverWith({ deny: (a) => a.verb === 'create' && a.user.username === 'viewer' });
    const viewer = await fastify.inject({ method: 'GET', url: '/api/v1/namespaces/ns/pods/p/exec?command=ls', headers: { 'x-user': 'viewer' } });
    expect(viewer.statusCode).toBe(403);
    expect(viewer.json().message).toBe('pods "p" is forbidden: User "viewer" cannot create resource "pods/exec" in API group "" in the namespace "ns": no');
    expect(calls.filter((c) => c.startsWith('authorize:'))).toEqual(['authorize:get:viewer:pods:p', 'authorize:create:viewer:pods:p']);
    expect(calls).not.toContain('route');
    calls.length = 0;
    for (const sub of ['attach', 'portforward']) {
      const r = await fastify.inject({ method: 'GET', url: `/api/v1/namespaces/ns/pods/p/${sub}`, headers: { 'x-user': 'editor' } });
      expect(r.statusCode).toBe(200);
    }
    await fastify.inject({ method: 'GET', url: '/api/v1/namespaces/ns/pods/p/log', headers: { 'x-user': 'editor' } });
    await fastify.inject({ method: 'POST', url: '/api/v1/namespaces/ns/pods/p/exec', headers: { 'x-user': 'editor' } });
    expect(calls.filter((c) => c.startsWith('authorize:'))).toEqual([
      'authorize:get:editor:pods:p',
      'authorize:create:editor:pods:p',
      'authorize:get:editor:pods:p',
      'authorize:create:editor:pods:p',
      'authorize:get:editor:pods:p',
      'authorize:create:editor:pods:p',
    ]);
  });

  it('refuses a declared body over the limit with 413 after authorization', async () => {
    const { fastify, calls } = await serverWith();
    const res = await fastify.inject({
      method: 'POST',
      url: '/api/v1/namespaces/a/configmaps',
      headers: { 'x-user': 'alice', 'content-type': 'application/json' },
      payload: 'x'.repeat(200),
    });
    expect(res.statusCode).toBe(413);
    expect(calls).toEqual(['authentication', 'flow-control:alice', 'authorize:create:alice:configmaps:']);
  });

  it('records a RequestReceived and a ResponseComplete audit event with the impersonated user', async () => {
    const { fastify, audits } = await serverWith();
    await fastify.inject({
      method: 'DELETE',
      url: '/api/v1/namespaces/a/secrets/s',
      headers: { 'x-user': 'alice', 'impersonate-user': 'bob', 'impersonate-group': 'devs' },
    });
    await new Promise((r) => setImmediate(r));
    expect(audits.map((a) => a.stage)).toEqual(['RequestReceived', 'ResponseComplete']);
    expect(audits[1]).toMatchObject({
      verb: 'delete',
      user: { username: 'alice' },
      impersonatedUser: { username: 'bob', groups: ['devs', 'system:authenticated'] },
      objectRef: { resource: 'secrets', namespace: 'a', name: 's', apiVersion: 'v1' },
      responseStatus: { metadata: {}, code: 200 },
      annotations: { 'authorization.k8s.io/decision': 'allow', 'authorization.k8s.io/reason': '' },
    });
  });

  it('records what the policy asks for: nothing at level None, a refusal with its decision and status', async () => {
    const { fastify, audits } = await serverWith({ deny: (a) => a.resource === 'secrets' });
    await fastify.inject({ method: 'GET', url: '/api/v1/namespaces/a/configmaps', headers: { 'x-user': 'alice' } });
    await fastify.inject({ method: 'GET', url: '/api/v1/namespaces/a/secrets/s', headers: { 'x-user': 'alice' } });
    await new Promise((r) => setImmediate(r));
    expect(audits.map((a) => `${a.verb} ${a.stage}`)).toEqual(['get RequestReceived', 'get ResponseComplete']);
    expect(audits[1]).toMatchObject({
      level: 'Metadata',
      responseStatus: { metadata: {}, code: 403 },
      annotations: { 'authorization.k8s.io/decision': 'forbid', 'authorization.k8s.io/reason': 'no' },
    });
  });

  it('records a failed authentication as one ResponseStarted event without a user', async () => {
    const { fastify, audits } = await serverWith();
    const res = await fastify.inject({ method: 'GET', url: '/api/v1/namespaces/a/pods/p', headers: { authorization: 'Bearer bad' } });
    expect(res.statusCode).toBe(401);
    await new Promise((r) => setImmediate(r));
    expect(audits).toHaveLength(1);
    expect(audits[0]).toMatchObject({
      stage: 'ResponseStarted',
      user: {},
      verb: 'get',
      responseStatus: { metadata: {}, status: 'Failure', reason: 'Unauthorized', code: 401 },
    });
    expect(audits[0]!.auditID).toBe(res.headers['audit-id']);
  });

  it('gives every answer an Audit-Id, a 401 and a 429 included, with auditing off', async () => {
    const { fastify } = await serverWith({ noAudit: true });
    const unauthorized = await fastify.inject({ method: 'GET', url: '/api/v1/namespaces/a/pods/p', headers: { authorization: 'Bearer bad' } });
    expect(unauthorized.statusCode).toBe(401);
    expect(unauthorized.headers['audit-id']).toMatch(/^[0-9a-f-]{36}$/);
    const busy = await serverWith({ noAudit: true, refuse: true });
    const refused = await busy.fastify.inject({ method: 'GET', url: '/api/v1/namespaces/a/pods/p', headers: { 'x-user': 'alice' } });
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['audit-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("keeps the client's Audit-ID when it is a plausible one", async () => {
    const { fastify, audits } = await serverWith();
    const kept = await fastify.inject({
      method: 'GET',
      url: '/api/v1/namespaces/a/pods/p',
      headers: { 'x-user': 'alice', 'audit-id': 'from-the-aggregator-1' },
    });
    expect(kept.headers['audit-id']).toBe('from-the-aggregator-1');
    const odd = await fastify.inject({ method: 'GET', url: '/api/v1/namespaces/a/pods/p', headers: { 'x-user': 'alice', 'audit-id': 'has spaces' } });
    expect(odd.headers['audit-id']).toMatch(/^[0-9a-f-]{36}$/);
    await new Promise((r) => setImmediate(r));
    expect(audits.filter((a) => a.stage === 'ResponseComplete').map((a) => a.auditID)).toEqual(['from-the-aggregator-1', odd.headers['audit-id']]);
  });
});
