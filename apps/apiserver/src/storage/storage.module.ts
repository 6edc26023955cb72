/**
 * The storage provider, chosen from the flags (`--storage-backend`, docs/storage-backends.md):
 * `builtin`, a Raft group on LevelDB (a single node is a group of one; docs/cluster.md), or
 * `etcd3`, an external etcd cluster. Either is a StorageBackend (storage.backend.ts), so health
 * checks, metrics, hooks and routes need not know which runs. The module opens it while Nest
 * resolves providers (so everything that injects STORAGE gets an open store), and closes it in
 * onApplicationShutdown, after the HTTP server has stopped and the controllers are gone (a
 * global module: its hooks run first at start and last at shutdown).
 */
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { Global, Inject, Injectable, Module, type DynamicModule, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { setContinueTokenKey } from '@app/storage';
import { openClusterNode, resolvePeerTls, type ClusterNode } from '../cluster/cluster.node.js';
import { BUILT_STORAGE_BACKENDS, type ServerConfig } from '../config/flags.js';
import { ApiMetrics } from '../observability/metrics.js';
import { CLUSTER_NODE, PKI, SERVER_CONFIG, SERVER_ENDPOINT, STORAGE, STORAGE_BACKEND, type PkiMaterial, type ServerEndpoint } from '../tokens.js';
import type { StorageBackend } from './storage.backend.js';
import { ClusterRegistration, builtinBackend } from './storage.builtin.js';
import { openEtcd3Backend } from './storage.etcd3.js';

/** The storage backends this build has, by their `--storage-backend` names. */
export const STORAGE_BACKENDS = BUILT_STORAGE_BACKENDS;

/** Closes the storage last. */
@Injectable()
class StorageLifecycle implements OnApplicationShutdown {
  constructor(@Inject(STORAGE_BACKEND) private readonly backend: StorageBackend) {}

  async onApplicationShutdown(): Promise<void> {
    await this.backend.close();
  }
}

/**
 * Continue tokens are signed with a key every server derives from the shared service-account
 * key, so a token from one server (or from before a restart) is accepted by any other of the
 * cluster: the Raft group's nodes, or the API servers sharing one etcd (give them one PKI).
 */
function setSharedContinueTokenKey(pki: PkiMaterial): void {
  setContinueTokenKey(createHash('sha256').update('kapi continue-token key\0').update(pki.saKeyPem).digest());
}

async function openBuiltin(cfg: ServerConfig, pki: PkiMaterial, endpoint: ServerEndpoint, metrics: ApiMetrics): Promise<ClusterNode> {
  setSharedContinueTokenKey(pki);
  return openClusterNode(cfg, path.resolve(cfg.dataDir), endpoint.url, metrics.registry, await resolvePeerTls(cfg, pki));
}

async function openEtcd3(cfg: ServerConfig, pki: PkiMaterial, metrics: ApiMetrics): Promise<StorageBackend> {
  setSharedContinueTokenKey(pki);
  return openEtcd3Backend(cfg, metrics.registry);
}

/** Global module providing STORAGE_BACKEND and STORAGE (and CLUSTER_NODE with the built-in store). */
@Global()
@Module({})
export class StorageModule {
  /** The storage of `--storage-backend` (default: the built-in store). */
  static forRoot(cfg: ServerConfig): DynamicModule {
    const backend = cfg.raw['storage-backend'] || 'builtin';
    if (!STORAGE_BACKENDS.includes(backend)) {
      throw new Error(`--storage-backend: unsupported backend ${JSON.stringify(backend)}; this build has ${STORAGE_BACKENDS.join(', ')}`);
    }
    const storage: Provider = { provide: STORAGE, useFactory: (b: StorageBackend) => b.storage, inject: [STORAGE_BACKEND] };
    if (backend === 'etcd3') {
      return {
        module: StorageModule,
        providers: [{ provide: STORAGE_BACKEND, useFactory: openEtcd3, inject: [SERVER_CONFIG, PKI, ApiMetrics] }, storage, StorageLifecycle],
        exports: [STORAGE_BACKEND, STORAGE],
      };
    }
    return {
      module: StorageModule,
      providers: [
        { provide: CLUSTER_NODE, useFactory: openBuiltin, inject: [SERVER_CONFIG, PKI, SERVER_ENDPOINT, ApiMetrics] },
        { provide: STORAGE_BACKEND, useFactory: builtinBackend, inject: [CLUSTER_NODE] },
        storage,
        StorageLifecycle,
        ClusterRegistration,
      ],
      exports: [CLUSTER_NODE, STORAGE_BACKEND, STORAGE],
    };
  }
}
