/**
 * The pod garbage collector (kube-controller-manager's `pod-garbage-collector`), in passes every
 * 20 s (`KAPI_PODGC_INTERVAL_MS`):
 *  - terminated pods (Succeeded or Failed) beyond `KAPI_TERMINATED_POD_GC_THRESHOLD` (12,500,
 *    kube's `--terminated-pod-gc-threshold`) are deleted, the oldest first;
 *  - a pod bound to a node that no longer exists is deleted once the node has been missing for
 *    two passes (kube's 40 s quarantine) and a last read confirms it is gone; a pod that had not
 *    finished is first marked Failed with the condition DisruptionTarget (reason
 *    DeletionByPodGC, `PodGC: node no longer exists`), as kube does;
 *  - a terminating pod on a node that is not Ready and carries the `node.kubernetes.io/out-of-service`
 *    taint (an operator's word that the node is down for good) is deleted at once;
 *  - a terminating pod that was never scheduled is deleted at once.
 * As kube's markFailedAndDeletePod: a pod that had not finished is marked Failed first, and the
 * delete has grace period 0. Evicted pods (Failed, reason Evicted) go before other terminated
 * ones. Deletes carry the pod's uid as a precondition, so a pod recreated under the same name is
 * not touched.
 *
 * The passes read a watch-fed copy of the pods it may act on (terminated, bound or terminating;
 * a few fields of each), kept while this node leads, so a pass costs no list of every pod; a pod
 * is read again before its status is written.
 */
import { Inject, Injectable } from '@nestjs/common';
import { formatMetaTime, type KubeObject } from '@app/apimachinery';
import { KindRegistry } from '@app/registry';
import type { Storage } from '@app/storage';
import { envInt } from '../config/env.js';
import { asMap, mapsOf } from '../groups/core/core.helpers.js';
import { STORAGE, STORES, type StoreFactory } from '../tokens.js';
import { controllerContext, ManagedController } from './controller.runner.js';
import { PeriodicPassRunner } from './periodic-pass.runner.js';

const codeOf = (e: unknown): number | undefined => (e as { code?: number }).code;
const isTerminated = (pod: KubeObject): boolean => ['Succeeded', 'Failed'].includes(String(asMap(pod.status).phase ?? ''));

/** gcTerminated: the terminated pods beyond `threshold`, oldest first (none when threshold is 0). */
export function terminatedToDelete(pods: KubeObject[], threshold: number): KubeObject[] {
  if (threshold <= 0) return [];
  const terminated = pods.filter(isTerminated);
  const excess = terminated.length - threshold;
  if (excess <= 0) return [];
  const created = (p: KubeObject) => Date.parse(String(p.metadata.creationTimestamp ?? '')) || 0;
  const evicted = (p: KubeObject) => (asMap(p.status).phase === 'Failed' && asMap(p.status).reason === 'Evicted' ? 0 : 1);
  return [...terminated]
    .sort((a, b) => evicted(a) - evicted(b) || created(a) - created(b) || String(a.metadata.name).localeCompare(String(b.metadata.name)))
    .slice(0, excess);
}

/** Whether a node's Ready condition is True. */
const isNodeReady = (node: KubeObject): boolean => mapsOf(asMap(node.status).conditions).some((c) => c.type === 'Ready' && c.status === 'True');

/** gcTerminating: the terminating pods bound to nodes that are not Ready and are tainted out of service. */
export function terminatingOnOutOfServiceNodes(pods: KubeObject[], nodes: KubeObject[]): KubeObject[] {
  const outOfService = new Set(
    nodes
      .filter((n) => !isNodeReady(n) && mapsOf(asMap(n.spec).taints).some((t) => t.key === 'node.kubernetes.io/out-of-service'))
      .map((n) => n.metadata.name ?? ''),
  );
  return pods.filter((p) => p.metadata.deletionTimestamp && outOfService.has(String(asMap(p.spec).nodeName ?? '')));
}

/** The pods bound to nodes not among `nodes`, by node name. */
export function podsOnMissingNodes(pods: KubeObject[], nodes: ReadonlySet<string>): Map<string, KubeObject[]> {
  const out = new Map<string, KubeObject[]>();
  for (const p of pods) {
    const node = asMap(p.spec).nodeName;
    if (typeof node !== 'string' || node === '' || nodes.has(node)) continue;
    out.set(node, [...(out.get(node) ?? []), p]);
  }
  return out;
}

/**
 * The status a pod gets before the collector deletes it: Failed, and for a pod of a missing node
 * (`orphaned`) the condition DisruptionTarget too.
 */
export function failedByPodGC(pod: KubeObject, now: Date, orphaned = true): KubeObject {
  const status = { ...asMap(pod.status) };
  if (!orphaned) return { ...pod, status: { ...status, phase: 'Failed' } };
  const conditions = mapsOf(status.conditions).filter((c) => c.type !== 'DisruptionTarget');
  conditions.push({
    type: 'DisruptionTarget',
    status: 'True',
    reason: 'DeletionByPodGC',
    message: 'PodGC: node no longer exists',
    lastTransitionTime: formatMetaTime(now),
  });
  return { ...pod, status: { ...status, phase: 'Failed', conditions } };
}

