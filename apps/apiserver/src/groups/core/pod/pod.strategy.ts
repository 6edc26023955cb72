/**
 * Pod behaviour as a stored kind (pkg/registry/core/pod, no scheduler and no node agent):
 * container image pull policies are defaulted, status starts Pending with its QoS class,
 * validation is pod.validation.ts, and status is written through /status only.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '@app/apimachinery';
import type { RequestContext, Strategy } from '@app/registry';
import { asMap } from '../core.helpers.js';
import { normalizeGracePeriod, validateNoEphemeralOnCreate, validatePodSpec, validatePodSpecUpdate } from './pod.validation.js';
import { APPARMOR_ANNOTATION_PREFIX, withPodSpecWarnings } from './pod.warnings.js';

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

/** The annotation value of an AppArmor profile field, '' for a type without one. */
function appArmorAnnotationFor(profile: Obj): string {
  if (profile.type === 'Unconfined') return 'unconfined';
  if (profile.type === 'RuntimeDefault') return 'runtime/default';
  if (profile.type === 'Localhost' && typeof profile.localhostProfile === 'string') return `localhost/${profile.localhostProfile}`;
  return '';
}

/** The AppArmor profile field an annotation value stands for, undefined when it names none that is valid. */
function appArmorFieldFor(annotation: string): Obj | undefined {
  if (annotation === 'unconfined') return { type: 'Unconfined' };
  if (annotation === 'runtime/default') return { type: 'RuntimeDefault' };
  if (!annotation.startsWith('localhost/')) return undefined;
  const profile = annotation.slice('localhost/'.length);
  // ValidateAppArmorProfileField: present, not padded with whitespace, at most 4095 bytes.
  if (profile === '' || profile.trim() !== profile || Buffer.byteLength(profile) > 4095) return undefined;
  return { type: 'Localhost', localhostProfile: profile };
}

/**
 * On create, the deprecated per-container AppArmor annotations and the `appArmorProfile` fields
 * are kept in step, as kube's version skew rules do for nodes that only read one of them: a
 * container with a profile field (its own or the pod's) and no annotation gets the annotation; an
 * annotation without the container's field fills the field (unless the pod's profile already says
 * the same), with a warning that the annotation is deprecated. Not for Windows pods.
 */
export function applyAppArmorVersionSkew(pod: KubeObject, ctx: RequestContext | undefined): void {
  const spec = asMap(pod.spec);
  if (asMap(spec.os).name === 'windows') return;
  const podProfile = asMap(spec.securityContext).appArmorProfile;
  for (const c of [...containersOf(spec), ...ephemeralOf(spec)]) {
    const key = APPARMOR_ANNOTATION_PREFIX + String(c.name ?? '');
    const annotations = asMap(pod.metadata.annotations);
    const annotation = annotations[key];
    const containerProfile = asMap(c.securityContext).appArmorProfile;
    if (annotation === undefined) {
      const profile = containerProfile ?? podProfile;
      const value = profile === undefined ? '' : appArmorAnnotationFor(asMap(profile));
      if (value !== '') pod.metadata.annotations = { ...annotations, [key]: value };
      continue;
    }
    if (containerProfile !== undefined) continue;
    const field = appArmorFieldFor(String(annotation));
    let deprecated = field === undefined;
    if (field !== undefined && !isDeepStrictEqual(field, podProfile)) {
      c.securityContext = { ...asMap(c.securityContext), appArmorProfile: field };
      deprecated = true;
    }
    if (deprecated) ctx?.warnings.push(`metadata.annotations[${key}]: deprecated since v1.30; use the "appArmorProfile" field instead`);
  }
}

/** The Pod strategy: kube's pod warnings on create and on every update. */
export const podStrategy: Strategy = withPodSpecWarnings(
  {
    prepareForCreate(pod, ctx) {
      normalizeGracePeriod(asMap(pod.spec));
      defaultContainers(pod);
      applyAppArmorVersionSkew(pod, ctx);
      pod.status = { phase: 'Pending', qosClass: qosClassOf(asMap(pod.spec)) };
    },
    prepareForUpdate(pod) {
      normalizeGracePeriod(asMap(pod.spec));
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
