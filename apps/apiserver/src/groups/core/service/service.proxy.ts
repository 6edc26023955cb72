/**
 * A service's `proxy` subresource (kube's services/proxy): any request to
 * /api/v1/namespaces/{ns}/services/{name}/proxy[/path] goes to one of the service's endpoints,
 * with the path below `proxy` and the request's query. The name may say the scheme and port,
 * `[http|https:]name[:port]`, the port by number (a port the Service declares, then known by
 * its name) or by name; without one, the endpoints' unnamed port. As kube-apiserver's:
 *
 * - a name that does not split so is a 400 `invalid service request "<name>"`;
 * - a port number the Service does not declare is a 503 `no service port N found for service
 *   "<name>"` (a missing Service 404), missing Endpoints a 404;
 * - the endpoint is picked at random among the ready addresses of a subset with the port, and
 *   only an address that is its target pod's IP is taken (a pod of the same namespace); none
 *   left is a 503 `no endpoints available for service "<name>"`;
 * - only global unicast addresses are proxied to (proxy.location.ts), https backends'
 *   certificates are not checked.
 *
 * Each method needs its verb on `services/proxy` (GET and HEAD get, POST create, and so on).
 */
import type { Agent as HttpAgent } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import { Errors, StatusError, type KubeObject } from '@app/apimachinery';
import type { ConnectTarget, SubresourceDeclaration } from '@app/registry';
import { asMap } from '../core.helpers.js';
import { agentFor, checkProxyableIp, proxySubresource, proxyUrl } from '../proxy.location.js';

/** What the service proxy reads of the server (the core group module fills it in). */
export interface ServiceProxyDeps {
  getService(ns: string, name: string): Promise<KubeObject>;
  getEndpoints(ns: string, name: string): Promise<KubeObject>;
  getPod(ns: string, name: string): Promise<KubeObject>;
  proxies: { http: HttpAgent; https: HttpsAgent };
}

/** The service proxy's port to the server. */
export class ServiceProxyPorts {
  deps?: ServiceProxyDeps;
}

const unavailable = (message: string): StatusError => new StatusError(503, 'ServiceUnavailable', message);
const list = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? v.map(asMap) : []);

/** The name of the Service's port numbered `port`, or a 503 when it declares none. */
export function servicePortName(service: KubeObject, port: number, name: string): string {
  for (const p of list(asMap(service.spec).ports)) {
    if (p.port === port) return typeof p.name === 'string' ? p.name : '';
  }
  throw unavailable(`no service port ${port} found for service ${JSON.stringify(name)}`);
}

/** True when `ip` is an address of the pod `addr.targetRef` names in `ns` (kube's isValidAddress). */
async function isPodAddress(deps: ServiceProxyDeps, ns: string, addr: Record<string, unknown>): Promise<boolean> {
  const ref = asMap(addr.targetRef);
  if (ref.kind !== undefined && ref.kind !== 'Pod') return false;
  if (typeof ref.name !== 'string' || (ref.namespace !== undefined && ref.namespace !== ns)) return false;
  try {
    const pod = await deps.getPod(ns, ref.name);
    return list(asMap(pod.status).podIPs).some((p) => p.ip === addr.ip);
  } catch {
    return false;
  }
}

const pick = <T>(items: readonly T[], i: number): T => items[i % items.length]!;

/** The `proxy` subresource of services. */
export function serviceProxySubresource(ports: ServiceProxyPorts): SubresourceDeclaration {
  return proxySubresource('service', 'ServiceProxyOptions', async (ns, where, path, id): Promise<ConnectTarget> => {
    const deps = ports.deps;
    if (!deps) throw Errors.internal('the service proxy is not wired');
    let portName = where.port;
    if (/^[+-]?\d+$/.test(portName)) portName = servicePortName(await deps.getService(ns, where.name), Number(portName), where.name);
    const subsets = list(asMap(await deps.getEndpoints(ns, where.name)).subsets);
    if (subsets.length === 0) throw unavailable(`no endpoints available for service ${JSON.stringify(where.name)}`);
    const start = Math.floor(Math.random() * subsets.length);
    for (let s = 0; s < subsets.length; s++) {
      const subset = pick(subsets, start + s);
      const addresses = list(subset.addresses);
      if (addresses.length === 0) continue;
      const port = list(subset.ports).find((p) => (typeof p.name === 'string' ? p.name : '') === portName);
      if (!port || typeof port.port !== 'number') continue;
      const first = Math.floor(Math.random() * addresses.length);
      for (let a = 0; a < addresses.length; a++) {
        const addr = pick(addresses, first + a);
        if (typeof addr.ip !== 'string' || !(await isPodAddress(deps, ns, addr))) continue;
        checkProxyableIp(addr.ip);
        const url = proxyUrl(where.scheme, addr.ip, String(port.port), path);
        return { url, agent: agentFor(url, deps.proxies) };
      }
    }
    throw unavailable(`no endpoints available for service ${JSON.stringify(id)}`);
  });
}
