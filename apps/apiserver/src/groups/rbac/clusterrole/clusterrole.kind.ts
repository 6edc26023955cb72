/**
 * rbac.authorization.k8s.io/v1 ClusterRole: its declaration. kubectl shows NAME and CREATED AT
 * (pkg/printers/internalversion clusterRoleColumnDefinitions), the table's default columns.
 */
import type { KindDeclaration } from '@app/registry';
import { COMPONENT_CLUSTER_ROLES } from '../rbac.bootstrap-components.js';
import { BOOTSTRAP_CLUSTER_ROLES } from '../rbac.bootstrap-policy.js';
import { RBAC_GROUP } from '../rbac.schema.js';
import { ClusterRoleSchema } from './clusterrole.schema.js';
import { clusterRoleStrategy } from './clusterrole.strategy.js';
import { reconcileRole } from '../rbac.reconcile.js';

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
  // The bootstrap policy, created at first start as kube-apiserver creates it.
  initialObjects: [...BOOTSTRAP_CLUSTER_ROLES, ...COMPONENT_CLUSTER_ROLES].map((o) => structuredClone(o)),
  reconcileInitial: reconcileRole,
};
