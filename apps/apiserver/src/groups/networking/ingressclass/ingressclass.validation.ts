/**
 * IngressClass validation (pkg/apis/networking/validation ValidateIngressClass,
 * ValidateIngressClassUpdate), with Kubernetes' messages and field paths: a controller that is
 * a domain-prefixed path (immutable), and parameters whose scope fits their namespace. The
 * store validates metadata. Pure.
 */
import { isDNS1123Subdomain, nameIsDNSLabel, nameIsPathSegment, regexError, type FieldError, type KubeObject } from '@app/apimachinery';
import { asMap } from '../../core/core.helpers.js';
import { PARAMETER_SCOPES } from '../networking.overlays.js';

type Obj = Record<string, unknown>;

const MAX_CONTROLLER = 250;
const HTTP_PATH_FMT = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+";
const HTTP_PATH_RE = new RegExp(`^${HTTP_PATH_FMT}$`);
const isSet = (v: unknown): boolean => v !== undefined && v !== null;
const invalid = (field: string, value: unknown, detail: string): FieldError => ({ type: 'FieldValueInvalid', field, value, detail });

/** validation.IsDomainPrefixedPath: `<DNS subdomain>/<HTTP path>`, such as example.com/controller. */
export function domainPrefixedPathErrors(value: string, field: string): FieldError[] {
  if (value === '') return [{ type: 'FieldValueRequired', field, detail: '' }];
  const slash = value.indexOf('/');
  const host = slash < 0 ? value : value.slice(0, slash);
  const path = slash < 0 ? '' : value.slice(slash + 1);
  if (slash < 0 || host === '' || path === '') return [invalid(field, value, 'must be a domain-prefixed path (such as "acme.io/foo")')];
  const errs = isDNS1123Subdomain(host).map((m) => invalid(field, host, m));
  if (!HTTP_PATH_RE.test(path)) errs.push(invalid(field, path, regexError('Invalid path', HTTP_PATH_FMT)));
  return errs;
}

/** validateIngressClassParametersReference. */
function validateParameters(params: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (isSet(params.apiGroup)) for (const m of isDNS1123Subdomain(String(params.apiGroup))) errs.push(invalid(`${path}.apiGroup`, params.apiGroup, m));
  for (const f of ['kind', 'name']) {
    const v = typeof params[f] === 'string' ? (params[f] as string) : '';
    if (v === '') errs.push({ type: 'FieldValueRequired', field: `${path}.${f}`, detail: '' });
    else for (const m of nameIsPathSegment(v, false)) errs.push(invalid(`${path}.${f}`, v, m));
  }
  if (!isSet(params.scope)) {
    errs.push({ type: 'FieldValueRequired', field: `${path}.scope`, detail: '' });
    return errs;
  }
  const scope = String(params.scope);
  if (!PARAMETER_SCOPES.includes(scope)) {
    const detail = `supported values: ${PARAMETER_SCOPES.map((v) => JSON.stringify(v)).join(', ')}`;
    errs.push({ type: 'FieldValueNotSupported', field: `${path}.scope`, value: scope, detail });
  } else if (scope === 'Namespace') {
    if (!isSet(params.namespace)) errs.push({ type: 'FieldValueRequired', field: `${path}.namespace`, detail: "`parameters.scope` is set to 'Namespace'" });
    else for (const m of nameIsDNSLabel(String(params.namespace), false)) errs.push(invalid(`${path}.namespace`, params.namespace, m));
  } else if (isSet(params.namespace)) {
    errs.push({ type: 'FieldValueForbidden', field: `${path}.namespace`, detail: "`parameters.scope` is set to 'Cluster'" });
  }
  return errs;
}

/** ValidateIngressClass without ObjectMeta. */
export function validateIngressClass(ic: KubeObject): FieldError[] {
  const spec = asMap(ic.spec);
  const errs: FieldError[] = [];
  const controller = typeof spec.controller === 'string' ? spec.controller : '';
  if (controller === '') errs.push({ type: 'FieldValueRequired', field: 'spec.controller', detail: '' });
  else {
    if (Buffer.byteLength(controller) > MAX_CONTROLLER) {
      errs.push({ type: 'FieldValueTooLong', field: 'spec.controller', detail: `may not be more than ${MAX_CONTROLLER} bytes` });
    }
    errs.push(...domainPrefixedPathErrors(controller, 'spec.controller'));
  }
  if (isSet(spec.parameters)) errs.push(...validateParameters(asMap(spec.parameters), 'spec.parameters'));
  return errs;
}

/** ValidateIngressClassUpdate without ObjectMeta: the controller cannot change, then the class is checked as on create. */
export function validateIngressClassUpdate(ic: KubeObject, old: KubeObject): FieldError[] {
  const controller = asMap(ic.spec).controller ?? '';
  const errs: FieldError[] = [];
  if (controller !== (asMap(old.spec).controller ?? '')) errs.push(invalid('spec.controller', controller, 'field is immutable'));
  errs.push(...validateIngressClass(ic));
  return errs;
}
