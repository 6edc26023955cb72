/**
 * The pure part of the endpointslicemirroring controller (kube-controller-manager's
 * pkg/controller/endpointslicemirroring, Kubernetes 1.33): which Endpoints are mirrored, the
 * EndpointSlices an Endpoints object should have, and the creates, updates and deletes that take
 * the existing mirrored slices there.
 *
 * Rules, as in kube:
 *  - an Endpoints is mirrored when its Service exists without a selector, and it carries neither
 *    the label endpointslice.kubernetes.io/skip-mirror: "true" nor the leader-election
 *    annotation control-plane.alpha.kubernetes.io/leader; otherwise its mirrored slices go away;
 *  - the subsets are repacked first (an address with the same ports in several subsets is one
 *    endpoint; ready wins over not ready), then every (address family, port set) gets one slice:
 *    IPv4 and IPv6 addresses never share a slice, an address that is no IP is skipped, and at
 *    most 1000 addresses of a subset (maxEndpointsPerSubset) are mirrored;
 *  - an endpoint has the address (in its canonical form), ready: true for `addresses` and false
 *    for `notReadyAddresses`, and the address's hostname, nodeName and targetRef;
 *  - a slice copies the Endpoints' labels, then sets kubernetes.io/service-name and
 *    endpointslice.kubernetes.io/managed-by: endpointslicemirroring-controller.k8s.io; copies
 *    its annotations but endpoints.kubernetes.io/last-change-trigger-time and
 *    kubectl.kubernetes.io/last-applied-configuration; is controlled by the Endpoints (an
 *    ownerReference with controller: true); and is named `<service>-<random>` (generateName);
 *  - an existing slice of a port set is rewritten in place when its endpoints, labels or
 *    annotations differ; further slices of that set, and slices of sets no longer wanted, are
 *    deleted, unless a new slice of the same address type can take their name instead.
 */
import { isDeepStrictEqual } from 'node:util';
import { nameIsDNSSubdomain, type KubeObject } from '@app/apimachinery';
import { formatIP, parseIPSloppy } from '../groups/networking/networking.ip.js';
import { newControllerRef } from './disruption.logic.js';

type Obj = Record<string, unknown>;

/** The value of endpointslice.kubernetes.io/managed-by on mirrored slices. */
export const MIRRORING_CONTROLLER_NAME = 'endpointslicemirroring-controller.k8s.io';
/** Label naming the Service of a slice. */
export const LABEL_SERVICE_NAME = 'kubernetes.io/service-name';
/** Label naming the controller that manages a slice. */
export const LABEL_MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';
/** Label that keeps an Endpoints from being mirrored (value "true"). */
export const LABEL_SKIP_MIRROR = 'endpointslice.kubernetes.io/skip-mirror';
/** Annotation of the Endpoints objects old leader-election locks use: never mirrored. */
export const LEADER_ANNOTATION = 'control-plane.alpha.kubernetes.io/leader';
/** Addresses of one subset mirrored at most (the controller's --mirroring-max-endpoints-per-subset default). */
export const MAX_ENDPOINTS_PER_SUBSET = 1000;

const SKIPPED_ANNOTATIONS = ['endpoints.kubernetes.io/last-change-trigger-time', 'kubectl.kubernetes.io/last-applied-configuration'];

const asMap = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const mapsOf = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter((x): x is Obj => !!x && typeof x === 'object' && !Array.isArray(x)) : []);
const strMap = (v: unknown): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(asMap(v))) if (typeof val === 'string') out[k] = val;
  return out;
};

/** Whether an Endpoints may be mirrored at all (shouldMirror): no skip-mirror label, no leader-election annotation. */
export function shouldMirror(endpoints: KubeObject | undefined): boolean {
  if (!endpoints) return false;
  return strMap(endpoints.metadata.labels)[LABEL_SKIP_MIRROR] !== 'true' && !(LEADER_ANNOTATION in strMap(endpoints.metadata.annotations));
}

/** Whether a Service has a selector (an empty one, which Kubernetes stores as none, counts as none). */
export function hasSelector(service: KubeObject): boolean {
  return Object.keys(asMap(asMap(service.spec).selector)).length > 0;
}

/** Whether a slice is one this controller manages. */
export function isMirrored(slice: KubeObject): boolean {
  return strMap(slice.metadata.labels)[LABEL_MANAGED_BY] === MIRRORING_CONTROLLER_NAME;
}

/** An address in Go's net.IP String() form, with its family; undefined when it is no IP. */
export function canonicalIP(address: string): { ip: string; family: 'IPv4' | 'IPv6' } | undefined {
  const parsed = parseIPSloppy(address);
  if (!parsed) return undefined;
  const v4 = parsed.bits === 32 ? parsed.value : parsed.value >> 32n === 0xffffn ? parsed.value & 0xffffffffn : undefined;
  if (v4 !== undefined) return { ip: formatIP({ bits: 32, value: v4 }), family: 'IPv4' };
  return { ip: formatIP(parsed), family: 'IPv6' };
}

interface RepackedAddress {
  address: Obj;
  ports: Obj[];
  ready: boolean;
}

