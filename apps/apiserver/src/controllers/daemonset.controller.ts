/**
 * The DaemonSet controller (kube-controller-manager's daemonset controller): keeps one pod of a
 * DaemonSet on every node that should run it. A sync of one DaemonSet (none while it is being
 * deleted):
 *
 * - adopts the orphan pods and ControllerRevisions its selector selects and releases its own the
 *   selector no longer selects;
 * - finds the ControllerRevision holding its current template (history.logic.ts), or creates it
 *   one number above the others (`<daemonset>-<hash>`; a name taken by another template raises
 *   `status.collisionCount`), renumbers a revision taken back into use to the top, and keeps one
 *   of several equal ones; the revision's hash is the `controller-revision-hash` of new pods;
 * - per node (daemonset.logic.ts): creates the pod of a node that should run one and has none
 *   (from the template, with the hash and `pod-template-generation` labels, the controller's
 *   tolerations, and the node pinned by a required node affinity term `metadata.name In
 *   [node]`), in batches of 1, 2, 4, ...; deletes failed pods, extra pods (the oldest stays) and
 *   the pods of nodes that may no longer run one;
 * - with the RollingUpdate strategy, once nothing else was to be done, replaces old pods within
 *   maxUnavailable (or surges within maxSurge); with OnDelete, only pods deleted by someone else
 *   are created again, from the current template;
 * - deletes the old revisions beyond `revisionHistoryLimit` that no pod uses, and writes the
 *   status through `/status`.
 *
 * There is no scheduler here: a daemon pod keeps spec.nodeName unset until something binds it
 * (the pods/binding subresource); until then the pod's node is the one its affinity term names.
 * Watches of DaemonSets, Nodes and Pods queue the DaemonSets concerned (a node: all of them).
 */
import { Inject, Injectable } from '@nestjs/common';
import type { KubeObject } from '@app/apimachinery';
import { collectionPrefix, KindRegistry, type KindDeclaration } from '@app/registry';
import type { Storage, StorageEvent } from '@app/storage';
import { envInt } from '../config/env.js';
import { asMap } from '../groups/core/core.helpers.js';
import { STORAGE, STORES, type StoreFactory } from '../tokens.js';
import { ManagedController } from './controller.runner.js';
import { KindController } from './kind.controller.js';
import {
  daemonPod,
  daemonSetRef,
  daemonSetStatus,
  FailedPodBackoff,
  managePlan,
  podsByNode,
  revisionsToDelete,
  revisionToKeep,
  rollingUpdatePlan,
  statusDiffers,
  targetNode,
  type Plan,
} from './daemonset.logic.js';
import { controllerOf } from './disruption.logic.js';
import { EventRecorder } from './event.recorder.js';
import {
  CONTROLLER_REVISION_HASH_LABEL,
  equalRevisions,
  newRevision,
  nextRevisionNumber,
  revisionHash,
  revisionNumber,
  templatePatch,
} from './history.logic.js';
import { BURST_REPLICAS, claimPods, slowStartBatches } from './replicaset.logic.js';
import { NamesByNamespace } from './watch-queue.controller.js';

const USER = 'daemonset-controller';

const codeOf = (e: unknown): number | undefined => (e as { code?: number }).code;
const messageOf = (e: unknown): string => (e as Error).message ?? String(e);
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
/** Thrown when the sync must start over from fresh copies. */
class Requeue extends Error {}

/** Runs the DaemonSet controller while this node holds the controller Lease. */
@ManagedController({ name: 'daemonset' })
@Injectable()
export class DaemonSetControllerRunner extends KindController {
  /** The pods and the nodes, from watch-fed copies while this node leads. */
  private readonly readers = {
    pods: this.collection(() => this.pods(), 'daemon-set-controller: pods'),
    nodes: this.collection(() => this.nodes(), 'daemon-set-controller: nodes'),
    revisions: this.collection(() => this.revisions(), 'daemon-set-controller: controllerrevisions'),
  };
  /** DaemonSet names per namespace, from the list and the watch. */
  private readonly names = new NamesByNamespace();
  /**
   * When a failed daemon pod may be deleted again, by DaemonSet and node: 1 s, doubled up to 15
   * minutes (kube's failedPodsBackoff; `KAPI_DAEMONSET_FAILED_POD_BACKOFF_MS` sets the first pause).
   */
  private readonly failedPods = new FailedPodBackoff(envInt('KAPI_DAEMONSET_FAILED_POD_BACKOFF_MS') ?? 1000, 15 * 60_000);

