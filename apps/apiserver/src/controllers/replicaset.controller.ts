/**
 * The ReplicaSet and ReplicationController controllers (kube-controller-manager's): each keeps
 * as many active pods as its controller asks for. A sync of one controller lists the pods of its
 * namespace, adopts the orphans its selector selects and releases its pods the selector no longer
 * selects (their ownerReferences), creates the missing pods from the template (in batches of 1,
 * 2, 4, ..., at most 500 a sync, the server naming them `<controller>-<random>`) or deletes the
 * extra ones (the least useful first), records an Event for each, and writes the status
 * (replicas, fullyLabeledReplicas, readyReplicas, availableReplicas, observedGeneration, a
 * ReplicaFailure condition while pods cannot be created or deleted). Nothing runs pods here, so
 * they stay Pending: replicas count them, readyReplicas and availableReplicas do not.
 *
 * Watches of the controllers and of the pods queue the controllers concerned (a pod's own
 * controller, or every controller of its namespace for an orphan); a periodic resync repairs
 * what a failed write left behind. Pods are created through the Pod kind's store, so admission
 * (quota, limit ranges, the service account) applies to them as to any other client's.
 */
import { Inject, Injectable } from '@nestjs/common';
import type { KubeObject } from '@app/apimachinery';
import { collectionPrefix, KindRegistry, type KindDeclaration, type RequestContext } from '@app/registry';
import type { Storage, StorageEvent } from '@app/storage';
import { asMap } from '../groups/core/core.helpers.js';
import { STORAGE, STORES, type StoreFactory } from '../tokens.js';
import { controllerContext, ManagedController } from './controller.runner.js';
import { controllerOf } from './disruption.logic.js';
import { CollectionReader } from '../pipeline/collection-reader.js';
import { EventRecorder, type ComponentRecorder } from './event.recorder.js';
import {
  BURST_REPLICAS,
  claimPods,
  controllerRef,
  desiredReplicas,
  isActive,
  podFromTemplate,
  podsToDelete,
  replicaSetStatus,
  slowStartBatches,
  statusDiffers,
  type ReplicatedKind,
} from './replicaset.logic.js';
import { NamesByNamespace, WatchQueueController } from './watch-queue.controller.js';

/** Resync period: a missed event costs at most this long. */
const RESYNC_MS = 30_000;

const KINDS: Record<ReplicatedKind, { group: string; plural: string; user: string; tag: string }> = {
  ReplicaSet: { group: 'apps', plural: 'replicasets', user: 'replicaset-controller', tag: 'rs' },
  ReplicationController: { group: '', plural: 'replicationcontrollers', user: 'replication-controller', tag: 'rc' },
};

const codeOf = (e: unknown): number | undefined => (e as { code?: number }).code;
const messageOf = (e: unknown): string => (e as Error).message ?? String(e);

/** Runs the controller of one kind while this node holds the controller Lease. */
abstract class ReplicatedController extends WatchQueueController {
  /** Controller names per namespace, from the list and the watch. */
  private readonly names = new NamesByNamespace();
  private readonly events: ComponentRecorder;
  private readonly info: (typeof KINDS)[ReplicatedKind];
  /** The pods, from a watch-fed copy while this node leads. */
  private readonly pods: CollectionReader;

  protected constructor(
    private readonly kind: ReplicatedKind,
    private readonly registry: KindRegistry,
    storage: Storage,
    private readonly stores: StoreFactory,
    recorder: EventRecorder,
  ) {
    super(storage, KINDS[kind].user, RESYNC_MS);
    this.info = KINDS[kind];
    this.events = recorder.for(this.info.user);
    this.pods = this.collection(() => this.podDecl(), `${this.info.user}: pods`);
  }

  private ctx(): RequestContext {
    return controllerContext(this.info.user);
  }

  private decl(): KindDeclaration | undefined {
    return this.registry.lookup(this.info.group, 'v1', this.info.plural) as KindDeclaration | undefined;
  }

  private podDecl(): KindDeclaration | undefined {
    return this.registry.lookup('', 'v1', 'pods') as KindDeclaration | undefined;
  }

  protected kindsServed(): boolean {
    return this.decl() !== undefined && this.podDecl() !== undefined;
  }

  protected override reset(): void {
    this.names.clear();
  }

  protected watchPrefixes(): string[] {
    return [collectionPrefix(this.decl()!, ''), collectionPrefix(this.podDecl()!, '')];
  }

  protected async relist(): Promise<number> {
    const res = await this.storage.list(collectionPrefix(this.decl()!, ''), { consistency: { mode: 'MostRecent' } });
    this.names.clear();
    for (const o of res.items) {
      this.names.add(o);
      this.queue.add(`${o.metadata.namespace ?? ''}/${o.metadata.name}`);
    }
    return res.revision;
  }

  protected onEvent(e: StorageEvent): void {
    const ns = e.object.metadata.namespace ?? '';
    if (e.key.startsWith(collectionPrefix(this.decl()!, ''))) {
      this.names.apply(e);
      this.queue.add(`${ns}/${e.object.metadata.name ?? ''}`);
      return;
    }
    // A pod: its controller, or (an orphan) every controller of the namespace that may adopt it.
    const ref = controllerOf(e.object);
    if (ref) {
      if (ref.kind === this.kind) this.queue.add(`${ns}/${ref.name}`);
      return;
    }
    for (const key of this.names.keys(ns)) this.queue.add(key);
  }

