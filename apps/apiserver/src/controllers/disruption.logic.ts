/**
 * The disruption controller's computation (kube-controller-manager's disruption controller,
 * trySync): from a PodDisruptionBudget, the pods of its namespace and a way to find the scale
 * of a pod's controller, the status the budget should have. Pure but for the finder.
 *
 * - Pods counted: those the selector selects (null: none; {} every pod of the namespace).
 * - minAvailable as a number: expectedPods is the number of selected pods, desiredHealthy the
 *   number. maxUnavailable, or minAvailable as a percentage: expectedPods is the sum of the scales
 *   of the pods' controllers (each counted once; a pod without a controller is left out), and the
 *   percentage rounds up. A pod whose controller cannot be found makes the sync fail.
 * - currentHealthy: selected pods that are ready, not terminating and not in disruptedPods (an
 *   entry younger than two minutes; older ones, and those of pods gone or terminating, are
 *   dropped).
 * - disruptionsAllowed: currentHealthy - desiredHealthy, 0 when negative or when no pod is expected.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '@app/apimachinery';
import { asMap } from '../groups/core/core.helpers.js';
import {
  budgetSelects,
  DELETION_TIMEOUT_MS,
  DISRUPTION_ALLOWED,
  podReady,
  setCondition,
  withDisruptionAllowedCondition,
} from '../groups/policy/poddisruptionbudget/pdb.status.js';

/** An owner reference. */
export interface OwnerRef {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
}

/** A controller's uid and desired scale. */
export interface ControllerScale {
  uid: string;
  replicas: number;
}

/** Finds the controller a pod's controller reference names and its scale (undefined: not this finder's kind, or gone). */
export type ScaleFinder = (ref: OwnerRef, ns: string) => Promise<ControllerScale | undefined>;

/**
 * The outcome of one sync: the status to write, or the reason it could not be computed. With a
 * status: the selected pods without a controller that a scale-based count left out
 * (`unmanaged`), and the pods of disruptedPods that were not deleted in time (`notDeleted`).
 */
export type SyncResult = { status: Record<string, unknown>; recheckAt?: number; unmanaged?: string[]; notDeleted?: KubeObject[] } | { error: string };

const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

/** metav1.GetControllerOf. */
export function controllerOf(o: KubeObject): OwnerRef | undefined {
  const refs = o.metadata.ownerReferences;
  return Array.isArray(refs) ? (refs as OwnerRef[]).find((r) => r.controller === true) : undefined;
}

/** An owner reference naming the controller (a type alias, so it is also a plain record). */
export type ControllerRef = { apiVersion: string; kind: string; name: string; uid: string; controller: true; blockOwnerDeletion: true };

/** The reference a controller puts on what it creates and owns (metav1.NewControllerRef). */
export function newControllerRef(owner: KubeObject, apiVersion: string, kind: string): ControllerRef {
  return { apiVersion, kind, name: owner.metadata.name ?? '', uid: owner.metadata.uid ?? '', controller: true, blockOwnerDeletion: true };
}

/** The group of an apiVersion. */
export const groupOf = (apiVersion: string): string => (apiVersion.includes('/') ? apiVersion.split('/')[0]! : '');

/** intstr.GetScaledValueFromIntOrPercent rounding up. */
export function scaledValue(v: unknown, total: number): number {
  if (typeof v === 'number') return v;
  const m = typeof v === 'string' ? /^(\d+)%$/.exec(v) : null;
  if (!m) throw new Error(`invalid value for IntOrString: invalid value ${JSON.stringify(v)}`);
  return Math.ceil((Number(m[1]) * total) / 100);
}

async function expectedScale(pods: KubeObject[], ns: string, finders: ScaleFinder[], unmanaged: string[]): Promise<number> {
  const scales = new Map<string, number>();
  for (const pod of pods) {
    const ref = controllerOf(pod);
    if (!ref) unmanaged.push(pod.metadata.name ?? '');
    if (!ref || scales.has(ref.uid)) continue;
    let found: ControllerScale | undefined;
    for (const find of finders) {
      found = await find(ref, ns);
      if (found) break;
    }
    if (!found) throw new Error(`found no controllers for pod ${JSON.stringify(pod.metadata.name ?? '')}`);
    scales.set(found.uid, found.replicas);
  }
  let total = 0;
  for (const n of scales.values()) total += n;
  return total;
}

