/**
 * `metadata.managedFields`: decoding, encoding and the bookkeeping rules Kubernetes applies to
 * the entries (k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager and
 * k8s.io/apimachinery/pkg/util/managedfields/internal: managedfields.go, stripmeta.go,
 * capmanagers.go, conflict.go; conventions "Server-side apply" rules 3 and 8).
 *
 * An entry is identified by its manager identifier (BuildManagerIdentifier): the JSON of
 * {manager, operation, apiVersion (Update only), subresource}. So a manager's Update entry is
 * separate from its Apply entry, an Apply entry keeps its identity across API versions, and
 * Update entries made through different API versions or subresources are separate.
 */
import { Errors, StatusError } from '../errors.js';
import { FieldSet, fieldElement, pathToString } from './ssa.fieldset.js';
import { formatMetaTime } from '../schema/schema.times.js';

/** The two operations that own fields. */
export type ManagedFieldsOperation = 'Apply' | 'Update';

/** metav1.ManagedFieldsEntry as JSON, in Kubernetes' field order. */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: ManagedFieldsOperation;
  apiVersion?: string;
  /** RFC 3339, second precision, UTC. */
  time?: string;
  fieldsType?: 'FieldsV1';
  fieldsV1?: Record<string, unknown>;
  subresource?: string;
}

/** A decoded entry: who, how, and the set of paths it owns. */
export interface ManagerRecord {
  manager: string;
  operation: ManagedFieldsOperation;
  apiVersion: string;
  subresource?: string;
  time?: string;
  set: FieldSet;
}

/** Decoded managed fields keyed by manager identifier. Insertion order is irrelevant (encoding sorts). */
export type ManagedFieldsMap = Map<string, ManagerRecord>;

/** An entry list that cannot be decoded (Kubernetes DecodeManagedFields errors). */
export class ManagedFieldsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ManagedFieldsError';
  }
}

/** Maximum number of Update entries kept; older ones merge into `ancient-changes` (DefaultMaxUpdateManagers). */
export const MAX_UPDATE_MANAGERS = 10;

/** Manager name of the bucket that collects the oldest Update entries beyond the cap. */
export const ANCIENT_CHANGES_MANAGER = 'ancient-changes';

/** Maximum length of a field manager name (validation.FieldManagerMaxLength). */
const FIELD_MANAGER_MAX_LENGTH = 128;

/**
 * The identifier of an entry (BuildManagerIdentifier): JSON of the entry with fieldsType,
 * fieldsV1 and time dropped, and apiVersion dropped for Apply.
 */
export function managerIdentifier(e: { manager: string; operation: ManagedFieldsOperation; apiVersion?: string; subresource?: string }): string {
  const id: Record<string, string> = { manager: e.manager, operation: e.operation };
  if (e.operation === 'Update' && e.apiVersion) id.apiVersion = e.apiVersion;
  if (e.subresource) id.subresource = e.subresource;
  return JSON.stringify(id);
}

/**
 * How a conflict names a manager (conflict.go printManager): `"kubectl"` for an applier,
 * `"kube-controller-manager" using apps/v1` for an Update entry, with `with subresource "status"`
 * after the name when the entry came through a subresource.
 */
export function printManager(id: string): string {
  let parsed: { manager?: string; operation?: string; apiVersion?: string; subresource?: string };
  try {
    parsed = JSON.parse(id) as typeof parsed;
  } catch {
    return JSON.stringify(id);
  }
  let s = JSON.stringify(parsed.manager ?? '');
  if (parsed.subresource) s += ` with subresource ${JSON.stringify(parsed.subresource)}`;
  if (parsed.operation === 'Update') s += ` using ${parsed.apiVersion ?? ''}`;
  return s;
}

/** `now` as metav1.Time JSON: RFC 3339 in UTC with second precision. */
export function managedFieldsTime(now: Date): string {
  return formatMetaTime(now);
}

/**
 * Whether a request's managedFields asks for a reset (rule 8): exactly one entry that is empty.
 * An empty list alone does not reset (conventions rule 8: clients unaware of the field must not
 * wipe it), and neither does an absent field.
 */
export function isResetManagedFields(v: unknown): boolean {
  return Array.isArray(v) && v.length === 1 && v[0] !== null && typeof v[0] === 'object' && !Array.isArray(v[0]) && Object.keys(v[0] as object).length === 0;
}

/**
 * Decodes a managedFields list. Throws `ManagedFieldsError` when it is not a list, or an entry
 * has an operation other than Apply/Update, no apiVersion, a fieldsType other than FieldsV1 or
 * a malformed fieldsV1 (the checks of Kubernetes' decodeManagedFields). Two entries with the same
 * identifier merge their sets.
 */
