/**
 * The node lifecycle controller (kube-controller-manager's `node-lifecycle-controller`) and the
 * taint eviction controller (`taint-eviction-controller`), in passes (the rules are in
 * node-lifecycle.logic.ts):
 *  - every `KAPI_NODE_MONITOR_PERIOD_MS` (5 s) the nodes and their Leases in kube-node-lease are
 *    read; a node not heard from for its grace period (`KAPI_NODE_MONITOR_GRACE_MS`, 50 s, or
 *    `KAPI_NODE_STARTUP_GRACE_MS`, 60 s, for one that never posted status) has its kubelet's
 *    conditions set Unknown, a NodeNotReady Event, and its pods' Ready condition set False;
 *  - the NoSchedule taints follow the conditions (not-ready, unreachable, the pressures,
 *    network-unavailable) and `spec.unschedulable`;
 *  - the NoExecute taints not-ready and unreachable follow the Ready condition, added at most one
 *    node per 10 s per zone (none while more than 55% of a zone of over 2 nodes is down and
 *    the zone has 50 nodes or fewer), and removed from every node while all zones are down (a
 *    control plane cut off from its nodes evicts nothing);
 *  - every second, a pod on a node with NoExecute taints it does not tolerate, or tolerates for
 *    `tolerationSeconds` that have passed since the taint was added, gets the DisruptionTarget
 *    condition and is deleted, with a TaintManagerEviction Event.
 * Writes carry the object's resourceVersion: a conflict leaves the node or pod to the next pass.
 */
import { Inject, Injectable } from '@nestjs/common';
import type { KubeObject } from '@app/apimachinery';
import { KindRegistry } from '@app/registry';
import type { Storage } from '@app/storage';
import { envInt } from '../config/env.js';
import { asMap } from '../groups/core/core.helpers.js';
import { STORAGE, STORES, type StoreFactory } from '../tokens.js';
import { controllerContext, ManagedController } from './controller.runner.js';
import { PeriodicPassRunner } from './periodic-pass.runner.js';
import { EventRecorder, type ComponentRecorder } from './event.recorder.js';
import {
  evictionRate,
  evictionTime,
  hasNoExecuteTaint,
  noExecuteTaintWanted,
  noScheduleTaints,
  observeNode,
  podMarkedNotReady,
  podWithTaintEvictionCondition,
  readyStatus,
  TokenBucket,
  withNoExecuteTaint,
  zoneOf,
  zoneState,
  type NodeHealth,
} from './node-lifecycle.logic.js';

const codeOf = (e: unknown): number | undefined => (e as { code?: number }).code;
/** A write that lost a race or whose object is gone: the next pass looks again. */
const isRace = (e: unknown): boolean => codeOf(e) === 409 || codeOf(e) === 404;

@ManagedController({ name: 'node-lifecycle-controller' })
@Injectable()
export class NodeLifecycleRunner extends PeriodicPassRunner {
  private readonly health = new Map<string, NodeHealth>();
  /** The nodes this controller has registered (name to uid), for kube's RegisteredNode and RemovingNode Events. */
  private readonly known = new Map<string, string>();
  private readonly zones = new Map<string, TokenBucket>();
  private readonly events: ComponentRecorder;

  /** The nodes, the node Leases and (for a node gone NotReady) the pods, from watch-fed copies while this node leads. */
  private readonly readers = {
    nodes: this.collection('', 'nodes', 'node-lifecycle-controller: nodes'),
    leases: this.collection('coordination.k8s.io', 'leases', 'node-lifecycle-controller: leases'),
    pods: this.collection('', 'pods', 'node-lifecycle-controller: pods'),
  };

  constructor(registry: KindRegistry, @Inject(STORAGE) storage: Storage, @Inject(STORES) stores: StoreFactory, recorder: EventRecorder) {
    super(registry, storage, stores, 'node-lifecycle-controller', 'node-controller');
    this.events = recorder.for('node-controller');
  }

  protected period(): number {
    return envInt('KAPI_NODE_MONITOR_PERIOD_MS') ?? 5_000;
  }

  protected override reset(): void {
    this.health.clear();
    this.zones.clear();
    this.known.clear();
  }

  /** An Event about a node by name and uid (kube's RecordNodeEvent). */
  private nodeEvent(name: string, uid: string, reason: string, what: string): void {
    this.events.record({ apiVersion: 'v1', kind: 'Node', name, uid }, 'Normal', reason, 'Node %s event: %s', name, what);
  }

