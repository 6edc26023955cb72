/**
 * Server-side apply (conventions "Server-side apply" rules 1-4, 6, 7, 9), after SMD's
 * merge.Updater.Apply as the apiserver's field manager drives it:
 *
 * 1. the intent must not carry managedFields and must be of the served apiVersion (400);
 * 2. the intent is merged into the live object (intent wins), per the schema's list/map types;
 * 3. the applier's entry becomes the intent's field set; what the applier owned before and no
 *    longer applies is removed from the object unless another manager still owns it;
 * 4. comparing live and result, any field another manager owns that the apply adds or changes
 *    is a conflict (409) unless `force`, which moves it to the applier; fields whose value does
 *    not change are shared; removed fields leave every other manager's set.
 *
 * Pure: no clock (the caller passes `now`), inputs are not mutated. Defaulting, validation and
 * status/spec reset of the result are the store's job, after this.
 */
import { Errors } from '../errors.js';
import type { JSONSchemaProps } from '../schema/schema.types.js';
import { FieldSet } from './ssa.fieldset.js';
import {
  capUpdateManagers,
  conflictError,
  decodeManagedFieldsLenient,
  encodeManagedFields,
  type FieldConflict,
  managedFieldsTime,
  type ManagedFieldsEntry,
  type ManagedFieldsMap,
  managerIdentifier,
  setManagedFields,
  STRIPPED_FIELDS,
} from './ssa.managed-fields.js';
import { compareObjects, jsonValuesEqual, mergeApplied, pruneRemoved, toFieldSet, TypedValueError } from './ssa.typed.js';

type Obj = Record<string, unknown>;

/** Input of `applyIntent`. */
export interface ApplyInput {
  /** The stored object (with its managedFields), or undefined when the apply creates it. */
  live?: Obj;
  /** The applied configuration, decoded from the JSON/YAML body. */
  intent: Obj;
  /** The `fieldManager` query parameter (required for apply; see `validateApplyFieldManager`). */
  manager: string;
  /** The `force` query parameter. */
  force: boolean;
  /** The kind's schema (root, as in the kind declaration). */
  schema: JSONSchemaProps;
  /** The group/version served by the request, e.g. `v1` or `apps/v1`. */
  apiVersion: string;
  /** Time of the request; becomes the entry's `time` when it changes the object. */
  now: Date;
  /** Subresource the request went to (e.g. `status`); empty or undefined for the main resource. */
  subresource?: string;
  /**
   * Fields this endpoint resets (the strategy's reset fields, e.g. `status` on the main
   * resource): never owned by this request and never a reason to conflict.
   */
  ignoredFields?: FieldSet;
}

/** Result of `applyIntent`. */
export interface ApplyResult {
  /** The merged object, with `metadata.managedFields` set to `managedFields` (absent when empty). */
  object: Obj;
  /** The encoded managed fields of the result. */
  managedFields: ManagedFieldsEntry[];
  /** Whether the object (managedFields aside) differs from the live one; always true on create. */
  changed: boolean;
}

function metaOf(o: Obj | undefined): Obj | undefined {
  const m = o?.metadata;
  return m !== null && typeof m === 'object' && !Array.isArray(m) ? (m as Obj) : undefined;
}

/** A shallow copy of `o` without `metadata.managedFields`. */
export function withoutManagedFields(o: Obj): Obj {
  const meta = metaOf(o);
  if (!meta || !('managedFields' in meta)) return o;
  const { managedFields: _dropped, ...rest } = meta;
  return { ...o, metadata: rest };
}

/**
 * Applies `intent` on behalf of `manager`. Throws a StatusError: 400 for an intent carrying
 * managedFields (`metadata.managedFields must be nil`), of another apiVersion, or with lists that
 * cannot be keyed (missing key field, duplicates); 409 with one `FieldManagerConflict` cause per
 * field on conflicts when not forced.
 */
