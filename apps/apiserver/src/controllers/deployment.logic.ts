/**
 * The Deployment controller's computation (kube-controller-manager's deployment controller), on
 * plain objects: which ReplicaSet carries the deployment's current pod template, what a new one
 * looks like, how far each ReplicaSet is scaled in one step of a rollout, which annotations a
 * ReplicaSet carries, the status the deployment reports and which old ReplicaSets are pruned.
 * Reading and writing the objects is the caller's business; nothing here does I/O.
 *
 * - The new ReplicaSet is the oldest one whose pod template equals the deployment's once the
 *   pod-template-hash label is left out; every other ReplicaSet is old.
 * - A rolling update scales the new ReplicaSet up while the total stays within replicas + maxSurge,
 *   and old ones down (oldest first; unhealthy replicas first) while the available pods stay at
 *   least replicas - maxUnavailable. Recreate sizes the new one to replicas outright.
 * - Revisions: the new ReplicaSet gets one more than the highest old revision; a ReplicaSet taken
 *   back into use (a rollback) remembers the revisions it had in the revision-history annotation.
 * - Status: counts summed over the ReplicaSets, an Available condition and a Progressing
 *   condition whose lastUpdateTime moves whenever the rollout makes progress; a rollout that has
 *   not progressed for progressDeadlineSeconds is reported as timed out.
 * - Fields left out of a spec read as the API server defaults them: replicas 1, strategy
 *   RollingUpdate with maxSurge and maxUnavailable 25%, progressDeadlineSeconds 600,
 *   revisionHistoryLimit 10.
 */
import { canonicalJson, type KubeObject } from '@app/apimachinery';
import { asMap } from '../groups/core/core.helpers.js';
import { newControllerRef } from './disruption.logic.js';

export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
export const REVISION_HISTORY_ANNOTATION = 'deployment.kubernetes.io/revision-history';
export const DESIRED_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/desired-replicas';
export const MAX_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/max-replicas';
export const POD_TEMPLATE_HASH_LABEL = 'pod-template-hash';

/** Annotations of a deployment that are never copied onto its ReplicaSets. */
export const ANNOTATIONS_NOT_COPIED: ReadonlySet<string> = new Set([
  'kubectl.kubernetes.io/last-applied-configuration',
  REVISION_ANNOTATION,
  REVISION_HISTORY_ANNOTATION,
  DESIRED_REPLICAS_ANNOTATION,
  MAX_REPLICAS_ANNOTATION,
  'deprecated.deployment.rollback.to',
]);

/** Condition reasons the controller writes. */
export const REASONS = {
  minimumReplicasAvailable: 'MinimumReplicasAvailable',
  minimumReplicasUnavailable: 'MinimumReplicasUnavailable',
  newReplicaSetCreated: 'NewReplicaSetCreated',
  foundNewReplicaSet: 'FoundNewReplicaSet',
  replicaSetUpdated: 'ReplicaSetUpdated',
  newReplicaSetAvailable: 'NewReplicaSetAvailable',
  progressDeadlineExceeded: 'ProgressDeadlineExceeded',
  deploymentPaused: 'DeploymentPaused',
  deploymentResumed: 'DeploymentResumed',
} as const;

/** The value that turns off progressDeadlineSeconds and revisionHistoryLimit. */
const MAX_INT32 = 2147483647;
/** How long the revision-history annotation may grow, in characters. */
const MAX_REVISION_HISTORY_CHARS = 2000;
/** Characters a hash is spelled with (no vowels, so no words). */
const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

type Obj = Record<string, unknown>;
/** A deployment condition as written in the status. */
type Condition = { type: string; status: string; lastUpdateTime?: string; lastTransitionTime?: string; reason?: string; message?: string };

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const nameOf = (o: KubeObject | undefined): string => o?.metadata.name ?? '';

/** An object's annotations (those with string values), as a new map. */
function annotationsOf(o: KubeObject): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(asMap(o.metadata.annotations))) if (typeof v === 'string') out[k] = v;
  return out;
}

/** A time as the API writes it: RFC 3339, whole seconds, UTC. */
export const timestamp = (t: Date): string => t.toISOString().replace(/\.\d+Z$/, 'Z');

