/**
 * The StatefulSet controller (kube-controller-manager's statefulset controller): keeps one pod
 * per ordinal, `<set>-<ordinal>` for ordinals [start, start + replicas), each with its claims
 * `<template>-<set>-<ordinal>` from volumeClaimTemplates (created before the pod, kept after it:
 * the Retain policy). A sync of one StatefulSet:
 *
 * - adopts the orphan pods named as its members that its selector selects, and releases its
 *   pods the selector no longer selects;
 * - finds the ControllerRevision of its current template (the update revision), creating it
 *   (`<set>-<hash>`, numbered one above the others; a revision of an earlier template taken back
 *   into use is renumbered), and the current revision (`status.currentRevision`);
 * - takes one step (statefulset.logic.ts `plan`): under OrderedReady (the default) pods are
 *   created lowest ordinal first and removed highest first, each waiting until the ones before
 *   it are Running and Ready; Parallel does everything at once. Failed and succeeded pods are
 *   deleted and created again. A RollingUpdate then replaces, from the highest ordinal down to
 *   the partition, one pod of an older revision at a time once all are healthy; OnDelete
 *   replaces only pods someone deleted;
 * - writes the status (replicas, ready, available, current and updated counts and revisions;
 *   the update revision becomes the current one once every pod has it and is ready) and deletes
 *   the unused revisions beyond `revisionHistoryLimit`.
 *
 * Nothing runs pods here: they stay Pending until something writes their status, so an
 * OrderedReady set stops at its first pod, as in a cluster without nodes.
 */
import { Inject, Injectable } from '@nestjs/common';
import type { KubeObject } from '@app/apimachinery';
import { collectionPrefix, KindRegistry } from '@app/registry';
import type { Storage, StorageEvent } from '@app/storage';
import { asMap } from '../groups/core/core.helpers.js';
import { STORAGE, STORES, type StoreFactory } from '../tokens.js';
import { ManagedController } from './controller.runner.js';
import { KindController } from './kind.controller.js';
import { controllerOf, newControllerRef } from './disruption.logic.js';
import { EventRecorder } from './event.recorder.js';
import { equalRevisions, newRevision, nextRevisionNumber, sortRevisions, templateOfRevision, templatePatch } from './history.logic.js';
import { claimPods } from './replicaset.logic.js';
import {
  claimOwnerRefs,
  claimsOf,
  ordinalOf,
  plan,
  podFor,
  replicasOf,
  revisionOfPod,
  startOrdinal,
  statefulSetStatus,
  statusChanged,
} from './statefulset.logic.js';
import { NamesByNamespace } from './watch-queue.controller.js';

const USER = 'statefulset-controller';

const codeOf = (e: unknown): number | undefined => (e as { code?: number }).code;
const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** Runs the StatefulSet controller while this node holds the controller Lease. */
@ManagedController({ name: 'statefulset' })
@Injectable()
export class StatefulSetControllerRunner extends KindController {
  /** The pods, from a watch-fed copy while this node leads. */
  private readonly podReader = this.collection(() => this.decl('', 'pods'), 'statefulset-controller: pods');
  /** The ControllerRevisions and the claims, from watch-fed copies while this node leads. */
  private readonly revisionReader = this.collection(() => this.decl('apps', 'controllerrevisions'), 'statefulset-controller: controllerrevisions');
  private readonly claimReader = this.collection(() => this.decl('', 'persistentvolumeclaims'), 'statefulset-controller: persistentvolumeclaims');
  private readonly names = new NamesByNamespace();
  constructor(registry: KindRegistry, @Inject(STORAGE) storage: Storage, @Inject(STORES) stores: StoreFactory, recorder: EventRecorder) {
    super(registry, storage, stores, recorder, USER);
  }

  protected kindsServed(): boolean {
    return ['statefulsets', 'controllerrevisions'].every((p) => this.decl('apps', p)) && this.decl('', 'pods') !== undefined;
  }

  protected override reset(): void {
    this.names.clear();
  }

  protected watchPrefixes(): string[] {
    return [collectionPrefix(this.decl('apps', 'statefulsets')!, ''), collectionPrefix(this.decl('', 'pods')!, '')];
  }

