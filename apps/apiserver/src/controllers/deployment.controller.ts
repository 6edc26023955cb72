/**
 * The Deployment controller (kube-controller-manager's): rolls a Deployment's pod template out
 * through ReplicaSets. A sync of one Deployment lists the ReplicaSets of its namespace, adopts
 * the orphans its selector selects and releases those it no longer selects, then, in kube's
 * order of precedence:
 *
 * - being deleted: only the status is written;
 * - paused, or a scaling event (an active ReplicaSet's desired-replicas annotation differs from
 *   spec.replicas): the ReplicaSets are resized (the only active one to spec.replicas; several in
 *   proportion to their sizes within replicas + maxSurge), nothing is rolled out;
 * - otherwise the rollout: the new ReplicaSet (`<deployment>-<pod-template-hash>`, revision one
 *   above the old ones, or an old ReplicaSet with the same template taken back into use, as
 *   `kubectl rollout undo` makes it) is created or found, then one step of the strategy:
 *   RollingUpdate scales the new ReplicaSet up within maxSurge and old ones down within
 *   maxUnavailable; Recreate scales every old ReplicaSet to 0, waits for their pods to be gone,
 *   then scales the new one up. Old ReplicaSets beyond revisionHistoryLimit are deleted once the
 *   rollout is complete.
 *
 * The status (counts, Available and Progressing conditions, the timeout after
 * progressDeadlineSeconds) is computed by deployment.logic.ts and written through `/status`;
 * `ScalingReplicaSet` Events say what was resized. Nothing runs pods here, so none becomes
 * available: a rolling update stops where maxUnavailable stops it, as in a cluster without
 * nodes, and a rollout reports ProgressDeadlineExceeded after its deadline.
 */
import { isDeepStrictEqual } from 'node:util';
import { Inject, Injectable } from '@nestjs/common';
import type { KubeObject } from '@app/apimachinery';
import { collectionPrefix, KindRegistry } from '@app/registry';
import type { Storage, StorageEvent } from '@app/storage';
import { asMap } from '../groups/core/core.helpers.js';
import { STORAGE, STORES, type StoreFactory } from '../tokens.js';
import { ManagedController } from './controller.runner.js';
import { KindController } from './kind.controller.js';
import {
  deploymentComplete,
  deploymentStatus,
  desiredReplicas,
  DESIRED_REPLICAS_ANNOTATION,
  findNewReplicaSet,
  isRollingUpdate,
  MAX_REPLICAS_ANNOTATION,
  maxRevision,
  maxSurgeOf,
  newReplicaSetFor,
  newRSReplicas,
  oldReplicaSetScaleDowns,
  oldReplicaSets,
  podTemplateHash,
  replicaSetAnnotations,
  replicaSetsToCleanUp,
  REVISION_ANNOTATION,
  revisionOf,
  templateMatches,
} from './deployment.logic.js';
import { controllerOf, newControllerRef } from './disruption.logic.js';
import { EventRecorder } from './event.recorder.js';
import { selects } from './replicaset.logic.js';
import { NamesByNamespace } from './watch-queue.controller.js';

const USER = 'deployment-controller';

const codeOf = (e: unknown): number | undefined => (e as { code?: number }).code;
const replicasOf = (rs: KubeObject): number => {
  const r = asMap(rs.spec).replicas;
  return typeof r === 'number' ? r : 1;
};
const createdAt = (o: KubeObject): number => Date.parse(String(o.metadata.creationTimestamp ?? '')) || 0;
/** Thrown when the sync must start over from fresh copies (a write lost a race). */
class Requeue extends Error {}
/** What a Recreate rollout reads of a pod (whose ReplicaSet owns it, whether it has ended). */
const recreatePodView = (p: KubeObject): KubeObject => ({
  apiVersion: p.apiVersion,
  kind: p.kind,
  metadata: { namespace: p.metadata.namespace, name: p.metadata.name, uid: p.metadata.uid, ownerReferences: p.metadata.ownerReferences },
  status: { phase: asMap(p.status).phase },
});

