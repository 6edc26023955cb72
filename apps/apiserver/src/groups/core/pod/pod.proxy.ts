/**
 * A pod's `proxy` subresource (kube's pods/proxy): any request to
 * /api/v1/namespaces/{ns}/pods/{name}/proxy[/path] goes to the pod itself, at its IP
 * (`status.podIPs[0]`), with the path below `proxy` and the request's query. The name may say
 * the scheme and port, `[http|https:]name[:port]`; without a port, the first port a container
 * declares, without any the scheme's. As kube-apiserver's:
 *
 * - a name that does not split so is a 400 `invalid pod request "<name>"`, a missing pod 404;
 * - a pod without an IP, or one that is not a global unicast address (loopback, link-local,
 *   multicast), is a 400 `address not allowed`: the proxy never reaches the API server's own
 *   host;
 * - https backends' certificates are not checked.
 *
 * The HTTP layer passes the request on (http/reverse-proxy.ts), or tunnels it when it asks to
 * switch protocols (http/upgrade-proxy.ts). Each method needs its verb on `pods/proxy` (GET and
 * HEAD get, POST create, PUT update, PATCH patch, DELETE delete).
 */
import { Errors, type KubeObject } from '@app/apimachinery';
import type { ConnectTarget, SubresourceDeclaration } from '@app/registry';
import { asMap } from '../core.helpers.js';
import { agentFor, checkProxyableIp, proxySubresource, proxyUrl } from '../proxy.location.js';
import type { PodKubeletPorts } from './pod.kubelet.js';

/** The first port a container of the pod declares ('' when none does). */
export function firstContainerPort(pod: KubeObject): string {
  const containers = asMap(pod.spec).containers;
  for (const c of Array.isArray(containers) ? containers : []) {
    const ports = asMap(c).ports;
    if (Array.isArray(ports) && ports.length > 0) {
      const p = asMap(ports[0]).containerPort;
      if (typeof p === 'number') return String(p);
    }
  }
  return '';
}

/** The pod's primary IP ('' when it has none yet). */
export function podIp(pod: KubeObject): string {
  const ips = asMap(pod.status).podIPs;
  const first = Array.isArray(ips) ? asMap(ips[0]).ip : undefined;
  return typeof first === 'string' ? first : '';
}

/** The `proxy` subresource of pods. */
export function podProxySubresource(ports: PodKubeletPorts): SubresourceDeclaration {
  return proxySubresource('pod', 'PodProxyOptions', async (ns, where, path): Promise<ConnectTarget> => {
    const deps = ports.deps;
    if (!deps) throw Errors.internal('the pod proxy is not wired');
    const pod = await deps.getPod(ns, where.name);
    const ip = podIp(pod);
    checkProxyableIp(ip);
    const url = proxyUrl(where.scheme, ip, where.port || firstContainerPort(pod), path);
    return { url, agent: agentFor(url, deps.proxies) };
  });
}
