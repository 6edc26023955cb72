/**
 * The core API group (`/api/v1`): Namespace, ConfigMap, Secret, ServiceAccount, Event.
 */
import { Inject, Module } from '@nestjs/common';
import type { KindRegistry } from '@app/registry';
import { CORE_KINDS } from './core.kinds.js';

/** Registers the core/v1 kinds. */
@Module({})
export class CoreGroupModule {
  constructor(@Inject(Symbol.for('kapi.KindRegistry')) registry: KindRegistry) {
    for (const k of CORE_KINDS) registry.register(k);
  }
}