export function applyIntent(input: ApplyInput): ApplyResult {
  const { intent, manager, force, schema, apiVersion, now } = input;
  if (intent === null || typeof intent !== 'object' || Array.isArray(intent)) throw Errors.badRequest('the applied configuration must be an object');
  const intentMeta = metaOf(intent);
  // Rule 1; structuredmerge.go rejects any non-nil managedFields, an empty list included.
  if (intentMeta && intentMeta.managedFields !== undefined && intentMeta.managedFields !== null) {
    throw Errors.badRequest('metadata.managedFields must be nil');
  }
  if (intent.apiVersion !== apiVersion) {
    const specified = typeof intent.apiVersion === 'string' ? intent.apiVersion : '';
    throw Errors.badRequest(`Incorrect version specified in apply patch. Specified patch version: ${specified}, expected: ${apiVersion}`);
  }

  let applied: FieldSet;
  try {
    applied = toFieldSet(intent, schema, true);
  } catch (err) {
    if (err instanceof TypedValueError) throw Errors.badRequest(`failed to create typed patch object: ${err.message}`);
    throw err;
  }
  const ignored = input.ignoredFields;
  if (ignored) applied = applied.recursiveDifference(ignored);

  const managed: ManagedFieldsMap = decodeManagedFieldsLenient(metaOf(input.live)?.managedFields);
  const live = input.live ? withoutManagedFields(input.live) : undefined;
  const cleanIntent = intentMeta && 'managedFields' in intentMeta ? withoutManagedFields(intent) : intent;

  let merged = mergeApplied(live, cleanIntent, schema) as Obj;

  const id = managerIdentifier({ manager, operation: 'Apply', subresource: input.subresource });
  const previous = managed.get(id);
  // The applier's new set takes part in pruning unstripped, so that metadata.name and the like
  // keep `metadata` owned (stripping happens after, as stripMetaManager wraps the updater).
  if (previous && !previous.set.isEmpty()) {
    const owned = FieldSet.unionAll([applied, ...[...managed].filter(([otherId]) => otherId !== id).map(([, rec]) => rec.set)]);
    merged = pruneRemoved(merged, schema, previous.set, owned);
  }

  const cmp = compareObjects(live, merged, schema);
  let changedPaths = cmp.modified.union(cmp.added);
  let removed = cmp.removed;
  if (ignored) {
    changedPaths = changedPaths.recursiveDifference(ignored);
    removed = removed.recursiveDifference(ignored);
  }

  const conflicts: FieldConflict[] = [];
  const conflictSets = new Map<string, FieldSet>();
  for (const otherId of [...managed.keys()].sort()) {
    if (otherId === id) continue;
    const inter = managed.get(otherId)!.set.intersection(changedPaths);
    if (inter.isEmpty()) continue;
    conflictSets.set(otherId, inter);
    for (const p of inter.paths()) conflicts.push({ managerId: otherId, path: p });
  }
  if (conflicts.length > 0 && !force) throw conflictError(conflicts);

  for (const [otherId, rec] of managed) {
    if (otherId === id) continue;
    let set = rec.set;
    const lost = conflictSets.get(otherId);
    if (lost) set = set.difference(lost);
    if (!removed.isEmpty()) set = set.difference(removed);
    if (set.isEmpty()) managed.delete(otherId);
    else if (set !== rec.set) managed.set(otherId, { ...rec, set });
  }

  const changed = live === undefined || !jsonValuesEqual(live, merged);
  const ownSet = applied.difference(STRIPPED_FIELDS);
  if (ownSet.isEmpty()) managed.delete(id);
  else {
    managed.set(id, {
      manager,
      operation: 'Apply',
      apiVersion,
      ...(input.subresource ? { subresource: input.subresource } : {}),
      // managedFieldsUpdater stamps the time only when the apply changed the object.
      time: changed || !previous?.time ? managedFieldsTime(now) : previous.time,
      set: ownSet,
    });
  }
  capUpdateManagers(managed);

  const entries = encodeManagedFields(managed);
  const object: Obj = { ...merged };
  if (metaOf(object)) object.metadata = { ...metaOf(object) };
  setManagedFields(object, entries);
  return { object, managedFields: entries, changed };
}
