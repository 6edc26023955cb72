/**
 * The pure part of the endpoints and endpointslice controllers (kube-controller-manager's
 * pkg/controller/endpoint and pkg/controller/endpointslice, Kubernetes 1.33): which pods of a
 * Service with a selector are its endpoints, on which ports, and the Endpoints object and the
 * EndpointSlices that say so.
 *
 * Rules, as in kube:
 *  - a Service gets endpoints from these controllers when it has a selector and is not of type
 *    ExternalName; the pods are those of its namespace whose labels hold every pair of the
 *    selector;
 *  - a pod is an endpoint when it has an IP and is not terminal (phase Succeeded or Failed); a
 *    terminating pod (deletionTimestamp set) only for `publishNotReadyAddresses` Services in
 *    Endpoints, always in slices (with terminating: true);
 *  - ready is the pod's Ready condition, or always for `publishNotReadyAddresses`;
 *  - a Service port's targetPort is a number (the port itself when absent) or the name of a
 *    container port with the same protocol (containers, then restartable init containers); a pod
 *    without that port is no endpoint of that port;
 *  - the address is the pod's IP of the Service's family (its cluster IP's, else its first
 *    ipFamilies entry, else the pod's first IP's); the hostname is the pod's when its subdomain
 *    names the Service;
 *  - Endpoints: named after the Service, its labels (plus service.kubernetes.io/headless when it
 *    has no cluster IP), subsets repacked by port set, at most 1000 addresses (ready ones first,
 *    annotated endpoints.kubernetes.io/over-capacity: truncated beyond);
 *  - EndpointSlices: one group per address type and port set, at most 100 endpoints a slice,
 *    labelled with the Service's labels plus kubernetes.io/service-name,
 *    endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io (and the headless
 *    label), controlled by the Service (an ownerReference, so the garbage collector removes them
 *    with it), named `<service>-<random>`; a Service without any endpoint keeps one empty
 *    slice (kube's placeholder).
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '@app/apimachinery';
import { asMap, mapsOf } from '../groups/core/core.helpers.js';
import { newControllerRef } from './disruption.logic.js';
import { canonicalIP, hasSelector, LABEL_MANAGED_BY, LABEL_SERVICE_NAME, repackSubsets, sliceKey, slicePrefix } from './endpointslicemirroring.logic.js';

type Obj = Record<string, unknown>;

/** The value of endpointslice.kubernetes.io/managed-by on the slices this controller writes. */
export const SLICE_CONTROLLER_NAME = 'endpointslice-controller.k8s.io';
/** Label of Endpoints and slices of a Service without a cluster IP. */
export const LABEL_HEADLESS = 'service.kubernetes.io/headless';
/** Annotation of an Endpoints that holds fewer addresses than its Service has. */
export const ANNOTATION_OVER_CAPACITY = 'endpoints.kubernetes.io/over-capacity';
/** Addresses an Endpoints holds at most (kube's maxCapacity). */
export const MAX_ENDPOINTS_CAPACITY = 1000;
/** Endpoints of one slice at most (the controller's --max-endpoints-per-slice default). */
export const MAX_ENDPOINTS_PER_SLICE = 100;

const strMap = (v: unknown): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(asMap(v))) if (typeof val === 'string') out[k] = val;
  return out;
};

/** Whether these controllers give the Service endpoints: a selector, and not ExternalName. */
export function managesService(service: KubeObject): boolean {
  return asMap(service.spec).type !== 'ExternalName' && hasSelector(service);
}

/** Whether the pod's labels hold every pair of the Service's selector. */
export function selects(service: KubeObject, pod: KubeObject): boolean {
  const labels = strMap(pod.metadata.labels);
  return Object.entries(strMap(asMap(service.spec).selector)).every(([k, v]) => labels[k] === v);
}

