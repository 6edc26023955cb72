/**
 * The storage-protection controller (kube-controller-manager's pvc-protection and
 * pv-protection): removes kubernetes.io/pvc-protection from a terminating PersistentVolumeClaim
 * once no Pod uses it, and kubernetes.io/pv-protection from a terminating PersistentVolume once
 * it is not Bound. One storage watch over the core group feeds a queue of claims and volumes to
 * look at: a terminating claim or volume, and every terminating claim of a namespace whose Pods
 * change or go away. A periodic resync repairs anything a failed write left behind.
 */
import { Inject, Injectable } from '@nestjs/common';
import type { KubeObject } from '@app/apimachinery';
import { collectionPrefix, KindRegistry, type KindDeclaration, type RequestContext } from '@app/registry';
import type { Storage, StorageEvent } from '@app/storage';
import { PV_PROTECTION_FINALIZER, PVC_PROTECTION_FINALIZER } from '../admission/storage-protection.provider.js';
import { STORAGE, STORES, type StoreFactory } from '../tokens.js';
import { ManagedController } from './controller.runner.js';
import { WatchQueueController } from './watch-queue.controller.js';

const CONTROLLER_CTX = (): RequestContext => ({
  user: { username: 'system:serviceaccount:kube-system:pvc-protection-controller', groups: ['system:masters', 'system:authenticated'] },
  dryRun: false,
  warnings: [],
  now: () => new Date(),
});
/** Resync period: a missed event costs at most this long. */
const RESYNC_MS = 30_000;

/** Whether `pod` (not yet finished) mounts claim `claim` directly or through an ephemeral volume. */
export function podUsesClaim(pod: KubeObject, claim: string): boolean {
  const phase = (pod.status as { phase?: string } | undefined)?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return false;
  const volumes = (pod.spec as { volumes?: unknown } | undefined)?.volumes;
  if (!Array.isArray(volumes)) return false;
  return volumes.some((v: { name?: string; persistentVolumeClaim?: { claimName?: string }; ephemeral?: unknown }) => {
    if (v?.persistentVolumeClaim?.claimName === claim) return true;
    return v?.ephemeral !== undefined && `${pod.metadata.name}-${v.name}` === claim;
  });
}

/** Whether a terminating object still carries `finalizer` (the only case the controller acts on). */
export function awaitsFinalizer(obj: KubeObject | undefined, finalizer: string): boolean {
  return !!obj?.metadata.deletionTimestamp && Array.isArray(obj.metadata.finalizers) && obj.metadata.finalizers.includes(finalizer);
}

/** Runs the protection controllers while this node holds the controller Lease. */
@ManagedController({ name: 'storage-protection' })
@Injectable()
export class StorageProtectionRunner extends WatchQueueController {
  /** The claims and the pods, from watch-fed copies while this node leads (the pods' shared with the workload controllers). */
  private readonly readers = {
    claims: this.collection(() => this.decl('persistentvolumeclaims'), 'pvc-protection-controller: persistentvolumeclaims'),
    pods: this.collection(() => this.decl('pods'), 'pvc-protection-controller: pods'),
  };

  constructor(
    private readonly registry: KindRegistry,
    @Inject(STORAGE) storage: Storage,
    @Inject(STORES) private readonly stores: StoreFactory,
  ) {
    super(storage, 'storage-protection', RESYNC_MS);
  }

  private decl(plural: string): KindDeclaration | undefined {
    return this.registry.lookup('', 'v1', plural) as KindDeclaration | undefined;
  }

  protected kindsServed(): boolean {
    return true;
  }

  protected watchPrefixes(): string[] {
    return ['/registry/core/'];
  }

  /** Lists claims and volumes and queues the terminating ones. */
  protected async relist(): Promise<number> {
    let rev = 0;
    for (const plural of ['persistentvolumeclaims', 'persistentvolumes']) {
      const d = this.decl(plural);
      if (!d) continue;
      const res = await this.storage.list(collectionPrefix(d, ''), { consistency: { mode: 'MostRecent' } });
      rev = Math.max(rev, res.revision);
      for (const o of res.items) this.enqueueIfTerminating(plural, o);
    }
    return rev;
  }

  private enqueueIfTerminating(plural: string, o: KubeObject): void {
    const finalizer = plural === 'persistentvolumes' ? PV_PROTECTION_FINALIZER : PVC_PROTECTION_FINALIZER;
    if (awaitsFinalizer(o, finalizer)) this.queue.add(`${plural}/${o.metadata.namespace ?? ''}/${o.metadata.name}`);
  }

  protected onEvent(e: StorageEvent): void {
    const [, , , plural] = e.key.split('/');
    if (plural === 'persistentvolumeclaims' || plural === 'persistentvolumes') {
      if (e.type !== 'DELETED') this.enqueueIfTerminating(plural, e.object);
    } else if (plural === 'pods' && (e.type === 'DELETED' || e.prevObject)) {
      // A pod went away or changed: the terminating claims of its namespace may be free now.
      void this.requeueClaimsOf(e.object.metadata.namespace ?? '').catch((err) => this.retry(err));
    }
  }

  private async requeueClaimsOf(ns: string): Promise<void> {
    const d = this.decl('persistentvolumeclaims');
    if (!d) return;
    for (const o of await this.readers.claims.inNamespace(ns)) this.enqueueIfTerminating('persistentvolumeclaims', o);
    this.drain();
  }

  /** Removes the protection finalizer of one object if it is no longer in use. */
  protected async process(key: string): Promise<void> {
    const [plural, ns, name] = key.split('/') as [string, string, string];
    const d = this.decl(plural);
    if (!d) return;
    const finalizer = plural === 'persistentvolumes' ? PV_PROTECTION_FINALIZER : PVC_PROTECTION_FINALIZER;
    const store = this.stores.storeFor(d);
    let cur: KubeObject;
    try {
      cur = await store.get(ns, name);
    } catch {
      return; // gone already
    }
    if (!awaitsFinalizer(cur, finalizer)) return;
    if (plural === 'persistentvolumes') {
      if ((cur.status as { phase?: string } | undefined)?.phase === 'Bound') return;
    } else if (await this.claimInUse(ns, name)) return;
    const next: KubeObject = { ...cur, metadata: { ...cur.metadata, finalizers: (cur.metadata.finalizers as string[]).filter((f) => f !== finalizer) } };
    await store.update(ns, name, next, {
      ctx: CONTROLLER_CTX(),
      fieldValidation: 'Ignore',
      fieldManager: `${plural === 'persistentvolumes' ? 'pv' : 'pvc'}-protection-controller`,
    });
  }

  private async claimInUse(ns: string, claim: string): Promise<boolean> {
    const pods = this.decl('pods');
    if (!pods) return false;
    if ((await this.readers.pods.inNamespace(ns)).some((p) => podUsesClaim(p, claim))) return true;
    // Unused by the copy's pods: confirmed against storage before the finalizer goes, as kube's
    // controller asks the API server after its informer (a pod written through another node may
    // not be in this node's copy yet). Only a terminating claim gets here.
    const res = await this.storage.list(collectionPrefix(pods, ns), { consistency: { mode: 'MostRecent' } });
    return res.items.some((p) => podUsesClaim(p, claim));
  }
}
