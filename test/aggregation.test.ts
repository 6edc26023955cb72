/**
 * The aggregation layer end to end: an HTTPS server stands in for metrics-server (its serving
 * certificate for `metrics.kube-system.svc` from a CA of its own, client certificates required
 * from that CA; test/support/metrics-standin.ts), behind a Service and Endpoints at a
 * non-loopback address of this machine, and named by the APIService v1beta1.metrics.k8s.io. The API server runs with
 * --enable-aggregator-routing (requests go to the endpoints; no cluster IP is routed here) and
 * presents --proxy-client-cert-file.
 *
 * Checked: the availability controller marks the APIService Available (Passed) and marks
 * broken ones False with kube-aggregator's reasons (no service, no endpoints, a server whose
 * certificate the caBundle does not verify); `kubectl top pod` works; requests reach the server
 * with the user in X-Remote-User/Group, the proxy's client certificate and never the client's
 * credentials, after this server's RBAC (a user without the grant is 403 and never reaches it);
 * a watch is streamed through, an upgrade tunneled and OPTIONS passed on (a 405 on this
 * server's own resources); legacy and aggregated discovery list the remote group, `kubectl
 * api-resources` its resources, the server's OpenAPI v3 document is served for `kubectl
 * explain`; a request to an unavailable APIService's group-version is a 503.
 */
import { jest } from '@jest/globals';
import type { IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { WebSocket } from 'ws';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPki } from '@app/pki';
import { kubectl, request, startServer, type ServerHandle } from './support/server.js';
import { grantRole } from './support/rbac.helper.js';
import { releaseOutsideAddresses, waitFor } from './support/net.helper.js';
import {
  apiService,
  availableWhen as availableOn,
  OPENAPI_V3,
  RESOURCES,
  standInObjects,
  startMetricsStandIn,
  type MetricsStandIn,
} from './support/metrics-standin.js';

jest.setTimeout(180_000);

type Obj = Record<string, unknown>;
const NS = 'aggregated';

let server: ServerHandle;
let standIn: MetricsStandIn;
let dir: string;
let extCaPem: string;
let seen: MetricsStandIn['seen'];
let ip: string;
let port: number;

