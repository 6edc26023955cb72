/**
 * rbac.authorization.k8s.io/v1 ClusterRole: its declaration. kubectl shows NAME and CREATED AT
 * (pkg/printers/internalversion clusterRoleColumnDefinitions), the table's default columns.
 */
import type { KindDeclaration } from '@app/registry';
import { RBAC_GROUP } from '../rbac.schema.js';
import { ClusterRoleSchema } from './clusterrole.schema.js';
import { clusterRoleStrategy } from './clusterrole.strategy.js';

/** The ClusterRole declaration. */
export const clusterRoleKind: KindDeclaration = {
  group: RBAC_GROUP,
  version: 'v1',
  kind: 'ClusterRole',
  plural: 'clusterroles',
  singular: 'clusterrole',
  namespaced: false,
  nameValidation: 'pathSegment',
  schema: ClusterRoleSchema,
  protobufMessage: 'k8s.io.api.rbac.v1.ClusterRole',
  strategy: clusterRoleStrategy,
  generation: 'none',
};
