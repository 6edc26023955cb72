/**
 * The ephemeral volume controller (kube-controller-manager's `ephemeral-volume`): every pod
 * volume of type `ephemeral` gets its PersistentVolumeClaim, named `<pod>-<volume>`, made from
 * the volume's claim template (its labels, annotations and spec) and controlled by the pod, so
 * the garbage collector deletes it with the pod. A claim of that name that the pod does not own
 * is left alone (kube refuses to use it for the pod). Pods being deleted get no claims.
 *
 * A watch of the pods queues the pods with ephemeral volumes; a deleted claim queues the pod
 * that owns it, so it is made again while the pod lives; a periodic resync retries failures.
 * A claim the server refuses is reported in a Warning Event on the pod (`FailedBinding`:
 * `PVC creation failed: ...`), as kube's controller does.
 */
import { Inject, Injectable } from '@nestjs/common';
import type { KubeObject } from '@app/apimachinery';
import { collectionPrefix, KindRegistry, type KindDeclaration } from '@app/registry';
import type { Storage, StorageEvent } from '@app/storage';
import { asMap, mapsOf } from '../groups/core/core.helpers.js';
import { STORAGE, STORES, type StoreFactory } from '../tokens.js';
import { ManagedController } from './controller.runner.js';
import { controllerOf, newControllerRef } from './disruption.logic.js';
import { EventRecorder } from './event.recorder.js';
import { KindController } from './kind.controller.js';

const codeOf = (e: unknown): number | undefined => (e as { code?: number }).code;

/** The ephemeral volumes of a pod with the name of the claim each gets (ephemeral.VolumeClaimName). */
export function ephemeralClaims(pod: KubeObject): Array<{ claim: string; template: Record<string, unknown> }> {
  return mapsOf(asMap(pod.spec).volumes)
    .filter((v) => v.ephemeral && typeof v.ephemeral === 'object')
    .map((v) => ({ claim: `${pod.metadata.name ?? ''}-${String(v.name ?? '')}`, template: asMap(asMap(v.ephemeral).volumeClaimTemplate) }));
}

/** The claim a pod's ephemeral volume gets from its template. */
export function claimFor(pod: KubeObject, claim: string, template: Record<string, unknown>): KubeObject {
  const meta = asMap(template.metadata);
  const metadata: KubeObject['metadata'] = {
    name: claim,
    namespace: pod.metadata.namespace,
    ownerReferences: [newControllerRef(pod, 'v1', 'Pod')],
  };
  if (meta.labels && typeof meta.labels === 'object') metadata.labels = structuredClone(meta.labels) as Record<string, string>;
  if (meta.annotations && typeof meta.annotations === 'object') metadata.annotations = structuredClone(meta.annotations) as Record<string, string>;
  return { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata, spec: structuredClone(asMap(template.spec)) };
}

/** Runs the ephemeral volume controller while this node holds the controller Lease. */
@ManagedController({ name: 'ephemeral-volume' })
@Injectable()
export class EphemeralVolumeControllerRunner extends KindController {
  constructor(registry: KindRegistry, @Inject(STORAGE) storage: Storage, @Inject(STORES) stores: StoreFactory, recorder: EventRecorder) {
    super(registry, storage, stores, recorder, 'ephemeral-volume-controller', 'ephemeral_volume');
  }

  private podDecl(): KindDeclaration | undefined {
    return this.decl('', 'pods');
  }

  private pvcDecl(): KindDeclaration | undefined {
    return this.decl('', 'persistentvolumeclaims');
  }

  protected kindsServed(): boolean {
    return !!this.podDecl() && !!this.pvcDecl();
  }

  protected watchPrefixes(): string[] {
    return [collectionPrefix(this.podDecl()!, ''), collectionPrefix(this.pvcDecl()!, '')];
  }

  protected async relist(): Promise<number> {
    const pods = await this.storage.list(collectionPrefix(this.podDecl()!, ''), { consistency: { mode: 'MostRecent' } });
    for (const p of pods.items) if (ephemeralClaims(p).length) this.queue.add(`${p.metadata.namespace ?? ''}/${p.metadata.name ?? ''}`);
    return pods.revision;
  }

  protected onEvent(e: StorageEvent): void {
    const o = e.object;
    if (e.key.startsWith(collectionPrefix(this.podDecl()!, ''))) {
      if (e.type !== 'DELETED' && ephemeralClaims(o).length) this.queue.add(`${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`);
      return;
    }
    // A claim deleted while its pod lives is made again.
    const owner = controllerOf(o);
    if (e.type === 'DELETED' && owner?.kind === 'Pod') this.queue.add(`${o.metadata.namespace ?? ''}/${owner.name}`);
  }

  protected async process(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    let pod: KubeObject;
    try {
      pod = await this.stores.storeFor(this.podDecl()!).get(ns, name);
    } catch (e) {
      if (codeOf(e) === 404) return;
      throw e;
    }
    if (pod.metadata.deletionTimestamp) return;
    const claims = this.stores.storeFor(this.pvcDecl()!);
    for (const { claim, template } of ephemeralClaims(pod)) {
      try {
        await claims.get(ns, claim);
        continue; // made already (or someone else's, which the pod will not use)
      } catch (e) {
        if (codeOf(e) !== 404) throw e;
      }
      try {
        await claims.create(ns, claimFor(pod, claim, template), { ctx: this.ctx(), fieldValidation: 'Ignore', fieldManager: this.user });
      } catch (e) {
        if (codeOf(e) === 409) continue; // made meanwhile
        this.events.record(pod, 'Warning', 'FailedBinding', 'PVC creation failed: %v', (e as Error).message);
        // A namespace going away, a quota, an invalid template: tried again after a while.
        if (codeOf(e) === 403 || codeOf(e) === 422) this.requeueAfter(key, 10_000);
        else throw e;
      }
    }
  }
}
