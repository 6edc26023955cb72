/**
 * The bearer token of a request (`Authorization: Bearer <token>`), as Kubernetes' bearertoken
 * authenticator reads it: the scheme is case-insensitive, surrounding space is dropped.
 */
import type { IncomingHttpHeaders } from 'node:http';

/** The token of an `Authorization: Bearer` header; undefined when there is none or it is empty. */
export function bearerToken(headers: IncomingHttpHeaders): string | undefined {
  const h = headers.authorization;
  if (typeof h !== 'string') return undefined;
  const m = /^\s*bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : undefined;
}
