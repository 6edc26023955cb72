/**
 * OpenID Connect id_token authentication, enabled by `--oidc-issuer-url` and `--oidc-client-id`
 * (flags.ts checks they come together and that the issuer is https). `--oidc-ca-file` is read at
 * start; discovery and the key set are fetched on the first token of the issuer.
 */
import { readFileSync } from 'node:fs';
import { Inject, Injectable } from '@nestjs/common';
import { httpsJson, OidcAuthenticator, parseRequiredClaims, type AuthenticationRequest, type Authenticator, type UserInfo } from '@app/auth';
import type { ServerConfig } from '../config/flags.js';
import { SERVER_CONFIG } from '../tokens.js';
import { AuthenticationMethod, flagStartError, listFlag, METHOD_ORDER } from './authentication-method.js';

/** The OIDC method (undefined for every request when the flags are not given). */
@AuthenticationMethod({ name: 'oidc', order: METHOD_ORDER.oidc })
@Injectable()
export class OidcMethod implements Authenticator {
  private readonly inner?: OidcAuthenticator;

  constructor(@Inject(SERVER_CONFIG) cfg: ServerConfig) {
    const issuerUrl = cfg.raw['oidc-issuer-url'];
    if (issuerUrl === undefined) return;
    let ca: string | undefined;
    if (cfg.raw['oidc-ca-file'] !== undefined) {
      try {
        ca = readFileSync(cfg.raw['oidc-ca-file'], 'utf8');
      } catch (e) {
        throw flagStartError(cfg, 'oidc-ca-file', e);
      }
    }
    let requiredClaims;
    try {
      requiredClaims = parseRequiredClaims(cfg.rawAll?.['oidc-required-claim'] ?? []);
    } catch (e) {
      throw flagStartError(cfg, 'oidc-required-claim', e);
    }
    const algs = listFlag(cfg, 'oidc-signing-algs');
    this.inner = new OidcAuthenticator({
      issuerUrl,
      clientId: cfg.raw['oidc-client-id']!,
      usernameClaim: cfg.raw['oidc-username-claim'] || 'sub',
      usernamePrefix: cfg.raw['oidc-username-prefix'],
      groupsClaim: cfg.raw['oidc-groups-claim'] || undefined,
      groupsPrefix: cfg.raw['oidc-groups-prefix'],
      requiredClaims,
      signingAlgs: algs.length > 0 ? algs : ['RS256'],
      fetchJson: async (url) => {
        const res = await httpsJson(url, { ca });
        if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
        return res.body;
      },
    });
  }

  authenticate(req: AuthenticationRequest): Promise<UserInfo | undefined> | undefined {
    return this.inner?.authenticate(req);
  }
}