/** Runs the deployment controller while this node holds the controller Lease. */
@ManagedController({ name: 'deployment' })
@Injectable()
export class DeploymentControllerRunner extends KindController {
  /** Deployment names per namespace, from the list and the watch. */
  private readonly names = new NamesByNamespace();
  /** The ReplicaSets, and the pods as a Recreate rollout reads them, from watch-fed copies while this node leads. */
  private readonly readers = {
    replicaSets: this.collection(() => this.decl('apps', 'replicasets'), `${USER}: replicasets`),
    pods: this.collection(() => this.decl('', 'pods'), `${USER}: pods`, recreatePodView),
  };
  constructor(registry: KindRegistry, @Inject(STORAGE) storage: Storage, @Inject(STORES) stores: StoreFactory, recorder: EventRecorder) {
    super(registry, storage, stores, recorder, USER);
  }

  protected kindsServed(): boolean {
    return this.decl('apps', 'deployments') !== undefined && this.decl('apps', 'replicasets') !== undefined && this.decl('', 'pods') !== undefined;
  }

  protected override reset(): void {
    this.names.clear();
  }

  protected watchPrefixes(): string[] {
    return [
      collectionPrefix(this.decl('apps', 'deployments')!, ''),
      collectionPrefix(this.decl('apps', 'replicasets')!, ''),
      collectionPrefix(this.decl('', 'pods')!, ''),
    ];
  }

  protected relist(): Promise<number> {
    return this.listAndQueue(this.decl('apps', 'deployments')!, this.names);
  }

  protected onEvent(e: StorageEvent): void {
    const ns = e.object.metadata.namespace ?? '';
    const all = () => {
      for (const key of this.names.keys(ns)) this.queue.add(key);
    };
    if (e.key.startsWith(collectionPrefix(this.decl('apps', 'deployments')!, ''))) {
      this.names.apply(e);
      this.queue.add(`${ns}/${e.object.metadata.name ?? ''}`);
    } else if (e.key.startsWith(collectionPrefix(this.decl('apps', 'replicasets')!, ''))) {
      const ref = controllerOf(e.object);
      if (ref?.kind === 'Deployment') this.queue.add(`${ns}/${ref.name}`);
      else if (!ref) all();
    } else if (e.type === 'DELETED') {
      // A pod gone: a Recreate rollout may have been waiting for it.
      all();
    }
  }

  protected async process(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    try {
      await this.syncDeployment(ns, name);
    } catch (e) {
      if (!(e instanceof Requeue) && codeOf(e) !== 409) throw e;
      this.retryLater(key); // a write lost a race: start over from fresh copies
    }
  }

  private async syncDeployment(ns: string, name: string): Promise<void> {
    const dStore = this.stores.storeFor(this.decl('apps', 'deployments')!);
    let d: KubeObject;
    try {
      d = await dStore.get(ns, name);
    } catch (e) {
      if (codeOf(e) === 404) return;
      throw e;
    }
    const listed = await this.readers.replicaSets.inNamespace(ns);
    const owned = await this.claimReplicaSets(d, listed);

    if (d.metadata.deletionTimestamp) {
      const newRS = findNewReplicaSet(d, owned);
      await this.writeStatus(d, owned, newRS, undefined, false);
      return;
    }
    // A scaling event is judged on the ReplicaSets as they are, before this sync touches them.
    const scaling = owned.some((rs) => {
      const desired = asMap(rs.metadata.annotations)[DESIRED_REPLICAS_ANNOTATION];
      return replicasOf(rs) > 0 && desired !== undefined && Number(desired) !== desiredReplicas(d);
    });
    if (asMap(d.spec).paused === true || scaling) {
      const found = await this.newReplicaSet(d, owned, false);
      d = found.d;
      const old = oldReplicaSets(owned, found.newRS);
      const rss = await this.scale(d, found.newRS, old);
      const newRS = found.newRS ? rss.find((r) => r.metadata.uid === found.newRS!.metadata.uid) : undefined;
      if (asMap(d.spec).paused === true)
        await this.cleanUp(
          d,
          rss.filter((r) => r !== newRS),
        );
      await this.writeStatus(d, rss, newRS, found.event, false);
      return;
    }
    if (isRollingUpdate(d)) await this.rollOut(d, owned);
    else await this.recreate(d, owned);
  }

