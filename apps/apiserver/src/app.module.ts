/**
 * The root NestJS module. It provides the shared KindRegistry and imports one module per API
 * group; each group module registers its kinds (declarations) at construction. NestJS owns
 * modules, dependency injection and lifecycle; the request hot path is plain Fastify routes.
 */
import { Module, type DynamicModule } from '@nestjs/common';
import type { KindRegistry } from '@app/registry';
import { CoreGroupModule } from './groups/core/core.module.js';
import { CoordinationGroupModule } from './groups/coordination/coordination.module.js';
import { SchedulingGroupModule } from './groups/scheduling/scheduling.module.js';

/** Injection token of the KindRegistry. */
export const KIND_REGISTRY = Symbol.for('kapi.KindRegistry');

/** Values the composition root hands to the modules. */
export interface AppModuleOptions {
  registry: KindRegistry;
}

@Module({})
export class AppModule {
  /** The application module bound to this node's registry. */
  static forRoot(opts: AppModuleOptions): DynamicModule {
    return {
      module: AppModule,
      global: true,
      providers: [{ provide: KIND_REGISTRY, useValue: opts.registry }],
      exports: [KIND_REGISTRY],
      imports: [CoreGroupModule, CoordinationGroupModule, SchedulingGroupModule],
    };
  }
}
