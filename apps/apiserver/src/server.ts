/**
 * Assembles one node: PKI, storage, the NestJS application (modules per API group) on Fastify
 * over HTTPS with HTTP/2 and HTTP/1.1, and the request pipeline. The per-request hot path is
 * plain functions on the Fastify instance (DESIGN "Data flow of one request"):
 * route -> request info -> authentication -> handler -> codec.
 */
import type { Http2SecureServer } from 'node:http2';
import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import * as path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Errors, StatusError } from '@app/apimachinery';
import { PRIVILEGED_GROUP, authenticateClientCert } from '@app/auth';
import { AdmissionChain, NamespaceLifecycle } from '@app/admission';
import { GarbageCollector, LeaderElector, NamespaceController } from '@app/controllers';
import { GenericStore, KindRegistry, objectKey, type KindDeclaration, type UserInfo } from '@app/registry';
import { setContinueTokenKey, StorageError, type Storage } from '@app/storage';
import { randomBytes } from 'node:crypto';
import { openClusterNode, resolvePeerTls } from './cluster/cluster.node.js';
import { registerClusterRoutes } from './cluster/cluster.routes.js';
import { leaseLockFor } from './cluster/controller.election.js';
import { ensurePki, loadPki, writeKubeconfig, type PkiMaterial } from '../../../cluster/pki.js';
import { AppModule } from './app.module.js';
import type { ServerConfig } from './config/flags.js';
import { Discovery, aggregatedVersion } from './http/discovery.js';
import { discardRefusedBody } from './http/refused-body.js';
import { parseRequestInfo, type RequestInfo } from './http/request-info.js';
import { InflightLimiter, inflightKind } from './http/inflight.js';
import { DEFAULT_CONNECTION_LIMITS, guardConnections } from './http/connection.guard.js';
import { envInt } from './config/env.js';
import { handleClientError } from './http/client-error.js';
import { requestDeadlineMs, withDeadline } from './http/request-deadline.js';
import { ResourceHandler, type Query } from './http/resource.handler.js';
import { OpenApiService } from './http/openapi.js';
import { ApiMetrics } from './observability/metrics.js';
import { createMachinery, createWireCodecs } from './wiring/machinery.js';

/** The Kubernetes API level this server implements (kubectl front-ends pick their client by it). */
export const KUBE_VERSION = { major: '1', minor: '32', gitVersion: 'v1.32.0+kapi' };

/** Namespaces created at first start. */
export const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

/** A running node. */
export interface RunningServer {
  config: ServerConfig;
  url: string;
  kubeconfigPath: string;
  registry: KindRegistry;
  storage: Storage;
  fastify: FastifyInstance;
  /**
   * Calls `listener` once a storage failure (a failed write of the Raft log or of the store:
   * a full disk, an I/O error) stopped this node's Raft for good. The node then serves nothing
   * but failing health checks; the program exits so that a supervisor restarts it from its
   * durable state (main.ts), as etcd exits on a failed WAL write.
   */
  onFatal(listener: (e: Error) => void): void;
  close(): Promise<void>;
}

function firstValues(q: Record<string, unknown>): Query {
  const out: Query = {};
  for (const [k, v] of Object.entries(q)) out[k] = Array.isArray(v) ? String(v[0]) : v === undefined ? undefined : String(v);
  return out;
}

function sendStatus(reply: FastifyReply, err: StatusError): void {
  if (err.headers) for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  reply.code(err.code).header('Content-Type', 'application/json').send(JSON.stringify(err.toStatus()));
}

/** Maps any thrown value to a StatusError (Fastify's own errors included). */
function toStatusError(err: unknown): StatusError {
  if (err instanceof StatusError) return err;
  const e = err as { code?: string; statusCode?: number; message?: string };
  switch (e?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return Errors.tooLarge('the server has received a request that is too large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return Errors.unsupportedMediaType('', ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf']);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return Errors.badRequest(e.message ?? 'bad request');
  }
  if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return new StatusError(e.statusCode, 'BadRequest', e.message ?? 'bad request');
  }
  return Errors.internal(e?.message ?? String(err));
}

