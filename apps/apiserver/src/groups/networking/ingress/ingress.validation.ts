/**
 * Ingress validation (pkg/apis/networking/validation ValidateIngressCreate, ValidateIngressUpdate,
 * ValidateIngressSpec, ValidateIngressStatusUpdate, as of Kubernetes 1.33), with Kubernetes'
 * messages and field paths. The store validates metadata. Pure: no storage, no clock.
 */
import { isDNS1123Subdomain, nameIsDNS1035Label, nameIsDNSSubdomain, nameIsPathSegment, regexError, type FieldError, type KubeObject } from '@app/apimachinery';
import { asMap } from '../../core/core.helpers.js';
import { portNameErrors } from '../../core/pod/pod.validation.js';
import { parseIPSloppy } from '../networking.ip.js';
import { PATH_TYPES } from '../networking.overlays.js';

type Obj = Record<string, unknown>;

/** The annotation that named an Ingress's class before spec.ingressClassName. */
export const INGRESS_CLASS_ANNOTATION = 'kubernetes.io/ingress.class';

const INVALID_PATH_SEQUENCES = ['//', '/./', '/../', '%2f', '%2F'];
const INVALID_PATH_SUFFIXES = ['/..', '/.'];
const PORT_RANGE = 'must be between 1 and 65535, inclusive';
const WILDCARD_FMT = '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*';
const WILDCARD_RE = new RegExp(`^${WILDCARD_FMT}$`);
const WILDCARD_ERR =
  "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character";

const isSet = (v: unknown): boolean => v !== undefined && v !== null;
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(asMap) : []);
const invalid = (field: string, value: unknown, detail: string): FieldError => ({ type: 'FieldValueInvalid', field, value, detail });

/** Which stored mistakes an update may keep (IngressValidationOptions). */
interface Options {
  allowInvalidSecretName: boolean;
  allowInvalidWildcardHostRule: boolean;
}

/** IsWildcardDNS1123Subdomain's messages. */
export function wildcardSubdomainErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 253) errs.push('must be no more than 253 characters');
  if (!WILDCARD_RE.test(value)) errs.push(regexError(WILDCARD_ERR, WILDCARD_FMT, '*.example.com'));
  return errs;
}

/** A host of a rule or a TLS entry: a wildcard subdomain when it has a `*`, else a DNS subdomain. */
function hostErrors(host: string, field: string): FieldError[] {
  const msgs = host.includes('*') ? wildcardSubdomainErrors(host) : isDNS1123Subdomain(host);
  return msgs.map((m) => invalid(field, host, m));
}

/** validateIngressTypedLocalObjectReference: a backend's resource. */
function validateResourceRef(ref: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (isSet(ref.apiGroup)) for (const m of isDNS1123Subdomain(String(ref.apiGroup))) errs.push(invalid(`${path}.apiGroup`, ref.apiGroup, m));
  for (const f of ['kind', 'name']) {
    const v = typeof ref[f] === 'string' ? (ref[f] as string) : '';
    if (v === '') errs.push({ type: 'FieldValueRequired', field: `${path}.${f}`, detail: '' });
    else for (const m of nameIsPathSegment(v, false)) errs.push(invalid(`${path}.${f}`, v, m));
  }
  return errs;
}

/** validateIngressBackend: exactly one of service (a name and a port name or number) and resource. */
export function validateIngressBackend(backend: Obj, path: string): FieldError[] {
  const hasResource = isSet(backend.resource);
  const hasService = isSet(backend.service);
  if (hasResource && hasService) return [invalid(path, '', 'cannot set both resource and service backends')];
  if (hasResource) return validateResourceRef(asMap(backend.resource), `${path}.resource`);
  if (!hasService) return [invalid(path, '', 'resource or service backend is required')];
  const errs: FieldError[] = [];
  const svc = asMap(backend.service);
  const name = typeof svc.name === 'string' ? svc.name : '';
  if (name === '') errs.push({ type: 'FieldValueRequired', field: `${path}.service.name`, detail: '' });
  else for (const m of nameIsDNS1035Label(name, false)) errs.push(invalid(`${path}.service.name`, name, m));
  const port = asMap(svc.port);
  const portName = typeof port.name === 'string' ? port.name : '';
  const portNumber = typeof port.number === 'number' ? port.number : 0;
  if (portName !== '' && portNumber !== 0) errs.push(invalid(path, '', 'cannot set both port name & port number'));
  else if (portName !== '') for (const m of portNameErrors(portName)) errs.push(invalid(`${path}.service.port.name`, portName, m));
  else if (portNumber !== 0) {
    if (portNumber < 1 || portNumber > 65535) errs.push(invalid(`${path}.service.port.number`, portNumber, PORT_RANGE));
  } else errs.push({ type: 'FieldValueRequired', field: path, detail: 'port name or number is required' });
  return errs;
}

