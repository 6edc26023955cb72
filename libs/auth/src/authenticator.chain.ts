/**
 * The union of the configured authentication methods (Kubernetes' union authenticator): they
 * are asked in order and the first that recognizes the credential decides. Every user it
 * returns carries `system:authenticated`.
 */
import type { AuthenticationRequest, Authenticator } from './authenticator.port.js';
import { AUTHENTICATED_GROUP, type UserInfo } from './user.info.js';

/** Adds `system:authenticated` to a user's groups when missing (a new object; the input is not changed). */
export function withAuthenticatedGroup(user: UserInfo): UserInfo {
  return user.groups.includes(AUTHENTICATED_GROUP) ? user : { ...user, groups: [...user.groups, AUTHENTICATED_GROUP] };
}

/** Asks each method in order; the first answer that is a user, or the first error, wins. */
export class AuthenticatorChain implements Authenticator {
  constructor(private readonly methods: readonly Authenticator[]) {}

  async authenticate(req: AuthenticationRequest): Promise<UserInfo | undefined> {
    for (const m of this.methods) {
      const user = await m.authenticate(req);
      if (user) return withAuthenticatedGroup(user);
    }
    return undefined;
  }
}
