/**
 * The coordination.k8s.io API group (`/apis/coordination.k8s.io/v1`): Lease.
 */
import { Inject, Module } from '@nestjs/common';
import type { KindRegistry } from '@app/registry';
import { COORDINATION_KINDS } from './coordination.kinds.js';

/** Registers the coordination.k8s.io/v1 kinds. */
@Module({})
export class CoordinationGroupModule {
  constructor(@Inject(Symbol.for('kapi.KindRegistry')) registry: KindRegistry) {
    for (const k of COORDINATION_KINDS) registry.register(k);
  }
}
