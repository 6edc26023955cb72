/**
 * A pod's `resize` subresource (in-place resize, what `kubectl patch|edit|apply --subresource
 * resize` writes): GET answers the pod; PUT and PATCH change only the CPU and memory requests and
 * limits of its containers (and of its sidecars, init containers with `restartPolicy: Always`)
 * and their `resizePolicy`. Everything else the body carries is dropped, as kube's resize
 * strategy does: the rest of spec, metadata and status are kept as stored. Containers are matched
 * by position, so a renamed or reordered container is refused rather than resized by mistake.
 *
 * The rules (kube's ValidatePodResize): the result must be a valid pod spec (each request at most
 * its limit); no other resource (ephemeral-storage, extended resources) may change; a CPU or
 * memory request or limit the container had may not be removed; and the pod's QoS class may not
 * change. A change bumps the pod's generation, as a spec change does. Nothing acts on it here:
 * with no node agent, the pod's status (`containerStatuses[].resources`, the resize conditions)
 * stays what its kubelet, if any, writes through /status.
 */
import { isDeepStrictEqual } from 'node:util';
import type { FieldError, KubeObject } from '@app/apimachinery';
import { replaceContents, type SubresourceDeclaration, type SubresourceStrategy } from '@app/registry';
import { asMap } from '../core.helpers.js';
import { defaultContainers, qosClassOf } from './pod.strategy.js';
import { validatePodSpec } from './pod.validation.js';

type Obj = Record<string, unknown>;
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(asMap) : []);

/** The resources a resize may change. */
const RESIZABLE = ['cpu', 'memory'] as const;
/** The container lists of a spec a resize looks at. */
const LISTS = ['containers', 'initContainers'] as const;

/** Whether a container's CPU and memory may be resized: every app container, and sidecars. */
function resizable(list: (typeof LISTS)[number], c: Obj): boolean {
  return list === 'containers' || c.restartPolicy === 'Always';
}

/**
 * The pod as stored with, at each position, the submitted container's name, resources and
 * resize policy: the name only so that validation sees a rename or a reorder.
 */
function withResizeOnly(obj: KubeObject, old: KubeObject): KubeObject {
  const next = structuredClone(old);
  const spec = asMap(next.spec);
  const submitted = asMap(obj.spec);
  for (const key of LISTS) {
    const now = list(submitted[key]);
    list(spec[key]).forEach((c, i) => {
      const n = now[i];
      if (!n) return;
      c.name = n.name;
      if (n.resources === undefined) delete c.resources;
      else c.resources = n.resources;
      if (n.resizePolicy === undefined) delete c.resizePolicy;
      else c.resizePolicy = n.resizePolicy;
    });
  }
  next.spec = spec;
  return next;
}

/** A spec without what a resize may change, for comparing the rest. */
function withoutResizable(spec: Obj): Obj {
  const s = structuredClone(spec);
  for (const key of LISTS) {
    for (const c of list(s[key])) {
      if (!resizable(key, c)) continue;
      delete c.resizePolicy;
      const res = asMap(c.resources);
      for (const part of ['requests', 'limits']) {
        const m = asMap(res[part]);
        for (const r of RESIZABLE) delete m[r];
        if (Object.keys(m).length === 0) delete res[part];
        else res[part] = m;
      }
      if (Object.keys(res).length === 0) delete c.resources;
      else c.resources = res;
    }
  }
  return s;
}

/** ValidatePodResize: the rules in the file comment, on the prepared pod against the stored one. */
export function validatePodResize(spec: Obj, old: Obj, oldQos: string | undefined): FieldError[] {
  const errs: FieldError[] = [];
  for (const key of LISTS) {
    const before = list(old[key]);
    list(spec[key]).forEach((c, i) => {
      const was = before[i];
      if (!was) return;
      if (c.name !== was.name) {
        errs.push({ type: 'FieldValueForbidden', field: `spec.${key}[${i}].name`, detail: 'containers may not be renamed or reordered on resize' });
        return;
      }
      if (!resizable(key, c)) return;
      const res = asMap(c.resources);
      const oldRes = asMap(was.resources);
      for (const [part, what] of [
        ['requests', 'resource requests cannot be removed'],
        ['limits', 'resource limits cannot be removed'],
      ] as const) {
        const now = asMap(res[part]);
        if (RESIZABLE.some((r) => asMap(oldRes[part])[r] !== undefined && now[r] === undefined)) {
          errs.push({ type: 'FieldValueForbidden', field: `spec.${key}[${i}].resources.${part}`, detail: what });
        }
      }
    });
  }
  if (errs.length > 0) return errs;
  errs.push(...validatePodSpec(spec));
  if (!isDeepStrictEqual(withoutResizable(spec), withoutResizable(old))) {
    errs.push({ type: 'FieldValueForbidden', field: 'spec', detail: 'only cpu and memory resources are mutable' });
  }
  const before = oldQos ?? qosClassOf(old);
  if (qosClassOf(spec) !== before) {
    errs.push({ type: 'FieldValueInvalid', field: 'spec', value: before, detail: 'Pod QOS Class may not change as a result of resizing' });
  }
  return errs;
}

/** The strategy of pods/resize. */
export const RESIZE_STRATEGY: SubresourceStrategy = {
  prepareForUpdate(obj, old) {
    const next = withResizeOnly(obj, old);
    // The defaults of a pod's containers (a limit with no request sets the request), as the
    // decoding of any pod body applies them.
    defaultContainers(next);
    if (!isDeepStrictEqual(next.spec, old.spec)) next.metadata.generation = ((old.metadata.generation as number | undefined) ?? 0) + 1;
    replaceContents(obj, next);
  },
  validateUpdate(obj, old) {
    const qos = asMap(old.status).qosClass;
    return validatePodResize(asMap(obj.spec), asMap(old.spec), typeof qos === 'string' ? qos : undefined);
  },
};

/** The `resize` subresource declaration. */
export function resizeSubresource(): SubresourceDeclaration {
  return { verbs: ['get', 'patch', 'update'], strategy: RESIZE_STRATEGY };
}
