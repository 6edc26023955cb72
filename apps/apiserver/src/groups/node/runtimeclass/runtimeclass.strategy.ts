/**
 * RuntimeClass rules (pkg/apis/node/validation): the handler is a DNS label and immutable; the
 * scheduling node selector and tolerations follow the pod rules for them.
 */
import { isDNS1123Label, isQualifiedName, isValidLabelValue, type FieldError, type KubeObject } from '@app/apimachinery';
import type { Strategy } from '@app/registry';
import { asMap } from '../../core/core.helpers.js';

/** ValidateTolerations (pkg/apis/core/validation) for a list at `path`. */
export function validateTolerations(tolerations: unknown, path: string): FieldError[] {
  if (!Array.isArray(tolerations)) return [];
  const errs: FieldError[] = [];
  tolerations.forEach((raw, i) => {
    const t = asMap(raw);
    const at = `${path}[${i}]`;
    const key = typeof t.key === 'string' ? t.key : '';
    const operator = typeof t.operator === 'string' ? t.operator : '';
    if (key) for (const m of isQualifiedName(key)) errs.push({ type: 'FieldValueInvalid', field: `${at}.key`, value: key, detail: m });
    if (!key && operator !== 'Exists') {
      errs.push({
        type: 'FieldValueInvalid',
        field: `${at}.operator`,
        value: operator,
        detail: 'operator must be Exists when `key` is empty, which means "match all values and all keys"',
      });
    }
    if (t.tolerationSeconds !== undefined && t.tolerationSeconds !== null && t.effect !== 'NoExecute') {
      errs.push({
        type: 'FieldValueInvalid',
        field: `${at}.effect`,
        value: t.effect ?? '',
        detail: "effect must be 'NoExecute' when `tolerationSeconds` is set",
      });
    }
    const value = typeof t.value === 'string' ? t.value : '';
    if (operator === '' || operator === 'Equal') {
      for (const m of isValidLabelValue(value)) errs.push({ type: 'FieldValueInvalid', field: `${at}.operator`, value, detail: m });
    } else if (operator === 'Exists') {
      if (value) errs.push({ type: 'FieldValueInvalid', field: `${at}.operator`, value, detail: "value must be empty when `operator` is 'Exists'" });
    }
  });
  return errs;
}

/** ValidateRuntimeClass, without ObjectMeta (the store checks that). */
export function validateRuntimeClass(rc: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const handler = typeof rc.handler === 'string' ? rc.handler : '';
  for (const m of isDNS1123Label(handler)) errs.push({ type: 'FieldValueInvalid', field: 'handler', value: handler, detail: m });
  const scheduling = asMap(rc.scheduling);
  for (const [k, v] of Object.entries(asMap(scheduling.nodeSelector))) {
    for (const m of isQualifiedName(k)) errs.push({ type: 'FieldValueInvalid', field: 'scheduling.nodeSelector', value: k, detail: m });
    for (const m of isValidLabelValue(String(v))) errs.push({ type: 'FieldValueInvalid', field: 'scheduling.nodeSelector', value: v, detail: m });
  }
  errs.push(...validateTolerations(scheduling.tolerations, 'scheduling.tolerations'));
  return errs;
}

/** The RuntimeClass strategy. */
export const runtimeClassStrategy: Strategy = {
  validate: validateRuntimeClass,
  validateUpdate(rc, old) {
    const errs = validateRuntimeClass(rc);
    if (rc.handler !== old.handler) errs.push({ type: 'FieldValueInvalid', field: 'handler', value: rc.handler, detail: 'field is immutable' });
    return errs;
  },
};
