/**
 * Authenticating proxy, enabled by `--requestheader-client-ca-file` with
 * `--requestheader-username-headers` (and optionally the allowed names, UID headers, group headers
 * and extra header prefixes; UID headers need the RemoteRequestHeaderUID feature gate, as in
 * kube-apiserver 1.32). server.ts adds the same CA to the TLS layer's list so that the proxy can
 * present its certificate; this method verifies the chain against that CA alone.
 */
import { readFileSync } from 'node:fs';
import { Inject, Injectable } from '@nestjs/common';
import { parseCaBundle, RequestHeaderAuthenticator, type AuthenticationRequest, type Authenticator, type UserInfo } from '@app/auth';
import type { ServerConfig } from '../config/flags.js';
import { SERVER_CONFIG } from '../tokens.js';
import { AuthenticationMethod, flagStartError, listFlag, METHOD_ORDER } from './authentication-method.js';

/** The request header method (undefined for every request when the flags are not given). */
@AuthenticationMethod({ name: 'requestheader', order: METHOD_ORDER.requestHeader })
@Injectable()
export class RequestHeaderMethod implements Authenticator {
  private readonly inner?: RequestHeaderAuthenticator;

  constructor(@Inject(SERVER_CONFIG) cfg: ServerConfig) {
    const file = cfg.raw['requestheader-client-ca-file'];
    if (file === undefined) return;
    let roots;
    try {
      roots = parseCaBundle(readFileSync(file, 'utf8'));
    } catch (e) {
      throw flagStartError(cfg, 'requestheader-client-ca-file', e);
    }
    this.inner = new RequestHeaderAuthenticator({
      roots,
      allowedNames: listFlag(cfg, 'requestheader-allowed-names'),
      usernameHeaders: listFlag(cfg, 'requestheader-username-headers'),
      uidHeaders: listFlag(cfg, 'requestheader-uid-headers'),
      groupHeaders: listFlag(cfg, 'requestheader-group-headers'),
      extraHeaderPrefixes: listFlag(cfg, 'requestheader-extra-headers-prefix'),
    });
  }

  authenticate(req: AuthenticationRequest): UserInfo | undefined {
    return this.inner?.authenticate(req);
  }
}