const portKey = (p: Obj): string => JSON.stringify([p.name ?? '', p.port ?? null, p.protocol ?? 'TCP', p.appProtocol ?? null]);

/**
 * endpoints.RepackSubsets: every address (by IP and targetRef uid) gets the union of the ports
 * of the subsets it is in, ready when it is ready in any; addresses with the same port set form
 * one subset. Ports are sorted by name, then number, so equal sets compare equal.
 */
export function repackSubsets(subsets: unknown): Array<{ ports: Obj[]; ready: Obj[]; notReady: Obj[] }> {
  const byAddress = new Map<string, RepackedAddress>();
  const add = (a: Obj, ports: Obj[], ready: boolean) => {
    const key = `${String(a.ip ?? '')}/${String(asMap(a.targetRef).uid ?? '')}`;
    let entry = byAddress.get(key);
    if (!entry) byAddress.set(key, (entry = { address: a, ports: [], ready }));
    else if (ready && !entry.ready) [entry.ready, entry.address] = [true, a];
    for (const p of ports) if (!entry.ports.some((q) => portKey(q) === portKey(p))) entry.ports.push(p);
  };
  for (const s of mapsOf(subsets)) {
    const ports = mapsOf(s.ports);
    for (const a of mapsOf(s.addresses)) add(a, ports, true);
    for (const a of mapsOf(s.notReadyAddresses)) add(a, ports, false);
  }
  const groups = new Map<string, { ports: Obj[]; ready: Obj[]; notReady: Obj[] }>();
  for (const e of byAddress.values()) {
    const ports = [...e.ports].sort((a, b) => String(a.name ?? '').localeCompare(String(b.name ?? '')) || Number(a.port ?? 0) - Number(b.port ?? 0));
    const key = JSON.stringify(ports.map(portKey));
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { ports, ready: [], notReady: [] }));
    (e.ready ? g.ready : g.notReady).push(e.address);
  }
  const byIP = (a: Obj, b: Obj) => String(a.ip ?? '').localeCompare(String(b.ip ?? ''));
  return [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([, g]) => ({ ports: g.ports, ready: g.ready.sort(byIP), notReady: g.notReady.sort(byIP) }));
}

/** An Endpoints port as an EndpointSlice port (name and protocol always set, as defaulting would). */
function slicePort(p: Obj): Obj {
  const out: Obj = { name: typeof p.name === 'string' ? p.name : '', port: p.port, protocol: typeof p.protocol === 'string' ? p.protocol : 'TCP' };
  if (typeof p.appProtocol === 'string') out.appProtocol = p.appProtocol;
  return out;
}

function sliceEndpoint(a: Obj, ip: string, ready: boolean): Obj {
  const ep: Obj = { addresses: [ip], conditions: { ready } };
  if (typeof a.hostname === 'string' && a.hostname !== '') ep.hostname = a.hostname;
  if (a.targetRef && typeof a.targetRef === 'object') ep.targetRef = structuredClone(a.targetRef);
  if (typeof a.nodeName === 'string') ep.nodeName = a.nodeName;
  return ep;
}

/** The identity of a group of slices: address type and port set (newAddrTypePortMapKey). */
export function sliceKey(addressType: string, ports: unknown): string {
  const sorted = mapsOf(ports)
    .map((p) => portKey(p))
    .sort();
  return `${addressType}/${JSON.stringify(sorted)}`;
}

/** One wanted slice: its key, address type, ports and endpoints. */
export interface DesiredSlice {
  key: string;
  addressType: 'IPv4' | 'IPv6';
  ports: Obj[];
  endpoints: Obj[];
}

/** What mirroring an Endpoints wants, and how many of its addresses were skipped (invalid or beyond the limit). */
export interface DesiredState {
  slices: DesiredSlice[];
  invalidAddresses: number;
  skippedAddresses: number;
}

/** The slices an Endpoints wants (reconcile's desired state), in a stable order. */
export function desiredSlices(endpoints: KubeObject, maxPerSubset = MAX_ENDPOINTS_PER_SUBSET): DesiredState {
  const byKey = new Map<string, DesiredSlice>();
  let invalidAddresses = 0;
  let skippedAddresses = 0;
  for (const subset of repackSubsets(endpoints.subsets)) {
    const ports = subset.ports.map(slicePort);
    let added = 0;
    const total = subset.ready.length + subset.notReady.length;
    const addAll = (addresses: Obj[], ready: boolean) => {
      for (const a of addresses) {
        if (added >= maxPerSubset) break;
        const ip = canonicalIP(String(a.ip ?? ''));
        if (!ip) {
          invalidAddresses++;
          continue;
        }
        const key = sliceKey(ip.family, ports);
        let slice = byKey.get(key);
        if (!slice) byKey.set(key, (slice = { key, addressType: ip.family, ports, endpoints: [] }));
        const ep = sliceEndpoint(a, ip.ip, ready);
        // The endpoint set: one endpoint per address and target.
        const same = slice.endpoints.findIndex(
          (e) => isDeepStrictEqual(e.addresses, ep.addresses) && isDeepStrictEqual(asMap(e.targetRef).uid, asMap(ep.targetRef).uid),
        );
        if (same >= 0) slice.endpoints[same] = ep;
        else slice.endpoints.push(ep);
        added++;
      }
    };
    addAll(subset.ready, true);
    addAll(subset.notReady, false);
    skippedAddresses += total - added;
  }
  const slices = [...byKey.values()].map((s) => ({ ...s, endpoints: s.endpoints.slice(0, maxPerSubset) }));
  return { slices, invalidAddresses, skippedAddresses };
}

