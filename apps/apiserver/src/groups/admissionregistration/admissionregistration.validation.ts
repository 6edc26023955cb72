/**
 * Rules of the admissionregistration.k8s.io/v1 webhook configurations
 * (pkg/apis/admissionregistration/validation ValidateMutatingWebhookConfiguration and
 * ValidateValidatingWebhookConfiguration, with ValidateWebhookURL and ValidateWebhookService of
 * k8s.io/apiserver/pkg/util/webhook), with Kubernetes' messages and field paths. ObjectMeta is
 * the store's. Match condition expressions must compile to a bool over `object`, `oldObject`
 * and `request` (admission/webhook/webhook.conditions.ts).
 *
 * An update is held to the create rules only as far as the stored object already met them
 * (Kubernetes' validationOptions): stored webhooks with side effects Some/Unknown, no known
 * review version, duplicate names or selector values that are not label values keep being
 * accepted.
 */
import { isDeepStrictEqual } from 'node:util';
import { goSlice, isDNS1035Label, isDNS1123Subdomain, isQualifiedName, validateLabelSelector, type FieldError } from '@app/apimachinery';
import { asMap, mapsOf } from '../core/core.helpers.js';
import {
  FAILURE_POLICIES,
  MATCH_POLICIES,
  NO_SIDE_EFFECT_CLASSES,
  OPERATIONS,
  REINVOCATION_POLICIES,
  SCOPES,
  SIDE_EFFECT_CLASSES,
} from './admissionregistration.overlays.js';
import { matchConditionError } from '../../admission/webhook/webhook.conditions.js';
import { parseGoUrl } from './webhook.url.js';

type Obj = Record<string, unknown>;
/** Which configuration kind: the mutating one has reinvocationPolicy. */
export type WebhookKind = 'mutating' | 'validating';

/** The AdmissionReview versions this server understands (AcceptedAdmissionReviewVersions). */
export const ACCEPTED_ADMISSION_REVIEW_VERSIONS: readonly string[] = ['v1', 'v1beta1'];
/** Most match conditions per webhook. */
const MAX_MATCH_CONDITIONS = 64;
const URL_FORM = '; desired format: https://host[/path]';

/** Kubernetes' validationOptions: how strict an update may be given what is stored. */
interface Options {
  requireNoSideEffects: boolean;
  requireRecognizedAdmissionReviewVersion: boolean;
  requireUniqueWebhookNames: boolean;
  allowInvalidLabelValueInSelector: boolean;
  ignoreMatchConditions: boolean;
}

const CREATE_OPTIONS: Options = {
  requireNoSideEffects: true,
  requireRecognizedAdmissionReviewVersion: true,
  requireUniqueWebhookNames: true,
  allowInvalidLabelValueInSelector: false,
  ignoreMatchConditions: false,
};

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? x : String(x))) : []);
const present = (v: unknown) => v !== undefined && v !== null;
const quoted = (vs: readonly string[]) => vs.map((v) => JSON.stringify(v)).join(', ');
const required = (field: string, detail = ''): FieldError => ({ type: 'FieldValueRequired', field, detail });
const invalid = (field: string, value: unknown, detail: string): FieldError => ({ type: 'FieldValueInvalid', field, value, detail });
/** An Invalid error whose value is a slice, printed the Go way. */
const invalidSlice = (field: string, type: string, vs: readonly string[], detail: string): FieldError => ({
  type: 'FieldValueInvalid',
  field,
  value: goSlice(vs, type),
  detail,
});
const unsupported = (field: string, value: unknown, allowed: readonly string[]): FieldError => ({
  type: 'FieldValueNotSupported',
  field,
  value,
  detail: `supported values: ${quoted(allowed)}`,
});

/** utilvalidation.IsFullyQualifiedName: a DNS subdomain of at least three segments. */
export function validateFullyQualifiedName(name: string, field: string): FieldError[] {
  if (name.length === 0) return [required(field)];
  const errs = isDNS1123Subdomain(name);
  if (errs.length) return [invalid(field, name, errs.join(','))];
  if (name.split('.').length < 3) return [invalid(field, name, 'should be a domain with at least three segments separated by dots')];
  return [];
}