  protected async process(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const store = this.stores.storeFor(this.decl()!);
    const podDecl = this.podDecl()!;
    const pods = this.stores.storeFor(podDecl);
    let rs: KubeObject;
    try {
      rs = await store.get(ns, name);
    } catch (e) {
      if (codeOf(e) === 404) return;
      throw e;
    }
    const all = await this.pods.inNamespace(ns);
    const claim = claimPods(this.kind, rs, all);
    const ref = controllerRef(this.kind, rs);
    const owned = [...claim.owned];
    for (const pod of claim.adopt) {
      const refs = Array.isArray(pod.metadata.ownerReferences) ? pod.metadata.ownerReferences : [];
      if (!(await this.writePod(ns, { ...pod, metadata: { ...pod.metadata, ownerReferences: [...refs, ref] } }))) owned.splice(owned.indexOf(pod), 1);
    }
    for (const pod of claim.release) {
      const refs = (Array.isArray(pod.metadata.ownerReferences) ? pod.metadata.ownerReferences : []).filter((r) => asMap(r).uid !== rs.metadata.uid);
      await this.writePod(ns, { ...pod, metadata: { ...pod.metadata, ownerReferences: refs } });
    }

    let failure: { reason: 'FailedCreate' | 'FailedDelete'; message: string } | undefined;
    const active = owned.filter(isActive);
    const diff = active.length - desiredReplicas(rs);
    if (!rs.metadata.deletionTimestamp && diff < 0) {
      for (const size of slowStartBatches(Math.min(-diff, BURST_REPLICAS))) {
        const results = await Promise.allSettled(
          Array.from({ length: size }, () =>
            pods.create(ns, podFromTemplate(this.kind, rs), { ctx: this.ctx(), fieldValidation: 'Ignore', fieldManager: this.info.user }),
          ),
        );
        for (const r of results) {
          if (r.status === 'fulfilled') {
            owned.push(r.value);
            this.events.record(rs, 'Normal', 'SuccessfulCreate', 'Created pod: %v', r.value.metadata.name);
          } else {
            failure ??= { reason: 'FailedCreate', message: messageOf(r.reason) };
            this.events.record(rs, 'Warning', 'FailedCreate', 'Error creating: %v', messageOf(r.reason));
          }
        }
        // A batch with a failure ends the sync's creations: the next sync tries again.
        if (failure) break;
      }
    } else if (!rs.metadata.deletionTimestamp && diff > 0) {
      const victims = podsToDelete(active, Math.min(diff, BURST_REPLICAS));
      const results = await Promise.allSettled(
        victims.map((p) => pods.delete(ns, p.metadata.name ?? '', { preconditions: { uid: p.metadata.uid } }, this.ctx())),
      );
      results.forEach((r, i) => {
        const pod = victims[i]!;
        if (r.status === 'fulfilled' || codeOf(r.reason) === 404) {
          // Deleted (or already gone): it no longer counts.
          const at = owned.indexOf(pod);
          if (at >= 0) owned.splice(at, 1);
          if (r.status === 'fulfilled') this.events.record(rs, 'Normal', 'SuccessfulDelete', 'Deleted pod: %v', pod.metadata.name);
        } else {
          failure ??= { reason: 'FailedDelete', message: messageOf(r.reason) };
          this.events.record(rs, 'Warning', 'FailedDelete', 'Error deleting: %v', messageOf(r.reason));
        }
      });
    }

    const status = replicaSetStatus(rs, owned, new Date(), failure);
    if (statusDiffers(rs, status)) {
      try {
        await store.update(ns, name, { ...rs, status }, { ctx: this.ctx(), fieldValidation: 'Ignore', subresource: 'status', fieldManager: this.info.user });
      } catch (e) {
        if (codeOf(e) === 404) return;
        if (codeOf(e) !== 409) throw e;
        this.retryLater(key); // changed meanwhile: look again
      }
    }
    // After a failure (a quota, a namespace going away) the next attempt comes after a while.
    if (failure) this.later(key);
  }

  /** Writes a pod's new ownerReferences; false when it changed or went away meanwhile (the next sync looks again). */
  private async writePod(ns: string, pod: KubeObject): Promise<boolean> {
    try {
      await this.stores
        .storeFor(this.podDecl()!)
        .update(ns, pod.metadata.name ?? '', pod, { ctx: this.ctx(), fieldValidation: 'Ignore', fieldManager: this.info.user });
      return true;
    } catch (e) {
      if (codeOf(e) === 404 || codeOf(e) === 409) return false;
      throw e;
    }
  }

  private later(key: string): void {
    this.requeueAfter(key, 5_000);
  }
}

/** The ReplicaSet controller. */
@ManagedController({ name: 'replicaset' })
@Injectable()
export class ReplicaSetControllerRunner extends ReplicatedController {
  constructor(registry: KindRegistry, @Inject(STORAGE) storage: Storage, @Inject(STORES) stores: StoreFactory, recorder: EventRecorder) {
    super('ReplicaSet', registry, storage, stores, recorder);
  }
}

/** The ReplicationController controller. */
@ManagedController({ name: 'replicationcontroller' })
@Injectable()
export class ReplicationControllerRunner extends ReplicatedController {
  constructor(registry: KindRegistry, @Inject(STORAGE) storage: Storage, @Inject(STORES) stores: StoreFactory, recorder: EventRecorder) {
    super('ReplicationController', registry, storage, stores, recorder);
  }
}
