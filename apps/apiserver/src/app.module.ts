/**
 * The root NestJS module: the composition of a node. Nest resolves every provider once at start
 * (opening the storage on the way); the request path then runs plain functions captured at
 * route registration, with no per-request injection.
 *
 *   ConfigModule      flags, PKI, endpoint, metrics                  (global)
 *   StorageModule     the storage chosen by --storage-backend        (global)
 *   RegistryModule    kinds from the group modules, stores, codecs   (global)
 *   AdmissionModule   the admission chain of discovered plugins      (global)
 *   PipelineModule    authenticator, authorizer, audit, flow control (global)
 *   API_GROUP_MODULES one module per API group, providing its kinds
 *   ControllersModule the controller manager and built-in controllers
 *   BootstrapModule   post-start hooks
 *   HttpModule        the pipeline and routes on Fastify
 *   EtcdModule        the etcd v3 gRPC API (--listen-client-urls)
 *
 * Shutdown follows Nest's lifecycle (server.ts enables it): beforeApplicationShutdown stops
 * serving resource requests and gives up the controller Lease, the HTTP server closes, then
 * onApplicationShutdown closes the storage (global modules' hooks run last).
 */
import { Module, type DynamicModule } from '@nestjs/common';
import { AdmissionModule } from './admission/admission.module.js';
import { BootstrapModule } from './bootstrap/bootstrap.module.js';
import { ConfigModule } from './config/config.module.js';
import type { ServerConfig } from './config/flags.js';
import { ControllersModule } from './controllers/controllers.module.js';
import { API_GROUP_MODULES } from './groups/groups.js';
import { EtcdModule } from './etcd/etcd.module.js';
import { HttpModule } from './http/http.module.js';
import { PipelineModule } from './pipeline/pipeline.module.js';
import { RegistryModule } from './registry/registry.module.js';
import { StorageModule } from './storage/storage.module.js';
import type { PkiMaterial, ServerEndpoint } from './tokens.js';

/** The application module of one node. */
@Module({})
export class AppModule {
  /** The composition for this node's configuration. */
  static forRoot(cfg: ServerConfig, pki: PkiMaterial, endpoint: ServerEndpoint): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(cfg, pki, endpoint),
        StorageModule.forRoot(cfg),
        RegistryModule,
        AdmissionModule,
        PipelineModule,
        ...API_GROUP_MODULES,
        ControllersModule,
        BootstrapModule,
        HttpModule,
        // The etcd v3 API serves the built-in store (an external etcd serves its own).
        ...(cfg.raw['storage-backend'] === 'etcd3' ? [] : [EtcdModule]),
      ],
    };
  }
}