/** The labels and annotations a mirrored slice of `endpoints` carries. */
export function mirroredMeta(endpoints: KubeObject): { labels: Record<string, string>; annotations: Record<string, string> } {
  const labels = { ...strMap(endpoints.metadata.labels), [LABEL_SERVICE_NAME]: endpoints.metadata.name ?? '', [LABEL_MANAGED_BY]: MIRRORING_CONTROLLER_NAME };
  const annotations = strMap(endpoints.metadata.annotations);
  for (const a of SKIPPED_ANNOTATIONS) delete annotations[a];
  return { labels, annotations };
}

/** getEndpointSlicePrefix: `<name>-` when that is a valid generateName, else the name. */
export function slicePrefix(name: string): string {
  return nameIsDNSSubdomain(`${name}-`, true).length === 0 ? `${name}-` : name;
}

/** A new slice object for `desired` (named `name`, or generateName'd when name is undefined). */
export function newSlice(endpoints: KubeObject, desired: DesiredSlice, name?: string): KubeObject {
  const { labels, annotations } = mirroredMeta(endpoints);
  const metadata: KubeObject['metadata'] = {
    namespace: endpoints.metadata.namespace,
    labels,
    annotations,
    ownerReferences: [newControllerRef(endpoints, 'v1', 'Endpoints')],
  };
  if (name) metadata.name = name;
  else metadata.generateName = slicePrefix(endpoints.metadata.name ?? '');
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata,
    addressType: desired.addressType,
    endpoints: structuredClone(desired.endpoints),
    ports: structuredClone(desired.ports),
  };
}

/** The endpoints of a slice as one comparable string, whatever their order (and whatever realm cloned them). */
const endpointSort = (eps: unknown): string =>
  JSON.stringify(
    mapsOf(eps)
      .map((e) => JSON.stringify(e))
      .sort(),
  );

/** Whether an existing slice already says what `desired` says, with the Endpoints' labels and annotations. */
export function sliceMatches(existing: KubeObject, desired: DesiredSlice, endpoints: KubeObject): boolean {
  const { labels, annotations } = mirroredMeta(endpoints);
  return (
    endpointSort(existing.endpoints) === endpointSort(desired.endpoints) &&
    isDeepStrictEqual(strMap(existing.metadata.labels), labels) &&
    isDeepStrictEqual(strMap(existing.metadata.annotations), annotations)
  );
}

/** The writes that take the mirrored slices of an Endpoints where it wants them. */
export interface MirrorPlan {
  create: KubeObject[];
  update: KubeObject[];
  /** Names of slices to delete. */
  delete: string[];
}

/**
 * reconcile + finalize: compares the wanted slices with the existing mirrored ones (those of
 * the Service, managed by this controller) and plans the writes. A terminating Endpoints gets no
 * new slices.
 */
export function planMirror(endpoints: KubeObject, existing: KubeObject[], maxPerSubset = MAX_ENDPOINTS_PER_SUBSET): MirrorPlan {
  const { slices } = desiredSlices(endpoints, maxPerSubset);
  const existingByKey = new Map<string, KubeObject[]>();
  const sorted = [...existing].sort((a, b) => String(a.metadata.name).localeCompare(String(b.metadata.name)));
  for (const s of sorted) {
    const key = sliceKey(String(s.addressType ?? ''), s.ports);
    existingByKey.set(key, [...(existingByKey.get(key) ?? []), s]);
  }
  const create: KubeObject[] = [];
  const update: KubeObject[] = [];
  const toDelete: KubeObject[] = [];
  for (const d of slices) {
    const have = existingByKey.get(d.key) ?? [];
    existingByKey.delete(d.key);
    if (d.endpoints.length === 0) {
      toDelete.push(...have);
      continue;
    }
    toDelete.push(...have.slice(1));
    if (have.length === 0) create.push(newSlice(endpoints, d));
    else if (!sliceMatches(have[0]!, d, endpoints)) update.push(newSlice(endpoints, d, have[0]!.metadata.name));
  }
  for (const rest of existingByKey.values()) toDelete.push(...rest);
  // recycleSlices: a slice to create takes the name of one to delete of the same address type.
  for (let i = 0; i < create.length;) {
    const j = toDelete.findIndex((s) => s.addressType === create[i]!.addressType);
    if (j < 0) {
      i++;
      continue;
    }
    const [recycled] = toDelete.splice(j, 1);
    const slice = create.splice(i, 1)[0]!;
    delete slice.metadata.generateName;
    slice.metadata.name = recycled!.metadata.name;
    update.push(slice);
  }
  return { create: endpoints.metadata.deletionTimestamp ? [] : create, update, delete: toDelete.map((s) => s.metadata.name ?? '') };
}
