/**
 * Impersonation (conventions "Authentication"; kube-apiserver's WithImpersonation filter): a
 * request carrying `Impersonate-User` (with optional `Impersonate-Group`, `Impersonate-Uid` and
 * `Impersonate-Extra-<key>` headers) acts as that user once the authorizer allows the
 * authenticated user the `impersonate` verb on each of them:
 * - users (or serviceaccounts `<ns>/<name>` for `system:serviceaccount:<ns>:<name>`), groups:
 *   core group; userextras/<key> and uids: authentication.k8s.io; each by resource name.
 * Groups or extras without a user are a 400. A denial is the Forbidden of the first check that
 * failed. The impersonated user gets `system:authenticated` (`system:unauthenticated` for
 * `system:anonymous`), and a service account without explicit groups gets its two groups.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Errors } from '@app/apimachinery';
import { ANONYMOUS_USER, AUTHENTICATED_GROUP, serviceAccountGroups, UNAUTHENTICATED_GROUP, type UserInfo } from '@app/auth';
import { forbiddenError, type AuthorizationAttributes, type Authorizer } from '@app/authz';

const SA_PREFIX = 'system:serviceaccount:';
const EXTRA_PREFIX = 'impersonate-extra-';

/** The impersonation a request asks for, or undefined when it carries no Impersonate-* header. */
export interface ImpersonationRequest {
  user?: string;
  groups: string[];
  uid?: string;
  extra: Record<string, string[]>;
}

function values(v: string | string[] | undefined): string[] {
  if (v === undefined) return [];
  return Array.isArray(v) ? v : [v];
}

/** Reads the Impersonate-* headers (extra keys percent-decoded and lower-cased, as HTTP header names are). */
export function readImpersonation(headers: IncomingHttpHeaders): ImpersonationRequest | undefined {
  let any = false;
  const out: ImpersonationRequest = { groups: [], extra: {} };
  for (const [name, v] of Object.entries(headers)) {
    if (!name.startsWith('impersonate-')) continue;
    any = true;
    if (name === 'impersonate-user') out.user = values(v)[0];
    else if (name === 'impersonate-group') out.groups.push(...values(v).flatMap((g) => g.split(',').map((x) => x.trim())));
    else if (name === 'impersonate-uid') out.uid = values(v)[0];
    else if (name.startsWith(EXTRA_PREFIX)) {
      let key = name.slice(EXTRA_PREFIX.length);
      try {
        key = decodeURIComponent(key);
      } catch {
        throw Errors.badRequest(`invalid impersonation extra key ${JSON.stringify(key)}`);
      }
      (out.extra[key] ??= []).push(...values(v));
    }
  }
  return any ? out : undefined;
}

function check(
  user: UserInfo,
  resource: string,
  name: string,
  opts: { apiGroup?: string; namespace?: string; subresource?: string } = {},
): AuthorizationAttributes {
  return {
    user,
    verb: 'impersonate',
    isResourceRequest: true,
    path: '',
    apiGroup: opts.apiGroup ?? '',
    apiVersion: '',
    resource,
    subresource: opts.subresource ?? '',
    namespace: opts.namespace ?? '',
    name,
  };
}

/**
 * The user `requester` acts as after impersonation, each part authorized by `authorizer`.
 * Throws 400 for malformed headers and the 403 of the first denied check.
 */
export async function impersonate(requester: UserInfo, wanted: ImpersonationRequest, authorizer: Authorizer): Promise<UserInfo> {
  if (wanted.user === undefined || wanted.user === '') {
    const what = [...(wanted.groups.length ? ['groups'] : []), ...(Object.keys(wanted.extra).length ? ['extra'] : []), ...(wanted.uid ? ['uid'] : [])];
    throw Errors.badRequest(`requested [${what.join(' ')}] without impersonating a user`);
  }
  const username = wanted.user;
  const checks: AuthorizationAttributes[] = [];
  let saGroups: string[] = [];
  if (username.startsWith(SA_PREFIX)) {
    const rest = username.slice(SA_PREFIX.length);
    const i = rest.indexOf(':');
    if (i <= 0 || i === rest.length - 1) throw Errors.badRequest(`invalid service account username ${JSON.stringify(username)}`);
    const ns = rest.slice(0, i);
    checks.push(check(requester, 'serviceaccounts', rest.slice(i + 1), { namespace: ns }));
    saGroups = serviceAccountGroups(ns);
  } else {
    checks.push(check(requester, 'users', username));
  }
  for (const g of wanted.groups) checks.push(check(requester, 'groups', g));
  for (const [key, vals] of Object.entries(wanted.extra)) {
    for (const v of vals) checks.push(check(requester, 'userextras', v, { apiGroup: 'authentication.k8s.io', subresource: key }));
  }
  if (wanted.uid) checks.push(check(requester, 'uids', wanted.uid, { apiGroup: 'authentication.k8s.io' }));
  for (const attrs of checks) {
    const d = await authorizer.authorize(attrs);
    if (d.decision !== 'Allow') throw forbiddenError(attrs, d.reason);
  }
  const groups = wanted.groups.length ? [...wanted.groups] : saGroups;
  const always = username === ANONYMOUS_USER ? UNAUTHENTICATED_GROUP : AUTHENTICATED_GROUP;
  if (!groups.includes(always)) groups.push(always);
  const user: UserInfo = { username, groups };
  if (wanted.uid) user.uid = wanted.uid;
  if (Object.keys(wanted.extra).length) user.extra = wanted.extra;
  return user;
}
