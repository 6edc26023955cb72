/**
 * A pod's `binding` subresource and the namespaced `bindings` resource (kube's
 * pkg/registry/core/pod/storage/storage.go BindingREST and LegacyBindingREST): POST a core/v1
 * Binding naming the pod, and the pod is assigned to the node its target names, as a scheduler
 * does it.
 *
 * - The Binding is checked as kube's ValidatePodBinding does: target.kind is "Node" or empty,
 *   target.name is required (422 naming the field). Through the subresource, the Binding's name
 *   must be the pod's (400 otherwise).
 * - The pod is changed in one read-modify-write of its stored object, conditional on the
 *   resourceVersion read and retried on conflict (kube's GuaranteedUpdate, which neither the
 *   pod's strategy nor admission sees again): refused with 409 when the pod is being deleted, is
 *   already assigned to a node or still has scheduling gates; otherwise spec.nodeName is set,
 *   the Binding's annotations are merged into the pod's, and the PodScheduled condition becomes
 *   True (podutil.UpdatePodCondition). The Binding's uid and resourceVersion, when the
 *   subresource is sent them, are preconditions of that write.
 * - A dry run checks everything and writes nothing. The answer is kube's: 201 with a Status of
 *   Success.
 */
import { defineSchema, Errors, fieldOf, objectRootSchema, type FieldError, type KubeObject } from '@app/apimachinery';
import type { RequestContext, SubresourceDeclaration } from '@app/registry';
import { rfc3339 } from '../../policy/poddisruptionbudget/pdb.status.js';
import { asMap } from '../core.helpers.js';
import { ObjectReferenceSchema } from '../core.schema.js';

type Obj = Record<string, unknown>;

/** core/v1 Binding: the body of a pod's binding subresource and of the `bindings` resource. */
export const BindingSchema = defineSchema(
  'io.k8s.api.core.v1.Binding',
  objectRootSchema({ group: '', version: 'v1', kind: 'Binding' }, 'Assigns a pod to a node: what a scheduler posts once it has chosen the node.', {
    target: fieldOf(ObjectReferenceSchema, { description: 'The node the pod is assigned to.' }),
  }),
);

/** The protobuf message of a Binding. */
export const BINDING_MESSAGE = 'k8s.io.api.core.v1.Binding';

/** What a binding asks of the pod: the node, the annotations to merge, the preconditions. */
export interface BindRequest {
  node: string;
  annotations: Record<string, string>;
  /** The Binding's uid and resourceVersion (the subresource keeps them; the legacy resource does not). */
  preconditions?: { uid?: string; resourceVersion?: string };
}

/** What the handler uses of the server; the core group module fills it in at start. */
export interface BindingDeps {
  /**
   * Applies `assign` to the stored pod in one resourceVersion-conditional write retried on
   * conflict (nothing written on a dry run). 404 when the pod does not exist, 409 when a
   * precondition fails or `assign` refuses.
   */
  bind(ns: string, name: string, req: BindRequest, ctx: RequestContext): Promise<void>;
}

/** The deps, set once the stores exist. */
export class BindingPorts {
  deps?: BindingDeps;
}

/** Why a pod cannot be bound now (kube answers it as a 409 on pods/binding). */
export class BindingRefused extends Error {}

/** ValidatePodBinding (pkg/apis/core/validation). */
export function validatePodBinding(binding: KubeObject): FieldError[] {
  const target = asMap((binding as Obj).target);
  const errs: FieldError[] = [];
  const kind = typeof target.kind === 'string' ? target.kind : '';
  if (kind !== '' && kind !== 'Node') {
    errs.push({ type: 'FieldValueNotSupported', field: 'target.kind', value: kind, detail: 'supported values: "Node", "<empty>"' });
  }
  if (typeof target.name !== 'string' || target.name === '') errs.push({ type: 'FieldValueRequired', field: 'target.name', detail: '' });
  return errs;
}

