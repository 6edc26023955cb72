/**
 * The `proxy` subresources of pods, services and nodes end to end: a plain HTTP server stands in for a
 * pod (at the pod's IP and container port), an HTTPS server requiring client certificates for
 * the kubelet of a node. Both listen on a non-loopback address of this machine: a proxy refuses
 * loopback addresses, as kube-apiserver's does.
 *
 * Checked: `kubectl get --raw` and plain requests reach the pod with the path below `proxy`, the
 * query, the method and the body, and never the client's credentials; the answer (status,
 * headers, body) comes back as the backend sent it; a redirect to the backend is rewritten to go
 * through the proxy; `name:port` and `https:name:port` choose the port and scheme; each method
 * needs its verb on the subresource; a pod without an IP, a loopback IP, a malformed name and a
 * missing pod are refused with kube's Status; a backend that cannot be reached is a 503; a
 * service's proxy reaches an endpoint that is its pod's IP, by port number, name or the unnamed
 * port, and refuses ports it does not declare and services without endpoints; a
 * node's proxy reaches its kubelet with the API server's kubelet client certificate, and
 * another port of the node over plain HTTP; a WebSocket through a pod's proxy is tunneled;
 * discovery lists the subresources.
 */
import { jest } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { gzipSync } from 'node:zlib';
import { WebSocket, WebSocketServer } from 'ws';
import { createPki } from '@app/pki';
import { createOrThrow, getFreePort, kubectl, request, startServer, type ServerHandle } from './support/server.js';
import { outsideAddress, releaseOutsideAddresses } from './support/net.helper.js';
import { grantRole } from './support/rbac.helper.js';
import { kubeletClientFlags } from './support/kubelet.helper.js';

jest.setTimeout(180_000);

type Obj = Record<string, unknown>;
const NS = 'proxied';

let server: ServerHandle;
let pod: HttpServer;
let podTls: HttpsServer;
let kubelet: HttpsServer;
let other: HttpServer;
let pkiDir: string;
let ip: string;
let podPort: number;
let podTlsPort: number;
let kubeletPort: number;
let otherPort: number;
let prober = '';

/** What a backend was asked, as it echoes it. */
interface Echo {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  clientCn?: string;
}

function echo(req: IncomingMessage, res: import('node:http').ServerResponse, who: string): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const url = req.url ?? '';
    if (url === '/redirect') {
      res.writeHead(302, { location: '/landing?from=redirect' });
      res.end();
      return;
    }
    if (url === '/redirect-absolute') {
      res.writeHead(301, { location: `http://${req.headers.host}/landing/` });
      res.end();
      return;
    }
    if (url === '/redirect-elsewhere') {
      res.writeHead(302, { location: 'https://example.com/away' });
      res.end();
      return;
    }
    if (url === '/page' || url === '/page.gz') {
      const page = `<html><head><link rel="stylesheet" href="/style.css"></head><body><a href="/next?a=1&amp;b=2">next</a> <a href="rel">rel</a> <a href="http://${req.headers.host}/abs">abs</a> <img src='https://cdn.example/x.png'> <script>document.write('<a href="/in-script">')</script> caf\u00e9</body></html>`;
      const body = url === '/page.gz' ? gzipSync(Buffer.from(page)) : Buffer.from(page);
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'content-length': body.length,
        ...(url === '/page.gz' ? { 'content-encoding': 'gzip' } : {}),
      });
      res.end(body);
      return;
    }
    if (url === '/teapot') {
      res.writeHead(418, { 'content-type': 'text/plain', 'x-backend': who });
      res.end('short and stout');
      return;
    }
    const cert = (req.socket as TLSSocket).getPeerCertificate?.();
    const body: Echo = { method: req.method ?? '', url, headers: req.headers, body: Buffer.concat(chunks).toString() };
    if (cert?.subject) body.clientCn = String(cert.subject.CN);
    res.writeHead(200, { 'content-type': 'application/json', 'x-backend': who });
    res.end(JSON.stringify(body));
  });
}

const listen = (s: HttpServer | HttpsServer, port: number): Promise<void> => new Promise((r) => s.listen(port, ip, r));

