/**
 * Limits on API requests in flight (--max-requests-inflight, --max-mutating-requests-inflight):
 * past the limit a request gets 429 TooManyRequests with Retry-After at once; watches and the
 * system:masters group are not limited (apps/apiserver/src/http/inflight.ts).
 */
import { join } from 'node:path';
import { issueClientCertificate } from '@app/pki';
import { type HttpIdentity, type ServerHandle, metricValue, request, startServer } from './support/server.js';
import { grantClusterRole } from './support/rbac.helper.js';

const CM = '/api/v1/namespaces/default/configmaps';

describe('in-flight request limits', () => {
  let server: ServerHandle;
  let alice: HttpIdentity;

  beforeAll(async () => {
    server = await startServer({ args: ['--max-requests-inflight', '2', '--max-mutating-requests-inflight', '1'] });
    alice = await issueClientCertificate(join(server.dataDir, 'pki'), 'alice', ['dev']);
    // Not system:masters, so limited like any user; under the default RBAC mode granted `edit` in default.
    await grantClusterRole(server, { user: 'alice', clusterRole: 'edit', namespace: 'default', probe: { path: CM, identity: alice } });
  });

  afterAll(async () => {
    await server?.cleanup();
  });

  const create = (name: string, identity: HttpIdentity) =>
    request(server, 'POST', CM, { identity, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: 'v' } } });

  it('answers 429 with Retry-After past the mutating limit, and counts what it refused', async () => {
    // 30 at once over 30 connections overlap (each create waits for an fsync); a host slow
    // enough to serve them one by one gets more rounds.
    const rs: Awaited<ReturnType<typeof create>>[] = [];
    for (let round = 0; round < 5 && !rs.some((r) => r.status === 429); round++) {
      rs.push(...(await Promise.all(Array.from({ length: 30 }, (_, i) => create(`alice-${round}-${i}`, alice)))));
    }
    const codes = rs.map((r) => r.status);
    expect(codes).toContain(201);
    expect(codes).toContain(429);
    expect(codes.every((c) => c === 201 || c === 429)).toBe(true);
    const refused = rs.find((r) => r.status === 429)!;
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.json()).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'TooManyRequests', code: 429, details: { retryAfterSeconds: 1 } });
    expect(await metricValue(server, 'apiserver_dropped_requests_total{request_kind="mutating"}')).toBe(codes.filter((c) => c === 429).length);
    // Every place was given back: one more create goes through.
    expect((await create('alice-after', alice)).status).toBe(201);
  });

  it('does not limit system:masters', async () => {
    const rs = await Promise.all(Array.from({ length: 30 }, (_, i) => create(`admin-${i}`, 'admin')));
    expect(rs.map((r) => r.status)).toEqual(rs.map(() => 201));
  });

  it('does not count watches against the read-only limit', async () => {
    // Three open watches, one more than the read-only limit, then a read.
    const watches = Array.from({ length: 3 }, () => request(server, 'GET', `${CM}?watch=1&timeoutSeconds=3`, { identity: alice }));
    await new Promise((r) => setTimeout(r, 700));
    const list = await request(server, 'GET', CM, { identity: alice });
    expect(list.status).toBe(200);
    expect((await Promise.all(watches)).map((w) => w.status)).toEqual([200, 200, 200]);
  });
});
