/**
 * The computation of the DaemonSet controller (kube-controller-manager's daemonset controller):
 * which nodes should run a DaemonSet's pod (its nodeSelector, required node affinity and the
 * node's taints against its tolerations and those the controller always adds), which node a
 * daemon pod belongs to, the pod created for a node, which pods to create and delete (one pod a
 * node, a rolling update within maxUnavailable or maxSurge), which old ControllerRevisions to
 * drop, and the status. Pure: the controller (daemonset.controller.ts) does the reads and writes.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '@app/apimachinery';
import { asMap } from '../groups/core/core.helpers.js';
import { podReady } from '../groups/policy/poddisruptionbudget/pdb.status.js';
import { newControllerRef, scaledValue } from './disruption.logic.js';
import { CONTROLLER_REVISION_HASH_LABEL, revisionNumber, sortRevisions } from './history.logic.js';
import { isAvailable } from './replicaset.logic.js';

/** The label giving a daemon pod its DaemonSet's template generation (deprecated, still set). */
export const POD_TEMPLATE_GENERATION_LABEL = 'pod-template-generation';
/** The annotation in which the server keeps a DaemonSet's template generation. */
export const TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation';

type Obj = Record<string, unknown>;
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(asMap) : []);
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const timeOf = (v: unknown): number => (typeof v === 'string' ? Date.parse(v) || 0 : 0);
const copy = <T>(v: T): T => JSON.parse(JSON.stringify(v ?? null)) as T;

/** The tolerations the controller adds to every daemon pod (AddOrUpdateDaemonPodTolerations). */
export function daemonTolerations(podSpec: Obj): Obj[] {
  const added: Obj[] = [
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
    { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
  ];
  if (podSpec.hostNetwork === true) added.push({ key: 'node.kubernetes.io/network-unavailable', operator: 'Exists', effect: 'NoSchedule' });
  const out = list(podSpec.tolerations).map((t) => ({ ...t }));
  const same = (a: Obj, b: Obj) =>
    (a.key ?? '') === (b.key ?? '') &&
    (a.operator ?? 'Equal') === (b.operator ?? 'Equal') &&
    (a.value ?? '') === (b.value ?? '') &&
    (a.effect ?? '') === (b.effect ?? '');
  for (const t of added) {
    const at = out.findIndex((o) => same(o, t));
    if (at >= 0) out[at] = t;
    else out.push(t);
  }
  return out;
}

/** Whether a toleration tolerates a taint (Toleration.ToleratesTaint). */
export function tolerates(toleration: Obj, taint: Obj): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.key && toleration.key !== taint.key) return false;
  const op = toleration.operator ?? 'Equal';
  if (op === 'Exists') return true;
  if (op === 'Equal') return (toleration.value ?? '') === (taint.value ?? '');
  return false;
}

/** Whether every taint of the given effects is tolerated. */
function taintsTolerated(tolerations: Obj[], taints: Obj[], effects: string[]): boolean {
  return taints.filter((t) => effects.includes(String(t.effect))).every((t) => tolerations.some((tol) => tolerates(tol, t)));
}

/** Whether one node selector requirement holds for a value (present or not). */
function requirementHolds(req: Obj, present: boolean, value: string): boolean {
  const values = Array.isArray(req.values) ? req.values.map(String) : [];
  switch (req.operator) {
    case 'In':
      return present && values.includes(value);
    case 'NotIn':
      return !present || !values.includes(value);
    case 'Exists':
      return present;
    case 'DoesNotExist':
      return !present;
    case 'Gt':
    case 'Lt': {
      if (!present || values.length !== 1 || !/^-?\d+$/.test(value) || !/^-?\d+$/.test(values[0]!)) return false;
      const [a, b] = [Number(value), Number(values[0])];
      return req.operator === 'Gt' ? a > b : a < b;
    }
    default:
      return false;
  }
}

