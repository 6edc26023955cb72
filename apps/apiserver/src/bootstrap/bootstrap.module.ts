/**
 * What a node does once it listens (post-start hooks, in order): create the objects every
 * cluster starts with (and, with bootstrap tokens, cluster-info), write the admin kubeconfig.
 * The controller election is the controllers module's hook; the built-in storage backend adds
 * the Raft member's self-registration (storage/storage.builtin.ts).
 */
import { servingTrustPem } from '../serving.tls.js';
import * as path from 'node:path';
import { Inject, Injectable, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { KindRegistry } from '@app/registry';
import type { Storage } from '@app/storage';
import { writeKubeconfig } from '@app/pki';
import type { ServerConfig } from '../config/flags.js';
import { PKI, SERVER_CONFIG, SERVER_ENDPOINT, STORAGE, STORES, type PkiMaterial, type ServerEndpoint, type StoreFactory } from '../tokens.js';
import { ClusterInfoPublisher } from './cluster-info.publisher.js';
import { createInitialObjects } from './initial-objects.js';
import { PostStartHook, PostStartHooks, type PostStartHookProvider } from './post-start-hook.js';

/**
 * Creates every served kind's `initialObjects` that do not exist yet (the system namespaces, the
 * built-in PriorityClasses): bootstrap/initial-objects.ts, waiting for a quorum in a cluster;
 * then, with bootstrap tokens enabled, cluster-info and its RBAC (cluster-info.publisher.ts).
 */
@PostStartHook({ name: 'initial-objects', order: 100 })
@Injectable()
export class InitialObjects implements PostStartHookProvider {
  constructor(
    private readonly registry: KindRegistry,
    @Inject(STORAGE) private readonly storage: Storage,
    @Inject(STORES) private readonly stores: StoreFactory,
    private readonly clusterInfo: ClusterInfoPublisher,
  ) {}

  async runPostStartHook(): Promise<void> {
    await createInitialObjects({
      kinds: this.registry.all(),
      storage: this.storage,
      create: (decl, ns, obj, opts) => this.stores.storeFor(decl).create(ns, obj, opts),
      update: (decl, ns, obj, opts) => this.stores.storeFor(decl).update(ns, obj.metadata.name ?? '', obj, opts),
      remove: (decl, ns, existing, opts) =>
        this.stores
          .storeFor(decl)
          .delete(
            ns,
            existing.metadata.name ?? '',
            { preconditions: { uid: existing.metadata.uid, resourceVersion: existing.metadata.resourceVersion } },
            opts.ctx,
          ),
    });
    await this.clusterInfo.publish();
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
    // The cluster CA, and the chain of a serving certificate from --tls-cert-file.
    const caPem = servingTrustPem(this.cfg, this.pki);
    await writeKubeconfig(this.path, { server: this.endpoint.url, caPem, certPem: this.pki.adminCertPem, keyPem: this.pki.adminKeyPem });
  }
}

/** The post-start hooks of a node and their runner. */
@Module({
  imports: [DiscoveryModule],
  providers: [PostStartHooks, InitialObjects, ClusterInfoPublisher, AdminKubeconfig],
  exports: [PostStartHooks, AdminKubeconfig],
})
export class BootstrapModule {}
