/**
 * What the three access reviews share (pkg/registry/authorization): the attributes of the
 * spec as authorizer attributes, the validation of the spec, and asking the AUTHORIZER port.
 * The answer is kube's: `allowed` on Allow, `denied` on Deny, the authorizer's reason.
 */
import { labelSelectorFromStruct, parseFieldSelector, parseLabelSelector, type FieldError, type KubeObject } from '@app/apimachinery';
import type { UserInfo } from '@app/auth';
import { nonResourceAttributes, type AuthorizationAttributes, type Authorizer, type RuleResolver } from '@app/authz';

/**
 * The pipeline's ports the review kinds ask. Kinds are data collected from the group modules
 * before any factory provider exists, so the group module's wiring provider fills this in at
 * start; no request reaches a review before that.
 */
export class AuthorizationPorts {
  authorizer?: Authorizer;
  rules?: RuleResolver;

  /** The authorizer; throws when the server wired none (a programming error). */
  get authz(): Authorizer {
    if (!this.authorizer) throw new Error('authorization reviews: no authorizer wired');
    return this.authorizer;
  }
}

/** authorization/v1 FieldSelectorAttributes and LabelSelectorAttributes. */
export interface SelectorAttributes {
  rawSelector?: string;
  requirements?: { key?: string; operator?: string; values?: string[] | null }[] | null;
}

/** authorization/v1 ResourceAttributes. */
export interface ResourceAttributes {
  namespace?: string;
  verb?: string;
  group?: string;
  version?: string;
  resource?: string;
  subresource?: string;
  name?: string;
  fieldSelector?: SelectorAttributes | null;
  labelSelector?: SelectorAttributes | null;
}

/** authorization/v1 NonResourceAttributes. */
export interface NonResourceAttributes {
  path?: string;
  verb?: string;
}

/** The spec of any access review. */
export interface AccessReviewSpec {
  resourceAttributes?: ResourceAttributes | null;
  nonResourceAttributes?: NonResourceAttributes | null;
  user?: string;
  groups?: string[] | null;
  uid?: string;
  extra?: Record<string, string[]> | null;
}

/** The spec of a review object ({} when absent). */
export function specOf(obj: KubeObject): AccessReviewSpec {
  const s = (obj as { spec?: unknown }).spec;
  return s && typeof s === 'object' ? (s as AccessReviewSpec) : {};
}

/** kube's ValidateSelfSubjectAccessReviewSpec: exactly one of the two attribute sets. */
/** kube's validateFieldSelectorAttributes / validateLabelSelectorAttributes: written or as terms, one of the two. */
function validateSelector(selector: SelectorAttributes | null | undefined, path: string): FieldError[] {
  if (!selector) return [];
  const raw = selector.rawSelector ?? '';
  const terms = selector.requirements?.length ?? 0;
  if (raw !== '' && terms > 0)
    return [{ type: 'FieldValueInvalid', field: `${path}.rawSelector`, value: raw, detail: 'may not specified at the same time as requirements' }];
  if (raw === '' && terms === 0)
    return [
      { type: 'FieldValueRequired', field: `${path}.requirements`, value: '', detail: `when ${path} is specified, requirements or rawSelector is required` },
    ];
  return [];
}

export function validateAttributes(spec: AccessReviewSpec): FieldError[] {
  if (spec.resourceAttributes && spec.nonResourceAttributes) {
    return [
      {
        type: 'FieldValueInvalid',
        field: 'spec.nonResourceAttributes',
        value: spec.nonResourceAttributes,
        detail: 'cannot be specified in combination with resourceAttributes',
      },
    ];
  }
  if (!spec.resourceAttributes && !spec.nonResourceAttributes) {
    return [
      {
        type: 'FieldValueInvalid',
        field: 'spec.resourceAttributes',
        value: spec.nonResourceAttributes ?? null,
        detail: 'exactly one of nonResourceAttributes or resourceAttributes must be specified',
      },
    ];
  }
  const r = spec.resourceAttributes;
  return r
    ? [
        ...validateSelector(r.fieldSelector, 'spec.resourceAttributes.fieldSelector'),
        ...validateSelector(r.labelSelector, 'spec.resourceAttributes.labelSelector'),
      ]
    : [];
}

