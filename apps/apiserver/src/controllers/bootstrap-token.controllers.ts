/**
 * The bootstrap token controllers, run by the controller manager while this node holds the
 * controller Lease and only when `--enable-bootstrap-token-auth` is given (kube-controller-manager
 * runs its `tokencleaner` and `bootstrapsigner` when asked to): the token cleaner
 * (@app/controllers TokenCleaner) and the bootstrap signer (@app/controllers BootstrapSigner),
 * fed by the node's watched cache of the token Secrets and, for the signer, a watch of
 * kube-public/cluster-info. They write through the kinds' stores as their service accounts.
 */
import { Inject, Injectable } from '@nestjs/common';
import type { KubeObject } from '@app/apimachinery';
import { BootstrapSigner, CLUSTER_INFO, TokenCleaner } from '@app/controllers';
import { collectionPrefix, KindRegistry, type KindDeclaration, type RequestContext } from '@app/registry';
import type { Storage } from '@app/storage';
import { BootstrapTokenSecrets } from '../pipeline/bootstrap-token.watcher.js';
import { WatchedCollection } from '../pipeline/watched-collection.js';
import { STORAGE, STORES, type StoreFactory } from '../tokens.js';
import { ManagedController, type ControllerRunner } from './controller.runner.js';

const ctxOf = (serviceAccount: string) => (): RequestContext => ({
  user: {
    username: `system:serviceaccount:kube-system:${serviceAccount}`,
    groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'],
  },
  dryRun: false,
  warnings: [],
  now: () => new Date(),
});

/** Deletes expired bootstrap token Secrets (kube-controller-manager's tokencleaner). */
@ManagedController({ name: 'tokencleaner' })
@Injectable()
export class TokenCleanerRunner implements ControllerRunner {
  private controller: TokenCleaner | undefined;

  constructor(
    private readonly secrets: BootstrapTokenSecrets,
    private readonly registry: KindRegistry,
    @Inject(STORES) private readonly stores: StoreFactory,
  ) {}

  start(): void {
    if (!this.secrets.enabled) return;
    const store = this.stores.storeFor(this.registry.lookup('', 'v1', 'secrets') as KindDeclaration);
    const ctx = ctxOf('token-cleaner');
    const cache = this.secrets.cache;
    this.controller = new TokenCleaner({
      secrets: () => cache.entries(),
      secret: (key) => cache.byKey(key),
      onChange: (listener) => cache.onChange(listener, { perKey: true }),
      delete: async (s: KubeObject) => {
        await store.delete(s.metadata.namespace ?? '', s.metadata.name ?? '', { preconditions: { uid: s.metadata.uid } }, ctx());
      },
    });
    this.controller.start();
  }

  stop(): void {
    this.controller?.stop();
    this.controller = undefined;
  }
}

/** Keeps the jws-kubeconfig-<id> signatures of cluster-info (kube-controller-manager's bootstrapsigner). */
@ManagedController({ name: 'bootstrapsigner' })
@Injectable()
export class BootstrapSignerRunner implements ControllerRunner {
  private controller: BootstrapSigner | undefined;
  private clusterInfo: WatchedCollection<KubeObject> | undefined;

  constructor(
    private readonly secrets: BootstrapTokenSecrets,
    private readonly registry: KindRegistry,
    @Inject(STORAGE) private readonly storage: Storage,
    @Inject(STORES) private readonly stores: StoreFactory,
  ) {}

  start(): void {
    if (!this.secrets.enabled) return;
    const decl = this.registry.lookup('', 'v1', 'configmaps') as KindDeclaration;
    const store = this.stores.storeFor(decl);
    const ctx = ctxOf('bootstrap-signer');
    const clusterInfo = new WatchedCollection<KubeObject>(
      this.storage,
      collectionPrefix(decl, CLUSTER_INFO.namespace),
      (o) => (o.metadata.name === CLUSTER_INFO.name ? o : undefined),
      'bootstrap signer: cluster-info',
    );
    this.clusterInfo = clusterInfo;
    this.controller = new BootstrapSigner({
      secrets: () => this.secrets.all(),
      clusterInfo: () => clusterInfo.get(CLUSTER_INFO.namespace, CLUSTER_INFO.name),
      onChange: (listener) => {
        const a = this.secrets.cache.onChange(() => listener());
        const b = clusterInfo.onChange(() => listener());
        return () => {
          a();
          b();
        };
      },
      update: async (next) => {
        await store.update(CLUSTER_INFO.namespace, CLUSTER_INFO.name, next, { ctx: ctx(), fieldValidation: 'Ignore', fieldManager: 'bootstrap-signer' });
      },
    });
    const controller = this.controller;
    clusterInfo.start();
    // Not before both caches hold their first list: an empty token list would strip every
    // signature until the Secrets arrive.
    void Promise.all([this.secrets.cache.whenSynced(), clusterInfo.whenSynced()]).then(() => {
      if (this.controller === controller) controller.start();
    });
  }

  stop(): void {
    this.controller?.stop();
    this.controller = undefined;
    this.clusterInfo?.stop();
    this.clusterInfo = undefined;
  }
}