/** validateResources: resource and subresource wildcards that may not be combined. */
function validateResources(resources: string[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (resources.length === 0) errs.push(required(path));
  const resWithWildcardSub = new Set<string>();
  const subWithWildcardRes = new Set<string>();
  let doubleWildcard = false;
  let singleWildcard = false;
  let withoutSub = false;
  resources.forEach((resSub, i) => {
    if (resSub === '') {
      errs.push(required(`${path}[${i}]`));
      return;
    }
    if (resSub === '*/*') doubleWildcard = true;
    if (resSub === '*') singleWildcard = true;
    const slash = resSub.indexOf('/');
    if (slash < 0) {
      withoutSub = resSub !== '*';
      return;
    }
    const res = resSub.slice(0, slash);
    const sub = resSub.slice(slash + 1);
    if (resWithWildcardSub.has(res)) errs.push(invalid(`${path}[${i}]`, resSub, `if '${res}/*' is present, must not specify ${resSub}`));
    if (subWithWildcardRes.has(sub)) errs.push(invalid(`${path}[${i}]`, resSub, `if '*/${sub}' is present, must not specify ${resSub}`));
    if (sub === '*') resWithWildcardSub.add(res);
    if (res === '*') subWithWildcardRes.add(sub);
  });
  if (resources.length > 1 && doubleWildcard) errs.push(invalidSlice(path, '[]string', resources, "if '*/*' is present, must not specify other resources"));
  if (singleWildcard && withoutSub)
    errs.push(invalidSlice(path, '[]string', resources, "if '*' is present, must not specify other resources without subresources"));
  return errs;
}

/** validateRuleWithOperations (and validateRule, subresources allowed). */
export function validateRuleWithOperations(rule: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const ops = strings(rule.operations);
  if (ops.length === 0) errs.push(required(`${path}.operations`));
  if (ops.length > 1 && ops.includes('*'))
    errs.push(invalidSlice(`${path}.operations`, '[]admissionregistration.OperationType', ops, "if '*' is present, must not specify other operations"));
  ops.forEach((op, i) => {
    if (!OPERATIONS.includes(op)) errs.push(unsupported(`${path}.operations[${i}]`, op, OPERATIONS));
  });
  const groups = strings(rule.apiGroups);
  if (groups.length === 0) errs.push(required(`${path}.apiGroups`));
  if (groups.length > 1 && groups.includes('*'))
    errs.push(invalidSlice(`${path}.apiGroups`, '[]string', groups, "if '*' is present, must not specify other API groups"));
  const versions = strings(rule.apiVersions);
  if (versions.length === 0) errs.push(required(`${path}.apiVersions`));
  if (versions.length > 1 && versions.includes('*'))
    errs.push(invalidSlice(`${path}.apiVersions`, '[]string', versions, "if '*' is present, must not specify other API versions"));
  versions.forEach((v, i) => {
    if (v === '') errs.push(required(`${path}.apiVersions[${i}]`));
  });
  errs.push(...validateResources(strings(rule.resources), `${path}.resources`));
  if (present(rule.scope) && !SCOPES.includes(String(rule.scope))) errs.push(unsupported(`${path}.scope`, rule.scope, SCOPES));
  return errs;
}

/** validateAdmissionReviewVersions: at least one; no duplicates; DNS-1035 labels; one this server knows. */
export function validateAdmissionReviewVersions(raw: unknown, requireRecognized: boolean, path: string): FieldError[] {
  const versions = strings(raw);
  const accepted = ACCEPTED_ADMISSION_REVIEW_VERSIONS.join(', ');
  if (versions.length === 0) return [required(path, `must specify one of ${accepted}`)];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  let hasAccepted = false;
  versions.forEach((v, i) => {
    if (seen.has(v)) {
      errs.push(invalid(`${path}[${i}]`, v, 'duplicate version'));
      return;
    }
    seen.add(v);
    for (const m of isDNS1035Label(v)) errs.push(invalid(`${path}[${i}]`, v, m));
    if (ACCEPTED_ADMISSION_REVIEW_VERSIONS.includes(v)) hasAccepted = true;
  });
  if (requireRecognized && !hasAccepted) errs.push(invalidSlice(path, '[]string', versions, `must include at least one of ${accepted}`));
  return errs;
}

/** ValidateWebhookURL with https required. */
export function validateWebhookURL(url: string, path: string): FieldError[] {
  const u = parseGoUrl(url);
  if ('error' in u) return [required(path, `url must be a valid URL: ${u.error}${URL_FORM}`)];
  const errs: FieldError[] = [];
  if (u.scheme !== 'https') errs.push(invalid(path, u.scheme, `'https' is the only allowed URL scheme${URL_FORM}`));
  if (u.host.length === 0) errs.push(invalid(path, u.host, `host must be provided${URL_FORM}`));
  if (u.user !== undefined) errs.push(invalid(path, u.user, 'user information is not permitted in the URL'));
  if (u.fragment.length) errs.push(invalid(path, u.fragment, 'fragments are not permitted in the URL'));
  if (u.rawQuery.length) errs.push(invalid(path, u.rawQuery, 'query parameters are not permitted in the URL'));
  return errs;
}

/** ValidateWebhookService: name and namespace set, a valid port, a path of DNS-subdomain segments. */
export function validateWebhookService(service: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const name = typeof service.name === 'string' ? service.name : '';
  const namespace = typeof service.namespace === 'string' ? service.namespace : '';
  if (name.length === 0) errs.push(required(`${path}.name`, 'service name is required'));
  if (namespace.length === 0) errs.push(required(`${path}.namespace`, 'service namespace is required'));
  // Defaulted to 443; an explicit null is Go's zero.
  const port = typeof service.port === 'number' ? service.port : 0;
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    errs.push(invalid(`${path}.port`, port, 'port is not valid: must be between 1 and 65535, inclusive'));
  if (typeof service.path !== 'string') return errs;
  const urlPath = service.path;
  if (urlPath === '/' || urlPath.length === 0) return errs;
  if (urlPath === '//') return [...errs, invalid(`${path}.path`, urlPath, 'segment[0] may not be empty')];
  if (!urlPath.startsWith('/')) errs.push(invalid(`${path}.path`, urlPath, "must start with a '/'"));
  let toCheck = urlPath.slice(1);
  if (toCheck.endsWith('/')) toCheck = toCheck.slice(0, -1);
  toCheck.split('/').forEach((step, i) => {
    if (step.length === 0) {
      errs.push(invalid(`${path}.path`, urlPath, `segment[${i}] may not be empty`));
      return;
    }
    for (const m of isDNS1123Subdomain(step)) errs.push(invalid(`${path}.path`, urlPath, `segment[${i}]: ${m}`));
  });
  return errs;
}

/** validateMatchConditions: names unique qualified names, expressions bool CEL that compiles. */
function validateMatchConditions(raw: unknown, path: string): FieldError[] {
  const conditions = mapsOf(raw);
  const errs: FieldError[] = [];
  if (conditions.length > MAX_MATCH_CONDITIONS)
    errs.push({ type: 'FieldValueTooMany', field: path, value: conditions.length, detail: `must have at most ${MAX_MATCH_CONDITIONS} items` });
  const names = new Set<string>();
  conditions.forEach((c, i) => {
    const at = `${path}[${i}]`;
    const expression = typeof c.expression === 'string' ? c.expression : '';
    if (expression.trim().length === 0) errs.push(required(`${at}.expression`));
    else {
      const error = matchConditionError(expression);
      if (error) errs.push(invalid(`${at}.expression`, expression, error));
    }
    const name = typeof c.name === 'string' ? c.name : '';
    if (name.length === 0) errs.push(required(`${at}.name`));
    else for (const m of isQualifiedName(name)) errs.push(invalid(`${at}.name`, name, m));
    if (name.length > 0) {
      if (names.has(name)) errs.push({ type: 'FieldValueDuplicate', field: `${at}.name`, value: name, detail: '' });
      else names.add(name);
    }
  });
  return errs;
}

/** validateMutatingWebhook / validateValidatingWebhook. */
function validateWebhook(hook: Obj, kind: WebhookKind, opts: Options, path: string): FieldError[] {
  const errs = validateFullyQualifiedName(typeof hook.name === 'string' ? hook.name : '', `${path}.name`);
  mapsOf(hook.rules).forEach((r, i) => errs.push(...validateRuleWithOperations(r, `${path}.rules[${i}]`)));
  if (present(hook.failurePolicy) && !FAILURE_POLICIES.includes(String(hook.failurePolicy)))
    errs.push(unsupported(`${path}.failurePolicy`, hook.failurePolicy, FAILURE_POLICIES));
  if (present(hook.matchPolicy) && !MATCH_POLICIES.includes(String(hook.matchPolicy)))
    errs.push(unsupported(`${path}.matchPolicy`, hook.matchPolicy, MATCH_POLICIES));
  const allowedSideEffects = opts.requireNoSideEffects ? NO_SIDE_EFFECT_CLASSES : SIDE_EFFECT_CLASSES;
  if (!present(hook.sideEffects)) errs.push(required(`${path}.sideEffects`, `must specify one of ${allowedSideEffects.join(', ')}`));
  else if (!allowedSideEffects.includes(String(hook.sideEffects))) errs.push(unsupported(`${path}.sideEffects`, hook.sideEffects, allowedSideEffects));
  const timeout = hook.timeoutSeconds;
  if (typeof timeout === 'number' && (timeout > 30 || timeout < 1))
    errs.push(invalid(`${path}.timeoutSeconds`, timeout, 'the timeout value must be between 1 and 30 seconds'));
  const selectorOpts = { allowInvalidLabelValueInSelector: opts.allowInvalidLabelValueInSelector };
  errs.push(...validateLabelSelector(hook.namespaceSelector, `${path}.namespaceSelector`, selectorOpts));
  errs.push(...validateLabelSelector(hook.objectSelector, `${path}.objectSelector`, selectorOpts));
  if (kind === 'mutating' && present(hook.reinvocationPolicy) && !REINVOCATION_POLICIES.includes(String(hook.reinvocationPolicy)))
    errs.push(unsupported(`${path}.reinvocationPolicy`, hook.reinvocationPolicy, REINVOCATION_POLICIES));
  const cc = asMap(hook.clientConfig);
  if (present(cc.url) === present(cc.service)) errs.push(required(`${path}.clientConfig`, 'exactly one of url or service is required'));
  else if (present(cc.url)) errs.push(...validateWebhookURL(String(cc.url), `${path}.clientConfig.url`));
  else errs.push(...validateWebhookService(asMap(cc.service), `${path}.clientConfig.service`));
  if (!opts.ignoreMatchConditions) errs.push(...validateMatchConditions(hook.matchConditions, `${path}.matchConditions`));
  return errs;
}

function validateConfiguration(cfg: Obj, kind: WebhookKind, opts: Options): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  mapsOf(cfg.webhooks).forEach((hook, i) => {
    const path = `webhooks[${i}]`;
    errs.push(...validateWebhook(hook, kind, opts, path));
    errs.push(
      ...validateAdmissionReviewVersions(hook.admissionReviewVersions, opts.requireRecognizedAdmissionReviewVersion, `${path}.admissionReviewVersions`),
    );
    const name = typeof hook.name === 'string' ? hook.name : '';
    if (opts.requireUniqueWebhookNames && name.length > 0) {
      if (names.has(name)) errs.push({ type: 'FieldValueDuplicate', field: `${path}.name`, value: name, detail: '' });
      else names.add(name);
    }
  });
  return errs;
}

