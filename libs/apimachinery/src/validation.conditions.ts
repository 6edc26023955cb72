/**
 * meta/v1 Condition lists (apimachinery pkg/apis/meta/v1/validation ValidateConditions), with
 * Kubernetes' messages and field paths, for kinds whose status holds metav1.Conditions.
 */
import type { FieldError } from './errors.js';
import { isQualifiedName, regexError } from './validation.names.js';

const STATUSES = ['False', 'True', 'Unknown'];
const MAX_REASON = 1024;
const MAX_MESSAGE = 32 * 1024;
const REASON_FMT = '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?';
const REASON_RE = new RegExp(`^${REASON_FMT}$`);
const REASON_MSG =
  "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'";

const asObj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/**
 * ValidateConditions: each type once and a qualified name, status True, False or Unknown,
 * observedGeneration not negative, lastTransitionTime and reason set, the reason's syntax and
 * length, the message's length.
 */
export function validateConditions(conditions: unknown, path: string): FieldError[] {
  if (!Array.isArray(conditions)) return [];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  conditions.forEach((raw, i) => {
    const c = asObj(raw);
    const at = `${path}[${i}]`;
    const type = typeof c.type === 'string' ? c.type : '';
    if (seen.has(type)) errs.push({ type: 'FieldValueDuplicate', field: `${at}.type`, value: type, detail: '' });
    seen.add(type);
    for (const detail of isQualifiedName(type)) errs.push({ type: 'FieldValueInvalid', field: `${at}.type`, value: type, detail });
    if (!STATUSES.includes(String(c.status ?? ''))) {
      errs.push({
        type: 'FieldValueNotSupported',
        field: `${at}.status`,
        value: c.status ?? '',
        detail: `supported values: ${STATUSES.map((s) => `"${s}"`).join(', ')}`,
      });
    }
    if (typeof c.observedGeneration === 'number' && c.observedGeneration < 0) {
      errs.push({ type: 'FieldValueInvalid', field: `${at}.observedGeneration`, value: c.observedGeneration, detail: 'must be greater than or equal to zero' });
    }
    if (typeof c.lastTransitionTime !== 'string' || c.lastTransitionTime === '') {
      errs.push({ type: 'FieldValueRequired', field: `${at}.lastTransitionTime`, detail: 'must be set' });
    }
    const reason = typeof c.reason === 'string' ? c.reason : '';
    if (reason === '') errs.push({ type: 'FieldValueRequired', field: `${at}.reason`, detail: 'must be set' });
    else {
      if (!REASON_RE.test(reason)) {
        errs.push({
          type: 'FieldValueInvalid',
          field: `${at}.reason`,
          value: reason,
          detail: regexError(REASON_MSG, REASON_FMT, 'my_name', 'MY_NAME', 'MyName', 'ReasonA,ReasonB', 'ReasonA:ReasonB'),
        });
      }
      if (reason.length > MAX_REASON) errs.push({ type: 'FieldValueTooLong', field: `${at}.reason`, detail: `may not be more than ${MAX_REASON} bytes` });
    }
    if (typeof c.message === 'string' && c.message.length > MAX_MESSAGE) {
      errs.push({ type: 'FieldValueTooLong', field: `${at}.message`, detail: `may not be more than ${MAX_MESSAGE} bytes` });
    }
  });
  return errs;
}