  constructor(registry: KindRegistry, @Inject(STORAGE) storage: Storage, @Inject(STORES) stores: StoreFactory, recorder: EventRecorder) {
    super(registry, storage, stores, recorder, USER);
  }

  private daemonSets = () => this.decl('apps', 'daemonsets')!;
  private revisions = () => this.decl('apps', 'controllerrevisions')!;
  private pods = () => this.decl('', 'pods')!;
  private nodes = () => this.decl('', 'nodes')!;

  protected kindsServed(): boolean {
    return ['daemonsets', 'controllerrevisions'].every((p) => this.decl('apps', p)) && ['pods', 'nodes'].every((p) => this.decl('', p));
  }

  protected override reset(): void {
    this.names.clear();
    this.failedPods.clear();
  }

  protected watchPrefixes(): string[] {
    return [collectionPrefix(this.daemonSets(), ''), collectionPrefix(this.nodes(), ''), collectionPrefix(this.pods(), '')];
  }

  protected relist(): Promise<number> {
    return this.listAndQueue(this.daemonSets(), this.names);
  }

  protected onEvent(e: StorageEvent): void {
    const ns = e.object.metadata.namespace ?? '';
    if (e.key.startsWith(collectionPrefix(this.daemonSets(), ''))) {
      const key = `${ns}/${e.object.metadata.name ?? ''}`;
      this.names.apply(e);
      if (e.type === 'DELETED') this.cancelRequeue(key);
      else this.queue.add(key);
      return;
    }
    if (e.key.startsWith(collectionPrefix(this.nodes(), ''))) {
      for (const key of this.names.all()) this.queue.add(key);
      return;
    }
    // A pod: its DaemonSet, or (an orphan) every DaemonSet of the namespace that may adopt it.
    const ref = controllerOf(e.object);
    if (ref) {
      if (ref.kind === 'DaemonSet') this.queue.add(`${ns}/${ref.name}`);
      return;
    }
    for (const key of this.names.keys(ns)) this.queue.add(key);
  }

  protected async process(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    try {
      await this.syncDaemonSet(ns, name, key);
    } catch (e) {
      if (!(e instanceof Requeue) && codeOf(e) !== 409) throw e;
      this.retryLater(key); // a write lost a race: look again from fresh copies
    }
  }

  private async syncDaemonSet(ns: string, name: string, key: string): Promise<void> {
    let ds: KubeObject;
    try {
      ds = await this.stores.storeFor(this.daemonSets()).get(ns, name);
    } catch (e) {
      if (codeOf(e) === 404) return;
      throw e;
    }
    if (ds.metadata.deletionTimestamp) return;
    const [nodes, allPods, allRevisions] = await Promise.all([
      this.readers.nodes.all(),
      this.readers.pods.inNamespace(ns),
      this.readers.revisions.inNamespace(ns),
    ]);

    // A DaemonSet's selector is a label selector, claimed by as a ReplicaSet's is.
    const pods = await this.claim(ds, this.pods(), allPods);
    const revisions = await this.claim(ds, this.revisions(), allRevisions);
    const { hash, old } = await this.constructHistory(ds, revisions, pods);

    let failed = false;
    let owned = pods;
    const plan = managePlan(ds, nodes, podsByNode(owned), hash);
    // A failed daemon pod is deleted (and so replaced) only once its node's back-off has passed.
    const now = Date.now();
    let backedOff: number | undefined;
    plan.delete = plan.delete.filter((d) => {
      if (!d.failed) return true;
      const node = `${ds.metadata.uid ?? ''}/${targetNode(d.pod) ?? ''}`;
      const wait = this.failedPods.remaining(node, now);
      if (wait > 0) {
        backedOff = Math.min(backedOff ?? Infinity, wait);
        return false;
      }
      this.failedPods.next(node, now);
      return true;
    });
    this.failedPods.gc(now);
    const step = async (p: Plan) => {
      const r = await this.apply(ds, p, hash);
      failed ||= r.failed;
      owned = [...owned.filter((pod) => !r.deleted.includes(pod)), ...r.created];
    };
    if (plan.create.length || plan.delete.length) await step(plan);
    else await step(rollingUpdatePlan(ds, nodes, podsByNode(owned), hash, new Date()));

    for (const r of revisionsToDelete(ds, old, owned)) await this.remove(this.revisions(), r);

    const status = daemonSetStatus(ds, nodes, podsByNode(owned), hash, new Date());
    if (statusDiffers(ds, status)) await this.writeStatus(ds, status);
    // Pods become available minReadySeconds after they are ready: look again then.
    const minReady = num(asMap(ds.spec).minReadySeconds);
    if (failed) this.requeueAfter(key, 5_000);
    else if (backedOff !== undefined) this.requeueAfter(key, backedOff);
    else if (minReady > 0 && status.numberReady !== status.numberAvailable) this.requeueAfter(key, minReady * 1000);
  }

