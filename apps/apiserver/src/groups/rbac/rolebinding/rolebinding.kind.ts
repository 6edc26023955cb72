/** rbac.authorization.k8s.io/v1 RoleBinding: its declaration, with kubectl's binding columns. */
import type { KindDeclaration } from '@app/registry';
import { BINDING_COLUMNS } from '../rbac.columns.js';
import { RBAC_GROUP } from '../rbac.schema.js';
import { COMPONENT_ROLE_BINDINGS } from '../rbac.bootstrap-components.js';
import { RoleBindingSchema } from './rolebinding.schema.js';
import { roleBindingStrategy } from './rolebinding.strategy.js';
import { reconcileBinding } from '../rbac.reconcile.js';

/** The RoleBinding declaration. */
export const roleBindingKind: KindDeclaration = {
  group: RBAC_GROUP,
  version: 'v1',
  kind: 'RoleBinding',
  plural: 'rolebindings',
  singular: 'rolebinding',
  namespaced: true,
  nameValidation: 'pathSegment',
  schema: RoleBindingSchema,
  protobufMessage: 'k8s.io.api.rbac.v1.RoleBinding',
  strategy: roleBindingStrategy,
  generation: 'none',
  tableColumns: BINDING_COLUMNS,
  // The bootstrap policy's RoleBindings in kube-system and kube-public, created at first start.
  initialObjects: COMPONENT_ROLE_BINDINGS.map((o) => structuredClone(o)),
  reconcileInitial: reconcileBinding,
};
