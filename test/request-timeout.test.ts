/**
 * The whole-request deadline (--request-timeout, the `timeout` query parameter): a request that
 * is not a watch gets 504 Timeout once it passes, and gives back its in-flight place at once
 * (apps/apiserver/src/http/request-deadline.ts).
 *
 * The slow request used here is a list at a resourceVersion the server has not reached with
 * resourceVersionMatch=NotOlderThan: the storage waits up to 3 s for it before it answers 504
 * "Too large resource version" itself, so an answer of the deadline's own 504 shows the deadline.
 */
import { join } from 'node:path';
import { issueClientCertificate } from '@app/pki';
import { type HttpIdentity, type ServerHandle, kubectl, request, startServer } from './support/server.js';
import { grantClusterRole } from './support/rbac.helper.js';

const CM = '/api/v1/namespaces/default/configmaps';
const FUTURE = `${CM}?resourceVersion=999999999&resourceVersionMatch=NotOlderThan`;
const TIMED_OUT = 'Timeout: request did not complete within requested timeout - context deadline exceeded';

describe('request deadline', () => {
  let server: ServerHandle;
  let alice: HttpIdentity;

  beforeAll(async () => {
    // One read-only place: a request still holding it would make the next read a 429.
    server = await startServer({ args: ['--request-timeout', '1s', '--max-requests-inflight', '1'] });
    alice = await issueClientCertificate(join(server.dataDir, 'pki'), 'alice', ['dev']);
    // Not system:masters, so limited like any user; under the default RBAC mode granted `edit` in default.
    await grantClusterRole(server, { user: 'alice', clusterRole: 'edit', namespace: 'default', probe: { path: CM, identity: alice } });
  });

  afterAll(async () => {
    await server?.cleanup();
  });

  it('answers 504 Timeout at the deadline and gives the in-flight place back', async () => {
    const r = await request(server, 'GET', FUTURE, { identity: alice });
    expect(r.status).toBe(504);
    expect(r.json()).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: TIMED_OUT, reason: 'Timeout', code: 504 });
    expect(r.headers['retry-after']).toBeUndefined();
    // The storage is still waiting for the 3 s to pass; the place is free already. It is given
    // back when the 504's response closes, which on a loaded host may come a moment after the
    // client read it: retried for at most 1 s, well before the storage's wait would end.
    const until = Date.now() + 1_000;
    let next = await request(server, 'GET', CM, { identity: alice });
    while (next.status === 429 && Date.now() < until) {
      await new Promise((res) => setTimeout(res, 50));
      next = await request(server, 'GET', CM, { identity: alice });
    }
    expect(next.status).toBe(200);
  });

  it('keeps the server maximum when the timeout parameter asks for more, or for 0', async () => {
    for (const t of ['30s', '0s']) {
      const r = await request(server, 'GET', `${FUTURE}&timeout=${t}`);
      expect(r.status).toBe(504);
      expect(r.json()).toMatchObject({ reason: 'Timeout', message: TIMED_OUT });
    }
  });

  it('answers a malformed timeout parameter with 400', async () => {
    const r = await request(server, 'GET', `${CM}?timeout=soon`);
    expect(r.status).toBe(400);
    expect(r.json()).toMatchObject({
      kind: 'Status',
      reason: 'BadRequest',
      code: 400,
      message: 'invalid timeout specified in the request URL - time: invalid duration "soon"',
    });
  });

  it('does not apply to watches', async () => {
    const watch = request(server, 'GET', `${CM}?watch=1&timeoutSeconds=3`);
    await new Promise((r) => setTimeout(r, 1500));
    const created = await request(server, 'POST', CM, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after-deadline' } } });
    expect(created.status).toBe(201);
    const w = await watch;
    expect(w.status).toBe(200);
    const events = w.body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string } } });
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'ADDED', object: expect.objectContaining({ metadata: expect.objectContaining({ name: 'after-deadline' }) }) }),
    );
  });

  it("takes kubectl's --request-timeout, which it sends as the timeout parameter", async () => {
    const r = await kubectl(server, ['get', 'configmaps', '-n', 'default', '-o', 'name', '--request-timeout=20s']);
    expect(r.stdout).toContain('configmap/after-deadline');
    // A malformed one is refused by the server, not ignored.
    const raw = await kubectl(server, ['get', '--raw', `${CM}?timeout=soon`], { expectFail: true });
    expect(raw.code).not.toBe(0);
    expect(raw.stderr).toContain('invalid timeout specified in the request URL');
  });
});
