/**
 * The pure parts of the StatefulSet controller (kube-controller-manager's statefulset
 * controller): the identity of each ordinal's pod and claims, which revision a new pod gets,
 * what one sync step does under OrderedReady or Parallel management and a RollingUpdate, and
 * the status.
 */
import type { KubeObject } from '@app/apimachinery';
import { asMap } from '../groups/core/core.helpers.js';
import { podReady } from '../groups/policy/poddisruptionbudget/pdb.status.js';
import { newControllerRef } from './disruption.logic.js';
import { CONTROLLER_REVISION_HASH_LABEL } from './history.logic.js';
import { isAvailable } from './replicaset.logic.js';

export const POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';
export const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';

type Obj = Record<string, unknown>;
const copy = <T>(v: T): T => JSON.parse(JSON.stringify(v ?? null)) as T;

export function replicasOf(set: KubeObject): number {
  const r = asMap(set.spec).replicas;
  return typeof r === 'number' ? r : 1;
}

/** The first ordinal (spec.ordinals.start, 0 by default). */
export function startOrdinal(set: KubeObject): number {
  const s = asMap(asMap(set.spec).ordinals).start;
  return typeof s === 'number' ? s : 0;
}

/** The ordinal of a pod named `<set>-<n>`, or undefined when the name is not of that form. */
export function ordinalOf(set: KubeObject, pod: KubeObject): number | undefined {
  const prefix = `${set.metadata.name}-`;
  const name = pod.metadata.name ?? '';
  if (!name.startsWith(prefix)) return undefined;
  const rest = name.slice(prefix.length);
  return /^(0|[1-9][0-9]*)$/.test(rest) ? Number(rest) : undefined;
}

export const isOrderedReady = (set: KubeObject): boolean => asMap(set.spec).podManagementPolicy !== 'Parallel';
export const isOnDelete = (set: KubeObject): boolean => asMap(asMap(set.spec).updateStrategy).type === 'OnDelete';
const minReadySeconds = (set: KubeObject): number => {
  const m = asMap(set.spec).minReadySeconds;
  return typeof m === 'number' ? m : 0;
};

/** The partition of a RollingUpdate: ordinals below it keep the current revision. */
export function partitionOf(set: KubeObject): number {
  const p = asMap(asMap(asMap(set.spec).updateStrategy).rollingUpdate).partition;
  return typeof p === 'number' ? p : 0;
}

/** The claim names of a pod: `<template>-<set>-<ordinal>` for each volumeClaimTemplate. */
export function claimsOf(set: KubeObject, ordinal: number): KubeObject[] {
  const templates = asMap(set.spec).volumeClaimTemplates;
  const selector = asMap(asMap(asMap(set.spec).selector).matchLabels) as Record<string, string>;
  return (Array.isArray(templates) ? templates : []).map((t) => {
    const tpl = asMap(t);
    const meta = asMap(tpl.metadata);
    return {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name: `${String(meta.name ?? '')}-${set.metadata.name}-${ordinal}`,
        namespace: set.metadata.namespace,
        labels: { ...(asMap(meta.labels) as Record<string, string>), ...selector },
        ...(meta.annotations ? { annotations: copy(meta.annotations) as Record<string, string> } : {}),
      },
      spec: copy(asMap(tpl.spec)),
    };
  });
}

/**
 * The pod of one ordinal from a template (newVersionedStatefulSetPod): named `<set>-<ordinal>`,
 * owned by the set, with the revision, pod-name and pod-index labels, hostname and subdomain, and
 * a volume for each claim template (replacing a volume of the same name).
 */
