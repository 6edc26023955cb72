/**
 * Audit logging end to end: a server started with `--audit-policy-file` and `--audit-log-path`
 * records what real kubectl does at the levels the policy gives (bodies decoded from protobuf
 * and JSON, managed fields left out where asked), with the authorization decision, the
 * impersonated user, a refused and an unauthenticated request, and a watch's ResponseStarted
 * stage; the legacy format in batch mode; batches of events POSTed to an audit webhook over
 * mutual TLS; a policy that breaks a rule stops the start.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueClientCertificate, writeKubeconfig } from '@app/pki';
import { kubectl, repoRoot, request, request2, startServer, waitFor, type ServerHandle } from './support/server.js';
import { startTlsStandIn, type TlsStandIn } from './support/tls-stand-in.js';

interface Event {
  level: string;
  auditID: string;
  stage: string;
  requestURI: string;
  verb: string;
  user: { username?: string; groups?: string[] };
  impersonatedUser?: { username?: string };
  userAgent?: string;
  objectRef?: Record<string, string>;
  responseStatus?: { metadata: object; status?: string; reason?: string; code: number };
  requestObject?: Record<string, unknown> & { metadata?: Record<string, unknown> };
  responseObject?: Record<string, unknown> & { metadata?: Record<string, unknown> };
  annotations?: Record<string, string>;
}

const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: None
    nonResourceURLs: ["/healthz*", "/readyz*", "/livez*", "/version", "/openapi/*", "/api", "/apis", "/apis/*"]
  - level: RequestResponse
    namespaces: [audited]
    resources: [{ group: "", resources: [configmaps] }]
    omitManagedFields: true
  - level: Request
    resources: [{ group: "", resources: [secrets] }]
  - level: Metadata
`;

describe('audit log', () => {
  let dir: string;
  let server: ServerHandle;
  let logPath: string;
  let alice: string;

  const events = (): Event[] =>
    readFileSync(logPath, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Event);
  /** The events of requests matching `pred`, waiting for at least `n` (a watch's last one comes after the answer). */
  const eventsOf = (pred: (e: Event) => boolean, n = 1) =>
    waitFor(`${n} audit events`, () => {
      const found = events().filter(pred);
      return Promise.resolve(found.length >= n ? found : undefined);
    });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kapi-audit-'));
    writeFileSync(join(dir, 'policy.yaml'), POLICY);
    logPath = join(dir, 'log', 'audit.log');
    server = await startServer({ args: ['--audit-policy-file', join(dir, 'policy.yaml'), '--audit-log-path', logPath] });
    const id = await issueClientCertificate(join(server.dataDir, 'pki'), 'alice', ['dev']);
    alice = join(server.harnessDir, 'alice.kubeconfig');
    await writeKubeconfig(alice, {
      server: server.url,
      caPem: await readFile(join(server.dataDir, 'pki', 'ca.crt'), 'utf8'),
      certPem: id.certPem,
      keyPem: id.keyPem,
    });
    await kubectl(server, ['create', 'namespace', 'audited']);
  });

  afterAll(async () => {
    await server?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates the log readable by the server only, and leaves out the requests the policy does not record', () => {
    expect(statSync(logPath).mode & 0o777).toBe(0o600);
    const all = events();
    expect(all.length).toBeGreaterThan(0);
    // /readyz polls and discovery are at level None; RequestReceived is left out everywhere.
    expect(all.filter((e) => /^\/(readyz|healthz|livez|version|apis?$)/.test(e.requestURI))).toEqual([]);
    expect(new Set(all.map((e) => e.stage))).not.toContain('RequestReceived');
  });

  it('records a create from kubectl at RequestResponse with both bodies, without managed fields', async () => {
    await kubectl(server, ['create', 'configmap', 'settings', '-n', 'audited', '--from-literal=color=blue']);
    const [ev] = await eventsOf((e) => e.verb === 'create' && e.objectRef?.resource === 'configmaps');
    expect(ev).toMatchObject({
      kind: 'Event',
      apiVersion: 'audit.k8s.io/v1',
      level: 'RequestResponse',
      stage: 'ResponseComplete',
      requestURI: expect.stringMatching(/^\/api\/v1\/namespaces\/audited\/configmaps\?fieldManager=kubectl-create/),
      objectRef: { resource: 'configmaps', namespace: 'audited', name: 'settings', apiVersion: 'v1' },
      responseStatus: { metadata: {}, code: 201 },
      annotations: { 'authorization.k8s.io/decision': 'allow', 'authorization.k8s.io/reason': '' },
    });
    expect(ev!.user.groups).toContain('system:masters');
    expect(ev!.userAgent).toMatch(/^kubectl/);
    // kubectl sends the object as protobuf; the event has its JSON form.
    expect(ev!.requestObject).toMatchObject({ kind: 'ConfigMap', apiVersion: 'v1', data: { color: 'blue' }, metadata: { name: 'settings' } });
    expect(ev!.responseObject).toMatchObject({ kind: 'ConfigMap', data: { color: 'blue' }, metadata: { name: 'settings', namespace: 'audited' } });
    expect(ev!.responseObject!.metadata!.uid).toEqual(expect.any(String));
    expect(ev!.responseObject!.metadata).not.toHaveProperty('managedFields');
    expect(ev!.auditID).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('records a patch with the patch document as the request object', async () => {
    await kubectl(server, ['patch', 'configmap', 'settings', '-n', 'audited', '--type=merge', '-p', '{"data":{"color":"green"}}']);
    const [ev] = await eventsOf((e) => e.verb === 'patch' && e.objectRef?.name === 'settings');
    expect(ev!.requestObject).toEqual({ data: { color: 'green' } });
    expect(ev!.responseObject).toMatchObject({ data: { color: 'green' } });
    expect(ev!.responseStatus).toEqual({ metadata: {}, code: 200 });
  });

  it('records a secret at Request: its body but not the answer', async () => {
    await kubectl(server, ['create', 'secret', 'generic', 'token', '-n', 'audited', '--from-literal=k=v']);
    const [ev] = await eventsOf((e) => e.verb === 'create' && e.objectRef?.resource === 'secrets');
    expect(ev!.level).toBe('Request');
    expect(ev!.requestObject).toMatchObject({ kind: 'Secret', data: { k: 'dg==' } });
    expect(ev).not.toHaveProperty('responseObject');
  });

  it('records everything else at Metadata, a delete answered with a Status among them', async () => {
    await kubectl(server, ['get', 'pods', '-n', 'audited']);
    await kubectl(server, ['delete', 'secret', 'token', '-n', 'audited']);
    const [list] = await eventsOf((e) => e.verb === 'list' && e.objectRef?.resource === 'pods');
    expect(list).toMatchObject({ level: 'Metadata', objectRef: { resource: 'pods', namespace: 'audited', apiVersion: 'v1' }, responseStatus: { code: 200 } });
    expect(list).not.toHaveProperty('requestObject');
    expect(list).not.toHaveProperty('responseObject');
    const [del] = await eventsOf((e) => e.verb === 'delete' && e.objectRef?.name === 'token');
    expect(del).toMatchObject({ level: 'Request', responseStatus: { metadata: {}, code: 200 } });
  });

  it('records a refusal with the forbid decision and the Status reason, and the impersonated user', async () => {
    await kubectl(server, ['--kubeconfig', alice, 'get', 'secrets', '-n', 'audited'], { expectFail: true });
    const [denied] = await eventsOf((e) => e.user.username === 'alice' && e.verb === 'list');
    expect(denied).toMatchObject({
      level: 'Request',
      responseStatus: { metadata: {}, status: 'Failure', reason: 'Forbidden', code: 403 },
      annotations: { 'authorization.k8s.io/decision': 'forbid' },
    });
    await kubectl(server, ['get', 'configmaps', '-n', 'default', '--as', 'bob', '--as-group', 'team'], { expectFail: true });
    const [as] = await eventsOf((e) => e.impersonatedUser?.username === 'bob');
    expect(as!.user.groups).toContain('system:masters');
    expect(as!.impersonatedUser).toEqual({ username: 'bob', groups: ['team', 'system:authenticated'] });
    expect(as!.responseStatus).toMatchObject({ code: 403, reason: 'Forbidden' });
  });

  it('records an unauthenticated request once, at ResponseStarted, without a user', async () => {
    const res = await request(server, 'GET', '/api/v1/namespaces/audited/configmaps/settings', { identity: 'anonymous', token: 'not-a-token' });
    expect(res.status).toBe(401);
    const auditId = res.headers['audit-id'];
    const [ev] = await eventsOf((e) => e.auditID === auditId);
    expect(ev).toMatchObject({
      stage: 'ResponseStarted',
      user: {},
      verb: 'get',
      responseStatus: { metadata: {}, status: 'Failure', reason: 'Unauthorized', code: 401 },
    });
    expect(events().filter((e) => e.auditID === auditId)).toHaveLength(1);
  });

  it('records a watch when its answer starts and again when it ends', async () => {
    const res = await request(server, 'GET', '/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1');
    expect(res.status).toBe(200);
    const auditId = res.headers['audit-id'];
    const evs = await eventsOf((e) => e.auditID === auditId, 2);
    expect(evs.map((e) => `${e.stage} ${e.responseStatus?.code}`)).toEqual(['ResponseStarted 200', 'ResponseComplete 200']);
    expect(evs[0]!.verb).toBe('watch');
    // The same over HTTP/2, as kubectl watches.
    const h2 = await request2(server, 'GET', '/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1');
    expect(h2.status).toBe(200);
    const h2Events = await eventsOf((e) => e.auditID === h2.headers['audit-id'], 2);
    expect(h2Events.map((e) => `${e.stage} ${e.responseStatus?.code}`)).toEqual(['ResponseStarted 200', 'ResponseComplete 200']);
  });
});

