/**
 * Rules of the storage.k8s.io/v1 kinds (pkg/apis/storage/validation), with Kubernetes' messages
 * and field paths. Each kind's strategy file wires the ones it needs.
 */
import { isDeepStrictEqual } from 'node:util';
import { goSlice, isDNS1123Subdomain, isQualifiedName, parseQuantity, Quantity, type FieldError } from '@app/apimachinery';
import { validatePersistentVolumeSpec } from '../core/persistentvolume/persistentvolume.strategy.js';
import { validateCSIDriverName } from '../core/volume/volume.validation.js';
import { FS_GROUP_POLICIES, LIFECYCLE_MODES, BINDING_MODES } from './storage.overlays.js';

type Obj = Record<string, unknown>;
const asObj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const quoted = (vs: readonly string[]) => vs.map((v) => JSON.stringify(v)).join(', ');
const unsupported = (field: string, value: unknown, allowed: readonly string[]): FieldError => ({
  type: 'FieldValueNotSupported',
  field,
  value,
  detail: `supported values: ${quoted(allowed)}`,
});
const immutable = (field: string, value: unknown): FieldError => ({ type: 'FieldValueInvalid', field, value, detail: 'field is immutable' });
/** Largest total size of a StorageClass's parameters (maxProvisionerParameterSize). */
const MAX_PARAMETERS_BYTES = 256 * 1024;
/** Longest CSINode driver nodeID (csiNodeIDMaxLength). */
const CSI_NODE_ID_MAX_LENGTH = 192;
/** Most topology keys per CSINode driver. */
const MAX_TOPOLOGY_KEYS = 64;

/** A provisioner name: required, a qualified name once lower-cased (validateProvisioner). */
function validateProvisioner(p: unknown): FieldError[] {
  if (p === undefined || p === null || p === '') return [{ type: 'FieldValueRequired', field: 'provisioner', value: p, detail: '' }];
  return isQualifiedName(String(p).toLowerCase()).map((m) => ({ type: 'FieldValueInvalid' as const, field: 'provisioner', value: p, detail: m }));
}

/** TopologySelectorTerms (ValidateTopologySelectorTerm): each requirement a label key with values. */
function validateTopologies(terms: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  list(terms).forEach((t, i) => {
    const seen = new Set<string>();
    list(asObj(t).matchLabelExpressions).forEach((r, j) => {
      const p = `${path}[${i}].matchLabelExpressions[${j}]`;
      const req = asObj(r);
      const key = String(req.key ?? '');
      for (const m of isQualifiedName(key)) errs.push({ type: 'FieldValueInvalid', field: `${p}.key`, value: key, detail: m });
      if (list(req.values).length === 0) errs.push({ type: 'FieldValueRequired', field: `${p}.values`, detail: 'must specify as least one value' });
      if (seen.has(key)) errs.push({ type: 'FieldValueDuplicate', field: `${p}.key`, value: key, detail: '' });
      seen.add(key);
    });
  });
  return errs;
}

/** ValidateStorageClass (after defaults). */
export function validateStorageClass(sc: Obj): FieldError[] {
  const errs = validateProvisioner(sc.provisioner);
  let size = 0;
  for (const [k, v] of Object.entries(asObj(sc.parameters))) {
    if (k === '') errs.push({ type: 'FieldValueInvalid', field: 'parameters', value: sc.parameters, detail: 'field can not be empty.' });
    size += k.length + String(v).length;
  }
  if (size > MAX_PARAMETERS_BYTES) errs.push({ type: 'FieldValueTooLong', field: 'parameters', detail: `may not be more than ${MAX_PARAMETERS_BYTES} bytes` });
  if (sc.reclaimPolicy !== undefined && !['Delete', 'Retain'].includes(String(sc.reclaimPolicy)))
    errs.push(unsupported('reclaimPolicy', sc.reclaimPolicy, ['Delete', 'Retain']));
  if (sc.volumeBindingMode === undefined) errs.push({ type: 'FieldValueRequired', field: 'volumeBindingMode', detail: '' });
  else if (!BINDING_MODES.includes(String(sc.volumeBindingMode))) errs.push(unsupported('volumeBindingMode', sc.volumeBindingMode, BINDING_MODES));
  errs.push(...validateTopologies(sc.allowedTopologies, 'allowedTopologies'));
  return errs;
}