export function decodeManagedFields(entries: unknown): ManagedFieldsMap {
  const out: ManagedFieldsMap = new Map();
  // The sets of each identifier, merged once at the end (merging at each repeat would copy
  // the growing set per entry).
  const sets = new Map<string, FieldSet[]>();
  if (entries === undefined || entries === null) return out;
  if (!Array.isArray(entries)) throw new ManagedFieldsError('managedFields must be a list');
  entries.forEach((raw, i) => {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new ManagedFieldsError(`managed fields entry ${i} must be an object`);
    const e = raw as Record<string, unknown>;
    if (e.operation !== 'Apply' && e.operation !== 'Update') throw new ManagedFieldsError('operation must be `Apply` or `Update`');
    if (typeof e.apiVersion !== 'string' || e.apiVersion.length < 1) throw new ManagedFieldsError('apiVersion must not be empty');
    if (e.fieldsType === undefined || e.fieldsType === '') throw new ManagedFieldsError(`missing fieldsType in managed fields entry ${i}`);
    if (e.fieldsType !== 'FieldsV1') throw new ManagedFieldsError(`invalid fieldsType ${JSON.stringify(e.fieldsType)} in managed fields entry ${i}`);
    if (e.manager !== undefined && typeof e.manager !== 'string') throw new ManagedFieldsError(`manager of managed fields entry ${i} must be a string`);
    if (e.subresource !== undefined && typeof e.subresource !== 'string')
      throw new ManagedFieldsError(`subresource of managed fields entry ${i} must be a string`);
    if (e.time !== undefined && e.time !== null && (typeof e.time !== 'string' || Number.isNaN(Date.parse(e.time)))) {
      throw new ManagedFieldsError(`time of managed fields entry ${i} must be an RFC 3339 timestamp`);
    }
    let set: FieldSet;
    try {
      set = e.fieldsV1 === undefined || e.fieldsV1 === null ? FieldSet.empty() : FieldSet.fromFieldsV1(e.fieldsV1);
    } catch (err) {
      throw new ManagedFieldsError(`error decoding fieldsV1 of managed fields entry ${i}: ${(err as Error).message}`);
    }
    const rec: ManagerRecord = {
      manager: (e.manager as string | undefined) ?? '',
      operation: e.operation,
      apiVersion: e.apiVersion,
      set,
    };
    if (e.subresource) rec.subresource = e.subresource as string;
    if (typeof e.time === 'string') rec.time = e.time;
    const id = managerIdentifier(rec);
    const same = sets.get(id);
    if (same) same.push(rec.set);
    else sets.set(id, [rec.set]);
    out.set(id, rec);
  });
  for (const [id, all] of sets) if (all.length > 1) out.get(id)!.set = FieldSet.unionAll(all);
  return out;
}

/** Like `decodeManagedFields` but answers an empty map for undecodable input (decodeLiveManagedFields). */
export function decodeManagedFieldsLenient(entries: unknown): ManagedFieldsMap {
  try {
    return decodeManagedFields(entries);
  } catch {
    return new Map();
  }
}

function seconds(t: string | undefined): number {
  if (!t) return 0;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}

/**
 * Encodes decoded managed fields, dropping entries with empty sets, sorted as Kubernetes sorts
 * them (sortEncodedManagedFields): operation (Apply before Update), time, manager, apiVersion,
 * subresource.
 */
export function encodeManagedFields(managed: ManagedFieldsMap): ManagedFieldsEntry[] {
  const out: ManagedFieldsEntry[] = [];
  for (const rec of managed.values()) {
    if (rec.set.isEmpty()) continue;
    const e: ManagedFieldsEntry = { manager: rec.manager, operation: rec.operation, apiVersion: rec.apiVersion };
    if (rec.time) e.time = rec.time;
    e.fieldsType = 'FieldsV1';
    e.fieldsV1 = rec.set.toFieldsV1();
    if (rec.subresource) e.subresource = rec.subresource;
    out.push(e);
  }
  const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  out.sort(
    (p, q) =>
      cmp(p.operation!, q.operation!) ||
      seconds(p.time) - seconds(q.time) ||
      cmp(p.manager!, q.manager!) ||
      cmp(p.apiVersion!, q.apiVersion!) ||
      cmp(p.subresource ?? '', q.subresource ?? ''),
  );
  return out;
}

/**
 * Paths never tracked (stripmeta.go): apiVersion, kind, the metadata node itself and the
 * server-owned or identifying metadata fields. Their values still merge; no one owns them.
 */
export const STRIPPED_FIELDS: FieldSet = FieldSet.of(
  [fieldElement('apiVersion')],
  [fieldElement('kind')],
  [fieldElement('metadata')],
  ...['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion'].map((f) => [
    fieldElement('metadata'),
    fieldElement(f),
  ]),
);

/**
 * Caps the number of Update entries at `max` (capmanagers.go): while there are more, the oldest
 * (by time, then identifier) is merged into the `ancient-changes` entry of its API version.
 * Mutates and returns `managed`.
 */
