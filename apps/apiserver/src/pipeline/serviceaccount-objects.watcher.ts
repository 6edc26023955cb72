/**
 * The objects service-account authentication looks up, kept in memory from storage watches on
 * every node (WatchedCollection): ServiceAccounts, Secrets (uid, and a hash of `data.token`,
 * never the data) and, when a Pod kind is served, Pods. A deletion made through any node is
 * seen here as soon as this node applies it, and no request reads storage to check a token.
 */
import { createHash } from 'node:crypto';
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { KubeObject } from '@app/apimachinery';
import type { ServiceAccountLookup } from '@app/auth';
import { KindRegistry } from '@app/registry';
import type { Storage } from '@app/storage';
import { STORAGE } from '../tokens.js';
import { WatchedCollection } from './watched-collection.js';

/** What is kept of an object: its uid, undefined once it is terminating. */
interface Live {
  uid: string;
  tokenHash?: string;
}

/** The uid of an object that is not terminating. */
function live(obj: KubeObject): Live | undefined {
  const m = obj.metadata;
  if (!m?.uid || m.deletionTimestamp) return undefined;
  return { uid: m.uid };
}

/** A Secret's uid and the SHA-256 of its decoded `data.token`. */
function liveSecret(obj: KubeObject): Live | undefined {
  const l = live(obj);
  const token = (obj as { data?: Record<string, string> }).data?.token;
  if (l && typeof token === 'string') l.tokenHash = createHash('sha256').update(Buffer.from(token, 'base64').toString('utf8')).digest('hex');
  return l;
}

/** The lookups of the service-account method, fed by watches. */
@Injectable()
export class ServiceAccountObjectsWatcher implements ServiceAccountLookup, OnApplicationBootstrap, OnApplicationShutdown {
  readonly serviceAccounts: WatchedCollection<Live>;
  readonly secrets: WatchedCollection<Live>;
  pods: WatchedCollection<Live> | undefined;

  constructor(
    @Inject(STORAGE) private readonly storage: Storage,
    private readonly registry: KindRegistry,
  ) {
    this.serviceAccounts = new WatchedCollection(storage, '/registry/core/serviceaccounts/', live, 'service accounts');
    this.secrets = new WatchedCollection(storage, '/registry/core/secrets/', liveSecret, 'secrets');
  }

  onApplicationBootstrap(): void {
    this.serviceAccounts.start();
    this.secrets.start();
    // Pods are looked up only when some module serves them.
    if (this.registry.lookup('', 'v1', 'pods')) {
      this.pods = new WatchedCollection(this.storage, '/registry/core/pods/', live, 'pods');
      this.pods.start();
    }
  }

  onApplicationShutdown(): void {
    this.serviceAccounts.stop();
    this.secrets.stop();
    this.pods?.stop();
  }

  /** Whether every collection has loaded its first list (before that, a lookup would miss live objects). */
  isSynced(): boolean {
    return this.serviceAccounts.isSynced() && this.secrets.isSynced() && (this.pods?.isSynced() ?? true);
  }

  /** Resolves once every collection has loaded its first list. */
  async whenSynced(): Promise<void> {
    await Promise.all([this.serviceAccounts.whenSynced(), this.secrets.whenSynced(), this.pods?.whenSynced()]);
  }

  serviceAccountUid(namespace: string, name: string): string | undefined {
    return this.serviceAccounts.get(namespace, name)?.uid;
  }

  secretUid(namespace: string, name: string): string | undefined {
    return this.secrets.get(namespace, name)?.uid;
  }

  secretTokenHash(namespace: string, name: string): string | undefined {
    return this.secrets.get(namespace, name)?.tokenHash;
  }

  podUid(namespace: string, name: string): string | undefined {
    return this.pods?.get(namespace, name)?.uid;
  }
}