/** validateHTTPIngressPath: a pathType, a path that suits it, and a backend. */
function validatePath(p: Obj, path: string): FieldError[] {
  if (!isSet(p.pathType)) return [{ type: 'FieldValueRequired', field: `${path}.pathType`, detail: 'pathType must be specified' }];
  const errs: FieldError[] = [];
  const type = String(p.pathType);
  const value = typeof p.path === 'string' ? p.path : '';
  if (type === 'Exact' || type === 'Prefix') {
    if (!value.startsWith('/')) errs.push(invalid(`${path}.path`, value, 'must be an absolute path'));
    for (const seq of INVALID_PATH_SEQUENCES) if (value.includes(seq)) errs.push(invalid(`${path}.path`, value, `must not contain '${seq}'`));
    for (const suf of INVALID_PATH_SUFFIXES) if (value.endsWith(suf)) errs.push(invalid(`${path}.path`, value, `cannot end with '${suf}'`));
  } else if (type === 'ImplementationSpecific') {
    if (value !== '' && !value.startsWith('/')) errs.push(invalid(`${path}.path`, value, 'must be an absolute path'));
  } else {
    const detail = `supported values: ${PATH_TYPES.map((v) => JSON.stringify(v)).join(', ')}`;
    errs.push({ type: 'FieldValueNotSupported', field: `${path}.pathType`, value: type, detail });
  }
  errs.push(...validateIngressBackend(asMap(p.backend), `${path}.backend`));
  return errs;
}

/** validateIngressRuleValue at `path` (the rule: its http sits inline). */
function validateRuleValue(rule: Obj, path: string): FieldError[] {
  if (!isSet(rule.http)) return [];
  const paths = list(asMap(rule.http).paths);
  const errs: FieldError[] = [];
  if (paths.length === 0) errs.push({ type: 'FieldValueRequired', field: `${path}.http.paths`, detail: '' });
  paths.forEach((p, i) => errs.push(...validatePath(p, `${path}.http.paths[${i}]`)));
  return errs;
}

/** validateIngressRules: hosts are DNS names (a leading `*.` allowed), not IPs; then each rule's paths. */
function validateRules(rules: Obj[], opts: Options): FieldError[] {
  const errs: FieldError[] = [];
  rules.forEach((rule, i) => {
    const at = `spec.rules[${i}]`;
    const host = typeof rule.host === 'string' ? rule.host : '';
    const wildcard = host.includes('*');
    if (host !== '') {
      if (parseIPSloppy(host)) errs.push(invalid(`${at}.host`, host, 'must be a DNS name, not an IP address'));
      errs.push(...hostErrors(host, `${at}.host`));
    }
    if (!wildcard || !opts.allowInvalidWildcardHostRule) errs.push(...validateRuleValue(rule, at));
  });
  return errs;
}

/** validateIngressTLS: hosts, and a secretName that is a Secret name. */
function validateTLS(tls: Obj[], opts: Options): FieldError[] {
  const errs: FieldError[] = [];
  tls.forEach((t, i) => {
    const hosts = Array.isArray(t.hosts) ? t.hosts : [];
    hosts.forEach((h, j) => errs.push(...hostErrors(String(h), `spec.tls[${i}].hosts[${j}]`)));
    const secret = typeof t.secretName === 'string' ? t.secretName : '';
    if (!opts.allowInvalidSecretName && secret !== '') {
      for (const m of nameIsDNSSubdomain(secret, false)) errs.push(invalid(`spec.tls[${i}].secretName`, secret, m));
    }
  });
  return errs;
}

