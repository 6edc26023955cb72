/**
 * The request pipeline: every filter a request passes before its route, in the order
 * kube-apiserver's DefaultBuildHandlerChain runs them (outermost first). This file is the one
 * place that order is written.
 *
 *   panic recovery   the route scope's error handler (http/api.routes.ts): whatever a stage or
 *                    route throws becomes a Status; a 5xx is logged with its stack
 *   request info     verb, group, version, namespace, resource, subresource, name (RequestInfo)
 *   deadline         the time the answer must start by (--request-timeout, `timeout` parameter)
 *   authentication   the AUTHENTICATOR chain; anonymous only where anonymous access is allowed
 *   audit            audit ID (`Audit-Id` header) and the AUDIT_SINK's events
 *   impersonation    Impersonate-* headers, each authorized with the `impersonate` verb
 *   flow control     the FLOW_CONTROL policy (max in flight today; priority and fairness later)
 *   authorization    the AUTHORIZER (the `--authorization-mode` union)
 *   body limit       a declared body over --max-request-body-bytes is refused before it is read
 *   route            a local kind (http/resource.handler.ts) or a non-resource endpoint
 *
 * All stages run in Fastify's onRequest hook, before the body is read: a request that is
 * refused never makes the server read or parse its body. The functions are built once at start
 * from the ports; nothing is resolved per request.
 */
import { randomUUID } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Errors } from '@app/apimachinery';
import { ANONYMOUS_USER, UNAUTHENTICATED_GROUP, type Authenticator, type UserInfo } from '@app/auth';
import { forbiddenError, type AuthorizationAttributes, type AuthorizationDecision, type Authorizer } from '@app/authz';
import { discardRefusedBody } from '../http/refused-body.js';
import { isLongRunning, parseRequestInfo } from '../http/request-info.js';
import { requestDeadlineMs } from '../http/request-deadline.js';
import type { RequestKind } from '../http/inflight.js';
import type { AuditEvent, AuditSink } from './audit.port.js';
import type { FlowControl } from './flow-control.port.js';
import { impersonate, readImpersonation } from './impersonation.filter.js';
import { attachState, firstValues, type RequestState } from './request-state.js';

/** The stage names, in order (for docs, metrics and tests). */
export const PIPELINE_STAGES = [
  'panic-recovery',
  'request-info',
  'deadline',
  'authentication',
  'audit',
  'impersonation',
  'flow-control',
  'authorization',
  'body-limit',
  'route',
] as const;

/** What the pipeline is built from. */
export interface PipelineDeps {
  authenticator: Authenticator;
  authorizer: Authorizer;
  audit: AuditSink;
  flowControl: FlowControl;
  /** Whether a request without credentials may reach `path` as system:anonymous (then authorized like anyone). */
  anonymousAllowed(path: string): boolean;
  /** --request-timeout in ms. */
  requestTimeoutMs: number;
  /** --max-request-body-bytes. */
  maxRequestBodyBytes: number;
  /** Called for a request refused by flow control (for /metrics). */
  onDropped(kind: RequestKind): void;
}

/** One stage: reads what earlier stages left in `state`, adds its own, or throws a StatusError. */
type Filter = (req: FastifyRequest, reply: FastifyReply, state: RequestState) => void | Promise<void>;

/** The user of a request without credentials that anonymous access lets through (never mutated). */
const ANONYMOUS: UserInfo = Object.freeze({ username: ANONYMOUS_USER, groups: Object.freeze([UNAUTHENTICATED_GROUP]) as string[] });

function isPromise<T>(v: T | Promise<T>): v is Promise<T> {
  return typeof (v as { then?: unknown } | undefined)?.then === 'function';
}

/** Body bytes read and discarded from a request refused for lack of credentials. */
const UNAUTHENTICATED_DISCARD_BYTES = 1 << 20;

function tlsSocketOf(req: FastifyRequest): TLSSocket | undefined {
  const raw = req.raw as unknown as { socket?: TLSSocket; stream?: { session?: { socket?: TLSSocket } } };
  return raw.stream?.session?.socket ?? raw.socket;
}

/** The authorization attributes of a request (Kubernetes' GetAuthorizerAttributes). */
export function authorizationAttributes(state: RequestState): AuthorizationAttributes {
  const i = state.info;
  return {
    user: state.user!,
    verb: i.verb,
    isResourceRequest: i.isResourceRequest,
    path: i.path,
    apiGroup: i.apiGroup,
    apiVersion: i.apiVersion,
    resource: i.resource,
    subresource: i.subresource,
    namespace: i.namespace,
    name: i.name,
  };
}

/**
 * The pod subresources that open a session in a container or to its ports. Their GET (the
 * WebSocket form) is authorized as `get` and then as `create` too, so that read-only access
 * never grants it (kube-apiserver from 1.35, AuthorizePodWebsocketUpgradeCreatePermission).
 */
const CONNECT_SUBRESOURCES = new Set(['exec', 'attach', 'portforward']);

function needsCreateToo(a: AuthorizationAttributes): boolean {
  return a.verb === 'get' && a.isResourceRequest && a.apiGroup === '' && a.resource === 'pods' && CONNECT_SUBRESOURCES.has(a.subresource);
}

