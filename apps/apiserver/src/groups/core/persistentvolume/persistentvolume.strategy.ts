/**
 * PersistentVolume behaviour (pkg/apis/core/validation ValidatePersistentVolume*,
 * pkg/registry/core/persistentvolume): access modes, capacity, reclaim policy, class, node
 * affinity and exactly one source on create; the source, volume mode and a set node affinity
 * are immutable; status is reset on create (phase Pending) and written through /status, where a
 * change of phase stamps lastPhaseTransitionTime.
 */
import { isDeepStrictEqual } from 'node:util';
import { formatMetaTime, isDNS1123Subdomain, parseQuantity, Quantity, type FieldError } from '@app/apimachinery';
import { STATUS_STRATEGY, type Strategy, type SubresourceDeclaration } from '@app/registry';
import { asMap } from '../core.helpers.js';
import { ACCESS_MODES, RECLAIM_POLICIES, VOLUME_MODES } from '../core.overlays.js';
import { PERSISTENT_VOLUME_SOURCES, validatePersistentVolumeSource } from '../volume/volume.validation.js';

const supported = (field: string, value: unknown, allowed: readonly string[]): FieldError => ({
  type: 'FieldValueNotSupported',
  field,
  value,
  detail: `supported values: ${allowed.map((a) => JSON.stringify(a)).join(', ')}`,
});

/** Access modes: known values, ReadWriteOncePod alone (ValidatePersistentVolumeSpec/ClaimSpec). */
export function validateAccessModes(modes: unknown, path: string, requiredDetail: string): FieldError[] {
  if (!Array.isArray(modes) || modes.length === 0) return [{ type: 'FieldValueRequired', field: path, detail: requiredDetail }];
  const errs: FieldError[] = [];
  for (const m of modes) if (!ACCESS_MODES.includes(String(m))) errs.push(supported(path, m, ACCESS_MODES));
  if (modes.includes('ReadWriteOncePod') && modes.length > 1) {
    errs.push({ type: 'FieldValueForbidden', field: path, detail: 'may not use ReadWriteOncePod with other access modes' });
  }
  return errs;
}

/** A storage class name, when set: a DNS subdomain (ValidateClassName). */
export function validateClassName(name: unknown, path: string): FieldError[] {
  if (name === undefined || name === null || name === '') return [];
  return isDNS1123Subdomain(String(name)).map((m) => ({ type: 'FieldValueInvalid' as const, field: path, value: name, detail: m }));
}

/** A quantity that must parse and be > 0 (ValidatePositiveQuantityValue). */
export function validatePositiveQuantity(v: unknown, path: string): FieldError[] {
  let q;
  try {
    q = parseQuantity(String(v));
  } catch {
    return [{ type: 'FieldValueInvalid', field: path, value: v, detail: 'must be a valid resource quantity' }];
  }
  return q.cmp(Quantity.fromInt(0)) <= 0 ? [{ type: 'FieldValueInvalid', field: path, value: String(v), detail: 'must be greater than zero' }] : [];
}

/** ValidatePersistentVolumeSpec at `path` (`spec`, or a VolumeAttachment's inlineVolumeSpec). */
export function validatePersistentVolumeSpec(spec: Record<string, unknown>, path: string, inline: boolean): FieldError[] {
  const errs: FieldError[] = [];
  errs.push(...validateAccessModes(spec.accessModes, `${path}.accessModes`, ''));
  if (!inline) {
    const cap = asMap(spec.capacity);
    if (Object.keys(cap).length === 0) errs.push({ type: 'FieldValueRequired', field: `${path}.capacity`, detail: '' });
    for (const [k, v] of Object.entries(cap)) {
      if (k !== 'storage') errs.push(supported(`${path}.capacity`, k, ['storage']));
      else errs.push(...validatePositiveQuantity(v, `${path}.capacity[storage]`));
    }
    const rp = spec.persistentVolumeReclaimPolicy;
    if (rp !== undefined && !RECLAIM_POLICIES.includes(String(rp))) errs.push(supported(`${path}.persistentVolumeReclaimPolicy`, rp, RECLAIM_POLICIES));
    errs.push(...validateClassName(spec.storageClassName, `${path}.storageClassName`));
  }
  if (spec.volumeMode !== undefined && !VOLUME_MODES.includes(String(spec.volumeMode)))
    errs.push(supported(`${path}.volumeMode`, spec.volumeMode, VOLUME_MODES));
  const affinity = spec.nodeAffinity;
  if (affinity !== undefined && affinity !== null) {
    const required = asMap(affinity).required;
    if (required === undefined || required === null) {
      errs.push({ type: 'FieldValueRequired', field: `${path}.nodeAffinity.required`, detail: 'must specify required node constraints' });
    } else {
      const terms = asMap(required).nodeSelectorTerms;
      if (!Array.isArray(terms) || terms.length === 0) {
        errs.push({
          type: 'FieldValueRequired',
          field: `${path}.nodeAffinity.required.nodeSelectorTerms`,
          detail: 'must have at least one node selector term',
        });
      }
    }
  } else if (spec.local !== undefined && spec.local !== null && !inline) {
    errs.push({ type: 'FieldValueRequired', field: `${path}.nodeAffinity`, detail: 'Local volume requires node affinity' });
  }
  errs.push(...validatePersistentVolumeSource(spec, path));
  return errs;
}

