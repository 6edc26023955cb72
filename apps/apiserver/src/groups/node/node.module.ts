/**
 * The node.k8s.io API group (`/apis/node.k8s.io/v1`).
 */
import { Module } from '@nestjs/common';
import type { KindDeclaration } from '@app/registry';
import { apiKinds } from '../api-group.js';
import { runtimeClassKind } from './runtimeclass/runtimeclass.kind.js';

/** The node.k8s.io kinds. */
export const NODE_KINDS: readonly KindDeclaration[] = [runtimeClassKind];

/** Provides the node.k8s.io kinds. */
@Module({ providers: [apiKinds('node.k8s.io', NODE_KINDS)] })
export class NodeGroupModule {}