/** ValidateStorageClassUpdate: provisioner, parameters, reclaimPolicy and volumeBindingMode are fixed. */
export function validateStorageClassUpdate(sc: Obj, old: Obj): FieldError[] {
  const errs = validateStorageClass(sc);
  if (!isDeepStrictEqual(sc.parameters ?? {}, old.parameters ?? {}))
    errs.push({ type: 'FieldValueForbidden', field: 'parameters', detail: 'updates to parameters are forbidden.' });
  if (sc.provisioner !== old.provisioner) errs.push({ type: 'FieldValueForbidden', field: 'provisioner', detail: 'updates to provisioner are forbidden.' });
  if (sc.reclaimPolicy !== old.reclaimPolicy)
    errs.push({ type: 'FieldValueForbidden', field: 'reclaimPolicy', detail: 'updates to reclaimPolicy are forbidden.' });
  if (sc.volumeBindingMode !== old.volumeBindingMode) errs.push(immutable('volumeBindingMode', sc.volumeBindingMode));
  return errs;
}

/** ValidateVolumeAttachment: attacher (a CSI driver name), nodeName and exactly one source. */
export function validateVolumeAttachment(va: Obj): FieldError[] {
  const spec = asObj(va.spec);
  const errs = validateCSIDriverName(spec.attacher, 'spec.attacher');
  if (spec.nodeName === undefined || spec.nodeName === '') errs.push({ type: 'FieldValueRequired', field: 'spec.nodeName', detail: '' });
  else
    for (const m of isDNS1123Subdomain(String(spec.nodeName)))
      errs.push({ type: 'FieldValueInvalid', field: 'spec.nodeName', value: spec.nodeName, detail: m });
  const src = asObj(spec.source);
  const hasName = src.persistentVolumeName !== undefined && src.persistentVolumeName !== null;
  const hasInline = src.inlineVolumeSpec !== undefined && src.inlineVolumeSpec !== null;
  const detail = 'must specify exactly one of inlineVolumeSpec and persistentVolumeName';
  if (!hasName && !hasInline) errs.push({ type: 'FieldValueRequired', field: 'spec.source', detail });
  else if (hasName && hasInline) errs.push({ type: 'FieldValueForbidden', field: 'spec.source', detail });
  else if (hasName && src.persistentVolumeName === '') {
    errs.push({ type: 'FieldValueRequired', field: 'spec.source.persistentVolumeName', detail: 'must specify non empty persistentVolumeName' });
  } else if (hasInline) errs.push(...validatePersistentVolumeSpec(asObj(src.inlineVolumeSpec), 'spec.source.inlineVolumeSpec', true));
  return errs;
}

/** ValidateVolumeAttachmentUpdate: the spec is fixed. */
export function validateVolumeAttachmentUpdate(va: Obj, old: Obj): FieldError[] {
  const errs = validateVolumeAttachment(va);
  if (!isDeepStrictEqual(va.spec, old.spec)) errs.push(immutable('spec', va.spec));
  return errs;
}

function validateTokenRequests(reqs: unknown): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  list(reqs).forEach((r, i) => {
    const p = `spec.tokenRequests[${i}]`;
    const t = asObj(r);
    const aud = String(t.audience ?? '');
    if (seen.has(aud)) {
      errs.push({ type: 'FieldValueDuplicate', field: `${p}.audience`, value: aud, detail: '' });
      return;
    }
    seen.add(aud);
    const secs = t.expirationSeconds;
    if (typeof secs !== 'number') return;
    if (secs < 600)
      errs.push({ type: 'FieldValueInvalid', field: `${p}.expirationSeconds`, value: secs, detail: 'may not specify a duration less than 10 minutes' });
    if (secs > 2 ** 32)
      errs.push({ type: 'FieldValueInvalid', field: `${p}.expirationSeconds`, value: secs, detail: 'may not specify a duration larger than 2^32 seconds' });
  });
  return errs;
}

