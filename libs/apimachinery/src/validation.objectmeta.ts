/**
 * ObjectMeta validation on create and update, returning field errors with Kubernetes' paths
 * and details. Rules and messages: k8s.io/apimachinery/pkg/api/validation/objectmeta.go
 * (ValidateObjectMetaAccessor, ValidateObjectMetaAccessorUpdate, ValidateAnnotations,
 * ValidateOwnerReferences, ValidateFinalizers, ValidateNoNewFinalizers, ValidateImmutableField),
 * apimachinery/pkg/apis/meta/v1/validation (ValidateLabels, ValidateManagedFields) and, for
 * built-in kinds, pkg/apis/core/validation (validateKubeFinalizerName).
 */
import type { FieldError } from './errors.js';
import { isQualifiedName, isValidLabelValue, nameIsDNSLabel, nameIsDNSSubdomain, type NameValidator } from './validation.names.js';

/** metav1.OwnerReference as JSON. */
export interface OwnerReferenceLike {
  apiVersion?: string;
  kind?: string;
  name?: string;
  uid?: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** metav1.ManagedFieldsEntry as JSON (the fields validated here). */
export interface ManagedFieldsEntryLike {
  manager?: string;
  operation?: string;
  fieldsType?: string;
  subresource?: string;
  [k: string]: unknown;
}

/** metav1.ObjectMeta as JSON; values are checked defensively since bodies are untrusted. */
export interface ObjectMetaLike {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string | null;
  deletionTimestamp?: string | null;
  deletionGracePeriodSeconds?: number | null;
  labels?: Record<string, string> | null;
  annotations?: Record<string, string> | null;
  ownerReferences?: OwnerReferenceLike[] | null;
  finalizers?: string[] | null;
  managedFields?: ManagedFieldsEntryLike[] | null;
  [k: string]: unknown;
}

/** Options of `validateObjectMetaCreate`. */
export interface ObjectMetaCreateOptions {
  /** Namespaced kinds require metadata.namespace; cluster-scoped kinds forbid it. */
  namespaced: boolean;
  /** The kind's name rule (default NameIsDNSSubdomain). */
  nameValidator?: NameValidator;
  /**
   * Built-in kinds also run core's validateKubeFinalizerName: an unqualified finalizer must be
   * one of `kubernetes`, `orphan`, `foregroundDeletion`. Custom resources do not.
   */
  kubeFinalizers?: boolean;
  /** Path prefix (default `metadata`). */
  path?: string;
}

/** metav1validation / ValidateAnnotations: total size limit of keys plus values, 256 KiB. */
export const TOTAL_ANNOTATION_SIZE_LIMIT_BYTES = 256 * 1024;
/** ValidateFieldManager: maximum manager name length. */
export const FIELD_MANAGER_MAX_LENGTH = 128;

const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

const invalid = (field: string, value: unknown, detail: string): FieldError => ({ type: 'FieldValueInvalid', field, value, detail });

function stringMap(m: unknown, path: string, errs: FieldError[]): Record<string, unknown> {
  if (m === undefined || m === null) return {};
  if (typeof m !== 'object' || Array.isArray(m)) {
    errs.push({ type: 'FieldValueTypeInvalid', field: path, value: m, detail: 'must be a map of string to string' });
    return {};
  }
  return m as Record<string, unknown>;
}

/** v1validation.ValidateLabels: every key a qualified name, every value a label value; path not indexed. */
export function validateLabels(labels: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(stringMap(labels, path, errs))) {
    for (const msg of isQualifiedName(k)) errs.push(invalid(path, k, msg));
    if (typeof v !== 'string') {
      errs.push({ type: 'FieldValueTypeInvalid', field: path, value: v, detail: 'label values must be strings' });
      continue;
    }
    for (const msg of isValidLabelValue(v)) errs.push(invalid(path, v, msg));
  }
  return errs;
}

