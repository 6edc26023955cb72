/**
 * The LimitRanger admission plugin (kube's plugin/pkg/admission/limitranger; resources.md
 * LimitRange): the LimitRanges of a namespace act on the pods and claims created in it.
 *
 * - Mutating, on pod creation: every container and init container gets the `default` limits and
 *   `defaultRequest` requests of the Container items it does not set itself, and the pod the
 *   annotation `kubernetes.io/limit-ranger` saying what was set.
 * - Validating, on pod creation: each container's requests and limits against the Container
 *   items' `min`, `max` and `maxLimitRequestRatio`, and the pod's totals (its containers and the
 *   largest init container, sidecars counted as Kubernetes does) against the Pod items'; on
 *   creation and update of a PersistentVolumeClaim, its storage request against the
 *   PersistentVolumeClaim items' `min` and `max`. Every violation is listed, with Kubernetes'
 *   messages, in one 403.
 *
 * Pod updates are not looked at (containers cannot change), nor is an object being deleted.
 */
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Errors, parseQuantity, Quantity, type KubeObject } from '@app/apimachinery';
import type { Admission, AdmissionAttributes } from '@app/registry';
import type { Storage } from '@app/storage';
import { asMap, mapsOf } from '../groups/core/core.helpers.js';
import { limitRangeKind } from '../groups/core/limitrange/limitrange.kind.js';
import { STORAGE } from '../tokens.js';
import { AdmissionLister } from './admission.lister.js';
import { AdmissionPlugin } from './admission.plugin.js';

type Obj = Record<string, unknown>;
type Resources = Map<string, Quantity>;

/** The annotation that says which defaults the plugin set. */
export const LIMIT_RANGER_ANNOTATION = 'kubernetes.io/limit-ranger';
/** resource.MaxMilliValue: above it values are compared in whole units. */
const MAX_MILLI_VALUE = (2n ** 63n - 1n) / 1000n;

/** A resource list read as quantities; entries that do not parse are left out (validation reports them). */
function resources(v: unknown): Resources {
  const out: Resources = new Map();
  for (const [k, raw] of Object.entries(asMap(v))) {
    try {
      out.set(k, parseQuantity(String(raw)));
    } catch {
      // not a quantity: the pod's own validation refuses it
    }
  }
  return out;
}

function containersOf(pod: KubeObject): { containers: Obj[]; initContainers: Obj[] } {
  const spec = asMap(pod.spec);
  return { containers: mapsOf(spec.containers), initContainers: mapsOf(spec.initContainers) };
}

/** The limits of the LimitRange's Container items: its default limits and default requests. */
function containerDefaults(lr: KubeObject): { limits: Obj; requests: Obj } {
  const limits: Obj = {};
  const requests: Obj = {};
  for (const item of mapsOf(asMap(lr.spec).limits)) {
    if (item.type !== 'Container') continue;
    Object.assign(requests, asMap(item.defaultRequest));
    Object.assign(limits, asMap(item.default));
  }
  return { limits, requests };
}

/** Gives one container the defaults it lacks; returns the annotation's parts for it. */
function defaultContainer(c: Obj, defaults: { limits: Obj; requests: Obj }, what: string): string[] {
  const res = (c.resources = asMap(c.resources));
  const limits = (res.limits = asMap(res.limits));
  const requests = (res.requests = asMap(res.requests));
  const setLimits = Object.keys(defaults.limits).filter((k) => !(k in limits));
  const setRequests = Object.keys(defaults.requests).filter((k) => !(k in requests));
  for (const k of setLimits) limits[k] = defaults.limits[k];
  for (const k of setRequests) requests[k] = defaults.requests[k];
  if (Object.keys(limits).length === 0) delete res.limits;
  if (Object.keys(requests).length === 0) delete res.requests;
  const notes: string[] = [];
  if (setRequests.length > 0) notes.push(`${setRequests.sort().join(', ')} request for ${what} ${String(c.name ?? '')}`);
  if (setLimits.length > 0) notes.push(`${setLimits.sort().join(', ')} limit for ${what} ${String(c.name ?? '')}`);
  return notes;
}

/** The mutating half for one LimitRange: container defaults and the annotation. */
export function defaultPodResources(pod: KubeObject, lr: KubeObject): void {
  const defaults = containerDefaults(lr);
  const { containers, initContainers } = containersOf(pod);
  const notes = [
    ...containers.flatMap((c) => defaultContainer(c, defaults, 'container')),
    ...initContainers.flatMap((c) => defaultContainer(c, defaults, 'init container')),
  ];
  if (notes.length > 0)
    pod.metadata.annotations = { ...(pod.metadata.annotations ?? {}), [LIMIT_RANGER_ANNOTATION]: `LimitRanger plugin set: ${notes.join('; ')}` };
}

