/**
 * Validation and defaulting shared by the four RBAC kinds, with kube-apiserver's messages
 * (pkg/apis/rbac/validation, pkg/apis/rbac/v1 defaults): rules need verbs and either
 * resources with API groups or non-resource URLs (the latter only cluster-wide); a binding's
 * roleRef names a Role or ClusterRole of this group and never changes; subjects are Users,
 * Groups (of this group) or ServiceAccounts (of the core group, with a namespace when the
 * binding is cluster-wide).
 */
import { goSlice, goStruct, isDNS1123Subdomain, labelSelectorFromStruct, type FieldError, type KubeObject, type LabelSelectorStruct } from '@app/apimachinery';
import { RBAC_GROUP } from './rbac.schema.js';

/** rbac/v1 PolicyRule as stored. */
export interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

/** rbac/v1 Subject. */
export interface Subject {
  kind?: string;
  apiGroup?: string;
  name?: string;
  namespace?: string;
}

/** rbac/v1 RoleRef. */
export interface RoleRef {
  apiGroup?: string;
  kind?: string;
  name?: string;
}

const len = (v: unknown): number => (Array.isArray(v) ? v.length : 0);
const quote = (vs: string[]): string => vs.map((v) => JSON.stringify(v)).join(', ');
const notSupported = (field: string, value: unknown, supported: string[]): FieldError => ({
  type: 'FieldValueNotSupported',
  field,
  value,
  detail: `supported values: ${quote(supported)}`,
});

/** ValidatePolicyRule. */
export function validatePolicyRule(rule: PolicyRule, namespaced: boolean, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (len(rule.verbs) === 0) errs.push({ type: 'FieldValueRequired', field: `${path}.verbs`, detail: 'verbs must contain at least one value' });
  if (len(rule.nonResourceURLs) > 0) {
    if (namespaced) {
      errs.push({
        type: 'FieldValueInvalid',
        field: `${path}.nonResourceURLs`,
        value: goSlice(rule.nonResourceURLs),
        detail: 'namespaced rules cannot apply to non-resource URLs',
      });
    }
    if (len(rule.apiGroups) > 0 || len(rule.resources) > 0 || len(rule.resourceNames) > 0) {
      errs.push({
        type: 'FieldValueInvalid',
        field: `${path}.nonResourceURLs`,
        value: goSlice(rule.nonResourceURLs),
        detail: 'rules cannot apply to both regular resources and non-resource URLs',
      });
    }
    return errs;
  }
  if (len(rule.apiGroups) === 0)
    errs.push({ type: 'FieldValueRequired', field: `${path}.apiGroups`, detail: 'resource rules must supply at least one api group' });
  if (len(rule.resources) === 0)
    errs.push({ type: 'FieldValueRequired', field: `${path}.resources`, detail: 'resource rules must supply at least one resource' });
  return errs;
}

/** The rules of a Role (namespaced) or ClusterRole. */
export function validateRules(obj: KubeObject, namespaced: boolean): FieldError[] {
  const rules = Array.isArray(obj.rules) ? (obj.rules as PolicyRule[]) : [];
  return rules.flatMap((r, i) => validatePolicyRule(r ?? {}, namespaced, `rules[${i}]`));
}

/** A ClusterRole's aggregationRule: at least one valid selector when present. */
export function validateAggregationRule(obj: KubeObject): FieldError[] {
  const rule = obj.aggregationRule as { clusterRoleSelectors?: LabelSelectorStruct[] } | null | undefined;
  if (rule === undefined || rule === null) return [];
  const sels = rule.clusterRoleSelectors ?? [];
  if (sels.length === 0) {
    return [
      {
        type: 'FieldValueRequired',
        field: 'aggregationRule.clusterRoleSelectors',
        detail: 'at least one clusterRoleSelector required if aggregationRule is non-nil',
      },
    ];
  }
  const errs: FieldError[] = [];
  sels.forEach((s, i) => {
    try {
      labelSelectorFromStruct(s);
    } catch (e) {
      errs.push({ type: 'FieldValueInvalid', field: `aggregationRule.clusterRoleSelectors[${i}]`, value: s, detail: (e as Error).message });
    }
  });
  return errs;
}