/** podutil.IsPodReady: the Ready condition is True. */
export function isPodReady(pod: KubeObject): boolean {
  return mapsOf(asMap(pod.status).conditions).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** The pod's IPs (status.podIPs, else status.podIP). */
function podIPs(pod: KubeObject): string[] {
  const status = asMap(pod.status);
  const ips = mapsOf(status.podIPs)
    .map((p) => p.ip)
    .filter((ip): ip is string => typeof ip === 'string' && ip !== '');
  if (ips.length) return ips;
  return typeof status.podIP === 'string' && status.podIP !== '' ? [status.podIP] : [];
}

/** endpointsliceutil.ShouldPodBeInEndpoints: not terminal, has an IP, terminating only when included. */
export function shouldPodBeInEndpoints(pod: KubeObject, includeTerminating: boolean): boolean {
  const phase = asMap(pod.status).phase;
  if (phase === 'Succeeded' || phase === 'Failed') return false;
  if (podIPs(pod).length === 0) return false;
  return includeTerminating || !pod.metadata.deletionTimestamp;
}

/** podutil.FindPort: the pod's port number for a Service port, undefined when it has none. */
export function findPort(pod: KubeObject, servicePort: Obj): number | undefined {
  const target = servicePort.targetPort ?? servicePort.port;
  if (typeof target === 'number') return target;
  if (typeof target !== 'string') return undefined;
  if (/^\d+$/.test(target)) return Number(target);
  const protocol = servicePort.protocol ?? 'TCP';
  const spec = asMap(pod.spec);
  const containers = [...mapsOf(spec.containers), ...mapsOf(spec.initContainers).filter((c) => c.restartPolicy === 'Always')];
  for (const c of containers) {
    for (const p of mapsOf(c.ports)) {
      if (p.name === target && (p.protocol ?? 'TCP') === protocol && typeof p.containerPort === 'number') return p.containerPort;
    }
  }
  return undefined;
}

/** The Service's cluster IP when it has one (not None, not empty). */
function clusterIP(service: KubeObject): string | undefined {
  const ip = asMap(service.spec).clusterIP;
  return typeof ip === 'string' && ip !== '' && ip !== 'None' ? ip : undefined;
}

/** The Service's IP families in order: its cluster IP's, else spec.ipFamilies. */
export function serviceFamilies(service: KubeObject): Array<'IPv4' | 'IPv6'> {
  const ip = clusterIP(service);
  const fromIP = ip ? canonicalIP(ip)?.family : undefined;
  const listed = (Array.isArray(asMap(service.spec).ipFamilies) ? (asMap(service.spec).ipFamilies as unknown[]) : []).filter(
    (f): f is 'IPv4' | 'IPv6' => f === 'IPv4' || f === 'IPv6',
  );
  return fromIP ? [fromIP, ...listed.filter((f) => f !== fromIP)] : listed;
}

/** podToEndpointAddressForService: the pod's address of the Service's family, undefined when it has none. */
function endpointIP(service: KubeObject, pod: KubeObject): string | undefined {
  const ips = podIPs(pod)
    .map((ip) => canonicalIP(ip))
    .filter((x) => !!x);
  const family = serviceFamilies(service)[0] ?? ips[0]?.family;
  return ips.find((x) => x.family === family)?.ip;
}

/** ShouldSetHostname: the pod's hostname, when its subdomain is the Service's name. */
function hostnameFor(service: KubeObject, pod: KubeObject): string | undefined {
  const spec = asMap(pod.spec);
  const ok =
    typeof spec.hostname === 'string' &&
    spec.hostname !== '' &&
    spec.subdomain === service.metadata.name &&
    pod.metadata.namespace === service.metadata.namespace;
  return ok ? (spec.hostname as string) : undefined;
}

const podRef = (pod: KubeObject): Obj => ({ kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid });

/** The node a pod runs on, when it is scheduled. */
function nodeOf(pod: KubeObject): string | undefined {
  const n = asMap(pod.spec).nodeName;
  return typeof n === 'string' && n !== '' ? n : undefined;
}

/** A Service port as an Endpoints or slice port, with the pod's number. */
function endpointPort(servicePort: Obj, port: number): Obj {
  const out: Obj = { name: typeof servicePort.name === 'string' ? servicePort.name : '', port, protocol: servicePort.protocol ?? 'TCP' };
  if (typeof servicePort.appProtocol === 'string') out.appProtocol = servicePort.appProtocol;
  return out;
}

/** The subsets of the Service's Endpoints (syncService's loop, repacked). */
export function desiredSubsets(service: KubeObject, pods: KubeObject[]): Obj[] {
  const spec = asMap(service.spec);
  const tolerateUnready = spec.publishNotReadyAddresses === true;
  const ports = mapsOf(spec.ports);
  const raw: Obj[] = [];
  for (const pod of pods) {
    if (!selects(service, pod) || !shouldPodBeInEndpoints(pod, tolerateUnready)) continue;
    const ip = endpointIP(service, pod);
    if (!ip) continue;
    const address: Obj = { ip };
    const host = hostnameFor(service, pod);
    if (host) address.hostname = host;
    const node = nodeOf(pod);
    if (node) address.nodeName = node;
    address.targetRef = podRef(pod);
    const field = tolerateUnready || isPodReady(pod) ? 'addresses' : 'notReadyAddresses';
    if (ports.length === 0) {
      // A headless Service may have no ports: its pods are endpoints without any.
      if (spec.clusterIP === 'None') raw.push({ [field]: [address], ports: [] });
      continue;
    }
    for (const sp of ports) {
      const n = findPort(pod, sp);
      if (n === undefined) continue;
      // An Endpoints port leaves out an empty name (the slice's keeps it).
      const port = endpointPort(sp, n);
      if (port.name === '') delete port.name;
      raw.push({ [field]: [address], ports: [port] });
    }
  }
  return repackSubsets(raw).map((g) => {
    const s: Obj = {};
    if (g.ready.length) s.addresses = g.ready;
    if (g.notReady.length) s.notReadyAddresses = g.notReady;
    if (g.ports.length) s.ports = g.ports;
    return s;
  });
}

/** truncateEndpoints: keeps at most `max` addresses, ready ones first, spread over the subsets in proportion. */
export function truncateSubsets(subsets: Obj[], max = MAX_ENDPOINTS_CAPACITY): { subsets: Obj[]; truncated: boolean } {
  const ready = subsets.reduce((n, s) => n + mapsOf(s.addresses).length, 0);
  const notReady = subsets.reduce((n, s) => n + mapsOf(s.notReadyAddresses).length, 0);
  if (ready + notReady <= max) return { subsets, truncated: false };
  const truncateReady = ready > max;
  const room = truncateReady ? max : max - ready;
  const total = truncateReady ? ready : notReady;
  let left = room;
  const out = subsets.map((s) => {
    const field = truncateReady ? 'addresses' : 'notReadyAddresses';
    const list = mapsOf(s[field]);
    const take = Math.min(Math.ceil((list.length / total) * room), left);
    const kept = list.slice(0, take);
    left -= kept.length;
    const next: Obj = { ...s, [field]: kept };
    if (truncateReady) delete next.notReadyAddresses;
    for (const f of ['addresses', 'notReadyAddresses']) if (Array.isArray(next[f]) && (next[f] as unknown[]).length === 0) delete next[f];
    return next;
  });
  return { subsets: out, truncated: true };
}

/** A value with its object keys sorted, so that two orders of the same fields compare equal. */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') {
    const out: Obj = {};
    for (const k of Object.keys(v).sort()) {
      const x = (v as Obj)[k];
      if (x !== undefined) out[k] = canonical(x);
    }
    return out;
  }
  return v;
}

