/**
 * The storage provider, chosen from the flags (`--storage-backend`): the built-in store, a Raft
 * group on LevelDB (a single node is a group of one; docs/cluster.md). The module opens it while
 * Nest resolves providers (so everything that injects STORAGE gets an open store), and closes it
 * in onApplicationShutdown, after the HTTP server has stopped and the controllers are gone (a
 * global module: its hooks run first at start and last at shutdown).
 */
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { Global, Inject, Injectable, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { setContinueTokenKey } from '@app/storage';
import { openClusterNode, resolvePeerTls, type ClusterNode } from '../cluster/cluster.node.js';
import type { ServerConfig } from '../config/flags.js';
import { ApiMetrics } from '../observability/metrics.js';
import { CLUSTER_NODE, PKI, SERVER_CONFIG, SERVER_ENDPOINT, STORAGE, type PkiMaterial, type ServerEndpoint } from '../tokens.js';

/** The storage backends this build has, by their `--storage-backend` names. */
export const STORAGE_BACKENDS = ['builtin'] as const;

/** Closes the node's storage last. */
@Injectable()
class StorageLifecycle implements OnApplicationShutdown {
  constructor(@Inject(CLUSTER_NODE) private readonly node: ClusterNode) {}

  async onApplicationShutdown(): Promise<void> {
    await this.node.close();
  }
}

async function openBuiltin(cfg: ServerConfig, pki: PkiMaterial, endpoint: ServerEndpoint, metrics: ApiMetrics): Promise<ClusterNode> {
  // Continue tokens are signed with a key every node of a cluster derives from the shared
  // service-account key, so a token from one node (or from before a restart) is accepted by any.
  setContinueTokenKey(createHash('sha256').update('kapi continue-token key\0').update(pki.saKeyPem).digest());
  return openClusterNode(cfg, path.resolve(cfg.dataDir), endpoint.url, metrics.registry, await resolvePeerTls(cfg, pki));
}

/** Global module providing CLUSTER_NODE and STORAGE. */
@Global()
@Module({})
export class StorageModule {
  /** The storage of `--storage-backend` (default: the built-in store). */
  static forRoot(cfg: ServerConfig): DynamicModule {
    const backend = cfg.raw['storage-backend'] || 'builtin';
    if (!(STORAGE_BACKENDS as readonly string[]).includes(backend)) {
      throw new Error(`--storage-backend: unsupported backend ${JSON.stringify(backend)}; this build has ${STORAGE_BACKENDS.join(', ')}`);
    }
    return {
      module: StorageModule,
      providers: [
        { provide: CLUSTER_NODE, useFactory: openBuiltin, inject: [SERVER_CONFIG, PKI, SERVER_ENDPOINT, ApiMetrics] },
        { provide: STORAGE, useFactory: (node: ClusterNode) => node.cs.storage, inject: [CLUSTER_NODE] },
        StorageLifecycle,
      ],
      exports: [CLUSTER_NODE, STORAGE],
    };
  }
}
