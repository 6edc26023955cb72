/**
 * `kubectl logs` end to end against the pods' `log` subresource: the container the request
 * means (one container by default, a name required among several, an unknown one refused), a
 * pod no node runs yet (an empty log), the options' decoding (400) and validation (422), a
 * missing pod (404), and a pod bound to a node whose kubelet is a local HTTPS server standing
 * in for one: the log is read from /containerLogs/<ns>/<pod>/<container> with the options, and a
 * followed log streams until kubectl goes (or the server stops: it does not hold up a clean
 * shutdown). The server presents --kubelet-client-certificate to
 * kubelets and checks theirs against --kubelet-certificate-authority (unless the request says
 * insecureSkipTLSVerifyBackend). A kubelet that cannot be reached is a 500 naming the request;
 * discovery lists pods/log.
 */
import { jest } from '@jest/globals';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import type { TLSSocket } from 'node:tls';
import { join } from 'node:path';
import { createPki } from '@app/pki';
import { createOrThrow, getFreePort, kubectl, request, request2, startServer, type ServerHandle } from './support/server.js';
import { kubeletClientFlags } from './support/kubelet.helper.js';

jest.setTimeout(180_000);

type Obj = Record<string, unknown>;
let server: ServerHandle;
let kubelet: Server;
let kubeletPort: number;
/** A kubelet whose serving certificate another CA signed. */
let stranger: Server;
let pkiDir: string;
let otherPkiDir: string;
/** The common names of the client certificates the kubelet was shown. */
const clientNames: string[] = [];
/** The requests the stand-in kubelet got: path with query. */
const seen: string[] = [];
/** Followed logs the kubelet is writing, until their client goes. */
const following = new Set<ServerResponse>();
let followClosed = 0;

beforeAll(async () => {
  pkiDir = await mkdtemp(join(tmpdir(), 'kubelet-pki-'));
  await createPki({ outDir: pkiDir, hosts: ['127.0.0.1'] });
  otherPkiDir = await mkdtemp(join(tmpdir(), 'kubelet-other-pki-'));
  await createPki({ outDir: otherPkiDir, hosts: ['127.0.0.1'] });
  const tlsOf = (dir: string) => ({ cert: readFileSync(join(dir, 'apiserver.crt')), key: readFileSync(join(dir, 'apiserver.key')) });
  // As a kubelet with client-certificate authentication: only clients the CA signed get in.
  kubelet = createServer({ ...tlsOf(pkiDir), ca: readFileSync(join(pkiDir, 'ca.crt')), requestCert: true, rejectUnauthorized: true }, (req, res) => {
    const url = req.url ?? '';
    seen.push(url);
    clientNames.push(String((req.socket as TLSSocket).getPeerCertificate().subject?.CN));
    const path = url.split('?')[0]!;
    if (path === '/containerLogs/logs/bound/app' && url.includes('limitBytes=7')) {
      // A kubelet slow to answer: longer than the request's own timeout.
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('slowly\n');
      }, 1500);
      return;
    }
    if (path === '/containerLogs/logs/bound/app') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      if (url.includes('follow=true')) {
        res.write('first line\n');
        following.add(res);
        const t = setInterval(() => res.write('tick\n'), 100);
        res.on('close', () => {
          clearInterval(t);
          following.delete(res);
          followClosed++;
        });
        return;
      }
      res.end('line one\nline two\n');
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end(`container not found ("${path}")`);
  });
  kubeletPort = await getFreePort();
  await new Promise<void>((r) => kubelet.listen(kubeletPort, '127.0.0.1', r));
  stranger = createServer(tlsOf(otherPkiDir), (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('from a kubelet of another CA\n');
  });
  const strangerPort = await getFreePort();
  await new Promise<void>((r) => stranger.listen(strangerPort, '127.0.0.1', r));

  // The admin client certificate of the kubelets' PKI stands in for the API server's kubelet client certificate.
  server = await startServer({
    args: [...kubeletClientFlags(pkiDir)],
  });
  const created = (path: string, body: Obj) => createOrThrow(server, path, body);
  await created('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'logs' } });
  const pod = (name: string, spec: Obj) => created('/api/v1/namespaces/logs/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec });
  await pod('one', { containers: [{ name: 'app', image: 'nginx' }] });
  await pod('two', {
    initContainers: [{ name: 'init', image: 'busybox' }],
    containers: [
      { name: 'a', image: 'nginx' },
      { name: 'b', image: 'nginx' },
    ],
  });
  await pod('bound', { nodeName: 'node-a', initContainers: [{ name: 'setup', image: 'busybox' }], containers: [{ name: 'app', image: 'nginx' }] });
  await pod('gone-node', { nodeName: 'node-missing', containers: [{ name: 'app', image: 'nginx' }] });
  await pod('down', { nodeName: 'node-down', containers: [{ name: 'app', image: 'nginx' }] });
  await pod('elsewhere', { nodeName: 'node-other', containers: [{ name: 'app', image: 'nginx' }] });
  const node = (name: string, port: number) =>
    created('/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name },
      status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: port } } },
    });
  await node('node-a', kubeletPort);
  // A port nothing listens on.
  await node('node-down', await getFreePort());
  await node('node-other', strangerPort);
});

