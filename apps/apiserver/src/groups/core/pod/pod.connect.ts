/**
 * A pod's `exec`, `attach` and `portforward` subresources (kube's ExecREST, AttachREST and
 * PortForwardREST): GET or POST /api/v1/namespaces/{ns}/pods/{name}/exec (and the others)
 * connect the client to the kubelet of the pod's node, which runs the command, attaches to the
 * container or forwards the ports. As kube-apiserver does:
 *
 * - the options (PodExecOptions, PodAttachOptions, PodPortForwardOptions, as query parameters;
 *   `command` and `ports` repeated) are decoded, a value that does not parse is a 400;
 * - the pod must exist (404); exec and attach take one of its containers (as for logs: without
 *   `container` a pod of one container means that one, otherwise 400), port-forward the pod;
 * - a pod that no node runs yet cannot be connected to (400 `pod <name> does not have a host
 *   assigned`);
 * - the connection goes to https://<kubelet>/exec/<ns>/<pod>/<container>?command=...&stdin=1...
 *   (attach: /attach/..., port-forward: /portForward/<ns>/<pod>?port=...), at the address the
 *   pod's Node gives, with the --kubelet-* TLS (pod.kubelet.ts); the HTTP layer upgrades the
 *   client's connection and tunnels it there (http/upgrade-proxy.ts). A request that does not
 *   ask to switch protocols is a 400 `Upgrade request required`.
 *
 * Both GET (WebSocket) and POST (SPDY) need `create` on the subresource: the pipeline checks it
 * for GET too (pipeline.ts), as kube-apiserver does from 1.35.
 */
import { Errors, type KubeObject } from '@app/apimachinery';
import type { ConnectTarget, RequestContext, SubresourceDeclaration } from '@app/registry';
import { queryBool } from '../../../http/options.dto.js';
import { asMap } from '../core.helpers.js';
import { kubeletAddress, podContainer, type PodKubeletDeps, type PodKubeletPorts } from './pod.kubelet.js';

type Query = Readonly<Record<string, readonly string[]>>;

/** PodExecOptions and PodAttachOptions (attach has no command) as decoded from the query. */
export interface PodStreamOptions {
  container?: string;
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
  command: string[];
}

const first = (q: Query, k: string): string | undefined => q[k]?.[0];

/** Decodes PodExecOptions (or PodAttachOptions, without `command`) from the query. */
export function decodeStreamOptions(q: Query, withCommand: boolean): PodStreamOptions {
  const o: PodStreamOptions = {
    stdin: queryBool(first(q, 'stdin')),
    stdout: queryBool(first(q, 'stdout')),
    stderr: queryBool(first(q, 'stderr')),
    tty: queryBool(first(q, 'tty')),
    command: withCommand ? [...(q.command ?? [])] : [],
  };
  const container = first(q, 'container');
  if (container) o.container = container;
  return o;
}

/** Decodes PodPortForwardOptions' ports (int32 each, as Go's strconv.ParseInt reads it; 400 otherwise). */
export function decodePorts(q: Query): number[] {
  return (q.ports ?? []).map((v) => {
    if (!/^[+-]?\d+$/.test(v)) throw Errors.badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
    const n = Number(v);
    if (n < -(2 ** 31) || n >= 2 ** 31) throw Errors.badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: value out of range`);
    return n;
  });
}

/** The kubelet's query for exec and attach, sorted by name as Go's url.Values encodes it. */
export function streamParams(o: PodStreamOptions): string {
  const p = new URLSearchParams();
  for (const c of o.command) p.append('command', c);
  if (o.stderr) p.append('stderr', '1');
  if (o.stdin) p.append('stdin', '1');
  if (o.stdout) p.append('stdout', '1');
  if (o.tty) p.append('tty', '1');
  return p.toString();
}

const seg = encodeURIComponent;

/** The pod's node's kubelet, at the address its Node gives (400 while no node runs the pod). */
async function kubeletBase(deps: PodKubeletDeps, pod: KubeObject, name: string): Promise<string> {
  const nodeName = asMap(pod.spec).nodeName;
  if (typeof nodeName !== 'string' || nodeName === '') throw Errors.badRequest(`pod ${name} does not have a host assigned`);
  const addr = kubeletAddress(await deps.getNode(nodeName), deps.addressTypes);
  return `https://${addr.host.includes(':') ? `[${addr.host}]` : addr.host}:${addr.port}`;
}

function wired(ports: PodKubeletPorts): PodKubeletDeps {
  if (!ports.deps) throw Errors.internal('the pod connect subresources are not wired');
  return ports.deps;
}

/** The `exec` (withCommand) or `attach` subresource. */
function containerStream(ports: PodKubeletPorts, path: 'exec' | 'attach', optionsKind: string): SubresourceDeclaration {
  return {
    verbs: ['create', 'get'],
    connect: {
      optionsKind,
      async connect(ns: string, name: string, query: Query, _ctx: RequestContext): Promise<ConnectTarget> {
        const deps = wired(ports);
        const opts = decodeStreamOptions(query, path === 'exec');
        const pod = await deps.getPod(ns, name);
        const container = podContainer(pod, opts.container);
        const base = await kubeletBase(deps, pod, name);
        const params = streamParams(opts);
        const url = new URL(`${base}/${path}/${seg(ns)}/${seg(name)}/${seg(container)}${params ? `?${params}` : ''}`);
        return { url, agent: deps.kubelets.verified };
      },
    },
  };
}

/** The `exec` subresource. */
export function execSubresource(ports: PodKubeletPorts): SubresourceDeclaration {
  return containerStream(ports, 'exec', 'PodExecOptions');
}

/** The `attach` subresource. */
export function attachSubresource(ports: PodKubeletPorts): SubresourceDeclaration {
  return containerStream(ports, 'attach', 'PodAttachOptions');
}

/** The `portforward` subresource. */
export function portForwardSubresource(ports: PodKubeletPorts): SubresourceDeclaration {
  return {
    verbs: ['create', 'get'],
    connect: {
      optionsKind: 'PodPortForwardOptions',
      async connect(ns: string, name: string, query: Query, _ctx: RequestContext): Promise<ConnectTarget> {
        const deps = wired(ports);
        const portList = decodePorts(query);
        const pod = await deps.getPod(ns, name);
        const base = await kubeletBase(deps, pod, name);
        const params = portList.length ? `?${new URLSearchParams({ port: portList.join(',') }).toString()}` : '';
        return { url: new URL(`${base}/portForward/${seg(ns)}/${seg(name)}${params}`), agent: deps.kubelets.verified };
      },
    },
  };
}
