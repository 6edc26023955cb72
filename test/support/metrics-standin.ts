/**
 * A stand-in for metrics-server, for the aggregation layer's tests: an HTTPS server on a
 * non-loopback address of this machine (Endpoints refuse loopback) with a PKI of its own (its CA signs its serving certificate for
 * `metrics.kube-system.svc` and a client certificate the API server presents as its
 * --proxy-client-cert-file; only clients of that CA get in). It serves the discovery and the
 * OpenAPI v3 document of metrics.k8s.io/v1beta1, one PodMetricsList (or the items a test sets), a watch and a
 * WebSocket, and records what it was asked. `objects` are the Service, Endpoints and APIService that put it behind the API.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { WebSocketServer } from 'ws';
import { createPki } from '@app/pki';
import { request, type HttpTarget } from './http.helper.js';
import { outsideAddress, waitFor } from './net.helper.js';
import { getFreePort } from './server.js';

type Obj = Record<string, unknown>;

/** What the stand-in was asked. */
export interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  clientCn?: string;
}

export const RESOURCES = {
  kind: 'APIResourceList',
  apiVersion: 'v1',
  groupVersion: 'metrics.k8s.io/v1beta1',
  resources: [
    { name: 'nodes', singularName: '', namespaced: false, kind: 'NodeMetrics', verbs: ['get', 'list'] },
    { name: 'pods', singularName: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] },
  ],
};

export const OPENAPI_V3 = {
  openapi: '3.0.0',
  info: { title: 'metrics stand-in', version: 'v0' },
  paths: {
    '/apis/metrics.k8s.io/v1beta1/namespaces/{namespace}/pods/{name}': {
      get: {
        description: 'read the specified PodMetrics',
        operationId: 'readMetricsV1beta1NamespacedPodMetrics',
        responses: {
          '200': {
            description: 'OK',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/io.k8s.metrics.pkg.apis.metrics.v1beta1.PodMetrics' } } },
          },
        },
        'x-kubernetes-action': 'get',
        'x-kubernetes-group-version-kind': { group: 'metrics.k8s.io', version: 'v1beta1', kind: 'PodMetrics' },
      },
    },
  },
  components: {
    schemas: {
      'io.k8s.metrics.pkg.apis.metrics.v1beta1.PodMetrics': {
        description: 'PodMetrics is what the stand-in measured of one pod.',
        type: 'object',
        properties: {
          apiVersion: { description: 'The versioned schema of this object.', type: 'string' },
          kind: { description: 'The REST resource this object represents.', type: 'string' },
          timestamp: { description: 'When the usage was measured.', type: 'string', format: 'date-time' },
          window: { description: 'Over how long the usage was measured.', type: 'string' },
          containers: { description: 'The usage of each container.', type: 'array', items: { type: 'object' } },
        },
        'x-kubernetes-group-version-kind': [{ group: 'metrics.k8s.io', kind: 'PodMetrics', version: 'v1beta1' }],
      },
    },
  },
};

function serve(
  seen: Seen[],
  ns: string,
  podMetrics: () => Obj[] | undefined,
  answers: ReadonlyMap<string, unknown>,
  req: IncomingMessage,
  res: ServerResponse,
): void {
  const cert = (req.socket as TLSSocket).getPeerCertificate();
  seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, ...(cert?.subject ? { clientCn: String(cert.subject.CN) } : {}) });
  const json = (code: number, body: unknown) => {
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const path = (req.url ?? '').split('?')[0];
  if (path !== undefined && answers.has(path)) return json(200, answers.get(path));
  if (path === '/apis/metrics.k8s.io/v1beta1') return json(200, RESOURCES);
  // A watch: one event at once, then the stream stays open until the client goes.
  if (path === `/apis/metrics.k8s.io/v1beta1/namespaces/${ns}/pods` && new URL(req.url ?? '', 'https://x').searchParams.get('watch') === 'true') {
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    res.write(
      `${JSON.stringify({ type: 'ADDED', object: { kind: 'PodMetrics', apiVersion: 'metrics.k8s.io/v1beta1', metadata: { name: 'busy', namespace: ns } } })}\n`,
    );
    return;
  }
  if (path === '/openapi/v3')
    return json(200, { paths: { 'apis/metrics.k8s.io/v1beta1': { serverRelativeURL: '/openapi/v3/apis/metrics.k8s.io/v1beta1?hash=0A1B' } } });
  if (path === '/openapi/v3/apis/metrics.k8s.io/v1beta1') return json(200, OPENAPI_V3);
  if (path === `/apis/metrics.k8s.io/v1beta1/namespaces/${ns}/pods` && podMetrics() !== undefined) {
    return json(200, { kind: 'PodMetricsList', apiVersion: 'metrics.k8s.io/v1beta1', metadata: {}, items: podMetrics() });
  }
  if (path === `/apis/metrics.k8s.io/v1beta1/namespaces/${ns}/pods`) {
    return json(200, {
      kind: 'PodMetricsList',
      apiVersion: 'metrics.k8s.io/v1beta1',
      metadata: {},
      items: [
        {
          metadata: { name: 'busy', namespace: ns, creationTimestamp: new Date().toISOString() },
          timestamp: new Date().toISOString(),
          window: '30s',
          containers: [{ name: 'app', usage: { cpu: '123m', memory: '45Mi' } }],
        },
      ],
    });
  }
  json(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: `no ${path}` });
}

