/**
 * Static token file authentication, enabled by `--token-auth-file` (read once at start; a file
 * that cannot be read or parsed stops the start, naming the flag and the line).
 */
import { readFileSync } from 'node:fs';
import { Inject, Injectable } from '@nestjs/common';
import { parseTokenFile, TokenFileAuthenticator, type AuthenticationRequest, type Authenticator, type UserInfo } from '@app/auth';
import type { ServerConfig } from '../config/flags.js';
import { SERVER_CONFIG } from '../tokens.js';
import { AuthenticationMethod, flagStartError, METHOD_ORDER } from './authentication-method.js';

/** The static token method (undefined for every request when the flag is not given). */
@AuthenticationMethod({ name: 'token-file', order: METHOD_ORDER.tokenFile })
@Injectable()
export class TokenFileMethod implements Authenticator {
  private readonly inner?: TokenFileAuthenticator;

  constructor(@Inject(SERVER_CONFIG) cfg: ServerConfig) {
    const file = cfg.raw['token-auth-file'];
    if (file === undefined) return;
    try {
      this.inner = new TokenFileAuthenticator(parseTokenFile(readFileSync(file, 'utf8')));
    } catch (e) {
      throw flagStartError(cfg, 'token-auth-file', e);
    }
  }

  authenticate(req: AuthenticationRequest): UserInfo | undefined {
    return this.inner?.authenticate(req);
  }
}
