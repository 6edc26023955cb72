/**
 * Service behaviour (pkg/registry/core/service strategy.go, pkg/apis/core/validation
 * ValidateService, SetDefaults_Service): DNS-1035 names; ports with their ranges, names and
 * protocols; node ports only for NodePort and LoadBalancer services; ExternalName services
 * name a DNS name and need no ports; clusterIP is "None", an IP the client gives, or empty, and
 * cannot change once set. Cluster IPs and node ports are allocated by the kind's allocator
 * (service.allocator.ts), after validation; an update first takes over the values the stored
 * Service holds where the new one leaves them out (patchAllocatedValues).
 */
import { isIP } from 'node:net';
import { isDNS1035Label, isDNS1123Label, isDNS1123Subdomain, validateLabels, type FieldError, type KubeObject } from '@app/apimachinery';
import { STATUS_STRATEGY, type Strategy, type SubresourceStrategy } from '@app/registry';
import { asMap } from '../core.helpers.js';

type Port = { name?: string; port?: unknown; protocol?: string; targetPort?: unknown; nodePort?: unknown };

const inRange = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 65535;
const RANGE = 'must be between 1 and 65535, inclusive';
function portsOf(svc: KubeObject): Port[] {
  const p = asMap(svc.spec).ports;
  return Array.isArray(p) ? (p as Port[]) : [];
}

/** An IANA service name, as a named targetPort must be (IsValidPortName). */
function portNameErrors(name: string): string[] {
  const errs: string[] = [];
  if (name.length > 15) errs.push('must be no more than 15 characters');
  if (!/^[-a-z0-9]+$/.test(name)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(name)) errs.push('must contain at least one letter (a-z)');
  if (name.includes('--')) errs.push("must not contain consecutive hyphens ('--')");
  if (name.startsWith('-') || name.endsWith('-')) errs.push("must not begin or end with a hyphen ('-')");
  return errs;
}

/** ValidateService. */
export function validateService(svc: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const name = svc.metadata.name ?? '';
  if (name) for (const m of isDNS1035Label(name)) errs.push({ type: 'FieldValueInvalid', field: 'metadata.name', value: name, detail: m });
  const spec = asMap(svc.spec);
  const type = typeof spec.type === 'string' ? spec.type : 'ClusterIP';
  const clusterIP = typeof spec.clusterIP === 'string' ? spec.clusterIP : '';
  const ports = portsOf(svc);
  if (type === 'ExternalName') {
    const ext = typeof spec.externalName === 'string' ? spec.externalName : '';
    if (ext === '') errs.push({ type: 'FieldValueRequired', field: 'spec.externalName', detail: '' });
    else
      for (const m of isDNS1123Subdomain(ext.replace(/\.$/, ''))) errs.push({ type: 'FieldValueInvalid', field: 'spec.externalName', value: ext, detail: m });
    if (clusterIP !== '') errs.push({ type: 'FieldValueForbidden', field: 'spec.clusterIP', detail: 'may not be set for ExternalName services' });
  } else if (ports.length === 0 && clusterIP !== 'None') {
    errs.push({ type: 'FieldValueRequired', field: 'spec.ports', detail: '' });
  }
  if (clusterIP !== '' && clusterIP !== 'None' && isIP(clusterIP) === 0) {
    errs.push({
      type: 'FieldValueInvalid',
      field: 'spec.clusterIPs[0]',
      value: clusterIP,
      detail: 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
    });
  }
  if (clusterIP === 'None' && (type === 'NodePort' || type === 'LoadBalancer')) {
    errs.push({ type: 'FieldValueInvalid', field: 'spec.clusterIPs[0]', value: 'None', detail: `may not be set to 'None' for ${type} services` });
  }
  const names = new Set<string>();
  const keys = new Set<string>();
  ports.forEach((p, i) => {
    const f = `spec.ports[${i}]`;
    const pname = typeof p.name === 'string' ? p.name : '';
    if (pname === '') {
      if (ports.length > 1) errs.push({ type: 'FieldValueRequired', field: `${f}.name`, detail: '' });
    } else {
      for (const m of isDNS1123Label(pname)) errs.push({ type: 'FieldValueInvalid', field: `${f}.name`, value: pname, detail: m });
      if (names.has(pname)) errs.push({ type: 'FieldValueDuplicate', field: `${f}.name`, value: pname, detail: '' });
      names.add(pname);
    }
    if (!inRange(p.port)) errs.push({ type: 'FieldValueInvalid', field: `${f}.port`, value: p.port, detail: RANGE });
    const key = `${String(p.port)}/${p.protocol ?? 'TCP'}`;
    if (keys.has(key)) errs.push({ type: 'FieldValueDuplicate', field: f, value: key, detail: '' });
    keys.add(key);
    if (typeof p.targetPort === 'number' && !inRange(p.targetPort))
      errs.push({ type: 'FieldValueInvalid', field: `${f}.targetPort`, value: p.targetPort, detail: RANGE });
    if (typeof p.targetPort === 'string') {
      for (const m of portNameErrors(p.targetPort)) errs.push({ type: 'FieldValueInvalid', field: `${f}.targetPort`, value: p.targetPort, detail: m });
    }
    if (p.nodePort !== undefined && p.nodePort !== 0) {
      if (type !== 'NodePort' && type !== 'LoadBalancer') {
        errs.push({ type: 'FieldValueForbidden', field: `${f}.nodePort`, detail: `may not be used when \`type\` is '${type}'` });
      } else if (!inRange(p.nodePort)) {
        // Whether it is within --service-node-port-range is the allocator's check.
        errs.push({ type: 'FieldValueInvalid', field: `${f}.nodePort`, value: p.nodePort, detail: RANGE });
      }
    }
  });
  errs.push(...validateLabels(spec.selector, 'spec.selector'));
  const ext = Array.isArray(spec.externalIPs) ? (spec.externalIPs as unknown[]) : [];
  ext.forEach((ip, i) => {
    if (typeof ip !== 'string' || isIP(ip) === 0)
      errs.push({
        type: 'FieldValueInvalid',
        field: `spec.externalIPs[${i}]`,
        value: ip,
        detail: 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
      });
  });
  return errs;
}