  protected relist(): Promise<number> {
    return this.listAndQueue(this.decl('apps', 'statefulsets')!, this.names);
  }

  protected onEvent(e: StorageEvent): void {
    const ns = e.object.metadata.namespace ?? '';
    if (e.key.startsWith(collectionPrefix(this.decl('apps', 'statefulsets')!, ''))) {
      this.names.apply(e);
      if (e.type !== 'DELETED') this.queue.add(`${ns}/${e.object.metadata.name ?? ''}`);
      return;
    }
    // A pod: its controller, or (an orphan) every StatefulSet of the namespace that may adopt it.
    const ref = controllerOf(e.object);
    if (ref) {
      if (ref.kind === 'StatefulSet') this.queue.add(`${ns}/${ref.name}`);
      return;
    }
    for (const key of this.names.keys(ns)) this.queue.add(key);
  }

  protected async process(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    try {
      await this.syncSet(ns, name);
    } catch (e) {
      if (codeOf(e) !== 409) throw e;
      this.retryLater(key); // a write lost a race: look again from fresh copies
    }
  }

  private async syncSet(ns: string, name: string): Promise<void> {
    const key = `${ns}/${name}`;
    let set: KubeObject;
    try {
      set = await this.stores.storeFor(this.decl('apps', 'statefulsets')!).get(ns, name);
    } catch (e) {
      if (codeOf(e) === 404) return;
      throw e;
    }
    if (set.metadata.deletionTimestamp) return;
    const podStore = this.stores.storeFor(this.decl('', 'pods')!);
    const all = await this.podReader.inNamespace(ns);
    // Its members only: a pod named `<set>-<ordinal>` (the selector rule is a ReplicaSet's).
    const claim = claimPods(
      'ReplicaSet',
      set,
      all.filter((p) => controllerOf(p) || ordinalOf(set, p) !== undefined),
    );
    let pods = [...claim.owned];
    const ref = newControllerRef(set, 'apps/v1', 'StatefulSet');
    for (const pod of claim.adopt) {
      const refs = Array.isArray(pod.metadata.ownerReferences) ? pod.metadata.ownerReferences : [];
      if (!(await this.writePod(ns, { ...pod, metadata: { ...pod.metadata, ownerReferences: [...refs, ref] } }))) pods = pods.filter((p) => p !== pod);
    }
    for (const pod of claim.release) {
      const refs = (Array.isArray(pod.metadata.ownerReferences) ? pod.metadata.ownerReferences : []).filter((r) => asMap(r).uid !== set.metadata.uid);
      await this.writePod(ns, { ...pod, metadata: { ...pod.metadata, ownerReferences: refs } });
    }

    await this.reconcileClaimOwners(set, pods);
    const { current, update, revisions, collisionCount } = await this.revisions(set);
    const now = new Date();
    for (const action of plan(set, pods, update.metadata.name ?? '', now)) {
      if (action.type === 'wait') break;
      if (action.type === 'create') {
        const revision = action.revision === 'current' ? current : update;
        const pod = podFor(set, templateOfRevision(revision), revision.metadata.name ?? '', action.ordinal);
        if (!(await this.createClaims(set, pod, action.ordinal))) break;
        try {
          const created = await podStore.create(ns, pod, { ctx: this.ctx(), fieldValidation: 'Ignore', fieldManager: USER });
          pods.push(created);
          this.events.record(set, 'Normal', 'SuccessfulCreate', 'create Pod %s in StatefulSet %s successful', pod.metadata.name, name);
        } catch (e) {
          if (codeOf(e) === 409) break; // there already: the next sync sees it
          this.events.record(set, 'Warning', 'FailedCreate', 'create Pod %s in StatefulSet %s failed error: %s', pod.metadata.name, name, messageOf(e));
          this.requeueAfter(key, 5_000);
          break;
        }
      } else {
        const pod = action.pod;
        try {
          await podStore.delete(ns, pod.metadata.name ?? '', { preconditions: { uid: pod.metadata.uid } }, this.ctx());
          this.events.record(set, 'Normal', 'SuccessfulDelete', 'delete Pod %s in StatefulSet %s successful', pod.metadata.name, name);
          pods = pods.filter((p) => p !== pod);
        } catch (e) {
          if (codeOf(e) === 404 || codeOf(e) === 409) continue;
          this.events.record(set, 'Warning', 'FailedDelete', 'delete Pod %s in StatefulSet %s failed error: %s', pod.metadata.name, name, messageOf(e));
          this.requeueAfter(key, 5_000);
          break;
        }
      }
    }

    const status = statefulSetStatus(set, pods, current.metadata.name ?? '', update.metadata.name ?? '', collisionCount, now);
    if (statusChanged(set, status)) {
      try {
        await this.stores
          .storeFor(this.decl('apps', 'statefulsets')!)
          .update(ns, name, { ...set, status }, { ctx: this.ctx(), fieldValidation: 'Ignore', subresource: 'status', fieldManager: USER });
      } catch (e) {
        if (codeOf(e) === 404) return;
        throw e;
      }
    }
    await this.truncateHistory(set, pods, revisions, [current, update]);
    // A pod ready but not yet available for minReadySeconds: look again when it may be.
    const minReady = asMap(set.spec).minReadySeconds;
    if (typeof minReady === 'number' && minReady > 0 && status.availableReplicas !== status.readyReplicas) this.requeueAfter(key, minReady * 1000 + 500);
  }

