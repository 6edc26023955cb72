/**
 * What the pipeline learns about one request, kept on the Fastify request for the stages after
 * it and for the route. Written only by the pipeline's filters, in their order; read-only for
 * the route and the response hooks.
 */
import type { FastifyRequest } from 'fastify';
import type { UserInfo } from '@app/auth';
import type { RequestInfo } from '../http/request-info.js';
import type { AuditRecord } from './audit.record.js';

/** The per-request state. */
export interface RequestState {
  /** The parse of path and method (request-info filter). */
  info: RequestInfo;
  /** When the request arrived. */
  received?: Date;
  /** First value of each query parameter. */
  query: Record<string, string | undefined>;
  /** Time the answer must have started by, in ms from the request's arrival; undefined for long-running requests (deadline filter). */
  deadlineMs?: number;
  /** The authenticated user (authentication filter). */
  authenticatedUser?: UserInfo;
  /** The user the request acts as: the authenticated one, or whom it impersonates (impersonation filter). */
  user?: UserInfo;
  /** Audit ID of the request, also sent as the `Audit-Id` response header. */
  auditId?: string;
  /** The request's audit events, when the audit policy records it (audit filter). */
  audit?: AuditRecord;
}

const STATE = Symbol('kapi.requestState');

type WithState = FastifyRequest & { [STATE]?: RequestState };

/** The state of a request the pipeline has seen; undefined before the request-info filter ran. */
export function stateOf(req: FastifyRequest): RequestState | undefined {
  return (req as WithState)[STATE];
}

/** Attaches a fresh state to `req` (request-info filter only). */
export function attachState(req: FastifyRequest, state: RequestState): RequestState {
  (req as WithState)[STATE] = state;
  return state;
}

/** First value of each query parameter of a Fastify query object. */
export function firstValues(q: Record<string, unknown>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(q)) out[k] = Array.isArray(v) ? String(v[0]) : v === undefined ? undefined : String(v);
  return out;
}
