/**
 * networking.k8s.io/v1 Ingress (+status) as a stored kind: no ingress controller acts on it
 * here, so its status stays what /status writes. kubectl's columns (pkg/printers
 * internalversion printIngress): NAME CLASS HOSTS ADDRESS PORTS AGE. The server prints the
 * address unabridged (kube's table convertor prints wide).
 */
import { ageOf, statusSubresource, type KindDeclaration } from '@app/registry';
import type { KubeObject } from '@app/apimachinery';
import { asMap, mapsOf } from '../../core/core.helpers.js';
import { IngressSchema } from '../networking.schema.js';
import { ingressStatusStrategy, ingressStrategy } from './ingress.strategy.js';

/** Hosts shown before ` + N more...`. */
const MAX_HOSTS = 3;

/** CLASS: spec.ingressClassName, or <none>. */
export function ingressClassCell(o: KubeObject): string {
  const c = asMap(o.spec).ingressClassName;
  return typeof c === 'string' ? c : '<none>';
}

/** HOSTS (formatHosts): the first three rule hosts, `*` when no rule names one, then how many rules more. */
export function ingressHostsCell(o: KubeObject): string {
  const rules = mapsOf(asMap(o.spec).rules);
  const hosts: string[] = [];
  let more = false;
  for (const r of rules) {
    if (hosts.length === MAX_HOSTS) more = true;
    if (!more && typeof r.host === 'string' && r.host !== '') hosts.push(r.host);
  }
  if (hosts.length === 0) return '*';
  return more ? `${hosts.join(',')} + ${rules.length - MAX_HOSTS} more...` : hosts.join(',');
}

/** ADDRESS: the load balancer points' IPs (else hostnames), sorted, without repeats, comma-separated. */
export function ingressAddressCell(o: KubeObject): string {
  const points = mapsOf(asMap(asMap(o.status).loadBalancer).ingress);
  const out = new Set<string>();
  for (const p of points) {
    if (typeof p.ip === 'string' && p.ip !== '') out.add(p.ip);
    else if (typeof p.hostname === 'string' && p.hostname !== '') out.add(p.hostname);
  }
  return [...out].sort().join(',');
}

/** PORTS: 80, plus 443 when TLS is configured. */
export const ingressPortsCell = (o: KubeObject): string => (mapsOf(asMap(o.spec).tls).length > 0 ? '80, 443' : '80');

/** The Ingress declaration. */
export const ingressKind: KindDeclaration = {
  group: 'networking.k8s.io',
  version: 'v1',
  kind: 'Ingress',
  plural: 'ingresses',
  singular: 'ingress',
  shortNames: ['ing'],
  namespaced: true,
  schema: IngressSchema,
  protobufMessage: 'k8s.io.api.networking.v1.Ingress',
  strategy: ingressStrategy,
  subresources: { status: { verbs: statusSubresource().verbs, strategy: ingressStatusStrategy } },
  generation: 'spec',
  tableColumns: [
    { name: 'Class', type: 'string', priority: 0, description: 'The IngressClass that serves this Ingress', cell: ingressClassCell },
    { name: 'Hosts', type: 'string', priority: 0, description: 'Hosts matched by the rules', cell: ingressHostsCell },
    { name: 'Address', type: 'string', priority: 0, description: 'Ingress points of the load balancer', cell: ingressAddressCell },
    { name: 'Ports', type: 'string', priority: 0, description: 'Ports opened (443 with TLS)', cell: ingressPortsCell },
    { name: 'Age', type: 'string', priority: 0, description: 'Time since creation', cell: (o, now) => ageOf(o, now) },
  ],
};
