/**
 * The authentication port of the request pipeline (Kubernetes' authenticator.Request). An
 * authenticator looks at the credentials of one request: it returns the user when it recognizes
 * and accepts them, undefined when the request carries no credential of its kind, and throws
 * `Errors.unauthorized()` when it recognizes a credential that is invalid (an expired or forged
 * token is a 401 even when another method or anonymous access would let the request through).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { UserInfo } from './user.info.js';

/** What an authenticator may read of a request: its headers and its TLS connection. */
export interface AuthenticationRequest {
  headers: IncomingHttpHeaders;
  /** The TLS socket the request arrived on (HTTP/1.1 socket or the HTTP/2 session's). */
  socket?: TLSSocket;
  /**
   * The audiences the credential must be for (a TokenReview's spec.audiences); undefined: the
   * API server's own. Audience-bound methods (service-account tokens) check against these.
   */
  audiences?: readonly string[];
}

/** One authentication method. */
export interface Authenticator {
  /** See the file comment for the three outcomes. May be synchronous. */
  authenticate(req: AuthenticationRequest): UserInfo | undefined | Promise<UserInfo | undefined>;
}

/** Injection token of the request pipeline's authenticator (the whole chain). */
export const AUTHENTICATOR = Symbol.for('kapi.Authenticator');
