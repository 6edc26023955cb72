/**
 * The end of the bearer token methods (Kubernetes' bearertoken wrapper): a bearer token none of
 * them accepted is a 401 (not anonymous, not left to a client certificate). Service-account
 * tokens are always on, so there always is a token method (tokenMethodsConfigured).
 */
import { Inject, Injectable } from '@nestjs/common';
import { UnrecognizedBearerTokenAuthenticator, type AuthenticationRequest, type Authenticator } from '@app/auth';
import type { ServerConfig } from '../config/flags.js';
import { SERVER_CONFIG } from '../tokens.js';
import { AuthenticationMethod, METHOD_ORDER, tokenMethodsConfigured } from './authentication-method.js';

/** Refuses an unaccepted bearer token when token methods are configured. */
@AuthenticationMethod({ name: 'unrecognized-bearer-token', order: METHOD_ORDER.unrecognizedBearerToken })
@Injectable()
export class UnrecognizedBearerTokenMethod implements Authenticator {
  private readonly inner?: UnrecognizedBearerTokenAuthenticator;

  constructor(@Inject(SERVER_CONFIG) cfg: ServerConfig) {
    if (tokenMethodsConfigured(cfg)) this.inner = new UnrecognizedBearerTokenAuthenticator();
  }

  authenticate(req: AuthenticationRequest): undefined {
    return this.inner?.authenticate(req);
  }
}