  /**
   * The set's revisions, with the current and the update revision (getStatefulSetRevisions):
   * the update revision is the one whose data is the set's template now (the latest such one,
   * renumbered to the top when an older one comes back), created when there is none.
   */
  private async revisions(set: KubeObject): Promise<{ current: KubeObject; update: KubeObject; revisions: KubeObject[]; collisionCount?: number }> {
    const ns = set.metadata.namespace ?? '';
    const store = this.stores.storeFor(this.decl('apps', 'controllerrevisions')!);
    const listed = await this.revisionReader.inNamespace(ns);
    let revisions = sortRevisions(listed.filter((r) => controllerOf(r)?.uid === set.metadata.uid));
    const data = templatePatch(set);
    const next = nextRevisionNumber(revisions);
    const status = asMap(set.status);
    let collisionCount = typeof status.collisionCount === 'number' ? status.collisionCount : undefined;
    const equal = equalRevisions(revisions, data);
    let update: KubeObject | undefined;
    if (equal.length && equal[equal.length - 1] === revisions[revisions.length - 1]) update = equal[equal.length - 1];
    else if (equal.length) {
      const old = equal[equal.length - 1]!;
      const res = await store.update(ns, old.metadata.name ?? '', { ...old, revision: next } as KubeObject, {
        ctx: this.ctx(),
        fieldValidation: 'Ignore',
        fieldManager: USER,
      });
      update = res.object;
      revisions = sortRevisions([...revisions.filter((r) => r !== old), update]);
    } else {
      for (;;) {
        const fresh = newRevision(set, 'StatefulSet', data, next, collisionCount);
        try {
          update = await store.create(ns, fresh, { ctx: this.ctx(), fieldValidation: 'Ignore', fieldManager: USER });
          break;
        } catch (e) {
          if (codeOf(e) !== 409) throw e;
          // The name is taken: the same data (a revision not listed yet) is that revision; other data a collision.
          const taken = await store.get(ns, fresh.metadata.name ?? '');
          if (controllerOf(taken)?.uid === set.metadata.uid && equalRevisions([taken], data).length) {
            update = taken;
            break;
          }
          collisionCount = (collisionCount ?? 0) + 1;
        }
      }
      revisions = sortRevisions([...revisions, update]);
    }
    const current = revisions.find((r) => r.metadata.name === status.currentRevision) ?? update;
    return { current, update, revisions, collisionCount };
  }

