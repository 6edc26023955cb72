/**
 * NetworkPolicy validation (pkg/apis/networking/validation ValidateNetworkPolicy,
 * ValidateNetworkPolicyUpdate, as of Kubernetes 1.33, where CIDRs are still parsed the lenient
 * legacy way), with Kubernetes' messages and field paths. The store validates metadata. Pure.
 */
import { validateLabelSelector, type FieldError, type KubeObject, type LabelSelectorValidationOptions } from '@app/apimachinery';
import { asMap } from '../../core/core.helpers.js';
import { portNameErrors } from '../../core/pod/pod.validation.js';
import { parseCIDRSloppy, strictSubset } from '../networking.ip.js';
import { POLICY_TYPES, PROTOCOLS } from '../networking.overlays.js';

type Obj = Record<string, unknown>;

const PORT_RANGE = 'must be between 1 and 65535, inclusive';
const INVALID_CIDR = 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)';
const isSet = (v: unknown): boolean => v !== undefined && v !== null;
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(asMap) : []);
const invalid = (field: string, value: unknown, detail: string): FieldError => ({ type: 'FieldValueInvalid', field, value, detail });
const quoted = (vs: readonly string[]) => vs.map((v) => JSON.stringify(v)).join(', ');

/** ValidateNetworkPolicyPort: protocol, a port number or name, and an endPort only after a numeric port. */
export function validateNetworkPolicyPort(port: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (isSet(port.protocol) && !PROTOCOLS.includes(String(port.protocol))) {
    errs.push({ type: 'FieldValueNotSupported', field: `${path}.protocol`, value: port.protocol, detail: `supported values: ${quoted(PROTOCOLS)}` });
  }
  const endPort = port.endPort;
  if (typeof port.port === 'number') {
    const p = port.port;
    if (p < 1 || p > 65535) errs.push(invalid(`${path}.port`, p, PORT_RANGE));
    if (typeof endPort === 'number') {
      if (endPort < p) errs.push(invalid(`${path}.endPort`, endPort, 'must be greater than or equal to `port`'));
      if (endPort < 1 || endPort > 65535) errs.push(invalid(`${path}.endPort`, endPort, PORT_RANGE));
    }
  } else if (isSet(port.port)) {
    if (isSet(endPort)) errs.push(invalid(`${path}.endPort`, endPort, 'may not be specified when `port` is non-numeric'));
    for (const m of portNameErrors(String(port.port))) errs.push(invalid(`${path}.port`, port.port, m));
  } else if (isSet(endPort)) {
    errs.push(invalid(`${path}.endPort`, endPort, 'may not be specified when `port` is not specified'));
  }
  return errs;
}

/** ValidateIPBlock: a CIDR, and excepted CIDRs strictly inside it. */
export function validateIPBlock(block: Obj, path: string): FieldError[] {
  const cidr = typeof block.cidr === 'string' ? block.cidr : '';
  if (cidr === '') return [{ type: 'FieldValueRequired', field: `${path}.cidr`, detail: '' }];
  const outer = parseCIDRSloppy(cidr);
  if (!outer) return [invalid(`${path}.cidr`, cidr, INVALID_CIDR)];
  const errs: FieldError[] = [];
  (Array.isArray(block.except) ? block.except : []).forEach((raw, i) => {
    const at = `${path}.except[${i}]`;
    const except = String(raw);
    const inner = parseCIDRSloppy(except);
    if (!inner) errs.push(invalid(at, except, INVALID_CIDR));
    else if (!strictSubset(outer, inner)) errs.push(invalid(at, except, 'must be a strict subset of `cidr`'));
  });
  return errs;
}

/** ValidateNetworkPolicyPeer: at least one of podSelector, namespaceSelector and ipBlock; ipBlock alone. */
function validatePeer(peer: Obj, path: string, opts: LabelSelectorValidationOptions): FieldError[] {
  const errs: FieldError[] = [];
  let peers = 0;
  for (const f of ['podSelector', 'namespaceSelector']) {
    if (!isSet(peer[f])) continue;
    peers++;
    errs.push(...validateLabelSelector(peer[f], `${path}.${f}`, opts));
  }
  if (isSet(peer.ipBlock)) {
    peers++;
    errs.push(...validateIPBlock(asMap(peer.ipBlock), `${path}.ipBlock`));
  }
  if (peers === 0) errs.push({ type: 'FieldValueRequired', field: path, detail: 'must specify a peer' });
  else if (peers > 1 && isSet(peer.ipBlock)) errs.push({ type: 'FieldValueForbidden', field: path, detail: 'may not specify both ipBlock and another peer' });
  return errs;
}

/** ValidateNetworkPolicySpec. */
export function validateNetworkPolicySpec(spec: Obj, opts: LabelSelectorValidationOptions = {}): FieldError[] {
  const errs = validateLabelSelector(spec.podSelector ?? {}, 'spec.podSelector', opts);
  for (const [dir, peersKey] of [
    ['ingress', 'from'],
    ['egress', 'to'],
  ] as const) {
    list(spec[dir]).forEach((rule, i) => {
      const at = `spec.${dir}[${i}]`;
      list(rule.ports).forEach((p, j) => errs.push(...validateNetworkPolicyPort(p, `${at}.ports[${j}]`)));
      list(rule[peersKey]).forEach((p, j) => errs.push(...validatePeer(p, `${at}.${peersKey}[${j}]`, opts)));
    });
  }
  const types = Array.isArray(spec.policyTypes) ? spec.policyTypes.map(String) : [];
  if (types.length > POLICY_TYPES.length) {
    // Go prints the slice with %#v.
    const shown = `[]networking.PolicyType{${quoted(types)}}`;
    errs.push({ type: 'FieldValueInvalid', field: 'spec.policyTypes', detail: `${shown}: may not specify more than two policyTypes` });
    return errs;
  }
  types.forEach((t, i) => {
    if (!POLICY_TYPES.includes(t)) {
      errs.push({ type: 'FieldValueNotSupported', field: `spec.policyTypes[${i}]`, value: t, detail: `supported values: ${quoted(POLICY_TYPES)}` });
    }
  });
  return errs;
}

/** ValidateNetworkPolicy without ObjectMeta. */
export function validateNetworkPolicy(np: KubeObject): FieldError[] {
  return validateNetworkPolicySpec(asMap(np.spec));
}

/**
 * ValidateNetworkPolicyUpdate without ObjectMeta: as on create, except that label values the
 * stored podSelector already had stay accepted (ValidationOptionsForNetworking).
 */
export function validateNetworkPolicyUpdate(np: KubeObject, old: KubeObject): FieldError[] {
  const oldInvalid = validateLabelSelector(asMap(old.spec).podSelector ?? {}, 'spec.podSelector').length > 0;
  return validateNetworkPolicySpec(asMap(np.spec), { allowInvalidLabelValueInSelector: oldInvalid });
}
