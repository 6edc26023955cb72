/**
 * Admission webhooks end to end: a real API server process calls webhooks served here over
 * HTTPS (their own CA, a certificate for `hook.webhooks.svc` and 127.0.0.1, a client
 * certificate required of the caller), registered with kubectl as Mutating- and
 * ValidatingWebhookConfigurations, reached by URL and through a Service's Endpoints, and
 * authenticated with the client certificate `--admission-control-config-file` names.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePki, issueClientCertificate } from '@app/pki';
import { getFreePort, kubectl, metricSum, request, startServer, waitFor, type ServerHandle } from './support/server.js';

type Obj = Record<string, unknown>;
interface Review {
  apiVersion: string;
  request: Obj & { uid: string; operation: string; object: Obj | null; oldObject: Obj | null; userInfo: Obj; namespace?: string; name: string };
}

/** A non-loopback IPv4 address of this machine (Endpoints refuse loopback addresses). */
function hostAddress(): string {
  const found = Object.values(networkInterfaces())
    .flat()
    .find((i) => i && !i.internal && i.family === 'IPv4');
  if (!found) throw new Error('this machine has no non-loopback IPv4 address for the webhook Service');
  return found.address;
}

describe('admission webhooks', () => {
  let dir: string;
  let server: ServerHandle;
  let hooks: https.Server;
  let hooksPort: number;
  let caBundle: string;
  /** Each call: the path, the review, and the common name of the client certificate presented. */
  const calls: Array<{ path: string; review: Review; client: string | undefined }> = [];
  const b64 = (s: string) => Buffer.from(s).toString('base64');

  /** What each webhook path answers. */
  function answer(path: string, review: Review): Obj | undefined {
    const r = review.request;
    const labels = ((r.object ?? r.oldObject)?.metadata as Obj | undefined)?.labels as Record<string, string> | undefined;
    const base = { uid: r.uid };
    switch (path) {
      case '/mutate': {
        const patch = labels
          ? [{ op: 'add', path: '/metadata/labels/mutated', value: 'by-webhook' }]
          : [{ op: 'add', path: '/metadata/labels', value: { mutated: 'by-webhook' } }];
        return {
          ...base,
          allowed: true,
          patchType: 'JSONPatch',
          patch: b64(JSON.stringify(patch)),
          warnings: ['mutated by mutate.example.com'],
          auditAnnotations: { labelled: 'mutated' },
        };
      }
      case '/validate':
        return labels?.deny === 'true'
          ? { ...base, allowed: false, status: { code: 403, reason: 'Forbidden', message: 'objects labelled deny=true are refused' } }
          : { ...base, allowed: true };
      case '/protect':
        return { ...base, allowed: labels?.protected !== 'true', ...(labels?.protected === 'true' ? { status: { message: 'protected' } } : {}) };
      case '/no-evict':
        return r.name === 'victim'
          ? { ...base, allowed: false, status: { code: 403, reason: 'Forbidden', message: 'evictions are paused' } }
          : { ...base, allowed: true };
      case '/conditional':
        return labels?.refuse === 'true'
          ? { ...base, allowed: false, status: { code: 403, reason: 'Forbidden', message: 'refused' } }
          : { ...base, allowed: true };
      case '/slow':
        return undefined;
      default:
        return { ...base, allowed: true };
    }
  }

  const apply = async (name: string, doc: Obj): Promise<void> => {
    const file = join(dir, `${name}.json`);
    await writeFile(file, JSON.stringify(doc));
    await kubectl(server, ['apply', '-f', file]);
  };
  const rule = (operations: string[], resources = ['configmaps']) => ({ operations, apiGroups: [''], apiVersions: ['v1'], resources });
  const byUrl = (path: string) => ({ url: `https://127.0.0.1:${hooksPort}${path}`, caBundle });
  const configMap = (ns: string, name: string, labels: Record<string, string> = {}) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: ns, labels },
    data: { k: 'v' },
  });
  const createCM = (ns: string, name: string, labels: Record<string, string> = {}) =>
    request(server, 'POST', `/api/v1/namespaces/${ns}/configmaps`, { body: configMap(ns, name, labels) });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kapi-webhooks-'));
    const pki = await ensurePki(join(dir, 'hooks-pki'), { hosts: ['127.0.0.1', 'hook.webhooks.svc'] });
    caBundle = b64(await readFile(pki.caCert, 'utf8'));
    hooks = https.createServer(
      {
        cert: await readFile(pki.servingCert, 'utf8'),
        key: await readFile(pki.servingKey, 'utf8'),
        ca: await readFile(pki.caCert, 'utf8'),
        requestCert: true,
        rejectUnauthorized: true,
      },
      (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Review;
          const path = (req.url ?? '/').split('?')[0]!;
          const cn = (req.socket as TLSSocket).getPeerCertificate().subject?.CN;
          calls.push({ path, review, client: Array.isArray(cn) ? cn[0] : cn });
          const response = answer(path, review);
          if (!response) return; // never answers
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'AdmissionReview', response }));
        });
      },
    );
    // On every address: Endpoints may not name a loopback one, so the Service's route uses another.
    await new Promise<void>((resolve) => hooks.listen(0, '0.0.0.0', resolve));
    hooksPort = (hooks.address() as AddressInfo).port;

    // The API server presents a client certificate of the webhooks' CA to every webhook.
    const client = await issueClientCertificate(pki.dir, 'kube-apiserver-webhook-client');
    await writeFile(
      join(dir, 'webhook.kubeconfig'),
      [
        'apiVersion: v1',
        'kind: Config',
        `users: [{name: "*", user: {client-certificate-data: ${b64(client.certPem)}, client-key-data: ${b64(client.keyPem)}}}]`,
      ].join('\n'),
    );
    await writeFile(
      join(dir, 'admission.yaml'),
      [
        'apiVersion: apiserver.config.k8s.io/v1',
        'kind: AdmissionConfiguration',
        'plugins:',
        '- name: ValidatingAdmissionWebhook',
        '  configuration: {apiVersion: apiserver.config.k8s.io/v1, kind: WebhookAdmissionConfiguration, kubeConfigFile: webhook.kubeconfig}',
        '- name: MutatingAdmissionWebhook',
        '  configuration: {apiVersion: apiserver.config.k8s.io/v1, kind: WebhookAdmissionConfiguration, kubeConfigFile: webhook.kubeconfig}',
      ].join('\n'),
    );
    // Requests in the hooked namespace are audited at Request (the webhooks' annotations).
    await writeFile(
      join(dir, 'audit.yaml'),
      'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Request\n  namespaces: [hooked]\n  resources: [{group: "", resources: [configmaps]}]\n',
    );
    server = await startServer({
      args: [
        `--admission-control-config-file=${join(dir, 'admission.yaml')}`,
        `--audit-policy-file=${join(dir, 'audit.yaml')}`,
        `--audit-log-path=${join(dir, 'audit.log')}`,
      ],
    });
    for (const ns of ['hooked', 'plain', 'webhooks']) await kubectl(server, ['create', 'namespace', ns]);
    await kubectl(server, ['label', 'namespace', 'hooked', 'webhooks=on']);
  }, 60_000);

  afterAll(async () => {
    await server?.cleanup();
    await new Promise<void>((resolve) => (hooks ? hooks.close(() => resolve()) : resolve()));
    hooks?.closeAllConnections();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('a mutating webhook changes objects of the namespaces it selects, with its warnings, and sees the request', async () => {
    await apply('mutating', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'mutate' },
      webhooks: [
        {
          name: 'mutate.example.com',
          rules: [rule(['CREATE'])],
          clientConfig: byUrl('/mutate'),
          namespaceSelector: { matchLabels: { webhooks: 'on' } },
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    });
    // A configuration takes effect once this node's copy has it.
    let n = 0;
    const created = await waitFor('the mutating webhook to take effect', async () => {
      const r = await createCM('hooked', `m${n++}`, { app: 'x' });
      expect(r.status).toBe(201);
      const labels = (r.json<Obj>().metadata as Obj).labels as Record<string, string>;
      return labels.mutated === 'by-webhook' ? r : undefined;
    });
    expect(created.headers.warning).toContain('mutated by mutate.example.com');
    const call = calls.find((c) => c.path === '/mutate')!;
    expect(call.client).toBe('kube-apiserver-webhook-client');
    expect(call.review.apiVersion).toBe('admission.k8s.io/v1');
    expect(call.review.request).toMatchObject({
      kind: { group: '', version: 'v1', kind: 'ConfigMap' },
      resource: { group: '', version: 'v1', resource: 'configmaps' },
      namespace: 'hooked',
      operation: 'CREATE',
      oldObject: null,
      dryRun: false,
      userInfo: { username: 'kubernetes-admin' },
    });
    expect((call.review.request.object as Obj).data).toEqual({ k: 'v' });

    // kubectl shows the webhook's warning, and the stored object has its change.
    const out = await kubectl(server, ['create', 'configmap', 'via-kubectl', '-n', 'hooked', '--from-literal=a=b']);
    expect(out.stderr).toContain('Warning: mutated by mutate.example.com');
    const got = await kubectl(server, ['get', 'configmap', 'via-kubectl', '-n', 'hooked', '-o', 'jsonpath={.metadata.labels.mutated}']);
    expect(got.stdout).toBe('by-webhook');
    // The audit event of the create names the call, its patch and the webhook's own annotation.
    const audited = (await readFile(join(dir, 'audit.log'), 'utf8'))
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { stage: string; verb: string; objectRef?: Obj; annotations?: Record<string, string> })
      .find((e) => e.stage === 'ResponseComplete' && e.verb === 'create' && e.objectRef?.name === 'via-kubectl');
    expect(audited?.annotations).toMatchObject({ 'mutate.example.com/labelled': 'mutated' });
    expect(JSON.parse(audited!.annotations!['mutation.webhook.admission.k8s.io/round_0_index_0']!)).toEqual({
      configuration: 'mutate',
      webhook: 'mutate.example.com',
      mutated: true,
    });
    expect(JSON.parse(audited!.annotations!['patch.webhook.admission.k8s.io/round_0_index_0']!)).toEqual({
      configuration: 'mutate',
      webhook: 'mutate.example.com',
      patch: [{ op: 'add', path: '/metadata/labels', value: { mutated: 'by-webhook' } }],
      patchType: 'JSONPatch',
    });
    // Outside the selected namespace nothing is sent.
    const before = calls.length;
    const plain = await createCM('plain', 'untouched');
    expect(((plain.json<Obj>().metadata as Obj).labels as Obj | undefined)?.mutated).toBeUndefined();
    expect(calls.length).toBe(before);
  });

  it('matchPolicy Equivalent: a webhook registered for autoscaling/v2 sees an autoscaling/v1 request at v2, and its patch lands', async () => {
    await apply('mutating-hpa', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'mutate-hpa' },
      webhooks: [
        {
          name: 'hpa.example.com',
          rules: [{ operations: ['CREATE'], apiGroups: ['autoscaling'], apiVersions: ['v2'], resources: ['horizontalpodautoscalers'] }],
          clientConfig: byUrl('/mutate'),
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    });
    const hpa = (name: string) => ({
      apiVersion: 'autoscaling/v1',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name },
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 3, targetCPUUtilizationPercentage: 50 },
    });
    let n = 0;
    const created = await waitFor('the HPA webhook to take effect', async () => {
      const r = await request(server, 'POST', '/apis/autoscaling/v1/namespaces/plain/horizontalpodautoscalers', { body: hpa(`h${n++}`) });
      expect(r.status).toBe(201);
      return ((r.json<Obj>().metadata as Obj).labels as Obj | undefined)?.mutated === 'by-webhook' ? r : undefined;
    });
    expect(created.json<Obj>()).toMatchObject({ apiVersion: 'autoscaling/v1', spec: { targetCPUUtilizationPercentage: 50 } });
    const call = calls.filter((c) => c.path === '/mutate').at(-1)!;
    expect(call.review.request).toMatchObject({
      kind: { group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler' },
      requestKind: { group: 'autoscaling', version: 'v1', kind: 'HorizontalPodAutoscaler' },
      object: {
        apiVersion: 'autoscaling/v2',
        spec: { metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }] },
      },
    });
    await kubectl(server, ['delete', 'mutatingwebhookconfiguration', 'mutate-hpa']);
  });

  it('a validating webhook reached through its Service refuses with its own status, for creates and deletes', async () => {
    // The webhook's Service and Endpoints: port 443 of hook.webhooks goes to the server here.
    await apply('svc', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'hook', namespace: 'webhooks' },
      spec: { ports: [{ name: 'https', port: 443, targetPort: hooksPort }] },
    });
    await apply('ep', {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'hook', namespace: 'webhooks' },
      subsets: [{ addresses: [{ ip: hostAddress() }], ports: [{ name: 'https', port: hooksPort }] }],
    });
    await apply('validating', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'validate' },
      webhooks: [
        {
          name: 'validate.example.com',
          rules: [rule(['CREATE', 'UPDATE'])],
          clientConfig: { service: { namespace: 'webhooks', name: 'hook', path: '/validate' }, caBundle },
          objectSelector: { matchExpressions: [{ key: 'deny', operator: 'Exists' }] },
          sideEffects: 'None',
          admissionReviewVersions: ['v1beta1', 'v1'],
        },
        {
          name: 'protect.example.com',
          rules: [rule(['DELETE'])],
          clientConfig: { service: { namespace: 'webhooks', name: 'hook', path: '/protect' }, caBundle },
          sideEffects: 'NoneOnDryRun',
          admissionReviewVersions: ['v1'],
        },
      ],
    });
    let n = 0;
    const refused = await waitFor('the validating webhook to take effect', async () => {
      const r = await createCM('plain', `v${n++}`, { deny: 'true' });
      return r.status === 403 ? r : undefined;
    });
    expect(refused.json()).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      code: 403,
      reason: 'Forbidden',
      message: 'admission webhook "validate.example.com" denied the request: objects labelled deny=true are refused',
    });
    // The first version it lists that this server speaks is the one sent.
    expect(calls.filter((c) => c.path === '/validate').at(-1)!.review.apiVersion).toBe('admission.k8s.io/v1beta1');
    expect((await createCM('plain', 'allowed', { deny: 'false' })).status).toBe(201);
    const cli = await kubectl(server, ['label', 'configmap', 'allowed', '-n', 'plain', '--overwrite', 'deny=true'], { expectFail: 'any' });
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toContain('admission webhook "validate.example.com" denied the request: objects labelled deny=true are refused');

    // A delete reaches the DELETE webhook with the old object; a refusal without a code is 400.
    await createCM('plain', 'keep', { protected: 'true' });
    const del = await request(server, 'DELETE', '/api/v1/namespaces/plain/configmaps/keep');
    expect(del.status).toBe(400);
    expect(del.json<Obj>().message).toBe('admission webhook "protect.example.com" denied the request: protected');
    const delCall = calls.filter((c) => c.path === '/protect').at(-1)!;
    expect(delCall.review.request).toMatchObject({ operation: 'DELETE', object: null, name: 'keep', options: { kind: 'DeleteOptions' } });
    expect((await request(server, 'GET', '/api/v1/namespaces/plain/configmaps/keep')).status).toBe(200);
    expect(await metricSum(server, 'apiserver_admission_webhook_rejection_count')).toBeGreaterThanOrEqual(3);
  });

  it('an eviction and a scale are admitted as their subresources, with their own kinds, and their inner writes are not admitted again', async () => {
    const sub = (operations: string[], apiGroups: string[], resources: string[]) => ({ operations, apiGroups, apiVersions: ['v1'], resources });
    await apply('subresources', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'subresources' },
      webhooks: [
        {
          name: 'no-evict.example.com',
          rules: [sub(['CREATE'], [''], ['pods/eviction'])],
          clientConfig: byUrl('/no-evict'),
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
        {
          name: 'scale.example.com',
          rules: [sub(['UPDATE'], ['apps'], ['deployments/scale'])],
          clientConfig: byUrl('/scale'),
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
        {
          name: 'pods.example.com',
          rules: [sub(['DELETE', 'UPDATE'], [''], ['pods', 'pods/status'])],
          clientConfig: byUrl('/pods'),
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
        {
          name: 'deployments.example.com',
          rules: [sub(['UPDATE'], ['apps'], ['deployments'])],
          clientConfig: byUrl('/deployments'),
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    });
    const pod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
    for (const name of ['victim', 'evicted', 'deleted'])
      expect((await request(server, 'POST', '/api/v1/namespaces/plain/pods', { body: pod(name) })).status).toBe(201);
    const evict = (name: string) =>
      request(server, 'POST', `/api/v1/namespaces/plain/pods/${name}/eviction`, { body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name } } });
    const refused = await waitFor('the eviction webhook to take effect', async () => {
      const r = await evict('victim');
      return r.status === 403 ? r : undefined;
    });
    expect(refused.json<Obj>().message).toBe('admission webhook "no-evict.example.com" denied the request: evictions are paused');
    expect(calls.filter((c) => c.path === '/no-evict').at(-1)!.review.request).toMatchObject({
      operation: 'CREATE',
      kind: { group: 'policy', version: 'v1', kind: 'Eviction' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      subResource: 'eviction',
      requestKind: { group: 'policy', version: 'v1', kind: 'Eviction' },
      name: 'victim',
      object: { kind: 'Eviction', metadata: { name: 'victim' } },
    });
    expect((await request(server, 'GET', '/api/v1/namespaces/plain/pods/victim')).status).toBe(200);

    // An allowed eviction deletes the pod without a pods DELETE admission; a plain delete has one.
    expect((await evict('evicted')).status).toBe(201);
    expect((await request(server, 'DELETE', '/api/v1/namespaces/plain/pods/deleted')).status).toBe(200);
    const podCalls = calls.filter((c) => c.path === '/pods').map((c) => `${c.review.request.operation} ${c.review.request.name}`);
    expect(podCalls).toContain('DELETE deleted');
    expect(podCalls.filter((c) => c.endsWith(' evicted'))).toEqual([]);

    // kubectl scale: one UPDATE of deployments/scale with Scale objects, none of deployments.
    await kubectl(server, ['create', 'deployment', 'web', '-n', 'plain', '--image=nginx']);
    const before = calls.filter((c) => c.path === '/deployments').length;
    await kubectl(server, ['scale', 'deployment', 'web', '-n', 'plain', '--replicas=3']);
    const scaled = calls.filter((c) => c.path === '/scale').at(-1)!.review.request;
    expect(scaled).toMatchObject({
      operation: 'UPDATE',
      kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' },
      resource: { group: 'apps', version: 'v1', resource: 'deployments' },
      subResource: 'scale',
      object: { kind: 'Scale', spec: { replicas: 3 } },
      oldObject: { kind: 'Scale', spec: { replicas: 1 } },
    });
    expect(calls.filter((c) => c.path === '/deployments').length).toBe(before);
    expect((await request(server, 'GET', '/apis/apps/v1/namespaces/plain/deployments/web')).json<{ spec: { replicas: number } }>().spec.replicas).toBe(3);
    await kubectl(server, ['delete', 'validatingwebhookconfiguration', 'subresources']);
  });

  it('failure policy: a webhook that cannot be reached or times out fails the request with Fail and is passed over with Ignore', async () => {
    const closed = await getFreePort();
    await apply('failing', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'failing' },
      webhooks: [
        {
          name: 'down.example.com',
          rules: [rule(['CREATE'], ['secrets'])],
          clientConfig: { url: `https://127.0.0.1:${closed}/down`, caBundle },
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'plain' } },
          failurePolicy: 'Fail',
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
        {
          name: 'slow.example.com',
          rules: [rule(['CREATE'], ['secrets'])],
          clientConfig: byUrl('/slow'),
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'hooked' } },
          failurePolicy: 'Fail',
          timeoutSeconds: 1,
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
        {
          name: 'ignored.example.com',
          rules: [rule(['CREATE'], ['secrets'])],
          clientConfig: { url: `https://127.0.0.1:${closed}/ignored`, caBundle },
          failurePolicy: 'Ignore',
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    });
    const secret = (ns: string, name: string) =>
      request(server, 'POST', `/api/v1/namespaces/${ns}/secrets`, { body: { metadata: { name }, stringData: { a: 'b' } } });
    let n = 0;
    const down = await waitFor('the failing webhook to take effect', async () => {
      const r = await secret('plain', `s${n++}`);
      return r.status === 500 ? r : undefined;
    });
    expect(down.json()).toMatchObject({ code: 500, reason: 'InternalError' });
    expect(down.json<Obj>().message).toMatch(
      /^Internal error occurred: failed calling webhook "down.example.com": failed to call webhook: Post "https:\/\/127.0.0.1:\d+\/down\?timeout=10s": /,
    );
    const slow = await secret('hooked', 'slow');
    expect(slow.status).toBe(500);
    expect(slow.json<Obj>().message).toContain('failed calling webhook "slow.example.com"');
    expect(slow.json<Obj>().message).toContain('context deadline exceeded');
    // Only the Ignore webhook applies in the webhooks namespace: the secret is created.
    expect((await secret('webhooks', 'fine')).status).toBe(201);
  });

  it('match conditions (CEL) decide whether a webhook is called; their errors follow the failure policy', async () => {
    await kubectl(server, ['create', 'namespace', 'conditional']);
    const config = (conditions: Array<{ name: string; expression: string }>, failurePolicy = 'Fail') => ({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'conditional' },
      webhooks: [
        {
          name: 'conditional.example.com',
          rules: [rule(['CREATE'])],
          clientConfig: byUrl('/conditional'),
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'conditional' } },
          matchConditions: conditions,
          failurePolicy,
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    });
    // A condition that does not compile is refused with cel-go's position.
    const file = join(dir, 'conditional.json');
    await writeFile(file, JSON.stringify(config([{ name: 'broken', expression: "object.metadata.name.startsWith('a'" }])));
    const refusedConfig = await kubectl(server, ['apply', '-f', file], { expectFail: true });
    expect(refusedConfig.stderr).toContain(
      'webhooks[0].matchConditions[0].expression: Invalid value: "object.metadata.name.startsWith(\'a\'": compilation failed: ERROR: <input>:1:',
    );
    await apply(
      'conditional',
      config([
        { name: 'not-skipped', expression: "!has(object.metadata.labels) || !('skip' in object.metadata.labels)" },
        { name: 'creates', expression: "request.operation == 'CREATE' && request.userInfo.username != 'nobody'" },
      ]),
    );
    let n = 0;
    await waitFor('the conditional webhook to take effect', async () => (await createCM('conditional', `c${n++}`, { refuse: 'true' })).status === 403);
    const before = calls.length;
    const skipped = await createCM('conditional', 'skipped', { refuse: 'true', skip: 'yes' });
    expect([skipped.status, skipped.json<Obj>().message]).toEqual([201, undefined]);
    expect(calls.slice(before).filter((c) => c.review.request.name === 'skipped')).toEqual([]);
    const denied = await createCM('conditional', 'denied', { refuse: 'true' });
    expect([denied.status, denied.json<Obj>().message]).toEqual([403, 'admission webhook "conditional.example.com" denied the request: refused']);
    expect(calls.slice(before).some((c) => c.path === '/conditional' && c.review.request.name === 'denied')).toBe(true);
    // `authorizer` asks the server's RBAC: a service account without rights makes the condition
    // false (the webhook is skipped); the admin's own access to the request's resource is true.
    const sa = "authorizer.serviceAccount('conditional', 'nobody').group('').resource('configmaps').namespace('conditional').check('create').allowed()";
    await apply('conditional', config([{ name: 'sa-may-create', expression: sa }]));
    await waitFor('the service account condition to take effect', async () => (await createCM('conditional', `a${n++}`, { refuse: 'true' })).status === 201);
    const own = "authorizer.requestResource.check('create').allowed() && authorizer.path('/healthz').check('get').allowed()";
    await apply('conditional', config([{ name: 'admin-may-create', expression: own }]));
    await waitFor('the requester condition to take effect', async () => (await createCM('conditional', `b${n++}`, { refuse: 'true' })).status === 403);
    // An evaluation error (a label the object lacks) refuses under Fail and passes under Ignore.
    await apply('conditional', config([{ name: 'team', expression: "object.metadata.labels.team == 'a'" }]));
    const failed = await waitFor('the failing condition to take effect', async () => {
      const r = await createCM('conditional', `e${n++}`, { other: 'x' });
      return r.status === 403 ? r : undefined;
    });
    expect(failed.json<Obj>().message).toMatch(
      /^configmaps "e\d+" is forbidden: expression 'object.metadata.labels.team == 'a'' resulted in error: no such key: team$/,
    );
    await apply('conditional', config([{ name: 'team', expression: "object.metadata.labels.team == 'a'" }], 'Ignore'));
    await waitFor('the ignoring condition to take effect', async () => (await createCM('conditional', `i${n++}`, { other: 'x' })).status === 201);
    await kubectl(server, ['delete', 'validatingwebhookconfiguration', 'conditional']);
  });

  it('webhook configurations are validated, and never sent to webhooks themselves', async () => {
    const bad = await request(server, 'POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
      body: {
        metadata: { name: 'bad' },
        webhooks: [{ name: 'bad.example.com', clientConfig: { url: 'http://127.0.0.1/x' }, admissionReviewVersions: ['v1'] }],
      },
    });
    expect(bad.status).toBe(422);
    const msg = bad.json<Obj>().message as string;
    expect(msg).toContain('webhooks[0].sideEffects');
    expect(msg).toContain('webhooks[0].clientConfig.url');
    const table = await kubectl(server, ['get', 'validatingwebhookconfigurations']);
    expect(table.stdout).toMatch(/NAME\s+WEBHOOKS\s+AGE/);
    expect(table.stdout).toMatch(/validate\s+2\s/);
    // Deleting a webhook configuration is not sent to the DELETE webhook (which matches everything deleted).
    await apply('catch-all', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'catch-all' },
      webhooks: [
        {
          name: 'deny-all.example.com',
          rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'] }],
          clientConfig: { url: `https://127.0.0.1:${await getFreePort()}/none`, caBundle },
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'plain' } },
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    });
    await kubectl(server, ['delete', 'validatingwebhookconfiguration', 'catch-all', 'failing', 'validate']);
    await kubectl(server, ['delete', 'mutatingwebhookconfiguration', 'mutate']);
    await waitFor('the webhooks to be gone', async () => (await createCM('plain', `after-${Date.now()}`, { deny: 'true' })).status === 201);
  });
});