const sameJSON = (a: unknown, b: unknown): boolean =>
  isDeepStrictEqual(canonical(JSON.parse(JSON.stringify(a ?? null))), canonical(JSON.parse(JSON.stringify(b ?? null))));

/** Subsets as stored, for comparison: targetRef resourceVersions ignored, absent lists as empty. */
function comparableSubsets(subsets: unknown): unknown {
  return mapsOf(subsets).map((s) => {
    const addresses = (v: unknown) =>
      mapsOf(v).map((a) => {
        const ref = a.targetRef ? { ...asMap(a.targetRef) } : undefined;
        if (ref) delete ref.resourceVersion;
        return { ...a, targetRef: ref };
      });
    return { addresses: addresses(s.addresses), notReadyAddresses: addresses(s.notReadyAddresses), ports: mapsOf(s.ports) };
  });
}

/**
 * The Endpoints object the Service should have, given the current one (undefined: none yet);
 * undefined when the current one already says it (no write).
 */
export function desiredEndpoints(service: KubeObject, pods: KubeObject[], current: KubeObject | undefined): KubeObject | undefined {
  const subsets = desiredSubsets(service, pods);
  const serviceLabels = strMap(service.metadata.labels);
  if (current) {
    const labels = strMap(current.metadata.labels);
    delete labels[LABEL_HEADLESS];
    const annotations = strMap(current.metadata.annotations);
    const size = mapsOf(current.subsets).reduce((n, s) => n + mapsOf(s.addresses).length + mapsOf(s.notReadyAddresses).length, 0);
    const capacityRight = size <= MAX_ENDPOINTS_CAPACITY && !(ANNOTATION_OVER_CAPACITY in annotations);
    const headlessRight = LABEL_HEADLESS in strMap(current.metadata.labels) === !clusterIP(service);
    if (
      sameJSON(comparableSubsets(current.subsets), comparableSubsets(subsets)) &&
      isDeepStrictEqual(labels, serviceLabels) &&
      capacityRight &&
      headlessRight
    ) {
      return undefined;
    }
  }
  const { subsets: kept, truncated } = truncateSubsets(subsets);
  const annotations = strMap(current?.metadata.annotations);
  if (truncated) annotations[ANNOTATION_OVER_CAPACITY] = 'truncated';
  else delete annotations[ANNOTATION_OVER_CAPACITY];
  const labels = { ...serviceLabels };
  if (!clusterIP(service)) labels[LABEL_HEADLESS] = '';
  const metadata: KubeObject['metadata'] = { ...(current?.metadata ?? {}), name: service.metadata.name, namespace: service.metadata.namespace, labels };
  if (Object.keys(annotations).length) metadata.annotations = annotations;
  else delete metadata.annotations;
  // No subsets: the field is left out, as Kubernetes' JSON leaves out an empty list.
  return { apiVersion: 'v1', kind: 'Endpoints', metadata, ...(kept.length ? { subsets: kept } : {}) };
}

