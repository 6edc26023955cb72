/**
 * OpenID Connect id_token authentication (kube-apiserver's `--oidc-*`): the bearer token is a
 * JWT signed by the one trusted issuer. The issuer's discovery document and key set are fetched
 * over HTTPS and cached; every token is checked locally (signature with an allowed algorithm,
 * `iss`, `aud`, `exp`/`nbf`/`iat`, required claims), the identity provider is not asked per
 * request. A token whose `iss` is another issuer (or that is no JWT) is not this method's.
 */
import { createLocalJWKSet, decodeJwt, errors, jwtVerify, type JSONWebKeySet, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { Errors } from '@app/apimachinery';
import type { AuthenticationRequest, Authenticator } from './authenticator.port.js';
import { bearerToken } from './bearer.token.js';
import type { UserInfo } from './user.info.js';

/** What the OIDC method is configured with (the flags, parsed). */
export interface OidcOptions {
  /** `--oidc-issuer-url`: https, compared exactly with the tokens' `iss`. */
  issuerUrl: string;
  /** `--oidc-client-id`: the audience every token must name. */
  clientId: string;
  /** `--oidc-username-claim`, default `sub`. */
  usernameClaim?: string;
  /** `--oidc-username-prefix`; undefined = kube's default (see {@link oidcUsernamePrefix}). */
  usernamePrefix?: string;
  /** `--oidc-groups-claim`; undefined = no groups. */
  groupsClaim?: string;
  /** `--oidc-groups-prefix`. */
  groupsPrefix?: string;
  /** `--oidc-required-claim` key=value pairs: each claim must hold exactly that string. */
  requiredClaims?: Readonly<Record<string, string>>;
  /** `--oidc-signing-algs`, default RS256. */
  signingAlgs?: readonly string[];
  /** Fetches a JSON document over HTTPS (with `--oidc-ca-file`); injectable for tests. */
  fetchJson(url: string): Promise<unknown>;
  /** Shortest time between two key set fetches caused by an unknown key ID; default 10 s. */
  minRefetchMs?: number;
}

/**
 * The user name prefix kube-apiserver applies: `-` disables it; unset means `<issuer>#` for any
 * claim but `email`, and none for `email`.
 */
export function oidcUsernamePrefix(issuerUrl: string, claim: string, prefix: string | undefined): string {
  if (prefix === '-') return '';
  if (prefix !== undefined) return prefix;
  return claim === 'email' ? '' : `${issuerUrl}#`;
}

/** Parses `--oidc-required-claim` values (`key=value`); a value without `=` is an error. */
export function parseRequiredClaims(values: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of values) {
    for (const pair of v.split(',').filter((p) => p !== '')) {
      const eq = pair.indexOf('=');
      if (eq <= 0) throw new Error(`${JSON.stringify(pair)} is not key=value`);
      out[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
  }
  return out;
}

/** The `iss` of a JWT without verifying anything; undefined when it is no JWT. */
function unverifiedIssuer(token: string): string | undefined {
  if (token.split('.').length !== 3) return undefined;
  try {
    const iss = decodeJwt(token).iss;
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The user of a verified token's claims (pure). Throws a 401 when a claim the configuration
 * needs is missing or of the wrong type.
 */
export function oidcUserFromClaims(claims: JWTPayload, opts: Omit<OidcOptions, 'fetchJson'>): UserInfo {
  const claim = opts.usernameClaim ?? 'sub';
  const name = claims[claim];
  if (typeof name !== 'string' || name === '') throw Errors.unauthorized();
  // kube-apiserver refuses an email that the provider says is not verified.
  if (claim === 'email' && claims.email_verified !== undefined && claims.email_verified !== true) throw Errors.unauthorized();
  for (const [k, v] of Object.entries(opts.requiredClaims ?? {})) if (claims[k] !== v) throw Errors.unauthorized();
  let groups: string[] = [];
  if (opts.groupsClaim && claims[opts.groupsClaim] !== undefined) {
    const g = claims[opts.groupsClaim];
    if (typeof g === 'string') groups = [g];
    else if (Array.isArray(g) && g.every((x) => typeof x === 'string')) groups = g as string[];
    else throw Errors.unauthorized();
  }
  const user: UserInfo = {
    username: oidcUsernamePrefix(opts.issuerUrl, claim, opts.usernamePrefix) + name,
    groups: groups.map((g) => (opts.groupsPrefix ?? '') + g),
  };
  return user;
}

/** The OIDC method. */
export class OidcAuthenticator implements Authenticator {
  private keys: JWTVerifyGetKey | undefined;
  private jwksUri: string | undefined;
  private lastFetch = 0;
  private loading: Promise<void> | undefined;

  constructor(private readonly opts: OidcOptions) {}

  /** Fetches discovery (once) and the key set. */
  private load(): Promise<void> {
    this.loading ??= (async () => {
      try {
        if (!this.jwksUri) {
          const doc = (await this.opts.fetchJson(`${this.opts.issuerUrl.replace(/\/$/, '')}/.well-known/openid-configuration`)) as
            { issuer?: unknown; jwks_uri?: unknown } | undefined;
          if (doc?.issuer !== this.opts.issuerUrl) throw new Error('discovery document names another issuer');
          if (typeof doc.jwks_uri !== 'string' || !doc.jwks_uri.startsWith('https://')) throw new Error('discovery document has no https jwks_uri');
          this.jwksUri = doc.jwks_uri;
        }
        this.lastFetch = Date.now();
        const set = (await this.opts.fetchJson(this.jwksUri)) as JSONWebKeySet | undefined;
        if (!set || !Array.isArray(set.keys)) throw new Error('key set has no keys');
        this.keys = createLocalJWKSet(set);
      } finally {
        this.loading = undefined;
      }
    })();
    return this.loading;
  }

  private async verify(token: string): Promise<JWTPayload> {
    const options = {
      issuer: this.opts.issuerUrl,
      audience: this.opts.clientId,
      algorithms: [...(this.opts.signingAlgs ?? ['RS256'])],
      requiredClaims: ['exp'],
    };
    if (!this.keys) await this.load();
    try {
      return (await jwtVerify(token, this.keys!, options)).payload;
    } catch (e) {
      // A key the provider added since the last fetch: fetch again, not more often than allowed.
      const unknownKey = e instanceof errors.JWKSNoMatchingKey;
      if (!unknownKey || Date.now() - this.lastFetch < (this.opts.minRefetchMs ?? 10_000)) throw e;
      await this.load();
      return (await jwtVerify(token, this.keys!, options)).payload;
    }
  }

  async authenticate(req: AuthenticationRequest): Promise<UserInfo | undefined> {
    const token = bearerToken(req.headers);
    if (token === undefined || unverifiedIssuer(token) !== this.opts.issuerUrl) return undefined;
    let claims: JWTPayload;
    try {
      claims = await this.verify(token);
    } catch {
      // Why is not told: neither the token nor the provider's answer goes into a message.
      throw Errors.unauthorized();
    }
    return oidcUserFromClaims(claims, this.opts);
  }
}
