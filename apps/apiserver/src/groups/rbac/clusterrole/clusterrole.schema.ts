/** Schema of rbac.authorization.k8s.io/v1 ClusterRole (k8s.io/api/rbac/v1 types.go). */
import { defineSchema, fieldOf, objectRootSchema, type JSONSchemaProps } from '@app/apimachinery';
import { AggregationRuleSchema, RBAC_DEF, RBAC_GROUP, rulesField } from '../rbac.schema.js';

/** rbac/v1 ClusterRole (cluster-scoped). */
export const ClusterRoleSchema: JSONSchemaProps = defineSchema(
  `${RBAC_DEF}.ClusterRole`,
  objectRootSchema(
    { group: RBAC_GROUP, version: 'v1', kind: 'ClusterRole' },
    'A cluster-wide set of PolicyRules, granted by a ClusterRoleBinding or, within one namespace, a RoleBinding.',
    {
      aggregationRule: fieldOf(AggregationRuleSchema, {
        description: 'When set, the rules are the union of the selected ClusterRoles, kept by the controller.',
      }),
      rules: rulesField(),
    },
  ),
);
