/**
 * The computation of the ReplicaSet and ReplicationController controllers
 * (kube-controller-manager's replicaset and replicationcontroller controllers share it): which
 * pods a controller owns, adopts and releases, which pods to remove when there are too many, the
 * pod it creates from its template, and the status it reports. Pure: the controller
 * (replicaset.controller.ts) does the reads and writes.
 */
import { isDeepStrictEqual } from 'node:util';
import { labelSelectorFromStruct, type KubeObject, type LabelSelectorStruct } from '@app/apimachinery';
import { asMap } from '../groups/core/core.helpers.js';
import { podReady } from '../groups/policy/poddisruptionbudget/pdb.status.js';
import { controllerOf, newControllerRef } from './disruption.logic.js';

/** At most this many pods are created or deleted in one sync (kube's burstReplicas). */
export const BURST_REPLICAS = 500;

/** The two kinds the controller runs for. */
export type ReplicatedKind = 'ReplicaSet' | 'ReplicationController';

const labelsOf = (o: KubeObject): Record<string, string> => asMap(o.metadata.labels) as Record<string, string>;
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

/** The desired replicas of a controller (spec.replicas, 1 when unset as the defaults make it). */
export function desiredReplicas(rs: KubeObject): number {
  const r = asMap(rs.spec).replicas;
  return typeof r === 'number' ? r : 1;
}

/**
 * Whether the controller's selector selects `pod`: a ReplicaSet's label selector (an empty one
 * selects nothing here, as kube's controller treats it), a ReplicationController's map (empty:
 * nothing).
 */
export function selects(kind: ReplicatedKind, rs: KubeObject, pod: KubeObject): boolean {
  const selector = asMap(rs.spec).selector;
  if (kind === 'ReplicationController') {
    const map = asMap(selector) as Record<string, string>;
    const entries = Object.entries(map);
    if (entries.length === 0) return false;
    const labels = labelsOf(pod);
    return entries.every(([k, v]) => labels[k] === v);
  }
  const struct = asMap(selector) as LabelSelectorStruct;
  if (Object.keys(asMap(struct.matchLabels)).length === 0 && !(Array.isArray(struct.matchExpressions) && struct.matchExpressions.length > 0)) return false;
  try {
    return labelSelectorFromStruct(struct).matches(labelsOf(pod));
  } catch {
    return false; // an invalid selector selects nothing
  }
}

/** A pod that counts: not finished (Succeeded or Failed) and not being deleted (FilterActivePods). */
export function isActive(pod: KubeObject): boolean {
  const phase = asMap(pod.status).phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !pod.metadata.deletionTimestamp;
}

/** What a controller does with the pods of its namespace (ClaimPods). */
export interface Claim {
  /** Pods it controls and keeps (its own, and those it adopts). */
  owned: KubeObject[];
  /** Orphans its selector selects: their controller reference is to be set to it. */
  adopt: KubeObject[];
  /** Its pods its selector no longer selects: their controller reference is to be removed. */
  release: KubeObject[];
}

/**
 * Sorts out the pods of the namespace for one controller: those whose controller reference names
 * it are kept while selected and released otherwise; selected orphans that are not being deleted
 * are adopted, unless the controller itself is being deleted.
 */
export function claimPods(kind: ReplicatedKind, rs: KubeObject, pods: KubeObject[]): Claim {
  const claim: Claim = { owned: [], adopt: [], release: [] };
  const uid = rs.metadata.uid;
  for (const pod of pods) {
    const ref = controllerOf(pod);
    const selected = selects(kind, rs, pod);
    if (ref) {
      if (ref.uid !== uid) continue;
      if (selected) claim.owned.push(pod);
      else if (!pod.metadata.deletionTimestamp) claim.release.push(pod);
      continue;
    }
    if (!selected || pod.metadata.deletionTimestamp || rs.metadata.deletionTimestamp) continue;
    claim.adopt.push(pod);
    claim.owned.push(pod);
  }
  return claim;
}

/** The owner reference a controller puts on its pods. */
export function controllerRef(kind: ReplicatedKind, rs: KubeObject): Record<string, unknown> {
  return newControllerRef(rs, kind === 'ReplicaSet' ? 'apps/v1' : 'v1', kind);
}

/** The pod to create from the controller's template (GetPodFromTemplate): named `<controller>-<random>` by the server. */
export function podFromTemplate(kind: ReplicatedKind, rs: KubeObject): KubeObject {
  const template = asMap(asMap(rs.spec).template);
  const meta = asMap(template.metadata);
  const metadata: KubeObject['metadata'] = {
    generateName: `${rs.metadata.name ?? ''}-`,
    namespace: rs.metadata.namespace,
    ownerReferences: [controllerRef(kind, rs)],
  };
  if (meta.labels !== undefined) metadata.labels = structuredCopy(meta.labels);
  if (meta.annotations !== undefined) metadata.annotations = structuredCopy(meta.annotations);
  if (meta.finalizers !== undefined) metadata.finalizers = structuredCopy(meta.finalizers);
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec: structuredCopy(template.spec ?? {}) };
}

