/**
 * Mutual TLS of the peer port: which certificates count as peers, and the TLS options and gRPC
 * credentials of both directions (docs/cluster.md "Peer TLS").
 */
import { X509Certificate } from 'node:crypto';
import type { Socket } from 'node:net';
import { type PeerCertificate, type TLSSocket, checkServerIdentity } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { type CallStatus, tlsChannelCredentials } from '@app/grpc';

/**
 * Mutual TLS material of the peer transport (docs/cluster.md "Peer TLS", etcd's
 * --peer-cert-file/--peer-key-file/--peer-trusted-ca-file). The same certificate is presented
 * as server and as client, so it needs ExtKeyUsage serverAuth AND clientAuth; peers are
 * trusted only when their certificate chains to `ca` AND carries an allowed common name (etcd's
 * --peer-cert-allowed-cn): the CA also signs the API's client certificates, and those must not
 * open the peer port.
 */
export interface PeerTls {
  /** PEM of the CA(s) peer certificates must chain to (both directions). */
  readonly ca: string | Buffer;
  /** PEM certificate chain presented to peers. */
  readonly cert: string | Buffer;
  /** PEM private key of `cert`. */
  readonly key: string | Buffer;
  /** Common names a peer's certificate may carry. Default: the common name of `cert`. */
  readonly allowedCN?: readonly string[];
}

/** The common name(s) in a certificate subject as Node's TLS layer reports it. */
function commonNames(subject: PeerCertificate['subject'] | undefined): string[] {
  const cn = (subject as Record<string, string | string[] | undefined> | undefined)?.CN;
  return cn === undefined ? [] : Array.isArray(cn) ? cn : [cn];
}

/** True when a peer certificate has exactly one common name and it is allowed. */
function peerCertificateAllowed(cert: PeerCertificate | undefined, allowed: ReadonlySet<string>): boolean {
  const cns = commonNames(cert?.subject);
  return cns.length === 1 && allowed.has(cns[0]!);
}

/** The common names peers must present: `tls.allowedCN`, else the CN of our own certificate. */
function allowedPeerNames(tls: PeerTls): Set<string> {
  if (tls.allowedCN !== undefined) {
    if (tls.allowedCN.length === 0 || tls.allowedCN.some((n) => n === '')) throw new TransportConfigError('allowed peer common names must be non-empty');
    return new Set(tls.allowedCN);
  }
  let own: X509Certificate;
  try {
    own = new X509Certificate(pem(tls.cert));
  } catch (e) {
    throw new TransportConfigError(`peer TLS material is unusable: ${(e as Error).message}`);
  }
  const cn = own.subject
    .split('\n')
    .find((l) => l.startsWith('CN='))
    ?.slice(3);
  if (!cn) throw new TransportConfigError('the peer certificate has no common name: name the allowed peer common names');
  return new Set([cn]);
}

/** A transport that cannot be built as configured (no security posture, unusable TLS material). */
export class TransportConfigError extends Error {
  override readonly name = 'TransportConfigError';
}

/** PEM material as a Buffer. */
export const pem = (v: string | Buffer): Buffer => (typeof v === 'string' ? Buffer.from(v) : v);

/** TLS options of connections to peers (node:tls connect options). */
export interface PeerConnectTls {
  readonly ca: Buffer;
  readonly cert: Buffer;
  readonly key: Buffer;
  checkServerIdentity(host: string, cert: PeerCertificate): Error | undefined;
}

/** Both directions' credentials of the peer port, and the check of callers that enforces them. */
export interface PeerCredentials {
  /** TLS of the peer port's server: clients must present a certificate `clientCa` signed. Undefined: plaintext. */
  readonly serverTls: { readonly cert: Buffer; readonly key: Buffer; readonly clientCa: Buffer } | undefined;
  /** TLS of the peer streams this node opens. Undefined: plaintext. */
  readonly connectTls: PeerConnectTls | undefined;
  /** The same, as grpc-js channel credentials (snapshot transfers, ClusterAdmin calls). */
  readonly client: grpc.ChannelCredentials;
  /**
   * Refuses a connection to the peer port whose client certificate does not carry an allowed
   * peer common name: PERMISSION_DENIED on every call (GrpcServerOptions.authorize). Undefined
   * in plaintext.
   */
  readonly authorize: ((socket: Socket) => CallStatus | undefined) | undefined;
}

const NOT_A_PEER: CallStatus = { code: grpc.status.PERMISSION_DENIED, details: 'not a peer certificate' };

/**
 * Builds the peer port's credentials: mutual TLS from `tls`, or plaintext only when `insecure`
 * is set explicitly. Throws TransportConfigError when neither is given (plaintext is never
 * chosen silently) or when the TLS material is unusable.
 */
export function peerCredentials(tls: PeerTls | undefined, insecure: boolean | undefined): PeerCredentials {
  if (tls) {
    const [ca, cert, key] = [pem(tls.ca), pem(tls.cert), pem(tls.key)];
    const allowed = allowedPeerNames(tls);
    // Node's checkServerIdentity compares the server certificate's SANs with the host of the
    // address we dialled (the peer address from --initial-cluster / member records); the server
    // must also be a peer, not another certificate of the CA.
    const checkPeerServer = (host: string, c: PeerCertificate): Error | undefined =>
      checkServerIdentity(host, c) ??
      (peerCertificateAllowed(c, allowed)
        ? undefined
        : new Error(`peer certificate CN ${JSON.stringify(commonNames(c.subject).join(','))} is not an allowed peer name`));
    let client: grpc.ChannelCredentials;
    try {
      // Unusable material fails here (building the secure context) rather than at the first connection.
      client = tlsChannelCredentials({ ca, key, cert, checkServerIdentity: checkPeerServer });
    } catch (e) {
      throw new TransportConfigError(`peer TLS material is unusable: ${(e as Error).message}`);
    }
    return {
      // The server demands a client certificate from `ca` (etcd's --peer-client-cert-auth, always
      // on here): a peer without one is refused during the handshake.
      serverTls: { cert, key, clientCa: ca },
      connectTls: { ca, cert, key, checkServerIdentity: checkPeerServer },
      client,
      // Every call on the peer port (Raft streams, snapshots, the node-to-node administration of
      // addService) must come from a peer certificate: a client certificate of the API, signed
      // by the same CA, is refused with PERMISSION_DENIED before any handler sees the call.
      authorize: (socket) => (peerCertificateAllowed((socket as TLSSocket).getPeerCertificate(), allowed) ? undefined : NOT_A_PEER),
    };
  }
  if (insecure === true) return { serverTls: undefined, connectTls: undefined, client: grpc.credentials.createInsecure(), authorize: undefined };
  throw new TransportConfigError('the peer transport needs TLS material (tls) or an explicit insecure: true');
}
