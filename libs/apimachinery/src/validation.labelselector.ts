/**
 * meta/v1 LabelSelector rules (apimachinery pkg/apis/meta/v1/validation ValidateLabelSelector),
 * with Kubernetes' messages and field paths, for kinds that store a selector as data (webhook
 * configurations' namespaceSelector and objectSelector).
 */
import type { FieldError } from './errors.js';
import { isQualifiedName, isValidLabelValue } from './validation.names.js';
import { validateLabels } from './validation.objectmeta.js';

/** Options of `validateLabelSelector`, as LabelSelectorValidationOptions. */
export interface LabelSelectorValidationOptions {
  /** Keep accepting values that are not label values (an update of an object already stored with them). */
  allowInvalidLabelValueInSelector?: boolean;
}

const asObj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/**
 * ValidateLabelSelector: matchLabels as labels, then each requirement: In/NotIn need values,
 * Exists/DoesNotExist take none, any other operator is invalid; the key is a label key and,
 * unless allowed, every value a label value. Nothing for an absent selector.
 */
export function validateLabelSelector(selector: unknown, path: string, opts: LabelSelectorValidationOptions = {}): FieldError[] {
  if (selector === undefined || selector === null) return [];
  const s = asObj(selector);
  const errs = validateLabels(s.matchLabels, `${path}.matchLabels`);
  const exprs = Array.isArray(s.matchExpressions) ? s.matchExpressions : [];
  exprs.forEach((raw, i) => {
    const r = asObj(raw);
    const at = `${path}.matchExpressions[${i}]`;
    const values = Array.isArray(r.values) ? r.values : [];
    switch (r.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0)
          errs.push({ type: 'FieldValueRequired', field: `${at}.values`, detail: "must be specified when `operator` is 'In' or 'NotIn'" });
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0)
          errs.push({ type: 'FieldValueForbidden', field: `${at}.values`, detail: "may not be specified when `operator` is 'Exists' or 'DoesNotExist'" });
        break;
      default:
        errs.push({ type: 'FieldValueInvalid', field: `${at}.operator`, value: r.operator ?? '', detail: 'not a valid selector operator' });
    }
    const key = typeof r.key === 'string' ? r.key : '';
    for (const m of isQualifiedName(key)) errs.push({ type: 'FieldValueInvalid', field: `${at}.key`, value: key, detail: m });
    if (!opts.allowInvalidLabelValueInSelector) {
      values.forEach((v, j) => {
        const value = String(v);
        for (const m of isValidLabelValue(value)) errs.push({ type: 'FieldValueInvalid', field: `${at}.values[${j}]`, value, detail: m });
      });
    }
  });
  return errs;
}
