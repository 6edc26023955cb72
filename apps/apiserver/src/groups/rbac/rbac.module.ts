/**
 * The rbac.authorization.k8s.io API group (`/apis/rbac.authorization.k8s.io/v1`). A kind is
 * one folder here; RBAC_KINDS is the one list of the group's kinds.
 */
import { Module } from '@nestjs/common';
import type { KindDeclaration } from '@app/registry';
import { apiKinds } from '../api-group.js';
import { clusterRoleKind } from './clusterrole/clusterrole.kind.js';
import { clusterRoleBindingKind } from './clusterrolebinding/clusterrolebinding.kind.js';
import { RBAC_GROUP } from './rbac.schema.js';
import { roleKind } from './role/role.kind.js';
import { roleBindingKind } from './rolebinding/rolebinding.kind.js';

/** The rbac.authorization.k8s.io/v1 kinds. */
export const RBAC_KINDS: readonly KindDeclaration[] = [clusterRoleBindingKind, clusterRoleKind, roleBindingKind, roleKind];

/** Provides the rbac.authorization.k8s.io/v1 kinds. */
@Module({ providers: [apiKinds(RBAC_GROUP, RBAC_KINDS)] })
export class RbacGroupModule {}
