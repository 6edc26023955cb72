/**
 * What the pod subresources that only a node's kubelet can answer share (log, exec, attach,
 * portforward): the connections to kubelets with the --kubelet-* TLS, where a node's kubelet
 * listens, and which of the pod's containers a request means. kube-apiserver's
 * NodeConnectionInfoGetter and validateContainer.
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent } from 'node:https';
import { Errors, type KubeObject } from '@app/apimachinery';
import { KUBELET_ADDRESS_TYPES } from '../../../config/flags.js';
import { asMap } from '../core.helpers.js';

/** What the subresources served by kubelets read: the pod and its node (the core group module fills it in). */
export interface PodKubeletDeps {
  getPod(ns: string, name: string): Promise<KubeObject>;
  getNode(name: string): Promise<KubeObject>;
  /** The connections to kubelets (kubeletAgents). */
  kubelets: KubeletAgents;
  /** The Node address types tried for a kubelet's address, in order (--kubelet-preferred-address-types). */
  addressTypes: readonly string[];
  /** The connections of the proxy subresources to pods, and to nodes at another port than the kubelet's (proxyAgents). */
  proxies: ProxyAgents;
}

/** Connection pools of the proxy subresources: https backends' certificates are not checked (a pod's cannot be). */
export interface ProxyAgents {
  http: HttpAgent;
  https: Agent;
}

/** The proxy subresources' pools. */
export function proxyAgents(): ProxyAgents {
  return { http: new HttpAgent({ keepAlive: true }), https: new Agent({ keepAlive: true, rejectUnauthorized: false }) };
}

/** The TLS of the API server's requests to kubelets (--kubelet-client-certificate and the rest). */
export interface KubeletTls {
  /** The client certificate and key presented to kubelets (PEM). */
  cert?: Buffer;
  key?: Buffer;
  /** The CA that signed the kubelets' serving certificates (PEM); unset: they are not verified. */
  ca?: Buffer;
}

/** Connection pools to kubelets: `verified` checks the serving certificate when a CA is known, `insecure` never does. */
export interface KubeletAgents {
  verified: Agent;
  insecure: Agent;
}

/** The pools for `tls`: both present its client certificate; only `verified` checks the kubelet's against its CA. */
export function kubeletAgents(tls: KubeletTls = {}): KubeletAgents {
  const client = tls.cert && tls.key ? { cert: tls.cert, key: tls.key } : {};
  const insecure = new Agent({ keepAlive: true, rejectUnauthorized: false, ...client });
  return { insecure, verified: tls.ca ? new Agent({ keepAlive: true, ca: tls.ca, ...client }) : insecure };
}

/** The ports of the subresources served by kubelets (log, exec, attach, portforward). */
export class PodKubeletPorts {
  deps?: PodKubeletDeps;
}

/** The kubelet's port when the Node does not say (kube's KubeletPort). */
export const DEFAULT_KUBELET_PORT = 10250;

const names = (v: unknown): string[] => (Array.isArray(v) ? v : []).map((c) => asMap(c).name).filter((n): n is string => typeof n === 'string');

/** kube's validateContainer: the container the request means, or 400. */
export function podContainer(pod: KubeObject, container: string | undefined): string {
  const spec = asMap(pod.spec);
  const name = pod.metadata.name ?? '';
  const containers = names(spec.containers);
  if (!container) {
    if (containers.length === 1) return containers[0]!;
    if (containers.length === 0) throw Errors.badRequest(`a container name must be specified for pod ${name}`);
    // Every container of the pod, as podutil.VisitContainers lists them.
    const all = [...names(spec.initContainers), ...containers, ...names(spec.ephemeralContainers)];
    throw Errors.badRequest(`a container name must be specified for pod ${name}, choose one of: [${all.join(' ')}]`);
  }
  const all = new Set([...names(spec.initContainers), ...containers, ...names(spec.ephemeralContainers)]);
  if (!all.has(container)) throw Errors.badRequest(`container ${container} is not valid for pod ${name}`);
  return container;
}

/**
 * Where the node's kubelet listens (kube's NodeConnectionInfoGetter): the first address of the
 * node whose type comes first in `types` (--kubelet-preferred-address-types), or a 500 as kube's.
 */
export function kubeletAddress(node: KubeObject, types: readonly string[] = KUBELET_ADDRESS_TYPES): { host: string; port: number } {
  const status = asMap(node.status);
  const addresses = (Array.isArray(status.addresses) ? status.addresses : []).map(asMap);
  let host: string | undefined;
  for (const t of types) {
    const a = addresses.find((x) => x.type === t && typeof x.address === 'string' && x.address !== '');
    if (a) {
      host = a.address as string;
      break;
    }
  }
  if (host === undefined) {
    const known = addresses.map((a) => `{${String(a.type ?? '')} ${String(a.address ?? '')}}`).join(' ');
    throw Errors.internal(`no preferred addresses found; known addresses: [${known}]`);
  }
  const port = asMap(asMap(status.daemonEndpoints).kubeletEndpoint).Port;
  return { host, port: typeof port === 'number' && port > 0 ? port : DEFAULT_KUBELET_PORT };
}