/** The deployment's desired replicas (1 when unset, as defaulted). */
export function desiredReplicas(deployment: KubeObject): number {
  const r = asMap(deployment.spec).replicas;
  return typeof r === 'number' ? r : 1;
}

/** A ReplicaSet's spec.replicas (1 when unset, as defaulted). */
const specReplicas = (rs: KubeObject): number => {
  const r = asMap(rs.spec).replicas;
  return typeof r === 'number' ? r : 1;
};
/** A ReplicaSet's status.availableReplicas. */
const availableOf = (rs: KubeObject): number => num(asMap(rs.status).availableReplicas);

/** Sum of a count over ReplicaSets. */
const sum = (list: KubeObject[], f: (rs: KubeObject) => number): number => list.reduce((n, rs) => n + f(rs), 0);

/** Whether the deployment rolls (anything but Recreate; RollingUpdate is the default). */
export function isRollingUpdate(deployment: KubeObject): boolean {
  return asMap(asMap(deployment.spec).strategy).type !== 'Recreate';
}

/** Whether two ReplicaSets are the same object (by uid when both have one, else by name). */
function sameObject(a: KubeObject, b: KubeObject): boolean {
  if (a === b) return true;
  if (a.metadata.uid && b.metadata.uid) return a.metadata.uid === b.metadata.uid;
  return nameOf(a) === nameOf(b) && a.metadata.namespace === b.metadata.namespace;
}

/** The ReplicaSets with the new one included (once). */
function withNew(allRSs: KubeObject[], newRS: KubeObject | undefined): KubeObject[] {
  return newRS && !allRSs.some((rs) => sameObject(rs, newRS)) ? [...allRSs, newRS] : allRSs;
}

/** Milliseconds of a creationTimestamp; an absent or unreadable one sorts first. */
function createdAt(o: KubeObject): number {
  const t = Date.parse(String(o.metadata.creationTimestamp ?? ''));
  return Number.isNaN(t) ? Number.NEGATIVE_INFINITY : t;
}

/** Orders ReplicaSets oldest first, by name when created at the same time. */
function byCreation(a: KubeObject, b: KubeObject): number {
  const d = createdAt(a) - createdAt(b);
  if (d !== 0 && !Number.isNaN(d)) return d;
  const [x, y] = [nameOf(a), nameOf(b)];
  return x < y ? -1 : x > y ? 1 : 0;
}

/** FNV-1a, 32 bits, over bytes, continuing from `h`. */
function fnv1a(bytes: Uint8Array, h = 0x811c9dc5): number {
  for (const b of bytes) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h >>> 0;
}

/** A string spelled with the safe alphabet only. */
export function safeEncode(s: string): string {
  return [...s].map((c) => SAFE_ALPHABET[c.charCodeAt(0) % SAFE_ALPHABET.length]).join('');
}

/** FNV-1a 32-bit over the canonical JSON of the template (plus the collision count as four little-endian bytes when given), its decimal spelled with the safe alphabet. */
export function podTemplateHash(template: unknown, collisionCount?: number): string {
  let h = fnv1a(new TextEncoder().encode(canonicalJson(template ?? {})));
  if (typeof collisionCount === 'number') {
    const bytes = new Uint8Array(4);
    new DataView(bytes.buffer).setUint32(0, collisionCount >>> 0, true);
    h = fnv1a(bytes, h);
  }
  return safeEncode(String(h));
}

/** An int-or-percent against a total: a number as is, "N%" rounded up or down. Throws for anything else. */
export function scaledIntOrPercent(v: unknown, total: number, roundUp: boolean): number {
  if (typeof v === 'number') return v;
  const m = typeof v === 'string' ? /^(-?\d+)%$/.exec(v) : null;
  if (!m) throw new Error(`invalid value for IntOrString: invalid value ${JSON.stringify(v)}`);
  const x = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(x) : Math.floor(x);
}

