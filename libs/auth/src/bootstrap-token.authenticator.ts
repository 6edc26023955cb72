/**
 * Bootstrap token authentication (kube-apiserver's `--enable-bootstrap-token-auth`, Kubernetes'
 * plugin/pkg/auth/authenticator/token/bootstrap): a bearer token of the form
 * `[a-z0-9]{6}.[a-z0-9]{16}` is checked against the Secret `kube-system/bootstrap-token-<id>`
 * (bootstrap-token.rules.ts authenticateWithSecret). As in kube, a token that is not of the form,
 * has no Secret or fails a rule is not this method's: later methods are asked, and the refusal
 * of an unaccepted bearer token (UnrecognizedBearerTokenAuthenticator) makes it a 401.
 */
import type { KubeObject } from '@app/apimachinery';
import type { AuthenticationRequest, Authenticator } from './authenticator.port.js';
import { bearerToken } from './bearer.token.js';
import { authenticateWithSecret, BOOTSTRAP_TOKEN_SECRET_PREFIX, parseBootstrapToken, type BootstrapTokenRefusal } from './bootstrap-token.rules.js';
import type { UserInfo } from './user.info.js';

/** What the authenticator needs: the token Secrets by name and a clock. */
export interface BootstrapTokenAuthenticatorDeps {
  /** The Secret of that name in kube-system, from a cache (never a storage read per request). */
  secret(name: string): KubeObject | undefined | Promise<KubeObject | undefined>;
  /** Milliseconds since the epoch. Default Date.now. */
  now?: () => number;
  /** Told why a Secret refused a token: the token ID and the rule, never the secret. */
  onRefused?: (tokenId: string, reason: BootstrapTokenRefusal) => void;
}

/** The bootstrap token method. */
export class BootstrapTokenAuthenticator implements Authenticator {
  constructor(private readonly deps: BootstrapTokenAuthenticatorDeps) {}

  /** Synchronous (undefined) for a request without a bootstrap token, so other tokens pay no promise. */
  authenticate(req: AuthenticationRequest): Promise<UserInfo | undefined> | undefined {
    const raw = bearerToken(req.headers);
    const token = raw === undefined ? undefined : parseBootstrapToken(raw);
    if (!token) return undefined;
    return this.check(token);
  }

  private async check(token: NonNullable<ReturnType<typeof parseBootstrapToken>>): Promise<UserInfo | undefined> {
    const secret = await this.deps.secret(BOOTSTRAP_TOKEN_SECRET_PREFIX + token.id);
    if (!secret) return undefined;
    const out = authenticateWithSecret(token, secret, (this.deps.now ?? Date.now)());
    if ('refused' in out) {
      this.deps.onRefused?.(token.id, out.refused);
      return undefined;
    }
    return out.user;
  }
}
