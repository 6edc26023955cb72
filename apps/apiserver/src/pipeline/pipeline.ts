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
 *   audit            the AUDIT_SINK policy's level and events (the audit ID, answered in the
 *                    `Audit-Id` header, is given to every request before the first stage)
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
import { Errors, StatusError } from '@app/apimachinery';
import { ANONYMOUS_USER, UNAUTHENTICATED_GROUP, type Authenticator, type UserInfo } from '@app/auth';
import { forbiddenError, selectorAttributes, type AuthorizationAttributes, type AuthorizationDecision, type Authorizer } from '@app/authz';
import { discardRefusedBody } from '../http/refused-body.js';
import { isLongRunning, parseRequestInfo } from '../http/request-info.js';
import { requestDeadlineMs } from '../http/request-deadline.js';
import type { RequestKind } from '../http/inflight.js';
import type { AuditAttributes, AuditSink } from './audit.port.js';
import { AuditRecord, type AuditBodyDecoder } from './audit.record.js';
import type { FlowControl } from './flow-control.port.js';
import { holdAnswer } from './held-answer.js';
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
  /** Decodes request and response bodies for audit events (JSON only when absent). */
  decodeAuditBody?: AuditBodyDecoder;
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

/**
 * The audit ID a client (such as an aggregating API server passing a request on) sent in its
 * `Audit-ID` header, which kube-apiserver keeps; ignored unless it is 1-128 visible ASCII
 * characters.
 */
function givenAuditId(req: FastifyRequest): string | undefined {
  const v = req.headers['audit-id'];
  return typeof v === 'string' && /^[\x21-\x7e]{1,128}$/.test(v) ? v : undefined;
}