/** Byte length of a string as Go's len() counts it (UTF-8). */
function utf8Length(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

/** ValidateAnnotations: keys are qualified names (case-insensitively); keys+values <= 256 KiB. */
export function validateAnnotations(annotations: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  let total = 0;
  for (const [k, v] of Object.entries(stringMap(annotations, path, errs))) {
    for (const msg of isQualifiedName(k.toLowerCase())) errs.push(invalid(path, k, msg));
    if (typeof v !== 'string') errs.push({ type: 'FieldValueTypeInvalid', field: path, value: v, detail: 'annotation values must be strings' });
    total += utf8Length(k) + (typeof v === 'string' ? utf8Length(v) : 0);
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT_BYTES) {
    errs.push({ type: 'FieldValueTooLong', field: path, value: '', detail: `may not be more than ${TOTAL_ANNOTATION_SIZE_LIMIT_BYTES} bytes` });
  }
  return errs;
}

/** schema.FromAPIVersionAndKind's version part: after the last '/', or the whole string. */
function versionOf(apiVersion: string): string {
  const i = apiVersion.lastIndexOf('/');
  return i < 0 ? apiVersion : apiVersion.slice(i + 1);
}

/**
 * ValidateOwnerReferences: apiVersion (with a version), kind, name, uid required; Event may not
 * own; at most one controller reference. Paths are not indexed, as in Kubernetes.
 */
export function validateOwnerReferences(refs: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (refs === undefined || refs === null) return errs;
  if (!Array.isArray(refs)) return [{ type: 'FieldValueTypeInvalid', field: path, value: refs, detail: 'must be a list of owner references' }];
  let firstController = '';
  for (const raw of refs) {
    const r = (typeof raw === 'object' && raw !== null ? raw : {}) as OwnerReferenceLike;
    const apiVersion = typeof r.apiVersion === 'string' ? r.apiVersion : '';
    const kind = typeof r.kind === 'string' ? r.kind : '';
    if (versionOf(apiVersion) === '') errs.push(invalid(`${path}.apiVersion`, apiVersion, 'version must not be empty'));
    if (kind === '') errs.push(invalid(`${path}.kind`, kind, 'kind must not be empty'));
    if (!r.name) errs.push(invalid(`${path}.name`, r.name ?? '', 'name must not be empty'));
    if (!r.uid) errs.push(invalid(`${path}.uid`, r.uid ?? '', 'uid must not be empty'));
    if (apiVersion === 'v1' && kind === 'Event') errs.push(invalid(path, r, '/v1, Kind=Event is disallowed from being an owner'));
    if (r.controller === true) {
      const cur = `${kind}/${r.name ?? ''}`;
      if (firstController) {
        errs.push(invalid(path, refs, `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${cur}`));
      } else firstController = cur;
    }
  }
  return errs;
}

/**
 * ValidateFinalizers: qualified names; `orphan` and `foregroundDeletion` are exclusive. With
 * `kubeFinalizers`, also core's per-index standard-name rule.
 */
export function validateFinalizers(finalizers: unknown, path: string, kubeFinalizers = false): FieldError[] {
  const errs: FieldError[] = [];
  if (finalizers === undefined || finalizers === null) return errs;
  if (!Array.isArray(finalizers)) return [{ type: 'FieldValueTypeInvalid', field: path, value: finalizers, detail: 'must be a list of strings' }];
  for (const f of finalizers) {
    if (typeof f !== 'string') {
      errs.push({ type: 'FieldValueTypeInvalid', field: path, value: f, detail: 'finalizers must be strings' });
      continue;
    }
    for (const msg of isQualifiedName(f)) errs.push(invalid(path, f, msg));
  }
  if (finalizers.includes('orphan') && finalizers.includes('foregroundDeletion')) {
    errs.push(invalid(path, finalizers, 'finalizer orphan and foregroundDeletion cannot be both set'));
  }
  if (kubeFinalizers) errs.push(...validateKubeFinalizerNames(finalizers, path));
  return errs;
}

/**
 * core validateKubeFinalizerName, per index (`metadata.finalizers[i]`): a qualified name, and an
 * unqualified one must be standard (`kubernetes`, `orphan`, `foregroundDeletion`).
 */
export function validateKubeFinalizerNames(finalizers: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!Array.isArray(finalizers)) return errs;
  finalizers.forEach((f, i) => {
    if (typeof f !== 'string') return;
    const p = `${path}[${i}]`;
    const q = isQualifiedName(f);
    if (q.length) for (const msg of q) errs.push(invalid(p, f, msg));
    else if (!f.includes('/') && !STANDARD_FINALIZERS.has(f)) errs.push(invalid(p, f, 'name is neither a standard finalizer name nor is it fully qualified'));
  });
  return errs;
}

/** v1validation.ValidateManagedFields: operation Apply|Update, fieldsType FieldsV1, manager length. */
export function validateManagedFields(entries: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (entries === undefined || entries === null) return errs;
  if (!Array.isArray(entries)) return [{ type: 'FieldValueTypeInvalid', field: path, value: entries, detail: 'must be a list' }];
  entries.forEach((raw, i) => {
    const e = (typeof raw === 'object' && raw !== null ? raw : {}) as ManagedFieldsEntryLike;
    const p = `${path}[${i}]`;
    if (e.operation !== 'Apply' && e.operation !== 'Update') errs.push(invalid(`${p}.operation`, e.operation ?? '', 'must be `Apply` or `Update`'));
    if (e.fieldsType !== undefined && e.fieldsType !== '' && e.fieldsType !== 'FieldsV1')
      errs.push(invalid(`${p}.fieldsType`, e.fieldsType, 'must be `FieldsV1`'));
    if (typeof e.manager === 'string' && e.manager.length > FIELD_MANAGER_MAX_LENGTH) {
      errs.push({ type: 'FieldValueTooLong', field: `${p}.manager`, value: e.manager, detail: `may not be more than ${FIELD_MANAGER_MAX_LENGTH} bytes` });
    }
  });
  return errs;
}

/**
 * ValidateObjectMetaAccessor: name (or generateName) by the kind's rule, namespace required
 * or forbidden by scope (and a DNS-1123 label), generation >= 0, labels, annotations, owner
 * references, finalizers, managed fields. Call after generateName has been turned into a name
 * (Kubernetes validates the generated name too).
 */