  /** Adopts selected orphans and releases owned ReplicaSets no longer selected; returns those it controls. */
  private async claimReplicaSets(d: KubeObject, listed: KubeObject[]): Promise<KubeObject[]> {
    const owned: KubeObject[] = [];
    for (const rs of listed) {
      const ref = controllerOf(rs);
      const selected = selects('ReplicaSet', d, rs);
      const refs = Array.isArray(rs.metadata.ownerReferences) ? rs.metadata.ownerReferences : [];
      if (ref) {
        if (ref.uid !== d.metadata.uid) continue;
        if (selected) owned.push(rs);
        else if (!rs.metadata.deletionTimestamp)
          await this.writeReplicaSet({ ...rs, metadata: { ...rs.metadata, ownerReferences: refs.filter((r) => asMap(r).uid !== d.metadata.uid) } });
        continue;
      }
      if (!selected || rs.metadata.deletionTimestamp || d.metadata.deletionTimestamp) continue;
      const ownerRef = newControllerRef(d, 'apps/v1', 'Deployment');
      owned.push(await this.writeReplicaSet({ ...rs, metadata: { ...rs.metadata, ownerReferences: [...refs, ownerRef] } }));
    }
    return owned;
  }

  private async writeReplicaSet(rs: KubeObject): Promise<KubeObject> {
    const store = this.stores.storeFor(this.decl('apps', 'replicasets')!);
    try {
      return (await store.update(rs.metadata.namespace ?? '', rs.metadata.name ?? '', rs, { ctx: this.ctx(), fieldValidation: 'Ignore', fieldManager: USER }))
        .object;
    } catch (e) {
      if (codeOf(e) === 404 || codeOf(e) === 409) throw new Requeue();
      throw e;
    }
  }

  /**
   * The new ReplicaSet with its annotations brought up to date (revision, copied annotations),
   * created when `create` and none exists; the Deployment's revision annotation follows it.
   */
  private async newReplicaSet(
    d: KubeObject,
    owned: KubeObject[],
    create: boolean,
  ): Promise<{ d: KubeObject; newRS: KubeObject | undefined; event?: 'created' | 'found' }> {
    const existing = findNewReplicaSet(d, owned);
    const nextRevision = maxRevision(oldReplicaSets(owned, existing)) + 1;
    if (existing) {
      let rs = existing;
      // Its revision and copied annotations only: the desired/max replicas annotations change
      // when it is scaled, so that proportional scaling still sees the sizes it was given.
      const annotations = this.keepReplicasAnnotations(existing, replicaSetAnnotations(d, existing, nextRevision, true));
      const minReady = asMap(d.spec).minReadySeconds ?? 0;
      if (annotations || (asMap(existing.spec).minReadySeconds ?? 0) !== minReady) {
        rs = await this.writeReplicaSet({
          ...existing,
          metadata: { ...existing.metadata, annotations: annotations ?? existing.metadata.annotations },
          spec: { ...asMap(existing.spec), minReadySeconds: minReady },
        });
      }
      return { d: await this.setRevision(d, revisionOf(rs)), newRS: rs, event: 'found' };
    }
    if (!create) return { d, newRS: undefined };
    const status = asMap(d.status);
    const collisions = typeof status.collisionCount === 'number' ? status.collisionCount : undefined;
    const hash = podTemplateHash(asMap(d.spec).template, collisions);
    const old = oldReplicaSets(owned, undefined);
    const replicas = newRSReplicas(d, old, undefined);
    const rs = newReplicaSetFor(d, hash, nextRevision, replicas);
    const store = this.stores.storeFor(this.decl('apps', 'replicasets')!);
    let created: KubeObject;
    try {
      created = await store.create(d.metadata.namespace ?? '', rs, { ctx: this.ctx(), fieldValidation: 'Ignore', fieldManager: USER });
    } catch (e) {
      if (codeOf(e) !== 409) {
        this.events.record(d, 'Warning', 'ReplicaSetCreateError', 'Failed to create new replica set %q: %v', rs.metadata.name, (e as Error).message);
        throw e;
      }
      // Taken: this Deployment's own (a sync that raced), or another template with the same hash.
      const taken = await store.get(d.metadata.namespace ?? '', rs.metadata.name ?? '').catch(() => undefined);
      if (taken && controllerOf(taken)?.uid === d.metadata.uid && templateMatches(asMap(taken.spec).template, asMap(d.spec).template)) {
        return { d: await this.setRevision(d, revisionOf(taken)), newRS: taken, event: 'found' };
      }
      await this.updateStatus(d, { ...status, collisionCount: (collisions ?? 0) + 1 });
      throw new Requeue();
    }
    if (replicas > 0) this.events.record(d, 'Normal', 'ScalingReplicaSet', 'Scaled up replica set %s to %d', created.metadata.name, replicas);
    return { d: await this.setRevision(d, nextRevision), newRS: created, event: 'created' };
  }

