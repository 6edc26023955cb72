/**
 * x509 client certificates verified against the cluster CA and the CAs of --client-ca-file.
 * When the server's TLS layer also trusts the front proxy's CA (--requestheader-client-ca-file),
 * certificates are checked against those CAs again so that a proxy's certificate does not
 * authenticate a user.
 */
import { Inject, Injectable } from '@nestjs/common';
import { ClientCertAuthenticator, parseCaBundle } from '@app/auth';
import type { ServerConfig } from '../config/flags.js';
import { clientCaBundles } from '../serving.tls.js';
import { PKI, SERVER_CONFIG, type PkiMaterial } from '../tokens.js';
import { AuthenticationMethod, METHOD_ORDER } from './authentication-method.js';

/** The x509 method. */
@AuthenticationMethod({ name: 'x509', order: METHOD_ORDER.x509 })
@Injectable()
export class X509Method extends ClientCertAuthenticator {
  constructor(@Inject(SERVER_CONFIG) cfg: ServerConfig, @Inject(PKI) pki: PkiMaterial) {
    super(cfg.raw['requestheader-client-ca-file'] !== undefined ? parseCaBundle([pki.caPem, ...clientCaBundles(cfg)].join('\n')) : undefined);
  }
}
