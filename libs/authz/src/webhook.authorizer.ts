/**
 * The Webhook authorization mode (kube-apiserver's `--authorization-mode=Webhook`): each
 * request's attributes go in a SubjectAccessReview (authorization.k8s.io v1 or v1beta1) to a
 * remote service; its `status.allowed` allows, `status.denied` denies, and neither leaves the
 * request to the next mode. Answers are cached by the review's spec: an allow for
 * `authorizedTtlMs`, anything else for `unauthorizedTtlMs`. A service that cannot be reached
 * or answers with something other than a SubjectAccessReview makes no decision and reports an
 * error: unless an earlier mode allowed it, the request fails with 500, as kube-apiserver's does.
 */
import type { AuthorizationAttributes, AuthorizationDecision, Authorizer } from './authorizer.port.js';

export interface WebhookAuthorizerOptions {
  /** `authorization.k8s.io/<version>` of the reviews sent and expected back. */
  version: 'v1' | 'v1beta1';
  /** How long an allow is reused, in ms (0: not cached). */
  authorizedTtlMs: number;
  /** How long a denial or a review without an opinion is reused, in ms (0: not cached). */
  unauthorizedTtlMs: number;
  /** Posts a review and returns the HTTP status and the parsed answer. */
  post(review: unknown): Promise<{ status: number; body: unknown }>;
  /** The clock; injectable for tests. */
  now?: () => number;
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});

/** Entries kept at most (oldest dropped first). */
const MAX_CACHE_ENTRIES = 10_000;

/** kube's label operators as metav1.LabelSelectorRequirement operators; `gt` and `lt` have none. */
const LABEL_OPERATORS: Record<string, string | undefined> = {
  '=': 'In',
  '==': 'In',
  in: 'In',
  '!=': 'NotIn',
  notin: 'NotIn',
  exists: 'Exists',
  '!': 'DoesNotExist',
};

/**
 * A review's labelSelector, as kube-apiserver sends it: each term with a metav1 operator and its
 * values; a term without one (`gt`, `lt`) is left out, which only widens the question asked.
 */
function labelSelectorAttributes(a: AuthorizationAttributes): Obj {
  const requirements = (a.labelSelector ?? []).flatMap((r) => {
    const operator = LABEL_OPERATORS[r.operator];
    return operator ? [{ key: r.key, operator, ...(r.values.length > 0 ? { values: [...r.values] } : {}) }] : [];
  });
  return requirements.length > 0 ? { labelSelector: { requirements } } : {};
}

/** The spec of the SubjectAccessReview that asks about `a` (v1beta1 names the groups `group`). */
export function subjectAccessReviewSpec(a: AuthorizationAttributes, version: 'v1' | 'v1beta1'): Obj {
  const spec: Obj = a.isResourceRequest
    ? {
        resourceAttributes: {
          ...(a.namespace ? { namespace: a.namespace } : {}),
          verb: a.verb,
          ...(a.apiGroup ? { group: a.apiGroup } : {}),
          ...(a.apiVersion ? { version: a.apiVersion } : {}),
          ...(a.resource ? { resource: a.resource } : {}),
          ...(a.subresource ? { subresource: a.subresource } : {}),
          ...(a.name ? { name: a.name } : {}),
          // As kube-apiserver sends a selector (AuthorizeWithSelectors): its terms, `=` as In and `!=` as NotIn.
          ...(a.fieldSelector?.length
            ? {
                fieldSelector: {
                  requirements: a.fieldSelector.map((r) => ({ key: r.field, operator: r.operator === '!=' ? 'NotIn' : 'In', values: [r.value] })),
                },
              }
            : {}),
          ...labelSelectorAttributes(a),
        },
      }
    : { nonResourceAttributes: { path: a.path, verb: a.verb } };
  spec.user = a.user.username;
  if (a.user.groups.length > 0) spec[version === 'v1' ? 'groups' : 'group'] = [...a.user.groups];
  if (a.user.uid) spec.uid = a.user.uid;
  if (a.user.extra && Object.keys(a.user.extra).length > 0) spec.extra = a.user.extra;
  return spec;
}

/** The Webhook mode; see the module comment. */
export class WebhookAuthorizer implements Authorizer {
  private readonly cache = new Map<string, { decision: AuthorizationDecision; expires: number }>();

  constructor(private readonly opts: WebhookAuthorizerOptions) {}

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  async authorize(a: AuthorizationAttributes): Promise<AuthorizationDecision> {
    const spec = subjectAccessReviewSpec(a, this.opts.version);
    const key = JSON.stringify(spec);
    const now = this.now();
    const hit = this.cache.get(key);
    if (hit && hit.expires > now) return hit.decision;
    let decision: AuthorizationDecision;
    try {
      decision = await this.review(spec);
    } catch (e) {
      // Not remembered: the next request asks again.
      return { decision: 'NoOpinion', error: `the authorization webhook could not be consulted: ${(e as Error).message}` };
    }
    const ttl = decision.decision === 'Allow' ? this.opts.authorizedTtlMs : this.opts.unauthorizedTtlMs;
    if (ttl > 0) {
      this.cache.delete(key);
      if (this.cache.size >= MAX_CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(key, { decision, expires: now + ttl });
    }
    return decision;
  }

  private async review(spec: Obj): Promise<AuthorizationDecision> {
    const apiVersion = `authorization.k8s.io/${this.opts.version}`;
    const res = await this.opts.post({ apiVersion, kind: 'SubjectAccessReview', metadata: { creationTimestamp: null }, spec });
    const body = obj(res.body);
    if (res.status < 200 || res.status >= 300 || body.apiVersion !== apiVersion || body.kind !== 'SubjectAccessReview') {
      throw new Error(`it answered ${res.status} without an ${apiVersion} SubjectAccessReview`);
    }
    const status = obj(body.status);
    const reason = typeof status.reason === 'string' && status.reason !== '' ? status.reason : undefined;
    const withReason = (d: AuthorizationDecision['decision']): AuthorizationDecision => (reason ? { decision: d, reason } : { decision: d });
    if (status.allowed === true) return withReason('Allow');
    if (status.denied === true) return withReason('Deny');
    return withReason('NoOpinion');
  }
}
