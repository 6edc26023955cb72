/**
 * authentication.k8s.io/v1 TokenReview: authenticates spec.token with the server's
 * AUTHENTICATOR chain, as the bearer token of a request would be. Never stored.
 */
import { Errors, type KubeObject } from '@app/apimachinery';
import type { Authenticator } from '@app/auth';
import type { KindDeclaration } from '@app/registry';
import { AUTHENTICATION_GROUP, TokenReviewSchema } from '../authentication.schema.js';
import { userInfoStatus } from '../selfsubjectreview/selfsubjectreview.kind.js';

/**
 * The pipeline port the TokenReview asks. Kinds are data collected from the group modules
 * before any factory provider exists, so the group module's wiring provider fills this in at
 * start; no request reaches a review before that.
 */
export class AuthenticationPorts {
  authenticator?: Authenticator;
}

/** The status of a TokenReview of `obj`, asking `authenticator`. */
export async function tokenReviewStatus(authenticator: Authenticator, obj: KubeObject): Promise<Record<string, unknown>> {
  const spec = ((obj as { spec?: unknown }).spec ?? {}) as { token?: string; audiences?: string[] | null };
  if (!spec.token) throw Errors.badRequest(`token is required for TokenReview in ${AUTHENTICATION_GROUP}`);
  try {
    const user = await authenticator.authenticate({ headers: { authorization: `Bearer ${spec.token}` }, audiences: spec.audiences ?? undefined });
    if (!user) return { authenticated: false, user: {} };
    const status: Record<string, unknown> = { authenticated: true, user: userInfoStatus(user) };
    // Audience-bound methods (service-account tokens) checked the token against spec.audiences;
    // the others are audience-agnostic: a valid token is valid for what was asked.
    if (spec.audiences?.length) status.audiences = [...spec.audiences];
    return status;
  } catch (e) {
    return { authenticated: false, user: {}, error: e instanceof Error ? e.message : String(e) };
  }
}

/** The TokenReview declaration, asking the authenticator in `ports`. */
export function tokenReviewKind(ports: AuthenticationPorts): KindDeclaration {
  return {
    group: AUTHENTICATION_GROUP,
    version: 'v1',
    kind: 'TokenReview',
    plural: 'tokenreviews',
    singular: 'tokenreview',
    namespaced: false,
    verbs: ['create'],
    schema: TokenReviewSchema,
    protobufMessage: 'k8s.io.api.authentication.v1.TokenReview',
    rest: {
      create: async (_ns, obj) => {
        if (!ports.authenticator) throw new Error('TokenReview: no authenticator wired');
        return { ...obj, status: await tokenReviewStatus(ports.authenticator, obj) };
      },
    },
  };
}