/** One EndpointSlice endpoint for a pod (podToEndpoint), undefined when it has no IP of the slice's type. */
export function sliceEndpoint(
  service: KubeObject,
  pod: KubeObject,
  addressType: 'IPv4' | 'IPv6',
  zones: ReadonlyMap<string, string> = new Map(),
): Obj | undefined {
  const ips = podIPs(pod)
    .map((ip) => canonicalIP(ip))
    .filter((x) => !!x && x.family === addressType)
    .map((x) => x!.ip);
  if (ips.length === 0) return undefined;
  const publish = asMap(service.spec).publishNotReadyAddresses === true;
  const serving = isPodReady(pod);
  const terminating = !!pod.metadata.deletionTimestamp;
  // A terminating pod is never ready, unless the Service publishes addresses that are not.
  const ready = publish || (serving && !terminating);
  const ep: Obj = { addresses: [ips[0]], conditions: { ready, serving, terminating } };
  const host = hostnameFor(service, pod);
  if (host) ep.hostname = host;
  ep.targetRef = podRef(pod);
  const node = nodeOf(pod);
  if (node) {
    ep.nodeName = node;
    const zone = zones.get(node);
    if (zone) ep.zone = zone;
  }
  return ep;
}

/** One wanted slice: its group key, address type, ports and endpoints. */
export interface WantedSlice {
  key: string;
  addressType: 'IPv4' | 'IPv6';
  ports: Obj[];
  endpoints: Obj[];
}

