/**
 * Rules ConfigMap and Secret share for their data maps (pkg/apis/core/validation
 * ValidateConfigMap/ValidateSecret): key syntax, a key in only one map, the total size limit,
 * and the `immutable` flag.
 */
import type { FieldError, KubeObject } from '@app/apimachinery';
import { asMap } from './core.helpers.js';

/** Total size limit of ConfigMap and Secret data (Kubernetes MaxSecretSize / TotalSizeLimitBytes: 1 MiB). */
export const MAX_DATA_BYTES = 1024 * 1024;

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;

/** IsConfigMapKey (apimachinery/pkg/util/validation): the detail message, or undefined when valid. */
export function configMapKeyError(key: string): string | undefined {
  if (key.length > 253) return 'must be no more than 253 characters';
  if (!CONFIG_KEY.test(key))
    return "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
  if (key === '.') return "must not be '.'";
  if (key === '..') return "must not be '..'";
  if (key.startsWith('..')) return "must not start with '..'";
  return undefined;
}

/** One data map of an object: its field name and how many bytes a value counts for. */
export interface DataMap {
  field: string;
  decode: (v: unknown) => number;
}

/** Key rules, overlap of the maps and the total size limit, for ConfigMap and Secret. */
export function validateDataMaps(obj: KubeObject, maps: DataMap[]): FieldError[] {
  const errs: FieldError[] = [];
  let total = 0;
  maps.forEach((m, i) => {
    for (const [k, v] of Object.entries(asMap(obj[m.field]))) {
      const e = configMapKeyError(k);
      if (e) errs.push({ type: 'FieldValueInvalid', field: `${m.field}[${k}]`, value: k, detail: e });
      // As ValidateConfigMap: the key of the first map is reported, naming the map it repeats in.
      const later = maps.slice(i + 1).find((o) => Object.prototype.hasOwnProperty.call(asMap(obj[o.field]), k));
      if (later) errs.push({ type: 'FieldValueInvalid', field: `${m.field}[${k}]`, value: k, detail: `duplicate of key present in ${later.field}` });
      total += m.decode(v);
    }
  });
  if (total > MAX_DATA_BYTES) {
    errs.push({ type: 'FieldValueTooLong', field: maps.length > 1 ? '' : maps[0].field, detail: `must have at most ${MAX_DATA_BYTES} bytes` });
  }
  return errs;
}

/** Immutable ConfigMap/Secret: the data fields cannot change and `immutable` cannot be unset. */
export function validateImmutable(obj: KubeObject, old: KubeObject, fields: string[]): FieldError[] {
  if (old.immutable !== true) return [];
  const errs: FieldError[] = [];
  if (obj.immutable !== true) errs.push({ type: 'FieldValueForbidden', field: 'immutable', detail: 'field is immutable when `immutable` is set' });
  for (const f of fields) {
    if (JSON.stringify(obj[f] ?? {}) !== JSON.stringify(old[f] ?? {})) {
      errs.push({ type: 'FieldValueForbidden', field: f, detail: 'field is immutable when `immutable` is set' });
    }
  }
  return errs;
}

/** Bytes of a UTF-8 string value. */
export const utf8Len = (v: unknown): number => (typeof v === 'string' ? Buffer.byteLength(v, 'utf8') : 0);
/** Bytes of a base64 value once decoded. */
export const b64Len = (v: unknown): number => (typeof v === 'string' ? Buffer.from(v, 'base64').length : 0);
