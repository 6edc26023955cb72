/**
 * A Deployment's `scale` subresource (kube's pkg/registry/apps/deployment/storage ScaleREST):
 * an autoscaling/v1 Scale viewed from the Deployment. spec.replicas is the Deployment's
 * spec.replicas; status.replicas its status.replicas and status.selector its label selector as
 * a string. GET reads it; PUT (and PATCH, applied to the current Scale by the HTTP layer)
 * writes spec.replicas back through the Deployment store, with the Scale's resourceVersion as
 * precondition, so the Deployment's own validation and generation rules apply.
 */
import { Errors, labelSelectorFromStruct, type FieldError, type KubeObject, type LabelSelectorStruct } from '@app/apimachinery';
import type { RequestContext, SubresourceDeclaration } from '@app/registry';
import { asMap } from '../../core/core.helpers.js';
import { ScaleSchema } from './deployment.schema.js';

/** What the handler uses of the server; the apps group module fills it in at start. */
export interface ScaleDeps {
  /** Reads the Deployment (the store's 404 when absent). */
  get(ns: string, name: string): Promise<KubeObject>;
  /** Writes the Deployment as a PUT would. */
  update(ns: string, name: string, obj: KubeObject, ctx: RequestContext): Promise<KubeObject>;
}

/** The deps, set once the stores exist. */
export class ScalePorts {
  deps?: ScaleDeps;
}

/** The selector of a Deployment as a string (labels.Selector.String()); '' when it has none or it does not convert. */
export function selectorString(d: KubeObject): string {
  const sel = asMap(d.spec).selector;
  if (sel === undefined || sel === null) return '';
  try {
    return labelSelectorFromStruct(sel as LabelSelectorStruct).toString();
  } catch {
    return '';
  }
}

/** scaleFromDeployment: the Scale view of a Deployment. */
export function scaleOf(d: KubeObject): KubeObject {
  const m = d.metadata;
  const metadata: KubeObject['metadata'] = {};
  for (const k of ['name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp']) if (m[k] !== undefined) metadata[k] = m[k];
  const replicas = asMap(d.spec).replicas;
  return {
    apiVersion: 'autoscaling/v1',
    kind: 'Scale',
    metadata,
    spec: typeof replicas === 'number' ? { replicas } : {},
    status: { replicas: typeof asMap(d.status).replicas === 'number' ? asMap(d.status).replicas : 0, selector: selectorString(d) },
  };
}

/** ValidateScale: spec.replicas not negative. */
export function validateScale(scale: KubeObject): FieldError[] {
  const r = asMap(scale.spec).replicas;
  return typeof r === 'number' && r < 0 ? [{ type: 'FieldValueInvalid', field: 'spec.replicas', value: r, detail: 'must be greater than or equal to 0' }] : [];
}

/** The `scale` subresource of deployments, with the ports its handler uses. */
export function scaleSubresource(ports: ScalePorts): SubresourceDeclaration {
  const deps = (): ScaleDeps => {
    if (!ports.deps) throw Errors.internal('the scale subresource is not wired');
    return ports.deps;
  };
  return {
    verbs: ['get', 'patch', 'update'],
    kind: { group: 'autoscaling', version: 'v1', kind: 'Scale', protobufMessage: 'k8s.io.api.autoscaling.v1.Scale', schema: ScaleSchema },
    rest: {
      get: async (ns, name) => scaleOf(await deps().get(ns, name)),
      async update(ns, name, scale, ctx) {
        if (!scale || typeof scale !== 'object' || Array.isArray(scale)) throw Errors.badRequest('the body of the request must be an object');
        if (scale.kind !== undefined && scale.kind !== 'Scale') throw Errors.badRequest(`expected a Scale, got ${String(scale.kind)}`);
        const meta = asMap(scale.metadata);
        if (meta.name !== undefined && meta.name !== name) throw Errors.badRequest('the name of the object does not match the name on the URL');
        const errs = validateScale(scale);
        if (errs.length) throw Errors.invalid('autoscaling', 'Scale', name, errs);
        const current = await deps().get(ns, name);
        const replicas = asMap(scale.spec).replicas;
        const next = structuredClone(current);
        next.spec = { ...asMap(next.spec), replicas: typeof replicas === 'number' ? replicas : 0 };
        next.metadata.resourceVersion =
          typeof meta.resourceVersion === 'string' && meta.resourceVersion !== '' ? meta.resourceVersion : current.metadata.resourceVersion;
        return scaleOf(await deps().update(ns, name, next, ctx));
      },
    },
  };
}