describe('audit log options', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'kapi-audit-opts-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes the legacy format in batch mode', async () => {
    writeFileSync(join(dir, 'all.yaml'), 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n    resources: [{ group: "" }]\n');
    const log = join(dir, 'legacy.log');
    const server = await startServer({
      args: ['--audit-policy-file', join(dir, 'all.yaml'), '--audit-log-path', log, '--audit-log-format=legacy', '--audit-log-mode=batch'],
    });
    try {
      await kubectl(server, ['get', 'configmaps', '-n', 'kube-system']);
      const line = await waitFor('a legacy line', () =>
        Promise.resolve(
          readFileSync(log, 'utf8')
            .split('\n')
            .find((l) => l.includes('stage="ResponseComplete"') && l.includes('uri="/api/v1/namespaces/kube-system/configmaps')),
        ),
      );
      expect(line).toMatch(
        /^\d{4}-\d\d-\d\dT[\d:.]+Z AUDIT: id="[0-9a-f-]{36}" stage="ResponseComplete" ip="127\.0\.0\.1" method="list" user="[^"]+" groups="(?:[^"\\]|\\.)*system:masters(?:[^"\\]|\\.)*" as="<self>" asgroups="<lookup>" user-agent="kubectl[^"]*" namespace="kube-system" uri="\/api\/v1\/namespaces\/kube-system\/configmaps\?limit=500" response="200"$/,
      );
    } finally {
      await server.cleanup();
    }
  });

  it('refuses to start on a policy that breaks a rule, naming the field', () => {
    writeFileSync(join(dir, 'bad.yaml'), 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - verbs: [get]\n');
    const entry = join(repoRoot(), 'dist', 'apps', 'apiserver', 'src', 'main.js');
    const r = spawnSync(
      process.execPath,
      [entry, '--data-dir', join(dir, 'data'), '--audit-policy-file', join(dir, 'bad.yaml'), '--audit-log-path', join(dir, 'bad.log')],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(`--audit-policy-file=${join(dir, 'bad.yaml')}: rules[0].level: Required value`);
  });
});

describe('audit webhook', () => {
  let dir: string;
  let hook: TlsStandIn;
  let server: ServerHandle;
  const received: Array<{ contentType: string | undefined; client: string | undefined; list: { kind: string; apiVersion: string; items: Event[] } }> = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kapi-audit-webhook-'));
    hook = await startTlsStandIn(dir, {
      clientName: 'kube-apiserver-audit-client',
      path: '/events',
      answer: (body, req, client) => {
        received.push({ contentType: req.headers['content-type'], client, list: JSON.parse(body.toString('utf8')) as (typeof received)[number]['list'] });
        return { status: 200, body: {} };
      },
    });
    writeFileSync(
      join(dir, 'policy.yaml'),
      'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: Request\n    resources: [{ group: "", resources: [configmaps] }]\n',
    );
    server = await startServer({
      args: ['--audit-policy-file', join(dir, 'policy.yaml'), `--audit-webhook-config-file=${hook.kubeconfig}`, '--audit-webhook-batch-max-wait=500ms'],
    });
  }, 60_000);

  afterAll(async () => {
    await server?.cleanup();
    await hook?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('POSTs batches of events as audit.k8s.io/v1 EventLists over mutual TLS', async () => {
    await kubectl(server, ['create', 'configmap', 'shipped', '-n', 'default', '--from-literal=k=v']);
    const all = () => received.flatMap((r) => r.list.items);
    const done = await waitFor('the create to reach the audit webhook', () =>
      Promise.resolve(all().find((e) => e.stage === 'ResponseComplete' && e.verb === 'create' && e.objectRef?.name === 'shipped')),
    );
    // The RequestReceived event (sent first; the name is known only once the body is read) has the same ID.
    const events = all().filter((e) => e.auditID === done.auditID);
    expect(events.map((e) => e.stage)).toEqual(['RequestReceived', 'ResponseComplete']);
    expect(events[1]).toMatchObject({ level: 'Request', requestObject: { kind: 'ConfigMap', data: { k: 'v' } }, responseStatus: { code: 201 } });
    expect(received[0]).toMatchObject({
      contentType: 'application/json',
      client: 'kube-apiserver-audit-client',
      list: { kind: 'EventList', apiVersion: 'audit.k8s.io/v1' },
    });
  });
});

/** The label selector (as sent) of the watch whose ResponseStarted the blocking webhook holds. */
const HELD_WATCH = 'held%3Dwatch';

describe('audit webhook, blocking-strict', () => {
  let dir: string;
  let hook: TlsStandIn;
  let server: ServerHandle;
  const received: Event[] = [];
  let release: (() => void) | undefined;
  let releaseAnswer: (() => void) | undefined;
  let releaseStart: (() => void) | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kapi-audit-blocking-'));
    hook = await startTlsStandIn(dir, {
      clientName: 'kube-apiserver-audit-client',
      path: '/events',
      answer: (body) => {
        const ev = (JSON.parse(body.toString('utf8')) as { items: Event[] }).items[0]!;
        received.push(ev);
        const name = ev.objectRef?.name;
        if (name === 'refused') return { status: 500, body: {} };
        if (name === 'held' && ev.stage === 'RequestReceived') return new Promise((r) => (release = () => r({ status: 200, body: {} })));
        if (name === 'held-answer' && ev.stage === 'ResponseComplete') return new Promise((r) => (releaseAnswer = () => r({ status: 200, body: {} })));
        if (ev.requestURI.includes(HELD_WATCH) && ev.stage === 'ResponseStarted')
          return new Promise((r) => (releaseStart = () => r({ status: 200, body: {} })));
        return { status: 200, body: {} };
      },
    });
    writeFileSync(
      join(dir, 'policy.yaml'),
      'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n    resources: [{ group: "", resources: [configmaps] }]\n',
    );
    server = await startServer({
      args: [
        '--audit-policy-file',
        join(dir, 'policy.yaml'),
        `--audit-webhook-config-file=${hook.kubeconfig}`,
        '--audit-webhook-mode=blocking-strict',
        '--audit-webhook-initial-backoff=10ms',
      ],
    });
  }, 60_000);

  afterAll(async () => {
    release?.();
    releaseAnswer?.();
    releaseStart?.();
    await server?.cleanup();
    await hook?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * GETs `path`, whose event of `stage` the webhook holds until `release()` (read once the event
   * arrived): no answer may come before (`waitMs` later still none), and the answer comes after,
   * with `status`. Returns the request's stages and its ResponseComplete event once they are in.
   */
  async function heldUntilReleased(
    path: string,
    stage: string,
    release: () => (() => void) | undefined,
    status: number,
    waitMs = 300,
    send: typeof request = request,
  ): Promise<{ stages: string[]; done: Event }> {
    let settled = false;
    const get = send(server, 'GET', path).then((r) => ((settled = true), r));
    await waitFor(`the ${stage} event at the webhook`, () => Promise.resolve(release()));
    await new Promise((r) => setTimeout(r, waitMs));
    expect(settled).toBe(false);
    release()!();
    const answer = await get;
    expect(answer.status).toBe(status);
    const auditId = answer.headers['audit-id'];
    const done = await waitFor('the ResponseComplete event', () =>
      Promise.resolve(received.find((e) => e.stage === 'ResponseComplete' && e.auditID === auditId)),
    );
    return { stages: received.filter((e) => e.auditID === auditId).map((e) => e.stage), done };
  }

  it('holds a request until the webhook has taken its RequestReceived event, each event POSTed alone', async () => {
    const { stages, done } = await heldUntilReleased('/api/v1/namespaces/default/configmaps/held', 'RequestReceived', () => release, 404);
    expect(stages).toEqual(['RequestReceived', 'ResponseComplete']);
    expect(done.responseStatus).toMatchObject({ code: 404, reason: 'NotFound' });
  });

  it('holds a whole answer until the webhook has taken its ResponseComplete event', async () => {
    const { stages, done } = await heldUntilReleased('/api/v1/namespaces/default/configmaps/held-answer', 'ResponseComplete', () => releaseAnswer, 404);
    expect(stages).toEqual(['RequestReceived', 'ResponseComplete']);
    expect(done.responseStatus).toMatchObject({ code: 404, reason: 'NotFound' });
  });

  it("holds a watch's headers, and what follows them, until the webhook has taken its ResponseStarted event (HTTP/1.1 and HTTP/2)", async () => {
    // The watch would end after a second: held, nothing of it arrives, not even its headers.
    const path = `/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1&labelSelector=${HELD_WATCH}`;
    for (const send of [request, request2]) {
      releaseStart = undefined;
      const { stages, done } = await heldUntilReleased(path, 'ResponseStarted', () => releaseStart, 200, 2_000, send);
      expect(stages).toEqual(['RequestReceived', 'ResponseStarted', 'ResponseComplete']);
      expect(done.verb).toBe('watch');
    }
  });

  it('fails a request with 500 when the webhook does not take its arrival, after the retries', async () => {
    const r = await request(server, 'GET', '/api/v1/namespaces/default/configmaps/refused');
    expect(r.status).toBe(500);
    expect(r.json()).toMatchObject({ reason: 'InternalError', message: 'Internal error occurred: the audit webhook could not record the request' });
    // Five attempts of the one event (kube's webhook backoff), and the request went no further.
    expect(received.filter((e) => e.objectRef?.name === 'refused' && e.stage === 'RequestReceived')).toHaveLength(5);
  });
});
