/**
 * Bootstrap tokens (conventions.md "Bootstrap tokens"; Kubernetes' k8s.io/cluster-bootstrap
 * token/api and secret utilities): the token format, the Secret that backs a token and every
 * rule of its keys, shared by the authenticator, the token cleaner and the bootstrap signer.
 * Pure functions: the Secret is a stored object (data values base64), the clock is a parameter.
 */
import { timingSafeEqual } from 'node:crypto';
import type { KubeObject } from '@app/apimachinery';
import type { UserInfo } from './user.info.js';

/** The Secret type of a bootstrap token. */
export const BOOTSTRAP_TOKEN_SECRET_TYPE = 'bootstrap.kubernetes.io/token';
/** The namespace of the token Secrets. */
export const BOOTSTRAP_TOKEN_NAMESPACE = 'kube-system';
/** Token Secrets are named `bootstrap-token-<token-id>`. */
export const BOOTSTRAP_TOKEN_SECRET_PREFIX = 'bootstrap-token-';
/** User names of bootstrap tokens are `system:bootstrap:<token-id>`. */
export const BOOTSTRAP_USER_PREFIX = 'system:bootstrap:';
/** The group of every bootstrap token user. */
export const BOOTSTRAP_DEFAULT_GROUP = 'system:bootstrappers';

/** The keys of a token Secret's data. */
export const BootstrapTokenKeys = {
  id: 'token-id',
  secret: 'token-secret',
  description: 'description',
  expiration: 'expiration',
  usageAuthentication: 'usage-bootstrap-authentication',
  usageSigning: 'usage-bootstrap-signing',
  extraGroups: 'auth-extra-groups',
} as const;

const TOKEN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
const TOKEN_ID = /^[a-z0-9]{6}$/;
const TOKEN_SECRET = /^[a-z0-9]{16}$/;
const GROUP = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;
// RFC 3339 as Go's time.Parse(time.RFC3339) accepts it: a date, T, a time with optional
// fraction, and Z or a numeric offset (Date.parse alone would take many other forms).
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-](\d{2}):(\d{2}))$/;

/** Milliseconds since the epoch of an RFC 3339 time, or NaN (out-of-range fields too, as Go refuses them). */
export function parseRfc3339(s: string): number {
  const m = RFC3339.exec(s);
  if (!m) return NaN;
  const [y, mo, d, h, mi, sec] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || d > new Date(Date.UTC(y, mo, 0)).getUTCDate() || h > 23 || mi > 59 || sec > 59) return NaN;
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return NaN;
  return Date.parse(s);
}

/** The two halves of a token `<id>.<secret>`, or undefined when it is not of the bootstrap form. */
export function parseBootstrapToken(token: string): { id: string; secret: string } | undefined {
  const m = TOKEN.exec(token);
  return m ? { id: m[1]!, secret: m[2]! } : undefined;
}

/** The token ID a Secret name stands for (`bootstrap-token-<id>`), or undefined. */
export function tokenIdOfSecretName(name: string): string | undefined {
  if (!name.startsWith(BOOTSTRAP_TOKEN_SECRET_PREFIX)) return undefined;
  const id = name.slice(BOOTSTRAP_TOKEN_SECRET_PREFIX.length);
  return TOKEN_ID.test(id) ? id : undefined;
}

/** Whether an object is a Secret of the bootstrap token type. */
export function isBootstrapTokenSecret(obj: KubeObject): boolean {
  return obj.type === BOOTSTRAP_TOKEN_SECRET_TYPE;
}

/** One data key of a Secret, decoded from base64 to text; '' when absent or not a string. */
export function secretData(secret: KubeObject, key: string): string {
  const data = secret.data as Record<string, unknown> | undefined;
  const v = data && typeof data === 'object' ? data[key] : undefined;
  return typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : '';
}

/**
 * Milliseconds until the token's `expiration` (RFC 3339) passes: undefined when it has none,
 * 0 when it has passed or does not parse (kube treats an unparsable expiration as expired).
 */
