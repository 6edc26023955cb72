/**
 * Rules of ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding (kube's
 * pkg/apis/admissionregistration/validation ValidateValidatingAdmissionPolicy and
 * ValidateValidatingAdmissionPolicyBinding), the parts a user meets, with kube's field paths:
 * match constraints with resource rules, the failure policy, validations or audit annotations,
 * every CEL expression compiled (admission/policy/policy.model.ts), variable names, the
 * binding's policy name, parameter reference and validation actions.
 */
import { isQualifiedName, validateLabelSelector, type FieldError } from '@app/apimachinery';
import { compilePolicyExpression } from '../../admission/policy/policy.model.js';
import { FAILURE_POLICIES, MATCH_POLICIES, PARAMETER_NOT_FOUND_ACTIONS, VALIDATION_ACTIONS, VALIDATION_REASONS } from './admissionregistration.overlays.js';
import { validateRuleWithOperations } from './admissionregistration.validation.js';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(obj) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const present = (v: unknown) => v !== undefined && v !== null;
const required = (field: string, detail = ''): FieldError => ({ type: 'FieldValueRequired', field, detail });
const unsupported = (field: string, value: unknown, allowed: readonly string[]): FieldError => ({
  type: 'FieldValueNotSupported',
  field,
  value,
  detail: `supported values: ${allowed.map((v) => JSON.stringify(v)).join(', ')}`,
});
const MAX_MATCH_CONDITIONS = 64;
const CEL_IDENTIFIER = /^[_a-zA-Z][_a-zA-Z0-9]*$/;

/** An expression that must compile to `want`. */
function expressionErrors(expression: unknown, want: 'bool' | 'string' | 'any', path: string): FieldError[] {
  const e = str(expression);
  if (e.trim() === '') return [required(path)];
  const compiled = compilePolicyExpression(e, want);
  return compiled.error ? [{ type: 'FieldValueInvalid', field: path, value: e, detail: compiled.error }] : [];
}

function validateMatchResources(raw: unknown, path: string, requireRules: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const m = obj(raw);
  if (present(m.matchPolicy) && !MATCH_POLICIES.includes(str(m.matchPolicy))) errs.push(unsupported(`${path}.matchPolicy`, m.matchPolicy, MATCH_POLICIES));
  errs.push(...validateLabelSelector(m.namespaceSelector, `${path}.namespaceSelector`, {}));
  errs.push(...validateLabelSelector(m.objectSelector, `${path}.objectSelector`, {}));
  const rules = list(m.resourceRules);
  if (requireRules && rules.length === 0) errs.push(required(`${path}.resourceRules`));
  rules.forEach((r, i) => errs.push(...validateRuleWithOperations(r, `${path}.resourceRules[${i}]`)));
  list(m.excludeResourceRules).forEach((r, i) => errs.push(...validateRuleWithOperations(r, `${path}.excludeResourceRules[${i}]`)));
  return errs;
}