/** Whether a node selector term matches a node: its label expressions and its field expressions (metadata.name), all of them. */
function termMatches(term: Obj, node: KubeObject): boolean {
  const exprs = list(term.matchExpressions);
  const fields = list(term.matchFields);
  if (exprs.length === 0 && fields.length === 0) return false;
  const labels = asMap(node.metadata.labels) as Record<string, string>;
  const labelsOk = exprs.every((r) => {
    const key = String(r.key ?? '');
    return requirementHolds(r, Object.hasOwn(labels, key), String(labels[key] ?? ''));
  });
  const fieldsOk = fields.every(
    (r) => r.key === 'metadata.name' && ['In', 'NotIn'].includes(String(r.operator)) && requirementHolds(r, true, node.metadata.name ?? ''),
  );
  return labelsOk && fieldsOk;
}

/** Whether a pod spec's nodeSelector and required node affinity match a node (GetRequiredNodeAffinity(pod).Match). */
export function nodeMatches(podSpec: Obj, node: KubeObject): boolean {
  const labels = asMap(node.metadata.labels) as Record<string, string>;
  if (!Object.entries(asMap(podSpec.nodeSelector)).every(([k, v]) => Object.hasOwn(labels, k) && labels[k] === v)) return false;
  const required = asMap(asMap(podSpec.affinity).nodeAffinity).requiredDuringSchedulingIgnoredDuringExecution;
  if (required === undefined || required === null) return true;
  return list(asMap(required).nodeSelectorTerms).some((t) => termMatches(t, node));
}

/**
 * Whether a node should run the DaemonSet's pod, and whether a pod already there may keep
 * running (NodeShouldRunDaemonPod): a template naming another node, or a nodeSelector or
 * required affinity the node does not match, rules the node out; an untolerated NoSchedule or
 * NoExecute taint means no new pod, and an untolerated NoExecute taint means no pod at all. The
 * controller's own tolerations count (so an unschedulable node still runs daemons).
 */
export function nodeShouldRun(node: KubeObject, ds: KubeObject): { shouldRun: boolean; shouldContinueRunning: boolean } {
  const podSpec = asMap(asMap(asMap(ds.spec).template).spec);
  const no = { shouldRun: false, shouldContinueRunning: false };
  if (typeof podSpec.nodeName === 'string' && podSpec.nodeName !== '' && podSpec.nodeName !== node.metadata.name) return no;
  if (!nodeMatches(podSpec, node)) return no;
  const tolerations = daemonTolerations(podSpec);
  const taints = list(asMap(node.spec).taints);
  if (!taintsTolerated(tolerations, taints, ['NoSchedule', 'NoExecute']))
    return { shouldRun: false, shouldContinueRunning: taintsTolerated(tolerations, taints, ['NoExecute']) };
  return { shouldRun: true, shouldContinueRunning: true };
}

/** The node a daemon pod belongs to (GetTargetNodeName): spec.nodeName once bound, else its required affinity's metadata.name term. */
export function targetNode(pod: KubeObject): string | undefined {
  const spec = asMap(pod.spec);
  if (typeof spec.nodeName === 'string' && spec.nodeName !== '') return spec.nodeName;
  const required = asMap(asMap(asMap(spec.affinity).nodeAffinity).requiredDuringSchedulingIgnoredDuringExecution);
  for (const term of list(required.nodeSelectorTerms))
    for (const f of list(term.matchFields)) {
      if (f.key !== 'metadata.name' || f.operator !== 'In') continue;
      return Array.isArray(f.values) && f.values.length === 1 && typeof f.values[0] === 'string' ? f.values[0] : undefined;
    }
  return undefined;
}

/** The DaemonSet's template generation (its annotation; the generation when absent). */
export function templateGeneration(ds: KubeObject): string {
  const a = asMap(ds.metadata.annotations)[TEMPLATE_GENERATION_ANNOTATION];
  return typeof a === 'string' && a !== '' ? a : String(ds.metadata.generation ?? 1);
}

