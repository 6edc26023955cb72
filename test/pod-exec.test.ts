/**
 * `kubectl exec` and `kubectl attach` end to end, and port-forward's tunnel, against the pods'
 * `exec`, `attach` and `portforward` subresources, with a local HTTPS server standing in for the
 * kubelet of the pod's node. It speaks the WebSocket stream protocol kubectl tries first
 * (v5.channel.k8s.io: a byte of stream id, then the stream's bytes; the error stream ends with a
 * Status) and answers a SPDY port-forward upgrade with the switch and then echoes bytes.
 *
 * Checked: output, input and the exit code travel through the API server; the kubelet is
 * reached at the node's address of the type --kubelet-preferred-address-types names first; it gets the
 * options as its query (every command word, in order), the API server's kubelet client
 * certificate and never the client's credentials; GET needs `create` on the subresource too; a
 * request that does not ask to switch protocols, a missing pod, a pod no node runs and a request
 * without credentials are refused with a Status on the upgrade connection; a kubelet's refusal
 * is passed on; a kubelet that cannot be reached is a 500 naming the error; an open tunnel does
 * not hold up the server's clean shutdown; discovery lists the subresources with their options'
 * kinds.
 */
import { jest } from '@jest/globals';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { connect, type TLSSocket } from 'node:tls';
import * as k8s from '@kubernetes/client-node';
import { Writable } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { createPki } from '@app/pki';
import { getFreePort, kubectl, request, startServer, waitFor, type ServerHandle } from './support/server.js';
import { grantRole } from './support/rbac.helper.js';
import { kubeletClientFlags } from './support/kubelet.helper.js';

jest.setTimeout(180_000);

type Obj = Record<string, unknown>;
let server: ServerHandle;
let kubelet: Server;
let pkiDir: string;
/** What the stand-in kubelet was asked: path with query, client certificate name, headers. */
interface Seen {
  url: string;
  clientCn: string;
  headers: IncomingMessage['headers'];
}
const seen: Seen[] = [];

const STDOUT = 1;
const STDERR = 2;
const ERROR = 3;
const CLOSE = 255;

/**
 * How long the stand-in kubelet's commands take to start before their first output. The kubectl
 * versions here start reading the WebSocket before they have set up their streams (client-go
 * waits for the streams only from 1.34 on), and drop a message for a stream not set up yet:
 * output sent the moment the connection switches can be lost, and the error stream's Status with
 * it (kubectl then fails with "closed all streams"). A real exec first starts a process in the
 * container, which takes about as long.
 */
const PROCESS_START_MS = 250;

/** One session of the stand-in kubelet's exec: runs the few commands the tests use. */
function runSession(ws: WebSocket, url: URL): void {
  const command = url.searchParams.getAll('command');
  if (command[0] === 'cat') {
    // Output only after stdin ends, so it listens at once: nothing kubectl sends is missed.
    runCommand(ws, url);
    return;
  }
  setTimeout(() => runCommand(ws, url), PROCESS_START_MS);
}

function runCommand(ws: WebSocket, url: URL): void {
  const send = (stream: number, data: string): void => ws.send(Buffer.concat([Buffer.from([stream]), Buffer.from(data)]));
  const finish = (status: Obj): void => {
    send(ERROR, JSON.stringify({ metadata: {}, ...status }));
    ws.close(1000);
  };
  const command = url.searchParams.getAll('command');
  if (url.pathname.startsWith('/attach/')) {
    send(STDOUT, 'attached to app\n');
    finish({ status: 'Success' });
    return;
  }
  if (command[0] === 'echo') {
    send(STDOUT, `${command.slice(1).join(' ')}\n`);
    finish({ status: 'Success' });
    return;
  }
  if (command[0] === 'cat') {
    const input: Buffer[] = [];
    ws.on('message', (data: Buffer) => {
      if (data[0] === 0) input.push(data.subarray(1));
      if (data[0] === CLOSE && data[1] === 0) {
        send(STDOUT, Buffer.concat(input).toString());
        finish({ status: 'Success' });
      }
    });
    return;
  }
  if (command[0] === 'fail') {
    send(STDERR, 'failing on purpose\n');
    finish({
      status: 'Failure',
      message: 'command terminated with non-zero exit code: exit status 3',
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '3' }] },
    });
    return;
  }
  finish({ status: 'Failure', message: `unknown command ${command.join(' ')}` });
}

