/**
 * The coordination.k8s.io API group (`/apis/coordination.k8s.io/v1`). A kind is one folder here;
 * COORDINATION_KINDS is the one list of the group's kinds.
 */
import { Inject, Module } from '@nestjs/common';
import type { KindDeclaration, KindRegistry } from '@app/registry';
import { leaseKind } from './lease/lease.kind.js';

/** The coordination.k8s.io/v1 kinds. */
export const COORDINATION_KINDS: readonly KindDeclaration[] = [leaseKind];

/** Registers the coordination.k8s.io/v1 kinds. */
@Module({})
export class CoordinationGroupModule {
  constructor(@Inject(Symbol.for('kapi.KindRegistry')) registry: KindRegistry) {
    for (const k of COORDINATION_KINDS) registry.register(k);
  }
}