/** ValidateValidatingAdmissionPolicy. */
export function validateValidatingAdmissionPolicy(policy: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const spec = obj(policy.spec);
  if (present(spec.failurePolicy) && !FAILURE_POLICIES.includes(str(spec.failurePolicy)))
    errs.push(unsupported('spec.failurePolicy', spec.failurePolicy, FAILURE_POLICIES));
  if (present(spec.paramKind)) {
    const pk = obj(spec.paramKind);
    if (!str(pk.apiVersion)) errs.push(required('spec.paramKind.apiVersion'));
    else if (str(pk.apiVersion).split('/').length > 2)
      errs.push({ type: 'FieldValueInvalid', field: 'spec.paramKind.apiVersion', value: pk.apiVersion, detail: 'must be a group/version or a version' });
    if (!str(pk.kind)) errs.push(required('spec.paramKind.kind'));
  }
  if (!present(spec.matchConstraints)) errs.push(required('spec.matchConstraints'));
  else errs.push(...validateMatchResources(spec.matchConstraints, 'spec.matchConstraints', true));
  const validations = list(spec.validations);
  const annotations = list(spec.auditAnnotations);
  if (validations.length === 0 && annotations.length === 0)
    errs.push(required('spec.validations', 'validations or auditAnnotations must contain at least one item'));
  validations.forEach((v, i) => {
    const p = `spec.validations[${i}]`;
    errs.push(...expressionErrors(v.expression, 'bool', `${p}.expression`));
    if (str(v.message).includes('\n'))
      errs.push({ type: 'FieldValueInvalid', field: `${p}.message`, value: v.message, detail: 'message must not contain line breaks' });
    if (present(v.reason) && !VALIDATION_REASONS.includes(str(v.reason))) errs.push(unsupported(`${p}.reason`, v.reason, VALIDATION_REASONS));
    if (str(v.messageExpression).trim() !== '') errs.push(...expressionErrors(v.messageExpression, 'string', `${p}.messageExpression`));
  });
  const keys = new Set<string>();
  annotations.forEach((a, i) => {
    const p = `spec.auditAnnotations[${i}]`;
    const key = str(a.key);
    if (!key) errs.push(required(`${p}.key`));
    else if (keys.has(key)) errs.push({ type: 'FieldValueDuplicate', field: `${p}.key`, value: key, detail: '' });
    keys.add(key);
    errs.push(...expressionErrors(a.valueExpression, 'any', `${p}.valueExpression`));
  });
  const conditions = list(spec.matchConditions);
  if (conditions.length > MAX_MATCH_CONDITIONS)
    errs.push({
      type: 'FieldValueTooMany',
      field: 'spec.matchConditions',
      value: conditions.length,
      detail: `must have at most ${MAX_MATCH_CONDITIONS} items`,
    });
  const conditionNames = new Set<string>();
  conditions.forEach((c, i) => {
    const p = `spec.matchConditions[${i}]`;
    const name = str(c.name);
    if (!name) errs.push(required(`${p}.name`));
    else {
      for (const m of isQualifiedName(name)) errs.push({ type: 'FieldValueInvalid', field: `${p}.name`, value: name, detail: m });
      if (conditionNames.has(name)) errs.push({ type: 'FieldValueDuplicate', field: `${p}.name`, value: name, detail: '' });
      conditionNames.add(name);
    }
    errs.push(...expressionErrors(c.expression, 'bool', `${p}.expression`));
  });
  const variableNames = new Set<string>();
  list(spec.variables).forEach((v, i) => {
    const p = `spec.variables[${i}]`;
    const name = str(v.name);
    if (!name) errs.push(required(`${p}.name`));
    else if (!CEL_IDENTIFIER.test(name))
      errs.push({ type: 'FieldValueInvalid', field: `${p}.name`, value: name, detail: 'name is not a valid CEL identifier' });
    else if (variableNames.has(name)) errs.push({ type: 'FieldValueDuplicate', field: `${p}.name`, value: name, detail: '' });
    variableNames.add(name);
    errs.push(...expressionErrors(v.expression, 'any', `${p}.expression`));
  });
  return errs;
}

/** ValidateValidatingAdmissionPolicyBinding. */
export function validateValidatingAdmissionPolicyBinding(binding: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const spec = obj(binding.spec);
  if (!str(spec.policyName)) errs.push(required('spec.policyName'));
  if (present(spec.paramRef)) {
    const ref = obj(spec.paramRef);
    if (str(ref.name) && present(ref.selector))
      errs.push({ type: 'FieldValueForbidden', field: 'spec.paramRef.name', detail: 'name and selector are mutually exclusive' });
    if (!str(ref.name) && !present(ref.selector)) errs.push(required('spec.paramRef', 'one of name or selector must be specified'));
    if (present(ref.selector)) errs.push(...validateLabelSelector(ref.selector, 'spec.paramRef.selector', {}));
    if (!present(ref.parameterNotFoundAction)) errs.push(required('spec.paramRef.parameterNotFoundAction'));
    else if (!PARAMETER_NOT_FOUND_ACTIONS.includes(str(ref.parameterNotFoundAction)))
      errs.push(unsupported('spec.paramRef.parameterNotFoundAction', ref.parameterNotFoundAction, PARAMETER_NOT_FOUND_ACTIONS));
  }
  if (present(spec.matchResources)) errs.push(...validateMatchResources(spec.matchResources, 'spec.matchResources', false));
  const actions = Array.isArray(spec.validationActions) ? spec.validationActions : [];
  if (actions.length === 0) errs.push(required('spec.validationActions', 'at least one validation action is required'));
  const seen = new Set<string>();
  actions.forEach((a: unknown, i) => {
    const p = `spec.validationActions[${i}]`;
    if (!VALIDATION_ACTIONS.includes(str(a))) errs.push(unsupported(p, a, VALIDATION_ACTIONS));
    else if (seen.has(str(a))) errs.push({ type: 'FieldValueDuplicate', field: p, value: a, detail: '' });
    seen.add(str(a));
  });
  if (seen.has('Deny') && seen.has('Warn'))
    errs.push({
      type: 'FieldValueInvalid',
      field: 'spec.validationActions',
      value: actions,
      detail: 'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
    });
  return errs;
}
