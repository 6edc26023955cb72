/**
 * A node's `proxy` subresource (kube's nodes/proxy): any request to
 * /api/v1/nodes/{name}/proxy[/path] goes to the node's kubelet (the address its Node gives, by
 * --kubelet-preferred-address-types, and its kubelet port), with the --kubelet-* TLS, the path
 * below `proxy` and the request's query: `kubectl get --raw /api/v1/nodes/n1/proxy/stats/summary`
 * reads the kubelet's summary. The name may say another port, `[http|https:]name:port`: the
 * request then goes to that port of the node's address (http unless said), through the proxy
 * pools. As kube-apiserver's:
 *
 * - a name that does not split so is a 400 `invalid node request "<name>"`, a missing node 404;
 * - a node address that is not, or does not resolve only to, global unicast addresses is a 400
 *   (`address not allowed`): the proxy never reaches the API server's own host.
 *
 * Each method needs its verb on `nodes/proxy` (GET and HEAD get, POST create, and so on).
 */
import { Errors } from '@app/apimachinery';
import type { ConnectTarget, SubresourceDeclaration } from '@app/registry';
import { kubeletAddress, type PodKubeletPorts } from '../pod/pod.kubelet.js';
import { agentFor, checkProxyableHost, proxySubresource, proxyUrl } from '../proxy.location.js';

/** The `proxy` subresource of nodes. */
export function nodeProxySubresource(ports: PodKubeletPorts): SubresourceDeclaration {
  return proxySubresource('node', 'NodeProxyOptions', async (_ns, where, path): Promise<ConnectTarget> => {
    const deps = ports.deps;
    if (!deps) throw Errors.internal('the node proxy is not wired');
    const kubelet = kubeletAddress(await deps.getNode(where.name), deps.addressTypes);
    await checkProxyableHost(kubelet.host);
    if (where.port === '' || where.port === String(kubelet.port)) {
      return { url: proxyUrl('https', kubelet.host, String(kubelet.port), path), agent: deps.kubelets.verified };
    }
    const url = proxyUrl(where.scheme, kubelet.host, where.port, path);
    return { url, agent: agentFor(url, deps.proxies) };
  });
}
