/** Schema of rbac.authorization.k8s.io/v1 RoleBinding (k8s.io/api/rbac/v1 types.go). */
import { defineSchema, objectRootSchema, type JSONSchemaProps } from '@app/apimachinery';
import { bindingFields, RBAC_DEF, RBAC_GROUP } from '../rbac.schema.js';

/** rbac/v1 RoleBinding. */
export const RoleBindingSchema: JSONSchemaProps = defineSchema(
  `${RBAC_DEF}.RoleBinding`,
  objectRootSchema({ group: RBAC_GROUP, version: 'v1', kind: 'RoleBinding' }, 'Grants the permissions of a role to a list of subjects.', bindingFields(), {
    required: ['roleRef'],
  }),
);