beforeAll(async () => {
  ip = outsideAddress('198.18.0.1');
  pkiDir = await mkdtemp(join(tmpdir(), 'proxy-pki-'));
  await createPki({ outDir: pkiDir, hosts: ['127.0.0.1', ip] });
  const tls = { cert: readFileSync(join(pkiDir, 'apiserver.crt')), key: readFileSync(join(pkiDir, 'apiserver.key')) };
  [podPort, podTlsPort, kubeletPort, otherPort] = [await getFreePort(), await getFreePort(), await getFreePort(), await getFreePort()];
  pod = createHttpServer((req, res) => echo(req, res, 'pod'));
  const wss = new WebSocketServer({ server: pod });
  wss.on('connection', (ws, req) => ws.on('message', (m: Buffer) => ws.send(`pod heard ${m.toString()} at ${req.url}`)));
  podTls = createHttpsServer(tls, (req, res) => echo(req, res, 'pod-tls'));
  // As a kubelet with client-certificate authentication: only clients the CA signed get in.
  kubelet = createHttpsServer({ ...tls, ca: readFileSync(join(pkiDir, 'ca.crt')), requestCert: true, rejectUnauthorized: true }, (req, res) =>
    echo(req, res, 'kubelet'),
  );
  other = createHttpServer((req, res) => echo(req, res, 'node-port'));
  await Promise.all([listen(pod, podPort), listen(podTls, podTlsPort), listen(kubelet, kubeletPort), listen(other, otherPort)]);

  server = await startServer({
    args: [...kubeletClientFlags(pkiDir), '--kubelet-preferred-address-types=InternalIP'],
  });
  const created = (path: string, body: Obj) => createOrThrow(server, path, body);
  await created('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  const makePod = async (name: string, ports: number[], podIp?: string): Promise<void> => {
    await created(`/api/v1/namespaces/${NS}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: { containers: [{ name: 'app', image: 'nginx', ports: ports.map((containerPort) => ({ containerPort })) }] },
    });
    if (podIp === undefined) return;
    const r = await request(server, 'PATCH', `/api/v1/namespaces/${NS}/pods/${name}/status`, {
      body: JSON.stringify({ status: { podIP: podIp, podIPs: [{ ip: podIp }] } }),
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    if (r.status !== 200) throw new Error(`status of ${name}: ${r.status} ${r.body}`);
  };
  await makePod('web', [podPort, podTlsPort], ip);
  await makePod('no-ip', [podPort]);
  await makePod('loopback', [podPort], '127.0.0.1');
  await makePod('gone-away', [await getFreePort()], ip);
  const node = (name: string, address: string) =>
    created('/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name },
      status: { addresses: [{ type: 'InternalIP', address }], daemonEndpoints: { kubeletEndpoint: { Port: kubeletPort } } },
    });
  // A service whose endpoints are the web pod (named port "http", and "tls"), one whose
  // endpoint's IP is not its pod's, one without endpoints.
  const service = (name: string, ports: Obj[]) =>
    created(`/api/v1/namespaces/${NS}/services`, { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports } });
  const endpoints = (name: string, subsets: Obj[]) =>
    created(`/api/v1/namespaces/${NS}/endpoints`, { apiVersion: 'v1', kind: 'Endpoints', metadata: { name }, subsets });
  const webRef = { kind: 'Pod', name: 'web', namespace: NS };
  await service('site', [
    { name: 'http', port: 80, targetPort: podPort },
    { name: 'tls', port: 443, targetPort: podTlsPort },
  ]);
  await endpoints('site', [
    {
      addresses: [{ ip, targetRef: webRef }],
      ports: [
        { name: 'http', port: podPort },
        { name: 'tls', port: podTlsPort },
      ],
    },
  ]);
  await service('plain', [{ port: 80, targetPort: podPort }]);
  await endpoints('plain', [{ addresses: [{ ip, targetRef: webRef }], ports: [{ port: podPort }] }]);
  await service('stranger', [{ port: 80 }]);
  await endpoints('stranger', [{ addresses: [{ ip: '10.255.255.1', targetRef: webRef }], ports: [{ port: 80 }] }]);
  await service('empty', [{ port: 80 }]);
  await endpoints('empty', []);
  await node('node-p', ip);
  await node('node-loop', '127.0.0.1');

  // A service account that may only get pods/proxy.
  await created(`/api/v1/namespaces/${NS}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'prober' } });
  prober = (await kubectl(server, ['create', 'token', 'prober', '-n', NS])).stdout.trim();
  await grantRole(server, {
    namespace: NS,
    name: 'probe',
    rules: [{ apiGroups: [''], resources: ['pods/proxy'], verbs: ['get'] }],
    subject: { kind: 'ServiceAccount', name: 'prober' },
    probe: { path: `/api/v1/namespaces/${NS}/pods/web/proxy/`, identity: 'anonymous', token: prober },
  });
});