/** ValidateServiceUpdate: the cluster IP cannot change once set (only a change to ExternalName drops it). */
export function validateServiceUpdate(svc: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateService(svc);
  const before = asMap(old.spec).clusterIP;
  const after = asMap(svc.spec).clusterIP;
  if (typeof before === 'string' && before !== '' && asMap(svc.spec).type !== 'ExternalName' && after !== before) {
    errs.push({ type: 'FieldValueInvalid', field: 'spec.clusterIPs[0]', value: after ?? '', detail: 'may not change once set' });
  }
  return errs;
}

/** SetDefaults_Service beyond the schema's: targetPort = port, traffic policies, clusterIPs and IP family. */
export function defaultService(svc: KubeObject): void {
  const spec = asMap(svc.spec);
  svc.spec = spec;
  const type = typeof spec.type === 'string' ? spec.type : 'ClusterIP';
  for (const p of portsOf(svc)) if (p.targetPort === undefined || p.targetPort === 0 || p.targetPort === '') p.targetPort = p.port;
  if (type !== 'ExternalName' && spec.internalTrafficPolicy === undefined) spec.internalTrafficPolicy = 'Cluster';
  if ((type === 'NodePort' || type === 'LoadBalancer') && spec.externalTrafficPolicy === undefined) spec.externalTrafficPolicy = 'Cluster';
  if (type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts === undefined) spec.allocateLoadBalancerNodePorts = true;
  if (spec.sessionAffinity === 'ClientIP' && spec.sessionAffinityConfig === undefined) spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: 10800 } };
  const ip = typeof spec.clusterIP === 'string' ? spec.clusterIP : '';
  if (ip !== '' && spec.clusterIPs === undefined) spec.clusterIPs = [ip];
  if (ip !== '' && ip !== 'None' && isIP(ip) !== 0) {
    spec.ipFamilies ??= [isIP(ip) === 6 ? 'IPv6' : 'IPv4'];
    spec.ipFamilyPolicy ??= 'SingleStack';
  }
}

const needsClusterIP = (s: KubeObject): boolean => (asMap(s.spec).type ?? 'ClusterIP') !== 'ExternalName';
const needsNodePort = (s: KubeObject): boolean => asMap(s.spec).type === 'NodePort' || asMap(s.spec).type === 'LoadBalancer';
const needsHealthCheckPort = (s: KubeObject): boolean => asMap(s.spec).type === 'LoadBalancer' && asMap(s.spec).externalTrafficPolicy === 'Local';
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * An update that leaves out the values the stored Service was given keeps them (kube's
 * patchAllocatedValues), so that `kubectl replace` of a manifest without a cluster IP or node
 * ports is not a change of them: the cluster IP(s), each port's node port by port name (unless
 * another port of the new object uses it), and the health check node port.
 */
export function patchAllocatedValues(svc: KubeObject, old: KubeObject): void {
  const spec = asMap(svc.spec);
  svc.spec = spec;
  const before = asMap(old.spec);
  if (needsClusterIP(old) && needsClusterIP(svc)) {
    if ((spec.clusterIP === undefined || spec.clusterIP === '') && typeof before.clusterIP === 'string') spec.clusterIP = before.clusterIP;
    if ((!Array.isArray(spec.clusterIPs) || spec.clusterIPs.length === 0) && Array.isArray(before.clusterIPs) && before.clusterIPs.length > 0) {
      spec.clusterIPs = [...(before.clusterIPs as string[])];
    }
  }
  if (needsNodePort(old) && needsNodePort(svc)) {
    const used = (s: KubeObject) =>
      new Set(
        portsOf(s)
          .map((p) => p.nodePort)
          .filter((n) => typeof n === 'number' && n !== 0),
      );
    const oldUsed = used(old);
    const newUsed = used(svc);
    const inBoth = new Set([...oldUsed].filter((n) => newUsed.has(n)));
    const byName = new Map(portsOf(old).map((p) => [p.name ?? '', p.nodePort]));
    for (const p of portsOf(svc)) {
      if (p.nodePort !== undefined && p.nodePort !== 0) continue;
      const was = byName.get(p.name ?? '');
      if (typeof was === 'number' && was !== 0 && !inBoth.has(was)) p.nodePort = was;
    }
  }
  if (needsHealthCheckPort(old) && needsHealthCheckPort(svc) && (spec.healthCheckNodePort === undefined || spec.healthCheckNodePort === 0)) {
    if (before.healthCheckNodePort !== undefined) spec.healthCheckNodePort = before.healthCheckNodePort;
  }
}

