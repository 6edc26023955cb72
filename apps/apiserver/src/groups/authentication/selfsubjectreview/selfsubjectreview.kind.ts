/**
 * authentication.k8s.io SelfSubjectReview (`kubectl auth whoami`): answers with the user the
 * request was authenticated (or impersonated) as. Served at v1 and v1beta1; never stored.
 */
import type { KubeObject } from '@app/apimachinery';
import type { UserInfo } from '@app/auth';
import type { KindDeclaration } from '@app/registry';
import { AUTHENTICATION_GROUP, selfSubjectReviewSchema } from '../authentication.schema.js';

/** authentication/v1 UserInfo of `user`, without empty fields. */
export function userInfoStatus(user: UserInfo): Record<string, unknown> {
  const out: Record<string, unknown> = { username: user.username };
  if (user.uid) out.uid = user.uid;
  if (user.groups.length) out.groups = [...user.groups];
  if (user.extra && Object.keys(user.extra).length) out.extra = user.extra;
  return out;
}

/** The SelfSubjectReview declaration at `version`. */
export function selfSubjectReviewKind(version: 'v1' | 'v1beta1'): KindDeclaration {
  return {
    group: AUTHENTICATION_GROUP,
    version,
    kind: 'SelfSubjectReview',
    plural: 'selfsubjectreviews',
    singular: 'selfsubjectreview',
    namespaced: false,
    verbs: ['create'],
    schema: selfSubjectReviewSchema(version),
    protobufMessage: `k8s.io.api.authentication.${version}.SelfSubjectReview`,
    rest: { create: async (_ns, obj, ctx): Promise<KubeObject> => ({ ...obj, status: { userInfo: userInfoStatus(ctx.user) } }) },
  };
}