beforeAll(async () => {
  pkiDir = await mkdtemp(join(tmpdir(), 'kubelet-pki-'));
  await createPki({ outDir: pkiDir, hosts: ['127.0.0.1'] });
  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (protocols) => (protocols.has('v5.channel.k8s.io') ? 'v5.channel.k8s.io' : false),
  });
  // As a kubelet with client-certificate authentication: only clients the CA signed get in.
  kubelet = createServer(
    {
      cert: readFileSync(join(pkiDir, 'apiserver.crt')),
      key: readFileSync(join(pkiDir, 'apiserver.key')),
      ca: readFileSync(join(pkiDir, 'ca.crt')),
      requestCert: true,
      rejectUnauthorized: true,
    },
    (req, res) => {
      seen.push({ url: req.url ?? '', clientCn: String((req.socket as TLSSocket).getPeerCertificate().subject?.CN), headers: req.headers });
      res.writeHead(400, { 'content-type': 'text/plain' });
      res.end('the kubelet wants an upgrade');
    },
  );
  kubelet.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'https://kubelet');
    seen.push({ url: req.url ?? '', clientCn: String((req.socket as TLSSocket).getPeerCertificate().subject?.CN), headers: req.headers });
    if (url.pathname.includes('/refused/')) {
      socket.end('HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: 22\r\n\r\nrefused by the kubelet');
      return;
    }
    if (req.headers.upgrade?.toLowerCase() === 'spdy/3.1') {
      // Port-forward's switch; then an echo of what comes through.
      socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: portforward.k8s.io\r\n\r\n');
      socket.on('data', (d: Buffer) => socket.write(`echo:${d.toString()}`));
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => runSession(ws, url));
  });
  const kubeletPort = await getFreePort();
  await new Promise<void>((r) => kubelet.listen(kubeletPort, '127.0.0.1', r));

  // The exec sessions are audited (their stages and codes are checked below).
  writeFileSync(
    join(pkiDir, 'audit-policy.yaml'),
    'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n    resources: [{ group: "", resources: [pods/exec] }]\n  - level: None\n',
  );
  server = await startServer({
    args: [
      ...kubeletClientFlags(pkiDir),
      `--audit-policy-file=${join(pkiDir, 'audit-policy.yaml')}`,
      `--audit-log-path=${join(pkiDir, 'audit.log')}`,
      // The nodes' host names do not resolve: their InternalIP is the address to use.
      '--kubelet-preferred-address-types=InternalIP,Hostname',
    ],
  });
  const created = async (path: string, body: Obj): Promise<void> => {
    const r = await request(server, 'POST', path, { body });
    if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${r.body}`);
  };
  await created('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'connect' } });
  const pod = (name: string, spec: Obj) => created('/api/v1/namespaces/connect/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec });
  await pod('one', { nodeName: 'node-a', containers: [{ name: 'app', image: 'busybox' }] });
  await pod('refused', { nodeName: 'node-a', containers: [{ name: 'app', image: 'busybox' }] });
  await pod('unbound', { containers: [{ name: 'app', image: 'busybox' }] });
  await pod('down', { nodeName: 'node-down', containers: [{ name: 'app', image: 'busybox' }] });
  const node = (name: string, port: number) =>
    created('/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name },
      status: {
        addresses: [
          { type: 'Hostname', address: `${name}.invalid` },
          { type: 'InternalIP', address: '127.0.0.1' },
        ],
        daemonEndpoints: { kubeletEndpoint: { Port: port } },
      },
    });
  await node('node-a', kubeletPort);
  // A port nothing listens on.
  await node('node-down', await getFreePort());
  // A user who may read pods and get pods/exec, but not create it.
  await grantRole(server, {
    namespace: 'connect',
    name: 'peek',
    rules: [{ apiGroups: [''], resources: ['pods', 'pods/exec'], verbs: ['get', 'list'] }],
    subject: { kind: 'User', name: 'peeker' },
    probe: { path: '/api/v1/namespaces/connect/pods', headers: { 'Impersonate-User': 'peeker' } },
  });
});

afterAll(async () => {
  await server?.cleanup();
  await new Promise<void>((r) => (kubelet ? kubelet.close(() => r()) : r()));
  kubelet?.closeAllConnections();
  if (pkiDir) await rm(pkiDir, { recursive: true, force: true });
});

/** The answer to a raw HTTP/1.1 request on its own TLS connection: the head, then what follows. */
interface RawAnswer {
  status: number;
  head: string;
  body: string;
  socket: TLSSocket;
}

/** Sends one HTTP/1.1 request over TLS (with the admin's client certificate unless `anonymous`) and reads its answer. */
function rawRequest(method: string, path: string, headers: Record<string, string>, anonymous = false): Promise<RawAnswer> {
  return new Promise<RawAnswer>((resolve, reject) => {
    const socket = connect({
      host: '127.0.0.1',
      port: server.port,
      ca: server.caPem,
      ALPNProtocols: ['http/1.1'],
      ...(anonymous ? {} : { cert: server.adminCertPem, key: server.adminKeyPem }),
    });
    let buf = Buffer.alloc(0);
    let settled = false;
    const done = (): void => {
      if (settled) return;
      const text = buf.toString();
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = text.slice(0, end);
      const status = Number(head.split(' ')[1]);
      // A switch is answered at once; any other answer once its connection closes.
      if (status !== 101 && !socket.readableEnded) return;
      settled = true;
      resolve({ status, head, body: text.slice(end + 4), socket });
    };
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      done();
    });
    socket.on('end', done);
    socket.on('error', reject);
    const lines = [`${method} ${path} HTTP/1.1`, `Host: 127.0.0.1:${server.port}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  });
}

