/**
 * Secret behaviour (pkg/apis/core/validation ValidateSecret, pkg/registry/core/secret): stringData
 * merged into data, type defaulting to Opaque and immutable, the keys each well-known type needs,
 * and stringData never returned.
 */
import type { FieldError, KubeObject } from '@app/apimachinery';
import type { Strategy } from '@app/registry';
import { asMap } from '../core.helpers.js';
import { b64Len, validateDataMaps, validateImmutable } from '../data-maps.validation.js';

/** Keys each well-known Secret type requires (pkg/apis/core/validation ValidateSecret). */
const SECRET_TYPE_KEYS: Record<string, string[]> = {
  'kubernetes.io/dockercfg': ['.dockercfg'],
  'kubernetes.io/dockerconfigjson': ['.dockerconfigjson'],
  'kubernetes.io/ssh-auth': ['ssh-privatekey'],
  'kubernetes.io/tls': ['tls.crt', 'tls.key'],
};

/** Merges write-only stringData into data (base64), overriding existing keys. */
function mergeStringData(obj: KubeObject): void {
  const sd = obj.stringData;
  if (sd && typeof sd === 'object' && !Array.isArray(sd)) {
    const data = { ...asMap(obj.data) };
    for (const [k, v] of Object.entries(sd as Record<string, unknown>)) {
      if (typeof v === 'string') data[k] = Buffer.from(v, 'utf8').toString('base64');
    }
    obj.data = data;
  }
  delete obj.stringData;
}

function validateSecret(obj: KubeObject): FieldError[] {
  const errs = validateDataMaps(obj, [{ field: 'data', decode: b64Len }]);
  const type = (obj.type as string | undefined) ?? 'Opaque';
  const data = asMap(obj.data);
  for (const k of SECRET_TYPE_KEYS[type] ?? []) {
    if (!(k in data)) errs.push({ type: 'FieldValueRequired', field: `data[${k}]`, detail: '' });
  }
  if (type === 'kubernetes.io/service-account-token') {
    const ann = asMap(obj.metadata.annotations);
    if (!ann['kubernetes.io/service-account.name']) {
      errs.push({ type: 'FieldValueRequired', field: 'metadata.annotations[kubernetes.io/service-account.name]', detail: '' });
    }
  }
  if (type === 'kubernetes.io/basic-auth' && !('username' in data) && !('password' in data)) {
    errs.push({ type: 'FieldValueRequired', field: 'data[username]', detail: '' });
  }
  return errs;
}

/** The Secret strategy. */
export const secretStrategy: Strategy = {
  prepareForCreate(obj) {
    mergeStringData(obj);
    if (!obj.type) obj.type = 'Opaque';
  },
  prepareForUpdate(obj) {
    mergeStringData(obj);
    if (!obj.type) obj.type = 'Opaque';
  },
  validate: validateSecret,
  validateUpdate(obj, old) {
    const errs = validateSecret(obj);
    if ((obj.type ?? 'Opaque') !== (old.type ?? 'Opaque')) {
      errs.push({ type: 'FieldValueInvalid', field: 'type', value: obj.type, detail: 'field is immutable' });
    }
    return [...errs, ...validateImmutable(obj, old, ['data'])];
  },
  decorate(obj) {
    delete obj.stringData;
  },
};
