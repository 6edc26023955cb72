/**
 * X.509 client-certificate authentication: the TLS layer verified the chain against the
 * client CA (requestCert; the handshake does not fail without a certificate so other methods
 * can run); the user is the certificate's CN and the groups its O values, as in Kubernetes.
 */
import type { TLSSocket } from 'node:tls';
import type { AuthenticationRequest, Authenticator } from './authenticator.port.js';
import { AUTHENTICATED_GROUP, type UserInfo } from './user.info.js';

const cache = new WeakMap<object, UserInfo | null>();

/**
 * Returns the user of a verified client certificate on `socket`, or undefined when the peer sent
 * none or it did not verify. Cached per TLS connection (the certificate cannot change on it).
 */
export function authenticateClientCert(socket: TLSSocket | undefined): UserInfo | undefined {
  if (!socket || typeof socket.getPeerCertificate !== 'function') return undefined;
  const key = socket as object;
  const hit = cache.get(key);
  if (hit !== undefined) return hit ?? undefined;
  let user: UserInfo | null = null;
  if (socket.authorized) {
    const cert = socket.getPeerCertificate(false);
    const subject = cert?.subject as unknown as Record<string, string | string[] | undefined> | undefined;
    const cn = subject?.CN;
    const name = Array.isArray(cn) ? cn[0] : cn;
    if (name) {
      const o = subject?.O;
      const groups = o === undefined ? [] : Array.isArray(o) ? o : [o];
      user = { username: name, groups: [...groups, AUTHENTICATED_GROUP] };
    }
  }
  cache.set(key, user);
  return user ?? undefined;
}

/** The x509 method of the authenticator chain (`--client-ca-file`; today the cluster CA). */
export class ClientCertAuthenticator implements Authenticator {
  authenticate(req: AuthenticationRequest): UserInfo | undefined {
    return authenticateClientCert(req.socket);
  }
}