afterAll(async () => {
  for (const res of following) res.destroy();
  await server?.cleanup();
  for (const srv of [kubelet, stranger]) await new Promise<void>((r) => (srv ? srv.close(() => r()) : r()));
  for (const dir of [pkiDir, otherPkiDir]) if (dir) await rm(dir, { recursive: true, force: true });
});

describe('kubectl logs', () => {
  it('shows nothing for a pod no node runs yet, and names the container a pod of several needs', async () => {
    const r = await kubectl(server, ['logs', '-n', 'logs', 'one']);
    expect(r.stdout).toBe('');
    const raw = await request(server, 'GET', '/api/v1/namespaces/logs/pods/one/log');
    expect(raw.status).toBe(200);
    expect(raw.headers['content-type']).toMatch(/^text\/plain/);
    expect(raw.body).toBe('');

    const several = await kubectl(server, ['logs', '-n', 'logs', 'two'], { expectFail: 'any' });
    const direct = await request(server, 'GET', '/api/v1/namespaces/logs/pods/two/log');
    expect(direct.status).toBe(400);
    expect(direct.json()).toMatchObject({
      kind: 'Status',
      reason: 'BadRequest',
      code: 400,
      message: 'a container name must be specified for pod two, choose one of: [init a b]',
    });
    // kubectl picks the default container itself (the first one) and asks for it by name.
    expect(several.code).toBe(0);
    expect(seen.some((u) => u.includes('/two/'))).toBe(false);

    // kubectl checks the container against the pod itself; the server does too.
    const wrong = await kubectl(server, ['logs', '-n', 'logs', 'two', '-c', 'nope'], { expectFail: true });
    expect(wrong.stderr).toContain('container nope is not valid for pod two');
    const wrongRaw = await request(server, 'GET', '/api/v1/namespaces/logs/pods/two/log?container=nope');
    expect(wrongRaw.status).toBe(400);
    expect(wrongRaw.json()).toMatchObject({ reason: 'BadRequest', message: 'container nope is not valid for pod two' });
    // An init container is one of the pod's.
    expect((await request(server, 'GET', '/api/v1/namespaces/logs/pods/two/log?container=init')).status).toBe(200);

    const missing = await kubectl(server, ['logs', '-n', 'logs', 'nothere'], { expectFail: true });
    expect(missing.stderr).toContain('pods "nothere" not found');
  });

  it('refuses options that do not decode (400) or are invalid (422)', async () => {
    const bad = await request(server, 'GET', '/api/v1/namespaces/logs/pods/one/log?tailLines=abc');
    expect(bad.status).toBe(400);
    expect(bad.json()).toMatchObject({ reason: 'BadRequest', message: 'strconv.ParseInt: parsing "abc": invalid syntax' });
    const badTime = await request(server, 'GET', '/api/v1/namespaces/logs/pods/one/log?sinceTime=yesterday');
    expect(badTime.status).toBe(400);

    const invalid = await request(server, 'GET', '/api/v1/namespaces/logs/pods/one/log?tailLines=-1&limitBytes=0');
    expect(invalid.status).toBe(422);
    expect(invalid.json()).toMatchObject({
      reason: 'Invalid',
      message:
        'PodLogOptions "one" is invalid: [tailLines: Invalid value: -1: must be greater than or equal to 0, limitBytes: Invalid value: 0: must be greater than 0]',
      details: { kind: 'PodLogOptions', name: 'one', causes: [{ field: 'tailLines' }, { field: 'limitBytes' }] },
    });
    const both = await kubectl(server, ['logs', '-n', 'logs', 'one', '--since=1h', '--since-time=2026-01-01T00:00:00Z'], { expectFail: true });
    expect(both.stderr).toMatch(/since-time and since cannot be used together|at most one of `sinceTime` or `sinceSeconds` may be specified/);
    const raw = await request(server, 'GET', '/api/v1/namespaces/logs/pods/one/log?sinceSeconds=10&sinceTime=2026-01-01T00:00:00Z');
    expect(raw.status).toBe(422);
    expect(raw.body).toContain('at most one of `sinceTime` or `sinceSeconds` may be specified');
  });

  it("reads a bound pod's log from its node's kubelet with the options, and follows it until kubectl goes", async () => {
    // Over HTTP/2, as kubectl asks.
    const direct = await request2(server, 'GET', '/api/v1/namespaces/logs/pods/bound/log?tailLines=2');
    expect(direct.status).toBe(200);
    expect(direct.body).toBe('line one\nline two\n');
    const r = await kubectl(server, ['logs', '-n', 'logs', 'bound', '--tail=2', '--timestamps']);
    expect(r.stdout).toBe('line one\nline two\n');
    expect(seen).toContain('/containerLogs/logs/bound/app?tailLines=2&timestamps=true');
    // The kubelet let the server in on its client certificate.
    expect(new Set(clientNames)).toEqual(new Set(['kubernetes-admin']));

    // -f: the stream stays open; kubectl prints each line as it comes.
    const child = spawn('/usr/bin/kubectl', ['--kubeconfig', server.kubeconfig, '--cache-dir', server.kubectlCacheDir, 'logs', '-f', '-n', 'logs', 'bound'], {
      env: { ...process.env, HOME: server.homeDir },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const deadline = Date.now() + 20_000;
    while ((out.match(/tick/g) ?? []).length < 3 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
    expect(out.startsWith('first line\ntick\n')).toBe(true);
    expect(following.size).toBe(1);
    const closedBefore = followClosed;
    child.kill('SIGTERM');
    // The server ends its request to the kubelet with the client's.
    while (followClosed === closedBefore && Date.now() < deadline + 10_000) await new Promise((res) => setTimeout(res, 50));
    expect(followClosed).toBe(closedBefore + 1);
  });

  it("ends a followed log with the server's clean shutdown instead of holding it up", async () => {
    const child = spawn('/usr/bin/kubectl', ['--kubeconfig', server.kubeconfig, '--cache-dir', server.kubectlCacheDir, 'logs', '-f', '-n', 'logs', 'bound'], {
      env: { ...process.env, HOME: server.homeDir },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const deadline = Date.now() + 20_000;
    while ((out.match(/tick/g) ?? []).length < 2 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
    expect(following.size).toBe(1);
    // Without ending the stream, the server's close would wait for it until main.ts gives up (exit 1).
    expect(await server.stop('SIGTERM', 20_000)).toEqual({ code: 0, signal: null });
    expect(await exited).not.toBeNull();
    await server.start();
  });

  it('is long-running: no request deadline while the kubelet takes its time', async () => {
    // Any other request asking for 1 s would be a 504 Timeout after it.
    const r = await request(server, 'GET', '/api/v1/namespaces/logs/pods/bound/log?limitBytes=7&timeout=1s');
    expect(r.status).toBe(200);
    expect(r.body).toBe('slowly\n');
  });

  it("passes the kubelet's refusal on, and names the request when no kubelet answers or the node is missing", async () => {
    const refused = await request(server, 'GET', '/api/v1/namespaces/logs/pods/bound/log?container=setup');
    expect(refused.status).toBe(404);
    expect(refused.json()).toMatchObject({ kind: 'Status', reason: 'NotFound', message: 'container not found ("/containerLogs/logs/bound/setup")' });
    const down = await kubectl(server, ['logs', '-n', 'logs', 'down'], { expectFail: true });
    expect(down.stderr).toMatch(
      /Error from server \(InternalError\): Internal error occurred: Get "https:\/\/127\.0\.0\.1:\d+\/containerLogs\/logs\/down\/app": connect ECONNREFUSED/,
    );
    const noNode = await request(server, 'GET', '/api/v1/namespaces/logs/pods/gone-node/log');
    expect(noNode.status).toBe(404);
    expect(noNode.json()).toMatchObject({ reason: 'NotFound', message: 'nodes "node-missing" not found' });
  });

  it("checks the kubelet's serving certificate against --kubelet-certificate-authority, unless the request says insecureSkipTLSVerifyBackend", async () => {
    const refused = await request(server, 'GET', '/api/v1/namespaces/logs/pods/elsewhere/log');
    expect(refused.status).toBe(500);
    expect(refused.json()).toMatchObject({ reason: 'InternalError' });
    expect((refused.json() as { message: string }).message).toMatch(
      /^Internal error occurred: Get "https:\/\/127\.0\.0\.1:\d+\/containerLogs\/logs\/elsewhere\/app": .*certificate/,
    );
    const r = await kubectl(server, ['logs', '-n', 'logs', 'elsewhere', '--insecure-skip-tls-verify-backend']);
    expect(r.stdout).toBe('from a kubelet of another CA\n');
  });

  it('is listed in discovery as a get of pods/log', async () => {
    const r = (await request(server, 'GET', '/api/v1')).json() as { resources: Obj[] };
    expect(r.resources.find((x) => x.name === 'pods/log')).toMatchObject({ name: 'pods/log', namespaced: true, kind: 'Pod', verbs: ['get'] });
  });
});