/** maxSurge / maxUnavailable resolved against replicas: surge rounds up, unavailable down; both 0 makes unavailable 1. Unset means 25%. */
export function resolveFenceposts(maxSurge: unknown, maxUnavailable: unknown, replicas: number): { surge: number; unavailable: number } {
  const surge = scaledIntOrPercent(maxSurge ?? '25%', replicas, true);
  let unavailable = scaledIntOrPercent(maxUnavailable ?? '25%', replicas, false);
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return { surge, unavailable };
}

/** The deployment's fenceposts (0/0 for Recreate or when the values cannot be read). */
function fencepostsOf(deployment: KubeObject): { surge: number; unavailable: number } {
  if (!isRollingUpdate(deployment)) return { surge: 0, unavailable: 0 };
  const ru = asMap(asMap(asMap(deployment.spec).strategy).rollingUpdate);
  try {
    return resolveFenceposts(ru.maxSurge, ru.maxUnavailable, desiredReplicas(deployment));
  } catch {
    return { surge: 0, unavailable: 0 };
  }
}

/** How many pods above replicas the deployment may run (0 for Recreate). */
export function maxSurgeOf(deployment: KubeObject): number {
  return fencepostsOf(deployment).surge;
}

/** How many of its replicas the deployment may have unavailable (0 for Recreate or no replicas; at most replicas). */
export function maxUnavailableOf(deployment: KubeObject): number {
  const replicas = desiredReplicas(deployment);
  if (!isRollingUpdate(deployment) || replicas === 0) return 0;
  return Math.min(fencepostsOf(deployment).unavailable, replicas);
}

/** A value with nulls, empty lists and empty objects left out, as Go's semantic equality lets nil and empty compare equal. */
function pruned(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(pruned);
  if (v === null || typeof v !== 'object') return v;
  const out: Obj = {};
  for (const [k, x] of Object.entries(v)) {
    const p = pruned(x);
    if (p === null || p === undefined || (Array.isArray(p) && p.length === 0) || (typeof p === 'object' && !Array.isArray(p) && Object.keys(p).length === 0))
      continue;
    out[k] = p;
  }
  return out;
}

/** A pod template without the pod-template-hash label. */
function withoutHashLabel(template: unknown): Obj {
  const t = asMap(template);
  const meta = asMap(t.metadata);
  const labels = { ...asMap(meta.labels) };
  delete labels[POD_TEMPLATE_HASH_LABEL];
  return { ...t, metadata: { ...meta, labels } };
}

/** Whether a ReplicaSet's pod template equals the deployment's, ignoring the pod-template-hash label. */
export function templateMatches(rsTemplate: unknown, deploymentTemplate: unknown): boolean {
  return canonicalJson(pruned(withoutHashLabel(rsTemplate))) === canonicalJson(pruned(withoutHashLabel(deploymentTemplate)));
}

/** The ReplicaSet whose template matches the deployment's (the oldest when several), or undefined. */
export function findNewReplicaSet(deployment: KubeObject, replicaSets: KubeObject[]): KubeObject | undefined {
  const template = asMap(deployment.spec).template;
  return [...replicaSets].sort(byCreation).find((rs) => templateMatches(asMap(rs.spec).template, template));
}

/** All ReplicaSets but the new one. */
export function oldReplicaSets(replicaSets: KubeObject[], newRS: KubeObject | undefined): KubeObject[] {
  return newRS ? replicaSets.filter((rs) => !sameObject(rs, newRS)) : [...replicaSets];
}

/** The revision annotation as a number; undefined when it is not a decimal integer, 0 when absent. */
function parsedRevision(o: KubeObject): number | undefined {
  const v = annotationsOf(o)[REVISION_ANNOTATION];
  if (v === undefined) return 0;
  return /^[+-]?\d+$/.test(v) ? Number(v) : undefined;
}

/** Revision of an object (0 when absent or unreadable). */
export function revisionOf(o: KubeObject): number {
  return parsedRevision(o) ?? 0;
}

/** The highest revision among ReplicaSets (0 for none). */
export function maxRevision(replicaSets: KubeObject[]): number {
  return replicaSets.reduce((m, rs) => Math.max(m, revisionOf(rs)), 0);
}

