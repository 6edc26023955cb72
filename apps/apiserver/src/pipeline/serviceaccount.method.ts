/**
 * Service-account token authentication (always on, as in kube-apiserver): JWTs signed with the
 * service-account keys, bound tokens from TokenRequest and legacy Secret tokens
 * (@app/auth ServiceAccountAuthenticator), checked against the objects the watch-fed
 * ServiceAccountObjectsWatcher keeps in memory.
 */
import { Injectable } from '@nestjs/common';
import { bearerToken, ServiceAccountAuthenticator, type AuthenticationRequest, type Authenticator, type UserInfo } from '@app/auth';
import { AuthenticationMethod, METHOD_ORDER } from './authentication-method.js';
import { ServiceAccountObjectsWatcher } from './serviceaccount-objects.watcher.js';
import { ServiceAccountTokens } from './serviceaccount.config.js';

/** The service-account method of the chain. */
@AuthenticationMethod({ name: 'service-account', order: METHOD_ORDER.serviceAccount })
@Injectable()
export class ServiceAccountMethod implements Authenticator {
  private readonly inner: ServiceAccountAuthenticator;

  constructor(
    tokens: ServiceAccountTokens,
    private readonly objects: ServiceAccountObjectsWatcher,
  ) {
    const s = tokens.settings;
    this.inner = new ServiceAccountAuthenticator({ keys: s.keys, issuers: s.issuers, audiences: s.audiences, lookup: s.lookup, objects });
  }

  authenticate(req: AuthenticationRequest): UserInfo | undefined | Promise<UserInfo | undefined> {
    // Right after start the copies may not hold their first list yet: a token of ours waits for
    // it (bounded by the request's deadline) rather than being refused for a missing account.
    if (!this.objects.isSynced()) {
      const token = bearerToken(req.headers);
      if (token !== undefined && this.inner.recognizes(token)) return this.objects.whenSynced().then(() => this.inner.authenticate(req));
    }
    return this.inner.authenticate(req);
  }
}