/** The running stand-in. */
export interface MetricsStandIn {
  /** Where it listens (`outsideAddress`). */
  ip: string;
  port: number;
  /** Its CA (PEM): the APIService's caBundle. */
  caPem: string;
  /** Its PKI directory: `admin.crt`/`admin.key` are the proxy client pair, `ca.crt` the CA. */
  pkiDir: string;
  seen: Seen[];
  /** The items of the PodMetricsList it serves from now on (undefined: the one `busy` pod). */
  setPodMetrics(items: Obj[] | undefined): void;
  /** Answers GETs of `path` (its query ignored) with `body` from now on: other metrics APIs. */
  answer(path: string, body: unknown): void;
  close(): Promise<void>;
}

/**
 * Starts the stand-in with its PKI under `dir`; it serves pod metrics of namespace `ns`, at
 * `outsideAddress(fallback)` (the caller releases that address).
 */
export async function startMetricsStandIn(dir: string, ns: string, fallback: string): Promise<MetricsStandIn> {
  const ip = outsideAddress(fallback);
  const pkiDir = join(dir, 'ext');
  await createPki({ outDir: pkiDir, hosts: ['metrics.kube-system.svc'] });
  const caPem = readFileSync(join(pkiDir, 'ca.crt'), 'utf8');
  const port = await getFreePort();
  const seen: Seen[] = [];
  let items: Obj[] | undefined;
  const answers = new Map<string, unknown>();
  const server: HttpsServer = createHttpsServer(
    {
      cert: readFileSync(join(pkiDir, 'apiserver.crt')),
      key: readFileSync(join(pkiDir, 'apiserver.key')),
      ca: caPem,
      requestCert: true,
      rejectUnauthorized: true,
    },
    (req, res) => serve(seen, ns, () => items, answers, req, res),
  );
  // A WebSocket answers each message with who sent it, as the X-Remote-User of its upgrade named.
  const wss = new WebSocketServer({ server });
  wss.on('connection', (ws, req) => ws.on('message', (m: Buffer) => ws.send(`${String(req.headers['x-remote-user'])} said ${m.toString()} at ${req.url}`)));
  await new Promise<void>((r) => server.listen(port, ip, r));
  return {
    ip,
    port,
    caPem,
    pkiDir,
    seen,
    setPodMetrics: (next) => {
      items = next;
    },
    answer: (path, body) => {
      answers.set(path, body);
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** An APIService of `version.group` served by `service`, verified with `caBundle`. */
export const apiService = (version: string, group: string, service: Obj, caBundle: string): Obj => ({
  apiVersion: 'apiregistration.k8s.io/v1',
  kind: 'APIService',
  metadata: { name: `${version}.${group}` },
  spec: { group, version, groupPriorityMinimum: 100, versionPriority: 100, service, caBundle: Buffer.from(caBundle).toString('base64') },
});

/** The paths and bodies that put the stand-in behind the API as kube-system/metrics and v1beta1.metrics.k8s.io. */
export function standInObjects(s: MetricsStandIn): Array<[string, Obj]> {
  return [
    [
      '/api/v1/namespaces/kube-system/services',
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'metrics' }, spec: { ports: [{ name: 'https', port: 443, targetPort: s.port }] } },
    ],
    [
      '/api/v1/namespaces/kube-system/endpoints',
      {
        apiVersion: 'v1',
        kind: 'Endpoints',
        metadata: { name: 'metrics' },
        subsets: [{ addresses: [{ ip: s.ip }], ports: [{ name: 'https', port: s.port }] }],
      },
    ],
    ['/apis/apiregistration.k8s.io/v1/apiservices', apiService('v1beta1', 'metrics.k8s.io', { namespace: 'kube-system', name: 'metrics', port: 443 }, s.caPem)],
  ];
}

/** The Available condition of an APIService, once it has one with `status`. */
export async function availableWhen(target: HttpTarget, name: string, status: string): Promise<Obj> {
  let cond: Obj | undefined;
  await waitFor(
    `APIService ${name} Available=${status}`,
    async () => {
      const r = await request(target, 'GET', `/apis/apiregistration.k8s.io/v1/apiservices/${name}`);
      const conds = ((r.json<Obj>().status as Obj | undefined)?.conditions ?? []) as Obj[];
      cond = conds.find((c) => c.type === 'Available');
      return cond?.status === status;
    },
    30_000,
  );
  return cond!;
}