/** Annotations with the deployment's copyable ones added; whether any was added or changed. */
function copyDeploymentAnnotations(deployment: KubeObject, annotations: Record<string, string>): boolean {
  let changed = false;
  for (const [k, v] of Object.entries(annotationsOf(deployment))) {
    if (ANNOTATIONS_NOT_COPIED.has(k) || annotations[k] === v) continue;
    annotations[k] = v;
    changed = true;
  }
  return changed;
}

/** Sets the desired- and max-replicas annotations for the deployment; whether either changed. */
function setReplicasAnnotations(deployment: KubeObject, annotations: Record<string, string>): boolean {
  const desired = String(desiredReplicas(deployment));
  const max = String(desiredReplicas(deployment) + maxSurgeOf(deployment));
  const changed = annotations[DESIRED_REPLICAS_ANNOTATION] !== desired || annotations[MAX_REPLICAS_ANNOTATION] !== max;
  annotations[DESIRED_REPLICAS_ANNOTATION] = desired;
  annotations[MAX_REPLICAS_ANNOTATION] = max;
  return changed;
}

/** The revision-history value after `oldRevision` is appended, oldest entries dropped to stay within the length limit (undefined: cannot fit). */
function appendedHistory(history: string, oldRevision: string): string | undefined {
  if (history === '') return oldRevision;
  const entries = history.split(',');
  let total = history.length + oldRevision.length + 1;
  let start = 0;
  while (total > MAX_REVISION_HISTORY_CHARS && start < entries.length) total -= entries[start++]!.length + 1;
  return total <= MAX_REVISION_HISTORY_CHARS ? [...entries.slice(start), oldRevision].join(',') : undefined;
}

/** Raises the revision annotation to `newRevision`, recording a replaced one in the history; whether it changed. */
function setRevision(annotations: Record<string, string>, newRevision: number): boolean {
  const old = annotations[REVISION_ANNOTATION];
  if (old !== undefined && old !== '' && !/^[+-]?\d+$/.test(old)) return false;
  if (!(Number(old ?? 0) < newRevision)) return false;
  annotations[REVISION_ANNOTATION] = String(newRevision);
  if (old !== undefined) {
    const history = appendedHistory(annotations[REVISION_HISTORY_ANNOTATION] ?? '', old);
    if (history !== undefined) annotations[REVISION_HISTORY_ANNOTATION] = history;
  }
  return true;
}

/** The ReplicaSet to create for the deployment (not yet stored), named after the deployment and `hash`, sized `replicas`, at `revision`. */
export function newReplicaSetFor(deployment: KubeObject, hash: string, revision: number, replicas: number): KubeObject {
  const spec = asMap(deployment.spec);
  const template = structuredClone(asMap(spec.template));
  const templateMeta = asMap(template.metadata);
  const labels = { ...(asMap(templateMeta.labels) as Record<string, string>), [POD_TEMPLATE_HASH_LABEL]: hash };
  template.metadata = { ...templateMeta, labels };
  const selector = structuredClone(asMap(spec.selector));
  selector.matchLabels = { ...asMap(selector.matchLabels), [POD_TEMPLATE_HASH_LABEL]: hash };
  const annotations: Record<string, string> = {};
  copyDeploymentAnnotations(deployment, annotations);
  annotations[REVISION_ANNOTATION] = String(revision);
  setReplicasAnnotations(deployment, annotations);
  const name = nameOf(deployment);
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: `${name}-${hash}`,
      ...(deployment.metadata.namespace !== undefined ? { namespace: deployment.metadata.namespace } : {}),
      labels: { ...labels },
      annotations,
      ownerReferences: [newControllerRef(deployment, 'apps/v1', 'Deployment')],
    },
    spec: {
      replicas,
      ...(typeof spec.minReadySeconds === 'number' ? { minReadySeconds: spec.minReadySeconds } : {}),
      selector,
      template,
    },
  };
}

/**
 * The size the new ReplicaSet should have now. Rolling: grow by what the surge leaves room for
 * (replicas + maxSurge minus the spec.replicas of all ReplicaSets), never past replicas, and keep
 * the size when there is no room. Recreate: replicas. `allRSs` may or may not include `newRS`; an
 * absent `newRS` is one of size 0 about to be created.
 */