/** ValidateCSIDriver (after defaults): the name rule, the spec's enums and token requests. */
export function validateCSIDriver(d: Obj, name: string): FieldError[] {
  const errs = validateCSIDriverName(name, 'metadata.name');
  const spec = asObj(d.spec);
  for (const k of ['attachRequired', 'podInfoOnMount', 'storageCapacity', 'requiresRepublish']) {
    if (spec[k] === undefined || spec[k] === null) errs.push({ type: 'FieldValueRequired', field: `spec.${k}`, detail: '' });
  }
  if (spec.fsGroupPolicy !== undefined && !FS_GROUP_POLICIES.includes(String(spec.fsGroupPolicy)))
    errs.push(unsupported('spec.fsGroupPolicy', spec.fsGroupPolicy, FS_GROUP_POLICIES));
  for (const m of list(spec.volumeLifecycleModes))
    if (!LIFECYCLE_MODES.includes(String(m))) errs.push(unsupported('spec.volumeLifecycleModes', m, LIFECYCLE_MODES));
  errs.push(...validateTokenRequests(spec.tokenRequests));
  const period = spec.nodeAllocatableUpdatePeriodSeconds;
  if (typeof period === 'number' && period < 10) {
    errs.push({
      type: 'FieldValueInvalid',
      field: 'spec.nodeAllocatableUpdatePeriodSeconds',
      value: period,
      detail: 'must be greater than or equal to 10 seconds',
    });
  }
  return errs;
}

/** ValidateCSIDriverUpdate: attachRequired, fsGroupPolicy, podInfoOnMount, volumeLifecycleModes are fixed. */
export function validateCSIDriverUpdate(d: Obj, old: Obj, name: string): FieldError[] {
  const errs = validateCSIDriver(d, name);
  const spec = asObj(d.spec);
  const before = asObj(old.spec);
  for (const k of ['attachRequired', 'fsGroupPolicy', 'podInfoOnMount', 'volumeLifecycleModes']) {
    if (!isDeepStrictEqual(spec[k] ?? null, before[k] ?? null)) {
      const v = spec[k];
      // A slice prints as Go prints it (the internal type; nil when absent).
      errs.push(immutable(`spec.${k}`, k === 'volumeLifecycleModes' ? goSlice(Array.isArray(v) ? v : undefined, '[]storage.VolumeLifecycleMode') : v));
    }
  }
  return errs;
}

/** ValidateCSINode: each driver a CSI name, unique, with a nodeID and valid topology keys. */
export function validateCSINode(n: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  list(asObj(n.spec).drivers).forEach((dr, i) => {
    const p = `spec.drivers[${i}]`;
    const drv = asObj(dr);
    errs.push(...validateCSIDriverName(drv.name, `${p}.name`));
    if (seen.has(String(drv.name))) errs.push({ type: 'FieldValueDuplicate', field: `${p}.name`, value: drv.name, detail: '' });
    seen.add(String(drv.name));
    const id = drv.nodeID;
    if (id === undefined || id === '') errs.push({ type: 'FieldValueRequired', field: `${p}.nodeID`, detail: '' });
    else if (String(id).length > CSI_NODE_ID_MAX_LENGTH)
      errs.push({ type: 'FieldValueInvalid', field: `${p}.nodeID`, value: id, detail: `must be ${CSI_NODE_ID_MAX_LENGTH} characters or less` });
    const keys = list(drv.topologyKeys);
    if (keys.length > MAX_TOPOLOGY_KEYS)
      errs.push({ type: 'FieldValueTooMany', field: `${p}.topologyKeys`, value: keys.length, detail: `must have at most ${MAX_TOPOLOGY_KEYS} items` });
    const seenKeys = new Set<string>();
    keys.forEach((k, j) => {
      for (const m of isQualifiedName(String(k))) errs.push({ type: 'FieldValueInvalid', field: `${p}.topologyKeys[${j}]`, value: k, detail: m });
      if (seenKeys.has(String(k))) errs.push({ type: 'FieldValueDuplicate', field: `${p}.topologyKeys[${j}]`, value: k, detail: '' });
      seenKeys.add(String(k));
    });
    const count = asObj(drv.allocatable).count;
    if (typeof count === 'number' && count < 0)
      errs.push({ type: 'FieldValueInvalid', field: `${p}.allocatable.count`, value: count, detail: 'must be greater than or equal to 0' });
  });
  return errs;
}

