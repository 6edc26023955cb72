/**
 * PersistentVolumeClaim behaviour (pkg/apis/core/validation ValidatePersistentVolumeClaim*,
 * pkg/registry/core/persistentvolumeclaim): access modes, requests.storage > 0, class name,
 * volume mode and data sources on create; after creation only resources.requests (and
 * volumeAttributesClassName) of a bound claim may change, never below status.capacity; status
 * is reset on create (phase Pending) and written through /status.
 */
import { isDeepStrictEqual } from 'node:util';
import { parseQuantity, type FieldError, type KubeObject } from '@app/apimachinery';
import type { Strategy } from '@app/registry';
import { asMap } from '../core.helpers.js';
import { claimWarnings } from '../pod/pod.warnings.js';
import { VOLUME_MODES } from '../core.overlays.js';
import { validateAccessModes, validateClassName, validatePositiveQuantity } from '../persistentvolume/persistentvolume.strategy.js';
import { BETA_STORAGE_CLASS_ANNOTATION } from '../../storage/storageclass/storageclass.kind.js';

function validateDataSource(ref: unknown, path: string): FieldError[] {
  if (ref === undefined || ref === null) return [];
  const r = asMap(ref);
  const errs: FieldError[] = [];
  if (!r.name) errs.push({ type: 'FieldValueRequired', field: `${path}.name`, detail: '' });
  if (!r.kind) errs.push({ type: 'FieldValueRequired', field: `${path}.kind`, detail: '' });
  const group = r.apiGroup ?? '';
  if (group === '' && r.kind && r.kind !== 'PersistentVolumeClaim') {
    errs.push({ type: 'FieldValueInvalid', field: path, value: r.kind, detail: "must be 'PersistentVolumeClaim' when referencing the default apiGroup" });
  }
  return errs;
}

/** ValidatePersistentVolumeClaimSpec at `path`. */
export function validateClaimSpec(spec: Record<string, unknown>, path: string): FieldError[] {
  const errs = validateAccessModes(spec.accessModes, `${path}.accessModes`, 'at least 1 access mode is required');
  const requests = asMap(asMap(spec.resources).requests);
  if (requests.storage === undefined) errs.push({ type: 'FieldValueRequired', field: `${path}.resources[storage]`, detail: '' });
  else errs.push(...validatePositiveQuantity(requests.storage, `${path}.resources[storage]`));
  errs.push(...validateClassName(spec.storageClassName, `${path}.storageClassName`));
  if (spec.volumeMode !== undefined && !VOLUME_MODES.includes(String(spec.volumeMode))) {
    errs.push({ type: 'FieldValueNotSupported', field: `${path}.volumeMode`, value: spec.volumeMode, detail: 'supported values: "Block", "Filesystem"' });
  }
  errs.push(...validateDataSource(spec.dataSource, `${path}.dataSource`), ...validateDataSource(spec.dataSourceRef, `${path}.dataSourceRef`));
  const ds = asMap(spec.dataSource);
  const dsr = asMap(spec.dataSourceRef);
  if (
    spec.dataSource &&
    spec.dataSourceRef &&
    (ds.kind !== dsr.kind || ds.name !== dsr.name || (ds.apiGroup ?? '') !== (dsr.apiGroup ?? '') || dsr.namespace)
  ) {
    errs.push({ type: 'FieldValueInvalid', field: `${path}.dataSource`, value: spec.dataSource, detail: 'must match dataSourceRef' });
  }
  return errs;
}

/**
 * Whether an update only gives a claim the class it lacked (kube's retroactive default
 * StorageClass; validateStorageClassUpgradeFromNil and ...FromAnnotation): no
 * `spec.storageClassName` before and a non-empty one now, the claim naming no class by the beta
 * annotation either; or the name the beta annotation already gave, copied into the spec.
 */
function classUpgrade(old: KubeObject, pvc: KubeObject): boolean {
  const before = asMap(old.spec).storageClassName;
  const after = asMap(pvc.spec).storageClassName;
  if ((before !== undefined && before !== null) || typeof after !== 'string' || after === '') return false;
  const oldAnn = asMap(old.metadata.annotations)[BETA_STORAGE_CLASS_ANNOTATION];
  return oldAnn === undefined || oldAnn === after;
}

/** The PersistentVolumeClaim strategy. */
export const persistentVolumeClaimStrategy: Strategy = {
  prepareForCreate(pvc) {
    pvc.status = { phase: 'Pending' };
  },
  validate(pvc, ctx) {
    ctx?.warnings.push(...claimWarnings(pvc));
    return validateClaimSpec(asMap(pvc.spec), 'spec');
  },
  validateUpdate(pvc, old, ctx) {
    ctx?.warnings.push(...claimWarnings(pvc));
    const errs = validateClaimSpec(asMap(pvc.spec), 'spec');
    const spec = asMap(pvc.spec);
    const before = asMap(old.spec);
    // A bound claim may change resources.requests and the attributes class; anything else is fixed.
    const without = (s: Record<string, unknown>) => {
      const { resources, volumeAttributesClassName: _v, ...rest } = s;
      const { requests: _r, ...res } = asMap(resources);
      return { ...rest, resources: res };
    };
    const bound = before.volumeName !== undefined && before.volumeName !== '';
    // An unbound claim's volumeName may be set once (the volume controller binds it so), and so
    // may its storageClassName when it had none (classUpgrade).
    const unboundSpec = (s: Record<string, unknown>) => ({
      ...s,
      volumeAttributesClassName: null,
      volumeName: null,
      ...(classUpgrade(old, pvc) ? { storageClassName: null } : {}),
    });
    const changed = bound ? !isDeepStrictEqual(without(spec), without(before)) : !isDeepStrictEqual(unboundSpec(spec), unboundSpec(before));
    if (changed) {
      errs.push({
        type: 'FieldValueForbidden',
        field: 'spec',
        detail: 'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims',
      });
    } else if (bound) {
      // A request may shrink (to recover from a failed expansion), but not to the capacity the
      // volume has (kube's RecoverVolumeExpansionFailure rule); an unchanged or grown request is fine.
      const capacity = asMap(asMap(old.status).capacity).storage;
      const req = asMap(asMap(spec.resources).requests).storage;
      const prev = asMap(asMap(before.resources).requests).storage;
      try {
        if (
          capacity !== undefined &&
          req !== undefined &&
          prev !== undefined &&
          parseQuantity(String(req)).cmp(parseQuantity(String(prev))) < 0 &&
          parseQuantity(String(req)).cmp(parseQuantity(String(capacity))) <= 0
        ) {
          errs.push({ type: 'FieldValueForbidden', field: 'spec.resources.requests.storage', detail: 'field can not be less than status.capacity' });
        }
      } catch {
        // an unparsable quantity is reported by validateClaimSpec
      }
    }
    return errs;
  },
};
