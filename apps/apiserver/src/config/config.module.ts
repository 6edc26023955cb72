/**
 * The values the composition starts from: flags, the PKI (loaded before Nest because the HTTPS
 * server needs it to exist), the endpoint, and the metric registry every module reports to.
 */
import { Global, Module, type DynamicModule } from '@nestjs/common';
import { ApiMetrics } from '../observability/metrics.js';
import { PKI, SERVER_CONFIG, SERVER_ENDPOINT, type PkiMaterial, type ServerEndpoint } from '../tokens.js';
import type { ServerConfig } from './flags.js';

/** Global module of the start-up values. */
@Global()
@Module({})
export class ConfigModule {
  /** Binds the values of this node. */
  static forRoot(cfg: ServerConfig, pki: PkiMaterial, endpoint: ServerEndpoint): DynamicModule {
    return {
      module: ConfigModule,
      providers: [
        { provide: SERVER_CONFIG, useValue: cfg },
        { provide: PKI, useValue: pki },
        { provide: SERVER_ENDPOINT, useValue: endpoint },
        { provide: ApiMetrics, useValue: new ApiMetrics() },
      ],
      exports: [SERVER_CONFIG, PKI, SERVER_ENDPOINT, ApiMetrics],
    };
  }
}