/** ValidateMutatingWebhookConfiguration / ValidateValidatingWebhookConfiguration (after defaults). */
export function validateWebhookConfiguration(cfg: Obj, kind: WebhookKind): FieldError[] {
  return validateConfiguration(cfg, kind, CREATE_OPTIONS);
}

/** Whether any selector of the stored webhooks breaks the strict selector rules (Kubernetes then relaxes the value rule). */
function hasInvalidSelector(hooks: Obj[]): boolean {
  return hooks.some((h) => [h.namespaceSelector, h.objectSelector].some((s) => validateLabelSelector(s, '').length > 0));
}

/**
 * The ...WebhookConfigurationUpdate variants: the create rules, relaxed where the stored object
 * already breaks them, and match conditions not rechecked when no webhook's changed.
 */
export function validateWebhookConfigurationUpdate(cfg: Obj, old: Obj, kind: WebhookKind): FieldError[] {
  const hooks = mapsOf(cfg.webhooks);
  const oldHooks = mapsOf(old.webhooks);
  const oldNames = oldHooks.map((h) => h.name);
  return validateConfiguration(cfg, kind, {
    requireNoSideEffects: oldHooks.every((h) => NO_SIDE_EFFECT_CLASSES.includes(String(h.sideEffects))),
    requireRecognizedAdmissionReviewVersion: oldHooks.every((h) => {
      const vs = strings(h.admissionReviewVersions);
      return vs.length === 0 || vs.some((v) => ACCEPTED_ADMISSION_REVIEW_VERSIONS.includes(v));
    }),
    requireUniqueWebhookNames: new Set(oldNames).size === oldNames.length,
    allowInvalidLabelValueInSelector: hasInvalidSelector(oldHooks),
    ignoreMatchConditions: hooks.length === oldHooks.length && hooks.every((h, i) => isDeepStrictEqual(h.matchConditions, oldHooks[i]!.matchConditions)),
  });
}
