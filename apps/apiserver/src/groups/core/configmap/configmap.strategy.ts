/**
 * ConfigMap behaviour (pkg/apis/core/validation ValidateConfigMap): key rules and the size
 * limit over data and binaryData, and no data change once `immutable` is set.
 */
import type { Strategy } from '@app/registry';
import { b64Len, utf8Len, validateDataMaps, validateImmutable, type DataMap } from '../data-maps.validation.js';

const MAPS: DataMap[] = [
  { field: 'data', decode: utf8Len },
  { field: 'binaryData', decode: b64Len },
];

/** The ConfigMap strategy. */
export const configMapStrategy: Strategy = {
  validate(obj) {
    return validateDataMaps(obj, MAPS);
  },
  validateUpdate(obj, old) {
    return [...validateDataMaps(obj, MAPS), ...validateImmutable(obj, old, ['data', 'binaryData'])];
  },
};
