/** Schema of rbac.authorization.k8s.io/v1 Role (k8s.io/api/rbac/v1 types.go). */
import { defineSchema, objectRootSchema, type JSONSchemaProps } from '@app/apimachinery';
import { RBAC_DEF, RBAC_GROUP, rulesField } from '../rbac.schema.js';

/** rbac/v1 Role (namespaced). */
export const RoleSchema: JSONSchemaProps = defineSchema(
  `${RBAC_DEF}.Role`,
  objectRootSchema({ group: RBAC_GROUP, version: 'v1', kind: 'Role' }, 'A namespaced set of PolicyRules, granted by a RoleBinding.', { rules: rulesField() }),
);