export function newRSReplicas(deployment: KubeObject, allRSs: KubeObject[], newRS: KubeObject | undefined): number {
  const replicas = desiredReplicas(deployment);
  if (!isRollingUpdate(deployment)) return replicas;
  const current = newRS ? specReplicas(newRS) : 0;
  const total = sum(withNew(allRSs, newRS), specReplicas);
  const maxTotal = replicas + maxSurgeOf(deployment);
  if (total >= maxTotal) return current;
  return current + Math.min(maxTotal - total, replicas - current);
}

/**
 * New sizes of old ReplicaSets for one step of the rollout, by name (only those that change).
 * Rolling: first replicas that are not available are dropped from the oldest ReplicaSets, within
 * what the budget (all replicas - (replicas - maxUnavailable) - unavailable replicas of the new
 * ReplicaSet) allows; then old ReplicaSets are scaled down, oldest first, by as many as the
 * available pods of the active old ReplicaSets and the new one exceed replicas - maxUnavailable.
 * Recreate: every old ReplicaSet goes to 0.
 */
export function oldReplicaSetScaleDowns(
  deployment: KubeObject,
  allRSs: KubeObject[],
  oldRSs: KubeObject[],
  newRS: KubeObject | undefined,
): Map<string, number> {
  const result = new Map<string, number>();
  const active = oldRSs.filter((rs) => specReplicas(rs) > 0).sort(byCreation);
  if (!isRollingUpdate(deployment)) {
    for (const rs of active) result.set(nameOf(rs), 0);
    return result;
  }
  if (active.length === 0) return result;
  const minAvailable = desiredReplicas(deployment) - maxUnavailableOf(deployment);
  const newUnavailable = newRS ? specReplicas(newRS) - availableOf(newRS) : 0;
  const maxScaledDown = sum(withNew(allRSs, newRS), specReplicas) - minAvailable - newUnavailable;
  if (maxScaledDown <= 0) return result;

  const sizes = new Map(active.map((rs) => [rs, specReplicas(rs)]));
  let cleaned = 0;
  for (const rs of active) {
    if (cleaned >= maxScaledDown) break;
    const size = sizes.get(rs)!;
    const unhealthy = size - availableOf(rs);
    if (size === 0 || unhealthy <= 0) continue;
    const by = Math.min(maxScaledDown - cleaned, unhealthy);
    sizes.set(rs, size - by);
    cleaned += by;
  }

  const available = sum(active, availableOf) + (newRS ? availableOf(newRS) : 0);
  const toScaleDown = available - minAvailable;
  let scaled = 0;
  for (const rs of active) {
    if (scaled >= toScaleDown) break;
    const size = sizes.get(rs)!;
    if (size === 0) continue;
    const by = Math.min(size, toScaleDown - scaled);
    sizes.set(rs, size - by);
    scaled += by;
  }

  for (const rs of active) if (sizes.get(rs) !== specReplicas(rs)) result.set(nameOf(rs), sizes.get(rs)!);
  return result;
}

/**
 * The annotations a ReplicaSet should carry now, or undefined when they need no change. For the
 * deployment's new ReplicaSet (`isNewRS`): the deployment's copyable annotations, the revision
 * raised to `newRevision` when lower (the replaced revision appended to the revision history, as
 * a rollback reuses an old ReplicaSet), and the desired/max replicas annotations. For an old one:
 * the desired/max replicas annotations only, which the controller writes when it scales it.
 */
export function replicaSetAnnotations(deployment: KubeObject, rs: KubeObject, newRevision: number, isNewRS: boolean): Record<string, string> | undefined {
  const annotations = annotationsOf(rs);
  let changed = false;
  if (isNewRS) {
    changed = copyDeploymentAnnotations(deployment, annotations);
    changed = setRevision(annotations, newRevision) || changed;
  }
  changed = setReplicasAnnotations(deployment, annotations) || changed;
  return changed ? annotations : undefined;
}

/** The condition of a type in a list. */
const conditionOf = (conditions: Condition[], type: string): Condition | undefined => conditions.find((c) => c.type === type);