const SPDY = { Connection: 'Upgrade', Upgrade: 'SPDY/3.1', 'X-Stream-Protocol-Version': 'portforward.k8s.io', 'Content-Length': '0' };

/** The body of a chunked or plain HTTP/1.1 answer, parsed as JSON. */
function statusOf(a: RawAnswer): Obj {
  const start = a.body.indexOf('{');
  return JSON.parse(a.body.slice(start, a.body.lastIndexOf('}') + 1)) as Obj;
}

describe('kubectl exec and attach', () => {
  it('runs a command in the container through the kubelet of its node, with its output and the options as the kubelet query', async () => {
    seen.length = 0;
    const r = await kubectl(server, ['exec', '-n', 'connect', 'one', '--', 'echo', 'hello', 'from a pod']);
    expect(r.stdout).toBe('hello from a pod\n');
    const call = seen.find((s) => s.url.startsWith('/exec/'));
    expect(call?.url).toBe('/exec/connect/one/app?command=echo&command=hello&command=from+a+pod&stderr=1&stdout=1');
    // The API server's kubelet client certificate, never the kubectl user's credentials.
    expect(call?.clientCn).toBe('kubernetes-admin');
    expect(call?.headers.authorization).toBeUndefined();
    expect(call?.headers['sec-websocket-protocol']).toContain('v5.channel.k8s.io');
  });

  it('audits a session as kube-apiserver does: the switch (101) starts the answer, its end completes it', async () => {
    await kubectl(server, ['exec', '-n', 'connect', 'one', '--', 'echo', 'audited']);
    const execs = await waitFor('the exec session in the audit log', async () => {
      const events = readFileSync(join(pkiDir, 'audit.log'), 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as { auditID: string; stage: string; requestURI: string; responseStatus?: { code?: number } });
      const session = events.filter((e) => e.requestURI.includes('command=audited'));
      return session.some((e) => e.stage === 'ResponseComplete') ? session : undefined;
    });
    expect(execs.map((e) => `${e.stage} ${e.responseStatus?.code ?? ''}`.trim())).toEqual(['RequestReceived', 'ResponseStarted 101', 'ResponseComplete 101']);
    expect(new Set(execs.map((e) => e.auditID)).size).toBe(1);
  });

  it('passes stdin to the container and its exit code back to kubectl', async () => {
    const r = await kubectl(server, ['exec', '-i', '-n', 'connect', 'one', '--', 'cat'], { input: 'line one\nline two\n' });
    expect(r.stdout).toBe('line one\nline two\n');
    expect(seen.at(-1)?.url).toBe('/exec/connect/one/app?command=cat&stderr=1&stdin=1&stdout=1');

    const failed = await kubectl(server, ['exec', '-n', 'connect', 'one', '--', 'fail'], { expectFail: true });
    expect(failed.code).toBe(3);
    expect(failed.stderr).toContain('failing on purpose');
  });

  it('attaches to a running container', async () => {
    const status = await request(server, 'PUT', '/api/v1/namespaces/connect/pods/one/status', {
      body: { ...JSON.parse((await request(server, 'GET', '/api/v1/namespaces/connect/pods/one')).body), status: { phase: 'Running' } },
    });
    expect(status.status).toBe(200);
    const r = await kubectl(server, ['attach', '-n', 'connect', 'one']);
    expect(r.stdout).toContain('attached to app');
    expect(seen.at(-1)?.url).toBe('/attach/connect/one/app?stderr=1&stdout=1');
  });

  it("runs a command for @kubernetes/client-node's Exec", async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(server.kubeconfig);
    let out = '';
    const stdout = new Writable({
      write(chunk: Buffer, _enc, cb) {
        out += chunk.toString();
        cb();
      },
    });
    const status = await new Promise<k8s.V1Status>((resolve, reject) => {
      new k8s.Exec(kc).exec('connect', 'one', 'app', ['echo', 'from', 'client-node'], stdout, null, null, false, (s) => resolve(s)).catch(reject);
    });
    expect(status.status).toBe('Success');
    expect(out).toBe('from client-node\n');
  });

  it('needs create on pods/exec, for the WebSocket GET too', async () => {
    const before = seen.length;
    const r = await kubectl(server, ['exec', '-n', 'connect', 'one', '--as=peeker', '--', 'echo', 'no'], { expectFail: true });
    expect(r.stderr).toContain('User "peeker" cannot create resource "pods/exec" in API group "" in the namespace "connect"');
    expect(seen.length).toBe(before);
  });

  it('refuses before connecting: a missing pod, a pod no node runs, an unknown container, a plain request', async () => {
    const missing = await kubectl(server, ['exec', '-n', 'connect', 'nothere', '--', 'echo'], { expectFail: true });
    expect(missing.stderr).toContain('pods "nothere" not found');
    const unbound = await rawRequest('POST', '/api/v1/namespaces/connect/pods/unbound/exec?command=echo&stdout=true', SPDY);
    expect(unbound.status).toBe(400);
    expect(statusOf(unbound)).toMatchObject({ kind: 'Status', code: 400, reason: 'BadRequest', message: 'pod unbound does not have a host assigned' });
    const container = await rawRequest('POST', '/api/v1/namespaces/connect/pods/one/exec?command=echo&container=nope', SPDY);
    expect(statusOf(container)).toMatchObject({ code: 400, message: 'container nope is not valid for pod one' });
    const plain = await request(server, 'POST', '/api/v1/namespaces/connect/pods/one/exec?command=echo&stdout=true');
    expect(plain.status).toBe(400);
    expect(JSON.parse(plain.body)).toMatchObject({ kind: 'Status', reason: 'BadRequest', message: 'Upgrade request required' });
    const badToken = await rawRequest('POST', '/api/v1/namespaces/connect/pods/one/exec?command=echo', { ...SPDY, Authorization: 'Bearer not-a-token' }, true);
    expect(badToken.status).toBe(401);
    expect(statusOf(badToken)).toMatchObject({ kind: 'Status', code: 401, reason: 'Unauthorized' });
    // The refused connection is closed, not left open.
    expect(badToken.socket.readableEnded).toBe(true);
    const anonymous = await rawRequest('GET', '/api/v1/namespaces/connect/pods/one/exec?command=echo', { Connection: 'Upgrade', Upgrade: 'websocket' }, true);
    expect(statusOf(anonymous)).toMatchObject({
      code: 403,
      reason: 'Forbidden',
      message: expect.stringContaining('User "system:anonymous" cannot get resource "pods/exec"'),
    });
  });

  it('passes a kubelet refusal on, and names the error when no kubelet answers', async () => {
    const refused = await rawRequest('POST', '/api/v1/namespaces/connect/pods/refused/exec?command=echo&stdout=true', SPDY);
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('refused by the kubelet');
    const down = await rawRequest('POST', '/api/v1/namespaces/connect/pods/down/exec?command=echo&stdout=true', SPDY);
    expect(down.status).toBe(500);
    expect(statusOf(down)).toMatchObject({ kind: 'Status', code: 500 });
    expect(String(statusOf(down).message)).toMatch(/^error dialing backend: .*ECONNREFUSED/);
  });
});