export function timeToExpiry(secret: KubeObject, nowMs: number): number | undefined {
  const raw = secretData(secret, BootstrapTokenKeys.expiration);
  if (raw === '') return undefined;
  const at = parseRfc3339(raw);
  if (Number.isNaN(at)) return 0;
  return Math.max(0, at - nowMs);
}

/** Whether the token of a Secret has expired at `nowMs`. */
export function isExpired(secret: KubeObject, nowMs: number): boolean {
  return timeToExpiry(secret, nowMs) === 0;
}

/** Whether a group may be given by `auth-extra-groups` (prefix `system:bootstrappers:`). */
export function isValidBootstrapGroup(group: string): boolean {
  return GROUP.test(group);
}

/**
 * The groups of a token: `system:bootstrappers` plus the comma list of `auth-extra-groups`,
 * deduplicated and sorted (as kube's GetGroups); undefined when any extra group is invalid (the
 * token is then refused).
 */
export function bootstrapGroups(secret: KubeObject): string[] | undefined {
  const groups = new Set([BOOTSTRAP_DEFAULT_GROUP]);
  const extra = secretData(secret, BootstrapTokenKeys.extraGroups);
  if (extra !== '') {
    for (const g of extra.split(',')) {
      if (!isValidBootstrapGroup(g)) return undefined;
      groups.add(g);
    }
  }
  return [...groups].sort();
}

/** Constant-time equality of two strings (length leaks, content does not). */
function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Why a token Secret did not authenticate a token (for a log line; never holds the secret). */
export type BootstrapTokenRefusal = 'deleted' | 'type' | 'secret' | 'id' | 'expired' | 'usage' | 'groups';

/**
 * Authenticates the token `<id>.<secret>` against the Secret `bootstrap-token-<id>` (the caller
 * found it by name): the Secret must not be being deleted, must be of the bootstrap type, its
 * `token-secret` must equal the secret (constant time) and `token-id` the ID, it must not have
 * expired, `usage-bootstrap-authentication` must be "true" and every extra group valid. The user
 * is `system:bootstrap:<id>` in `system:bootstrappers` and the extra groups.
 */
export function authenticateWithSecret(
  token: { id: string; secret: string },
  secret: KubeObject,
  nowMs: number,
): { user: UserInfo } | { refused: BootstrapTokenRefusal } {
  if (secret.metadata.deletionTimestamp) return { refused: 'deleted' };
  if (!isBootstrapTokenSecret(secret) || !secret.data) return { refused: 'type' };
  if (!sameSecret(secretData(secret, BootstrapTokenKeys.secret), token.secret)) return { refused: 'secret' };
  if (secretData(secret, BootstrapTokenKeys.id) !== token.id) return { refused: 'id' };
  if (isExpired(secret, nowMs)) return { refused: 'expired' };
  if (secretData(secret, BootstrapTokenKeys.usageAuthentication) !== 'true') return { refused: 'usage' };
  const groups = bootstrapGroups(secret);
  if (!groups) return { refused: 'groups' };
  return { user: { username: BOOTSTRAP_USER_PREFIX + token.id, groups } };
}

/**
 * The token a Secret offers for signing `cluster-info` (kube's validateSecretForSigning): a
 * bootstrap Secret named `bootstrap-token-<id>` whose `token-id` is that ID and whose
 * `token-secret` is well formed, not expired and not being deleted, with
 * `usage-bootstrap-signing` "true". Undefined otherwise.
 */
export function signingToken(secret: KubeObject, nowMs: number): { id: string; secret: string } | undefined {
  if (!isBootstrapTokenSecret(secret) || secret.metadata.deletionTimestamp) return undefined;
  const id = tokenIdOfSecretName(secret.metadata.name ?? '');
  if (id === undefined || secretData(secret, BootstrapTokenKeys.id) !== id) return undefined;
  const tokenSecret = secretData(secret, BootstrapTokenKeys.secret);
  if (!TOKEN_SECRET.test(tokenSecret)) return undefined;
  if (isExpired(secret, nowMs)) return undefined;
  if (secretData(secret, BootstrapTokenKeys.usageSigning) !== 'true') return undefined;
  return { id, secret: tokenSecret };
}