/** What the collector keeps of a pod: those terminated, bound or terminating, with the fields its rules read. */
export function podGcView(pod: KubeObject): KubeObject | undefined {
  const spec = asMap(pod.spec);
  const status = asMap(pod.status);
  const bound = typeof spec.nodeName === 'string' && spec.nodeName !== '';
  if (!isTerminated(pod) && !bound && !pod.metadata.deletionTimestamp) return undefined;
  const m = pod.metadata;
  return {
    metadata: {
      namespace: m.namespace,
      name: m.name,
      uid: m.uid,
      creationTimestamp: m.creationTimestamp,
      ...(m.deletionTimestamp ? { deletionTimestamp: m.deletionTimestamp } : {}),
    },
    spec: bound ? { nodeName: spec.nodeName } : {},
    status: { ...(status.phase !== undefined ? { phase: status.phase } : {}), ...(status.reason !== undefined ? { reason: status.reason } : {}) },
  };
}

/** Runs the pod garbage collector while this node holds the controller Lease. */
@ManagedController({ name: 'pod-garbage-collector' })
@Injectable()
export class PodGarbageCollectorRunner extends PeriodicPassRunner {
  /** Nodes found missing, with the time of the pass that first missed them. */
  private readonly missingSince = new Map<string, number>();
  /** The pods the passes look at (a projection) and the nodes, from watch-fed copies while this node leads. */
  private readonly readers = {
    pods: this.collection('', 'pods', 'pod-garbage-collector: pods', podGcView),
    nodes: this.collection('', 'nodes', 'pod-garbage-collector: nodes'),
  };

  constructor(registry: KindRegistry, @Inject(STORAGE) storage: Storage, @Inject(STORES) stores: StoreFactory) {
    super(registry, storage, stores, 'pod-garbage-collector', 'pod-garbage-collector');
  }

  protected period(): number {
    return envInt('KAPI_PODGC_INTERVAL_MS') ?? 20_000;
  }

  protected override reset(): void {
    this.missingSince.clear();
  }

  protected async run(): Promise<void> {
    const [pods, nodes] = await Promise.all([this.readers.pods.all(), this.readers.nodes.all()]);
    for (const p of terminatedToDelete(pods, envInt('KAPI_TERMINATED_POD_GC_THRESHOLD') ?? 12_500)) await this.deletePod(p);
    for (const p of terminatingOnOutOfServiceNodes(pods, nodes)) await this.markFailedAndDelete(p, false);
    await this.gcOrphaned(pods, new Set(nodes.map((n) => n.metadata.name ?? '')));
    for (const p of pods) if (p.metadata.deletionTimestamp && !asMap(p.spec).nodeName) await this.markFailedAndDelete(p, false);
  }

  private async gcOrphaned(pods: KubeObject[], nodes: ReadonlySet<string>): Promise<void> {
    const now = Date.now();
    const orphans = podsOnMissingNodes(pods, nodes);
    for (const name of [...this.missingSince.keys()]) if (!orphans.has(name)) this.missingSince.delete(name);
    for (const [node, onNode] of orphans) {
      const since = this.missingSince.get(node);
      if (since === undefined) {
        this.missingSince.set(node, now);
        continue;
      }
      if (now - since < 2 * this.period() - 50) continue;
      // The last word: the node is read once more before its pods go.
      try {
        await this.stores.storeFor(this.decl('', 'nodes')!).get('', node);
        this.missingSince.delete(node);
        continue;
      } catch (e) {
        if (codeOf(e) !== 404) throw e;
      }
      for (const pod of onNode) await this.markFailedAndDelete(pod, true);
    }
  }

  /** Marks a pod that has not finished Failed (with DisruptionTarget when `orphaned`), then deletes it. */
  private async markFailedAndDelete(pod: KubeObject, orphaned: boolean): Promise<void> {
    if (!isTerminated(pod)) {
      try {
        // The copy holds a few fields: the status is written on the pod as it is now.
        const fresh = await this.stores.storeFor(this.decl('', 'pods')!).get(pod.metadata.namespace ?? '', pod.metadata.name ?? '');
        if (fresh.metadata.uid !== pod.metadata.uid) return;
        if (!isTerminated(fresh)) await this.write(failedByPodGC(fresh, new Date(), orphaned), 'status');
      } catch (e) {
        if (codeOf(e) === 404) return;
        if (codeOf(e) !== 409) throw e;
        // Changed meanwhile: deleted anyway, as kube does when its status patch fails.
      }
    }
    await this.deletePod(pod);
  }

  private async deletePod(pod: KubeObject): Promise<void> {
    try {
      await this.stores
        .storeFor(this.decl('', 'pods')!)
        .delete(
          pod.metadata.namespace ?? '',
          pod.metadata.name ?? '',
          { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid } },
          controllerContext('pod-garbage-collector'),
        );
    } catch (e) {
      // Gone already, or another pod of that name now.
      if (codeOf(e) !== 404 && codeOf(e) !== 409) throw e;
    }
  }
}