  /** `annotations` with the ReplicaSet's own desired/max replicas annotations put back; undefined when nothing else changes. */
  private keepReplicasAnnotations(rs: KubeObject, annotations: Record<string, string> | undefined): Record<string, string> | undefined {
    if (!annotations) return undefined;
    const current = asMap(rs.metadata.annotations) as Record<string, string>;
    const next = { ...annotations };
    for (const key of [DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION]) {
      if (current[key] === undefined) delete next[key];
      else next[key] = current[key];
    }
    return isDeepStrictEqual(next, current) ? undefined : next;
  }

  /**
   * Writes the Deployment's revision annotation when it differs, through `/status` as kube's
   * controller does: an annotation written there does not move the generation (a change of the
   * Deployment's own annotations does, since they are copied to its ReplicaSets).
   */
  private async setRevision(d: KubeObject, revision: number): Promise<KubeObject> {
    const annotations = asMap(d.metadata.annotations) as Record<string, string>;
    if (annotations[REVISION_ANNOTATION] === String(revision)) return d;
    const store = this.stores.storeFor(this.decl('apps', 'deployments')!);
    try {
      const next = { ...d, metadata: { ...d.metadata, annotations: { ...annotations, [REVISION_ANNOTATION]: String(revision) } } };
      const opts = { ctx: this.ctx(), fieldValidation: 'Ignore' as const, subresource: 'status', fieldManager: USER };
      return (await store.update(d.metadata.namespace ?? '', d.metadata.name ?? '', next, opts)).object;
    } catch (e) {
      if (codeOf(e) === 404 || codeOf(e) === 409) throw new Requeue();
      throw e;
    }
  }

  /** Resizes a ReplicaSet (and its desired/max replicas annotations); returns it as stored. */
  private async scaleReplicaSet(d: KubeObject, rs: KubeObject, size: number): Promise<KubeObject> {
    const from = replicasOf(rs);
    const annotations = replicaSetAnnotations(d, rs, 0, false);
    if (from === size && !annotations) return rs;
    const next = await this.writeReplicaSet({
      ...rs,
      metadata: { ...rs.metadata, annotations: annotations ?? rs.metadata.annotations },
      spec: { ...asMap(rs.spec), replicas: size },
    });
    if (from !== size)
      this.events.record(d, 'Normal', 'ScalingReplicaSet', 'Scaled %s replica set %s to %d from %d', size > from ? 'up' : 'down', rs.metadata.name, size, from);
    return next;
  }