describe('port-forward', () => {
  it('tunnels bytes both ways once the kubelet switches protocols', async () => {
    const a = await rawRequest('POST', '/api/v1/namespaces/connect/pods/one/portforward?ports=8080&ports=9090', SPDY);
    expect(a.status).toBe(101);
    expect(a.head).toMatch(/\r\nUpgrade: SPDY\/3\.1/i);
    expect(a.head).toMatch(/\r\nX-Stream-Protocol-Version: portforward\.k8s\.io/i);
    expect(seen.at(-1)?.url).toBe('/portForward/connect/one?port=8080%2C9090');
    const echoed = new Promise<string>((resolve) => a.socket.once('data', (d: Buffer) => resolve(d.toString())));
    a.socket.write('ping');
    expect(await echoed).toBe('echo:ping');
    a.socket.destroy();
  });

  it('does not hold up a clean shutdown', async () => {
    const a = await rawRequest('POST', '/api/v1/namespaces/connect/pods/one/portforward', SPDY);
    expect(a.status).toBe(101);
    const closed = new Promise<void>((resolve) => a.socket.once('close', () => resolve()));
    const exit = await server.stop('SIGTERM', 20_000);
    expect(exit).toEqual({ code: 0, signal: null });
    await closed;
    await server.start();
  });

  it('lists the connect subresources in discovery with their options kinds', async () => {
    const r = await request(server, 'GET', '/api/v1');
    const resources = (JSON.parse(r.body) as { resources: Array<{ name: string; kind: string; verbs: string[] }> }).resources;
    const byName = new Map(resources.map((x) => [x.name, x]));
    expect(byName.get('pods/exec')).toMatchObject({ kind: 'PodExecOptions', verbs: ['create', 'get'] });
    expect(byName.get('pods/attach')).toMatchObject({ kind: 'PodAttachOptions', verbs: ['create', 'get'] });
    expect(byName.get('pods/portforward')).toMatchObject({ kind: 'PodPortForwardOptions', verbs: ['create', 'get'] });
  });
});
