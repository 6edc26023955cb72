/**
 * rbac.authorization.k8s.io/v1 Role: its declaration. kubectl shows NAME and CREATED AT
 * (pkg/printers/internalversion roleColumnDefinitions), the table's default columns.
 */
import type { KindDeclaration } from '@app/registry';
import { RBAC_GROUP } from '../rbac.schema.js';
import { COMPONENT_ROLES } from '../rbac.bootstrap-components.js';
import { RoleSchema } from './role.schema.js';
import { roleStrategy } from './role.strategy.js';
import { reconcileRole } from '../rbac.reconcile.js';

/** The Role declaration. */
export const roleKind: KindDeclaration = {
  group: RBAC_GROUP,
  version: 'v1',
  kind: 'Role',
  plural: 'roles',
  singular: 'role',
  namespaced: true,
  nameValidation: 'pathSegment',
  schema: RoleSchema,
  protobufMessage: 'k8s.io.api.rbac.v1.Role',
  strategy: roleStrategy,
  generation: 'none',
  // The bootstrap policy's Roles in kube-system and kube-public, created at first start.
  initialObjects: COMPONENT_ROLES.map((o) => structuredClone(o)),
  reconcileInitial: reconcileRole,
};
