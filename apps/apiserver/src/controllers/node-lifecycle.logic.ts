/**
 * The rules of the node lifecycle and taint eviction controllers, as pure functions (the
 * runners in node-lifecycle.controller.ts read and write): when a silent node's conditions turn
 * Unknown, which taints a node's conditions call for, how a zone's health paces the NoExecute
 * taints, and when a pod on a NoExecute-tainted node is evicted. Each follows
 * kube-controller-manager's node-lifecycle-controller and taint-eviction-controller.
 */
import { formatMetaTime, type KubeObject } from '@app/apimachinery';
import { asMap, mapsOf } from '../groups/core/core.helpers.js';
import { tolerates } from './daemonset.logic.js';

type Obj = Record<string, unknown>;

export const TAINT_NOT_READY = 'node.kubernetes.io/not-ready';
export const TAINT_UNREACHABLE = 'node.kubernetes.io/unreachable';
export const TAINT_UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';

/** The NoSchedule taint each condition status calls for (kube's nodeConditionToTaintKeyStatusMap). */
const CONDITION_TAINTS: Record<string, Record<string, string>> = {
  Ready: { False: TAINT_NOT_READY, Unknown: TAINT_UNREACHABLE },
  MemoryPressure: { True: 'node.kubernetes.io/memory-pressure' },
  DiskPressure: { True: 'node.kubernetes.io/disk-pressure' },
  NetworkUnavailable: { True: 'node.kubernetes.io/network-unavailable' },
  PIDPressure: { True: 'node.kubernetes.io/pid-pressure' },
};

/** The NoSchedule taints this controller owns: added and removed by it alone. */
const NO_SCHEDULE_KEYS = new Set([...Object.values(CONDITION_TAINTS).flatMap((m) => Object.values(m)), TAINT_UNSCHEDULABLE]);

/** The conditions a silent node's kubelet would have kept, turned Unknown (NetworkUnavailable is not the kubelet's). */
const KUBELET_CONDITIONS = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'];

const timeOf = (v: unknown): number => Date.parse(String(v ?? '')) || 0;

export function conditionOf(node: KubeObject, type: string): Obj | undefined {
  return mapsOf(asMap(node.status).conditions).find((c) => c.type === type);
}

/** The node's Ready status: 'True', 'False', 'Unknown', or undefined when it has none. */
export function readyStatus(node: KubeObject): string | undefined {
  const s = conditionOf(node, 'Ready')?.status;
  return typeof s === 'string' ? s : undefined;
}

/** What the controller remembers of a node between passes (kube's nodeHealthData). */
export interface NodeHealth {
  /** When the node was last heard from (ms): a new heartbeat of its Ready condition or a renewal of its Lease, as this controller saw them. */
  probeMs: number;
  /** The Ready condition's lastHeartbeatTime last seen; undefined while the node has no Ready condition. */
  heartbeat?: string;
  /** The renewTime of the node's Lease last seen. */
  leaseRenew?: string;
}

export interface GracePeriods {
  /** For a node whose kubelet has not yet posted a Ready condition, counted from its creation. */
  startupMs: number;
  /** For a node that has posted one, counted from its last heartbeat. */
  monitorMs: number;
}

export interface Observation {
  health: NodeHealth;
  /** The node's conditions to write, when it has been silent past its grace period and some are not Unknown yet. */
  conditions?: Obj[];
  /** Whether that write turns a Ready node not Ready (its pods are then marked not ready). */
  wasReady: boolean;
}

/**
 * One look at a node (kube's tryUpdateNodeHealth). A node is heard from when its Ready
 * condition's heartbeat or its Lease's renewTime changes; the times are this controller's own
 * clock at the observation, never the kubelet's. A node first seen with a Ready condition (as
 * after a controller restart or a failover) gets a whole grace period from now; one without
 * gets the startup grace period from its creation. Past its grace, its kubelet's conditions
 * become Unknown: NodeStatusNeverUpdated for those never posted, NodeStatusUnknown for the others.
 */
