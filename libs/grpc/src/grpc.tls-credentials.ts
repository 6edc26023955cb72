/**
 * TLS channel credentials for grpc-js clients that also dial servers by IP address.
 *
 * grpc-js's own SSL credentials always put the target's host into the TLS ServerName (SNI),
 * IP addresses included. RFC 6066 allows only DNS names there; Node warned about it up to
 * Node 24 and from Node 26 on `tls.connect` throws (ERR_INVALID_ARG_VALUE), so a grpc-js client
 * of `https://10.0.0.5:2379` or of a peer at `127.0.0.1:2380` never connects. These credentials
 * do what grpc-js does otherwise (ALPN h2, the same secure context, the server's certificate
 * checked against the dialled host, `grpc.ssl_target_name_override` honoured), but send no
 * ServerName when the host is an IP address, as Go's TLS client does; the certificate is then
 * checked against the address (its IP SANs).
 *
 * Built on grpc-js's extension point for channel credentials (`ChannelCredentials` and its
 * `_createSecureConnector`, with the `SecureConnector` type of grpc-js's `experimental` exports).
 */
import { isIP, type Socket } from 'node:net';
import { checkServerIdentity as defaultCheck, connect, createSecureContext, type PeerCertificate, type SecureContext } from 'node:tls';
import { CallCredentials, ChannelCredentials, type ChannelOptions, type experimental } from '@grpc/grpc-js';

type GrpcUri = experimental.GrpcUri;
type SecureConnector = experimental.SecureConnector;
type SecureConnectResult = experimental.SecureConnectResult;

/** The TLS material and checks of a client channel. */
export interface TlsChannelOptions {
  /** Trusted CAs (PEM); Node's default roots when absent. */
  ca?: string | Buffer | null;
  /** Client certificate chain and key (PEM), for mutual TLS. */
  cert?: string | Buffer | null;
  key?: string | Buffer | null;
  /**
   * The whole check of the server's certificate against the host name (as node:tls's option:
   * undefined accepts, an Error refuses). Default: node:tls's checkServerIdentity.
   */
  checkServerIdentity?: (host: string, cert: PeerCertificate) => Error | undefined;
}

/** The host part of a channel target as grpc-js's default authority gives it ("host:port", "[v6]:port", "dns:///host:port"). */
export function targetHost(target: GrpcUri): string {
  if (target.scheme === 'unix' || target.scheme === 'unix-abstract') return 'localhost';
  const path = target.path.replace(/^\/+/, '');
  if (path.startsWith('[')) {
    const end = path.indexOf(']');
    return end > 0 ? path.slice(1, end) : path;
  }
  // One colon: host:port. More (a bare IPv6 address) or none: the whole path is the host.
  const colon = path.indexOf(':');
  return colon >= 0 && path.indexOf(':', colon + 1) < 0 ? path.slice(0, colon) : path;
}

/** What goes into the TLS ServerName for `host`: nothing for an IP address (RFC 6066). */
export function serverNameFor(host: string): string | undefined {
  return isIP(host) === 0 && host !== '' ? host : undefined;
}

class TlsChannelCredentials extends ChannelCredentials {
  constructor(
    private readonly context: SecureContext,
    private readonly check: TlsChannelOptions['checkServerIdentity'],
  ) {
    super();
  }

  _isSecure(): boolean {
    return true;
  }

  _equals(other: ChannelCredentials): boolean {
    return other === this;
  }

  _createSecureConnector(target: GrpcUri, options: ChannelOptions, callCredentials?: CallCredentials): SecureConnector {
    const override = options['grpc.ssl_target_name_override'] as string | undefined;
    const host = override || targetHost(target);
    const check = this.check ?? defaultCheck;
    const context = this.context;
    return {
      connect(socket: Socket): Promise<SecureConnectResult> {
        return new Promise((resolve, reject) => {
          const servername = serverNameFor(host);
          const tlsSocket = connect(
            {
              socket,
              secureContext: context,
              ALPNProtocols: ['h2'],
              // node:tls checks the certificate against `servername`, or `host` without one.
              host,
              ...(servername ? { servername } : {}),
              checkServerIdentity: (_name, cert) => check(host, cert),
            },
            () => {
              if (!tlsSocket.authorized) {
                reject(tlsSocket.authorizationError ?? new Error('the server certificate was not authorized'));
                tlsSocket.destroy();
                return;
              }
              resolve({ socket: tlsSocket, secure: true });
            },
          );
          tlsSocket.on('error', reject);
        });
      },
      waitForReady: () => Promise.resolve(),
      getCallCredentials: () => callCredentials ?? CallCredentials.createEmpty(),
      destroy: () => undefined,
    };
  }
}

/**
 * grpc-js channel credentials over TLS that send no ServerName for IP addresses (see above).
 * Unusable material (a key that does not match, a PEM that does not parse) throws here.
 */
export function tlsChannelCredentials(o: TlsChannelOptions = {}): ChannelCredentials {
  const context = createSecureContext({
    ...(o.ca ? { ca: o.ca } : {}),
    ...(o.cert ? { cert: o.cert } : {}),
    ...(o.key ? { key: o.key } : {}),
  });
  return new TlsChannelCredentials(context, o.checkServerIdentity);
}
