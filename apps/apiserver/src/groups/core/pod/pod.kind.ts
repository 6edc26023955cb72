/**
 * core/v1 Pod (+status) as a stored kind: no scheduler or node agent acts on it here. kubectl's
 * columns: NAME READY STATUS RESTARTS AGE, and IP NODE NOMINATED NODE READINESS GATES with
 * -o wide. DELETE answers with the object, as kube-apiserver's pod store does. The `eviction`
 * subresource deletes a pod as `kubectl drain` asks (pod.eviction.ts); the `binding`
 * subresource assigns it to a node as a scheduler does (pod.binding.ts); the `log` subresource
 * reads a container's log from the kubelet of the pod's node (pod.log.ts); `exec`, `attach` and
 * `portforward` connect the client to that kubelet (pod.connect.ts); `resize` changes the CPU
 * and memory of its containers in place (pod.resize.ts).
 */
import { ageOf, statusSubresource, type KindDeclaration } from '@app/registry';
import { asMap } from '../core.helpers.js';
import { BindingPorts, bindingSubresource } from './pod.binding.js';
import { ephemeralContainersSubresource } from './pod.ephemeral.js';
import { resizeSubresource } from './pod.resize.js';
import { EvictionPorts, evictionSubresource } from './pod.eviction.js';
import { PodKubeletPorts } from './pod.kubelet.js';
import { logSubresource } from './pod.log.js';
import { attachSubresource, execSubresource, portForwardSubresource } from './pod.connect.js';
import { podProxySubresource } from './pod.proxy.js';
import { PodSchema } from './pod.schema.js';
import { podStrategy } from './pod.strategy.js';

type Obj = Record<string, unknown>;
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(asMap) : []);

/** What the eviction subresource uses of the server; the core group module fills it in at start. */
export const evictionPorts = new EvictionPorts();

/** What the binding subresource and the `bindings` resource use; the core group module fills it in at start. */
export const bindingPorts = new BindingPorts();

/** What the subresources served by kubelets read of the server; the core group module fills it in at start. */
export const podKubeletPorts = new PodKubeletPorts();

/** The Pod declaration. */
export const podKind: KindDeclaration = {
  group: '',
  version: 'v1',
  kind: 'Pod',
  plural: 'pods',
  singular: 'pod',
  shortNames: ['po'],
  categories: ['all'],
  namespaced: true,
  schema: PodSchema,
  protobufMessage: 'k8s.io.api.core.v1.Pod',
  strategy: podStrategy,
  subresources: {
    status: statusSubresource(),
    eviction: evictionSubresource(evictionPorts),
    binding: bindingSubresource(bindingPorts),
    log: logSubresource(podKubeletPorts),
    exec: execSubresource(podKubeletPorts),
    attach: attachSubresource(podKubeletPorts),
    portforward: portForwardSubresource(podKubeletPorts),
    proxy: podProxySubresource(podKubeletPorts),
    ephemeralcontainers: ephemeralContainersSubresource(),
    resize: resizeSubresource(),
  },
  deleteReturnsObject: true,
  generation: 'spec',
  fieldSelectors: {
    'spec.nodeName': (o) => String(asMap(o.spec).nodeName ?? ''),
    'spec.restartPolicy': (o) => String(asMap(o.spec).restartPolicy ?? ''),
    'spec.schedulerName': (o) => String(asMap(o.spec).schedulerName ?? ''),
    'spec.serviceAccountName': (o) => String(asMap(o.spec).serviceAccountName ?? ''),
    'status.phase': (o) => String(asMap(o.status).phase ?? ''),
    'status.podIP': (o) => String(asMap(o.status).podIP ?? ''),
  },
  tableColumns: [
    {
      name: 'Ready',
      type: 'string',
      priority: 0,
      description: 'Ready containers of all containers',
      cell: (o) => `${list(asMap(o.status).containerStatuses).filter((c) => c.ready === true).length}/${list(asMap(o.spec).containers).length}`,
    },
    {
      name: 'Status',
      type: 'string',
      priority: 0,
      description: 'Phase or reason of the pod',
      cell: (o) => String(asMap(o.status).reason ?? asMap(o.status).phase ?? ''),
    },
    {
      name: 'Restarts',
      type: 'string',
      priority: 0,
      description: 'Container restarts',
      cell: (o) => String(list(asMap(o.status).containerStatuses).reduce((n, c) => n + (typeof c.restartCount === 'number' ? c.restartCount : 0), 0)),
    },
    { name: 'Age', type: 'string', priority: 0, description: 'Time since creation', cell: (o, now) => ageOf(o, now) },
    { name: 'IP', type: 'string', priority: 1, description: 'Pod IP', cell: (o) => String(asMap(o.status).podIP ?? '<none>') },
    { name: 'Node', type: 'string', priority: 1, description: 'Node of the pod', cell: (o) => String(asMap(o.spec).nodeName ?? '<none>') },
    {
      name: 'Nominated Node',
      type: 'string',
      priority: 1,
      description: 'Node nominated by preemption',
      cell: (o) => String(asMap(o.status).nominatedNodeName ?? '<none>'),
    },
    {
      name: 'Readiness Gates',
      type: 'string',
      priority: 1,
      description: 'Readiness gates met of all',
      cell: (o) => {
        const gates = list(asMap(o.spec).readinessGates);
        return gates.length ? `0/${gates.length}` : '<none>';
      },
    },
  ],
};