/** The node, annotations and (with `keepPreconditions`) the uid and resourceVersion a Binding asks for. */
export function bindRequestOf(binding: KubeObject, keepPreconditions: boolean): BindRequest {
  const annotations: Record<string, string> = {};
  for (const [k, v] of Object.entries(asMap(binding.metadata?.annotations))) if (typeof v === 'string') annotations[k] = v;
  const req: BindRequest = { node: String(asMap((binding as Obj).target).name ?? ''), annotations };
  if (keepPreconditions) {
    const { uid, resourceVersion } = binding.metadata ?? {};
    const pre: { uid?: string; resourceVersion?: string } = {};
    if (typeof uid === 'string' && uid) pre.uid = uid;
    if (typeof resourceVersion === 'string' && resourceVersion) pre.resourceVersion = resourceVersion;
    if (pre.uid !== undefined || pre.resourceVersion !== undefined) req.preconditions = pre;
  }
  return req;
}

/**
 * UpdatePodCondition (pkg/api/pod): `cond` replaces the condition of its type; the transition
 * time is now unless the status is unchanged, when the old one is kept.
 */
export function withPodCondition(status: Obj, cond: { type: string; status: string }, now: Date): Obj {
  const conditions = Array.isArray(status.conditions) ? (status.conditions as unknown[]).map(asMap) : [];
  const i = conditions.findIndex((c) => c.type === cond.type);
  const old = i >= 0 ? conditions[i] : undefined;
  const next: Obj = { type: cond.type, status: cond.status, lastProbeTime: null, lastTransitionTime: rfc3339(now) };
  if (old && old.status === cond.status) next.lastTransitionTime = old.lastTransitionTime;
  if (next.lastTransitionTime === undefined) delete next.lastTransitionTime;
  return { ...status, conditions: old ? conditions.map((c, j) => (j === i ? next : c)) : [...conditions, next] };
}

/**
 * setPodNodeNameAndAnnotations: the pod bound to `req.node`, or BindingRefused with kube's
 * words. Does not change `pod`.
 */
export function assignedPod(pod: KubeObject, req: BindRequest, now: Date): KubeObject {
  const name = pod.metadata.name ?? '';
  const spec = asMap((pod as Obj).spec);
  if (pod.metadata.deletionTimestamp) throw new BindingRefused(`pod ${name} is being deleted, cannot be assigned to a host`);
  const nodeName = typeof spec.nodeName === 'string' ? spec.nodeName : '';
  if (nodeName !== '') throw new BindingRefused(`pod ${name} is already assigned to node "${nodeName}"`);
  if (Array.isArray(spec.schedulingGates) && spec.schedulingGates.length > 0) {
    throw new BindingRefused(`pod ${name} has non-empty .spec.schedulingGates`);
  }
  const next = structuredClone(pod) as KubeObject & Obj;
  next.spec = { ...asMap(next.spec), nodeName: req.node };
  next.metadata.annotations = { ...asMap(next.metadata.annotations), ...req.annotations };
  next.status = withPodCondition(asMap(next.status), { type: 'PodScheduled', status: 'True' }, now);
  return next;
}

/** kube's answer to a binding: a Status of Success (201). */
export const BOUND: KubeObject = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 } as unknown as KubeObject;

/** Checks and performs one binding of pod `name` (both endpoints end here). */
export async function bindPod(ports: BindingPorts, ns: string, name: string, binding: KubeObject, keepPreconditions: boolean, ctx: RequestContext) {
  const deps = ports.deps;
  if (!deps) throw Errors.internal('the binding subresource is not wired');
  const errs = validatePodBinding(binding);
  if (errs.length) throw Errors.invalid('', 'Binding', name, errs);
  if (!name) throw Errors.badRequest('Name parameter required.');
  await deps.bind(ns, name, bindRequestOf(binding, keepPreconditions), ctx);
  return structuredClone(BOUND);
}

/** The `binding` subresource of pods, with the ports its handler uses. */
export function bindingSubresource(ports: BindingPorts): SubresourceDeclaration {
  return {
    verbs: ['create'],
    kind: { group: '', version: 'v1', kind: 'Binding', protobufMessage: BINDING_MESSAGE, schema: BindingSchema },
    rest: {
      async create(ns, name, binding, ctx) {
        if (!binding || typeof binding !== 'object' || Array.isArray(binding)) throw Errors.badRequest('the body of the request must be an object');
        const meta = asMap(binding.metadata);
        if (typeof meta.namespace === 'string' && meta.namespace !== '' && meta.namespace !== ns) {
          throw Errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
        }
        if ((typeof meta.name === 'string' ? meta.name : '') !== name) throw Errors.badRequest('name in URL does not match name in Binding object');
        return bindPod(ports, ns, name, binding, true, ctx);
      },
    },
  };
}
