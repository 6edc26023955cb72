/**
 * The union of the configured authentication methods (Kubernetes' union authenticator): they
 * are asked in order and the first that recognizes the credential decides. Every user it
 * returns carries `system:authenticated`.
 */
import type { AuthenticationRequest, Authenticator } from './authenticator.port.js';
import { AUTHENTICATED_GROUP, type UserInfo } from './user.info.js';

/** The answer of withAuthenticatedGroup for frozen users (a method that hands out the same frozen user per credential). */
const withGroupOfFrozen = new WeakMap<UserInfo, UserInfo>();

/**
 * Adds `system:authenticated` to a user's groups when missing (a new object; the input is not
 * changed). For a frozen user the answer is made once and reused, also frozen.
 */
export function withAuthenticatedGroup(user: UserInfo): UserInfo {
  if (user.groups.includes(AUTHENTICATED_GROUP)) return user;
  if (!Object.isFrozen(user)) return { ...user, groups: [...user.groups, AUTHENTICATED_GROUP] };
  let out = withGroupOfFrozen.get(user);
  if (!out) {
    out = Object.freeze({ ...user, groups: Object.freeze([...user.groups, AUTHENTICATED_GROUP]) as string[] });
    withGroupOfFrozen.set(user, out);
  }
  return out;
}

function isPromise<T>(v: T | Promise<T>): v is Promise<T> {
  return typeof (v as { then?: unknown } | undefined)?.then === 'function';
}

/**
 * Asks each method in order; the first answer that is a user, or the first error, wins. Answers
 * synchronously as long as the methods asked do (x509 and static tokens do), so the common
 * request costs no promise; from the first method that answers with a promise on it goes async.
 */
export class AuthenticatorChain implements Authenticator {
  constructor(private readonly methods: readonly Authenticator[]) {}

  authenticate(req: AuthenticationRequest): UserInfo | undefined | Promise<UserInfo | undefined> {
    return this.from(0, req);
  }

  private from(start: number, req: AuthenticationRequest): UserInfo | undefined | Promise<UserInfo | undefined> {
    for (let i = start; i < this.methods.length; i++) {
      const answer = this.methods[i]!.authenticate(req);
      if (isPromise(answer)) return answer.then((user) => (user ? withAuthenticatedGroup(user) : this.from(i + 1, req)));
      if (answer) return withAuthenticatedGroup(answer);
    }
    return undefined;
  }
}