/** The client's address, after the addresses of any proxies it came through (X-Forwarded-For, X-Real-Ip). */
function sourceIPs(req: FastifyRequest): string[] {
  const out: string[] = [];
  const fwd = req.headers['x-forwarded-for'];
  for (const part of (Array.isArray(fwd) ? fwd.join(',') : (fwd ?? '')).split(',')) if (part.trim()) out.push(part.trim());
  const real = req.headers['x-real-ip'];
  if (typeof real === 'string' && real.trim() && !out.includes(real.trim())) out.push(real.trim());
  const remote = req.socket?.remoteAddress ?? req.ip;
  if (remote && !out.includes(remote)) out.push(remote);
  return out;
}

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
    name: i.name || (i.selectedName ?? ''),
    ...(i.fieldSelector !== undefined || i.labelSelector !== undefined ? selectorAttributes(i.fieldSelector, i.labelSelector) : {}),
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

  const decodeAuditBody: AuditBodyDecoder = deps.decodeAuditBody ?? ((_type, body) => JSON.parse(body.toString()) as unknown);
  const auditAttributes = (s: RequestState, user: UserInfo | undefined): AuditAttributes => ({ ...authorizationAttributes(s), user });
  const startAudit = (req: FastifyRequest, s: RequestState, user: UserInfo | undefined): AuditRecord | undefined => {
    const config = deps.audit.configFor(auditAttributes(s, user));
    if (config.level === 'None') return undefined;
    return new AuditRecord({
      sink: deps.audit,
      config,
      state: s,
      requestURI: req.url,
      sourceIPs: sourceIPs(req),
      userAgent: req.headers['user-agent'],
      received: s.received ?? new Date(),
      decode: decodeAuditBody,
    });
  };
  /** kube's failed-authentication audit: one ResponseStarted event with the 401, user unknown. */
  const auditUnauthenticated = (req: FastifyRequest, reply: FastifyReply, s: RequestState): void => {
    if (!deps.audit.enabled) return;
    const rec = startAudit(req, s, undefined);
    rec?.statusIs({ status: 'Failure', reason: 'Unauthorized', code: 401 });
    rec?.emit('ResponseStarted', 401);
  };
  const unauthenticated = (req: FastifyRequest, reply: FastifyReply, s: RequestState, e: unknown): never => {
    try {
      auditUnauthenticated(req, reply, s);
    } catch {
      // The 401 is the answer whatever the audit log does.
    }
    throw e;
  };

  const authenticated = (req: FastifyRequest, reply: FastifyReply, s: RequestState, found: UserInfo | undefined): void => {
    let user = found;
    if (!user) {
      if (!deps.anonymousAllowed(s.info.path)) {
        discardRefusedBody(req.raw, reply.raw, { capBytes: UNAUTHENTICATED_DISCARD_BYTES });
        unauthenticated(req, reply, s, Errors.unauthorized());
      }
      user = ANONYMOUS;
    }
    s.authenticatedUser = user;
    s.user = user;
  };
  const refused = (req: FastifyRequest, reply: FastifyReply, s: RequestState, e: unknown): never => {
    discardRefusedBody(req.raw, reply.raw, { capBytes: UNAUTHENTICATED_DISCARD_BYTES });
    if (e instanceof StatusError && e.code === 401) unauthenticated(req, reply, s, e);
    throw e;
  };

  // The x509 and static token methods answer synchronously; a request they decide costs no promise.
  const authentication: Filter = (req, reply, s) => {
    let found;
    try {
      found = deps.authenticator.authenticate({ headers: req.headers, socket: tlsSocketOf(req) });
    } catch (e) {
      refused(req, reply, s, e);
    }
    if (isPromise(found)) {
      return found.then(
        (user) => authenticated(req, reply, s, user),
        (e: unknown) => refused(req, reply, s, e),
      );
    }
    authenticated(req, reply, s, found);
  };

  const audit: Filter = (req, reply, s) => {
    if (!deps.audit.enabled) return;
    const rec = startAudit(req, s, s.authenticatedUser);
    if (!rec) return;
    s.audit = rec;
    let received;
    try {
      received = rec.emit('RequestReceived');
    } catch {
      // Only a strict log throws: the request is not served unrecorded.
      throw Errors.internal('the audit log could not record the request');
    }
    if (isPromise(received)) {
      // A blocking audit webhook: the request goes on once its arrival is recorded.
      return received.then(
        () => watchAuditStages(reply, s, rec),
        () => {
          throw Errors.internal('the audit webhook could not record the request');
        },
      );
    }
    watchAuditStages(reply, s, rec);
  };

  /** Records ResponseStarted (long-running requests) and ResponseComplete when they happen. */
  const watchAuditStages = (reply: FastifyReply, s: RequestState, rec: AuditRecord): void => {
    const raw = reply.raw;
    if (isLongRunning(s.info) && rec.keeps('ResponseStarted')) {
      // A watch or a stream: its headers leave long before it ends.
      const writeHead = raw.writeHead;
      raw.writeHead = function (this: typeof raw, ...args: Parameters<typeof raw.writeHead>) {
        raw.writeHead = writeHead;
        const taken = rec.emit('ResponseStarted', typeof args[0] === 'number' ? args[0] : raw.statusCode);
        if (!isPromise(taken)) return writeHead.apply(this, args);
        // A blocking audit webhook: nothing of the answer leaves before it has taken the event
        // (kube's audit response writer records ResponseStarted before it writes the header).
        holdAnswer(raw, taken, () => writeHead.apply(raw, args));
        return raw;
      } as typeof raw.writeHead;
    }
    raw.once('close', () => {
      try {
        rec.emit('ResponseComplete', reply.statusCode);
      } catch {
        // Answered already.
      }
    });
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
    if (s.audit) {
      s.audit.annotate('authorization.k8s.io/decision', d.decision === 'Allow' ? 'allow' : 'forbid');
      s.audit.annotate('authorization.k8s.io/reason', d.reason ?? '');
    }
    if (d.decision === 'Allow') return;
    // No mode allowed it and one could not decide: kube-apiserver answers 500, not 403.
    if (d.decision === 'NoOpinion' && d.error) throw Errors.internal(d.error);
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
    // The audit ID first (kube's WithAuditInit, the outermost filter), so that every answer,
    // a 401 included, carries it; on the raw response, so do answers written past Fastify (a
    // watch, a stream).
    const auditId = givenAuditId(req) ?? randomUUID();
    reply.raw.setHeader('Audit-Id', auditId);
    const state = attachState(req, { info, query, received: new Date(), auditId });
    for (const f of filters) {
      const pending = f(req, reply, state);
      if (pending !== undefined) await pending;
    }
  };
}
