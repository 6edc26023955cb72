/** rbac.authorization.k8s.io/v1 ClusterRoleBinding: its declaration, with kubectl's binding columns. */
import type { KindDeclaration } from '@app/registry';
import { BINDING_COLUMNS } from '../rbac.columns.js';
import { COMPONENT_CLUSTER_ROLE_BINDINGS } from '../rbac.bootstrap-components.js';
import { BOOTSTRAP_CLUSTER_ROLE_BINDINGS } from '../rbac.bootstrap-policy.js';
import { RBAC_GROUP } from '../rbac.schema.js';
import { ClusterRoleBindingSchema } from './clusterrolebinding.schema.js';
import { clusterRoleBindingStrategy } from './clusterrolebinding.strategy.js';
import { reconcileBinding } from '../rbac.reconcile.js';

/** The ClusterRoleBinding declaration. */
export const clusterRoleBindingKind: KindDeclaration = {
  group: RBAC_GROUP,
  version: 'v1',
  kind: 'ClusterRoleBinding',
  plural: 'clusterrolebindings',
  singular: 'clusterrolebinding',
  namespaced: false,
  nameValidation: 'pathSegment',
  schema: ClusterRoleBindingSchema,
  protobufMessage: 'k8s.io.api.rbac.v1.ClusterRoleBinding',
  strategy: clusterRoleBindingStrategy,
  generation: 'none',
  tableColumns: BINDING_COLUMNS,
  // The bootstrap policy, created at first start as kube-apiserver creates it.
  initialObjects: [...BOOTSTRAP_CLUSTER_ROLE_BINDINGS, ...COMPONENT_CLUSTER_ROLE_BINDINGS].map((o) => structuredClone(o)),
  reconcileInitial: reconcileBinding,
};
