/**
 * What the eviction subresource and the disruption controller share about budgets and pods:
 * which budgets cover a pod, whether a pod is ready, and the DisruptionAllowed condition
 * (component-helpers' poddisruptionbudget helpers and apimachinery's SetStatusCondition). Pure.
 */
import { labelSelectorFromStruct, managedFieldsTime, type KubeObject, type LabelSelectorStruct } from '@app/apimachinery';
import { asMap } from '../../core/core.helpers.js';

/** Type of the condition the disruption controller sets. */
export const DISRUPTION_ALLOWED = 'DisruptionAllowed';
/** How long an eviction granted but not followed by a deletion keeps its pod out of the count. */
export const DELETION_TIMEOUT_MS = 2 * 60_000;
/** Most entries of status.disruptedPods before evictions are refused. */
export const MAX_DISRUPTED_PODS = 2000;

/** A metav1.Condition. */
export interface Condition {
  type: string;
  status: string;
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

/** metav1.Time as Kubernetes writes it: RFC 3339 in seconds. */
export const rfc3339 = managedFieldsTime;

/**
 * Whether the budget's selector selects the pod (same namespace): a null selector selects none,
 * an empty one every pod, an invalid one none (policy/v1 semantics).
 */
export function budgetSelects(pdb: KubeObject, pod: KubeObject): boolean {
  if ((pdb.metadata.namespace ?? '') !== (pod.metadata.namespace ?? '')) return false;
  try {
    const sel = labelSelectorFromStruct(asMap(pdb.spec).selector as LabelSelectorStruct | null | undefined);
    return sel.matches((pod.metadata.labels ?? {}) as Record<string, string>);
  } catch {
    return false;
  }
}

/** IsPodReady: the pod's Ready condition is True. */
export function podReady(pod: KubeObject): boolean {
  const conditions = asMap(pod.status).conditions;
  return Array.isArray(conditions) && conditions.some((c) => asMap(c).type === 'Ready' && asMap(c).status === 'True');
}

/**
 * SetStatusCondition: replaces the condition of the same type (its lastTransitionTime kept unless
 * the status changes) or appends it. Returns the new list; `conditions` is not changed.
 */
export function setCondition(conditions: unknown, next: Omit<Condition, 'lastTransitionTime'>, now: Date): Condition[] {
  const list = (Array.isArray(conditions) ? conditions : []).map((c) => ({ ...(c as Condition) }));
  const i = list.findIndex((c) => c.type === next.type);
  if (i < 0) return [...list, { ...next, lastTransitionTime: rfc3339(now) }];
  const old = list[i]!;
  list[i] = { ...old, ...next, lastTransitionTime: old.status === next.status && old.lastTransitionTime ? old.lastTransitionTime : rfc3339(now) };
  return list;
}

/** UpdateDisruptionAllowedCondition: True (SufficientPods) while disruptions are allowed, else False (InsufficientPods). */
export function withDisruptionAllowedCondition(status: Record<string, unknown>, now: Date): Record<string, unknown> {
  const allowed = typeof status.disruptionsAllowed === 'number' && status.disruptionsAllowed > 0;
  return {
    ...status,
    conditions: setCondition(
      status.conditions,
      {
        type: DISRUPTION_ALLOWED,
        status: allowed ? 'True' : 'False',
        reason: allowed ? 'SufficientPods' : 'InsufficientPods',
        message: '',
        observedGeneration: typeof status.observedGeneration === 'number' ? status.observedGeneration : 0,
      },
      now,
    ),
  };
}