/**
 * The pod created for a node (CreatePodTemplate and ReplaceDaemonSetPodNodeNameNodeAffinity):
 * the template with the hash and template generation labels and the controller's tolerations,
 * its required node affinity replaced by the one term `metadata.name In [node]`, named
 * `<daemonset>-<random>` by the server and owned by the DaemonSet. spec.nodeName stays unset:
 * binding is a scheduler's work.
 */
export function daemonPod(ds: KubeObject, nodeName: string, hash: string): KubeObject {
  const template = asMap(asMap(ds.spec).template);
  const meta = asMap(template.metadata);
  const spec = copy(asMap(template.spec));
  spec.tolerations = daemonTolerations(spec);
  const pin = { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] }] };
  const affinity = asMap(spec.affinity);
  spec.affinity = { ...affinity, nodeAffinity: { ...asMap(affinity.nodeAffinity), requiredDuringSchedulingIgnoredDuringExecution: pin } };
  const metadata: KubeObject['metadata'] = {
    generateName: `${ds.metadata.name ?? ''}-`,
    namespace: ds.metadata.namespace,
    labels: {
      ...(copy(asMap(meta.labels)) as Record<string, string>),
      [CONTROLLER_REVISION_HASH_LABEL]: hash,
      [POD_TEMPLATE_GENERATION_LABEL]: templateGeneration(ds),
    },
    ownerReferences: [daemonSetRef(ds)],
  };
  if (meta.annotations !== undefined) metadata.annotations = copy(meta.annotations) as Record<string, string>;
  if (meta.finalizers !== undefined) metadata.finalizers = copy(meta.finalizers) as string[];
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec };
}

/** The controller reference a DaemonSet puts on its pods and revisions. */
export function daemonSetRef(ds: KubeObject): Obj {
  return newControllerRef(ds, 'apps/v1', 'DaemonSet');
}

const isTerminal = (p: KubeObject): boolean => ['Succeeded', 'Failed'].includes(String(asMap(p.status).phase));

/** The DaemonSet's pods by node (getNodesToDaemonPods): pods whose node cannot be told, and finished pods being deleted, are left out. */
export function podsByNode(pods: KubeObject[]): Map<string, KubeObject[]> {
  const out = new Map<string, KubeObject[]>();
  for (const p of pods) {
    if (isTerminal(p) && p.metadata.deletionTimestamp) continue;
    const node = targetNode(p);
    if (node === undefined) continue;
    out.set(node, [...(out.get(node) ?? []), p]);
  }
  return out;
}

/** Oldest first (then running before pending, then by name). */
const byAge = (a: KubeObject, b: KubeObject): number =>
  timeOf(a.metadata.creationTimestamp) - timeOf(b.metadata.creationTimestamp) || String(a.metadata.name).localeCompare(String(b.metadata.name));

/** Whether a pod is of the DaemonSet's current template (IsPodUpdated): its hash label, or its template generation label. */
export function isPodUpdated(pod: KubeObject, hash: string, generation: string): boolean {
  const labels = asMap(pod.metadata.labels);
  return (hash !== '' && labels[CONTROLLER_REVISION_HASH_LABEL] === hash) || labels[POD_TEMPLATE_GENERATION_LABEL] === generation;
}

/** The strategy's limits (updatedDesiredNodeCounts): maxUnavailable and maxSurge of the desired count, rounded up; both 0 means maxUnavailable 1. */
export function rollingLimits(ds: KubeObject, desired: number): { maxUnavailable: number; maxSurge: number } {
  const ru = asMap(asMap(asMap(ds.spec).updateStrategy).rollingUpdate);
  let maxUnavailable = 1;
  let maxSurge = 0;
  try {
    maxUnavailable = ru.maxUnavailable === undefined ? 1 : scaledValue(ru.maxUnavailable, desired);
    maxSurge = ru.maxSurge === undefined ? 0 : scaledValue(ru.maxSurge, desired);
  } catch {
    // an invalid value keeps the defaults
  }
  if (maxUnavailable <= 0 && maxSurge <= 0) maxUnavailable = 1;
  return { maxUnavailable: Math.max(0, maxUnavailable), maxSurge: Math.max(0, maxSurge) };
}