/** Body bytes read and discarded from a request refused for lack of credentials. */
const UNAUTHENTICATED_DISCARD_BYTES = 1 << 20;

/** Largest HTTP/1.1 request header block accepted (kube-apiserver's MaxHeaderBytes). */
const MAX_HEADER_BYTES = 1 << 20;

/** Starts a node from its configuration. Resolves once it serves and is ready. */
export async function startApiServer(cfg: ServerConfig): Promise<RunningServer> {
  const dataDir = path.resolve(cfg.dataDir);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const host = cfg.bindAddress === '0.0.0.0' || cfg.bindAddress === '::' ? '127.0.0.1' : cfg.bindAddress;
  const url = `https://${host.includes(':') ? `[${host}]` : host}:${cfg.securePort}`;

  let pki: PkiMaterial;
  if (cfg.pkiDir) {
    pki = await loadPki(cfg.pkiDir);
  } else {
    const own = path.join(dataDir, 'pki');
    await ensurePki(own, { hosts: [host, ...(cfg.advertiseAddress ? [cfg.advertiseAddress] : [])], server: url });
    pki = await loadPki(own);
  }
  // Continue tokens are signed with a key every node of a cluster derives from the shared
  // service-account key, so a token from one node (or from before a restart) is accepted by any.
  setContinueTokenKey(createHash('sha256').update('kapi continue-token key\0').update(pki.saKeyPem).digest());

  const metrics = new ApiMetrics();
  // Storage on Raft (docs/cluster.md): a single node is a Raft group of one.
  const cluster = await openClusterNode(cfg, dataDir, url, metrics.registry, await resolvePeerTls(cfg, pki));
  const storage = cluster.cs.storage;
  const registry = new KindRegistry();
  const machinery = createMachinery();
  const codecs = createWireCodecs();

  const nsDecl = (): KindDeclaration => registry.lookup('', 'v1', 'namespaces') as KindDeclaration;
  const admission = new AdmissionChain([
    new NamespaceLifecycle((name, fresh) => storage.get(objectKey(nsDecl(), '', name), fresh ? { mode: 'MostRecent' } : { mode: 'Any' })),
  ]);
  const stores = new Map<KindDeclaration, GenericStore>();
  const storeFor = (decl: KindDeclaration): GenericStore => {
    let s = stores.get(decl);
    if (!s) {
      s = new GenericStore(decl, { storage, machinery, admission });
      stores.set(decl, s);
    }
    return s;
  };

  const adapter = new FastifyAdapter({
    http2: true,
    https: {
      allowHTTP1: true,
      key: pki.servingKeyPem,
      cert: pki.servingCertPem,
      ca: [pki.caPem],
      requestCert: true,
      rejectUnauthorized: false,
      minVersion: 'TLSv1.2',
      // A client that connects and never completes the handshake is cut off (see guardConnections).
      handshakeTimeout: DEFAULT_CONNECTION_LIMITS.headerTimeoutMs,
      // Streams one HTTP/2 connection may have open at once: Go's default, which kube-apiserver
      // keeps (--http2-max-streams-per-connection); Node's would be unlimited.
      settings: { maxConcurrentStreams: 250 },
    },
    bodyLimit: cfg.maxRequestBodyBytes,
    logger: false,
    return503OnClosing: true,
    // Requests Node's HTTP/1.1 parser refuses (headers over 1 MiB, garbage) get a Status too.
    clientErrorHandler: handleClientError,
    // Fastify's own HTTP/2 session timer (72 s without frames) would send GOAWAY to a session
    // whose only stream is a quiet watch; guardConnections closes sessions with no stream instead.
    http2SessionTimeout: 0,
    // Watches are long-lived; the watch handler bounds them itself.
    requestTimeout: 0,
  } as never);
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot({ registry }), adapter, {
    logger: ['error', 'warn'],
    abortOnError: false,
  });
  // Nest installs its own hooks at init; ours go on afterwards so they take precedence.
  await app.init();
  const fastify = app.getHttpAdapter().getInstance() as unknown as FastifyInstance;
  // Request headers over HTTP/1.1 up to kube-apiserver's 1 MiB (Go's MaxHeaderBytes) instead
  // of Node's 16 KiB, so a long label selector in the URL works as it does there. The parser of
  // a connection that did not negotiate HTTP/2 reads its limit from here. HTTP/2 keeps 64 KiB:
  // nghttp2 refuses a longer header field (the URL is one) whatever the settings say, with a
  // COMPRESSION_ERROR that ends the whole connection; announcing 64 KiB lets clients (Go's
  // too) refuse such a request themselves, with a clear error.
  (fastify.server as unknown as { maxHeaderSize?: number }).maxHeaderSize = MAX_HEADER_BYTES;
  guardConnections(fastify.server as unknown as Http2SecureServer, {
    headerTimeoutMs: envInt('KAPI_READ_HEADER_TIMEOUT_MS') ?? DEFAULT_CONNECTION_LIMITS.headerTimeoutMs,
    idleTimeoutMs: envInt('KAPI_IDLE_TIMEOUT_MS') ?? DEFAULT_CONNECTION_LIMITS.idleTimeoutMs,
    bodyTimeoutMs: envInt('KAPI_BODY_TIMEOUT_MS') ?? cfg.requestTimeoutMs,
  });

  const discovery = new Discovery(registry, () => `${host}:${cfg.securePort}`);
  const openapi = new OpenApiService(registry);
  const handler = new ResourceHandler({
    registry,
    storeFor,
    codecs,
    maxWatchSeconds: cfg.minRequestTimeoutSeconds,
    bookmarkIntervalMs: 60_000,
  });
  let ready = false;
  const inflight = new InflightLimiter({ readOnly: cfg.maxRequestsInflight, mutating: cfg.maxMutatingRequestsInflight });
  metrics.inflightSource = (kind) => inflight.inFlight(kind);

  // Our routes live in their own encapsulated scope: its body parser, error handler and hooks
  // apply to them only, and do not fight Nest's defaults on the root instance.
  await fastify.register(async (scope: FastifyInstance) => {
    // Every body arrives as a Buffer; the handlers decode by Content-Type.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: cfg.maxRequestBodyBytes }, (_req, body, done) => done(null, body));

    scope.setErrorHandler((err, req, reply) => {
      // A body without a declared length that grew past the limit (a declared one is refused
      // in the onRequest hook below): the rest of it is still coming.
      if ((err as { code?: string })?.code === 'FST_ERR_CTP_BODY_TOO_LARGE' && !reply.raw.headersSent) {
        discardRefusedBody(req.raw, reply.raw, { capBytes: 0 });
      }
      const se = toStatusError(err);
      if (se.code >= 500) process.stderr.write(`internal error: ${(err as Error)?.stack ?? String(err)}\n`);
      sendStatus(reply, se);
    });
    scope.addHook('onResponse', async (req, reply) => {
      const info = (req as FastifyRequest & { kinfo?: RequestInfo }).kinfo;
      if (!info?.isResourceRequest) return;
      const labels = {
        verb: String(info.verb).toUpperCase(),
        group: info.apiGroup,
        version: info.apiVersion,
        resource: info.resource,
        subresource: info.subresource,
        scope: info.namespace ? 'namespace' : info.name ? 'cluster' : 'cluster',
      };
      metrics.requests.inc({ ...labels, code: String(reply.statusCode) });
      metrics.duration.observe(labels, reply.elapsedTime / 1000);
    });

    const authenticate = (req: FastifyRequest): UserInfo | undefined => {
      const raw = req.raw as unknown as { socket?: TLSSocket; stream?: { session?: { socket?: TLSSocket } } };
      const socket = raw.stream?.session?.socket ?? raw.socket;
      return authenticateClientCert(socket);
    };

    // The onRequest hook below authenticates every request that needs a user and keeps the
    // result on it; the handlers' calls read it back.
    const requireUser = (req: FastifyRequest): UserInfo => {
      const r = req as FastifyRequest & { kuser?: UserInfo };
      if (r.kuser) return r.kuser;
      const u = authenticate(req);
      if (!u) throw Errors.unauthorized();
      r.kuser = u;
      return u;
    };

    // Credentials are checked as soon as the headers are in, before a body is read: a client
    // without them cannot make the server read (and parse) a body of up to
    // --max-request-body-bytes, or hold a connection open by sending one slowly. Only the
    // endpoints open to everyone below are let through.
    const PUBLIC_PATHS = new Set(['/version', '/healthz', '/livez', '/readyz']);
    // A request refused here has its body read and thrown away (up to a cap) rather than the
    // connection closed under a client that is still sending it (http/refused-body.ts).
    scope.addHook('onRequest', async (req, reply) => {
      try {
        if (!PUBLIC_PATHS.has(req.url.split('?')[0]!)) requireUser(req);
      } catch (e) {
        discardRefusedBody(req.raw, reply.raw, { capBytes: UNAUTHENTICATED_DISCARD_BYTES });
        throw e;
      }
      // Fastify would answer a declared length over the limit with `Connection: close`.
      if (Number(req.headers['content-length']) > cfg.maxRequestBodyBytes) {
        discardRefusedBody(req.raw, reply.raw, { capBytes: 4 * cfg.maxRequestBodyBytes });
        throw Errors.tooLarge();
      }
    });

    const sendJson = (reply: FastifyReply, body: string, contentType = 'application/json'): void => {
      reply.code(200).header('Content-Type', contentType).send(Buffer.from(body)); // a Buffer keeps Fastify from rewriting media-type parameters
    };

    // --- non-resource endpoints ---
    // /version and the health checks answer without credentials (Kubernetes'
    // system:public-info-viewer); everything else calls requireUser.
    scope.get('/version', async (req, reply) => {
      void req;
      sendJson(
        reply,
        JSON.stringify({
          ...KUBE_VERSION,
          gitCommit: '0000000000000000000000000000000000000000',
          gitTreeState: 'clean',
          buildDate: '2026-01-01T00:00:00Z',
          goVersion: `node${process.versions.node}`,
          compiler: 'tsc',
          platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
        }),
      );
    });
    const health = (name: string, ok: () => boolean) => async (req: FastifyRequest, reply: FastifyReply) => {
      const q = firstValues(req.query as Record<string, unknown>);
      const raft = cluster.raftCheck();
      const good = ok() && (name !== 'readyz' || raft.ok);
      let body = good ? 'ok' : `[-]${name} failed: reason withheld\n${name} check failed`;
      if (q.verbose !== undefined) {
        const checks = ['ping', 'log', 'etcd', 'poststarthook/start-apiserver'].map((c) => `[+]${c} ok`);
        if (name === 'readyz') checks.push(ok() ? '[+]storage-ready ok' : '[-]storage-ready failed: reason withheld');
        if (name === 'readyz') checks.push(raft.ok ? `[+]raft ok: ${raft.detail}` : `[-]raft failed: ${raft.detail}`);
        body = `${checks.join('\n')}\n${name} check ${good ? 'passed' : 'failed'}\n`;
      }
      reply.code(good ? 200 : 500).header('Content-Type', 'text/plain; charset=utf-8').send(body);
    };
    scope.get('/healthz', health('healthz', () => true));
    scope.get('/livez', health('livez', () => cluster.failure() === undefined));
    scope.get('/readyz', health('readyz', () => ready));
    scope.get('/metrics', async (req, reply) => {
      requireUser(req);
      reply.code(200).header('Content-Type', metrics.registry.contentType).send(await metrics.registry.metrics());
    });
    const serveOpenApi = async (req: FastifyRequest, reply: FastifyReply) => {
      requireUser(req);
      const q = firstValues(req.query as Record<string, unknown>);
      const res = openapi.handle(req.url.split('?')[0], q.hash, req.headers['if-none-match'] as string | undefined, req.headers.accept);
      if (res.status === 404) throw new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});
      if (res.status === 406) throw Errors.notAcceptable(['application/json']);
      reply.code(res.status).headers(res.headers).send(res.body);
    };
    registerClusterRoutes(scope, () => cluster.membership, requireUser);
    scope.get('/openapi/v2', serveOpenApi);
    scope.get('/openapi/v3', serveOpenApi);
    scope.get('/openapi/v3/*', serveOpenApi);

    // --- API paths ---
    const api = async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
      const urlPath = req.url.split('?')[0];
      const rawQuery = req.query as Record<string, unknown>;
      const query = firstValues(rawQuery);
      const info = parseRequestInfo(req.method, urlPath, query);
      (req as FastifyRequest & { kinfo?: RequestInfo }).kinfo = info;
      const user = requireUser(req);
      if (!ready && info.isResourceRequest) throw Errors.serviceUnavailable('the server is starting up');
      const kind = inflightKind(req.method, info, user);
      const release = kind === undefined ? undefined : inflight.tryAcquire(kind);
      if (kind !== undefined && release === undefined) {
        metrics.dropped.inc({ request_kind: kind });
        throw Errors.tooManyRequests('Too many requests, please try again later.');
      }
      try {
        // Watches are long-running: their length is bounded by timeoutSeconds and
        // --min-request-timeout instead (watch.handler.ts).
        if (info.verb === 'watch') await serveApi(req, reply, info, query, user, rawQuery);
        else {
          // The deadline counts from the request's arrival, as kube's does: reading the body
          // took part of it (Fastify's elapsedTime starts at onRequest).
          const deadline = requestDeadlineMs(query.timeout, cfg.requestTimeoutMs) - reply.elapsedTime;
          await withDeadline(serveApi(req, reply, info, query, user, rawQuery), deadline, () => !reply.sent && !reply.raw.headersSent);
        }
      } finally {
        release?.();
      }
    };
    const serveApi = async (req: FastifyRequest, reply: FastifyReply, info: RequestInfo, query: Query, user: UserInfo, rawQuery: Record<string, unknown>): Promise<void> => {
      if (info.isResourceRequest) {
        await handler.handle(req, reply, info, query, user, rawQuery);
        return;
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') throw Errors.methodNotAllowed(req.method, { group: '', resource: '' });
      const agg = aggregatedVersion(req.headers.accept);
      const parts = info.parts;
      let doc;
      if (parts.length === 1 && parts[0] === 'api') doc = agg ? discovery.aggregated('api', agg) : discovery.apiVersions();
      else if (parts.length === 1 && parts[0] === 'apis') doc = agg ? discovery.aggregated('apis', agg) : discovery.apiGroupList();
      else if (parts[0] === 'api' && parts.length === 2) doc = discovery.apiResourceList('', parts[1]);
      else if (parts[0] === 'apis' && parts.length === 2) doc = discovery.apiGroup(parts[1]);
      else if (parts[0] === 'apis' && parts.length === 3) doc = discovery.apiResourceList(parts[1], parts[2]);
      if (!doc) throw new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});
      if (doc.etag) reply.header('ETag', doc.etag);
      if (doc.etag && req.headers['if-none-match'] === doc.etag) {
        reply.code(304).send();
        return;
      }
      sendJson(reply, doc.body, doc.contentType);
    };
    for (const p of ['/api', '/api/*', '/apis', '/apis/*']) {
      scope.route({ method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'], url: p, handler: api });
    }

    // Everything else: a 404 Status (Nest's own not-found handler answers in its format).
    scope.route({
      method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
      url: '/*',
      handler: async (_req, reply) => sendStatus(reply, new StatusError(404, 'NotFound', 'the server could not find the requested resource', {})),
    });
  });

  await app.listen(cfg.securePort, cfg.bindAddress);

  // First start: the system namespaces. In a cluster this needs a quorum: retry (any node may
  // create them; the others get 409) until the peers are up.
  const nsStore = storeFor(nsDecl());
  for (const name of SYSTEM_NAMESPACES) {
    for (let attempt = 0; ; attempt++) {
      try {
        const existing = await storage.get(objectKey(nsDecl(), '', name), { mode: 'MostRecent' });
        if (existing) break;
        await nsStore.create('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, {
          ctx: { user: { username: 'system:apiserver', groups: [PRIVILEGED_GROUP] }, dryRun: false, warnings: [], now: () => new Date() },
          fieldValidation: 'Strict',
        });
        break;
      } catch (e) {
        if (e instanceof StatusError && e.code === 409) break;
        const unavailable = (e instanceof StatusError && (e.code === 503 || e.code === 504)) || (e instanceof StorageError && e.code === 'Unavailable');
        if (!unavailable) throw e;
        if (attempt % 10 === 0) process.stderr.write(`waiting for a Raft quorum to create namespace ${name}: ${(e as Error).message}\n`);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  const kubeconfigPath = path.join(dataDir, 'admin.kubeconfig');
  await writeKubeconfig(kubeconfigPath, { server: url, caPem: pki.caPem, certPem: pki.adminCertPem, keyPem: pki.adminKeyPem });
  // Built-in controllers run on one node at a time: the holder of the kube-controller-manager
  // Lease in kube-system (docs/cluster.md "Controller election"), as kube-controller-manager.
  let nsController: NamespaceController | undefined;
  let garbageCollector: GarbageCollector | undefined;
  const leaseDecl = registry.lookup('coordination.k8s.io', 'v1', 'leases') as KindDeclaration;
  const elector = new LeaderElector({
    lock: leaseLockFor(storeFor(leaseDecl), 'kube-system', 'kube-controller-manager'),
    identity: `${cfg.name}_${randomBytes(8).toString('hex')}`,
    leaseDurationMs: Number(process.env.KAPI_LEASE_DURATION_MS ?? 15_000),
    renewDeadlineMs: Number(process.env.KAPI_LEASE_RENEW_DEADLINE_MS ?? 10_000),
    retryPeriodMs: Number(process.env.KAPI_LEASE_RETRY_PERIOD_MS ?? 2_000),
    onStartedLeading: () => {
      process.stderr.write(`${cfg.name}: acquired lease kube-system/kube-controller-manager, starting controllers\n`);
      nsController = new NamespaceController({ registry, storage, storeFor });
      nsController.start();
      garbageCollector = new GarbageCollector({ registry, storage, storeFor });
      garbageCollector.start().catch((e) => process.stderr.write(`garbage collector failed to start: ${(e as Error).message}\n`));
    },
    onStoppedLeading: () => {
      process.stderr.write(`${cfg.name}: lost lease kube-system/kube-controller-manager, stopping controllers\n`);
      nsController?.stop();
      garbageCollector?.stop();
      nsController = undefined;
      garbageCollector = undefined;
    },
  });
  metrics.garbageCollectorSource = () => garbageCollector;
  elector.start();
  cluster.startBackground();
  ready = true;

  let closing: Promise<void> | undefined;
  return {
    config: cfg,
    url,
    kubeconfigPath,
    registry,
    storage,
    fastify,
    onFatal: (listener) => cluster.cs.node.onFatal(listener),
    close: () => {
      closing ??= (async () => {
        ready = false;
        await elector.stop();
        await app.close();
        await cluster.close();
      })();
      return closing;
    },
  };
}
