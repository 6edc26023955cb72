/**
 * Webhook token authentication (kube-apiserver's `--authentication-token-webhook-*`): the bearer
 * token is sent in a TokenReview (authentication.k8s.io v1 or v1beta1) to a remote service
 * named by a kubeconfig file; its answer is cached for the TTL, a denial as well as a user.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { Errors } from '@app/apimachinery';
import type { AuthenticationRequest, Authenticator } from './authenticator.port.js';
import { bearerToken } from './bearer.token.js';
import type { UserInfo } from './user.info.js';

/** The remote service of a webhook kubeconfig: where, which CA, which client certificate. */
export interface WebhookTarget {
  server: string;
  caPem?: string;
  certPem?: string;
  keyPem?: string;
}

type Doc = Record<string, unknown>;
const obj = (v: unknown): Doc => (typeof v === 'object' && v !== null ? (v as Doc) : {});

function named(list: unknown, name: unknown, what: string): Doc {
  const hit = Array.isArray(list) ? list.map(obj).find((e) => e.name === name) : undefined;
  if (!hit) throw new Error(`has no ${what} named ${JSON.stringify(name)}`);
  return hit;
}

/** A PEM from `<key>-data` (base64) or `<key>` (a file, relative to the kubeconfig's directory). */
function pem(entry: Doc, key: string, dir: string): string | undefined {
  const data = entry[`${key}-data`];
  if (typeof data === 'string' && data !== '') return Buffer.from(data, 'base64').toString('utf8');
  const file = entry[key];
  if (typeof file === 'string' && file !== '') return readFileSync(path.resolve(dir, file), 'utf8');
  return undefined;
}

/**
 * Reads a webhook kubeconfig: the current context's cluster (`server`, `certificate-authority`
 * or `-data`) and user (`client-certificate`/`client-key` or `-data`); without a current context,
 * the first cluster and user. Throws with what is missing.
 */
export function parseWebhookKubeconfig(text: string, dir: string): WebhookTarget {
  const doc = obj(parseYaml(text));
  let cluster: Doc;
  let user: Doc;
  const current = doc['current-context'];
  if (typeof current === 'string' && current !== '') {
    const ctx = obj(named(doc.contexts, current, 'context').context);
    cluster = obj(named(doc.clusters, ctx.cluster, 'cluster').cluster);
    user = ctx.user === undefined ? {} : obj(named(doc.users, ctx.user, 'user').user);
  } else {
    cluster = obj(Array.isArray(doc.clusters) ? obj(doc.clusters[0]).cluster : undefined);
    user = obj(Array.isArray(doc.users) ? obj(doc.users[0]).user : undefined);
  }
  const server = cluster.server;
  if (typeof server !== 'string' || !server.startsWith('https://')) throw new Error('the cluster has no https server URL');
  const target: WebhookTarget = {
    server,
    caPem: pem(cluster, 'certificate-authority', dir),
    certPem: pem(user, 'client-certificate', dir),
    keyPem: pem(user, 'client-key', dir),
  };
  if ((target.certPem === undefined) !== (target.keyPem === undefined)) throw new Error('the user needs both a client certificate and a client key');
  return target;
}

/** The `status` of a TokenReview answer. */
export interface TokenReviewStatus {
  authenticated?: boolean;
  user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  audiences?: string[];
  error?: string;
}

/**
 * The user of a TokenReview status, or undefined for a denial (pure). `wanted` are the audiences
 * the server asked about: an answer naming audiences must share one with them (an answer without
 * audiences is valid for the API server).
 */
export function userFromTokenReview(status: TokenReviewStatus, wanted: readonly string[]): UserInfo | undefined {
  if (status.authenticated !== true) return undefined;
  const u = status.user;
  if (!u || typeof u.username !== 'string' || u.username === '') return undefined;
  if (wanted.length > 0 && Array.isArray(status.audiences) && !status.audiences.some((a) => wanted.includes(a))) return undefined;
  const user: UserInfo = { username: u.username, groups: Array.isArray(u.groups) ? u.groups.filter((g) => typeof g === 'string') : [] };
  if (typeof u.uid === 'string' && u.uid !== '') user.uid = u.uid;
  if (u.extra && typeof u.extra === 'object') user.extra = Object.fromEntries(Object.entries(u.extra).filter(([, v]) => Array.isArray(v)));
  return user;
}

/** What the webhook method is configured with. */
export interface WebhookOptions {
  /** `authentication.k8s.io/<version>` of the TokenReviews sent and expected back. */
  version: 'v1' | 'v1beta1';
  /** How long an answer is reused, in ms (0: not cached). */
  cacheTtlMs: number;
  /** Audiences sent in `spec.audiences` (empty: none sent, none checked). */
  audiences?: readonly string[];
  /** Posts a TokenReview and returns the HTTP status and the parsed answer. */
  post(review: unknown): Promise<{ status: number; body: unknown }>;
  /** The clock; injectable for tests. */
  now?: () => number;
}

/** Entries kept at most (oldest dropped first). */
const MAX_CACHE_ENTRIES = 10_000;

/** The webhook method. */
export class WebhookTokenAuthenticator implements Authenticator {
  /** sha256(token) -> answer and its expiry; the token itself is never kept. */
  private readonly cache = new Map<string, { user: UserInfo | undefined; expires: number }>();

  constructor(private readonly opts: WebhookOptions) {}

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  private async review(token: string): Promise<UserInfo | undefined> {
    const audiences = [...(this.opts.audiences ?? [])];
    const review = {
      apiVersion: `authentication.k8s.io/${this.opts.version}`,
      kind: 'TokenReview',
      metadata: { creationTimestamp: null },
      spec: { token, ...(audiences.length > 0 ? { audiences } : {}) },
    };
    const res = await this.opts.post(review);
    const body = obj(res.body);
    if (res.status < 200 || res.status >= 300 || body.apiVersion !== review.apiVersion || body.kind !== 'TokenReview') {
      throw new Error(`webhook answered ${res.status} without a ${review.apiVersion} TokenReview`);
    }
    return userFromTokenReview(obj(body.status) as TokenReviewStatus, audiences);
  }

  async authenticate(req: AuthenticationRequest): Promise<UserInfo | undefined> {
    const token = bearerToken(req.headers);
    if (token === undefined) return undefined;
    const key = createHash('sha256').update(token).digest('base64');
    const hit = this.cache.get(key);
    const now = this.now();
    let user: UserInfo | undefined;
    if (hit && hit.expires > now) {
      user = hit.user;
    } else {
      try {
        user = await this.review(token);
      } catch {
        // An unreachable or broken webhook is a 401 for this request, and not remembered.
        throw Errors.unauthorized();
      }
      if (this.opts.cacheTtlMs > 0) {
        this.cache.delete(key);
        if (this.cache.size >= MAX_CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
        this.cache.set(key, { user, expires: now + this.opts.cacheTtlMs });
      }
    }
    // A denial is left to the last token method, which makes it a 401.
    return user ? { ...user, groups: [...user.groups] } : undefined;
  }
}
