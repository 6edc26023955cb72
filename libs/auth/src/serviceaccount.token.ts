/**
 * Service-account tokens (Kubernetes' serviceaccount JWTs): signing and verifying with jose,
 * the claims of bound tokens (TokenRequest) and legacy Secret tokens, and the identity they
 * carry. Pure apart from the crypto: which objects still exist is asked through a
 * {@link ServiceAccountLookup} the caller keeps current.
 *
 * Only asymmetric algorithms the keys allow are accepted (RS*, PS* for RSA keys; ES256/384/512
 * by curve for EC keys): a token with `alg: none` or an HMAC algorithm never verifies, whatever
 * key it names, so a public key cannot be used as an HMAC secret.
 */
import { createHash, createPrivateKey, createPublicKey, randomUUID, X509Certificate, type KeyObject } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { Errors } from '@app/apimachinery';
import type { AuthenticationRequest, Authenticator } from './authenticator.port.js';
import { bearerToken } from './bearer.token.js';
import type { UserInfo } from './user.info.js';

/** The issuer of legacy (Secret-based) tokens, as Kubernetes signs them. */
export const LEGACY_SA_ISSUER = 'kubernetes/serviceaccount';
/** kube-apiserver's default `--service-account-issuer` here (the in-cluster name of the API). */
export const DEFAULT_SA_ISSUER = 'https://kubernetes.default.svc.cluster.local';
/** The prefix of every service-account user name. */
export const SA_USER_PREFIX = 'system:serviceaccount:';
/** The group of every service account, and the prefix of its namespace's group. */
export const SA_GROUP = 'system:serviceaccounts';

/** Extra keys a service-account user carries (Kubernetes' serviceaccount package). */
export const SA_EXTRA = {
  credentialId: 'authentication.kubernetes.io/credential-id',
  podName: 'authentication.kubernetes.io/pod-name',
  podUid: 'authentication.kubernetes.io/pod-uid',
} as const;

/** The legacy token claims (flat, prefixed), as Kubernetes' legacy token generator writes them. */
const LEGACY = {
  namespace: 'kubernetes.io/serviceaccount/namespace',
  secretName: 'kubernetes.io/serviceaccount/secret.name',
  saName: 'kubernetes.io/serviceaccount/service-account.name',
  saUid: 'kubernetes.io/serviceaccount/service-account.uid',
} as const;

/** The user name of a service account. */
export function serviceAccountUsername(namespace: string, name: string): string {
  return `${SA_USER_PREFIX}${namespace}:${name}`;
}

/** The groups of a service account's user (its namespace's and every service account's). */
export function serviceAccountGroups(namespace: string): string[] {
  return [SA_GROUP, `${SA_GROUP}:${namespace}`];
}

/** The algorithms a verification key allows (Kubernetes: by key type and curve). */
export function algorithmsForKey(key: KeyObject): string[] {
  if (key.asymmetricKeyType === 'rsa') return ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];
  if (key.asymmetricKeyType === 'rsa-pss') return ['PS256', 'PS384', 'PS512'];
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (curve === 'prime256v1') return ['ES256'];
    if (curve === 'secp384r1') return ['ES384'];
    if (curve === 'secp521r1') return ['ES512'];
  }
  return [];
}