/**
 * The terms of a review's field selector as authorizers see them (kube's fieldSelectorAsSelector):
 * the written selector parsed, or the terms with In as `=` and NotIn as `!=`, one value each.
 * Anything else (Exists, several values, a selector that does not parse) gives none, as a
 * request whose selector kube could not parse.
 */
export function fieldSelectorTerms(selector: SelectorAttributes | null | undefined): AuthorizationAttributes['fieldSelector'] {
  if (!selector) return undefined;
  if (selector.rawSelector) {
    try {
      return parseFieldSelector(selector.rawSelector).requirements();
    } catch {
      return undefined;
    }
  }
  const out: { field: string; operator: string; value: string }[] = [];
  for (const r of selector.requirements ?? []) {
    const values = r.values ?? [];
    if (values.length !== 1 || (r.operator !== 'In' && r.operator !== 'NotIn')) return undefined;
    out.push({ field: r.key ?? '', operator: r.operator === 'In' ? '=' : '!=', value: values[0]! });
  }
  return out.length ? out : undefined;
}

/**
 * The terms of a review's label selector as authorizers see them (kube's labelSelectorAsSelector):
 * the written selector parsed, or the terms (In, NotIn, Exists, DoesNotExist). One that does not
 * parse, or selects everything, gives none.
 */
export function labelSelectorTerms(selector: SelectorAttributes | null | undefined): AuthorizationAttributes['labelSelector'] {
  if (!selector) return undefined;
  try {
    const parsed = selector.rawSelector
      ? parseLabelSelector(selector.rawSelector)
      : labelSelectorFromStruct({
          matchExpressions: (selector.requirements ?? []).map((r) => ({ key: r.key ?? '', operator: r.operator ?? '', values: r.values ?? [] })),
        });
    return parsed.requirements.length > 0 ? parsed.requirements : undefined;
  } catch {
    return undefined;
  }
}

/** kube's ValidateSubjectAccessReviewSpec: the attributes, and a user or a group. */
export function validateSubjectSpec(spec: AccessReviewSpec): FieldError[] {
  const errs = validateAttributes(spec);
  if (!spec.user && !spec.groups?.length)
    errs.push({ type: 'FieldValueInvalid', field: 'spec.user', value: spec.user ?? '', detail: 'at least one of user or group must be specified' });
  return errs;
}

/** The user a SubjectAccessReview names. */
export function userOfSpec(spec: AccessReviewSpec): UserInfo {
  const user: UserInfo = { username: spec.user ?? '', groups: [...(spec.groups ?? [])] };
  if (spec.uid) user.uid = spec.uid;
  if (spec.extra) user.extra = spec.extra;
  return user;
}

/** The authorizer attributes of a validated spec (kube's ResourceAttributesFrom / NonResourceAttributesFrom). */
export function attributesOf(user: UserInfo, spec: AccessReviewSpec): AuthorizationAttributes {
  const r = spec.resourceAttributes;
  if (r) {
    const fieldSelector = fieldSelectorTerms(r.fieldSelector);
    const labelSelector = labelSelectorTerms(r.labelSelector);
    return {
      user,
      verb: r.verb ?? '',
      isResourceRequest: true,
      path: '',
      apiGroup: r.group ?? '',
      apiVersion: r.version ?? '',
      resource: r.resource ?? '',
      subresource: r.subresource ?? '',
      namespace: r.namespace ?? '',
      name: r.name ?? '',
      ...(fieldSelector ? { fieldSelector } : {}),
      ...(labelSelector ? { labelSelector } : {}),
    };
  }
  const n = spec.nonResourceAttributes ?? {};
  return nonResourceAttributes(user, n.verb ?? '', n.path ?? '');
}

/** Asks `authorizer` about `spec` for `user`; returns `obj` with its status filled in. */
export async function review(authorizer: Authorizer, user: UserInfo, obj: KubeObject): Promise<KubeObject> {
  let status: Record<string, unknown>;
  try {
    const d = await authorizer.authorize(attributesOf(user, specOf(obj)));
    status = { allowed: d.decision === 'Allow' };
    if (d.decision === 'Deny') status.denied = true;
    if (d.reason) status.reason = d.reason;
  } catch (e) {
    status = { allowed: false, evaluationError: e instanceof Error ? e.message : String(e) };
  }
  return { ...obj, status };
}
