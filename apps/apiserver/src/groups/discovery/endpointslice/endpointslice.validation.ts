/**
 * EndpointSlice validation (pkg/apis/discovery/validation ValidateEndpointSliceCreate,
 * ValidateEndpointSliceUpdate, Kubernetes 1.33), with Kubernetes' messages and field paths: a
 * supported addressType (immutable), at most 1000 endpoints of 1 to 100 addresses each, every
 * address of the slice's type (an IP that is no unspecified, loopback or link-local address;
 * or a fully qualified domain name), node names, DNS-label hostnames, zone and node hints, and
 * at most 20000 ports (Kubernetes raised the limit from 100 in 1.21) with unique names, a
 * supported protocol and a qualified appProtocol. The store validates metadata. Pure.
 */
import {
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  nameIsDNSSubdomain,
  type FieldError,
  type KubeObject,
} from '@app/apimachinery';
import { asMap, mapsOf } from '../../core/core.helpers.js';
import { parseIPSloppy, type ParsedIP } from '../../networking/networking.ip.js';
import { ADDRESS_TYPES, PORT_PROTOCOLS } from '../discovery.overlays.js';

type Obj = Record<string, unknown>;

/** Endpoints per slice. */
export const MAX_ENDPOINTS = 1000;
/** Addresses per endpoint. */
export const MAX_ADDRESSES = 100;
/** Ports per slice. */
export const MAX_PORTS = 20000;
/** Zone hints, and node hints, per endpoint. */
export const MAX_HINTS = 8;

const invalid = (field: string, value: unknown, detail: string): FieldError => ({ type: 'FieldValueInvalid', field, value, detail });
const tooMany = (field: string, n: number, max: number): FieldError => ({
  type: 'FieldValueTooMany',
  field,
  value: n,
  detail: `${n}: must have at most ${max} items`,
});
const notSupported = (field: string, value: unknown, values: readonly string[]): FieldError => ({
  type: 'FieldValueNotSupported',
  field,
  value,
  detail: `supported values: ${values.map((v) => JSON.stringify(v)).join(', ')}`,
});
const isSet = (v: unknown): boolean => v !== undefined && v !== null;

/** Go's net.IP classification of the few ranges an endpoint may not use (ValidateEndpointIP). */
function endpointIPErrors(ip: ParsedIP, address: string, field: string): FieldError[] {
  const errs: FieldError[] = [];
  const v4 = ip.bits === 32 ? ip.value : ip.value >> 32n === 0xffffn ? ip.value & 0xffffffffn : undefined;
  const top = (bits: number, width: number) => (v4 !== undefined ? v4 >> BigInt(32 - bits) : ip.value >> BigInt(width - bits));
  if (ip.value === 0n || v4 === 0n) errs.push(invalid(field, address, `may not be unspecified (${address})`));
  const loopback = v4 !== undefined ? top(8, 32) === 127n : ip.value === 1n;
  if (loopback) errs.push(invalid(field, address, 'may not be in the loopback range (127.0.0.0/8, ::1/128)'));
  const linkLocal = v4 !== undefined ? top(16, 32) === 0xa9fen : top(10, 128) === 0x3fan;
  if (linkLocal) errs.push(invalid(field, address, 'may not be in the link-local range (169.254.0.0/16, fe80::/10)'));
  const llMulticast = v4 !== undefined ? top(24, 32) === 0xe00000n : (top(16, 128) & 0xff0fn) === 0xff02n;
  if (llMulticast) errs.push(invalid(field, address, 'may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)'));
  return errs;
}

/** Whether a parsed address is an IPv4 one as Go's To4 sees it (dotted, or IPv4-mapped IPv6). */
function isIPv4(ip: ParsedIP): boolean {
  return ip.bits === 32 || ip.value >> 32n === 0xffffn;
}

/** validation.IsFullyQualifiedDomainName. */
export function fqdnErrors(value: string, field: string): FieldError[] {
  if (value === '') return [{ type: 'FieldValueRequired', field, detail: '' }];
  const name = value.endsWith('.') ? value.slice(0, -1) : value;
  const sub = isDNS1123Subdomain(name);
  if (sub.length > 0) return [invalid(field, name, sub.join(','))];
  const labels = name.split('.');
  if (labels.length < 2) return [invalid(field, name, 'should be a domain with at least two segments separated by dots')];
  for (const label of labels) {
    const errs = isDNS1123Label(label);
    if (errs.length > 0) return [invalid(field, label, errs.join(','))];
  }
  return [];
}

function addressErrors(address: string, addressType: string, field: string): FieldError[] {
  switch (addressType) {
    case 'IPv4':
    case 'IPv6': {
      const ip = parseIPSloppy(address);
      const v4 = ip !== undefined && isIPv4(ip);
      if (!ip || (addressType === 'IPv4') !== v4) return [invalid(field, address, `must be a valid ${addressType} address`)];
      return endpointIPErrors(ip, address, field);
    }
    case 'FQDN':
      return fqdnErrors(address, field);
    default:
      return []; // unknown types are not checked (the addressType error says it all)
  }
}