  /**
   * Resizes for a scaling event or a paused Deployment (kube's `scale`): the only active
   * ReplicaSet (or the newest, when none is active) to spec.replicas; old ones to 0 when the new
   * one is saturated; several active ones of a rolling Deployment in proportion to their sizes.
   * Returns every ReplicaSet as it is afterwards.
   */
  private async scale(d: KubeObject, newRS: KubeObject | undefined, old: KubeObject[]): Promise<KubeObject[]> {
    const all = newRS ? [...old, newRS] : [...old];
    const replace = (rs: KubeObject, next: KubeObject) => all.splice(all.indexOf(rs), 1, next);
    const replicas = desiredReplicas(d);
    const active = all.filter((rs) => replicasOf(rs) > 0);
    if (active.length <= 1) {
      const target = active[0] ?? newRS ?? [...old].sort((a, b) => createdAt(b) - createdAt(a))[0];
      if (target && replicasOf(target) !== replicas) replace(target, await this.scaleReplicaSet(d, target, replicas));
      return all;
    }
    const saturated =
      newRS !== undefined &&
      replicasOf(newRS) === replicas &&
      Number(asMap(newRS.metadata.annotations)[DESIRED_REPLICAS_ANNOTATION]) === replicas &&
      Number(asMap(newRS.status).availableReplicas ?? 0) === replicas;
    if (saturated) {
      for (const rs of active) if (rs !== newRS) replace(rs, await this.scaleReplicaSet(d, rs, 0));
      return all;
    }
    if (!isRollingUpdate(d)) return all;
    const allowed = replicas > 0 ? replicas + maxSurgeOf(d) : 0;
    const toAdd = allowed - active.reduce((n, rs) => n + replicasOf(rs), 0);
    // Larger first; newer first among equals when growing, older first when shrinking.
    const ordered = [...active].sort((a, b) => replicasOf(b) - replicasOf(a) || (toAdd > 0 ? createdAt(b) - createdAt(a) : createdAt(a) - createdAt(b)));
    const sizes = new Map<KubeObject, number>();
    let added = 0;
    for (const rs of ordered) {
      let share = 0;
      if (toAdd !== 0 && added !== toAdd) {
        const max = Number(asMap(rs.metadata.annotations)[MAX_REPLICAS_ANNOTATION]);
        const annotated = Number.isFinite(max) && max > 0 ? max : Number(asMap(d.status).replicas ?? 0);
        const fraction = replicas === 0 ? -replicasOf(rs) : annotated > 0 ? Math.round((replicasOf(rs) * allowed) / annotated) - replicasOf(rs) : 0;
        const left = toAdd - added;
        share = toAdd > 0 ? Math.min(fraction, left) : Math.max(fraction, left);
      }
      sizes.set(rs, replicasOf(rs) + share);
      added += share;
    }
    // What the proportions leave over goes to the largest.
    const first = ordered[0]!;
    sizes.set(first, Math.max(0, sizes.get(first)! + toAdd - added));
    for (const rs of ordered) replace(rs, await this.scaleReplicaSet(d, rs, sizes.get(rs)!));
    return all;
  }

  /** One step of a rolling update (kube's rolloutRolling). */
  private async rollOut(d0: KubeObject, owned: KubeObject[]): Promise<void> {
    const found = await this.newReplicaSet(d0, owned, true);
    const d = found.d;
    let newRS = found.newRS!;
    let old = oldReplicaSets(owned, newRS);
    const target = newRSReplicas(d, old, newRS);
    if (target !== replicasOf(newRS)) {
      newRS = await this.scaleReplicaSet(d, newRS, target);
      await this.writeStatus(d, [...old, newRS], newRS, found.event, true);
      return;
    }
    const downs = oldReplicaSetScaleDowns(d, [...old, newRS], old, newRS);
    if (downs.size > 0) {
      const next: KubeObject[] = [];
      for (const rs of old) next.push(downs.has(rs.metadata.name ?? '') ? await this.scaleReplicaSet(d, rs, downs.get(rs.metadata.name ?? '')!) : rs);
      old = next;
      await this.writeStatus(d, [...old, newRS], newRS, found.event, true);
      return;
    }
    if (deploymentComplete(d, asMap(d.status))) await this.cleanUp(d, old);
    await this.writeStatus(d, [...old, newRS], newRS, found.event, true);
  }