const created = async (path: string, body: Obj): Promise<void> => {
  const r = await request(server, 'POST', path, { body });
  if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${r.body}`);
};
const availableWhen = (name: string, status: string) => availableOn(server, name, status);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'aggregation-'));
  standIn = await startMetricsStandIn(dir, NS, '198.18.0.2');
  ({ ip, port, seen, caPem: extCaPem } = standIn);
  const ext = standIn.pkiDir;
  server = await startServer({
    args: [
      `--proxy-client-cert-file=${join(ext, 'admin.crt')}`,
      `--proxy-client-key-file=${join(ext, 'admin.key')}`,
      '--enable-aggregator-routing=true',
      // Trusting the extension's CA as a front proxy's: published for extension servers to read.
      `--requestheader-client-ca-file=${join(ext, 'ca.crt')}`,
      '--requestheader-username-headers=X-Remote-User',
      '--requestheader-uid-headers=X-Remote-Uid',
      '--requestheader-group-headers=X-Remote-Group',
      '--requestheader-extra-headers-prefix=X-Remote-Extra-',
      '--requestheader-allowed-names=front-proxy-client,aggregator',
      // Proxied requests name the user's UID too (X-Remote-Uid).
      '--feature-gates=RemoteRequestHeaderUID=true',
    ],
  });
  await created('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  for (const [path, body] of standInObjects(standIn)) await created(path, body);
});

afterAll(async () => {
  await server?.cleanup();
  await standIn?.close();
  releaseOutsideAddresses();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('a remote APIService', () => {
  it('is marked Available once its server answers discovery, and kubectl top pod reads it', async () => {
    const cond = await availableWhen('v1beta1.metrics.k8s.io', 'True');
    expect(cond).toMatchObject({ reason: 'Passed', message: 'all checks passed' });
    const check = seen.find((s) => s.url === '/apis/metrics.k8s.io/v1beta1');
    expect(check?.headers['x-remote-user']).toBe('system:kube-aggregator');
    expect(check?.headers['x-remote-group']).toBe('system:masters');
    await waitFor(
      'metrics.k8s.io in aggregated discovery',
      async () => {
        const r = await request(server, 'GET', '/apis', { headers: { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' } });
        const g = (r.json<{ items: Obj[] }>().items ?? []).find((i) => (i.metadata as Obj).name === 'metrics.k8s.io');
        return ((g?.versions as Obj[] | undefined)?.[0]?.resources as unknown[] | undefined)?.length === 2;
      },
      40_000,
    );
    const top = await kubectl(server, ['top', 'pod', '-n', NS]);
    expect(top.stdout).toMatch(/NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)/);
    expect(top.stdout).toMatch(/busy\s+123m\s+45Mi/);
  });

  it('gets requests with the user in X-Remote-* headers and the proxy client certificate, never the client credentials', async () => {
    seen.splice(0);
    const r = await request(server, 'GET', `/apis/metrics.k8s.io/v1beta1/namespaces/${NS}/pods?labelSelector=app%3Dweb`, {
      headers: { 'x-remote-user': 'forged', 'impersonate-user': 'nobody' },
    });
    // As the impersonated user, who may not list pods.metrics.k8s.io: refused before anything is proxied.
    expect(r.status).toBe(403);
    expect(seen).toHaveLength(0);
    const ok = await request(server, 'GET', `/apis/metrics.k8s.io/v1beta1/namespaces/${NS}/pods?labelSelector=app%3Dweb`, {
      headers: { 'x-remote-user': 'forged', 'x-remote-uid': 'forged-uid' },
    });
    expect(ok.status).toBe(200);
    expect(ok.json<Obj>().kind).toBe('PodMetricsList');
    const s = seen.at(-1)!;
    expect(s.url).toBe(`/apis/metrics.k8s.io/v1beta1/namespaces/${NS}/pods?labelSelector=app%3Dweb`);
    expect(s.headers['x-remote-user']).not.toBe('forged');
    // The admin's certificate names no UID: none is sent, and the client's header is dropped.
    expect(s.headers['x-remote-uid']).toBeUndefined();
    expect(String(s.headers['x-remote-group'])).toContain('system:masters');
    expect(s.headers.authorization).toBeUndefined();
    expect(s.clientCn).toBeTruthy();
  });

  it('passes OPTIONS on to the APIService as kube does; on its own resources OPTIONS is 405', async () => {
    const before = seen.length;
    const r = await request(server, 'OPTIONS', `/apis/metrics.k8s.io/v1beta1/namespaces/${NS}/pods`);
    expect(r.status).toBe(200);
    expect(seen.slice(before).map((x) => [x.method, x.url])).toEqual([['OPTIONS', `/apis/metrics.k8s.io/v1beta1/namespaces/${NS}/pods`]]);
    for (const path of ['/api/v1/namespaces', `/api/v1/namespaces/${NS}`, '/apis/apps/v1/deployments', '/apis']) {
      const local = await request(server, 'OPTIONS', path);
      expect(local.status).toBe(405);
      expect(local.json<Obj>()).toMatchObject({ kind: 'Status', reason: 'MethodNotAllowed', code: 405 });
    }
    expect(seen).toHaveLength(before + 1);
  });

  it('streams a watch as the server sends it, with no deadline', async () => {
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = httpsRequest(
        new URL(`/apis/metrics.k8s.io/v1beta1/namespaces/${NS}/pods?watch=true`, server.url),
        { ca: server.caPem, cert: server.adminCertPem, key: server.adminKeyPem, agent: false },
        resolve,
      );
      req.on('error', reject);
      req.end();
    });
    expect(res.statusCode).toBe(200);
    // The first event arrives while the server's answer is still open.
    const first = await new Promise<string>((resolve) => res.once('data', (c: Buffer) => resolve(c.toString('utf8'))));
    expect(JSON.parse(first)).toMatchObject({ type: 'ADDED', object: { kind: 'PodMetrics', metadata: { name: 'busy' } } });
    expect(res.complete).toBe(false);
    res.destroy();
  });

  it('tunnels an upgrade, with the user in the headers of the upgrade request', async () => {
    const url = new URL(`/apis/metrics.k8s.io/v1beta1/namespaces/${NS}/pods/busy/exec?command=true`, server.url.replace(/^https/, 'wss'));
    const ws = new WebSocket(url, { ca: server.caPem, cert: server.adminCertPem, key: server.adminKeyPem });
    const heard = await new Promise<string>((resolve, reject) => {
      ws.once('open', () => ws.send('hello'));
      ws.once('message', (m: Buffer) => resolve(m.toString()));
      ws.once('error', reject);
    });
    ws.close();
    const admin = seen.find((s) => s.url.startsWith(`/apis/metrics.k8s.io/v1beta1/namespaces/${NS}/pods?labelSelector`))!.headers['x-remote-user'];
    expect(heard).toBe(`${String(admin)} said hello at /apis/metrics.k8s.io/v1beta1/namespaces/${NS}/pods/busy/exec?command=true`);
  });

  it('is authorized here first: a service account needs its grant on pods.metrics.k8s.io', async () => {
    await created(`/api/v1/namespaces/${NS}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'viewer' } });
    const token = (await kubectl(server, ['create', 'token', 'viewer', '-n', NS])).stdout.trim();
    seen.splice(0);
    const path = `/apis/metrics.k8s.io/v1beta1/namespaces/${NS}/pods`;
    const denied = await request(server, 'GET', path, { identity: 'anonymous', token });
    expect(denied.status).toBe(403);
    expect(denied.json<Obj>()).toMatchObject({ reason: 'Forbidden', details: { group: 'metrics.k8s.io', kind: 'pods' } });
    expect(seen).toHaveLength(0);
    await grantRole(server, {
      namespace: NS,
      name: 'metrics-reader',
      rules: [{ apiGroups: ['metrics.k8s.io'], resources: ['pods'], verbs: ['get', 'list'] }],
      subject: { kind: 'ServiceAccount', name: 'viewer' },
      probe: { path, identity: 'anonymous', token },
    });
    const r = await request(server, 'GET', path, { identity: 'anonymous', token });
    expect(r.status).toBe(200);
    const s = seen.at(-1)!;
    expect(s.headers['x-remote-user']).toBe(`system:serviceaccount:${NS}:viewer`);
    const sa = (await request(server, 'GET', `/api/v1/namespaces/${NS}/serviceaccounts/viewer`)).json<{ metadata: { uid: string } }>();
    expect(s.headers['x-remote-uid']).toBe(sa.metadata.uid);
    expect(String(s.headers['x-remote-group']).split(/,\s*/)).toEqual(
      expect.arrayContaining(['system:serviceaccounts', `system:serviceaccounts:${NS}`, 'system:authenticated']),
    );
    // The service account's token claims arrive as extras.
    expect(Object.keys(s.headers).some((h) => h.startsWith('x-remote-extra-authentication.kubernetes.io'))).toBe(true);
  });

  it('is listed by legacy discovery and kubectl api-resources, and explained from its OpenAPI v3 document', async () => {
    const groups = (await request(server, 'GET', '/apis')).json<{ groups: Obj[] }>().groups;
    expect(groups.find((g) => g.name === 'metrics.k8s.io')).toEqual({
      name: 'metrics.k8s.io',
      versions: [{ groupVersion: 'metrics.k8s.io/v1beta1', version: 'v1beta1' }],
      preferredVersion: { groupVersion: 'metrics.k8s.io/v1beta1', version: 'v1beta1' },
    });
    expect((await request(server, 'GET', '/apis/metrics.k8s.io')).json<Obj>()).toMatchObject({ kind: 'APIGroup', name: 'metrics.k8s.io' });
    expect((await request(server, 'GET', '/apis/metrics.k8s.io/v1beta1')).json<Obj>()).toEqual(RESOURCES);
    // The OpenAPI v3 document of the group-version is the server's, under this server's index.
    await waitFor('the remote OpenAPI v3 document', async () => {
      const index = (await request(server, 'GET', '/openapi/v3')).json<{ paths: Record<string, { serverRelativeURL: string }> }>();
      return index.paths['apis/metrics.k8s.io/v1beta1']?.serverRelativeURL;
    });
    const index = (await request(server, 'GET', '/openapi/v3')).json<{ paths: Record<string, { serverRelativeURL: string }> }>();
    expect(index.paths['apis/apps/v1']).toBeDefined();
    expect((await request(server, 'GET', index.paths['apis/metrics.k8s.io/v1beta1']!.serverRelativeURL)).json<Obj>()).toEqual(OPENAPI_V3);
    const explained = (await kubectl(server, ['explain', 'pods', '--api-version=metrics.k8s.io/v1beta1'])).stdout;
    expect(explained).toMatch(/KIND:\s+PodMetrics/);
    expect(explained).toContain('PodMetrics is what the stand-in measured of one pod.');
    expect(explained).toMatch(/window\s+<string>/);
    const out = (await kubectl(server, ['api-resources', '--api-group=metrics.k8s.io', '--no-headers'])).stdout;
    expect(out).toMatch(/^nodes\s+metrics\.k8s\.io\/v1beta1\s+false\s+NodeMetrics/m);
    expect(out).toMatch(/^pods\s+metrics\.k8s\.io\/v1beta1\s+true\s+PodMetrics/m);
  });
});

