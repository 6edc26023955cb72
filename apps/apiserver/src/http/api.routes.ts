/**
 * The routes of a node, registered once at start in their own encapsulated Fastify scope (its
 * body parser, error handler and hooks apply to these routes only and do not fight Nest's
 * defaults on the root instance). The request pipeline (pipeline/pipeline.ts) runs as the
 * scope's onRequest hook; the routes read what it left on the request.
 */
import { Inject, Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Errors, StatusError } from '@app/apimachinery';
import { AUTHENTICATOR, type Authenticator } from '@app/auth';
import { AUTHORIZER, type Authorizer } from '@app/authz';
import { KindRegistry } from '@app/registry';
import { PostStartHooks } from '../bootstrap/post-start-hook.js';
import { registerClusterRoutes } from '../cluster/cluster.routes.js';
import type { ServerConfig } from '../config/flags.js';
import { ApiMetrics } from '../observability/metrics.js';
import { AnonymousAccess } from '../pipeline/anonymous.method.js';
import { AUDIT_SINK, type AuditSink } from '../pipeline/audit.port.js';
import { FLOW_CONTROL, type FlowControl } from '../pipeline/flow-control.port.js';
import { createPipeline } from '../pipeline/pipeline.js';
import { stateOf, type RequestState } from '../pipeline/request-state.js';
import { registerHealthRoutes } from '../health/health.routes.js';
import { NodeHealth } from '../health/node-health.js';
import type { StorageBackend } from '../storage/storage.backend.js';
import { SERVER_CONFIG, STORAGE_BACKEND, SERVER_ENDPOINT, STORES, WIRE_CODECS, type ServerEndpoint, type StoreFactory } from '../tokens.js';
import { AGGREGATOR, type Aggregator } from './aggregator.port.js';
import type { WireCodecs } from './codec.js';
import { Discovery, aggregatedVersion } from './discovery.js';
import { OpenApiService } from './openapi.js';
import { discardRefusedBody } from './refused-body.js';
import { withDeadline } from './request-deadline.js';
import { ResourceHandler } from './resource.handler.js';
import { deprecatedApiLabels } from './deprecation.js';
import { isLongRunning } from './request-info.js';
import { notFoundError, sendDocument, sendStatus, toStatusError } from './status.js';
import { serveVersion } from './version.js';

/** Paths a request without credentials may reach by default (`--anonymous-auth`, pipeline/anonymous.method.ts). */
export { isPublicInfoPath } from '../pipeline/anonymous.method.js';

/** The pipeline's ports, injected together. */
@Injectable()
export class PipelinePorts {
  constructor(
    @Inject(AUTHENTICATOR) readonly authenticator: Authenticator,
    @Inject(AUTHORIZER) readonly authorizer: Authorizer,
    @Inject(AUDIT_SINK) readonly audit: AuditSink,
    @Inject(FLOW_CONTROL) readonly flowControl: FlowControl,
    readonly anonymous: AnonymousAccess,
  ) {}
}

/**
 * The JSON form of a request or response body for an audit event: JSON (patches and tables
 * included), YAML or protobuf by media type; undefined for anything else.
 */
