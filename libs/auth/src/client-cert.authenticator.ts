/**
 * X.509 client-certificate authentication: the TLS layer verified the chain against the
 * client CA (requestCert; the handshake does not fail without a certificate so other methods
 * can run); the user is the certificate's CN and the groups its O values, as in Kubernetes.
 */
import type { X509Certificate } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import { chainVerifies, peerChain } from './cert.chain.js';
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

/**
 * The x509 method of the authenticator chain (`--client-ca-file`; today the cluster CA). When
 * the TLS layer trusts more CAs than the client CA (the front proxy's CA), `roots` narrows the
 * certificates accepted to those chaining to the client CA: a proxy's certificate is not a user.
 */
export class ClientCertAuthenticator implements Authenticator {
  private readonly ofClientCa = new WeakMap<object, boolean>();

  constructor(private readonly roots?: readonly X509Certificate[]) {}

  authenticate(req: AuthenticationRequest): UserInfo | undefined {
    const user = authenticateClientCert(req.socket);
    if (!user || !this.roots) return user;
    let ok = this.ofClientCa.get(req.socket!);
    if (ok === undefined) {
      const chain = peerChain(req.socket);
      ok = chain !== undefined && chainVerifies(chain.leaf, chain.intermediates, this.roots);
      this.ofClientCa.set(req.socket!, ok);
    }
    return ok ? user : undefined;
  }
}