export function observeNode(node: KubeObject, saved: NodeHealth | undefined, leaseRenew: string | undefined, now: number, grace: GracePeriods): Observation {
  const ready = conditionOf(node, 'Ready');
  const heartbeat = ready ? String(ready.lastHeartbeatTime ?? '') : undefined;
  let health: NodeHealth;
  let graceMs: number;
  if (!ready) {
    graceMs = grace.startupMs;
    health = { probeMs: timeOf(node.metadata.creationTimestamp) };
  } else {
    graceMs = grace.monitorMs;
    health =
      !saved || saved.heartbeat === undefined || saved.heartbeat !== heartbeat ? { probeMs: now, heartbeat, leaseRenew: saved?.leaseRenew } : { ...saved };
  }
  if (leaseRenew !== undefined && (health.leaseRenew === undefined || timeOf(leaseRenew) > timeOf(health.leaseRenew))) {
    health.probeMs = now;
    health.leaseRenew = leaseRenew;
  }
  const wasReady = ready?.status === 'True';
  if (now <= health.probeMs + graceMs) return { health, wasReady };

  const stamp = formatMetaTime(new Date(now));
  let changed = false;
  const conditions = mapsOf(asMap(node.status).conditions).map((c) => ({ ...c }));
  for (const type of KUBELET_CONDITIONS) {
    const c = conditions.find((x) => x.type === type);
    if (!c) {
      conditions.push({
        type,
        status: 'Unknown',
        lastHeartbeatTime: node.metadata.creationTimestamp,
        lastTransitionTime: stamp,
        reason: 'NodeStatusNeverUpdated',
        message: 'Kubelet never posted node status.',
      });
      changed = true;
    } else if (c.status !== 'Unknown') {
      Object.assign(c, { status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.', lastTransitionTime: stamp });
      changed = true;
    }
  }
  if (!changed) return { health, wasReady };
  // What is written is what the next pass will read: its heartbeat is not news.
  const written = conditions.find((c) => c.type === 'Ready');
  return { health: { ...health, heartbeat: String(written?.lastHeartbeatTime ?? '') }, conditions, wasReady };
}

/**
 * The node's taints after the NoSchedule pass (kube's doNoScheduleTaintingPass): one NoSchedule
 * taint per condition that calls for it, and `node.kubernetes.io/unschedulable` while the node
 * is cordoned. Others' taints are kept as they are. Undefined when nothing changes.
 */
export function noScheduleTaints(node: KubeObject): Obj[] | undefined {
  const wanted = new Set<string>();
  for (const c of mapsOf(asMap(node.status).conditions)) {
    const key = CONDITION_TAINTS[String(c.type)]?.[String(c.status)];
    if (key) wanted.add(key);
  }
  if (asMap(node.spec).unschedulable === true) wanted.add(TAINT_UNSCHEDULABLE);
  const taints = mapsOf(asMap(node.spec).taints);
  const owned = (t: Obj) => t.effect === 'NoSchedule' && NO_SCHEDULE_KEYS.has(String(t.key));
  const present = new Set(taints.filter(owned).map((t) => String(t.key)));
  const kept = taints.filter((t) => !owned(t) || wanted.has(String(t.key)));
  const added = [...wanted].filter((k) => !present.has(k)).map((key) => ({ key, effect: 'NoSchedule' }));
  if (added.length === 0 && kept.length === taints.length) return undefined;
  return [...kept, ...added];
}

/** The zone a node counts in (kube's GetZoneKey): its region and zone labels; '' for neither. */
export function zoneOf(node: KubeObject): string {
  const labels = asMap(node.metadata.labels);
  const region = labels['topology.kubernetes.io/region'] ?? labels['failure-domain.beta.kubernetes.io/region'] ?? '';
  const zone = labels['topology.kubernetes.io/zone'] ?? labels['failure-domain.beta.kubernetes.io/zone'] ?? '';
  return region === '' && zone === '' ? '' : `${String(region)}:\0:${String(zone)}`;
}

export type ZoneState = 'Normal' | 'PartialDisruption' | 'FullDisruption';

/** A zone's state from its nodes' readiness (kube's ComputeZoneState, unhealthy threshold 0.55). */
export function zoneState(ready: number, notReady: number, unhealthyThreshold = 0.55): ZoneState {
  if (ready === 0 && notReady > 0) return 'FullDisruption';
  if (notReady > 2 && notReady / (notReady + ready) >= unhealthyThreshold) return 'PartialDisruption';
  return 'Normal';
}

/** Nodes a second that may get a NoExecute taint in a zone of `size` nodes in `state` (kube's --node-eviction-rate 0.1, secondary 0.01, above 50 nodes). */
export function evictionRate(state: ZoneState, size: number): number {
  if (state === 'PartialDisruption') return size > 50 ? 0.01 : 0;
  return 0.1;
}

/** A token bucket of burst 1 (kube's RateLimitedTimedQueue limiter): at most one take per 1/rate seconds. */
export class TokenBucket {
  private tokens = 1;
  private last: number;

  constructor(
    private rate: number,
    now: number,
  ) {
    this.last = now;
  }

  setRate(rate: number, now: number): void {
    this.refill(now);
    this.rate = rate;
  }

  take(now: number): boolean {
    this.refill(now);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  private refill(now: number): void {
    this.tokens = Math.min(1, this.tokens + (Math.max(0, now - this.last) / 1000) * this.rate);
    this.last = now;
  }
}

/** The NoExecute taint a node's Ready condition calls for: not-ready when False, unreachable when Unknown. */
export function noExecuteTaintWanted(node: KubeObject): string | undefined {
  const s = readyStatus(node);
  return s === 'False' ? TAINT_NOT_READY : s === 'Unknown' ? TAINT_UNREACHABLE : undefined;
}

const isNodeNoExecute = (t: Obj) => t.effect === 'NoExecute' && (t.key === TAINT_NOT_READY || t.key === TAINT_UNREACHABLE);

/**
 * The node's taints with its readiness NoExecute taint set to `key` (added with the time it was
 * added, or swapped for the other one) or, with `key` undefined, removed. Undefined when nothing
 * changes.
 */
export function withNoExecuteTaint(node: KubeObject, key: string | undefined, now: number): Obj[] | undefined {
  const taints = mapsOf(asMap(node.spec).taints);
  const mine = taints.filter(isNodeNoExecute);
  if (key === undefined ? mine.length === 0 : mine.length === 1 && mine[0]!.key === key) return undefined;
  const rest = taints.filter((t) => !isNodeNoExecute(t));
  return key === undefined ? rest : [...rest, { key, effect: 'NoExecute', timeAdded: formatMetaTime(new Date(now)) }];
}

/** Whether the node carries a readiness NoExecute taint. */
export function hasNoExecuteTaint(node: KubeObject): boolean {
  return mapsOf(asMap(node.spec).taints).some(isNodeNoExecute);
}

/**
 * When a pod on a node with these taints is evicted (kube's taint-eviction-controller), in ms:
 * at once when some NoExecute taint is not tolerated; else once the shortest
 * `tolerationSeconds` among the tolerations used has passed since the earliest of the taints was
 * added (`timeAdded`, or `seen` for a taint without one); undefined when the node has no
 * NoExecute taint or the pod tolerates them all for ever.
 */
export function evictionTime(pod: KubeObject, taints: Obj[], seen: number): number | undefined {
  const noExecute = taints.filter((t) => t.effect === 'NoExecute');
  if (noExecute.length === 0) return undefined;
  const tolerations = mapsOf(asMap(pod.spec).tolerations).filter((t) => !t.effect || t.effect === 'NoExecute');
  const used = new Set<Obj>();
  for (const taint of noExecute) {
    const matching = tolerations.filter((t) => tolerates(t, taint));
    if (matching.length === 0) return -Infinity;
    for (const t of matching) used.add(t);
  }
  let seconds: number | undefined;
  for (const t of used) {
    if (typeof t.tolerationSeconds !== 'number') continue;
    const s = Math.max(0, t.tolerationSeconds);
    seconds = seconds === undefined ? s : Math.min(seconds, s);
  }
  if (seconds === undefined) return undefined;
  const added = noExecute.map((t) => (t.timeAdded ? timeOf(t.timeAdded) : seen)).filter((t) => t > 0);
  const start = added.length ? Math.min(...added) : seen;
  return start + seconds * 1000;
}

/** The pod with its Ready condition False (kube's MarkPodsNotReady); undefined when it is not Ready True. */
export function podMarkedNotReady(pod: KubeObject, now: number): KubeObject | undefined {
  const status = asMap(pod.status);
  const conditions = mapsOf(status.conditions);
  if (!conditions.some((c) => c.type === 'Ready' && c.status === 'True')) return undefined;
  const stamp = formatMetaTime(new Date(now));
  return {
    ...pod,
    status: {
      ...status,
      conditions: conditions.map((c) => (c.type === 'Ready' ? { ...c, status: 'False', lastTransitionTime: stamp } : c)),
    },
  };
}

/** The pod with the condition the taint eviction controller sets before it deletes it. */
export function podWithTaintEvictionCondition(pod: KubeObject, now: number): KubeObject {
  const status = asMap(pod.status);
  const conditions = mapsOf(status.conditions).filter((c) => c.type !== 'DisruptionTarget');
  conditions.push({
    type: 'DisruptionTarget',
    status: 'True',
    reason: 'DeletionByTaintManager',
    message: 'Taint manager: deleting due to NoExecute taint',
    lastTransitionTime: formatMetaTime(new Date(now)),
  });
  return { ...pod, status: { ...status, conditions } };
}