/** The algorithm a signing key signs with: RS256 for RSA, ES256/384/512 by curve for EC. */
export function signingAlgorithm(key: KeyObject): string {
  const algs = algorithmsForKey(key);
  if (algs.length === 0)
    throw new Error(`a ${key.asymmetricKeyType ?? 'symmetric'} key cannot sign service-account tokens (RSA or ECDSA P-256/P-384/P-521 only)`);
  return algs[0];
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

/**
 * The public keys of a PEM file (`--service-account-key-file`): public keys, private keys (their
 * public half) and certificates (their subject key), in any number. Throws when the text holds
 * no key or a block that is not a usable RSA or EC key.
 */
export function parsePublicKeys(pem: string): KeyObject[] {
  const out: KeyObject[] = [];
  for (const m of pem.matchAll(PEM_BLOCK)) {
    const label = m[1];
    let key: KeyObject;
    if (label === 'CERTIFICATE') key = new X509Certificate(m[0]).publicKey;
    else if (label.includes('PRIVATE KEY')) key = createPublicKey(createPrivateKey(m[0]));
    else if (label.includes('PUBLIC KEY')) key = createPublicKey(m[0]);
    else continue;
    if (algorithmsForKey(key).length === 0) throw new Error(`a ${key.asymmetricKeyType} key cannot verify service-account tokens (RSA or ECDSA only)`);
    out.push(key);
  }
  if (out.length === 0) throw new Error('no PEM public key, private key or certificate found');
  return out;
}

/** The private key of a PEM file (`--service-account-signing-key-file`); throws when there is none. */
export function parseSigningKey(pem: string): KeyObject {
  const block = [...pem.matchAll(PEM_BLOCK)].find((m) => m[1].includes('PRIVATE KEY'));
  if (!block) throw new Error('no PEM private key found');
  const key = createPrivateKey(block[0]);
  signingAlgorithm(key);
  return key;
}

/** An object a bound token names: the service account, a Secret or a Pod. */
export interface BoundRef {
  name: string;
  uid: string;
}

/** The `kubernetes.io` claim of a bound token. */
export interface BoundClaim {
  namespace: string;
  serviceaccount: BoundRef;
  secret?: BoundRef;
  pod?: BoundRef;
}

/** What a bound token is issued for (TokenRequest). */
export interface BoundTokenRequest {
  issuer: string;
  audiences: readonly string[];
  /** Lifetime in seconds from `now`. */
  expirationSeconds: number;
  namespace: string;
  serviceAccount: BoundRef;
  secret?: BoundRef;
  pod?: BoundRef;
  now: Date;
}

/** Signs a bound token; returns it with its expiry. */
export async function signBoundToken(key: KeyObject, req: BoundTokenRequest): Promise<{ token: string; expiresAt: Date }> {
  const iat = Math.floor(req.now.getTime() / 1000);
  const exp = iat + req.expirationSeconds;
  const claim: BoundClaim = { namespace: req.namespace, serviceaccount: req.serviceAccount };
  if (req.secret) claim.secret = req.secret;
  if (req.pod) claim.pod = req.pod;
  const token = await new SignJWT({ 'kubernetes.io': claim as unknown as Record<string, unknown> })
    .setProtectedHeader({ alg: signingAlgorithm(key), kid: keyId(key) })
    .setIssuer(req.issuer)
    .setSubject(serviceAccountUsername(req.namespace, req.serviceAccount.name))
    .setAudience([...req.audiences])
    .setIssuedAt(iat)
    .setNotBefore(iat)
    .setExpirationTime(exp)
    .setJti(randomUUID())
    .sign(key);
  return { token, expiresAt: new Date(exp * 1000) };
}

/** Signs a legacy token for the Secret `secretName` of a service account (no expiry, as Kubernetes' legacy tokens). */
export async function signLegacyToken(key: KeyObject, req: { namespace: string; serviceAccount: BoundRef; secretName: string }): Promise<string> {
  return new SignJWT({
    [LEGACY.namespace]: req.namespace,
    [LEGACY.secretName]: req.secretName,
    [LEGACY.saName]: req.serviceAccount.name,
    [LEGACY.saUid]: req.serviceAccount.uid,
  })
    .setProtectedHeader({ alg: signingAlgorithm(key), kid: keyId(key) })
    .setIssuer(LEGACY_SA_ISSUER)
    .setSubject(serviceAccountUsername(req.namespace, req.serviceAccount.name))
    .sign(key);
}

/** The key ID Kubernetes puts in its tokens: the base64url SHA-256 of the public key's DER. */
export function keyId(key: KeyObject): string {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  return createHash('sha256')
    .update(pub.export({ type: 'spki', format: 'der' }))
    .digest('base64url');
}

/** What authentication needs to know about existing objects (kept current by the caller, no I/O). */
export interface ServiceAccountLookup {
  /** The uid of a live (not terminating) object, undefined when it is absent or terminating. */
  serviceAccountUid(namespace: string, name: string): string | undefined;
  secretUid(namespace: string, name: string): string | undefined;
  /** The SHA-256 (hex) of a live Secret's `data.token`, undefined when it has none. */
  secretTokenHash(namespace: string, name: string): string | undefined;
  /** undefined when Pods are not served or the Pod is absent. */
  podUid(namespace: string, name: string): string | undefined;
}

/** What the service-account method is configured with (the flags, parsed). */
export interface ServiceAccountAuthOptions {
  /** Keys tokens may be signed with (`--service-account-key-file` and the signing key). */
  keys: readonly KeyObject[];
  /** `--service-account-issuer` values: each is accepted. */
  issuers: readonly string[];
  /** `--api-audiences`: a bound token must name one of them (or of the request's audiences). */
  audiences: readonly string[];
  /** `--service-account-lookup`: legacy tokens need their Secret and service account to exist. */
  lookup: boolean;
  objects: ServiceAccountLookup;
  /** How long a verified signature is remembered (ms); default 10 s. */
  cacheTtlMs?: number;
  now?: () => number;
}

/** The verified claims of a token and how they were verified. */
interface Verified {
  payload: JWTPayload;
  legacy: boolean;
  /** When the cached verification stops counting (ms since the epoch). */
  until: number;
  /** The user, built on first use; the existence checks still run on every request. */
  user?: UserInfo;
}

const CACHE_MAX = 10_000;

/** The issuer a JWT claims, unverified; undefined when it is no JWT. */
function claimedIssuer(token: string): string | undefined {
  if (token.split('.').length !== 3) return undefined;
  try {
    const iss = decodeJwt(token).iss;
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `v` is a {name, uid} pair of non-empty strings. */
function isRef(v: unknown): v is BoundRef {
  const r = v as BoundRef | undefined;
  return typeof r?.name === 'string' && r.name !== '' && typeof r.uid === 'string' && r.uid !== '';
}

/**
 * The service-account token method. A bearer token whose unverified `iss` is one of ours (or the
 * legacy issuer) is this method's: it is then either accepted or refused with a 401, never
 * left to a later method or to anonymous access.
 */
export class ServiceAccountAuthenticator implements Authenticator {
  private readonly cache = new Map<string, Verified>();
  private readonly algorithms: string[];
  private readonly now: () => number;

  constructor(private readonly opts: ServiceAccountAuthOptions) {
    this.algorithms = [...new Set(opts.keys.flatMap(algorithmsForKey))];
    this.now = opts.now ?? Date.now;
  }

  /** Whether `token` claims an issuer this method verifies. */
  recognizes(token: string): boolean {
    const iss = claimedIssuer(token);
    return iss !== undefined && (iss === LEGACY_SA_ISSUER || this.opts.issuers.includes(iss));
  }

  /**
   * A token verified in the last seconds is accepted synchronously from the cache (keyed by the
   * token's SHA-256): the audience and existence checks run again, the signature does not.
   * Refusals are rejected promises.
   */
  authenticate(req: AuthenticationRequest): UserInfo | undefined | Promise<UserInfo | undefined> {
    const token = bearerToken(req.headers);
    if (token === undefined) return undefined;
    const hash = tokenHash(token);
    const now = this.now();
    const hit = this.cache.get(hash);
    if (hit && hit.until > now) {
      try {
        return this.userOf(hit, req, token);
      } catch (e) {
        // A refusal stays a rejected promise, as for a token verified now.
        return Promise.reject(e as Error);
      }
    }
    if (!this.recognizes(token)) return undefined;
    if (hit) this.cache.delete(hash);
    return this.verifyAndCache(token, hash, now).then((v) => this.userOf(v, req, token));
  }

  /** The user of verified claims, after the per-request checks; 401 when one fails. */
  private userOf(v: Verified, req: AuthenticationRequest, token: string): UserInfo {
    if (!v.legacy) {
      // Checked per request, not cached: a TokenReview may ask for other audiences.
      const wanted = req.audiences && req.audiences.length > 0 ? req.audiences : this.opts.audiences;
      const aud = typeof v.payload.aud === 'string' ? [v.payload.aud] : (v.payload.aud ?? []);
      if (!aud.some((a) => wanted.includes(a))) throw Errors.unauthorized();
    }
    const user = v.legacy ? this.legacyUser(v.payload, token) : this.boundUser(v.payload);
    if (!user) throw Errors.unauthorized();
    // Frozen, so the chain adds system:authenticated once per cached user, not per request.
    v.user ??= Object.freeze(user);
    return v.user;
  }

  /** Verifies the signature and time claims and caches the result. */
  private async verifyAndCache(token: string, hash: string, now: number): Promise<Verified> {
    let v: Verified;
    try {
      v = await this.verify(token, now);
    } catch {
      // Which check failed is not told: the token must not be probed through the message.
      throw Errors.unauthorized();
    }
    if (this.cache.size >= CACHE_MAX) this.cache.clear();
    this.cache.set(hash, v);
    return v;
  }

  private async verify(token: string, now: number): Promise<Verified> {
    const alg = decodeProtectedHeader(token).alg;
    if (typeof alg !== 'string' || !this.algorithms.includes(alg)) throw new Error('algorithm not allowed');
    const iss = claimedIssuer(token)!;
    const legacy = iss === LEGACY_SA_ISSUER;
    const options = {
      algorithms: [alg],
      issuer: legacy ? LEGACY_SA_ISSUER : [...this.opts.issuers],
      currentDate: new Date(now),
      requiredClaims: legacy ? ['sub'] : ['sub', 'exp', 'aud'],
    };
    let payload: JWTPayload | undefined;
    for (const key of this.opts.keys) {
      if (!algorithmsForKey(key).includes(alg)) continue;
      try {
        payload = (await jwtVerify(token, key, options)).payload;
        break;
      } catch (e) {
        // Another key may have signed it; a claim failure is the same with every key.
        if ((e as { code?: string }).code !== 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED') throw e;
      }
    }
    if (!payload) throw new Error('no key verifies the signature');
    const ttl = this.opts.cacheTtlMs ?? 10_000;
    const until = payload.exp !== undefined ? Math.min(now + ttl, payload.exp * 1000) : now + ttl;
    return { payload, legacy, until };
  }

  /** The user of a bound token whose service account (and bound object) still exist with their uids. */
  private boundUser(p: JWTPayload): UserInfo | undefined {
    const k = p['kubernetes.io'] as Partial<BoundClaim> | undefined;
    if (typeof k?.namespace !== 'string' || !isRef(k.serviceaccount)) return undefined;
    const o = this.opts.objects;
    const ns = k.namespace;
    if (o.serviceAccountUid(ns, k.serviceaccount.name) !== k.serviceaccount.uid) return undefined;
    const extra: Record<string, string[]> = {};
    if (typeof p.jti === 'string') extra[SA_EXTRA.credentialId] = [`JTI=${p.jti}`];
    if (k.secret !== undefined) {
      if (!isRef(k.secret) || o.secretUid(ns, k.secret.name) !== k.secret.uid) return undefined;
    }
    if (k.pod !== undefined) {
      if (!isRef(k.pod) || o.podUid(ns, k.pod.name) !== k.pod.uid) return undefined;
      extra[SA_EXTRA.podName] = [k.pod.name];
      extra[SA_EXTRA.podUid] = [k.pod.uid];
    }
    return saUser(ns, k.serviceaccount.name, k.serviceaccount.uid, extra);
  }

  /** The user of a legacy token; with lookup, its Secret (holding this very token) and service account must exist. */
  private legacyUser(p: JWTPayload, token: string): UserInfo | undefined {
    const ns = p[LEGACY.namespace];
    const name = p[LEGACY.saName];
    const uid = p[LEGACY.saUid];
    const secret = p[LEGACY.secretName];
    if (typeof ns !== 'string' || typeof name !== 'string' || typeof uid !== 'string' || typeof secret !== 'string') return undefined;
    if (p.sub !== serviceAccountUsername(ns, name)) return undefined;
    if (this.opts.lookup) {
      const o = this.opts.objects;
      if (o.serviceAccountUid(ns, name) !== uid) return undefined;
      // The Secret must still hold this token (Kubernetes compares it with the server's copy).
      if (o.secretTokenHash(ns, secret) !== tokenHash(token)) return undefined;
    }
    return saUser(ns, name, uid, {});
  }
}

/** The SHA-256 (hex) of a token: the cache key, and how a legacy Secret's token is compared. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** The identity of a service account (Kubernetes' serviceaccount.UserInfo). */
export function saUser(namespace: string, name: string, uid: string, extra: Record<string, string[]>): UserInfo {
  const user: UserInfo = { username: serviceAccountUsername(namespace, name), uid, groups: serviceAccountGroups(namespace) };
  if (Object.keys(extra).length > 0) user.extra = extra;
  return user;
}