export function validateObjectMetaCreate(meta: ObjectMetaLike, opts: ObjectMetaCreateOptions): FieldError[] {
  const base = opts.path ?? 'metadata';
  const nameFn = opts.nameValidator ?? nameIsDNSSubdomain;
  const errs: FieldError[] = [];
  const m = (typeof meta === 'object' && meta !== null ? meta : {}) as ObjectMetaLike;
  if (typeof m.generateName === 'string' && m.generateName.length > 0) {
    for (const msg of nameFn(m.generateName, true)) errs.push(invalid(`${base}.generateName`, m.generateName, msg));
  }
  if (typeof m.name !== 'string' || m.name.length === 0) {
    errs.push({ type: 'FieldValueRequired', field: `${base}.name`, detail: 'name or generateName is required' });
  } else {
    for (const msg of nameFn(m.name, false)) errs.push(invalid(`${base}.name`, m.name, msg));
  }
  const ns = typeof m.namespace === 'string' ? m.namespace : '';
  if (opts.namespaced) {
    if (ns === '') errs.push({ type: 'FieldValueRequired', field: `${base}.namespace`, detail: '' });
    else for (const msg of nameIsDNSLabel(ns, false)) errs.push(invalid(`${base}.namespace`, ns, msg));
  } else if (ns !== '') {
    errs.push({ type: 'FieldValueForbidden', field: `${base}.namespace`, detail: 'not allowed on this type' });
  }
  if (typeof m.generation === 'number' && m.generation < 0) errs.push(invalid(`${base}.generation`, m.generation, 'must be greater than or equal to 0'));
  errs.push(...validateLabels(m.labels, `${base}.labels`));
  errs.push(...validateAnnotations(m.annotations, `${base}.annotations`));
  errs.push(...validateOwnerReferences(m.ownerReferences, `${base}.ownerReferences`));
  errs.push(...validateFinalizers(m.finalizers, `${base}.finalizers`, opts.kubeFinalizers));
  errs.push(...validateManagedFields(m.managedFields, `${base}.managedFields`));
  return errs;
}

/** Options of `validateObjectMetaUpdate`. */
export interface ObjectMetaUpdateOptions {
  /** As in ObjectMetaCreateOptions. */
  kubeFinalizers?: boolean;
  /** Path prefix (default `metadata`). */
  path?: string;
}

function sameValue(a: unknown, b: unknown): boolean {
  // apiequality.Semantic.DeepEqual on scalars; unset and null are the same (nil pointers).
  return (a ?? undefined) === (b ?? undefined);
}

/**
 * ValidateObjectMetaAccessorUpdate: resourceVersion must be set (the registry copies the live
 * one in first for kinds that allow unconditional update), generation not decremented; name,
 * namespace, uid, creationTimestamp, deletionTimestamp, deletionGracePeriodSeconds immutable
 * (generateName is not); no new finalizers once deletion started; labels, annotations, owner
 * references, finalizers and managed fields re-validated.
 */
export function validateObjectMetaUpdate(newMeta: ObjectMetaLike, oldMeta: ObjectMetaLike, opts: ObjectMetaUpdateOptions = {}): FieldError[] {
  const base = opts.path ?? 'metadata';
  const n = (typeof newMeta === 'object' && newMeta !== null ? newMeta : {}) as ObjectMetaLike;
  const o = (typeof oldMeta === 'object' && oldMeta !== null ? oldMeta : {}) as ObjectMetaLike;
  const errs: FieldError[] = [];
  if (o.deletionTimestamp) {
    const oldSet = new Set(Array.isArray(o.finalizers) ? o.finalizers : []);
    const extra = [...new Set(Array.isArray(n.finalizers) ? n.finalizers : [])].filter((f) => !oldSet.has(f)).sort();
    if (extra.length) {
      errs.push({
        type: 'FieldValueForbidden',
        field: `${base}.finalizers`,
        detail: `no new finalizers can be added if the object is being deleted, found new finalizers []string{${extra.map((f) => JSON.stringify(f)).join(', ')}}`,
      });
    }
  }
  if (!n.resourceVersion) errs.push(invalid(`${base}.resourceVersion`, n.resourceVersion ?? '', 'must be specified for an update'));
  if ((n.generation ?? 0) < (o.generation ?? 0)) errs.push(invalid(`${base}.generation`, n.generation ?? 0, 'must not be decremented'));
  for (const f of ['name', 'namespace', 'uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds'] as const) {
    if (!sameValue(n[f], o[f])) errs.push(invalid(`${base}.${f}`, n[f] ?? '', 'field is immutable'));
  }
  errs.push(...validateLabels(n.labels, `${base}.labels`));
  errs.push(...validateAnnotations(n.annotations, `${base}.annotations`));
  errs.push(...validateOwnerReferences(n.ownerReferences, `${base}.ownerReferences`));
  if (opts.kubeFinalizers) errs.push(...validateKubeFinalizerNames(n.finalizers, `${base}.finalizers`));
  errs.push(...validateManagedFields(n.managedFields, `${base}.managedFields`));
  return errs;
}