function decodeForAudit(codecs: WireCodecs, contentType: string | undefined, body: Buffer | string): unknown {
  const type = String(contentType ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  const text = () => (typeof body === 'string' ? body : body.toString('utf8'));
  if (type === 'application/json' || type.endsWith('+json')) return JSON.parse(text()) as unknown;
  if (type === 'application/yaml' || type.endsWith('+yaml')) return codecs.parseYaml(text()).value;
  if (type === 'application/vnd.kubernetes.protobuf') {
    const d = codecs.decodeProtobuf(typeof body === 'string' ? Buffer.from(body, 'latin1') : body);
    return { apiVersion: d.apiVersion, kind: d.kind, ...d.object };
  }
  return undefined;
}

/** Registers the pipeline and every route; knows whether the node serves resource requests yet. */
@Injectable()
export class ApiRoutes implements BeforeApplicationShutdown {
  private stopping = false;
  private handler?: ResourceHandler;

  constructor(
    @Inject(SERVER_CONFIG) private readonly cfg: ServerConfig,
    @Inject(SERVER_ENDPOINT) private readonly endpoint: ServerEndpoint,
    @Inject(STORAGE_BACKEND) private readonly backend: StorageBackend,
    @Inject(STORES) private readonly stores: StoreFactory,
    @Inject(WIRE_CODECS) private readonly codecs: WireCodecs,
    private readonly registry: KindRegistry,
    private readonly metrics: ApiMetrics,
    private readonly hooks: PostStartHooks,
    private readonly ports: PipelinePorts,
    private readonly health: NodeHealth,
    @Inject(AGGREGATOR) private readonly aggregator: Aggregator,
  ) {}

  /** Ready for resource requests: started (every post-start hook done) and not stopping. */
  ready(): boolean {
    return !this.stopping && this.hooks.allDone();
  }

  beforeApplicationShutdown(): void {
    this.stopping = true;
    this.handler?.endStreams();
  }

  /** Registers everything on `fastify` (once, before it listens). */
  async register(fastify: FastifyInstance): Promise<void> {
    const { cfg, metrics } = this;
    const pipeline = createPipeline({
      ...this.ports,
      anonymousAllowed: this.ports.anonymous.allowed,
      requestTimeoutMs: cfg.requestTimeoutMs,
      maxRequestBodyBytes: cfg.maxRequestBodyBytes,
      onDropped: (kind) => metrics.dropped.inc({ request_kind: kind }),
      decodeAuditBody: (type, body) => decodeForAudit(this.codecs, type, body),
    });
    metrics.inflightSource = (kind) => this.ports.flowControl.inFlight(kind);
    const discovery = new Discovery(this.registry, () => `${this.endpoint.host}:${cfg.securePort}`, this.aggregator);
    const aggregator = this.aggregator;
    const openapi = new OpenApiService(this.registry, this.aggregator);
    const handler = (this.handler = new ResourceHandler({
      registry: this.registry,
      storeFor: (d) => this.stores.storeFor(d),
      codecs: this.codecs,
      maxWatchSeconds: cfg.minRequestTimeoutSeconds,
      bookmarkIntervalMs: 60_000,
      onDeprecated: (decl, sub) => metrics.deprecatedApis.set(deprecatedApiLabels(decl, sub), 1),
      authorizer: this.ports.authorizer,
    }));

    await fastify.register(async (scope: FastifyInstance) => {
      // Every body arrives as a Buffer; the handlers decode by Content-Type.
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: cfg.maxRequestBodyBytes }, (_req, body, done) => done(null, body));
      // Panic recovery, the pipeline's outermost stage.
      scope.setErrorHandler((err, req, reply) => {
        // A body without a declared length that grew past the limit (a declared one is refused
        // by the pipeline's body-limit stage): the rest of it is still coming.
        if ((err as { code?: string })?.code === 'FST_ERR_CTP_BODY_TOO_LARGE' && !reply.raw.headersSent) {
          discardRefusedBody(req.raw, reply.raw, { capBytes: 0 });
        }
        const se = toStatusError(err);
        const audit = stateOf(req)?.audit;
        // An exception that is no Status and no known Fastify error is a bug: kube's Panic stage.
        if (audit && se.code === 500 && !(err instanceof StatusError) && !(err as { code?: string })?.code?.startsWith('FST_')) audit.panic();
        else audit?.statusIs({ status: 'Failure', reason: se.reason, code: se.code });
        if (se.code >= 500) process.stderr.write(`internal error: ${(err as Error)?.stack ?? String(err)}\n`);
        sendStatus(reply, se);
      });
      // A create or update body without a Content-Type is JSON, the first media type served, as
      // kube-apiserver's input negotiation takes it. kubectl create --raw -f sends one so over
      // HTTP/2, without a Content-Length either, which Fastify would otherwise take for no body.
      scope.addHook('onRequest', (req, _reply, done) => {
        if ((req.method === 'POST' || req.method === 'PUT') && req.headers['content-type'] === undefined) req.headers['content-type'] = 'application/json';
        done();
      });
      scope.addHook('onRequest', pipeline);
      if (this.ports.audit.enabled) {
        // The bodies the audit policy may record (pipeline/audit.record.ts decodes them when an
        // event is written, and only at the levels that keep them).
        scope.addHook('preHandler', async (req) => {
          const rec = stateOf(req)?.audit;
          if (rec && Buffer.isBuffer(req.body)) rec.requestBodyIs(req.headers['content-type'], req.body, req.method === 'PATCH');
        });
        scope.addHook('onSend', async (req, reply, payload) => {
          const s = stateOf(req);
          const rec = s?.audit;
          if (!rec || !(typeof payload === 'string' || Buffer.isBuffer(payload))) return payload;
          rec.responseBodyIs(String(reply.getHeader('content-type') ?? ''), payload);
          // A whole answer is complete now: its ResponseComplete event is recorded before the
          // answer leaves, so a blocking webhook holds the answer until it has taken the event,
          // as kube-apiserver's does. A long-running request's stages follow its stream instead.
          if (!isLongRunning(s.info)) {
            try {
              await rec.emit('ResponseComplete', reply.statusCode);
            } catch {
              // Reported and counted by the sink; only the arrival of a request can fail it.
            }
          }
          return payload;
        });
      }
      scope.addHook('onResponse', async (req, reply) => {
        const info = stateOf(req)?.info;
        if (!info?.isResourceRequest) return;
        const labels = {
          verb: String(info.verb).toUpperCase(),
          group: info.apiGroup,
          version: info.apiVersion,
          resource: info.resource,
          subresource: info.subresource,
          scope: info.namespace ? 'namespace' : 'cluster',
        };
        metrics.requests.inc({ ...labels, code: String(reply.statusCode) });
        metrics.duration.observe(labels, reply.elapsedTime / 1000);
      });

      scope.get('/version', async (_req, reply) => serveVersion(reply));
      registerHealthRoutes(scope, { sets: this.health.sets, log: (line) => process.stderr.write(`${cfg.name}: ${line}\n`) });
      scope.get('/metrics', async (_req, reply) => {
        reply
          .code(200)
          .header('Content-Type', metrics.registry.contentType)
          .send(await metrics.registry.metrics());
      });
      const serveOpenApi = async (req: FastifyRequest, reply: FastifyReply) => {
        const s = stateOf(req)!;
        const res = openapi.handle(s.info.path, s.query.hash, req.headers['if-none-match'] as string | undefined, req.headers.accept);
        if (res.status === 404) throw notFoundError();
        if (res.status === 406) throw Errors.notAcceptable(['application/json']);
        reply.code(res.status).headers(res.headers).send(res.body);
      };
      scope.get('/openapi/v2', serveOpenApi);
      scope.get('/openapi/v3', serveOpenApi);
      scope.get('/openapi/v3/*', serveOpenApi);
      // The member records exist with the built-in Raft group only; elsewhere the paths are 404.
      const membership = this.backend.membership;
      if (membership) {
        registerClusterRoutes(
          scope,
          () => membership,
          (req) => stateOf(req)!.user!,
        );
      }

      const serveApi = async (req: FastifyRequest, reply: FastifyReply, s: RequestState): Promise<void> => {
        // A group-version another server serves (a remote APIService): everything below
        // /apis/<group>/<version> goes there, authenticated and authorized here.
        const p = s.info.parts;
        if (p[0] === 'apis' && p.length >= 3 && aggregator.isRemote(p[1]!, p[2]!)) return aggregator.proxy(req, reply, p[1]!, p[2]!, s.user!);
        if (s.info.isResourceRequest) return handler.handle(req, reply, s.info, s.query, s.user!, req.query as Record<string, unknown>);
        if (req.method !== 'GET' && req.method !== 'HEAD') throw Errors.methodNotAllowed(req.method, { group: '', resource: '' });
        const agg = aggregatedVersion(req.headers.accept);
        const parts = s.info.parts;
        let doc;
        if (parts.length === 1 && parts[0] === 'api') doc = agg ? discovery.aggregated('api', agg) : discovery.apiVersions();
        else if (parts.length === 1 && parts[0] === 'apis') doc = agg ? discovery.aggregated('apis', agg) : discovery.apiGroupList();
        else if (parts[0] === 'api' && parts.length === 2) doc = discovery.apiResourceList('', parts[1]!);
        else if (parts[0] === 'apis' && parts.length === 2) doc = discovery.apiGroup(parts[1]!);
        else if (parts[0] === 'apis' && parts.length === 3) doc = discovery.apiResourceList(parts[1]!, parts[2]!);
        if (!doc) throw notFoundError();
        if (doc.etag) reply.header('ETag', doc.etag);
        if (doc.etag && req.headers['if-none-match'] === doc.etag) {
          reply.code(304).send();
          return;
        }
        sendDocument(reply, doc.body, doc.contentType);
      };
      const api = async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
        const s = stateOf(req)!;
        if (!this.ready() && s.info.isResourceRequest) throw Errors.serviceUnavailable('the server is starting up');
        // Watches have no deadline: their length is bounded by timeoutSeconds and
        // --min-request-timeout (watch.handler.ts). The deadline counts from the request's
        // arrival, as kube's does: reading the body took part of it.
        if (s.deadlineMs === undefined) return serveApi(req, reply, s);
        await withDeadline(serveApi(req, reply, s), s.deadlineMs - reply.elapsedTime, () => !reply.sent && !reply.raw.headersSent);
      };
      // OPTIONS too: a remote APIService and a proxy subresource pass it on (kube proxies every
      // method); elsewhere it is a 405 as from kube's route table.
      for (const p of ['/api', '/api/*', '/apis', '/apis/*']) {
        scope.route({ method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'], url: p, handler: api });
      }
      // Everything else: a 404 Status (Nest's own not-found handler answers in its format).
      scope.route({
        method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
        url: '/*',
        handler: async (_req, reply) => sendStatus(reply, notFoundError()),
      });
    });
  }
}