/** A request, a limit and an enforced value at one precision (requestLimitEnforcedValues). */
function common(...qs: Array<Quantity | undefined>): bigint[] {
  const whole = qs.map((q) => (q ? q.value() : 0n));
  if (whole.every((v) => v <= MAX_MILLI_VALUE)) return qs.map((q) => (q ? q.milliValue() : 0n));
  return whole;
}

function minConstraint(type: string, name: string, enforced: Quantity, requests: Resources, limits: Resources): string | undefined {
  const req = requests.get(name);
  const lim = limits.get(name);
  const [r, l, e] = common(req, lim, enforced) as [bigint, bigint, bigint];
  if (!req) return `minimum ${name} usage per ${type} is ${enforced}.  No request is specified`;
  if (r < e) return `minimum ${name} usage per ${type} is ${enforced}, but request is ${req}`;
  if (lim && l < e) return `minimum ${name} usage per ${type} is ${enforced}, but limit is ${lim}`;
  return undefined;
}

function maxConstraint(type: string, name: string, enforced: Quantity, requests: Resources, limits: Resources): string | undefined {
  const req = requests.get(name);
  const lim = limits.get(name);
  const [r, l, e] = common(req, lim, enforced) as [bigint, bigint, bigint];
  if (!lim) return `maximum ${name} usage per ${type} is ${enforced}.  No limit is specified`;
  if (l > e) return `maximum ${name} usage per ${type} is ${enforced}, but limit is ${lim}`;
  if (req && r > e) return `maximum ${name} usage per ${type} is ${enforced}, but request is ${req}`;
  return undefined;
}

/** The max for what knows no limits (a claim's storage): the request alone. */
function maxRequestConstraint(type: string, name: string, enforced: Quantity, requests: Resources): string | undefined {
  const req = requests.get(name);
  const [r, , e] = common(req, undefined, enforced) as [bigint, bigint, bigint];
  if (!req) return `maximum ${name} usage per ${type} is ${enforced}.  No request is specified`;
  if (r > e) return `maximum ${name} usage per ${type} is ${enforced}, but request is ${req}`;
  return undefined;
}

function ratioConstraint(type: string, name: string, enforced: Quantity, requests: Resources, limits: Resources): string | undefined {
  const req = requests.get(name);
  const lim = limits.get(name);
  const [r, l] = common(req, lim, enforced) as [bigint, bigint, bigint];
  if (!req || r === 0n) return `${name} max limit to request ratio per ${type} is ${enforced}, but no request is specified or request is 0`;
  if (!lim || l === 0n) return `${name} max limit to request ratio per ${type} is ${enforced}, but no limit is specified or limit is 0`;
  const observed = Number(l) / Number(r);
  let compared = observed;
  let bound = Number(enforced.value());
  if (enforced.value() <= MAX_MILLI_VALUE) {
    compared = observed * 1000;
    bound = Number(enforced.milliValue());
  }
  if (compared > bound) return `${name} max limit to request ratio per ${type} is ${enforced}, but provided ratio is ${observed.toFixed(6)}`;
  return undefined;
}

/** Every constraint of one item on one set of requests and limits. */
function checkItem(item: Obj, type: string, requests: Resources, limits: Resources, errs: string[]): void {
  const push = (e: string | undefined) => e !== undefined && errs.push(e);
  for (const [k, v] of resources(item.min)) push(minConstraint(type, k, v, requests, limits));
  for (const [k, v] of resources(item.max)) push(maxConstraint(type, k, v, requests, limits));
  for (const [k, v] of resources(item.maxLimitRequestRatio)) push(ratioConstraint(type, k, v, requests, limits));
}

const add = (into: Resources, from: Resources): void => {
  for (const [k, v] of from) into.set(k, into.get(k)?.add(v) ?? v);
};
const maxOf = (into: Resources, from: Resources): void => {
  for (const [k, v] of from) {
    const cur = into.get(k);
    if (!cur || v.cmp(cur) > 0) into.set(k, v);
  }
};

/**
 * A pod's effective requests or limits (component-helpers' PodRequests/PodLimits, without
 * overhead): its containers and restartable (sidecar) init containers summed, or an init
 * container with the sidecars started before it, whichever is larger per resource.
 */
export function podTotals(pod: KubeObject, field: 'requests' | 'limits'): Resources {
  const { containers, initContainers } = containersOf(pod);
  const of = (c: Obj) => resources(asMap(c.resources)[field]);
  const total: Resources = new Map();
  for (const c of containers) add(total, of(c));
  const sidecars: Resources = new Map();
  const initMax: Resources = new Map();
  for (const c of initContainers) {
    if (c.restartPolicy === 'Always') {
      add(total, of(c));
      add(sidecars, of(c));
      continue;
    }
    const withSidecars: Resources = new Map(sidecars);
    add(withSidecars, of(c));
    maxOf(initMax, withSidecars);
  }
  maxOf(total, initMax);
  return total;
}