/**
 * A type change drops the values the new type has no use for, where the update left them as
 * the stored Service had them (kube's dropTypeDependentFields): the cluster IP fields when
 * becoming ExternalName, node ports when leaving NodePort and LoadBalancer, the health check
 * node port, allocateLoadBalancerNodePorts, loadBalancerClass and externalTrafficPolicy.
 */
export function dropTypeDependentFields(svc: KubeObject, old: KubeObject): void {
  const spec = asMap(svc.spec);
  svc.spec = spec;
  const before = asMap(old.spec);
  if (needsClusterIP(old) && !needsClusterIP(svc)) {
    if (same(spec.clusterIP, before.clusterIP) && same(spec.clusterIPs, before.clusterIPs)) {
      delete spec.clusterIP;
      delete spec.clusterIPs;
    }
    if (same(spec.ipFamilies, before.ipFamilies)) delete spec.ipFamilies;
    if (same(spec.ipFamilyPolicy, before.ipFamilyPolicy)) delete spec.ipFamilyPolicy;
  }
  if (needsNodePort(old) && !needsNodePort(svc)) {
    const np = (s: KubeObject) => portsOf(s).map((p) => p.nodePort ?? 0);
    if (same(np(svc), np(old))) for (const p of portsOf(svc)) delete p.nodePort;
  }
  if (needsHealthCheckPort(old) && !needsHealthCheckPort(svc) && same(spec.healthCheckNodePort, before.healthCheckNodePort)) delete spec.healthCheckNodePort;
  if (before.type === 'LoadBalancer' && spec.type !== 'LoadBalancer') {
    if (spec.allocateLoadBalancerNodePorts !== undefined && same(spec.allocateLoadBalancerNodePorts, before.allocateLoadBalancerNodePorts)) {
      delete spec.allocateLoadBalancerNodePorts;
    }
    if (same(spec.loadBalancerClass, before.loadBalancerClass)) delete spec.loadBalancerClass;
  }
  if (needsNodePort(old) && !needsNodePort(svc) && same(spec.externalTrafficPolicy, before.externalTrafficPolicy)) delete spec.externalTrafficPolicy;
}

/** The Service strategy. */
export const serviceStrategy: Strategy = {
  prepareForCreate(svc) {
    delete svc.status;
    defaultService(svc);
  },
  prepareForUpdate(svc, old) {
    if (old.status === undefined) delete svc.status;
    else svc.status = structuredClone(old.status);
    patchAllocatedValues(svc, old);
    dropTypeDependentFields(svc, old);
    defaultService(svc);
  },
  validate: validateService,
  validateUpdate: validateServiceUpdate,
};

/** /status: only status (and labels/annotations) change. */
export const serviceStatusStrategy: SubresourceStrategy = {
  prepareForUpdate: STATUS_STRATEGY.prepareForUpdate,
  validateUpdate: () => [],
};

/** kubectl's PORT(S) cell: port[:nodePort]/protocol, comma-separated, <none> without ports. */
export function servicePortsCell(svc: KubeObject): string {
  const ports = portsOf(svc);
  if (ports.length === 0) return '<none>';
  return ports.map((p) => `${String(p.port)}${p.nodePort ? `:${String(p.nodePort)}` : ''}/${p.protocol ?? 'TCP'}`).join(',');
}

/** kubectl's EXTERNAL-IP cell (getServiceExternalIP). */
export function serviceExternalIpCell(svc: KubeObject): string {
  const spec = asMap(svc.spec);
  const external = Array.isArray(spec.externalIPs) ? (spec.externalIPs as string[]) : [];
  switch (spec.type ?? 'ClusterIP') {
    case 'ExternalName':
      return String(spec.externalName ?? '');
    case 'LoadBalancer': {
      const ingress = asMap(asMap(svc.status).loadBalancer).ingress;
      const lb = Array.isArray(ingress) ? (ingress as Array<Record<string, string>>).map((i) => i.ip || i.hostname).filter(Boolean) : [];
      const all = [...lb, ...external];
      return all.length > 0 ? all.join(',') : '<pending>';
    }
    default:
      return external.length > 0 ? external.join(',') : '<none>';
  }
}

/** kubectl's SELECTOR cell (-o wide): k=v pairs sorted, or <none>. */
export function serviceSelectorCell(svc: KubeObject): string {
  const sel = asMap(asMap(svc.spec).selector);
  const keys = Object.keys(sel).sort();
  return keys.length === 0 ? '<none>' : keys.map((k) => `${k}=${String(sel[k])}`).join(',');
}
