/**
 * PriorityLevelConfiguration rules (pkg/apis/flowcontrol/validation
 * ValidatePriorityLevelConfiguration): `exempt` is the one Exempt level, a Limited level has
 * limits (shares, lendable and borrowing percentages, a Queue or Reject response with sane
 * queuing) and an Exempt one none. The shares field depends on the version (flowcontrol.schema.ts).
 */
import type { FieldError, KubeObject } from '@app/apimachinery';
import type { Strategy } from '@app/registry';
import { asMap } from '../../core/core.helpers.js';
import { sharesField } from '../flowcontrol.schema.js';

const supported = (vals: readonly string[]) => `supported values: ${vals.map((v) => JSON.stringify(v)).join(', ')}`;
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

function lendable(v: unknown, field: string, errs: FieldError[]): void {
  const n = num(v);
  if (n !== undefined && (n < 0 || n > 100)) errs.push({ type: 'FieldValueInvalid', field, value: n, detail: 'must be between 0 and 100, inclusive' });
}

function validateQueuing(q: Record<string, unknown>, at: string, errs: FieldError[]): void {
  const qll = num(q.queueLengthLimit) ?? 0;
  const queues = num(q.queues) ?? 0;
  const hand = num(q.handSize) ?? 0;
  if (qll <= 0) errs.push({ type: 'FieldValueInvalid', field: `${at}.queueLengthLimit`, value: qll, detail: 'must be positive' });
  if (queues <= 0) errs.push({ type: 'FieldValueInvalid', field: `${at}.queues`, value: queues, detail: 'must be positive' });
  if (hand <= 0) errs.push({ type: 'FieldValueInvalid', field: `${at}.handSize`, value: hand, detail: 'must be positive' });
  else if (queues > 0 && hand > queues)
    errs.push({ type: 'FieldValueInvalid', field: `${at}.handSize`, value: hand, detail: `should not be greater than queues (${queues})` });
}

/** ValidatePriorityLevelConfiguration for an object at `version`. */
export function validatePriorityLevelConfiguration(pl: KubeObject, version: string): FieldError[] {
  const spec = asMap(pl.spec);
  const errs: FieldError[] = [];
  const type = typeof spec.type === 'string' ? spec.type : '';
  const name = pl.metadata.name ?? '';
  if ((name === 'exempt') !== (type === 'Exempt') && (type === 'Exempt' || type === 'Limited')) {
    errs.push({ type: 'FieldValueInvalid', field: 'spec.type', value: type, detail: "type must be 'Exempt' if and only if name is 'exempt'" });
  }
  const has = (k: string) => spec[k] !== undefined && spec[k] !== null;
  if (type === 'Limited') {
    if (!has('limited')) errs.push({ type: 'FieldValueRequired', field: 'spec.limited', detail: 'must not be empty when type is Limited' });
    if (has('exempt')) errs.push({ type: 'FieldValueForbidden', field: 'spec.exempt', detail: 'must be nil if the type is Limited' });
  } else if (type === 'Exempt') {
    if (has('limited')) errs.push({ type: 'FieldValueForbidden', field: 'spec.limited', detail: 'must be nil if the type is not Limited' });
  } else {
    errs.push({ type: 'FieldValueNotSupported', field: 'spec.type', value: type, detail: supported(['Exempt', 'Limited']) });
  }
  if (has('limited')) {
    const l = asMap(spec.limited);
    const f = sharesField(version);
    const shares = num(l[f]) ?? 0;
    // v1 admits 0 shares (a level that only borrows); the beta versions need a positive number.
    if (version === 'v1' ? shares < 0 : shares <= 0) {
      errs.push({
        type: 'FieldValueInvalid',
        field: `spec.limited.${f}`,
        value: shares,
        detail: version === 'v1' ? 'must be a non-negative integer' : 'must be positive',
      });
    }
    lendable(l.lendablePercent, 'spec.limited.lendablePercent', errs);
    const borrow = num(l.borrowingLimitPercent);
    if (borrow !== undefined && borrow < 0) {
      errs.push({
        type: 'FieldValueInvalid',
        field: 'spec.limited.borrowingLimitPercent',
        value: borrow,
        detail: 'if specified, must be a non-negative integer',
      });
    }
    const lr = asMap(l.limitResponse);
    const lrType = typeof lr.type === 'string' ? lr.type : '';
    const hasQueuing = lr.queuing !== undefined && lr.queuing !== null;
    if (lrType === 'Queue') {
      if (!hasQueuing) errs.push({ type: 'FieldValueRequired', field: 'spec.limited.limitResponse.queuing', detail: 'must not be empty if the type is Queue' });
      else validateQueuing(asMap(lr.queuing), 'spec.limited.limitResponse.queuing', errs);
    } else if (lrType === 'Reject') {
      if (hasQueuing)
        errs.push({
          type: 'FieldValueForbidden',
          field: 'spec.limited.limitResponse.queuing',
          detail: 'must be nil if limited.limitResponse.type is not Limited',
        });
    } else {
      errs.push({ type: 'FieldValueNotSupported', field: 'spec.limited.limitResponse.type', value: lrType, detail: supported(['Queue', 'Reject']) });
    }
  }
  if (has('exempt')) {
    const e = asMap(spec.exempt);
    const shares = num(e.nominalConcurrencyShares);
    if (shares !== undefined && shares < 0) {
      errs.push({ type: 'FieldValueInvalid', field: 'spec.exempt.nominalConcurrencyShares', value: shares, detail: 'must be a non-negative integer' });
    }
    lendable(e.lendablePercent, 'spec.exempt.lendablePercent', errs);
  }
  return errs;
}

/** The PriorityLevelConfiguration strategy of one served version. */
export function priorityLevelConfigurationStrategy(version: string): Strategy {
  return {
    prepareForCreate(pl) {
      pl.status = {};
    },
    validate: (pl) => validatePriorityLevelConfiguration(pl, version),
    validateUpdate: (pl) => validatePriorityLevelConfiguration(pl, version),
  };
}
