/**
 * The disruption controller (kube-controller-manager's): keeps every PodDisruptionBudget's status
 * (expected, desired and current healthy pods, disruptions allowed, the DisruptionAllowed
 * condition, disruptedPods pruned) in step with its pods, which is what the pods' eviction
 * subresource spends. Watches of the budgets, the pods and the apps group (a controller's scale
 * changes the expected count) queue the budgets of a namespace; a budget with a pending
 * disruptedPods entry is looked at again when the entry expires; a periodic resync repairs what
 * a failed write left behind. When a status cannot be computed (a pod whose controller cannot be
 * found, or has no scale), the budget allows no disruption and says why (SyncFailed).
 */
import { Inject, Injectable } from '@nestjs/common';
import type { KubeObject } from '@app/apimachinery';
import { collectionPrefix, KindRegistry, type KindDeclaration, type RequestContext } from '@app/registry';
import type { Storage, StorageEvent } from '@app/storage';
import { asMap } from '../groups/core/core.helpers.js';
import { budgetSelects } from '../groups/policy/poddisruptionbudget/pdb.status.js';
import { STORAGE, STORES, type StoreFactory } from '../tokens.js';
import { ManagedController } from './controller.runner.js';
import { EventRecorder, type ComponentRecorder } from './event.recorder.js';
import { NamesByNamespace, WatchQueueController } from './watch-queue.controller.js';
import {
  computeBudgetStatus,
  controllerOf,
  failSafeStatus,
  groupOf,
  labelSelectorString,
  statusChanged,
  type OwnerRef,
  type ScaleFinder,
} from './disruption.logic.js';

const CONTROLLER_CTX = (): RequestContext => ({
  user: { username: 'system:serviceaccount:kube-system:disruption-controller', groups: ['system:masters', 'system:authenticated'] },
  dryRun: false,
  warnings: [],
  now: () => new Date(),
});
/** Resync period: a missed event costs at most this long. */
const RESYNC_MS = 30_000;

/** Runs the disruption controller while this node holds the controller Lease. */
@ManagedController({ name: 'disruption' })
@Injectable()
export class DisruptionControllerRunner extends WatchQueueController {
  /** Budget names per namespace, from the list and the watch. */
  private readonly budgets = new NamesByNamespace();
  /** Events, as kube-controller-manager's disruption controller records them (source "controllermanager"). */
  private readonly events: ComponentRecorder;
  /** The pods, from a watch-fed copy while this node leads (read only while pods are served). */
  private readonly podReader = this.collection(() => this.decl('', 'pods'), 'disruption-controller: pods');

  constructor(
    private readonly registry: KindRegistry,
    @Inject(STORAGE) storage: Storage,
    @Inject(STORES) private readonly stores: StoreFactory,
    recorder: EventRecorder,
  ) {
    super(storage, 'disruption', RESYNC_MS);
    this.events = recorder.for('controllermanager');
  }

  private decl(group: string, plural: string): KindDeclaration | undefined {
    return this.registry.lookup(group, 'v1', plural) as KindDeclaration | undefined;
  }

  protected kindsServed(): boolean {
    return this.decl('policy', 'poddisruptionbudgets') !== undefined;
  }

  protected override reset(): void {
    this.budgets.clear();
  }

  /** The budgets, the pods and the apps group (a controller's scale changes the expected count). */
  protected watchPrefixes(): string[] {
    const pods = this.decl('', 'pods');
    return [collectionPrefix(this.decl('policy', 'poddisruptionbudgets')!, ''), ...(pods ? [collectionPrefix(pods, '')] : []), '/registry/apps/'];
  }

  /** Lists the budgets and queues them all. */
  protected async relist(): Promise<number> {
    const d = this.decl('policy', 'poddisruptionbudgets')!;
    const res = await this.storage.list(collectionPrefix(d, ''), { consistency: { mode: 'MostRecent' } });
    this.budgets.clear();
    for (const o of res.items) this.budgets.add(o);
    for (const o of res.items) this.queue.add(`${o.metadata.namespace ?? ''}/${o.metadata.name}`);
    return res.revision;
  }

  protected onEvent(e: StorageEvent): void {
    const ns = e.object.metadata.namespace ?? '';
    if (e.key.startsWith('/registry/policy/poddisruptionbudgets/')) {
      this.budgets.apply(e);
      if (e.type !== 'DELETED') this.queue.add(`${ns}/${e.object.metadata.name ?? ''}`);
    } else {
      // A pod or an apps workload of the namespace changed: its budgets may count differently.
      for (const key of this.budgets.keys(ns)) this.queue.add(key);
    }
  }