/** The slices a Service wants: per address type and port set, chunks of at most `perSlice` endpoints; a placeholder when it has none. */
export function desiredServiceSlices(
  service: KubeObject,
  pods: KubeObject[],
  zones: ReadonlyMap<string, string> = new Map(),
  perSlice = MAX_ENDPOINTS_PER_SLICE,
): WantedSlice[] {
  const families = serviceFamilies(service);
  const types: Array<'IPv4' | 'IPv6'> = families.length ? families : ['IPv4'];
  const servicePorts = mapsOf(asMap(service.spec).ports);
  const groups = new Map<string, { addressType: 'IPv4' | 'IPv6'; ports: Obj[]; endpoints: Obj[] }>();
  const sorted = [...pods].sort((a, b) => String(a.metadata.name).localeCompare(String(b.metadata.name)));
  for (const pod of sorted) {
    if (!selects(service, pod) || !shouldPodBeInEndpoints(pod, true)) continue;
    const ports: Obj[] = [];
    for (const sp of servicePorts) {
      const n = findPort(pod, sp);
      if (n !== undefined) ports.push(endpointPort(sp, n));
    }
    for (const type of types) {
      const ep = sliceEndpoint(service, pod, type, zones);
      if (!ep) continue;
      const key = sliceKey(type, ports);
      let g = groups.get(key);
      if (!g) groups.set(key, (g = { addressType: type, ports, endpoints: [] }));
      g.endpoints.push(ep);
    }
  }
  const out: WantedSlice[] = [];
  for (const [key, g] of [...groups.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    for (let i = 0; i < g.endpoints.length; i += perSlice)
      out.push({ key, addressType: g.addressType, ports: g.ports, endpoints: g.endpoints.slice(i, i + perSlice) });
  }
  if (out.length === 0) out.push({ key: sliceKey(types[0]!, []), addressType: types[0]!, ports: [], endpoints: [] });
  return out;
}

/** The labels a slice of the Service carries (setEndpointSliceLabels). */
export function serviceSliceLabels(service: KubeObject): Record<string, string> {
  const labels = strMap(service.metadata.labels);
  delete labels[LABEL_HEADLESS];
  labels[LABEL_SERVICE_NAME] = service.metadata.name ?? '';
  labels[LABEL_MANAGED_BY] = SLICE_CONTROLLER_NAME;
  if (!clusterIP(service)) labels[LABEL_HEADLESS] = '';
  return labels;
}

/** Whether a slice is one this controller manages for the named Service. */
export function isServiceSlice(slice: KubeObject, serviceName?: string): boolean {
  const labels = strMap(slice.metadata.labels);
  return labels[LABEL_MANAGED_BY] === SLICE_CONTROLLER_NAME && (serviceName === undefined || labels[LABEL_SERVICE_NAME] === serviceName);
}

function newServiceSlice(service: KubeObject, wanted: WantedSlice, existing?: KubeObject): KubeObject {
  const metadata: KubeObject['metadata'] = existing
    ? { ...existing.metadata }
    : { namespace: service.metadata.namespace, generateName: slicePrefix(service.metadata.name ?? '') };
  metadata.labels = serviceSliceLabels(service);
  metadata.ownerReferences = [newControllerRef(service, 'v1', 'Service')];
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata,
    addressType: wanted.addressType,
    endpoints: structuredClone(wanted.endpoints),
    ports: structuredClone(wanted.ports),
  };
}

/** Whether an existing slice already says what `wanted` says, with the Service's labels and ownership. */
function serviceSliceMatches(existing: KubeObject, wanted: WantedSlice, service: KubeObject): boolean {
  const refs = Array.isArray(existing.metadata.ownerReferences) ? existing.metadata.ownerReferences : [];
  return (
    sameJSON(existing.endpoints ?? [], wanted.endpoints) &&
    sameJSON(existing.ports ?? [], wanted.ports) &&
    isDeepStrictEqual(strMap(existing.metadata.labels), serviceSliceLabels(service)) &&
    sameJSON(refs, [newControllerRef(service, 'v1', 'Service')])
  );
}

/** The writes that take a Service's slices where it wants them. */
export interface SlicePlan {
  create: KubeObject[];
  update: KubeObject[];
  /** Names of slices to delete. */
  delete: string[];
}

/**
 * reconcile: pairs each wanted slice with an existing one of its group (by name order), rewrites
 * those that differ, creates the rest, and deletes the existing slices left over; a slice to
 * create takes the name of one to delete of the same address type instead (so a port change
 * rewrites a slice in place).
 */
export function planServiceSlices(service: KubeObject, wanted: WantedSlice[], existing: KubeObject[]): SlicePlan {
  const byKey = new Map<string, KubeObject[]>();
  for (const s of [...existing].sort((a, b) => String(a.metadata.name).localeCompare(String(b.metadata.name)))) {
    const key = sliceKey(String(s.addressType ?? ''), s.ports);
    byKey.set(key, [...(byKey.get(key) ?? []), s]);
  }
  const create: Array<{ wanted: WantedSlice }> = [];
  const update: KubeObject[] = [];
  for (const w of wanted) {
    const have = byKey.get(w.key);
    const next = have?.shift();
    if (!next) create.push({ wanted: w });
    else if (!serviceSliceMatches(next, w, service)) update.push(newServiceSlice(service, w, next));
  }
  const leftovers = [...byKey.values()].flat();
  const created: KubeObject[] = [];
  for (const c of create) {
    const j = leftovers.findIndex((s) => s.addressType === c.wanted.addressType);
    if (j >= 0) update.push(newServiceSlice(service, c.wanted, leftovers.splice(j, 1)[0]));
    else created.push(newServiceSlice(service, c.wanted));
  }
  return { create: service.metadata.deletionTimestamp ? [] : created, update, delete: leftovers.map((s) => s.metadata.name ?? '') };
}

/**
 * What the controllers keep of a pod in their watch-fed copy: the fields the rules above read
 * (labels, deletion, node, hostname and subdomain, the containers' ports and restart policies,
 * the phase, the IPs and the Ready condition).
 */
