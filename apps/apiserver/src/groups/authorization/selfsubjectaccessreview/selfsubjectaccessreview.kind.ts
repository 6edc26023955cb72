/**
 * authorization.k8s.io/v1 SelfSubjectAccessReview: may the requesting user (after
 * impersonation) do this? `kubectl auth can-i`. Never stored.
 */
import type { KindDeclaration } from '@app/registry';
import { review, specOf, validateAttributes, type AuthorizationPorts } from '../access.review.js';
import { accessReviewSchema, AUTHORIZATION_GROUP, SelfSubjectAccessReviewSpecSchema } from '../authorization.schema.js';

/** The SelfSubjectAccessReview declaration, asking the authorizer in `ports`. */
export function selfSubjectAccessReviewKind(ports: AuthorizationPorts): KindDeclaration {
  return {
    group: AUTHORIZATION_GROUP,
    version: 'v1',
    kind: 'SelfSubjectAccessReview',
    plural: 'selfsubjectaccessreviews',
    singular: 'selfsubjectaccessreview',
    namespaced: false,
    verbs: ['create'],
    schema: accessReviewSchema('SelfSubjectAccessReview', 'Whether the requesting user may perform an action.', SelfSubjectAccessReviewSpecSchema),
    protobufMessage: 'k8s.io.api.authorization.v1.SelfSubjectAccessReview',
    strategy: { validate: (obj) => validateAttributes(specOf(obj)) },
    rest: { create: (_ns, obj, ctx) => review(ports.authz, ctx.user, obj) },
  };
}