  protected async run(): Promise<void> {
    const grace = { startupMs: envInt('KAPI_NODE_STARTUP_GRACE_MS') ?? 60_000, monitorMs: envInt('KAPI_NODE_MONITOR_GRACE_MS') ?? 50_000 };
    const nodes = await this.readers.nodes.all();
    const leases = new Map<string, string>();
    if (this.decl('coordination.k8s.io', 'leases')) {
      for (const l of await this.readers.leases.inNamespace('kube-node-lease')) {
        const renew = asMap(l.spec).renewTime;
        if (typeof renew === 'string') leases.set(l.metadata.name ?? '', renew);
      }
    }
    const seen = new Set<string>();
    const current: KubeObject[] = [];
    for (let node of nodes) {
      const name = node.metadata.name ?? '';
      seen.add(name);
      if (this.known.get(name) !== node.metadata.uid) {
        this.known.set(name, node.metadata.uid ?? '');
        this.nodeEvent(name, node.metadata.uid ?? '', 'RegisteredNode', `Registered Node ${name} in Controller`);
      }
      const now = Date.now();
      const obs = observeNode(node, this.health.get(name), leases.get(name), now, grace);
      this.health.set(name, obs.health);
      if (obs.conditions) {
        try {
          node = (await this.write({ ...node, status: { ...asMap(node.status), conditions: obs.conditions } }, 'status')).object;
        } catch (e) {
          if (!isRace(e)) throw e;
          this.health.delete(name);
          continue;
        }
        if (obs.wasReady) {
          this.events.record(node, 'Normal', 'NodeNotReady', 'Node %s status is now: %s', name, 'NodeNotReady');
          await this.markPodsNotReady(name, now);
        }
      }
      const taints = noScheduleTaints(node);
      if (taints) {
        const written = await this.withTaints(node, taints);
        if (!written) continue;
        node = written;
      }
      current.push(node);
    }
    for (const name of [...this.health.keys()]) if (!seen.has(name)) this.health.delete(name);
    for (const [name, uid] of this.known) {
      if (seen.has(name)) continue;
      this.known.delete(name);
      this.nodeEvent(name, uid, 'RemovingNode', `Removing Node ${name} from Controller`);
    }
    await this.noExecutePass(current);
  }

  /** Sets the node's taints; the node as written, or undefined when it changed meanwhile. */
  private async withTaints(node: KubeObject, taints: unknown[]): Promise<KubeObject | undefined> {
    try {
      return (await this.write({ ...node, spec: { ...asMap(node.spec), taints } })).object;
    } catch (e) {
      if (!isRace(e)) throw e;
      return undefined;
    }
  }

  private async markPodsNotReady(nodeName: string, now: number): Promise<void> {
    for (const pod of await this.readers.pods.all()) {
      if (asMap(pod.spec).nodeName !== nodeName) continue;
      const marked = podMarkedNotReady(pod, now);
      if (!marked) continue;
      try {
        await this.write(marked, 'status');
      } catch (e) {
        if (!isRace(e)) throw e;
      }
    }
  }

  /** kube's doNoExecuteTaintingPass with handleDisruption, once per pass. */
  private async noExecutePass(nodes: KubeObject[]): Promise<void> {
    const now = Date.now();
    const counts = new Map<string, { ready: number; notReady: number }>();
    for (const n of nodes) {
      const c = counts.get(zoneOf(n)) ?? { ready: 0, notReady: 0 };
      if (readyStatus(n) === 'True') c.ready++;
      else c.notReady++;
      counts.set(zoneOf(n), c);
    }
    const states = new Map([...counts].map(([z, c]) => [z, zoneState(c.ready, c.notReady)]));
    const allDown = states.size > 0 && [...states.values()].every((s) => s === 'FullDisruption');
    for (const [zone, state] of states) {
      const rate = evictionRate(state, counts.get(zone)!.ready + counts.get(zone)!.notReady);
      const bucket = this.zones.get(zone);
      if (bucket) bucket.setRate(rate, now);
      else this.zones.set(zone, new TokenBucket(rate, now));
    }
    for (const [zone] of this.zones) if (!states.has(zone)) this.zones.delete(zone);
    for (const node of nodes) {
      const ready = readyStatus(node);
      if (ready === undefined) continue;
      const want = allDown ? undefined : noExecuteTaintWanted(node);
      // A new taint waits for its zone's turn; a swap between the two or a removal does not.
      if (want !== undefined && !hasNoExecuteTaint(node) && !this.zones.get(zoneOf(node))!.take(now)) continue;
      const taints = withNoExecuteTaint(node, want, now);
      if (taints) await this.withTaints(node, taints);
    }
  }
}

type Taints = Array<Record<string, unknown>>;

/** A node's taints when one of them is NoExecute (the only nodes the taint eviction controller looks at). */
const noExecuteTaintsOf = (node: KubeObject): Taints | undefined => {
  const taints = asMap(node.spec).taints;
  return Array.isArray(taints) && taints.some((t) => asMap(t).effect === 'NoExecute') ? (taints as Taints) : undefined;
};

/** What the taint eviction controller keeps of a pod bound to a node and not being deleted. */
const boundPodView = (pod: KubeObject): KubeObject | undefined => {
  const spec = asMap(pod.spec);
  if (typeof spec.nodeName !== 'string' || spec.nodeName === '' || pod.metadata.deletionTimestamp) return undefined;
  return {
    metadata: { namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid },
    spec: { nodeName: spec.nodeName, ...(spec.tolerations ? { tolerations: spec.tolerations } : {}) },
  };
};

