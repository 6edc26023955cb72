/**
 * The bootstrap token Secrets of kube-system (type bootstrap.kubernetes.io/token) on every node,
 * kept in memory by a storage watch (watched-collection.ts) while `--enable-bootstrap-token-auth`
 * is given: the authentication method reads a token's Secret from here (no storage read per
 * request), and the token cleaner and bootstrap signer react to its changes. A Secret deleted
 * or changed through any node of a cluster is seen here as soon as this node applies the write.
 */
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { KubeObject } from '@app/apimachinery';
import { BOOTSTRAP_TOKEN_NAMESPACE, isBootstrapTokenSecret } from '@app/auth';
import { collectionPrefix } from '@app/registry';
import type { Storage } from '@app/storage';
import type { ServerConfig } from '../config/flags.js';
import { SERVER_CONFIG, STORAGE } from '../tokens.js';
import { WatchedCollection } from './watched-collection.js';

/** How long a request waits for the first list of the Secrets before it is not this method's. */
const SYNC_WAIT_MS = 5000;

/** Whether bootstrap tokens are enabled (`--enable-bootstrap-token-auth`, default false as kube-apiserver). */
export function bootstrapTokensEnabled(cfg: ServerConfig): boolean {
  return cfg.raw['enable-bootstrap-token-auth'] === 'true';
}

/** The watched bootstrap token Secrets (empty and idle when the flag is not given). */
@Injectable()
export class BootstrapTokenSecrets implements OnApplicationBootstrap, OnApplicationShutdown {
  /** Whether the flag is given. */
  readonly enabled: boolean;
  /** The cache itself (its onChange tells the controllers). */
  readonly cache: WatchedCollection<KubeObject>;

  constructor(@Inject(SERVER_CONFIG) cfg: ServerConfig, @Inject(STORAGE) storage: Storage) {
    this.enabled = bootstrapTokensEnabled(cfg);
    this.cache = new WatchedCollection<KubeObject>(
      storage,
      collectionPrefix({ group: '', plural: 'secrets', namespaced: true }, BOOTSTRAP_TOKEN_NAMESPACE),
      (o) => (isBootstrapTokenSecret(o) ? o : undefined),
      'bootstrap token secrets',
    );
  }

  onApplicationBootstrap(): void {
    if (this.enabled) this.cache.start();
  }

  onApplicationShutdown(): void {
    this.cache.stop();
  }

  /**
   * The Secret of that name in kube-system. Before the first list has loaded (just after start)
   * it waits for it, at most a few seconds, then answers from what it has.
   */
  async secret(name: string): Promise<KubeObject | undefined> {
    if (!this.cache.isSynced()) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.cache.whenSynced(), new Promise<void>((resolve) => (timer = setTimeout(resolve, SYNC_WAIT_MS)))]);
      clearTimeout(timer);
    }
    return this.cache.get(BOOTSTRAP_TOKEN_NAMESPACE, name);
  }

  /** Every bootstrap token Secret. */
  all(): KubeObject[] {
    return this.cache.values();
  }
}