/** A list without the conditions of a type. */
const withoutCondition = (conditions: Condition[], type: string): Condition[] => conditions.filter((c) => c.type !== type);

/** Sets a condition: nothing happens when one of its type has the same status and reason; else it replaces it (moved last), keeping lastTransitionTime when the status is the same. */
function setCondition(conditions: Condition[], cond: Condition): Condition[] {
  const cur = conditionOf(conditions, cond.type);
  if (cur && cur.status === cond.status && cur.reason === cond.reason) return conditions;
  const next = cur && cur.status === cond.status ? { ...cond, lastTransitionTime: cur.lastTransitionTime } : cond;
  return [...withoutCondition(conditions, cond.type), next];
}

/** A new condition stamped with `now`. */
function condition(type: string, status: string, reason: string, message: string, now: Date): Condition {
  const t = timestamp(now);
  return { type, status, lastUpdateTime: t, lastTransitionTime: t, reason, message };
}

/** progressDeadlineSeconds (600 when unset; undefined when turned off). */
function progressDeadline(deployment: KubeObject): number | undefined {
  const v = asMap(deployment.spec).progressDeadlineSeconds;
  const s = typeof v === 'number' ? v : 600;
  return s === MAX_INT32 ? undefined : s;
}

/** The counts of a status, for comparing two. */
type Counts = { replicas: number; updatedReplicas: number; readyReplicas: number; availableReplicas: number; observedGeneration: number };
const countsOf = (s: Obj): Counts => ({
  replicas: num(s.replicas),
  updatedReplicas: num(s.updatedReplicas),
  readyReplicas: num(s.readyReplicas),
  availableReplicas: num(s.availableReplicas),
  observedGeneration: num(s.observedGeneration),
});

/** Whether the rollout is complete: every replica updated and available, and the newest generation observed. */
export function deploymentComplete(deployment: KubeObject, status: Obj): boolean {
  const c = countsOf(status);
  const replicas = desiredReplicas(deployment);
  return (
    c.updatedReplicas === replicas && c.replicas === replicas && c.availableReplicas === replicas && c.observedGeneration >= num(deployment.metadata.generation)
  );
}

/** Whether the new status shows progress over the old: more updated, ready or available replicas, or fewer old ones. */
function madeProgress(old: Counts, next: Counts): boolean {
  return (
    next.updatedReplicas > old.updatedReplicas ||
    next.replicas - next.updatedReplicas < old.replicas - old.updatedReplicas ||
    next.readyReplicas > old.readyReplicas ||
    next.availableReplicas > old.availableReplicas
  );
}

/** Whether the Progressing condition says the rollout has gone without progress past the deadline. */
function timedOut(conditions: Condition[], deadlineSeconds: number, now: Date): boolean {
  const cond = conditionOf(conditions, 'Progressing');
  if (!cond || cond.reason === REASONS.newReplicaSetAvailable) return false;
  if (cond.reason === REASONS.progressDeadlineExceeded) return true;
  const from = Date.parse(cond.lastUpdateTime ?? '');
  return Number.isNaN(from) || from + deadlineSeconds * 1000 < now.getTime();
}

/** The ReplicaFailure condition to surface: the new ReplicaSet's, else the first old one's. */
function replicaFailure(allRSs: KubeObject[], newRS: KubeObject | undefined): Condition | undefined {
  const failureOf = (rs: KubeObject | undefined) =>
    (Array.isArray(asMap(rs?.status).conditions) ? (asMap(rs?.status).conditions as unknown[]) : []).map(asMap).find((c) => c.type === 'ReplicaFailure');
  const c = failureOf(newRS) ?? allRSs.map(failureOf).find((x) => x !== undefined);
  if (!c) return undefined;
  return {
    type: 'ReplicaFailure',
    status: String(c.status ?? ''),
    ...(typeof c.lastTransitionTime === 'string' ? { lastUpdateTime: c.lastTransitionTime, lastTransitionTime: c.lastTransitionTime } : {}),
    ...(c.reason ? { reason: String(c.reason) } : {}),
    ...(c.message ? { message: String(c.message) } : {}),
  };
}