function hintErrors(hints: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const zones = mapsOf(hints.forZones);
  if (zones.length > MAX_HINTS) return [tooMany(`${path}.forZones`, zones.length, MAX_HINTS)];
  const seenZones = new Set<string>();
  zones.forEach((z, i) => {
    const name = typeof z.name === 'string' ? z.name : '';
    const f = `${path}.forZones[${i}].name`;
    if (seenZones.has(name)) errs.push({ type: 'FieldValueDuplicate', field: f, value: name, detail: '' });
    seenZones.add(name);
    for (const m of isValidLabelValue(name)) errs.push(invalid(f, name, m));
  });
  const nodes = mapsOf(hints.forNodes);
  if (nodes.length > MAX_HINTS) return [...errs, tooMany(`${path}.forNodes`, nodes.length, MAX_HINTS)];
  const seenNodes = new Set<string>();
  nodes.forEach((n, i) => {
    const name = typeof n.name === 'string' ? n.name : '';
    const f = `${path}.forNodes[${i}].name`;
    if (seenNodes.has(name)) errs.push({ type: 'FieldValueDuplicate', field: f, value: name, detail: '' });
    seenNodes.add(name);
    for (const m of nameIsDNSSubdomain(name, false)) errs.push(invalid(f, name, m));
  });
  return errs;
}

function endpointsErrors(endpoints: unknown, addressType: string): FieldError[] {
  const list = Array.isArray(endpoints) ? (endpoints as unknown[]) : [];
  if (list.length > MAX_ENDPOINTS) return [tooMany('endpoints', list.length, MAX_ENDPOINTS)];
  const errs: FieldError[] = [];
  list.forEach((raw, i) => {
    const ep = asMap(raw);
    const path = `endpoints[${i}]`;
    const addresses = Array.isArray(ep.addresses) ? (ep.addresses as unknown[]) : [];
    if (addresses.length === 0) errs.push({ type: 'FieldValueRequired', field: `${path}.addresses`, detail: 'must contain at least 1 address' });
    else if (addresses.length > MAX_ADDRESSES) errs.push(tooMany(`${path}.addresses`, addresses.length, MAX_ADDRESSES));
    addresses.forEach((a, j) => errs.push(...addressErrors(typeof a === 'string' ? a : '', addressType, `${path}.addresses[${j}]`)));
    if (isSet(ep.nodeName)) {
      const node = String(ep.nodeName);
      for (const m of nameIsDNSSubdomain(node, false)) errs.push(invalid(`${path}.nodeName`, node, m));
    }
    if (isSet(ep.hostname)) {
      const host = String(ep.hostname);
      for (const m of isDNS1123Label(host)) errs.push(invalid(`${path}.hostname`, host, m));
    }
    if (isSet(ep.hints)) errs.push(...hintErrors(asMap(ep.hints), `${path}.hints`));
  });
  return errs;
}

function portsErrors(ports: unknown): FieldError[] {
  const list = Array.isArray(ports) ? (ports as unknown[]) : [];
  if (list.length > MAX_PORTS) return [tooMany('ports', list.length, MAX_PORTS)];
  const errs: FieldError[] = [];
  const names = new Set<string>();
  list.forEach((raw, i) => {
    const p = asMap(raw);
    const path = `ports[${i}]`;
    const name = typeof p.name === 'string' ? p.name : '';
    if (name !== '') for (const m of isDNS1123Label(name)) errs.push(invalid(`${path}.name`, name, m));
    if (names.has(name)) errs.push({ type: 'FieldValueDuplicate', field: `${path}.name`, value: name, detail: '' });
    names.add(name);
    if (!isSet(p.protocol)) errs.push({ type: 'FieldValueRequired', field: `${path}.protocol`, detail: '' });
    else if (!PORT_PROTOCOLS.includes(String(p.protocol))) errs.push(notSupported(`${path}.protocol`, p.protocol, PORT_PROTOCOLS));
    if (isSet(p.appProtocol)) {
      const app = String(p.appProtocol);
      for (const m of isQualifiedName(app)) errs.push(invalid(`${path}.appProtocol`, app, m));
    }
  });
  return errs;
}

/** ValidateEndpointSlice without ObjectMeta. */
export function validateEndpointSlice(eps: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const addressType = typeof eps.addressType === 'string' ? eps.addressType : '';
  if (addressType === '') errs.push({ type: 'FieldValueRequired', field: 'addressType', detail: '' });
  else if (!ADDRESS_TYPES.includes(addressType)) errs.push(notSupported('addressType', addressType, ADDRESS_TYPES));
  errs.push(...endpointsErrors(eps.endpoints, addressType));
  errs.push(...portsErrors(eps.ports));
  return errs;
}

/** ValidateEndpointSliceUpdate without ObjectMeta: the slice is checked as on create, then addressType may not change. */
export function validateEndpointSliceUpdate(eps: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateEndpointSlice(eps);
  if ((eps.addressType ?? '') !== (old.addressType ?? '')) errs.push(invalid('addressType', eps.addressType ?? '', 'field is immutable'));
  return errs;
}