  /**
   * Keeps the ownerReferences of its pods' claims as persistentVolumeClaimRetentionPolicy says
   * (before a condemned pod is deleted, so that its claim goes with it when whenScaled is Delete).
   */
  private async reconcileClaimOwners(set: KubeObject, pods: KubeObject[]): Promise<void> {
    const decl = this.decl('', 'persistentvolumeclaims');
    const templates = asMap(set.spec).volumeClaimTemplates;
    if (!decl || !Array.isArray(templates) || !templates.length) return;
    const ns = set.metadata.namespace ?? '';
    const listed = await this.claimReader.inNamespace(ns);
    const byName = new Map(listed.map((c) => [c.metadata.name ?? '', c]));
    const start = startOrdinal(set);
    const end = start + replicasOf(set);
    const store = this.stores.storeFor(decl);
    for (const pod of pods) {
      const ordinal = ordinalOf(set, pod);
      if (ordinal === undefined) continue;
      for (const wanted of claimsOf(set, ordinal)) {
        const claim = byName.get(wanted.metadata.name ?? '');
        const refs = claim && claimOwnerRefs(set, claim, pod, ordinal < start || ordinal >= end);
        if (!claim || !refs) continue;
        try {
          await store.update(ns, claim.metadata.name ?? '', { ...claim, metadata: { ...claim.metadata, ownerReferences: refs } } as KubeObject, {
            ctx: this.ctx(),
            fieldValidation: 'Ignore',
            fieldManager: USER,
          });
        } catch (e) {
          if (codeOf(e) !== 404 && codeOf(e) !== 409) throw e;
        }
      }
    }
  }

  /** Creates the pod's claims that do not exist yet; false when one could not be created. */
  private async createClaims(set: KubeObject, pod: KubeObject, ordinal: number): Promise<boolean> {
    const decl = this.decl('', 'persistentvolumeclaims');
    const claims = claimsOf(set, ordinal);
    if (!claims.length || !decl) return true;
    const store = this.stores.storeFor(decl);
    for (const claim of claims) {
      const owners = claimOwnerRefs(set, claim, undefined, false);
      if (owners) claim.metadata.ownerReferences = owners as KubeObject['metadata']['ownerReferences'];
      try {
        await store.create(set.metadata.namespace ?? '', claim, { ctx: this.ctx(), fieldValidation: 'Ignore', fieldManager: USER });
        this.events.record(
          set,
          'Normal',
          'SuccessfulCreate',
          'create Claim %s Pod %s in StatefulSet %s success',
          claim.metadata.name,
          pod.metadata.name,
          set.metadata.name,
        );
      } catch (e) {
        if (codeOf(e) === 409) continue; // kept from an earlier pod of this ordinal
        this.events.record(
          set,
          'Warning',
          'FailedCreate',
          'create Claim %s for Pod %s in StatefulSet %s failed error: %s',
          claim.metadata.name,
          pod.metadata.name,
          set.metadata.name,
          messageOf(e),
        );
        this.requeueAfter(`${set.metadata.namespace ?? ''}/${set.metadata.name}`, 5_000);
        return false;
      }
    }
    return true;
  }

  /** Deletes the oldest revisions beyond revisionHistoryLimit that neither the status nor a pod uses. */
  private async truncateHistory(set: KubeObject, pods: KubeObject[], revisions: KubeObject[], keep: KubeObject[]): Promise<void> {
    const limit = asMap(set.spec).revisionHistoryLimit;
    const max = typeof limit === 'number' ? limit : 10;
    const used = new Set([...keep.map((r) => r.metadata.name), ...pods.map(revisionOfPod)]);
    const unused = sortRevisions(revisions).filter((r) => !used.has(r.metadata.name ?? ''));
    const store = this.stores.storeFor(this.decl('apps', 'controllerrevisions')!);
    for (const r of unused.slice(0, Math.max(0, unused.length - max))) {
      try {
        await store.delete(r.metadata.namespace ?? '', r.metadata.name ?? '', { preconditions: { uid: r.metadata.uid } }, this.ctx());
      } catch (e) {
        if (codeOf(e) !== 404 && codeOf(e) !== 409) throw e;
      }
    }
  }

  /** Writes a pod's new ownerReferences; false when it changed or went away meanwhile (the next sync looks again). */
  private async writePod(ns: string, pod: KubeObject): Promise<boolean> {
    try {
      await this.stores
        .storeFor(this.decl('', 'pods')!)
        .update(ns, pod.metadata.name ?? '', pod, { ctx: this.ctx(), fieldValidation: 'Ignore', fieldManager: USER });
      return true;
    } catch (e) {
      if (codeOf(e) === 404 || codeOf(e) === 409) return false;
      throw e;
    }
  }
}
