/**
 * The shared definitions of rbac.authorization.k8s.io/v1 (k8s.io/api/rbac/v1 types.go):
 * PolicyRule, AggregationRule, Subject and RoleRef, registered under their definition names.
 */
import { defineSchema, fieldOf, LabelSelectorSchema, type JSONSchemaProps } from '@app/apimachinery';

/** Prefix of the group's OpenAPI definition names. */
export const RBAC_DEF = 'io.k8s.api.rbac.v1';
/** The group name (rbac.GroupName). */
export const RBAC_GROUP = 'rbac.authorization.k8s.io';

const strings = (description: string): JSONSchemaProps => ({ type: 'array', description, items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic' });

/** rbac/v1 PolicyRule. */
export const PolicyRuleSchema = defineSchema(`${RBAC_DEF}.PolicyRule`, {
  type: 'object',
  description: 'Describes actions on resources or non-resource URLs that a rule allows.',
  properties: {
    apiGroups: strings('API groups of the resources; "" is the core group, "*" every group.'),
    nonResourceURLs: strings('Partial URLs a user may reach; a trailing "*" matches any suffix. Only in ClusterRoles bound by ClusterRoleBindings.'),
    resourceNames: strings('Optional allow list of object names; empty means all.'),
    resources: strings('Resources this rule applies to; "*" is every resource, "res/sub" a subresource.'),
    verbs: strings('Verbs this rule allows; "*" is every verb.'),
  },
  required: ['verbs'],
});

/** rbac/v1 AggregationRule. */
export const AggregationRuleSchema = defineSchema(`${RBAC_DEF}.AggregationRule`, {
  type: 'object',
  description: 'How a ClusterRole is built from other ClusterRoles.',
  properties: {
    clusterRoleSelectors: {
      type: 'array',
      description: 'Selectors of the ClusterRoles whose rules are combined into this one; the controller owns the rules field.',
      items: LabelSelectorSchema,
      'x-kubernetes-list-type': 'atomic',
    },
  },
});

/** rbac/v1 Subject. */
export const SubjectSchema = defineSchema(`${RBAC_DEF}.Subject`, {
  type: 'object',
  description: 'A user, group or service account a binding applies to.',
  properties: {
    apiGroup: { type: 'string', description: '"" for ServiceAccount, "rbac.authorization.k8s.io" for User and Group.' },
    kind: { type: 'string', description: 'User, Group or ServiceAccount.' },
    name: { type: 'string', description: 'Name of the subject.' },
    namespace: { type: 'string', description: 'Namespace of a ServiceAccount subject.' },
  },
  required: ['kind', 'name'],
  'x-kubernetes-map-type': 'atomic',
});

/** rbac/v1 RoleRef. */
export const RoleRefSchema = defineSchema(`${RBAC_DEF}.RoleRef`, {
  type: 'object',
  description: 'The role a binding grants.',
  properties: {
    apiGroup: { type: 'string', description: 'Group of the referenced role.' },
    kind: { type: 'string', description: 'Role or ClusterRole.' },
    name: { type: 'string', description: 'Name of the role.' },
  },
  required: ['apiGroup', 'kind', 'name'],
  'x-kubernetes-map-type': 'atomic',
});

/** The `rules` field of Role and ClusterRole. */
export const rulesField = (): JSONSchemaProps => ({
  type: 'array',
  description: 'The PolicyRules of this role.',
  items: PolicyRuleSchema,
  'x-kubernetes-list-type': 'atomic',
});

/** The `subjects` and `roleRef` fields of RoleBinding and ClusterRoleBinding. */
export const bindingFields = (): Record<string, JSONSchemaProps> => ({
  roleRef: fieldOf(RoleRefSchema, { description: 'The role granted; cannot change once set.' }),
  subjects: { type: 'array', description: 'Whom the role is granted to.', items: SubjectSchema, 'x-kubernetes-list-type': 'atomic' },
});
