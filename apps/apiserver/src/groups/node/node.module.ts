/**
 * The node.k8s.io API group (`/apis/node.k8s.io/v1`).
 */
import { Module } from '@nestjs/common';
import type { KindDeclaration } from '@app/registry';
import { apiKinds } from '../api-group.js';
import { runtimeClassKind } from './runtimeclass/runtimeclass.kind.js';
import { RUNTIMECLASS_CONVERSION, runtimeClassV1alpha1Kind } from './runtimeclass/runtimeclass.v1alpha1.js';

/** The node.k8s.io kinds: v1 (preferred) and the alpha v1alpha1, off unless enabled. */
export const NODE_KINDS: readonly KindDeclaration[] = [{ ...runtimeClassKind, conversion: RUNTIMECLASS_CONVERSION }, runtimeClassV1alpha1Kind];

/** Provides the node.k8s.io kinds. */
@Module({ providers: [apiKinds('node.k8s.io', NODE_KINDS)] })
export class NodeGroupModule {}
