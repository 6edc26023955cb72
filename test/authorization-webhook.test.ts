/**
 * The Webhook authorization mode end to end: with --authorization-mode=RBAC,Webhook a user RBAC
 * grants nothing is allowed, denied or left without an opinion by a remote service answering
 * SubjectAccessReviews over mutual TLS, as kubectl shows; answers are cached; system:masters
 * never reaches the service; a service that fails is asked again on transient failures and
 * makes the request a 500 when it keeps failing.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueClientCertificate, writeKubeconfig } from '@app/pki';
import { kubectl, startServer, type ServerHandle } from './support/server.js';
import { startTlsStandIn, type TlsStandIn } from './support/tls-stand-in.js';

interface Review {
  apiVersion: string;
  kind: string;
  spec: { user: string; groups?: string[]; resourceAttributes?: Record<string, unknown>; nonResourceAttributes?: Record<string, string> };
}

describe('Webhook authorization', () => {
  let dir: string;
  let server: ServerHandle;
  let hook: TlsStandIn;
  const reviews: Array<{ review: Review; client: string | undefined }> = [];
  const users: Record<string, string> = {};
  const reviewsOf = (user: string) => reviews.filter((x) => x.review.spec.user === user).length;

  /**
   * The service's policy: alice reads configmaps, nobody reads secrets; carol's reviews always
   * fail with a 500, dave's first two do, erin's with a 400.
   */
  function answer(r: Review): { status: number; body: object } {
    const a = r.spec.resourceAttributes;
    if (r.spec.user === 'erin') return { status: 400, body: { message: 'malformed review' } };
    const failing = r.spec.user === 'carol' || (r.spec.user === 'dave' && reviewsOf('dave') <= 2);
    const status = failing
      ? undefined
      : a?.resource === 'secrets'
        ? { allowed: false, denied: true, reason: 'secrets are off limits' }
        : (r.spec.user === 'alice' || r.spec.user === 'dave') && a?.resource === 'configmaps' && (a.verb === 'get' || a.verb === 'list')
          ? { allowed: true, reason: 'alice reads configmaps' }
          : { allowed: false };
    if (!status) return { status: 500, body: { message: 'policy store unavailable' } };
    return { status: 200, body: { apiVersion: r.apiVersion, kind: 'SubjectAccessReview', status } };
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kapi-authz-webhook-'));
    hook = await startTlsStandIn(dir, {
      clientName: 'kube-apiserver-authz-client',
      path: '/authorize',
      answer: (body, _req, client) => {
        const review = JSON.parse(body.toString('utf8')) as Review;
        reviews.push({ review, client });
        return answer(review);
      },
    });
    server = await startServer({ args: ['--authorization-mode=RBAC,Webhook', `--authorization-webhook-config-file=${hook.kubeconfig}`] });
    const serverCa = await readFile(join(server.dataDir, 'pki', 'ca.crt'), 'utf8');
    for (const name of ['alice', 'carol', 'dave', 'erin']) {
      const id = await issueClientCertificate(join(server.dataDir, 'pki'), name, ['dev']);
      users[name] = join(server.harnessDir, `${name}.kubeconfig`);
      await writeKubeconfig(users[name], { server: server.url, caPem: serverCa, certPem: id.certPem, keyPem: id.keyPem });
    }
  }, 60_000);

  afterAll(async () => {
    await server?.cleanup();
    await hook?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const as = (user: string, args: string[], expectFail = false) =>
    kubectl(server, ['--kubeconfig', users[user]!, ...args], expectFail ? { expectFail: true } : {});

  it('allows what the service allows, asking with a v1 SubjectAccessReview over mutual TLS', async () => {
    const r = await as('alice', ['get', 'configmaps', '-n', 'default', '-o', 'name']);
    expect(r.stdout).toContain('configmap/kube-root-ca.crt');
    const asked = reviews.find((x) => x.review.spec.user === 'alice' && x.review.spec.resourceAttributes?.resource === 'configmaps')!;
    expect(asked.client).toBe('kube-apiserver-authz-client');
    expect(asked.review).toMatchObject({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: 'alice',
        groups: ['dev', 'system:authenticated'],
        resourceAttributes: { namespace: 'default', verb: 'list', version: 'v1', resource: 'configmaps' },
      },
    });
  });

  it("passes a list's label and field selectors on, as kube-apiserver does", async () => {
    await as('alice', ['get', 'configmaps', '-n', 'default', '-l', 'app=web,tier notin (db),!legacy', '--field-selector', 'metadata.name!=x']);
    const asked = reviews.find((x) => x.review.spec.user === 'alice' && x.review.spec.resourceAttributes?.labelSelector !== undefined)!;
    expect(asked.review.spec.resourceAttributes).toMatchObject({
      verb: 'list',
      resource: 'configmaps',
      labelSelector: {
        requirements: [
          { key: 'app', operator: 'In', values: ['web'] },
          { key: 'legacy', operator: 'DoesNotExist' },
          { key: 'tier', operator: 'NotIn', values: ['db'] },
        ],
      },
      fieldSelector: { requirements: [{ key: 'metadata.name', operator: 'NotIn', values: ['x'] }] },
    });
  });

  it('reuses an answer rather than asking again', async () => {
    const count = () => reviews.filter((x) => x.review.spec.user === 'alice' && x.review.spec.resourceAttributes?.verb === 'list').length;
    const before = count();
    await as('alice', ['get', 'configmaps', '-n', 'default']);
    expect(count()).toBe(before);
  });

  it("refuses what the service denies, with its reason, and what nobody allows, with kube's Forbidden message", async () => {
    const denied = await as('alice', ['get', 'secrets', '-n', 'default'], true);
    expect(denied.stderr).toContain(
      'Error from server (Forbidden): secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "default": secrets are off limits',
    );
    const none = await as('alice', ['get', 'pods', '-n', 'default'], true);
    expect(none.stderr).toContain(
      'Error from server (Forbidden): pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"',
    );
  });

  it('answers 500 when the service keeps failing and no other mode allows the request, after five attempts', async () => {
    const r = await as('carol', ['get', 'configmaps', '-n', 'default'], true);
    expect(r.stderr).toContain('Error from server (InternalError)');
    expect(r.stderr).toContain('the authorization webhook could not be consulted: it answered 500');
    expect(reviewsOf('carol')).toBe(5);
  });

  it('asks again after a transient failure, not after a final one', async () => {
    const r = await as('dave', ['get', 'configmaps', '-n', 'default', '-o', 'name']);
    expect(r.stdout).toContain('configmap/kube-root-ca.crt');
    expect(reviewsOf('dave')).toBe(3);
    const refused = await as('erin', ['get', 'configmaps', '-n', 'default'], true);
    expect(refused.stderr).toContain('the authorization webhook could not be consulted: it answered 400');
    expect(reviewsOf('erin')).toBe(1);
  });

  it('never asks about system:masters, whom the server allows first', async () => {
    await kubectl(server, ['get', 'secrets', '-n', 'default']);
    expect(reviews.filter((x) => x.review.spec.groups?.includes('system:masters'))).toEqual([]);
  });
});
