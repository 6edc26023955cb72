/**
 * authorization.k8s.io/v1 SubjectAccessReview: may the user the spec names (user, groups,
 * uid, extra) do this? Never stored.
 */
import type { KindDeclaration } from '@app/registry';
import { review, specOf, userOfSpec, validateSubjectSpec, type AuthorizationPorts } from '../access.review.js';
import { accessReviewSchema, AUTHORIZATION_GROUP, SubjectAccessReviewSpecSchema } from '../authorization.schema.js';

/** The SubjectAccessReview declaration, asking the authorizer in `ports`. */
export function subjectAccessReviewKind(ports: AuthorizationPorts): KindDeclaration {
  return {
    group: AUTHORIZATION_GROUP,
    version: 'v1',
    kind: 'SubjectAccessReview',
    plural: 'subjectaccessreviews',
    singular: 'subjectaccessreview',
    namespaced: false,
    verbs: ['create'],
    schema: accessReviewSchema('SubjectAccessReview', 'Whether a given user may perform an action.', SubjectAccessReviewSpecSchema),
    protobufMessage: 'k8s.io.api.authorization.v1.SubjectAccessReview',
    strategy: { validate: (obj) => validateSubjectSpec(specOf(obj)) },
    rest: { create: (_ns, obj) => review(ports.authz, userOfSpec(specOf(obj)), obj) },
  };
}
