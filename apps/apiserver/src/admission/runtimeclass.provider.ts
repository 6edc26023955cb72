/**
 * The RuntimeClass admission plugin (kube's plugin/pkg/admission/runtimeclass; resources.md
 * RuntimeClass): a new Pod that names a RuntimeClass takes the class's fixed overhead as its
 * `spec.overhead` and the class's scheduling constraints, its node selector merged into the
 * pod's (a key the two give different values refuses the pod) and its tolerations merged with
 * the pod's. A pod naming a class that does not exist is refused, and so is one whose overhead
 * differs from its class's, or that sets an overhead its class does not define. Only creates of
 * pods are looked at, as kube's plugin does.
 */
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Errors, parseQuantity, type KubeObject } from '@app/apimachinery';
import type { Admission, AdmissionAttributes } from '@app/registry';
import type { Storage } from '@app/storage';
import { mapsOf } from '../groups/core/core.helpers.js';
import { runtimeClassKind } from '../groups/node/runtimeclass/runtimeclass.kind.js';
import { STORAGE } from '../tokens.js';
import { AdmissionLister } from './admission.lister.js';
import { AdmissionPlugin } from './admission.plugin.js';

type Obj = Record<string, unknown>;

/** A pod's toleration as Go's core.Toleration holds it (absent strings are empty). */
interface Toleration {
  key: string;
  operator: string;
  value: string;
  effect: string;
  tolerationSeconds: number | undefined;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const asObj = (v: unknown): Obj | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined);

function toleration(raw: Obj): Toleration {
  return {
    key: str(raw.key),
    operator: str(raw.operator),
    value: str(raw.value),
    effect: str(raw.effect),
    tolerationSeconds: typeof raw.tolerationSeconds === 'number' ? raw.tolerationSeconds : undefined,
  };
}

const sameToleration = (a: Toleration, b: Toleration): boolean =>
  a.key === b.key && a.operator === b.operator && a.value === b.value && a.effect === b.effect && a.tolerationSeconds === b.tolerationSeconds;

/** Whether `ss` tolerates everything `t` tolerates (kube's tolerations.isSuperset). */
export function toleratesSuperset(ss: Toleration, t: Toleration): boolean {
  if (sameToleration(ss, t)) return true;
  // An empty key with operator Exists matches every key and value.
  if (t.key !== ss.key && (ss.key !== '' || ss.operator !== 'Exists')) return false;
  // An empty effect matches every effect.
  if (t.effect !== ss.effect && ss.effect !== '') return false;
  if (ss.effect === 'NoExecute' && ss.tolerationSeconds !== undefined) {
    if (t.tolerationSeconds === undefined || t.tolerationSeconds > ss.tolerationSeconds) return false;
  }
  if (ss.operator === 'Equal' || ss.operator === '') return t.operator === 'Equal' && t.value === ss.value;
  return ss.operator === 'Exists';
}

/**
 * The pod's tolerations followed by the class's, leaving out each one that another kept or
 * later one tolerates a superset of (of two equal ones, the first stays): kube's
 * tolerations.MergeTolerations. The raw objects are kept as they were written.
 */
export function mergeTolerations(first: readonly Obj[], second: readonly Obj[]): Obj[] {
  const all = [...first, ...second];
  const parsed = all.map(toleration);
  const merged: number[] = [];
  next: for (let i = 0; i < all.length; i++) {
    const t = parsed[i]!;
    for (const m of merged) if (toleratesSuperset(parsed[m]!, t)) continue next;
    for (let j = i + 1; j < all.length; j++) {
      const t2 = parsed[j]!;
      if (!sameToleration(t, t2) && toleratesSuperset(t2, t)) continue next;
    }
    merged.push(i);
  }
  return merged.map((i) => all[i]!);
}

/** Go's semantic equality of two resource lists: the same names, equal quantities; absent and empty alike. */
function sameResources(a: Obj | undefined, b: Obj | undefined): boolean {
  const ka = Object.keys(a ?? {});
  const kb = Object.keys(b ?? {});
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    const x = a![k];
    const y = b?.[k];
    if (y === undefined) return false;
    try {
      if (!parseQuantity(String(x)).equals(parseQuantity(String(y)))) return false;
    } catch {
      if (String(x) !== String(y)) return false;
    }
  }
  return true;
}

const OVERHEAD_MISMATCH = "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead";