/** ValidateRoleBindingSubject. */
export function validateSubject(s: Subject, namespaced: boolean, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const name = s.name ?? '';
  if (name === '') errs.push({ type: 'FieldValueRequired', field: `${path}.name`, detail: '' });
  switch (s.kind) {
    case 'ServiceAccount':
      if (name !== '') for (const msg of isDNS1123Subdomain(name)) errs.push({ type: 'FieldValueInvalid', field: `${path}.name`, value: name, detail: msg });
      if ((s.apiGroup ?? '') !== '') errs.push(notSupported(`${path}.apiGroup`, s.apiGroup, ['']));
      if (!namespaced && (s.namespace ?? '') === '') errs.push({ type: 'FieldValueRequired', field: `${path}.namespace`, detail: '' });
      break;
    case 'User':
    case 'Group':
      if (s.apiGroup !== RBAC_GROUP) errs.push(notSupported(`${path}.apiGroup`, s.apiGroup ?? '', [RBAC_GROUP]));
      break;
    default:
      errs.push(notSupported(`${path}.kind`, s.kind ?? '', ['ServiceAccount', 'User', 'Group']));
  }
  return errs;
}

/** ValidateRoleBinding / ValidateClusterRoleBinding (without ObjectMeta, done by the store). */
export function validateBinding(obj: KubeObject, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const ref = (obj.roleRef ?? {}) as RoleRef;
  if (ref.apiGroup !== RBAC_GROUP) errs.push(notSupported('roleRef.apiGroup', ref.apiGroup ?? '', [RBAC_GROUP]));
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(ref.kind ?? '')) errs.push(notSupported('roleRef.kind', ref.kind ?? '', kinds));
  const name = ref.name ?? '';
  if (name === '') errs.push({ type: 'FieldValueRequired', field: 'roleRef.name', detail: '' });
  else {
    for (const msg of rbacNameProblems(name)) errs.push({ type: 'FieldValueInvalid', field: 'roleRef.name', value: name, detail: msg });
  }
  const subjects = Array.isArray(obj.subjects) ? (obj.subjects as Subject[]) : [];
  subjects.forEach((s, i) => errs.push(...validateSubject(s ?? {}, namespaced, `subjects[${i}]`)));
  return errs;
}

/** ValidateRoleBindingUpdate: roleRef is immutable. */
export function validateBindingUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  if (JSON.stringify(obj.roleRef ?? null) === JSON.stringify(old.roleRef ?? null)) return [];
  const ref = (obj.roleRef ?? {}) as RoleRef;
  const value = goStruct('rbac.RoleRef', [
    ['APIGroup', ref.apiGroup],
    ['Kind', ref.kind],
    ['Name', ref.name],
  ]);
  return [{ type: 'FieldValueInvalid', field: 'roleRef', value, detail: 'cannot change roleRef' }];
}

/** path.IsValidPathSegmentName, the rule of RBAC names (ValidateRBACName). */
export function rbacNameProblems(name: string): string[] {
  const errs: string[] = [];
  if (name === '.' || name === '..') errs.push(`may not be '${name}'`);
  for (const illegal of ['/', '%']) if (name.includes(illegal)) errs.push(`may not contain '${illegal}'`);
  return errs;
}

/** SetDefaults_RoleBinding / _ClusterRoleBinding / _Subject: the group of roleRef, User and Group subjects. */
export function defaultBinding(obj: KubeObject): void {
  const ref = obj.roleRef as RoleRef | undefined;
  if (ref && typeof ref === 'object' && !ref.apiGroup) ref.apiGroup = RBAC_GROUP;
  if (!Array.isArray(obj.subjects)) return;
  for (const s of obj.subjects as Subject[]) {
    if (s && typeof s === 'object' && !s.apiGroup && (s.kind === 'User' || s.kind === 'Group')) s.apiGroup = RBAC_GROUP;
  }
}