  /** One step of a Recreate rollout (kube's rolloutRecreate). */
  private async recreate(d0: KubeObject, owned: KubeObject[]): Promise<void> {
    let found = await this.newReplicaSet(d0, owned, false);
    let d = found.d;
    let old = oldReplicaSets(owned, found.newRS);
    if (old.some((rs) => replicasOf(rs) > 0)) {
      const next: KubeObject[] = [];
      for (const rs of old) next.push(replicasOf(rs) > 0 ? await this.scaleReplicaSet(d, rs, 0) : rs);
      old = next;
      await this.writeStatus(d, found.newRS ? [...old, found.newRS] : old, found.newRS, found.event, true);
      return;
    }
    // The new pods start only once the old ones are gone.
    const oldUids = new Set(old.map((rs) => rs.metadata.uid));
    const pods = await this.readers.pods.inNamespace(d.metadata.namespace ?? '');
    if (pods.some((p) => oldUids.has(controllerOf(p)?.uid) && asMap(p.status).phase !== 'Succeeded' && asMap(p.status).phase !== 'Failed')) {
      await this.writeStatus(d, found.newRS ? [...old, found.newRS] : old, found.newRS, found.event, true);
      return;
    }
    if (!found.newRS) {
      found = await this.newReplicaSet(d, owned, true);
      d = found.d;
    }
    let newRS = found.newRS!;
    if (replicasOf(newRS) !== desiredReplicas(d)) newRS = await this.scaleReplicaSet(d, newRS, desiredReplicas(d));
    if (deploymentComplete(d, asMap(d.status))) await this.cleanUp(d, old);
    await this.writeStatus(d, [...old, newRS], newRS, found.event, true);
  }

  /** Deletes the old ReplicaSets beyond revisionHistoryLimit. */
  private async cleanUp(d: KubeObject, old: KubeObject[]): Promise<void> {
    const store = this.stores.storeFor(this.decl('apps', 'replicasets')!);
    for (const name of replicaSetsToCleanUp(d, old)) {
      try {
        await store.delete(d.metadata.namespace ?? '', name, {}, this.ctx());
      } catch (e) {
        if (codeOf(e) !== 404) throw e;
      }
    }
  }

  /** Writes the Deployment's status when it changed, and arranges a look at its progress deadline. */
  private async writeStatus(
    d: KubeObject,
    rss: KubeObject[],
    newRS: KubeObject | undefined,
    event: 'created' | 'found' | undefined,
    estimate: boolean,
  ): Promise<void> {
    const status = deploymentStatus(d, rss, newRS, new Date(), event, { estimateProgress: estimate });
    if (!isDeepStrictEqual(JSON.parse(JSON.stringify(asMap(d.status))), JSON.parse(JSON.stringify(status)))) await this.updateStatus(d, status);
    if (estimate) this.recheckProgress(d, status);
  }

  private async updateStatus(d: KubeObject, status: Record<string, unknown>): Promise<void> {
    const store = this.stores.storeFor(this.decl('apps', 'deployments')!);
    try {
      await store.update(
        d.metadata.namespace ?? '',
        d.metadata.name ?? '',
        { ...d, status },
        { ctx: this.ctx(), fieldValidation: 'Ignore', subresource: 'status', fieldManager: USER },
      );
    } catch (e) {
      if (codeOf(e) === 404) return;
      if (codeOf(e) === 409) throw new Requeue();
      throw e;
    }
  }

  /** A rollout still progressing is looked at again when its progress deadline passes (requeueStuckDeployment). */
  private recheckProgress(d: KubeObject, status: Record<string, unknown>): void {
    const key = `${d.metadata.namespace ?? ''}/${d.metadata.name}`;
    const deadline = asMap(d.spec).progressDeadlineSeconds;
    const seconds = typeof deadline === 'number' ? deadline : 600;
    const progressing = (Array.isArray(status.conditions) ? status.conditions : []).map(asMap).find((c) => c.type === 'Progressing');
    if (!progressing || progressing.status !== 'True' || progressing.reason === 'NewReplicaSetAvailable' || seconds === 2147483647) return;
    const due = Date.parse(String(progressing.lastUpdateTime ?? '')) + seconds * 1000 - Date.now();
    if (!Number.isFinite(due)) return;
    this.requeueAfter(key, Math.max(0, due) + 1000);
  }
}