/**
 * ValidateCSINodeUpdate: a driver kept under its name keeps its nodeID, allocatable and
 * topologyKeys. The old drivers are indexed by name (the first of each, as a search from the
 * start finds), so each driver finds its old one in one lookup.
 */
export function validateCSINodeUpdate(n: Obj, old: Obj): FieldError[] {
  const errs = validateCSINode(n);
  const before = new Map<unknown, Obj>();
  for (const b of list(asObj(old.spec).drivers).map(asObj)) if (!before.has(b.name)) before.set(b.name, b);
  list(asObj(n.spec).drivers).forEach((dr, j) => {
    const drv = asObj(dr);
    const o = before.get(drv.name);
    if (!o) return;
    const p = `spec.drivers[${j}]`;
    if (o.nodeID !== drv.nodeID) errs.push(immutable(`${p}.nodeID`, drv.nodeID));
    if (!isDeepStrictEqual(o.allocatable ?? null, drv.allocatable ?? null)) errs.push(immutable(`${p}.allocatable`, drv.allocatable));
    if (!isDeepStrictEqual(o.topologyKeys ?? [], drv.topologyKeys ?? []))
      errs.push(immutable(`${p}.topologyKeys`, goSlice(Array.isArray(drv.topologyKeys) ? drv.topologyKeys : undefined)));
  });
  return errs;
}

function nonNegative(v: unknown, field: string): FieldError[] {
  if (v === undefined || v === null) return [];
  try {
    return parseQuantity(String(v)).cmp(Quantity.fromInt(0)) < 0
      ? [{ type: 'FieldValueInvalid', field, value: String(v), detail: 'must be greater than or equal to 0' }]
      : [];
  } catch {
    return [{ type: 'FieldValueInvalid', field, value: v, detail: 'must be a valid resource quantity' }];
  }
}

/** ValidateCSIStorageCapacity: a class name (DNS subdomain) and quantities >= 0. */
export function validateCSIStorageCapacity(c: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const cls = c.storageClassName;
  if (cls === undefined || cls === '') errs.push({ type: 'FieldValueRequired', field: 'storageClassName', detail: '' });
  else for (const m of isDNS1123Subdomain(String(cls))) errs.push({ type: 'FieldValueInvalid', field: 'storageClassName', value: cls, detail: m });
  errs.push(...nonNegative(c.capacity, 'capacity'), ...nonNegative(c.maximumVolumeSize, 'maximumVolumeSize'));
  return errs;
}

/** ValidateCSIStorageCapacityUpdate: storageClassName and nodeTopology are fixed. */
export function validateCSIStorageCapacityUpdate(c: Obj, old: Obj): FieldError[] {
  const errs = validateCSIStorageCapacity(c);
  if (c.storageClassName !== old.storageClassName) errs.push(immutable('storageClassName', c.storageClassName));
  if (!isDeepStrictEqual(c.nodeTopology ?? null, old.nodeTopology ?? null)) errs.push(immutable('nodeTopology', c.nodeTopology));
  return errs;
}
