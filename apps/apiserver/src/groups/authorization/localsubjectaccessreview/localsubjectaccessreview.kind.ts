/**
 * authorization.k8s.io/v1 LocalSubjectAccessReview: a SubjectAccessReview confined to the
 * namespace of the URL; its resource attributes must name that namespace and it takes no
 * non-resource attributes (kube's ValidateLocalSubjectAccessReview and REST checks).
 */
import { Errors, type FieldError, type KubeObject } from '@app/apimachinery';
import type { KindDeclaration } from '@app/registry';
import { review, specOf, userOfSpec, validateSubjectSpec, type AuthorizationPorts } from '../access.review.js';
import { accessReviewSchema, AUTHORIZATION_GROUP, SubjectAccessReviewSpecSchema } from '../authorization.schema.js';

/** Validation of a LocalSubjectAccessReview against its own metadata.namespace. */
export function validateLocalSubjectAccessReview(obj: KubeObject): FieldError[] {
  const spec = specOf(obj);
  const errs = validateSubjectSpec(spec);
  const ns = obj.metadata?.namespace ?? '';
  if (spec.resourceAttributes && (spec.resourceAttributes.namespace ?? '') !== ns) {
    errs.push({
      type: 'FieldValueInvalid',
      field: 'spec.resourceAttributes.namespace',
      value: spec.resourceAttributes.namespace ?? '',
      detail: 'must match metadata.namespace',
    });
  }
  if (spec.nonResourceAttributes)
    errs.push({
      type: 'FieldValueInvalid',
      field: 'spec.nonResourceAttributes',
      value: spec.nonResourceAttributes,
      detail: 'disallowed on this kind of request',
    });
  return errs;
}

/** The LocalSubjectAccessReview declaration, asking the authorizer in `ports`. */
export function localSubjectAccessReviewKind(ports: AuthorizationPorts): KindDeclaration {
  return {
    group: AUTHORIZATION_GROUP,
    version: 'v1',
    kind: 'LocalSubjectAccessReview',
    plural: 'localsubjectaccessreviews',
    singular: 'localsubjectaccessreview',
    namespaced: true,
    verbs: ['create'],
    schema: accessReviewSchema('LocalSubjectAccessReview', 'Whether a given user may perform an action in one namespace.', SubjectAccessReviewSpecSchema),
    protobufMessage: 'k8s.io.api.authorization.v1.LocalSubjectAccessReview',
    strategy: { validate: validateLocalSubjectAccessReview },
    rest: {
      create: async (ns, obj) => {
        if ((specOf(obj).resourceAttributes?.namespace ?? '') !== ns) throw Errors.badRequest(`spec.resourceAttributes.namespace must match namespace: ${ns}`);
        return review(ports.authz, userOfSpec(specOf(obj)), obj);
      },
    },
  };
}