/** The validating half for a pod and one LimitRange: every violation's message. */
export function podViolations(pod: KubeObject, lr: KubeObject): string[] {
  const errs: string[] = [];
  const { containers, initContainers } = containersOf(pod);
  for (const item of mapsOf(asMap(lr.spec).limits)) {
    if (item.type === 'Container') {
      for (const c of [...containers, ...initContainers]) {
        const res = asMap(c.resources);
        checkItem(item, 'Container', resources(res.requests), resources(res.limits), errs);
      }
    } else if (item.type === 'Pod') {
      checkItem(item, 'Pod', podTotals(pod, 'requests'), podTotals(pod, 'limits'), errs);
    }
  }
  return errs;
}

/** The validating half for a claim and one LimitRange. */
export function claimViolations(pvc: KubeObject, lr: KubeObject): string[] {
  const errs: string[] = [];
  const requests = resources(asMap(asMap(asMap(pvc.spec).resources).requests));
  for (const item of mapsOf(asMap(lr.spec).limits)) {
    if (item.type !== 'PersistentVolumeClaim') continue;
    for (const [k, v] of resources(item.min)) {
      const e = minConstraint('PersistentVolumeClaim', k, v, requests, new Map());
      if (e) errs.push(e);
    }
    for (const [k, v] of resources(item.max)) {
      const e = maxRequestConstraint('PersistentVolumeClaim', k, v, requests);
      if (e) errs.push(e);
    }
  }
  return errs;
}

/** utilerrors.NewAggregate's message: one error alone, several in brackets, repeats once. */
export function aggregate(errs: readonly string[]): string {
  const unique = [...new Set(errs)];
  return unique.length === 1 ? unique[0]! : `[${unique.join(', ')}]`;
}

/** The plugin. */
@AdmissionPlugin({ name: 'LimitRanger', order: 200 })
@Injectable()
export class LimitRangerPlugin implements Admission, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly limits: AdmissionLister;

  constructor(@Inject(STORAGE) storage: Storage) {
    this.limits = new AdmissionLister(storage, limitRangeKind, 'limitranges for admission');
  }

  onApplicationBootstrap(): void {
    this.limits.start();
  }

  onApplicationShutdown(): void {
    this.limits.stop();
  }

  async admit(attrs: AdmissionAttributes): Promise<void> {
    if (kindOf(attrs) !== 'Pod') return;
    for (const lr of await this.limitRanges(attrs.namespace)) defaultPodResources(attrs.object!, lr);
  }

  async validate(attrs: AdmissionAttributes): Promise<void> {
    // A pod's resources changed in place are held to the same bounds (not defaulted again).
    const kind = kindOf(attrs) ?? (isResize(attrs) ? 'Pod' : undefined);
    if (!kind) return;
    for (const lr of await this.limitRanges(attrs.namespace)) {
      const errs = kind === 'Pod' ? podViolations(attrs.object!, lr) : claimViolations(attrs.object!, lr);
      if (errs.length > 0) {
        throw Errors.forbidden({ group: '', resource: kind === 'Pod' ? 'pods' : 'persistentvolumeclaims' }, attrs.name, aggregate(errs));
      }
    }
  }

  private limitRanges(namespace: string): Promise<KubeObject[]> {
    return this.limits.list(namespace);
  }
}

/** Whether the request changes a pod's resources in place (an update of pods/resize). */
function isResize(attrs: AdmissionAttributes): boolean {
  return (
    attrs.subresource === 'resize' &&
    attrs.decl.group === '' &&
    attrs.decl.kind === 'Pod' &&
    attrs.operation === 'UPDATE' &&
    !!attrs.object &&
    !!attrs.namespace
  );
}

/** Which kind the plugin acts on for this request, if any: pods on creation, claims on creation and update. */
function kindOf(attrs: AdmissionAttributes): 'Pod' | 'PersistentVolumeClaim' | undefined {
  if (attrs.subresource !== '' || attrs.decl.group !== '' || !attrs.object || !attrs.namespace) return undefined;
  if (attrs.oldObject?.metadata.deletionTimestamp) return undefined;
  if (attrs.decl.kind === 'Pod' && attrs.operation === 'CREATE') return 'Pod';
  if (attrs.decl.kind === 'PersistentVolumeClaim' && (attrs.operation === 'CREATE' || attrs.operation === 'UPDATE')) return 'PersistentVolumeClaim';
  return undefined;
}