const structuredCopy = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

const PHASE_RANK: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };
const timeOf = (v: unknown): number => (typeof v === 'string' ? Date.parse(v) || 0 : 0);

/**
 * The `n` pods to delete when there are too many, the least useful first (kube's ranking of
 * active pods): not yet on a node before on one; Pending, then Unknown, then Running; not ready
 * before ready; more restarts first; the newest first.
 */
export function podsToDelete(pods: KubeObject[], n: number): KubeObject[] {
  const key = (p: KubeObject) => {
    const spec = asMap(p.spec);
    const status = asMap(p.status);
    const restarts = (Array.isArray(status.containerStatuses) ? status.containerStatuses : []).reduce((s: number, c) => s + num(asMap(c).restartCount), 0);
    return {
      assigned: spec.nodeName ? 1 : 0,
      phase: PHASE_RANK[String(status.phase)] ?? 0,
      ready: podReady(p) ? 1 : 0,
      restarts,
      created: timeOf(p.metadata.creationTimestamp),
    };
  };
  const keyed = pods.map((p) => ({ p, k: key(p) }));
  keyed.sort(
    (a, b) =>
      a.k.assigned - b.k.assigned ||
      a.k.phase - b.k.phase ||
      a.k.ready - b.k.ready ||
      b.k.restarts - a.k.restarts ||
      b.k.created - a.k.created ||
      String(a.p.metadata.name).localeCompare(String(b.p.metadata.name)),
  );
  return keyed.slice(0, Math.max(0, n)).map((x) => x.p);
}

/** Whether a pod has been ready for at least `minReadySeconds` at `now` (IsPodAvailable). */
export function isAvailable(pod: KubeObject, minReadySeconds: number, now: Date): boolean {
  if (!podReady(pod)) return false;
  if (minReadySeconds <= 0) return true;
  const conditions = asMap(pod.status).conditions;
  const ready = (Array.isArray(conditions) ? conditions : []).map(asMap).find((c) => c.type === 'Ready');
  const since = timeOf(ready?.lastTransitionTime);
  return since > 0 && since + minReadySeconds * 1000 <= now.getTime();
}

const rfc3339 = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * The status the controller reports (calculateStatus): the active pods it owns, those carrying
 * every label of the template, the ready and the available ones, the generation it acted on, and
 * a ReplicaFailure condition while creating (FailedCreate) or deleting (FailedDelete) pods fails.
 */
export function replicaSetStatus(
  rs: KubeObject,
  owned: KubeObject[],
  now: Date,
  failure?: { reason: 'FailedCreate' | 'FailedDelete'; message: string },
): Record<string, unknown> {
  const spec = asMap(rs.spec);
  const templateLabels = asMap(asMap(asMap(spec.template).metadata).labels) as Record<string, string>;
  const minReady = num(spec.minReadySeconds);
  const active = owned.filter(isActive);
  const fully = active.filter((p) => {
    const labels = labelsOf(p);
    return Object.entries(templateLabels).every(([k, v]) => labels[k] === v);
  });
  const status: Record<string, unknown> = {
    replicas: active.length,
    fullyLabeledReplicas: fully.length,
    readyReplicas: active.filter(podReady).length,
    availableReplicas: active.filter((p) => isAvailable(p, minReady, now)).length,
    observedGeneration: rs.metadata.generation ?? 0,
  };
  const previous = (Array.isArray(asMap(rs.status).conditions) ? (asMap(rs.status).conditions as unknown[]) : []).map(asMap);
  const others = previous.filter((c) => c.type !== 'ReplicaFailure');
  const existing = previous.find((c) => c.type === 'ReplicaFailure');
  const conditions = failure ? [...others, existing ?? { type: 'ReplicaFailure', status: 'True', lastTransitionTime: rfc3339(now), ...failure }] : others;
  if (conditions.length > 0) status.conditions = conditions;
  return status;
}

/** Whether `next` differs from the controller's status (only then is it written). */
export function statusDiffers(rs: KubeObject, next: Record<string, unknown>): boolean {
  const current = asMap(rs.status);
  const norm = (s: Record<string, unknown>) => ({
    replicas: num(s.replicas),
    fullyLabeledReplicas: num(s.fullyLabeledReplicas),
    readyReplicas: num(s.readyReplicas),
    availableReplicas: num(s.availableReplicas),
    observedGeneration: num(s.observedGeneration),
    conditions: Array.isArray(s.conditions) ? s.conditions : [],
  });
  return !isDeepStrictEqual(norm(current), norm(next));
}

/** The sizes of the creation batches for `n` pods (slowStartBatch: 1, 2, 4, ... up to what is left). */
export function slowStartBatches(n: number): number[] {
  const out: number[] = [];
  let left = n;
  for (let size = 1; left > 0; size *= 2) {
    const b = Math.min(size, left);
    out.push(b);
    left -= b;
  }
  return out;
}