export function endpointsPodView(pod: KubeObject): KubeObject {
  const m = pod.metadata;
  const spec = asMap(pod.spec);
  const status = asMap(pod.status);
  const ports = (c: Obj): Obj => ({ ...(c.restartPolicy !== undefined ? { restartPolicy: c.restartPolicy } : {}), ...(c.ports ? { ports: c.ports } : {}) });
  const pick = (from: Obj, keys: string[]): Obj => Object.fromEntries(keys.filter((k) => from[k] !== undefined).map((k) => [k, from[k]]));
  const ready = mapsOf(status.conditions).find((c) => c.type === 'Ready');
  return {
    metadata: pick(m as Obj, ['namespace', 'name', 'uid', 'labels', 'deletionTimestamp']) as KubeObject['metadata'],
    spec: {
      ...pick(spec, ['nodeName', 'hostname', 'subdomain']),
      containers: mapsOf(spec.containers).map(ports),
      ...(spec.initContainers ? { initContainers: mapsOf(spec.initContainers).map(ports) } : {}),
    },
    status: { ...pick(status, ['phase', 'podIP', 'podIPs']), ...(ready ? { conditions: [ready] } : {}) },
  };
}

/** When the change that a write of Endpoints or EndpointSlices follows happened (kube's EndpointsLastChangeTriggerTime). */
export const ANNOTATION_TRIGGER_TIME = 'endpoints.kubernetes.io/last-change-trigger-time';

/**
 * kube's TriggerTimeTracker: for each Service, the Ready condition's transition time of each pod
 * it selects and its own creation time, as the last sync saw them. `compute` remembers the new
 * ones and answers the earliest that changed since (a new pod, a Ready transition, the Service
 * made again); for a Service not seen before, its creation time; undefined when nothing changed
 * (a change of the Service's spec or a pod's labels has no time of its own, as in kube).
 */
export class TriggerTimeTracker {
  private readonly states = new Map<string, { service: number; pods: Map<string, number> }>();

  compute(service: KubeObject, pods: readonly KubeObject[]): number | undefined {
    const key = `${service.metadata.namespace ?? ''}/${service.metadata.name ?? ''}`;
    const before = this.states.get(key);
    let earliest: number | undefined;
    const changed = (t: number) => (earliest = earliest === undefined ? t : Math.min(earliest, t));
    const podTimes = new Map<string, number>();
    for (const pod of pods) {
      const ready = mapsOf(asMap(pod.status).conditions).find((c) => c.type === 'Ready');
      const t = Date.parse(String(ready?.lastTransitionTime ?? ''));
      if (!Number.isFinite(t)) continue;
      const name = String(pod.metadata.name ?? '');
      podTimes.set(name, t);
      if (t > (before?.pods.get(name) ?? -Infinity)) changed(t);
    }
    const created = Date.parse(String(service.metadata.creationTimestamp ?? ''));
    const serviceTime = Number.isFinite(created) ? created : -Infinity;
    if (serviceTime > (before?.service ?? -Infinity)) changed(serviceTime);
    this.states.set(key, { service: serviceTime, pods: podTimes });
    if (!before) return Number.isFinite(serviceTime) ? serviceTime : undefined;
    return earliest;
  }

  /** Forgets a Service that is gone. */
  forget(namespace: string, name: string): void {
    this.states.delete(`${namespace}/${name}`);
  }

  clear(): void {
    this.states.clear();
  }
}

/** A time as Go's RFC3339Nano in UTC: no fraction when it is whole seconds, else without trailing zeros. */
export function formatTriggerTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d*?)0*Z$/, (_, digits: string) => (digits ? `.${digits}Z` : 'Z'));
}

/** `obj` with the trigger time annotation set to `ms`, or taken off when there is none (kube's addTriggerTimeAnnotation). */
export function withTriggerTime(obj: KubeObject, ms: number | undefined): KubeObject {
  const annotations = strMap(obj.metadata.annotations);
  if (ms !== undefined) annotations[ANNOTATION_TRIGGER_TIME] = formatTriggerTime(ms);
  else delete annotations[ANNOTATION_TRIGGER_TIME];
  const { annotations: _old, ...rest } = obj.metadata;
  return { ...obj, metadata: Object.keys(annotations).length ? { ...rest, annotations } : rest };
}