export function podFor(set: KubeObject, template: Obj, revisionName: string, ordinal: number): KubeObject {
  const meta = asMap(template.metadata);
  const name = `${set.metadata.name}-${ordinal}`;
  const spec = copy(asMap(template.spec));
  const claims = asMap(set.spec).volumeClaimTemplates;
  const claimVolumes = (Array.isArray(claims) ? claims : []).map((c) => {
    const claimName = String(asMap(asMap(c).metadata).name ?? '');
    return { name: claimName, persistentVolumeClaim: { claimName: `${claimName}-${set.metadata.name}-${ordinal}` } };
  });
  if (claimVolumes.length) {
    const names = new Set(claimVolumes.map((v) => v.name));
    const others = (Array.isArray(spec.volumes) ? spec.volumes : []).filter((v) => !names.has(String(asMap(v).name)));
    spec.volumes = [...others, ...claimVolumes];
  }
  spec.hostname = name;
  const serviceName = asMap(set.spec).serviceName;
  if (typeof serviceName === 'string' && serviceName !== '') spec.subdomain = serviceName;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: set.metadata.namespace,
      labels: {
        ...(copy(meta.labels ?? {}) as Record<string, string>),
        [CONTROLLER_REVISION_HASH_LABEL]: revisionName,
        [POD_NAME_LABEL]: name,
        [POD_INDEX_LABEL]: String(ordinal),
      },
      ...(meta.annotations ? { annotations: copy(meta.annotations) as Record<string, string> } : {}),
      ...(meta.finalizers ? { finalizers: copy(meta.finalizers) as string[] } : {}),
      ownerReferences: [newControllerRef(set, 'apps/v1', 'StatefulSet')],
    },
    spec,
  };
}

/**
 * A claim's ownerReferences under the set's persistentVolumeClaimRetentionPolicy
 * (updateClaimOwnerRefForSetAndPod): whenDeleted Delete makes the set its owner (the claim goes
 * with the set), whenScaled Delete makes a condemned ordinal's pod its only owner of the two (the
 * claim goes with the pod); references to the set or the pod the policy does not ask for are removed, others
 * kept. Undefined when nothing changes.
 */
export function claimOwnerRefs(set: KubeObject, claim: KubeObject, pod: KubeObject | undefined, condemned: boolean): Obj[] | undefined {
  const policy = asMap(asMap(set.spec).persistentVolumeClaimRetentionPolicy);
  const refs = (Array.isArray(claim.metadata.ownerReferences) ? claim.metadata.ownerReferences : []).map((r) => asMap(r));
  const setUid = set.metadata.uid;
  const podUid = pod?.metadata.uid;
  const next = refs.filter((r) => r.uid !== setUid && (podUid === undefined || r.uid !== podUid));
  const scaledAway = policy.whenScaled === 'Delete' && condemned && pod !== undefined;
  // A claim scaled away goes with its pod alone, whatever whenDeleted says.
  if (policy.whenDeleted === 'Delete' && !scaledAway) next.push({ apiVersion: 'apps/v1', kind: 'StatefulSet', name: set.metadata.name, uid: setUid });
  if (scaledAway) next.push({ apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: podUid });
  const key = (rs: Obj[]) => JSON.stringify([...rs].map((r) => `${String(r.uid)}:${String(r.kind)}`).sort());
  return key(next) === key(refs) ? undefined : next;
}

/**
 * Whether an ordinal's new pod gets the current revision (else the update revision): under
 * RollingUpdate, the ordinals below the partition (counted from the start ordinal); under
 * OnDelete, none (a pod deleted comes back at the update revision).
 */
export function usesCurrentRevision(set: KubeObject, ordinal: number): boolean {
  return !isOnDelete(set) && ordinal < startOrdinal(set) + partitionOf(set);
}

export const revisionOfPod = (pod: KubeObject): string => (pod.metadata.labels as Record<string, string> | undefined)?.[CONTROLLER_REVISION_HASH_LABEL] ?? '';
const phase = (pod: KubeObject): string => String(asMap(pod.status).phase ?? '');
export const isFailedOrSucceeded = (pod: KubeObject): boolean => phase(pod) === 'Failed' || phase(pod) === 'Succeeded';
/** Running and Ready, not being deleted (isHealthy). */
export const isHealthy = (pod: KubeObject): boolean => phase(pod) === 'Running' && podReady(pod) && !pod.metadata.deletionTimestamp;

/** One thing a sync step does. */
export type Action =
  | { type: 'create'; ordinal: number; revision: 'current' | 'update' }
  | { type: 'delete'; pod: KubeObject; reason: 'failed' | 'condemned' | 'update' }
  | { type: 'wait'; reason: string };

/**
 * What one sync does with the set's pods (updateStatefulSet, kept to what it decides): keyed by
 * ordinal, the pods in range [start, start+replicas) and the condemned ones beyond. Under
 * OrderedReady, actions stop at the first pod that is not yet healthy; Parallel takes them all.
 */