afterAll(async () => {
  releaseOutsideAddresses();
  await server?.cleanup();
  for (const s of [pod, podTls, kubelet, other]) {
    if (!s) continue;
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
  if (pkiDir) await rm(pkiDir, { recursive: true, force: true });
});

const P = `/api/v1/namespaces/${NS}/pods`;

describe('pods/proxy', () => {
  it('kubectl get --raw reaches the pod at its IP and first container port, with the path below proxy and the query', async () => {
    const r = await kubectl(server, ['get', '--raw', `${P}/web/proxy/hello/world?x=1&x=2&y=a%20b`]);
    const e = JSON.parse(r.stdout) as Echo;
    expect(e.method).toBe('GET');
    // kubectl encodes the query its own way (a space as +); the proxy passes the query on as sent.
    expect(e.url).toBe('/hello/world?x=1&x=2&y=a+b');
    expect((await request(server, 'GET', `${P}/web/proxy/q?y=a%20b&z=%2F`)).json<Echo>().url).toBe('/q?y=a%20b&z=%2F');
    expect((await request(server, 'GET', `${P}/web/proxy/a%2Fb%20c`)).json<Echo>().url).toBe('/a%2Fb%20c');
    expect(e.headers.host).toBe(`${ip}:${podPort}`);
    expect(e.headers['x-forwarded-uri']).toBe(`${P}/web/proxy/hello/world`);
    expect(e.headers['x-forwarded-proto']).toBe('https');
    expect(e.headers['x-forwarded-host']).toBe(new URL(server.url).host);
    // The trailing slash is kept; nothing below proxy is the backend's root.
    expect((JSON.parse((await kubectl(server, ['get', '--raw', `${P}/web/proxy/dir/`])).stdout) as Echo).url).toBe('/dir/');
    expect((JSON.parse((await kubectl(server, ['get', '--raw', `${P}/web/proxy`])).stdout) as Echo).url).toBe('/');
  });

  it('passes the method, body and headers on, never the client credentials, and the answer back as the backend gave it', async () => {
    const r = await request(server, 'POST', `${P}/web/proxy/submit`, {
      body: 'name=value',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-custom': 'kept', 'impersonate-user': 'nobody' },
      identity: 'anonymous',
      token: (await kubectl(server, ['create', 'token', 'default', '-n', NS])).stdout.trim(),
    });
    // The default service account may not create pods/proxy.
    expect(r.status).toBe(403);
    const a = await request(server, 'POST', `${P}/web/proxy/submit`, {
      body: 'name=value',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-custom': 'kept' },
    });
    expect(a.status).toBe(200);
    expect(a.headers['x-backend']).toBe('pod');
    const e = a.json<Echo>();
    expect(e).toMatchObject({ method: 'POST', url: '/submit', body: 'name=value' });
    expect(e.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(e.headers['x-custom']).toBe('kept');
    for (const method of ['PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const) {
      const m = await request(server, method, `${P}/web/proxy/item`, { body: method === 'DELETE' || method === 'OPTIONS' ? undefined : 'x' });
      expect(m.json<Echo>().method).toBe(method);
    }
    // OPTIONS on the pod itself is not a route (kube's 405).
    expect((await request(server, 'OPTIONS', `${P}/web`)).status).toBe(405);
    const head = await request(server, 'HEAD', `${P}/web/proxy/item`);
    expect(head.status).toBe(200);
    expect(head.headers['x-backend']).toBe('pod');
    expect(head.body).toBe('');

    // A token the API server consumed never reaches the pod; a user with get may read, not post.
    const g = await request(server, 'GET', `${P}/web/proxy/who`, { identity: 'anonymous', token: prober });
    expect(g.status).toBe(200);
    expect(g.json<Echo>().headers.authorization).toBeUndefined();
    const denied = await request(server, 'POST', `${P}/web/proxy/who`, { identity: 'anonymous', token: prober, body: 'x' });
    expect(denied.status).toBe(403);
    expect(denied.json<Obj>().message).toBe(
      `pods "web" is forbidden: User "system:serviceaccount:${NS}:prober" cannot create resource "pods/proxy" in API group "" in the namespace "${NS}"`,
    );

    const teapot = await request(server, 'GET', `${P}/web/proxy/teapot`);
    expect(teapot.status).toBe(418);
    expect(teapot.body).toBe('short and stout');
    expect(teapot.headers['content-type']).toBe('text/plain');
  });

  it('rewrites redirects and the links of HTML pages to the backend to go through the proxy, and keeps others', async () => {
    const rel = await request(server, 'GET', `${P}/web/proxy/redirect`);
    expect(rel.status).toBe(302);
    expect(rel.headers.location).toBe(`${P}/web/proxy/landing?from=redirect`);
    const abs = await request(server, 'GET', `${P}/web/proxy/redirect-absolute`);
    expect(abs.status).toBe(301);
    expect(abs.headers.location).toBe(`${P}/web/proxy/landing/`);
    const away = await request(server, 'GET', `${P}/web/proxy/redirect-elsewhere`);
    expect(away.headers.location).toBe('https://example.com/away');

    const expected =
      `<html><head><link rel="stylesheet" href="${P}/web/proxy/style.css"></head><body><a href="${P}/web/proxy/next?a=1&amp;b=2">next</a> ` +
      `<a href="rel">rel</a> <a href="${P}/web/proxy/abs">abs</a> <img src='https://cdn.example/x.png'> ` +
      `<script>document.write('<a href="/in-script">')</script> caf\u00e9</body></html>`;
    const page = await request(server, 'GET', `${P}/web/proxy/page`);
    expect(page.body).toBe(expected);
    expect(Number(page.headers['content-length'])).toBe(Buffer.byteLength(expected));
    // A gzip page is decoded, rewritten and encoded again.
    const zipped = await kubectl(server, ['get', '--raw', `${P}/web/proxy/page.gz`]);
    expect(zipped.stdout).toBe(expected);
    const raw = await request(server, 'GET', `${P}/web/proxy/page.gz`, { headers: { 'accept-encoding': 'gzip' } });
    expect(raw.headers['content-encoding']).toBe('gzip');
  });

  it('takes the port and scheme from the name', async () => {
    const second = await request(server, 'GET', `${P}/https:web:${podTlsPort}/proxy/secure`);
    expect(second.status).toBe(200);
    expect(second.headers['x-backend']).toBe('pod-tls');
    expect(second.json<Echo>().url).toBe('/secure');
    const byPort = await request(server, 'GET', `${P}/web:${podPort}/proxy/plain`);
    expect(byPort.headers['x-backend']).toBe('pod');
  });

  it('refuses what it cannot or must not reach, with kube Status answers', async () => {
    const status = async (path: string, method = 'GET') => {
      const r = await request(server, method, path);
      return { code: r.status, ...r.json<{ reason: string; message: string }>() };
    };
    expect(await status(`${P}/no-ip/proxy/`)).toMatchObject({ code: 400, reason: 'BadRequest', message: 'address not allowed' });
    expect(await status(`${P}/loopback/proxy/`)).toMatchObject({ code: 400, reason: 'BadRequest', message: 'address not allowed' });
    expect(await status(`${P}/a:b:c:d/proxy/`)).toMatchObject({ code: 400, message: 'invalid pod request "a:b:c:d"' });
    expect(await status(`${P}/ftp:web:21/proxy/`)).toMatchObject({ code: 400, message: 'invalid pod request "ftp:web:21"' });
    expect(await status(`${P}/missing/proxy/`)).toMatchObject({ code: 404, reason: 'NotFound', message: 'pods "missing" not found' });
    const down = await status(`${P}/gone-away/proxy/`);
    expect(down).toMatchObject({ code: 503, reason: 'ServiceUnavailable' });
    expect(down.message).toMatch(/^error trying to reach service: .*ECONNREFUSED/);
    expect(await status(`${P}/web:http/proxy/`)).toMatchObject({
      code: 503,
      message: 'error trying to reach service: dial tcp: lookup tcp/http: unknown port',
    });
  });

  it('tunnels a WebSocket to the pod', async () => {
    const url = new URL(`${P}/web/proxy/socket?q=1`, server.url.replace(/^https/, 'wss'));
    const ws = new WebSocket(url, { ca: server.caPem, cert: server.adminCertPem, key: server.adminKeyPem });
    const heard = await new Promise<string>((resolve, reject) => {
      ws.once('open', () => ws.send('hello'));
      ws.once('message', (m: Buffer) => resolve(m.toString()));
      ws.once('error', reject);
    });
    ws.close();
    expect(heard).toBe('pod heard hello at /socket?q=1');
  });
});

describe('services/proxy', () => {
  const S = `/api/v1/namespaces/${NS}/services`;
  it("reaches an endpoint of the service by the port's number, name or the unnamed port", async () => {
    const byNumber = await kubectl(server, ['get', '--raw', `${S}/site:80/proxy/index.html?a=1`]);
    expect(JSON.parse(byNumber.stdout)).toMatchObject({ method: 'GET', url: '/index.html?a=1' });
    const byName = await request(server, 'POST', `${S}/site:http/proxy/form`, { body: 'k=v' });
    expect(byName.json<Echo>()).toMatchObject({ method: 'POST', url: '/form', body: 'k=v' });
    expect(byName.json<Echo>().headers.host).toBe(`${ip}:${podPort}`);
    const tls = await request(server, 'GET', `${S}/https:site:443/proxy/secure`);
    expect(tls.headers['x-backend']).toBe('pod-tls');
    const unnamed = await request(server, 'GET', `${S}/plain/proxy/`);
    expect(unnamed.json<Echo>().url).toBe('/');
  });

  it('refuses what it cannot reach with kube Status answers', async () => {
    const status = async (path: string) => {
      const r = await request(server, 'GET', path);
      return { code: r.status, ...r.json<{ reason: string; message: string }>() };
    };
    expect(await status(`${S}/site:8080/proxy/`)).toMatchObject({
      code: 503,
      reason: 'ServiceUnavailable',
      message: 'no service port 8080 found for service "site"',
    });
    expect(await status(`${S}/site:nope/proxy/`)).toMatchObject({ code: 503, message: 'no endpoints available for service "site:nope"' });
    expect(await status(`${S}/empty/proxy/`)).toMatchObject({ code: 503, message: 'no endpoints available for service "empty"' });
    // An endpoint whose IP is not its pod's is never taken.
    expect(await status(`${S}/stranger/proxy/`)).toMatchObject({ code: 503, message: 'no endpoints available for service "stranger"' });
    expect(await status(`${S}/missing/proxy/`)).toMatchObject({ code: 404, reason: 'NotFound', message: 'endpoints "missing" not found' });
    expect(await status(`${S}/missing:80/proxy/`)).toMatchObject({ code: 404, message: 'services "missing" not found' });
    expect(await status(`${S}/a:b:c:d/proxy/`)).toMatchObject({ code: 400, message: 'invalid service request "a:b:c:d"' });
  });
});

describe('nodes/proxy', () => {
  it("reaches the node's kubelet with the API server's kubelet client certificate", async () => {
    const r = await kubectl(server, ['get', '--raw', '/api/v1/nodes/node-p/proxy/stats/summary?only_cpu_and_memory=true']);
    const e = JSON.parse(r.stdout) as Echo;
    expect(e.url).toBe('/stats/summary?only_cpu_and_memory=true');
    expect(e.clientCn).toBe('kubernetes-admin');
    expect(e.headers.authorization).toBeUndefined();
    // The kubelet's port said out loud is the kubelet too.
    const same = await request(server, 'GET', `/api/v1/nodes/node-p:${kubeletPort}/proxy/pods`);
    expect(same.headers['x-backend']).toBe('kubelet');
  });

  it('reaches another port of the node over plain HTTP, and refuses loopback nodes and malformed names', async () => {
    const r = await request(server, 'GET', `/api/v1/nodes/node-p:${otherPort}/proxy/metrics`);
    expect(r.headers['x-backend']).toBe('node-port');
    expect(r.json<Echo>().url).toBe('/metrics');
    const loop = await request(server, 'GET', '/api/v1/nodes/node-loop/proxy/');
    expect(loop.status).toBe(400);
    expect(loop.json<Obj>().message).toBe('address not allowed');
    const bad = await request(server, 'GET', '/api/v1/nodes/x:y:z:w/proxy/');
    expect(bad.json<Obj>()).toMatchObject({ code: 400, message: 'invalid node request "x:y:z:w"' });
    expect((await request(server, 'GET', '/api/v1/nodes/none/proxy/')).status).toBe(404);
  });

  it('lists the proxy subresources in discovery with their options kinds and verbs', async () => {
    const list = (await request(server, 'GET', '/api/v1')).json<{ resources: { name: string; kind: string; verbs: string[] }[] }>();
    expect(list.resources.find((r) => r.name === 'pods/proxy')).toMatchObject({
      kind: 'PodProxyOptions',
      verbs: ['create', 'delete', 'get', 'patch', 'update'],
    });
    expect(list.resources.find((r) => r.name === 'nodes/proxy')).toMatchObject({
      kind: 'NodeProxyOptions',
      verbs: ['create', 'delete', 'get', 'patch', 'update'],
    });
    expect(list.resources.find((r) => r.name === 'services/proxy')).toMatchObject({
      kind: 'ServiceProxyOptions',
      verbs: ['create', 'delete', 'get', 'patch', 'update'],
    });
  });
});