/** The Progressing condition's message for the rollout, naming the new ReplicaSet (or the deployment when there is none). */
function progressMessage(deployment: KubeObject, newRS: KubeObject | undefined, what: string): string {
  return newRS ? `ReplicaSet ${JSON.stringify(nameOf(newRS))} ${what}` : `Deployment ${JSON.stringify(nameOf(deployment))} ${what}`;
}

/** The Progressing condition after pausing or resuming (unless a timeout is already reported). */
function pausedConditions(deployment: KubeObject, conditions: Condition[], now: Date): Condition[] {
  const cur = conditionOf(conditions, 'Progressing');
  if (cur?.reason === REASONS.progressDeadlineExceeded) return conditions;
  const pausedNoted = cur?.reason === REASONS.deploymentPaused;
  const paused = asMap(deployment.spec).paused === true;
  if (paused && !pausedNoted) return setCondition(conditions, condition('Progressing', 'Unknown', REASONS.deploymentPaused, 'Deployment is paused', now));
  if (!paused && pausedNoted) return setCondition(conditions, condition('Progressing', 'Unknown', REASONS.deploymentResumed, 'Deployment is resumed', now));
  return conditions;
}

/** The Progressing condition after the sync created (or first found) the new ReplicaSet. */
function eventConditions(conditions: Condition[], newRS: KubeObject | undefined, event: 'created' | 'found' | undefined, now: Date): Condition[] {
  const rs = JSON.stringify(nameOf(newRS));
  if (event === 'created')
    return setCondition(conditions, condition('Progressing', 'True', REASONS.newReplicaSetCreated, `Created new replica set ${rs}`, now));
  if (event === 'found' && !conditionOf(conditions, 'Progressing'))
    return setCondition(conditions, condition('Progressing', 'True', REASONS.foundNewReplicaSet, `Found new replica set ${rs}`, now));
  return conditions;
}

/** The Progressing condition after estimating the rollout's progress against the previous status. */
function progressConditions(
  deployment: KubeObject,
  before: Obj,
  beforeConds: Condition[],
  next: Obj,
  conditions: Condition[],
  newRS: KubeObject | undefined,
  deadline: number,
  now: Date,
): Condition[] {
  const cur = conditionOf(beforeConds, 'Progressing');
  if (num(next.replicas) === num(next.updatedReplicas) && cur?.reason === REASONS.newReplicaSetAvailable) return conditions;
  if (deploymentComplete(deployment, next)) {
    return setCondition(
      conditions,
      condition('Progressing', 'True', REASONS.newReplicaSetAvailable, progressMessage(deployment, newRS, 'has successfully progressed.'), now),
    );
  }
  if (madeProgress(countsOf(before), countsOf(next))) {
    const c = condition('Progressing', 'True', REASONS.replicaSetUpdated, progressMessage(deployment, newRS, 'is progressing.'), now);
    if (cur?.status === 'True') c.lastTransitionTime = cur.lastTransitionTime;
    return setCondition(cur ? withoutCondition(conditions, 'Progressing') : conditions, c);
  }
  if (timedOut(conditions, deadline, now)) {
    return setCondition(
      conditions,
      condition('Progressing', 'False', REASONS.progressDeadlineExceeded, progressMessage(deployment, newRS, 'has timed out progressing.'), now),
    );
  }
  return conditions;
}

/** Options of deploymentStatus. */
export interface StatusOptions {
  /**
   * Whether to estimate the rollout's progress (the Progressing condition, the timeout and
   * ReplicaFailure). Default: unless the deployment is paused or being deleted; a sync that only
   * rescales (a scaling event) passes false, as the controller does not estimate progress then.
   */
  estimateProgress?: boolean;
}

/**
 * The deployment's status after a sync. Counts: replicas, readyReplicas and availableReplicas
 * summed over the ReplicaSets' status, updatedReplicas the new ReplicaSet's status.replicas,
 * unavailableReplicas the ReplicaSets' spec.replicas minus the available ones (at least 0);
 * zero counts are left out, as the API writes them. Conditions: Available, Progressing (paused,
 * resumed, the new ReplicaSet created or found per `event`, progressing, complete, timed out) and
 * ReplicaFailure copied from a ReplicaSet. lastTransitionTime is kept while a condition's status
 * stays the same; times are `now` to the second.
 */