export function plan(set: KubeObject, pods: KubeObject[], updateRevision: string, now: Date): Action[] {
  const start = startOrdinal(set);
  const end = start + replicasOf(set);
  const ordered = isOrderedReady(set);
  const byOrdinal = new Map<number, KubeObject>();
  for (const p of pods) {
    const n = ordinalOf(set, p);
    if (n !== undefined) byOrdinal.set(n, p);
  }
  const actions: Action[] = [];
  // Failed or succeeded pods are deleted, to be created again.
  for (const p of byOrdinal.values()) if (isFailedOrSucceeded(p) && !p.metadata.deletionTimestamp) actions.push({ type: 'delete', pod: p, reason: 'failed' });
  if (actions.length && ordered) return actions;

  // Pods in range: created when missing, in order under OrderedReady.
  for (let ord = start; ord < end; ord++) {
    const p = byOrdinal.get(ord);
    if (!p || (isFailedOrSucceeded(p) && !ordered)) {
      if (!p) actions.push({ type: 'create', ordinal: ord, revision: usesCurrentRevision(set, ord) ? 'current' : 'update' });
      if (ordered) return actions;
      continue;
    }
    if (ordered && p.metadata.deletionTimestamp) return [...actions, { type: 'wait', reason: `pod ${p.metadata.name} is terminating` }];
    if (ordered && !isAvailable(p, minReadySeconds(set), now)) return [...actions, { type: 'wait', reason: `pod ${p.metadata.name} is not available` }];
  }

  // Condemned pods (beyond the range, or below the start): the highest first, one at a time in order.
  const condemned = [...byOrdinal.entries()]
    .filter(([n]) => n < start || n >= end)
    .sort((a, b) => b[0] - a[0])
    .map(([, p]) => p);
  for (const p of condemned) {
    if (p.metadata.deletionTimestamp) {
      if (ordered) return [...actions, { type: 'wait', reason: `pod ${p.metadata.name} is terminating` }];
      continue;
    }
    actions.push({ type: 'delete', pod: p, reason: 'condemned' });
    if (ordered) return actions;
  }
  if (isOnDelete(set)) return actions;

  // RollingUpdate: from the highest ordinal down to the partition, the first pod of another
  // revision is deleted (to come back at the update revision); a pod missing or not healthy
  // on the way stops it.
  for (let ord = end - 1; ord >= start + partitionOf(set); ord--) {
    const p = byOrdinal.get(ord);
    if (p && revisionOfPod(p) !== updateRevision && !p.metadata.deletionTimestamp) {
      actions.push({ type: 'delete', pod: p, reason: 'update' });
      break;
    }
    if (!p || !isHealthy(p)) break;
  }
  return actions;
}

/** Whether the status computed differs from the stored one in any field it sets (counts absent in either read as 0). */
export function statusChanged(set: KubeObject, next: Obj): boolean {
  const current = asMap(set.status);
  return Object.entries(next).some(([k, v]) => {
    const cur = current[k];
    if (typeof v === 'number') return (typeof cur === 'number' ? cur : 0) !== v;
    return cur !== v;
  });
}

/**
 * The status (computeReplicaStatus and the revision bookkeeping): pods created, ready, available,
 * at the current and at the update revision; under RollingUpdate, once every pod is at the update
 * revision and ready, the update revision becomes the current one.
 */
export function statefulSetStatus(
  set: KubeObject,
  pods: KubeObject[],
  currentRevision: string,
  updateRevision: string,
  collisionCount: number | undefined,
  now: Date,
): Obj {
  const live = pods.filter((p) => !p.metadata.deletionTimestamp);
  const ready = live.filter((p) => phase(p) === 'Running' && podReady(p));
  const status: Obj = {
    observedGeneration: set.metadata.generation,
    replicas: live.length,
    readyReplicas: ready.length,
    currentReplicas: live.filter((p) => revisionOfPod(p) === currentRevision).length,
    updatedReplicas: live.filter((p) => revisionOfPod(p) === updateRevision).length,
    availableReplicas: live.filter((p) => phase(p) === 'Running' && isAvailable(p, minReadySeconds(set), now)).length,
    currentRevision,
    updateRevision,
  };
  if (collisionCount !== undefined) status.collisionCount = collisionCount;
  // completeRollingUpdate
  if (!isOnDelete(set) && status.updatedReplicas === status.replicas && status.readyReplicas === status.replicas) {
    status.currentRevision = updateRevision;
    status.currentReplicas = status.updatedReplicas;
  }
  return status;
}
