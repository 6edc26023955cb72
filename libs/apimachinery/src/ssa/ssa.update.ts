/**
 * Field ownership of non-apply writes (create, update, JSON/merge/strategic patch), after SMD's
 * merge.Updater.Update as wrapped by the apiserver's managedFieldsUpdater (conventions
 * "Server-side apply" rules 4, 5 and 8):
 * - the write takes ownership of every field it adds or changes (all fields on create) and never
 *   conflicts; other managers lose those fields, and everyone loses the fields it removes;
 * - the manager's existing Update entry (same manager, apiVersion, subresource) is extended, and
 *   its time stamped, only when the write took some field;
 * - the managedFields the request carries decide the starting point: `[{}]` resets them (rule 8:
 *   the reset happens first, then the writer owns the fields the same request changes), a
 *   decodable non-empty list replaces the stored one (Kubernetes lets clients write
 *   managedFields directly), and anything else (absent, `[]`, undecodable) keeps the stored
 *   ones. Requests to a subresource always keep the stored ones.
 */
import type { JSONSchemaProps } from '../schema/schema.types.js';
import type { FieldSet } from './ssa.fieldset.js';
import {
  capUpdateManagers,
  decodeManagedFields,
  decodeManagedFieldsLenient,
  encodeManagedFields,
  managedFieldsTime,
  isResetManagedFields,
  type ManagedFieldsEntry,
  type ManagedFieldsMap,
  managerIdentifier,
  STRIPPED_FIELDS,
} from './ssa.managed-fields.js';
import { withoutManagedFields } from './ssa.apply.js';
import { compareObjects } from './ssa.typed.js';

type Obj = Record<string, unknown>;

/** Input of `trackUpdate`. */
export interface UpdateInput {
  /** The stored object, or undefined on create. */
  old?: Obj;
  /** The object about to be stored (after patching/defaulting), with the managedFields the request sent, if any. */
  new: Obj;
  /** The field manager (see `fieldManagerFor`). */
  manager: string;
  /** The kind's schema. */
  schema: JSONSchemaProps;
  /** Group/version of the request, e.g. `apps/v1`. */
  apiVersion: string;
  /** Time of the request. */
  now: Date;
  /** Subresource of the request (`status`, `scale`); empty or undefined for the main resource. */
  subresource?: string;
  /** Fields this endpoint resets (see ApplyInput.ignoredFields): never owned by this write. */
  ignoredFields?: FieldSet;
}

function managedFieldsOf(o: Obj | undefined): unknown {
  const m = o?.metadata;
  return m !== null && typeof m === 'object' && !Array.isArray(m) ? (m as Obj).managedFields : undefined;
}

function startingPoint(input: UpdateInput): ManagedFieldsMap {
  const requested = managedFieldsOf(input.new);
  if (input.subresource) return decodeManagedFieldsLenient(managedFieldsOf(input.old));
  if (isResetManagedFields(requested)) return new Map();
  if (Array.isArray(requested) && requested.length > 0) {
    try {
      const decoded = decodeManagedFields(requested);
      if (decoded.size > 0) return decoded;
    } catch {
      // An undecodable list is ignored, as Kubernetes does, so clients cannot corrupt it.
    }
  }
  return decodeManagedFieldsLenient(managedFieldsOf(input.old));
}

/**
 * The managedFields to store with `input.new` after a non-apply write by `input.manager`.
 * Never throws for object content; returns `[]` when nothing is owned (the caller then removes
 * `metadata.managedFields`, e.g. with `setManagedFields`).
 */
export function trackUpdate(input: UpdateInput): ManagedFieldsEntry[] {
  const managed = startingPoint(input);
  const oldClean = input.old ? withoutManagedFields(input.old) : undefined;
  const newClean = withoutManagedFields(input.new);

  const cmp = compareObjects(oldClean, newClean, input.schema);
  let taken = cmp.modified.union(cmp.added);
  let removed = cmp.removed;
  if (input.ignoredFields) {
    taken = taken.recursiveDifference(input.ignoredFields);
    removed = removed.recursiveDifference(input.ignoredFields);
  }

  // Update never conflicts: every other owner of a changed field loses it (SMD update with force).
  if (!taken.isEmpty() || !removed.isEmpty()) {
    for (const [id, rec] of managed) {
      const set = rec.set.difference(taken).difference(removed);
      if (set.isEmpty()) managed.delete(id);
      else managed.set(id, { ...rec, set });
    }
  }

  const own = taken.difference(STRIPPED_FIELDS);
  if (!own.isEmpty()) {
    const id = managerIdentifier({ manager: input.manager, operation: 'Update', apiVersion: input.apiVersion, subresource: input.subresource });
    const prev = managed.get(id);
    managed.set(id, {
      manager: input.manager,
      operation: 'Update',
      apiVersion: input.apiVersion,
      ...(input.subresource ? { subresource: input.subresource } : {}),
      time: managedFieldsTime(input.now),
      set: prev ? prev.set.union(own) : own,
    });
  }
  capUpdateManagers(managed);
  return encodeManagedFields(managed);
}
