/**
 * ControllerRevision rules (pkg/apis/apps/validation ValidateControllerRevision): data is
 * mandatory and can never change; revision is not negative.
 */
import { isDeepStrictEqual } from 'node:util';
import type { FieldError, KubeObject } from '@app/apimachinery';
import type { Strategy } from '@app/registry';

/** ValidateControllerRevision, without ObjectMeta. */
export function validateControllerRevision(cr: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  if (cr.data === undefined || cr.data === null) errs.push({ type: 'FieldValueRequired', field: 'data', detail: 'data is mandatory' });
  if (typeof cr.revision === 'number' && cr.revision < 0) {
    errs.push({ type: 'FieldValueInvalid', field: 'revision', value: cr.revision, detail: 'must be greater than or equal to 0' });
  }
  return errs;
}

/** The ControllerRevision strategy. */
export const controllerRevisionStrategy: Strategy = {
  validate: validateControllerRevision,
  validateUpdate(cr, old) {
    const errs = validateControllerRevision(cr);
    if (!isDeepStrictEqual(cr.data ?? null, old.data ?? null))
      errs.push({ type: 'FieldValueInvalid', field: 'data', value: cr.data, detail: 'field is immutable' });
    return errs;
  },
};