/** Builds the pipeline's onRequest hook. */
export function createPipeline(deps: PipelineDeps): (req: FastifyRequest, reply: FastifyReply) => Promise<void> {
  const deadline: Filter = (_req, _reply, s) => {
    if (!isLongRunning(s.info)) s.deadlineMs = requestDeadlineMs(s.query.timeout, deps.requestTimeoutMs);
  };

  const authenticated = (req: FastifyRequest, reply: FastifyReply, s: RequestState, found: UserInfo | undefined): void => {
    let user = found;
    if (!user) {
      if (!deps.anonymousAllowed(s.info.path)) {
        discardRefusedBody(req.raw, reply.raw, { capBytes: UNAUTHENTICATED_DISCARD_BYTES });
        throw Errors.unauthorized();
      }
      user = ANONYMOUS;
    }
    s.authenticatedUser = user;
    s.user = user;
  };
  const refused = (req: FastifyRequest, reply: FastifyReply, e: unknown): never => {
    discardRefusedBody(req.raw, reply.raw, { capBytes: UNAUTHENTICATED_DISCARD_BYTES });
    throw e;
  };

  // The x509 and static token methods answer synchronously; a request they decide costs no promise.
  const authentication: Filter = (req, reply, s) => {
    let found;
    try {
      found = deps.authenticator.authenticate({ headers: req.headers, socket: tlsSocketOf(req) });
    } catch (e) {
      refused(req, reply, e);
    }
    if (isPromise(found)) {
      return found.then(
        (user) => authenticated(req, reply, s, user),
        (e: unknown) => refused(req, reply, e),
      );
    }
    authenticated(req, reply, s, found);
  };

  const audit: Filter = (req, reply, s) => {
    s.auditId = randomUUID();
    reply.header('Audit-Id', s.auditId);
    if (!deps.audit.enabled) return;
    const received = new Date().toISOString();
    const event = (stage: AuditEvent['stage'], code?: number): AuditEvent => ({
      auditID: s.auditId!,
      stage,
      requestURI: req.url,
      verb: s.info.verb,
      user: s.authenticatedUser!,
      ...(s.user !== s.authenticatedUser ? { impersonatedUser: s.user } : {}),
      sourceIPs: [req.ip],
      userAgent: req.headers['user-agent'],
      ...(s.info.isResourceRequest
        ? {
            objectRef: {
              resource: s.info.resource,
              namespace: s.info.namespace || undefined,
              name: s.info.name || undefined,
              apiGroup: s.info.apiGroup,
              apiVersion: s.info.apiVersion,
              subresource: s.info.subresource || undefined,
            },
          }
        : {}),
      ...(code !== undefined ? { responseStatus: { code } } : {}),
      requestReceivedTimestamp: received,
      stageTimestamp: new Date().toISOString(),
    });
    deps.audit.record(event('RequestReceived'));
    reply.raw.once('close', () => deps.audit.record(event('ResponseComplete', reply.statusCode)));
  };

  const impersonation: Filter = (req, _reply, s) => {
    const wanted = readImpersonation(req.headers);
    if (!wanted) return;
    return impersonate(s.authenticatedUser!, wanted, deps.authorizer).then((user) => {
      s.user = user;
    });
  };

  const flowControl: Filter = (req, reply, s) => {
    const ticket = deps.flowControl.admit(req.method, s.info, s.user!);
    if (ticket.refused) {
      deps.onDropped(ticket.refused);
      throw Errors.tooManyRequests('Too many requests, please try again later.');
    }
    // 'close' follows the end of every answer and every aborted request, HTTP/1.1 and HTTP/2.
    if (ticket.release) reply.raw.once('close', ticket.release);
  };

  const decided = (req: FastifyRequest, reply: FastifyReply, s: RequestState, attrs: AuthorizationAttributes, d: AuthorizationDecision): void => {
    if (d.decision === 'Allow') return;
    // A request without credentials gets no more of its body read than a 401 would.
    if (s.authenticatedUser!.username === ANONYMOUS_USER) discardRefusedBody(req.raw, reply.raw, { capBytes: UNAUTHENTICATED_DISCARD_BYTES });
    throw forbiddenError(attrs, d.reason);
  };
  // The built-in modes answer synchronously: no promise per request unless a mode needs one.
  const authorize = (req: FastifyRequest, reply: FastifyReply, s: RequestState, attrs: AuthorizationAttributes): void | Promise<void> => {
    const d = deps.authorizer.authorize(attrs);
    if (isPromise(d)) return d.then((x) => decided(req, reply, s, attrs, x));
    decided(req, reply, s, attrs, d);
  };
  const authorization: Filter = (req, reply, s) => {
    const attrs = authorizationAttributes(s);
    const first = authorize(req, reply, s, attrs);
    if (!needsCreateToo(attrs)) return first;
    // A GET that opens a session in a container (a WebSocket exec) needs `create` too.
    const create = { ...attrs, verb: 'create' };
    if (isPromise(first)) return first.then(() => authorize(req, reply, s, create));
    return authorize(req, reply, s, create);
  };

  const bodyLimit: Filter = (req, reply) => {
    // Fastify would answer a declared length over the limit with `Connection: close`.
    if (Number(req.headers['content-length']) > deps.maxRequestBodyBytes) {
      discardRefusedBody(req.raw, reply.raw, { capBytes: 4 * deps.maxRequestBodyBytes });
      throw Errors.tooLarge();
    }
  };

  const filters: readonly Filter[] = [deadline, authentication, audit, impersonation, flowControl, authorization, bodyLimit];
  return async (req, reply) => {
    const query = firstValues(req.query as Record<string, unknown>);
    const info = parseRequestInfo(req.method, req.url.split('?')[0]!, query);
    const state = attachState(req, { info, query });
    for (const f of filters) {
      const pending = f(req, reply, state);
      if (pending !== undefined) await pending;
    }
  };
}