/** The PersistentVolume strategy. */
export const persistentVolumeStrategy: Strategy = {
  prepareForCreate(pv, ctx) {
    pv.status = {
      phase: 'Pending',
      lastPhaseTransitionTime: formatMetaTime(ctx.now()),
    };
  },
  validate(pv) {
    return validatePersistentVolumeSpec(asMap(pv.spec), 'spec', false);
  },
  validateUpdate(pv, old) {
    const errs = validatePersistentVolumeSpec(asMap(pv.spec), 'spec', false);
    const spec = asMap(pv.spec);
    const before = asMap(old.spec);
    const source = (s: Record<string, unknown>) => PERSISTENT_VOLUME_SOURCES.map((k) => s[k] ?? null);
    if (!isDeepStrictEqual(source(spec), source(before))) {
      errs.push({ type: 'FieldValueForbidden', field: 'spec.persistentvolumesource', detail: 'spec.persistentvolumesource is immutable after creation' });
    }
    if ((spec.volumeMode ?? null) !== (before.volumeMode ?? null)) {
      errs.push({ type: 'FieldValueInvalid', field: 'spec.volumeMode', value: spec.volumeMode, detail: 'field is immutable' });
    }
    if (before.nodeAffinity && !isDeepStrictEqual(spec.nodeAffinity, before.nodeAffinity)) {
      errs.push({ type: 'FieldValueInvalid', field: 'spec.nodeAffinity', value: spec.nodeAffinity, detail: 'field is immutable' });
    }
    return errs;
  },
};

/** Kubernetes' short form of access modes in tables: RWO,ROX,RWX,RWOP. */
export function accessModesShort(modes: unknown): string {
  const short: Record<string, string> = { ReadWriteOnce: 'RWO', ReadOnlyMany: 'ROX', ReadWriteMany: 'RWX', ReadWriteOncePod: 'RWOP' };
  if (!Array.isArray(modes)) return '';
  const order = ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'];
  return order
    .filter((m) => modes.includes(m))
    .map((m) => short[m])
    .join(',');
}

/**
 * /status of a PersistentVolume (persistentVolumeStatusStrategy): only status changes; a new
 * phase gets lastPhaseTransitionTime now unless the writer set another time, and an unchanged
 * phase keeps the stored time when the writer left it out.
 */
export const persistentVolumeStatusSubresource: SubresourceDeclaration = {
  verbs: ['get', 'patch', 'update'],
  strategy: {
    prepareForUpdate(pv, old, ctx) {
      STATUS_STRATEGY.prepareForUpdate(pv, old, ctx);
      const status = asMap(pv.status);
      const before = asMap(old.status);
      const stamp = status.lastPhaseTransitionTime;
      if (status.phase === before.phase) {
        if (stamp === undefined && before.lastPhaseTransitionTime !== undefined)
          pv.status = { ...status, lastPhaseTransitionTime: before.lastPhaseTransitionTime };
      } else if (stamp === undefined || stamp === before.lastPhaseTransitionTime) {
        pv.status = { ...status, lastPhaseTransitionTime: formatMetaTime(ctx.now()) };
      }
    },
  },
};
