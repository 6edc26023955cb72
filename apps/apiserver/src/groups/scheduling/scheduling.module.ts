/**
 * The scheduling.k8s.io API group (`/apis/scheduling.k8s.io/v1`). A kind is one folder here;
 * SCHEDULING_KINDS is the one list of the group's kinds.
 */
import { Inject, Module } from '@nestjs/common';
import type { KindDeclaration, KindRegistry } from '@app/registry';
import { priorityClassKind } from './priorityclass/priorityclass.kind.js';

/** The scheduling.k8s.io/v1 kinds. */
export const SCHEDULING_KINDS: readonly KindDeclaration[] = [priorityClassKind];

/** Registers the scheduling.k8s.io/v1 kinds. */
@Module({})
export class SchedulingGroupModule {
  constructor(@Inject(Symbol.for('kapi.KindRegistry')) registry: KindRegistry) {
    for (const k of SCHEDULING_KINDS) registry.register(k);
  }
}
