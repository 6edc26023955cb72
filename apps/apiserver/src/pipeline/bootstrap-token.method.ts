/**
 * Bootstrap token authentication, enabled by `--enable-bootstrap-token-auth` (default false, as
 * kube-apiserver): bearer tokens `<id>.<secret>` checked against the Secret
 * kube-system/bootstrap-token-<id> in the watched cache (@app/auth BootstrapTokenAuthenticator).
 * A token it does not accept goes on to the later methods and, unaccepted, is a 401
 * (unrecognized-token.method.ts), never anonymous.
 */
import { Injectable } from '@nestjs/common';
import { BootstrapTokenAuthenticator, type AuthenticationRequest, type Authenticator, type UserInfo } from '@app/auth';
import { AuthenticationMethod, METHOD_ORDER } from './authentication-method.js';
import { BootstrapTokenSecrets } from './bootstrap-token.watcher.js';

/** The bootstrap token method (undefined for every request when the flag is not given). */
@AuthenticationMethod({ name: 'bootstrap-token', order: METHOD_ORDER.bootstrapToken })
@Injectable()
export class BootstrapTokenMethod implements Authenticator {
  private readonly inner?: BootstrapTokenAuthenticator;

  constructor(secrets: BootstrapTokenSecrets) {
    if (!secrets.enabled) return;
    // Refusals are not logged: kube logs them at verbosity 3 only, and a log line per refused
    // request would let anyone fill the log.
    this.inner = new BootstrapTokenAuthenticator({ secret: (name) => secrets.secret(name) });
  }

  authenticate(req: AuthenticationRequest): Promise<UserInfo | undefined> | undefined {
    return this.inner?.authenticate(req);
  }
}