const isRollingUpdate = (ds: KubeObject): boolean => (asMap(asMap(ds.spec).updateStrategy).type ?? 'RollingUpdate') === 'RollingUpdate';

/** What one sync does to the pods: the nodes to create a pod on, and the pods to delete (with why). */
export interface Plan {
  create: string[];
  delete: { pod: KubeObject; failed?: boolean }[];
}

/**
 * The pods a DaemonSet is missing and those it should not have (manage, podsShouldBeOnNode): a
 * node that should run one and has none gets one; on a node that may keep its pod, failed and
 * succeeded pods are deleted and, of several running ones, all but the oldest (when surging: the
 * oldest updated and the oldest old one); a node that may not keep its pods loses them all; a
 * pod not yet bound to a node that no longer exists is deleted. Pods being deleted count as
 * present but are never deleted again. Nodes in name order.
 */
export function managePlan(ds: KubeObject, nodes: KubeObject[], byNode: Map<string, KubeObject[]>, hash: string): Plan {
  const plan: Plan = { create: [], delete: [] };
  const surge = isRollingUpdate(ds) && rollingLimits(ds, nodes.length).maxSurge > 0;
  const generation = templateGeneration(ds);
  const sorted = [...nodes].sort((a, b) => String(a.metadata.name).localeCompare(String(b.metadata.name)));
  for (const node of sorted) {
    const name = node.metadata.name ?? '';
    const { shouldRun, shouldContinueRunning } = nodeShouldRun(node, ds);
    const pods = byNode.get(name) ?? [];
    if (shouldRun && pods.length === 0) {
      plan.create.push(name);
      continue;
    }
    if (!shouldContinueRunning) {
      for (const pod of pods) if (!pod.metadata.deletionTimestamp) plan.delete.push({ pod });
      continue;
    }
    const running: KubeObject[] = [];
    for (const pod of pods) {
      if (pod.metadata.deletionTimestamp) continue;
      const phase = asMap(pod.status).phase;
      if (phase === 'Failed') plan.delete.push({ pod, failed: true });
      else if (phase === 'Succeeded') plan.delete.push({ pod });
      else running.push(pod);
    }
    if (running.length <= 1) continue;
    running.sort(byAge);
    if (!surge) {
      for (const pod of running.slice(1)) plan.delete.push({ pod });
      continue;
    }
    let keptNew = false;
    let keptOld = false;
    for (const pod of running) {
      const updated = isPodUpdated(pod, hash, generation);
      if (updated && !keptNew) keptNew = true;
      else if (!updated && !keptOld) keptOld = true;
      else plan.delete.push({ pod });
    }
  }
  const existing = new Set(nodes.map((n) => n.metadata.name ?? ''));
  for (const [name, pods] of [...byNode].sort(([a], [b]) => a.localeCompare(b))) {
    if (existing.has(name)) continue;
    for (const pod of pods) if (!asMap(pod.spec).nodeName && !pod.metadata.deletionTimestamp) plan.delete.push({ pod });
  }
  return plan;
}

/** A node's updated and old pod, or undefined when it has more than one of either (findUpdatedPodsOnNode); pods being deleted are left out. */
function updatedAndOld(pods: KubeObject[], hash: string, generation: string): { updated?: KubeObject; old?: KubeObject } | undefined {
  const out: { updated?: KubeObject; old?: KubeObject } = {};
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue;
    if (isPodUpdated(pod, hash, generation)) {
      if (out.updated) return undefined;
      out.updated = pod;
    } else {
      if (out.old) return undefined;
      out.old = pod;
    }
  }
  return out;
}