@ManagedController({ name: 'taint-eviction-controller' })
@Injectable()
export class TaintEvictionRunner extends PeriodicPassRunner {
  /** When a pod was first seen on a tainted node whose taints carry no timeAdded. */
  private readonly seen = new Map<string, number>();
  /** The pods whose eviction is due later, for the Event when it is called off. */
  private readonly scheduled = new Map<string, KubeObject>();
  private readonly events: ComponentRecorder;
  /**
   * The nodes and the bound pods (a projection of each), from watch-fed copies while this node
   * leads, so that a pass costs no storage read; an eviction is decided on them and confirmed
   * against storage before it is carried out.
   */
  private readonly readers = {
    nodes: this.collection('', 'nodes', 'taint-eviction-controller: nodes'),
    pods: this.collection('', 'pods', 'taint-eviction-controller: pods', boundPodView),
  };

  constructor(registry: KindRegistry, @Inject(STORAGE) storage: Storage, @Inject(STORES) stores: StoreFactory, recorder: EventRecorder) {
    super(registry, storage, stores, 'taint-eviction-controller', 'taint-eviction-controller');
    this.events = recorder.for('taint-eviction-controller');
  }

  protected period(): number {
    return Math.min(1_000, envInt('KAPI_NODE_MONITOR_PERIOD_MS') ?? 5_000);
  }

  protected override reset(): void {
    this.seen.clear();
    this.scheduled.clear();
  }

  /** The NoExecute-tainted nodes' taints, by node name, and the bound pods (read only when some node is tainted). */
  private async snapshot(): Promise<{ tainted: Map<string, Taints>; pods: () => Promise<KubeObject[]> }> {
    const tainted = new Map<string, Taints>();
    for (const n of await this.readers.nodes.all()) {
      const taints = noExecuteTaintsOf(n);
      if (taints) tainted.set(n.metadata.name ?? '', taints);
    }
    return { tainted, pods: () => this.readers.pods.all() };
  }

  protected async run(): Promise<void> {
    const { tainted, pods } = await this.snapshot();
    if (tainted.size === 0 && this.scheduled.size === 0) {
      this.seen.clear();
      return;
    }
    const now = Date.now();
    const live = new Set<string>();
    const wasScheduled = new Map(this.scheduled);
    this.scheduled.clear();
    for (const pod of await pods()) {
      const key = pod.metadata.uid ?? `${pod.metadata.namespace}/${pod.metadata.name}`;
      const taints = tainted.get(String(asMap(pod.spec).nodeName ?? ''));
      if (!taints) continue;
      live.add(key);
      if (!this.seen.has(key)) this.seen.set(key, now);
      const at = evictionTime(pod, taints, this.seen.get(key)!);
      if (at === undefined) continue;
      if (at > now) this.scheduled.set(key, pod);
      else await this.evict(pod, this.seen.get(key)!, now);
      wasScheduled.delete(key);
    }
    // A pod whose eviction was due later and no longer is (the taint went, or a toleration came): kube's cancellation Event.
    for (const pod of wasScheduled.values()) {
      if (!(await this.current(pod))) continue;
      this.events.record(pod, 'Normal', 'TaintManagerEviction', 'Cancelling deletion of Pod %s', `${pod.metadata.namespace}/${pod.metadata.name}`);
    }
    for (const key of [...this.seen.keys()]) if (!live.has(key)) this.seen.delete(key);
  }

  /** The pod as storage holds it now, when it is still the same pod and not being deleted. */
  private async current(pod: KubeObject): Promise<KubeObject | undefined> {
    try {
      const cur = await this.stores.storeFor(this.decl('', 'pods')!).get(pod.metadata.namespace ?? '', pod.metadata.name ?? '');
      return cur.metadata.uid === pod.metadata.uid && !cur.metadata.deletionTimestamp ? cur : undefined;
    } catch (e) {
      if (codeOf(e) === 404) return undefined;
      throw e;
    }
  }

  /** Evicts the pod once storage confirms it is due: the pod and its node's taints read again. */
  private async evict(seenPod: KubeObject, seen: number, now: number): Promise<void> {
    const pod = await this.current(seenPod);
    if (!pod) return;
    const nodeName = String(asMap(pod.spec).nodeName ?? '');
    let taints: Taints | undefined;
    try {
      taints = noExecuteTaintsOf(await this.stores.storeFor(this.decl('', 'nodes')!).get('', nodeName));
    } catch (e) {
      if (codeOf(e) !== 404) throw e;
    }
    const at = taints ? evictionTime(pod, taints, seen) : undefined;
    if (at === undefined || at > now) return;
    const ns = pod.metadata.namespace ?? '';
    const name = pod.metadata.name ?? '';
    this.events.record(pod, 'Normal', 'TaintManagerEviction', 'Marking for deletion Pod %s', `${ns}/${name}`);
    const store = this.stores.storeFor(this.decl('', 'pods')!);
    try {
      await this.write(podWithTaintEvictionCondition(pod, now), 'status');
      await store.delete(ns, name, { preconditions: { uid: pod.metadata.uid } }, controllerContext('taint-eviction-controller'));
    } catch (e) {
      if (!isRace(e)) throw e;
    }
  }
}
