/**
 * Pod behaviour as a stored kind (pkg/registry/core/pod, no scheduler and no node agent):
 * container image pull policies are defaulted, status starts Pending with its QoS class,
 * validation is pod.validation.ts, and status is written through /status only.
 */
import type { Strategy } from '@app/registry';
import { asMap } from '../core.helpers.js';
import { validateNoEphemeralOnCreate, validatePodSpec, validatePodSpecUpdate, withPodSpecWarnings } from './pod.validation.js';

type Obj = Record<string, unknown>;
const containersOf = (spec: Obj): Obj[] =>
  [...(Array.isArray(spec.initContainers) ? spec.initContainers : []), ...(Array.isArray(spec.containers) ? spec.containers : [])].map(asMap);
const ephemeralOf = (spec: Obj): Obj[] => (Array.isArray(spec.ephemeralContainers) ? spec.ephemeralContainers : []).map(asMap);

/** SetDefaults_Container's pull policy: Always for :latest or untagged images, else IfNotPresent. */
export function defaultPullPolicy(image: string): string {
  if (image.includes('@')) return 'IfNotPresent';
  const last = image.slice(image.lastIndexOf('/') + 1);
  const tag = last.includes(':') ? last.slice(last.indexOf(':') + 1) : '';
  return tag === '' || tag === 'latest' ? 'Always' : 'IfNotPresent';
}

/** The QoS class of a pod (pkg/apis/core/helper/qos): Guaranteed, Burstable or BestEffort. */
export function qosClassOf(spec: Obj): string {
  const cs = containersOf(spec);
  let any = false;
  let guaranteed = cs.length > 0;
  for (const c of cs) {
    const res = asMap(c.resources);
    const limits = asMap(res.limits);
    const requests = { ...limits, ...asMap(res.requests) };
    if (Object.keys(limits).length || Object.keys(requests).length) any = true;
    for (const r of ['cpu', 'memory']) {
      if (limits[r] === undefined || String(requests[r]) !== String(limits[r])) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

/**
 * SetDefaults_Pod/Container on `pod.spec`: the pull policy, requests taken from limits where a
 * container sets a limit but no request, and an empty pod security context. Also applied to a
 * workload's pod template (which has the same shape: metadata and spec).
 */
export function defaultContainers(pod: { spec?: unknown; [k: string]: unknown }): void {
  const spec = asMap(pod.spec);
  if (pod.spec && spec.securityContext === undefined) spec.securityContext = {};
  for (const c of containersOf(spec)) {
    if (c.imagePullPolicy === undefined && typeof c.image === 'string') c.imagePullPolicy = defaultPullPolicy(c.image);
    const res = asMap(c.resources);
    const limits = asMap(res.limits);
    if (Object.keys(limits).length) {
      const requests = asMap(res.requests);
      for (const [k, v] of Object.entries(limits)) if (requests[k] === undefined) requests[k] = v;
      res.requests = requests;
      c.resources = res;
    }
  }
  defaultEphemeralContainers(spec);
}

/** SetDefaults_EphemeralContainer on `spec`: the pull policy. */
export function defaultEphemeralContainers(spec: Obj): void {
  for (const c of ephemeralOf(spec)) {
    if (c.imagePullPolicy === undefined && typeof c.image === 'string') c.imagePullPolicy = defaultPullPolicy(c.image);
  }
}

/** The Pod strategy: kube's pod warnings on create and on every update. */
export const podStrategy: Strategy = withPodSpecWarnings(
  {
    prepareForCreate(pod) {
      defaultContainers(pod);
      pod.status = { phase: 'Pending', qosClass: qosClassOf(asMap(pod.spec)) };
    },
    prepareForUpdate(pod) {
      defaultContainers(pod);
    },
    validate: (pod) => [...validatePodSpec(asMap(pod.spec)), ...validateNoEphemeralOnCreate(asMap(pod.spec))],
    validateUpdate(pod, old) {
      return [...validatePodSpec(asMap(pod.spec)), ...validatePodSpecUpdate(asMap(pod.spec), asMap(old.spec))];
    },
  },
  ['spec'],
  true,
);
