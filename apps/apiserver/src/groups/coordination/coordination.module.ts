/**
 * The coordination.k8s.io API group (`/apis/coordination.k8s.io/v1`). A kind is one folder
 * here; COORDINATION_KINDS is the one list of the group's kinds.
 */
import { Module } from '@nestjs/common';
import type { KindDeclaration } from '@app/registry';
import { apiKinds } from '../api-group.js';
import { leaseKind } from './lease/lease.kind.js';

/** The coordination.k8s.io/v1 kinds. */
export const COORDINATION_KINDS: readonly KindDeclaration[] = [leaseKind];

/** Provides the coordination.k8s.io/v1 kinds. */
@Module({ providers: [apiKinds('coordination.k8s.io', COORDINATION_KINDS)] })
export class CoordinationGroupModule {}