describe('kube-system/extension-apiserver-authentication', () => {
  it('tells extension servers the client CA and how to trust this server as their front proxy', async () => {
    const cm = (await request(server, 'GET', '/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication')).json<{
      data: Record<string, string>;
    }>();
    expect(cm.data).toEqual({
      'client-ca-file': server.caPem,
      'requestheader-client-ca-file': extCaPem,
      'requestheader-allowed-names': '["front-proxy-client","aggregator"]',
      'requestheader-username-headers': '["X-Remote-User"]',
      'requestheader-uid-headers': '["X-Remote-Uid"]',
      'requestheader-group-headers': '["X-Remote-Group"]',
      'requestheader-extra-headers-prefix': '["X-Remote-Extra-"]',
    });
  });
});

describe('an APIService that cannot be reached', () => {
  it('is marked unavailable with the reason, and its group-version answers 503', async () => {
    const ns = { namespace: 'kube-system' };
    await created('/apis/apiregistration.k8s.io/v1/apiservices', apiService('v1', 'missing.example.com', { ...ns, name: 'nowhere', port: 443 }, extCaPem));
    expect(await availableWhen('v1.missing.example.com', 'False')).toMatchObject({
      reason: 'ServiceNotFound',
      message: 'service/nowhere in "kube-system" is not present',
    });
    await created('/api/v1/namespaces/kube-system/services', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'empty' },
      spec: { ports: [{ name: 'https', port: 443 }] },
    });
    await created('/apis/apiregistration.k8s.io/v1/apiservices', apiService('v1', 'empty.example.com', { ...ns, name: 'empty', port: 443 }, extCaPem));
    expect(await availableWhen('v1.empty.example.com', 'False')).toMatchObject({
      reason: 'EndpointsNotFound',
      message: 'cannot find endpoints for service/empty in "kube-system"',
    });
    await created('/api/v1/namespaces/kube-system/endpoints', { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'empty' }, subsets: [] });
    await waitFor('MissingEndpoints', async () => (await availableWhen('v1.empty.example.com', 'False')).reason === 'MissingEndpoints', 30_000);
    // The metrics server, but a caBundle that does not verify its certificate.
    const other = join(dir, 'other');
    await createPki({ outDir: other, hosts: ['metrics.kube-system.svc'] });
    await created(
      '/apis/apiregistration.k8s.io/v1/apiservices',
      apiService('v1', 'untrusted.example.com', { ...ns, name: 'metrics', port: 443 }, readFileSync(join(other, 'ca.crt'), 'utf8')),
    );
    const untrusted = await availableWhen('v1.untrusted.example.com', 'False');
    expect(untrusted.reason).toBe('FailedDiscoveryCheck');
    expect(untrusted.message).toContain(`failing or missing response from https://${ip}:${port}/apis/untrusted.example.com/v1`);

    const r = await request(server, 'GET', '/apis/missing.example.com/v1/things');
    expect(r.status).toBe(503);
    expect(r.json<Obj>()).toMatchObject({ kind: 'Status', reason: 'ServiceUnavailable', message: 'service unavailable', code: 503 });
    // Still listed by discovery, as stale in the aggregated document.
    const agg = (await request(server, 'GET', '/apis', { headers: { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' } })).json<{
      items: Obj[];
    }>();
    const missing = agg.items.find((i) => (i.metadata as Obj).name === 'missing.example.com');
    expect(missing?.versions).toEqual([{ version: 'v1', resources: [], freshness: 'Stale' }]);
    const metrics = (await request(server, 'GET', '/metrics')).body;
    expect(metrics).toContain('aggregator_unavailable_apiservice{name="v1.missing.example.com"} 1');
    expect(metrics).toContain('aggregator_unavailable_apiservice{name="v1beta1.metrics.k8s.io"} 0');
    expect(metrics).toContain('aggregator_unavailable_apiservice{name="v1.apps"} 0');
    const kc = await kubectl(server, ['get', 'apiservice', 'v1.missing.example.com']);
    expect(kc.stdout).toMatch(/v1\.missing\.example\.com\s+kube-system\/nowhere\s+False \(ServiceNotFound\)/);
  });
});