  /** Adopts the orphans the selector selects and releases the owned ones it no longer selects; returns those owned. */
  private async claim(ds: KubeObject, decl: KindDeclaration, objects: KubeObject[]): Promise<KubeObject[]> {
    const claim = claimPods('ReplicaSet', ds, objects);
    const owned = [...claim.owned];
    for (const o of claim.adopt) {
      const refs = Array.isArray(o.metadata.ownerReferences) ? o.metadata.ownerReferences : [];
      const written = await this.write(decl, { ...o, metadata: { ...o.metadata, ownerReferences: [...refs, daemonSetRef(ds)] } });
      owned.splice(owned.indexOf(o), 1, ...(written ? [written] : []));
    }
    for (const o of claim.release) {
      const refs = (Array.isArray(o.metadata.ownerReferences) ? o.metadata.ownerReferences : []).filter((r) => asMap(r).uid !== ds.metadata.uid);
      await this.write(decl, { ...o, metadata: { ...o.metadata, ownerReferences: refs } });
    }
    return owned;
  }

  /**
   * The current revision's hash and the old revisions (constructHistory): the revision equal to
   * the template is found (several: the highest numbered kept, the pods of the others relabelled
   * to it and the others deleted) or created, and moved above the others.
   */
  private async constructHistory(ds: KubeObject, revisions: KubeObject[], pods: KubeObject[]): Promise<{ hash: string; old: KubeObject[] }> {
    const data = templatePatch(ds);
    const equal = equalRevisions(revisions, data);
    let old = revisions.filter((r) => !equal.includes(r));
    const next = nextRevisionNumber(old);
    const store = this.stores.storeFor(this.revisions());
    let cur = revisionToKeep(equal);
    const hashOf = (r: KubeObject): string => {
      const h = asMap(r.metadata.labels)[CONTROLLER_REVISION_HASH_LABEL];
      return typeof h === 'string' ? h : revisionHash((r as { data?: unknown }).data);
    };
    if (cur) {
      const keep = cur;
      for (const dup of equal.filter((r) => r !== keep)) {
        for (const pod of pods.filter((p) => asMap(p.metadata.labels)[CONTROLLER_REVISION_HASH_LABEL] === hashOf(dup)))
          await this.write(this.pods(), {
            ...pod,
            metadata: { ...pod.metadata, labels: { ...asMap(pod.metadata.labels), [CONTROLLER_REVISION_HASH_LABEL]: hashOf(keep) } },
          });
        await this.remove(this.revisions(), dup);
      }
      if (revisionNumber(keep) < next) {
        const written = await this.write(this.revisions(), { ...keep, revision: next } as KubeObject);
        if (!written) throw new Requeue();
        cur = written;
      }
      return { hash: hashOf(cur), old };
    }
    const collisionCount = num(asMap(ds.status).collisionCount);
    const created = newRevision(ds, 'DaemonSet', data, next, collisionCount);
    // The revision carries the DaemonSet's annotations (kubectl rollout history shows its change-cause).
    if (ds.metadata.annotations) created.metadata.annotations = { ...ds.metadata.annotations };
    try {
      cur = await store.create(ds.metadata.namespace ?? '', created, { ctx: this.ctx(), fieldValidation: 'Ignore', fieldManager: USER });
    } catch (e) {
      if (codeOf(e) !== 409) throw e;
      const existing = await store.get(ds.metadata.namespace ?? '', created.metadata.name ?? '');
      if (controllerOf(existing)?.uid !== ds.metadata.uid || equalRevisions([existing], data).length === 0) {
        // The name is another template's: a new collision count makes another name.
        await this.writeStatus(ds, { ...asMap(ds.status), collisionCount: collisionCount + 1 });
        throw new Requeue();
      }
      cur = existing;
      old = old.filter((r) => r.metadata.uid !== existing.metadata.uid);
    }
    return { hash: hashOf(cur), old };
  }