  /** Finds a pod's controller among the apps kinds served here, with its desired replicas. */
  private finders(): ScaleFinder[] {
    const get = async (plural: string, ns: string, name: string): Promise<KubeObject | undefined> => {
      const d = this.decl('apps', plural);
      if (!d) return undefined;
      return this.stores
        .storeFor(d)
        .get(ns, name)
        .catch(() => undefined);
    };
    const replicas = (o: KubeObject): number => {
      const r = asMap(o.spec).replicas;
      return typeof r === 'number' ? r : 1;
    };
    const isApps = (ref: OwnerRef, kind: string) => ref.kind === kind && (groupOf(ref.apiVersion) === 'apps' || groupOf(ref.apiVersion) === 'extensions');
    return [
      // A ReplicaSet not controlled by a Deployment.
      async (ref, ns) => {
        if (!isApps(ref, 'ReplicaSet')) return undefined;
        const rs = await get('replicasets', ns, ref.name);
        if (!rs || rs.metadata.uid !== ref.uid || controllerOf(rs)?.kind === 'Deployment') return undefined;
        return { uid: rs.metadata.uid ?? '', replicas: replicas(rs) };
      },
      // The Deployment controlling the pod's ReplicaSet.
      async (ref, ns) => {
        if (!isApps(ref, 'ReplicaSet')) return undefined;
        const rs = await get('replicasets', ns, ref.name);
        if (!rs || rs.metadata.uid !== ref.uid) return undefined;
        const depRef = controllerOf(rs);
        if (!depRef || !isApps(depRef, 'Deployment')) return undefined;
        const dep = await get('deployments', ns, depRef.name);
        if (!dep || dep.metadata.uid !== depRef.uid) return undefined;
        return { uid: dep.metadata.uid ?? '', replicas: replicas(dep) };
      },
      async (ref, ns) => {
        if (!isApps(ref, 'StatefulSet')) return undefined;
        const ss = await get('statefulsets', ns, ref.name);
        if (!ss || ss.metadata.uid !== ref.uid) return undefined;
        return { uid: ss.metadata.uid ?? '', replicas: replicas(ss) };
      },
      // Any other kind through its scale subresource (getScaleController).
      async (ref, ns) => {
        const [group, version] = ref.apiVersion.includes('/') ? ref.apiVersion.split('/') : ['', ref.apiVersion];
        const d = this.registry.lookupKind(group!, version!, ref.kind);
        if (!d) throw new Error(`no matches for kind ${JSON.stringify(ref.kind)} in version ${JSON.stringify(ref.apiVersion)}`);
        if (!d.subresources?.scale) throw new Error(`${d.group ? `${d.plural}.${d.group}` : d.plural} does not implement the scale subresource`);
        const o = await this.stores
          .storeFor(d)
          .get(ns, ref.name)
          .catch(() => undefined);
        if (!o || o.metadata.uid !== ref.uid) return undefined;
        return { uid: o.metadata.uid ?? '', replicas: replicas(o) };
      },
    ];
  }

  /** Computes one budget's status and writes it when it changed. */
  protected async process(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const d = this.decl('policy', 'poddisruptionbudgets');
    const podDecl = this.decl('', 'pods');
    if (!d) return;
    const store = this.stores.storeFor(d);
    let pdb: KubeObject;
    try {
      pdb = await store.get(ns, name);
    } catch {
      return; // gone
    }
    const pods = podDecl ? await this.podReader.inNamespace(ns) : [];
    const now = new Date();
    if (!pods.some((p) => budgetSelects(pdb, p))) this.events.record(pdb, 'Normal', 'NoPods', 'No matching pods found');
    const res = await computeBudgetStatus(pdb, pods, this.finders(), now);
    if ('error' in res) {
      this.events.record(pdb, 'Warning', 'CalculateExpectedPodCountFailed', 'Failed to calculate the number of expected pods: %v', res.error);
    } else {
      if (res.unmanaged) {
        this.events.record(
          pdb,
          'Warning',
          'UnmanagedPods',
          'Pods selected by this PodDisruptionBudget (selector: %v) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set ".spec.minAvailable" field of the PDB to an integer value.',
          labelSelectorString(asMap(pdb.spec).selector),
        );
      }
      // Kubernetes prints the budget's namespace twice here.
      for (const pod of res.notDeleted ?? [])
        this.events.record(pod, 'Warning', 'NotDeleted', "Pod was expected by PDB %s/%s to be deleted but it wasn't", ns, ns);
    }
    const status = 'error' in res ? failSafeStatus(pdb, res.error, now) : res.status;
    if ('recheckAt' in res && res.recheckAt !== undefined) this.recheck(key, res.recheckAt - now.getTime());
    if (!statusChanged(pdb, status)) return;
    try {
      await store.update(
        ns,
        name,
        { ...pdb, status },
        { ctx: CONTROLLER_CTX(), fieldValidation: 'Ignore', subresource: 'status', fieldManager: 'disruption-controller' },
      );
    } catch (e) {
      const code = (e as { code?: number }).code;
      if (code === 404) return;
      if (code === 409) {
        this.retryLater(key); // changed meanwhile: compute again from the new version
        return;
      }
      throw e;
    }
  }

  private recheck(key: string, delayMs: number): void {
    this.requeueAfter(key, Math.max(0, delayMs) + 100);
  }
}