export function deploymentStatus(
  deployment: KubeObject,
  allRSs: KubeObject[],
  newRS: KubeObject | undefined,
  now: Date,
  event?: 'created' | 'found',
  options: StatusOptions = {},
): Record<string, unknown> {
  const rsList = withNew(allRSs, newRS);
  const prev = asMap(deployment.status);
  const deleting = !!deployment.metadata.deletionTimestamp;
  const deadline = progressDeadline(deployment);
  let conds: Condition[] = (Array.isArray(prev.conditions) ? (prev.conditions as unknown[]) : []).map((c) => ({ ...(asMap(c) as Condition) }));
  if (deadline !== undefined && !deleting) conds = eventConditions(pausedConditions(deployment, conds, now), newRS, event, now);
  const beforeConds = conds;

  const available = sum(rsList, availableOf);
  const counts: Obj = {
    observedGeneration: num(deployment.metadata.generation),
    replicas: sum(rsList, (rs) => num(asMap(rs.status).replicas)),
    updatedReplicas: newRS ? num(asMap(newRS.status).replicas) : 0,
    readyReplicas: sum(rsList, (rs) => num(asMap(rs.status).readyReplicas)),
    availableReplicas: available,
    unavailableReplicas: Math.max(0, sum(rsList, specReplicas) - available),
  };
  conds =
    available >= desiredReplicas(deployment) - maxUnavailableOf(deployment)
      ? setCondition(conds, condition('Available', 'True', REASONS.minimumReplicasAvailable, 'Deployment has minimum availability.', now))
      : setCondition(conds, condition('Available', 'False', REASONS.minimumReplicasUnavailable, 'Deployment does not have minimum availability.', now));

  const estimate = options.estimateProgress ?? (asMap(deployment.spec).paused !== true && !deleting);
  if (estimate) {
    if (deadline === undefined) conds = withoutCondition(conds, 'Progressing');
    else conds = progressConditions(deployment, prev, beforeConds, counts, conds, newRS, deadline, now);
    const failure = replicaFailure(rsList, newRS);
    conds = failure ? setCondition(conds, failure) : withoutCondition(conds, 'ReplicaFailure');
  }

  const status: Obj = {};
  for (const [k, v] of Object.entries(counts)) if (v !== 0) status[k] = v;
  if (conds.length) status.conditions = conds;
  if (prev.collisionCount !== undefined && prev.collisionCount !== null) status.collisionCount = prev.collisionCount;
  return status;
}

/** Orders ReplicaSets by revision, by creation when revisions are equal or unreadable. */
function byRevision(a: KubeObject, b: KubeObject): number {
  const [x, y] = [parsedRevision(a), parsedRevision(b)];
  if (x === undefined || y === undefined || x === y) return byCreation(a, b);
  return x - y;
}

/**
 * Old ReplicaSets to delete so that no more than spec.revisionHistoryLimit (10 when unset) are
 * kept: of the ReplicaSets not being deleted, the surplus lowest revisions, skipping any of them
 * that still has replicas (spec or status) or whose newest generation is not observed yet.
 */
export function replicaSetsToCleanUp(deployment: KubeObject, oldRSs: KubeObject[]): string[] {
  const limitValue = asMap(deployment.spec).revisionHistoryLimit;
  const limit = typeof limitValue === 'number' ? limitValue : 10;
  if (limit === MAX_INT32) return [];
  const alive = oldRSs.filter((rs) => !rs.metadata.deletionTimestamp);
  const surplus = alive.length - limit;
  if (surplus <= 0) return [];
  return [...alive]
    .sort(byRevision)
    .slice(0, surplus)
    .filter((rs) => {
      const status = asMap(rs.status);
      return num(status.replicas) === 0 && specReplicas(rs) === 0 && num(rs.metadata.generation) <= num(status.observedGeneration);
    })
    .map(nameOf);
}