/** The status a budget should have now. */
export async function computeBudgetStatus(pdb: KubeObject, namespacePods: KubeObject[], finders: ScaleFinder[], now: Date): Promise<SyncResult> {
  const spec = asMap(pdb.spec);
  const pods = namespacePods.filter((p) => budgetSelects(pdb, p));
  let expected = 0;
  let desired = 0;
  const unmanaged: string[] = [];
  try {
    if (spec.maxUnavailable !== undefined && spec.maxUnavailable !== null) {
      expected = await expectedScale(pods, pdb.metadata.namespace ?? '', finders, unmanaged);
      desired = Math.max(0, expected - scaledValue(spec.maxUnavailable, expected));
    } else if (typeof spec.minAvailable === 'number') {
      desired = spec.minAvailable;
      expected = pods.length;
    } else if (typeof spec.minAvailable === 'string') {
      expected = await expectedScale(pods, pdb.metadata.namespace ?? '', finders, unmanaged);
      desired = scaledValue(spec.minAvailable, expected);
    }
  } catch (e) {
    return { error: (e as Error).message };
  }

  const t = now.getTime();
  const recorded = asMap(asMap(pdb.status).disruptedPods);
  const disrupted: Record<string, string> = {};
  let recheckAt: number | undefined;
  const notDeleted: KubeObject[] = [];
  for (const pod of pods) {
    const name = pod.metadata.name ?? '';
    const at = recorded[name];
    if (pod.metadata.deletionTimestamp || typeof at !== 'string') continue;
    const expires = Date.parse(at) + DELETION_TIMEOUT_MS;
    if (!(expires > t)) {
      notDeleted.push(pod); // expected to be deleted by now but was not: it counts again
      continue;
    }
    disrupted[name] = at;
    recheckAt = recheckAt === undefined ? expires : Math.min(recheckAt, expires);
  }
  const healthy = pods.filter((p) => !p.metadata.deletionTimestamp && disrupted[p.metadata.name ?? ''] === undefined && podReady(p)).length;
  const allowed = expected <= 0 ? 0 : Math.max(0, healthy - desired);
  const status = withDisruptionAllowedCondition(
    {
      ...asMap(pdb.status),
      currentHealthy: healthy,
      desiredHealthy: desired,
      expectedPods: expected,
      disruptionsAllowed: allowed,
      disruptedPods: disrupted,
      observedGeneration: num(pdb.metadata.generation),
    },
    now,
  );
  if (Object.keys(disrupted).length === 0) delete status.disruptedPods; // omitted when empty, as Kubernetes writes it
  return {
    status,
    ...(recheckAt === undefined ? {} : { recheckAt }),
    ...(unmanaged.length ? { unmanaged } : {}),
    ...(notDeleted.length ? { notDeleted } : {}),
  };
}

/** failSafe: no disruption allowed, and the SyncFailed condition with the reason (observedGeneration unchanged). */
export function failSafeStatus(pdb: KubeObject, message: string, now: Date): Record<string, unknown> {
  const status: Record<string, unknown> = { ...asMap(pdb.status), disruptionsAllowed: 0 };
  return {
    ...status,
    conditions: setCondition(
      status.conditions,
      { type: DISRUPTION_ALLOWED, status: 'False', reason: 'SyncFailed', message, observedGeneration: num(status.observedGeneration) },
      now,
    ),
  };
}

/** Whether writing `next` would change the budget's status (updatePdbStatus writes nothing otherwise). */
export function statusChanged(pdb: KubeObject, next: Record<string, unknown>): boolean {
  const cur = asMap(pdb.status);
  const norm = (s: Record<string, unknown>) => ({ ...s, disruptedPods: asMap(s.disruptedPods) });
  return !isDeepStrictEqual(norm(cur), norm(next));
}

/** `%v` of a *metav1.LabelSelector (its generated String()), as the UnmanagedPods event prints it. */
export function labelSelectorString(selector: unknown): string {
  if (selector === null || selector === undefined) return '<nil>';
  const sel = asMap(selector);
  const labels = asMap(sel.matchLabels);
  const keys = Object.keys(labels).sort();
  const exprs = Array.isArray(sel.matchExpressions) ? (sel.matchExpressions as unknown[]).map(asMap) : [];
  const req = (r: Record<string, unknown>) =>
    `LabelSelectorRequirement{Key:${String(r.key ?? '')},Operator:${String(r.operator ?? '')},Values:[${(Array.isArray(r.values) ? (r.values as unknown[]) : []).map(String).join(' ')}],}`;
  return (
    `&LabelSelector{MatchLabels:map[string]string{${keys.map((k) => `${k}: ${String(labels[k])},`).join('')}},` +
    `MatchExpressions:[]LabelSelectorRequirement{${exprs.map((r) => `${req(r)},`).join('')}},}`
  );
}
