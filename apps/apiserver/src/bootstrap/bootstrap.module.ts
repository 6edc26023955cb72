/**
 * What a node does once it listens (post-start hooks, in order): create the objects every
 * cluster starts with, write the admin kubeconfig, and (last) register itself in the cluster's
 * member records. The controller election is the controllers module's hook.
 */
import * as path from 'node:path';
import { Inject, Injectable, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { StatusError } from '@app/apimachinery';
import { PRIVILEGED_GROUP } from '@app/auth';
import { KindRegistry, objectKey, type KindDeclaration } from '@app/registry';
import { StorageError, type Storage } from '@app/storage';
import { writeKubeconfig } from '@app/pki';
import type { ClusterNode } from '../cluster/cluster.node.js';
import type { ServerConfig } from '../config/flags.js';
import { CLUSTER_NODE, PKI, SERVER_CONFIG, SERVER_ENDPOINT, STORAGE, STORES, type PkiMaterial, type ServerEndpoint, type StoreFactory } from '../tokens.js';
import { PostStartHook, PostStartHooks, type PostStartHookProvider } from './post-start-hook.js';

/** Namespaces created at first start. */
export const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

/**
 * Creates the system namespaces when missing. In a cluster this needs a quorum: it retries
 * while storage is unavailable (any node may create them; the others get 409).
 */
@PostStartHook({ name: 'initial-objects', order: 100 })
@Injectable()
export class InitialObjects implements PostStartHookProvider {
  constructor(
    private readonly registry: KindRegistry,
    @Inject(STORAGE) private readonly storage: Storage,
    @Inject(STORES) private readonly stores: StoreFactory,
  ) {}

  async runPostStartHook(): Promise<void> {
    const decl = this.registry.lookup('', 'v1', 'namespaces') as KindDeclaration;
    const store = this.stores.storeFor(decl);
    for (const name of SYSTEM_NAMESPACES) {
      for (let attempt = 0; ; attempt++) {
        try {
          if (await this.storage.get(objectKey(decl, '', name), { mode: 'MostRecent' })) break;
          await store.create('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, {
            ctx: { user: { username: 'system:apiserver', groups: [PRIVILEGED_GROUP] }, dryRun: false, warnings: [], now: () => new Date() },
            fieldValidation: 'Strict',
          });
          break;
        } catch (e) {
          if (e instanceof StatusError && e.code === 409) break;
          const unavailable = (e instanceof StatusError && (e.code === 503 || e.code === 504)) || (e instanceof StorageError && e.code === 'Unavailable');
          if (!unavailable) throw e;
          if (attempt % 10 === 0) process.stderr.write(`waiting for a Raft quorum to create namespace ${name}: ${(e as Error).message}\n`);
          await new Promise((r) => setTimeout(r, 500));
        }
      }
    }
  }
}

/** Writes `<data-dir>/admin.kubeconfig` (system:masters) for this node's URL. */
@PostStartHook({ name: 'admin-kubeconfig', order: 200 })
@Injectable()
export class AdminKubeconfig implements PostStartHookProvider {
  constructor(
    @Inject(SERVER_CONFIG) private readonly cfg: ServerConfig,
    @Inject(PKI) private readonly pki: PkiMaterial,
    @Inject(SERVER_ENDPOINT) private readonly endpoint: ServerEndpoint,
  ) {}

  /** Where the kubeconfig is written. */
  get path(): string {
    return path.join(path.resolve(this.cfg.dataDir), 'admin.kubeconfig');
  }

  async runPostStartHook(): Promise<void> {
    await writeKubeconfig(this.path, { server: this.endpoint.url, caPem: this.pki.caPem, certPem: this.pki.adminCertPem, keyPem: this.pki.adminKeyPem });
  }
}

/** Starts the background self-registration in the member records (docs/cluster.md). */
@PostStartHook({ name: 'cluster-registration', order: 400 })
@Injectable()
export class ClusterRegistration implements PostStartHookProvider {
  constructor(@Inject(CLUSTER_NODE) private readonly node: ClusterNode) {}

  async runPostStartHook(): Promise<void> {
    this.node.startBackground();
  }
}

/** The post-start hooks of a node and their runner. */
@Module({
  imports: [DiscoveryModule],
  providers: [PostStartHooks, InitialObjects, AdminKubeconfig, ClusterRegistration],
  exports: [PostStartHooks, AdminKubeconfig],
})
export class BootstrapModule {}