/**
 * The mutating phase for a pod whose class is `rc` (undefined: the pod names none): the class's
 * overhead and scheduling applied to `pod`. Returns the reason for refusing the pod, if any.
 */
export function admitPodRuntimeClass(pod: KubeObject, rc: KubeObject | undefined): string | undefined {
  if (!rc) return undefined;
  const spec = (pod.spec ??= {}) as Obj;
  const overhead = asObj(rc.overhead);
  if (overhead) {
    const podFixed = asObj(overhead.podFixed);
    if (spec.overhead !== undefined && spec.overhead !== null && !sameResources(podFixed, asObj(spec.overhead))) return OVERHEAD_MISMATCH;
    if (podFixed && Object.keys(podFixed).length > 0) spec.overhead = { ...podFixed };
    else delete spec.overhead;
  }
  const scheduling = asObj(rc.scheduling);
  if (!scheduling) return undefined;
  const classSelector = asObj(scheduling.nodeSelector) ?? {};
  const podSelector = asObj(spec.nodeSelector);
  if (podSelector) {
    for (const [key, value] of Object.entries(classSelector)) {
      const podValue = podSelector[key];
      if (podValue !== undefined && podValue !== value) {
        return `conflict: runtimeClass.scheduling.nodeSelector[${key}] = ${String(value)}; pod.spec.nodeSelector[${key}] = ${String(podValue)}`;
      }
    }
    spec.nodeSelector = { ...podSelector, ...classSelector };
  } else if (Object.keys(classSelector).length > 0) {
    spec.nodeSelector = { ...classSelector };
  }
  const tolerations = mergeTolerations(mapsOf(spec.tolerations), mapsOf(scheduling.tolerations));
  if (tolerations.length > 0) spec.tolerations = tolerations;
  else delete spec.tolerations;
  return undefined;
}

/** The validating phase: the pod's overhead is its class's, or absent when the class defines none. */
export function validatePodRuntimeClass(pod: KubeObject, rc: KubeObject | undefined): string | undefined {
  const spec = asObj(pod.spec) ?? {};
  const overhead = asObj(rc?.overhead);
  if (overhead) return sameResources(asObj(overhead.podFixed), asObj(spec.overhead)) ? undefined : OVERHEAD_MISMATCH;
  if (spec.overhead !== undefined && spec.overhead !== null) return 'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead';
  return undefined;
}

/** The plugin, on pod creation (not on subresources). */
@AdmissionPlugin({ name: 'RuntimeClass', order: 2_000 })
@Injectable()
export class RuntimeClassPlugin implements Admission, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly classes: AdmissionLister;

  constructor(@Inject(STORAGE) storage: Storage) {
    this.classes = new AdmissionLister(storage, runtimeClassKind, 'runtimeclasses for admission');
  }

  onApplicationBootstrap(): void {
    this.classes.start();
  }

  onApplicationShutdown(): void {
    this.classes.stop();
  }

  async admit(attrs: AdmissionAttributes): Promise<void> {
    if (!applies(attrs)) return;
    const rc = await this.runtimeClassOf(attrs);
    const refused = admitPodRuntimeClass(attrs.object!, rc);
    if (refused) throw forbidden(attrs, refused);
  }

  async validate(attrs: AdmissionAttributes): Promise<void> {
    if (!applies(attrs)) return;
    const rc = await this.runtimeClassOf(attrs);
    const refused = validatePodRuntimeClass(attrs.object!, rc);
    if (refused) throw forbidden(attrs, refused);
  }

  /** The class the pod names (undefined when it names none); a class that does not exist refuses the pod. */
  private async runtimeClassOf(attrs: AdmissionAttributes): Promise<KubeObject | undefined> {
    const name = (asObj(attrs.object!.spec) ?? {}).runtimeClassName;
    if (name === undefined || name === null) return undefined;
    const rc = typeof name === 'string' && name !== '' ? await this.classes.get('', name) : undefined;
    if (!rc) throw forbidden(attrs, `pod rejected: RuntimeClass ${JSON.stringify(String(name))} not found`);
    return rc;
  }
}

function applies(attrs: AdmissionAttributes): boolean {
  return attrs.operation === 'CREATE' && attrs.subresource === '' && attrs.decl.group === '' && attrs.decl.kind === 'Pod' && attrs.object !== undefined;
}

function forbidden(attrs: AdmissionAttributes, message: string): Error {
  return Errors.forbidden({ group: '', resource: 'pods' }, attrs.name, message);
}
