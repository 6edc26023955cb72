/**
 * FlowSchema rules (pkg/apis/flowcontrol/validation ValidateFlowSchema): matching precedence
 * in 1-10000, a referenced priority level, a known distinguisher, and rules whose subjects and
 * resource or non-resource rules are complete.
 */
import type { FieldError, KubeObject } from '@app/apimachinery';
import { STATUS_STRATEGY, type Strategy, type SubresourceStrategy } from '@app/registry';
import { asMap } from '../../core/core.helpers.js';

const strs = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const supported = (vals: readonly string[]) => `supported values: ${vals.map((v) => JSON.stringify(v)).join(', ')}`;

function validateVerbs(verbs: string[], path: string, errs: FieldError[]): void {
  if (verbs.length === 0) errs.push({ type: 'FieldValueRequired', field: path, detail: 'verbs must contain at least one value' });
  else if (verbs.length > 1 && verbs.includes('*'))
    errs.push({ type: 'FieldValueInvalid', field: path, value: verbs, detail: "if '*' is present, must not specify other verbs" });
}

function validateSubject(s: Record<string, unknown>, at: string, errs: FieldError[]): void {
  const kind = typeof s.kind === 'string' ? s.kind : '';
  const member: Record<string, string> = { User: 'user', Group: 'group', ServiceAccount: 'serviceAccount' };
  const field = member[kind];
  if (!field) {
    errs.push({ type: 'FieldValueNotSupported', field: `${at}.kind`, value: kind, detail: supported(['Group', 'ServiceAccount', 'User']) });
    return;
  }
  const m = s[field];
  if (m === undefined || m === null) {
    errs.push({ type: 'FieldValueRequired', field: `${at}.${field}`, detail: `${field} is required when subject kind is '${kind}'` });
    return;
  }
  const mm = asMap(m);
  if (kind === 'ServiceAccount') {
    if (!mm.name) errs.push({ type: 'FieldValueRequired', field: `${at}.serviceAccount.name`, detail: 'name is required' });
    if (!mm.namespace) errs.push({ type: 'FieldValueRequired', field: `${at}.serviceAccount.namespace`, detail: 'namespace is required' });
  } else if (!mm.name) {
    errs.push({ type: 'FieldValueRequired', field: `${at}.${field}.name`, detail: kind === 'User' ? 'username is required' : 'name is required' });
  }
  for (const other of Object.values(member)) {
    if (other !== field && s[other] !== undefined && s[other] !== null) {
      errs.push({
        type: 'FieldValueForbidden',
        field: `${at}.${other}`,
        detail: `${other} is forbidden when subject kind is not '${Object.keys(member).find((k) => member[k] === other)}'`,
      });
    }
  }
}

/** ValidateFlowSchemaSpec at `spec`. */
export function validateFlowSchema(fs: KubeObject): FieldError[] {
  const spec = asMap(fs.spec);
  const errs: FieldError[] = [];
  const mp = spec.matchingPrecedence;
  if (typeof mp === 'number') {
    if (mp <= 0) errs.push({ type: 'FieldValueInvalid', field: 'spec.matchingPrecedence', value: mp, detail: 'must be a positive value' });
    if (mp > 10000) errs.push({ type: 'FieldValueInvalid', field: 'spec.matchingPrecedence', value: mp, detail: 'must not be greater than 10000' });
  }
  if (spec.distinguisherMethod !== undefined && spec.distinguisherMethod !== null) {
    const t = asMap(spec.distinguisherMethod).type;
    if (t !== 'ByUser' && t !== 'ByNamespace') {
      errs.push({ type: 'FieldValueNotSupported', field: 'spec.distinguisherMethod.type', value: t ?? '', detail: supported(['ByNamespace', 'ByUser']) });
    }
  }
  if (!asMap(spec.priorityLevelConfiguration).name) {
    errs.push({ type: 'FieldValueRequired', field: 'spec.priorityLevelConfiguration.name', detail: 'must reference a priority level' });
  }
  (Array.isArray(spec.rules) ? spec.rules.map(asMap) : []).forEach((r, i) => {
    const at = `spec.rules[${i}]`;
    const subjects = Array.isArray(r.subjects) ? r.subjects.map(asMap) : [];
    if (subjects.length === 0) errs.push({ type: 'FieldValueRequired', field: `${at}.subjects`, detail: 'subjects must contain at least one value' });
    subjects.forEach((s, j) => validateSubject(s, `${at}.subjects[${j}]`, errs));
    const resourceRules = Array.isArray(r.resourceRules) ? r.resourceRules.map(asMap) : [];
    const nonResourceRules = Array.isArray(r.nonResourceRules) ? r.nonResourceRules.map(asMap) : [];
    if (resourceRules.length === 0 && nonResourceRules.length === 0) {
      errs.push({ type: 'FieldValueRequired', field: at, detail: 'at least one of resourceRules and nonResourceRules has to be non-empty' });
    }
    resourceRules.forEach((rr, j) => {
      const rat = `${at}.resourceRules[${j}]`;
      validateVerbs(strs(rr.verbs), `${rat}.verbs`, errs);
      if (strs(rr.apiGroups).length === 0)
        errs.push({ type: 'FieldValueRequired', field: `${rat}.apiGroups`, detail: 'resource rules must supply at least one api group' });
      if (strs(rr.resources).length === 0)
        errs.push({ type: 'FieldValueRequired', field: `${rat}.resources`, detail: 'resource rules must supply at least one resource' });
      if (strs(rr.namespaces).length === 0 && rr.clusterScope !== true) {
        errs.push({
          type: 'FieldValueRequired',
          field: `${rat}.namespaces`,
          detail: 'resource rules that are not cluster scoped must supply at least one namespace',
        });
      }
    });
    nonResourceRules.forEach((nr, j) => {
      const nat = `${at}.nonResourceRules[${j}]`;
      validateVerbs(strs(nr.verbs), `${nat}.verbs`, errs);
      if (strs(nr.nonResourceURLs).length === 0)
        errs.push({ type: 'FieldValueRequired', field: `${nat}.nonResourceURLs`, detail: 'nonResourceURLs must contain at least one value' });
    });
  });
  return errs;
}

/** The FlowSchema strategy: status starts empty and is written through /status only. */
export const flowSchemaStrategy: Strategy = {
  prepareForCreate(fs) {
    fs.status = {};
  },
  validate: validateFlowSchema,
  validateUpdate: (fs) => validateFlowSchema(fs),
};

/** /status of FlowSchema and PriorityLevelConfiguration: only status changes. */
export const flowcontrolStatusStrategy: SubresourceStrategy = {
  prepareForUpdate: (obj, old, ctx) => STATUS_STRATEGY.prepareForUpdate(obj, old, ctx),
  validateUpdate: () => [],
};
