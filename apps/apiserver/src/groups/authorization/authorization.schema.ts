/**
 * Schemas of authorization.k8s.io/v1 (k8s.io/api/authorization/v1 types.go): the attributes
 * an access review asks about and the statuses the server answers with.
 */
import { LabelSelectorRequirementSchema, defineSchema, fieldOf, objectRootSchema, type JSONSchemaProps } from '@app/apimachinery';

/** The group name (authorization.GroupName). */
export const AUTHORIZATION_GROUP = 'authorization.k8s.io';
/** Prefix of the group's OpenAPI definition names. */
export const AUTHZ_DEF = 'io.k8s.api.authorization.v1';

const str = (description: string): JSONSchemaProps => ({ type: 'string', description });
const strings = (description: string): JSONSchemaProps => ({ type: 'array', description, items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic' });

/** meta/v1 FieldSelectorRequirement: a term of a field selector. */
const FieldSelectorRequirementSchema = defineSchema('io.k8s.apimachinery.pkg.apis.meta.v1.FieldSelectorRequirement', {
  type: 'object',
  description: 'A field, an operator and the values relating them.',
  required: ['key', 'operator'],
  properties: {
    key: str('The field the term is about.'),
    operator: str('In, NotIn, Exists or DoesNotExist.'),
    values: strings('The one value of In and NotIn; empty for Exists and DoesNotExist.'),
  },
});

/** A selector of an access review: as written, or as terms. */
const selectorAttributes = (def: string, requirement: JSONSchemaProps, what: string) =>
  defineSchema(def, {
    type: 'object',
    description: `The ${what} selector of the request asked about, either as written or as terms, not both.`,
    properties: {
      rawSelector: str(`The ${what} selector as a request's query parameter carries it.`),
      requirements: { type: 'array', description: 'The terms of the selector, all of which hold.', items: requirement, 'x-kubernetes-list-type': 'atomic' },
    },
  });

const FieldSelectorAttributesSchema = selectorAttributes(`${AUTHZ_DEF}.FieldSelectorAttributes`, FieldSelectorRequirementSchema, 'field');
const LabelSelectorAttributesSchema = selectorAttributes(`${AUTHZ_DEF}.LabelSelectorAttributes`, LabelSelectorRequirementSchema, 'label');

/** authorization/v1 ResourceAttributes. */
export const ResourceAttributesSchema = defineSchema(`${AUTHZ_DEF}.ResourceAttributes`, {
  type: 'object',
  description: 'The attributes of a resource request.',
  properties: {
    namespace: str('Namespace of the action; "" means all namespaces for namespaced resources.'),
    verb: str('Kubernetes resource API verb; "*" means all.'),
    group: str('API group of the resource; "*" means all.'),
    version: str('API version of the resource; "*" means all.'),
    resource: str('Resource type; "*" means all.'),
    subresource: str('Subresource; "" means none.'),
    name: str('Name of the object; "" means all.'),
    fieldSelector: fieldOf(FieldSelectorAttributesSchema, { description: 'Field selector of a list, watch or deletecollection.' }),
    labelSelector: fieldOf(LabelSelectorAttributesSchema, { description: 'Label selector of a list, watch or deletecollection.' }),
  },
});

/** authorization/v1 NonResourceAttributes. */
export const NonResourceAttributesSchema = defineSchema(`${AUTHZ_DEF}.NonResourceAttributes`, {
  type: 'object',
  description: 'The attributes of a non-resource request.',
  properties: { path: str('URL path of the request.'), verb: str('Standard HTTP verb.') },
});

/** authorization/v1 SubjectAccessReviewStatus. */
export const SubjectAccessReviewStatusSchema = defineSchema(`${AUTHZ_DEF}.SubjectAccessReviewStatus`, {
  type: 'object',
  description: 'The answer of an access review.',
  properties: {
    allowed: { type: 'boolean', description: 'Whether the action is allowed.' },
    denied: { type: 'boolean', description: 'Whether an authorizer denied the action outright.' },
    reason: str('Why the action is allowed or denied.'),
    evaluationError: str('An error met while checking authorization.'),
  },
});

const attributes = {
  resourceAttributes: fieldOf(ResourceAttributesSchema, { description: 'The resource request asked about.' }),
  nonResourceAttributes: fieldOf(NonResourceAttributesSchema, { description: 'The non-resource request asked about.' }),
};

/** authorization/v1 SubjectAccessReviewSpec. */
export const SubjectAccessReviewSpecSchema = defineSchema(`${AUTHZ_DEF}.SubjectAccessReviewSpec`, {
  type: 'object',
  description: 'The request asked about and the user asking.',
  properties: {
    ...attributes,
    user: str('User name to test for.'),
    groups: strings('Groups to test for.'),
    uid: str('UID of the user.'),
    extra: { type: 'object', description: 'Extra attributes of the user.', additionalProperties: { type: 'array', items: { type: 'string' } } },
  },
});

/** authorization/v1 SelfSubjectAccessReviewSpec. */
export const SelfSubjectAccessReviewSpecSchema = defineSchema(`${AUTHZ_DEF}.SelfSubjectAccessReviewSpec`, {
  type: 'object',
  description: 'The request the requesting user asks about.',
  properties: attributes,
});

/** The root schema of one access review kind. */
export function accessReviewSchema(kind: string, description: string, spec: JSONSchemaProps): JSONSchemaProps {
  return defineSchema(
    `${AUTHZ_DEF}.${kind}`,
    objectRootSchema({ group: AUTHORIZATION_GROUP, version: 'v1', kind }, description, {
      spec: fieldOf(spec, { description: 'What is asked.' }),
      status: fieldOf(SubjectAccessReviewStatusSchema, { description: 'The answer, filled in by the server.' }),
    }),
  );
}