export function capUpdateManagers(managed: ManagedFieldsMap, max = MAX_UPDATE_MANAGERS): ManagedFieldsMap {
  const updaters = [...managed.entries()].filter(([, r]) => r.operation === 'Update').map(([id]) => id);
  if (updaters.length <= max) return managed;
  updaters.sort((a, b) => seconds(managed.get(a)!.time) - seconds(managed.get(b)!.time) || (a < b ? -1 : a > b ? 1 : 0));
  let count = updaters.length;
  // The sets merged into each bucket, unioned once at the end (a union per merged entry would
  // copy the growing bucket each time).
  const merged = new Map<ManagerRecord, FieldSet[]>();
  for (const id of updaters) {
    if (count <= max) break;
    const rec = managed.get(id)!;
    const bucketId = managerIdentifier({ manager: ANCIENT_CHANGES_MANAGER, operation: 'Update', apiVersion: rec.apiVersion });
    if (bucketId === id) continue;
    const bucket = managed.get(bucketId);
    managed.delete(id);
    if (bucket) {
      const sets = merged.get(bucket);
      if (sets) sets.push(rec.set);
      else merged.set(bucket, [bucket.set, rec.set]);
      bucket.time = rec.time;
      count--;
    } else {
      // The entry becomes the bucket: the count of Update entries is unchanged.
      managed.set(bucketId, { manager: ANCIENT_CHANGES_MANAGER, operation: 'Update', apiVersion: rec.apiVersion, set: rec.set, time: rec.time });
    }
  }
  for (const [bucket, sets] of merged) bucket.set = FieldSet.unionAll(sets);
  return managed;
}

/** One field owned by another manager that an apply would change. */
export interface FieldConflict {
  /** Manager identifier (see `managerIdentifier`). */
  managerId: string;
  path: string[];
}

/**
 * The 409 of a failed apply, worded as Kubernetes words it (conflict.go NewConflictError):
 * `Apply failed with 1 conflict: conflict with "mgr" using v1: .data.key`, or for several
 * `Apply failed with N conflicts: conflicts with "a":\n- .x\n- .y\nconflicts with "b" using v1:\n- .z`
 * (managers sorted by identifier); one cause per field, reason `FieldManagerConflict`. The Status
 * reason is `Conflict` (errors.NewApplyConflict).
 */
export function conflictError(conflicts: readonly FieldConflict[]): StatusError {
  const causes = conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${printManager(c.managerId)}`, field: pathToString(c.path) }));
  let message: string;
  if (conflicts.length === 1) {
    message = `Apply failed with 1 conflict: conflict with ${printManager(conflicts[0].managerId)}: ${pathToString(conflicts[0].path)}`;
  } else {
    const byManager = new Map<string, string[]>();
    for (const c of conflicts) {
      const list = byManager.get(c.managerId) ?? [];
      list.push(pathToString(c.path));
      byManager.set(c.managerId, list);
    }
    const lines: string[] = [];
    for (const id of [...byManager.keys()].sort()) {
      lines.push(`conflicts with ${printManager(id)}:`);
      for (const p of byManager.get(id)!) lines.push(`- ${p}`);
    }
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  return new StatusError(409, 'Conflict', message, { causes });
}

/**
 * The field manager of a write (handlers/rest.go managerOrUserAgent): the `fieldManager`
 * parameter when given, else `defaultFieldManager(userAgent)`.
 */
export function fieldManagerFor(fieldManager: string | undefined, userAgent: string | undefined): string {
  return fieldManager ? fieldManager : defaultFieldManager(userAgent ?? '');
}

/**
 * The default manager of a non-apply write (prefixFromUserAgent): the user agent up to its first
 * `/`, without unprintable characters, cut to at most 128 bytes of UTF-8. `kubectl/v1.30.0 (linux/amd64)`
 * gives `kubectl`.
 */
export function defaultFieldManager(userAgent: string): string {
  const head = userAgent.split('/')[0];
  let out = '';
  let bytes = 0;
  for (const ch of head) {
    if (!/^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u.test(ch)) continue;
    const len = Buffer.byteLength(ch, 'utf8');
    if (bytes + len > FIELD_MANAGER_MAX_LENGTH) break;
    out += ch;
    bytes += len;
  }
  return out;
}

/**
 * Checks the `fieldManager` of an apply patch (ValidatePatchOptions): required, at most 128
 * characters. Returns the 422 to answer, or undefined when it is fine.
 */
export function validateApplyFieldManager(fieldManager: string | undefined): StatusError | undefined {
  if (!fieldManager) {
    return Errors.invalid('meta.k8s.io', 'PatchOptions', '', [{ type: 'FieldValueRequired', field: 'fieldManager', detail: 'is required for apply patch' }]);
  }
  if (fieldManager.length > FIELD_MANAGER_MAX_LENGTH) {
    return Errors.invalid('meta.k8s.io', 'PatchOptions', '', [
      { type: 'FieldValueTooLong', field: 'fieldManager', value: fieldManager, detail: `may not be more than ${FIELD_MANAGER_MAX_LENGTH} bytes` },
    ]);
  }
  return undefined;
}

/** Sets `obj.metadata.managedFields` to `entries`, or removes the field when there are none. Mutates `obj`. */
export function setManagedFields(obj: Record<string, unknown>, entries: ManagedFieldsEntry[]): void {
  let meta = obj.metadata as Record<string, unknown> | undefined;
  if (!meta || typeof meta !== 'object') {
    if (entries.length === 0) return;
    meta = {};
    obj.metadata = meta;
  }
  if (entries.length === 0) delete meta.managedFields;
  else meta.managedFields = entries;
}
