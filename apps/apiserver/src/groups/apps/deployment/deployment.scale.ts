/**
 * The `scale` subresource of the apps/v1 workloads (kube's pkg/registry/apps/<kind>/storage
 * ScaleREST, the same for Deployment, ReplicaSet and StatefulSet): an autoscaling/v1 Scale
 * viewed from the workload. spec.replicas is the workload's spec.replicas; status.replicas its
 * status.replicas and status.selector its label selector as a string. GET reads it; PUT (and
 * PATCH, applied to the current Scale by the HTTP layer) writes spec.replicas back through the
 * workload's store, with the Scale's resourceVersion as precondition (none given: unconditional,
 * retried over concurrent writes), so the workload's own validation and generation rules apply. It lives with the Deployment, which came first; the
 * ReplicaSet declares it too, with its own ports.
 */
import {
  defineSchema,
  Errors,
  fieldOf,
  labelSelectorFromStruct,
  objectRootSchema,
  protoSchema,
  StatusError,
  type JSONSchemaProps,
  type SchemaOverlays,
  type FieldError,
  type KubeObject,
  type LabelSelectorStruct,
} from '@app/apimachinery';
import type { RequestContext, SubresourceDeclaration } from '@app/registry';
import { asMap, formatLabels } from '../../core/core.helpers.js';

/** Descriptions of the autoscaling/v1 Scale messages. */
const SCALE_OVERLAYS: SchemaOverlays = {
  'k8s.io.api.autoscaling.v1.ScaleSpec': {
    description: 'The desired replica count.',
    fields: { replicas: { description: 'Desired number of instances of the scaled object.' } },
  },
  'k8s.io.api.autoscaling.v1.ScaleStatus': {
    description: 'The observed replica count.',
    required: ['replicas'],
    fields: {
      replicas: { description: 'Observed number of instances of the scaled object.' },
      selector: { description: 'Label query over the pods counted in replicas, in the label selector string syntax.' },
    },
  },
};

/** autoscaling/v1 Scale, the body of a `scale` subresource. */
export const ScaleSchema: JSONSchemaProps = defineSchema(
  'io.k8s.api.autoscaling.v1.Scale',
  objectRootSchema({ group: 'autoscaling', version: 'v1', kind: 'Scale' }, 'The replica count of a scalable resource.', {
    spec: fieldOf(protoSchema('k8s.io.api.autoscaling.v1.ScaleSpec', SCALE_OVERLAYS), { description: 'The desired replica count.' }),
    status: fieldOf(protoSchema('k8s.io.api.autoscaling.v1.ScaleStatus', SCALE_OVERLAYS), {
      description: 'The current replica count and pod selector; read-only.',
    }),
  }),
);

/** What the handler uses of the server; the apps group module fills it in at start. */
export interface ScaleDeps {
  /** Reads the workload (the store's 404 when absent). */
  get(ns: string, name: string): Promise<KubeObject>;
  /** Writes the workload as a PUT would. */
  update(ns: string, name: string, obj: KubeObject, ctx: RequestContext): Promise<KubeObject>;
}

/** The deps, set once the stores exist. */
export class ScalePorts {
  deps?: ScaleDeps;
}

/** The selector of a workload as a string (labels.Selector.String()); '' when it has none or it does not convert. */
export function selectorString(d: KubeObject): string {
  const sel = asMap(d.spec).selector;
  if (sel === undefined || sel === null) return '';
  try {
    return labelSelectorFromStruct(sel as LabelSelectorStruct).toString();
  } catch {
    return '';
  }
}

/** The selector of a ReplicationController, a plain label map, as a string (labels.SelectorFromSet(...).String()). */
export function mapSelectorString(d: KubeObject): string {
  return formatLabels(asMap(d.spec).selector, '');
}

/**
 * scaleFromDeployment (scaleFromReplicaSet, scaleFromStatefulSet, the ReplicationController's
 * scaleFromRC): the Scale view of a workload, its selector printed by `selectorOf`.
 */
export function scaleOf(d: KubeObject, selectorOf: (d: KubeObject) => string = selectorString): KubeObject {
  const m = d.metadata;
  const metadata: KubeObject['metadata'] = {};
  for (const k of ['name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp']) if (m[k] !== undefined) metadata[k] = m[k];
  const replicas = asMap(d.spec).replicas;
  return {
    apiVersion: 'autoscaling/v1',
    kind: 'Scale',
    metadata,
    spec: typeof replicas === 'number' ? { replicas } : {},
    status: { replicas: typeof asMap(d.status).replicas === 'number' ? asMap(d.status).replicas : 0, selector: selectorOf(d) },
  };
}

/** ValidateScale: spec.replicas not negative. */
export function validateScale(scale: KubeObject): FieldError[] {
  const r = asMap(scale.spec).replicas;
  return typeof r === 'number' && r < 0 ? [{ type: 'FieldValueInvalid', field: 'spec.replicas', value: r, detail: 'must be greater than or equal to 0' }] : [];
}

/** How many times an unconditional Scale update is tried against concurrent writes. */
const MAX_UNCONDITIONAL_ATTEMPTS = 10;

/**
 * The `scale` subresource of a workload kind, with the ports its handler uses (one per kind);
 * `selectorOf` prints the kind's selector in status.selector.
 */
export function scaleSubresource(ports: ScalePorts, selectorOf: (d: KubeObject) => string = selectorString): SubresourceDeclaration {
  const deps = (): ScaleDeps => {
    if (!ports.deps) throw Errors.internal('the scale subresource is not wired');
    return ports.deps;
  };
  return {
    verbs: ['get', 'patch', 'update'],
    kind: { group: 'autoscaling', version: 'v1', kind: 'Scale', protobufMessage: 'k8s.io.api.autoscaling.v1.Scale', schema: ScaleSchema },
    rest: {
      get: async (ns, name) => scaleOf(await deps().get(ns, name), selectorOf),
      async update(ns, name, scale, ctx) {
        if (!scale || typeof scale !== 'object' || Array.isArray(scale)) throw Errors.badRequest('the body of the request must be an object');
        if (scale.kind !== undefined && scale.kind !== 'Scale') throw Errors.badRequest(`expected a Scale, got ${String(scale.kind)}`);
        const meta = asMap(scale.metadata);
        if (meta.name !== undefined && meta.name !== name) throw Errors.badRequest('the name of the object does not match the name on the URL');
        const errs = validateScale(scale);
        if (errs.length) throw Errors.invalid('autoscaling', 'Scale', name, errs);
        const replicas = asMap(scale.spec).replicas;
        const precondition = typeof meta.resourceVersion === 'string' && meta.resourceVersion !== '' ? meta.resourceVersion : undefined;
        for (let attempt = 1; ; attempt++) {
          const current = await deps().get(ns, name);
          const next = structuredClone(current);
          next.spec = { ...asMap(next.spec), replicas: typeof replicas === 'number' ? replicas : 0 };
          next.metadata.resourceVersion = precondition ?? current.metadata.resourceVersion;
          try {
            return scaleOf(await deps().update(ns, name, next, ctx), selectorOf);
          } catch (e) {
            // A Scale without a resourceVersion is unconditional (kube's GuaranteedUpdate): a
            // conflict with a concurrent write (the controller's status, say) is retried on the
            // workload as it now is. One with a resourceVersion is the client's to resolve.
            const conflict = e instanceof StatusError && e.code === 409 && e.reason === 'Conflict';
            if (precondition !== undefined || !conflict || attempt >= MAX_UNCONDITIONAL_ATTEMPTS) throw e;
          }
        }
      },
    },
  };
}