/**
 * One step of a rolling update (rollingUpdate), for a DaemonSet whose strategy is RollingUpdate.
 * Without surge: old pods that are not available are deleted at once; available old pods are
 * deleted while fewer than maxUnavailable nodes are unavailable (a node with no pod, or with both
 * an old and an updated pod, or with an updated pod not yet available, counts as unavailable);
 * the manage step then creates the new pods. With surge: an updated pod is created next to an old
 * one that is not available (or the old one deleted, when the node should no longer run it),
 * and next to available old ones while fewer than maxSurge surged pods are not yet available;
 * an old pod is deleted once the updated one next to it is available.
 */
export function rollingUpdatePlan(ds: KubeObject, nodes: KubeObject[], byNode: Map<string, KubeObject[]>, hash: string, now: Date): Plan {
  const plan: Plan = { create: [], delete: [] };
  if (!isRollingUpdate(ds)) return plan;
  const minReady = num(asMap(ds.spec).minReadySeconds);
  const generation = templateGeneration(ds);
  const desired = nodes.filter((n) => nodeShouldRun(n, ds).shouldRun).length;
  const { maxUnavailable, maxSurge } = rollingLimits(ds, desired);
  const available = (p: KubeObject) => isAvailable(p, minReady, now);
  // Every node that should run the pod takes part, with or without a pod (updatedDesiredNodeCounts).
  const all = new Map(byNode);
  for (const n of nodes) if (!all.has(n.metadata.name ?? '') && nodeShouldRun(n, ds).shouldRun) all.set(n.metadata.name ?? '', []);
  const entries = [...all].sort(([a], [b]) => a.localeCompare(b));
  if (maxSurge === 0) {
    let unavailable = 0;
    const replace: KubeObject[] = [];
    const candidates: KubeObject[] = [];
    for (const [, pods] of entries) {
      const found = updatedAndOld(pods, hash, generation);
      if (!found || (!found.old && !found.updated) || (found.old && found.updated)) {
        unavailable++;
        continue;
      }
      if (found.updated) {
        if (!available(found.updated)) unavailable++;
        continue;
      }
      if (!available(found.old!)) replace.push(found.old!);
      else if (unavailable < maxUnavailable) candidates.push(found.old!);
    }
    const room = Math.min(Math.max(0, maxUnavailable - unavailable), candidates.length);
    plan.delete = [...replace, ...candidates.slice(0, room)].map((pod) => ({ pod }));
    return plan;
  }
  const nodeByName = new Map(nodes.map((n) => [n.metadata.name ?? '', n]));
  let surged = 0;
  const allowed: string[] = [];
  const candidates: string[] = [];
  for (const [name, pods] of entries) {
    const found = updatedAndOld(pods, hash, generation);
    if (!found) {
      surged++;
      continue;
    }
    if (!found.old) continue;
    if (!found.updated) {
      if (!available(found.old)) {
        const node = nodeByName.get(name);
        if (!node || !nodeShouldRun(node, ds).shouldRun) plan.delete.push({ pod: found.old });
        else allowed.push(name);
      } else if (surged < maxSurge) candidates.push(name);
      continue;
    }
    if (!available(found.updated)) surged++;
    else plan.delete.push({ pod: found.old });
  }
  const room = Math.min(Math.max(0, maxSurge - surged), candidates.length);
  plan.create = [...allowed, ...candidates.slice(0, room)];
  return plan;
}

/**
 * The status (updateDaemonSetStatus): over the nodes that should run the pod, how many do
 * (currentNumberScheduled) and, by each node's oldest pod, how many are ready, available and of
 * the current template; nodes that should not run it but do (numberMisscheduled); the generation
 * acted on. collisionCount and conditions are kept.
 */