/** ValidateIngressSpec. */
export function validateIngressSpec(spec: Obj, opts: Options = { allowInvalidSecretName: false, allowInvalidWildcardHostRule: false }): FieldError[] {
  const errs: FieldError[] = [];
  const rules = list(spec.rules);
  if (rules.length === 0 && !isSet(spec.defaultBackend)) {
    // Go prints the rules slice with %#v: nil when absent, empty when given as [].
    const shown = Array.isArray(spec.rules) ? '[]networking.IngressRule{}' : '[]networking.IngressRule(nil)';
    errs.push({ type: 'FieldValueInvalid', field: 'spec', detail: `${shown}: either \`defaultBackend\` or \`rules\` must be specified` });
  }
  if (isSet(spec.defaultBackend)) errs.push(...validateIngressBackend(asMap(spec.defaultBackend), 'spec.defaultBackend'));
  errs.push(...validateRules(rules, opts));
  errs.push(...validateTLS(list(spec.tls), opts));
  if (isSet(spec.ingressClassName)) {
    const name = String(spec.ingressClassName);
    for (const m of nameIsDNSSubdomain(name, false)) errs.push(invalid('spec.ingressClassName', name, m));
  }
  return errs;
}

/** ValidateIngressCreate without ObjectMeta: the spec, and a class annotation that agrees with ingressClassName. */
export function validateIngress(ing: KubeObject): FieldError[] {
  const spec = asMap(ing.spec);
  const errs = validateIngressSpec(spec);
  const annotations = asMap(ing.metadata.annotations);
  if (INGRESS_CLASS_ANNOTATION in annotations && isSet(spec.ingressClassName)) {
    const v = String(annotations[INGRESS_CLASS_ANNOTATION]);
    if (v !== String(spec.ingressClassName)) {
      errs.push(invalid(`annotations.${INGRESS_CLASS_ANNOTATION}`, v, 'must match `ingressClassName` when both are specified'));
    }
  }
  return errs;
}

/** Whether a stored Ingress already has a TLS secretName that is not a Secret name (allowInvalidSecretName). */
function hasInvalidSecretName(old: Obj): boolean {
  return list(old.tls).some((t) => typeof t.secretName === 'string' && t.secretName !== '' && nameIsDNSSubdomain(t.secretName, false).length > 0);
}

/** Whether a stored Ingress already has a wildcard rule with invalid paths (allowInvalidWildcardHostRule). */
function hasInvalidWildcardRule(old: Obj): boolean {
  return list(old.rules).some((r) => typeof r.host === 'string' && r.host.includes('*') && validateRuleValue(r, '').length > 0);
}

/** ValidateIngressUpdate without ObjectMeta: the spec, keeping the mistakes the stored object already had. */
export function validateIngressUpdate(ing: KubeObject, old: KubeObject): FieldError[] {
  const oldSpec = asMap(old.spec);
  return validateIngressSpec(asMap(ing.spec), {
    allowInvalidSecretName: hasInvalidSecretName(oldSpec),
    allowInvalidWildcardHostRule: hasInvalidWildcardRule(oldSpec),
  });
}

/** ValidateIngressStatusUpdate without ObjectMeta: each load balancer point's IP and hostname. */
export function validateIngressStatusUpdate(ing: KubeObject, old: KubeObject): FieldError[] {
  const oldIPs = new Set(list(asMap(asMap(old.status).loadBalancer).ingress).map((p) => p.ip));
  const errs: FieldError[] = [];
  list(asMap(asMap(ing.status).loadBalancer).ingress).forEach((p, i) => {
    const at = `status.loadBalancer.ingress[${i}]`;
    const ip = typeof p.ip === 'string' ? p.ip : '';
    if (ip !== '' && !oldIPs.has(ip) && !parseIPSloppy(ip)) errs.push(invalid(`${at}.ip`, ip, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'));
    const hostname = typeof p.hostname === 'string' ? p.hostname : '';
    if (hostname !== '') {
      for (const m of isDNS1123Subdomain(hostname)) errs.push(invalid(`${at}.hostname`, hostname, m));
      if (parseIPSloppy(hostname)) errs.push(invalid(`${at}.hostname`, hostname, 'must be a DNS name, not an IP address'));
    }
  });
  return errs;
}
