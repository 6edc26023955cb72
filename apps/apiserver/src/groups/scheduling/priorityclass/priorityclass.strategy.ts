/**
 * PriorityClass behaviour (pkg/apis/scheduling/validation, pkg/registry/scheduling/priorityclass):
 * user-defined classes stay at or below HighestUserDefinablePriority, the "system-" prefix is
 * reserved for the built-in classes with their exact value and globalDefault, value and
 * preemptionPolicy cannot change, and the built-in classes cannot be deleted.
 */
import type { FieldError, KubeObject } from '@app/apimachinery';
import { Errors } from '@app/apimachinery';
import type { Strategy } from '@app/registry';

/** Highest value a user-defined class may have (scheduling.HighestUserDefinablePriority). */
export const HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000;
/** Base of the built-in classes' values (scheduling.SystemCriticalPriority). */
export const SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY;
/** Names starting with this are reserved for the built-in classes. */
export const SYSTEM_PRIORITY_CLASS_PREFIX = 'system-';

/** The built-in classes: created at first start, never deleted. */
export const SYSTEM_PRIORITY_CLASSES: readonly KubeObject[] = [
  {
    metadata: { name: 'system-node-critical' },
    value: SYSTEM_CRITICAL_PRIORITY + 1000,
    description: 'Used for system critical pods that must not be moved from their current node.',
  },
  {
    metadata: { name: 'system-cluster-critical' },
    value: SYSTEM_CRITICAL_PRIORITY,
    description: 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.',
  },
];

/** Why a system- name is not a known built-in class with these values, or undefined when it is. */
function systemClassError(name: string, value: unknown, globalDefault: boolean): string | undefined {
  const known = SYSTEM_PRIORITY_CLASSES.find((c) => c.metadata.name === name);
  if (!known) return `${name} is not a known system priority class`;
  if (value !== known.value) return `value of ${name} PriorityClass must be ${String(known.value)}`;
  if (globalDefault !== false) return `globalDefault of ${name} PriorityClass must be false`;
  return undefined;
}

/** ValidatePriorityClass: the system- prefix and the user value ceiling. */
export function validatePriorityClass(pc: KubeObject): FieldError[] {
  const name = pc.metadata.name ?? '';
  if (name.startsWith(SYSTEM_PRIORITY_CLASS_PREFIX)) {
    const e = systemClassError(name, pc.value, pc.globalDefault === true);
    if (e) {
      return [
        {
          type: 'FieldValueForbidden',
          field: 'metadata.name',
          detail: `priority class names with '${SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are reserved for system use only. error: ${e}`,
        },
      ];
    }
  } else if (typeof pc.value === 'number' && pc.value > HIGHEST_USER_DEFINABLE_PRIORITY) {
    return [{ type: 'FieldValueForbidden', field: 'value', detail: `maximum allowed value of a user defined priority is ${HIGHEST_USER_DEFINABLE_PRIORITY}` }];
  }
  return [];
}

/** The PriorityClass strategy. */
export const priorityClassStrategy: Strategy = {
  validate: validatePriorityClass,
  validateUpdate(pc, old) {
    const errs: FieldError[] = [];
    if (pc.value !== old.value) errs.push({ type: 'FieldValueForbidden', field: 'value', detail: 'may not be changed in an update.' });
    if ((pc.preemptionPolicy ?? null) !== (old.preemptionPolicy ?? null)) {
      errs.push({ type: 'FieldValueInvalid', field: 'preemptionPolicy', value: pc.preemptionPolicy, detail: 'field is immutable' });
    }
    return errs;
  },
  validateDelete(pc) {
    const name = pc.metadata.name ?? '';
    if (SYSTEM_PRIORITY_CLASSES.some((c) => c.metadata.name === name)) {
      throw Errors.forbidden({ group: 'scheduling.k8s.io', resource: 'priorityclasses' }, name, 'this is a system priority class and cannot be deleted');
    }
  },
};