export function daemonSetStatus(ds: KubeObject, nodes: KubeObject[], byNode: Map<string, KubeObject[]>, hash: string, now: Date): Obj {
  const minReady = num(asMap(ds.spec).minReadySeconds);
  const generation = templateGeneration(ds);
  let desired = 0;
  let current = 0;
  let misscheduled = 0;
  let ready = 0;
  let available = 0;
  let updated = 0;
  for (const node of nodes) {
    const pods = [...(byNode.get(node.metadata.name ?? '') ?? [])].sort(byAge);
    const { shouldRun } = nodeShouldRun(node, ds);
    if (!shouldRun) {
      if (pods.length > 0) misscheduled++;
      continue;
    }
    desired++;
    const pod = pods[0];
    if (!pod) continue;
    current++;
    if (podReady(pod)) {
      ready++;
      if (isAvailable(pod, minReady, now)) available++;
    }
    if (isPodUpdated(pod, hash, generation)) updated++;
  }
  const status: Obj = {
    ...asMap(ds.status),
    currentNumberScheduled: current,
    numberMisscheduled: misscheduled,
    desiredNumberScheduled: desired,
    numberReady: ready,
    observedGeneration: ds.metadata.generation ?? 0,
    updatedNumberScheduled: updated,
    numberAvailable: available,
    numberUnavailable: desired - available,
  };
  return status;
}

/** Whether `next` differs from the DaemonSet's status. */
export function statusDiffers(ds: KubeObject, next: Obj): boolean {
  return !isDeepStrictEqual(copy(asMap(ds.status)), copy(next));
}

/** The old revisions to delete (cleanupHistory): the oldest beyond revisionHistoryLimit (default 10) whose hash no pod carries. */
export function revisionsToDelete(ds: KubeObject, old: KubeObject[], pods: KubeObject[]): KubeObject[] {
  const limit = asMap(ds.spec).revisionHistoryLimit;
  let excess = old.length - (typeof limit === 'number' && limit >= 0 ? limit : 10);
  if (excess <= 0) return [];
  const live = new Set<unknown>(pods.map((p) => asMap(p.metadata.labels)[CONTROLLER_REVISION_HASH_LABEL]));
  const out: KubeObject[] = [];
  for (const r of sortRevisions(old)) {
    if (excess <= 0) break;
    if (live.has(asMap(r.metadata.labels)[CONTROLLER_REVISION_HASH_LABEL])) continue;
    out.push(r);
    excess--;
  }
  return out;
}

/** Of several revisions equal to the current template, the one kept (the highest numbered). */
export function revisionToKeep(current: KubeObject[]): KubeObject | undefined {
  return [...current].sort((a, b) => revisionNumber(b) - revisionNumber(a))[0];
}

/**
 * Back-off per key (client-go's flowcontrol.Backoff, without jitter): the first `next` sets the
 * initial pause, each later one doubles it up to `maxMs`; an entry not updated for twice the
 * maximum starts over. The DaemonSet controller keys it by DaemonSet and node, so a daemon pod
 * that keeps failing on a node is not deleted and recreated in a hot loop.
 */
export class FailedPodBackoff {
  private readonly entries = new Map<string, { pauseMs: number; lastUpdate: number }>();

  constructor(
    private readonly initialMs: number,
    private readonly maxMs: number,
  ) {}

  /** How long the key is still backed off at `now` since its last update (0: not). */
  remaining(key: string, now: number): number {
    const e = this.entries.get(key);
    if (!e) return 0;
    return Math.max(0, e.lastUpdate + e.pauseMs - now);
  }

  /** Records another failure of the key at `now`. */
  next(key: string, now: number): void {
    const e = this.entries.get(key);
    const pauseMs = !e || now - e.lastUpdate > 2 * this.maxMs ? this.initialMs : Math.min(e.pauseMs * 2, this.maxMs);
    this.entries.set(key, { pauseMs, lastUpdate: now });
  }

  /** Drops the entries that have expired (not updated for twice the maximum). */
  gc(now: number): void {
    for (const [k, e] of this.entries) if (now - e.lastUpdate > 2 * this.maxMs) this.entries.delete(k);
  }

  clear(): void {
    this.entries.clear();
  }
}