  /** Deletes and creates pods as planned (creations in batches of 1, 2, 4, ...), with Events. */
  private async apply(ds: KubeObject, plan: Plan, hash: string): Promise<{ created: KubeObject[]; deleted: KubeObject[]; failed: boolean }> {
    const ns = ds.metadata.namespace ?? '';
    const store = this.stores.storeFor(this.pods());
    const out = { created: [] as KubeObject[], deleted: [] as KubeObject[], failed: false };
    const deletions = plan.delete.slice(0, BURST_REPLICAS);
    for (const d of deletions)
      if (d.failed)
        this.events.record(
          ds,
          'Warning',
          'FailedDaemonPod',
          'Found failed daemon pod %s/%s on node %s, will try to kill it',
          ns,
          d.pod.metadata.name,
          targetNode(d.pod),
        );
    const results = await Promise.allSettled(
      deletions.map((d) => store.delete(ns, d.pod.metadata.name ?? '', { preconditions: { uid: d.pod.metadata.uid } }, this.ctx())),
    );
    results.forEach((r, i) => {
      const pod = deletions[i]!.pod;
      if (r.status === 'fulfilled' || codeOf(r.reason) === 404) {
        out.deleted.push(pod);
        if (r.status === 'fulfilled') this.events.record(ds, 'Normal', 'SuccessfulDelete', 'Deleted pod: %v', pod.metadata.name);
      } else {
        out.failed = true;
        this.events.record(ds, 'Warning', 'FailedDelete', 'Error deleting: %v', messageOf(r.reason));
      }
    });
    let nodes = plan.create.slice(0, BURST_REPLICAS);
    for (const size of slowStartBatches(nodes.length)) {
      const batch = nodes.slice(0, size);
      nodes = nodes.slice(size);
      const created = await Promise.allSettled(
        batch.map((node) => store.create(ns, daemonPod(ds, node, hash), { ctx: this.ctx(), fieldValidation: 'Ignore', fieldManager: USER })),
      );
      for (const r of created) {
        if (r.status === 'fulfilled') {
          out.created.push(r.value);
          this.events.record(ds, 'Normal', 'SuccessfulCreate', 'Created pod: %v', r.value.metadata.name);
        } else {
          out.failed = true;
          this.events.record(ds, 'Warning', 'FailedCreate', 'Error creating: %v', messageOf(r.reason));
        }
      }
      // A batch with a failure ends the sync's creations: the next attempt comes later.
      if (out.failed) break;
    }
    return out;
  }

  /** Writes an object (conditionally on its resourceVersion); undefined when it changed or went away meanwhile. */
  private async write(decl: KindDeclaration, o: KubeObject): Promise<KubeObject | undefined> {
    try {
      const r = await this.stores
        .storeFor(decl)
        .update(o.metadata.namespace ?? '', o.metadata.name ?? '', o, { ctx: this.ctx(), fieldValidation: 'Ignore', fieldManager: USER });
      return r.object;
    } catch (e) {
      if (codeOf(e) === 404 || codeOf(e) === 409) return undefined;
      throw e;
    }
  }

  private async remove(decl: KindDeclaration, o: KubeObject): Promise<void> {
    try {
      await this.stores.storeFor(decl).delete(o.metadata.namespace ?? '', o.metadata.name ?? '', { preconditions: { uid: o.metadata.uid } }, this.ctx());
    } catch (e) {
      if (codeOf(e) !== 404 && codeOf(e) !== 409) throw e;
    }
  }

  private async writeStatus(ds: KubeObject, status: Record<string, unknown>): Promise<void> {
    try {
      await this.stores
        .storeFor(this.daemonSets())
        .update(
          ds.metadata.namespace ?? '',
          ds.metadata.name ?? '',
          { ...ds, status },
          { ctx: this.ctx(), fieldValidation: 'Ignore', subresource: 'status', fieldManager: USER },
        );
    } catch (e) {
      if (codeOf(e) === 404) return;
      throw e;
    }
  }
}
