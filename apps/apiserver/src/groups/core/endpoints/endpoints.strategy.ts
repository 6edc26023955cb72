/**
 * Endpoints behaviour (pkg/apis/core/validation ValidateEndpoints): every address is an IP
 * that is not unspecified, loopback, link-local or multicast, hostnames are DNS labels, ports
 * are 1-65535 with a supported protocol, and named (DNS labels, unique) when a subset has
 * several.
 */
import { isIP } from 'node:net';
import { isDNS1123Label, type FieldError, type KubeObject } from '@app/apimachinery';
import type { Strategy } from '@app/registry';

type Address = { ip?: unknown; hostname?: unknown };
type Port = { name?: unknown; port?: unknown; protocol?: unknown };

const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];

/** Why `ip` cannot be an endpoint address (validateNonSpecialIP), or undefined. */
function specialIp(ip: string): string | undefined {
  if (ip === '0.0.0.0' || ip === '::') return 'may not be unspecified (0.0.0.0)';
  if (ip.startsWith('127.') || ip === '::1') return 'may not be in the loopback range (127.0.0.0/8, ::1/128)';
  if (ip.startsWith('169.254.') || /^fe[89ab]/i.test(ip)) return 'may not be in the link-local range (169.254.0.0/16, fe80::/10)';
  const first = Number(ip.split('.')[0]);
  if ((isIP(ip) === 4 && first >= 224 && first <= 239) || /^ff/i.test(ip)) return 'may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)';
  return undefined;
}

function validateAddress(a: Address, f: string): FieldError[] {
  const errs: FieldError[] = [];
  const ip = typeof a.ip === 'string' ? a.ip : '';
  if (isIP(ip) === 0)
    errs.push({ type: 'FieldValueInvalid', field: `${f}.ip`, value: ip, detail: 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)' });
  else {
    const special = specialIp(ip);
    if (special) errs.push({ type: 'FieldValueInvalid', field: `${f}.ip`, value: ip, detail: special });
  }
  if (typeof a.hostname === 'string' && a.hostname !== '') {
    for (const m of isDNS1123Label(a.hostname)) errs.push({ type: 'FieldValueInvalid', field: `${f}.hostname`, value: a.hostname, detail: m });
  }
  return errs;
}

/** ValidateEndpoints (the subsets). */
export function validateEndpoints(ep: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const subsets = Array.isArray(ep.subsets) ? (ep.subsets as Array<{ addresses?: Address[]; notReadyAddresses?: Address[]; ports?: Port[] }>) : [];
  subsets.forEach((s, i) => {
    const f = `subsets[${i}]`;
    const ready = s.addresses ?? [];
    const notReady = s.notReadyAddresses ?? [];
    if (ready.length === 0 && notReady.length === 0) {
      errs.push({ type: 'FieldValueRequired', field: f, detail: 'must specify `addresses` or `notReadyAddresses`' });
    }
    ready.forEach((a, j) => errs.push(...validateAddress(a, `${f}.addresses[${j}]`)));
    notReady.forEach((a, j) => errs.push(...validateAddress(a, `${f}.notReadyAddresses[${j}]`)));
    const ports = s.ports ?? [];
    const names = new Set<string>();
    ports.forEach((p, j) => {
      const pf = `${f}.ports[${j}]`;
      const name = typeof p.name === 'string' ? p.name : '';
      if (name === '') {
        if (ports.length > 1) errs.push({ type: 'FieldValueRequired', field: `${pf}.name`, detail: '' });
      } else {
        for (const m of isDNS1123Label(name)) errs.push({ type: 'FieldValueInvalid', field: `${pf}.name`, value: name, detail: m });
        if (names.has(name)) errs.push({ type: 'FieldValueDuplicate', field: `${pf}.name`, value: name, detail: '' });
        names.add(name);
      }
      if (!(typeof p.port === 'number' && Number.isInteger(p.port) && p.port >= 1 && p.port <= 65535)) {
        errs.push({ type: 'FieldValueInvalid', field: `${pf}.port`, value: p.port, detail: 'must be between 1 and 65535, inclusive' });
      }
      if (p.protocol !== undefined && !PROTOCOLS.includes(String(p.protocol))) {
        errs.push({ type: 'FieldValueNotSupported', field: `${pf}.protocol`, value: p.protocol, detail: 'supported values: "SCTP", "TCP", "UDP"' });
      }
    });
  });
  return errs;
}

/** The Endpoints strategy. */
export const endpointsStrategy: Strategy = {
  validate: validateEndpoints,
  validateUpdate: (ep) => validateEndpoints(ep),
};

/**
 * kubectl's ENDPOINTS cell: ip:port of the ready addresses, the first three, then "+ N more...".
 * The pairs past the first three are counted, not written out: a subset's addresses times its
 * ports can be billions.
 */
export function endpointsCell(ep: KubeObject): string {
  const subsets = Array.isArray(ep.subsets) ? (ep.subsets as Array<{ addresses?: Address[]; ports?: Port[] }>) : [];
  const first: string[] = [];
  let count = 0;
  for (const s of subsets) {
    const ports = s.ports ?? [];
    for (const a of s.addresses ?? []) {
      const ip = String(a.ip);
      if (ports.length === 0) {
        if (first.length < 3) first.push(ip);
        count++;
        continue;
      }
      for (let i = 0; i < ports.length && first.length < 3; i++) first.push(`${ip}:${String(ports[i]!.port)}`);
      count += ports.length;
    }
  }
  if (count === 0) return '<none>';
  return count > 3 ? `${first.join(',')} + ${count - 3} more...` : first.join(',');
}
