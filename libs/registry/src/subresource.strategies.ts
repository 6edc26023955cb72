/**
 * The update-style subresources kinds declare (Kubernetes' per-subresource strategies): each
 * says which part of the stored object a write through it may change. Everything else is reset
 * to the stored state, so a client cannot change spec through /status or status through
 * /finalize.
 */
import type { KindDeclaration, SubresourceDeclaration, SubresourceStrategy } from './kind.types.js';
import type { KubeObject } from '@app/apimachinery';

function asMap(v: unknown): Record<string, unknown> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** Replaces the contents of `obj` with `next` in place (strategies mutate the object they get). */
export function replaceContents(obj: KubeObject, next: KubeObject): void {
  for (const k of Object.keys(obj)) delete obj[k];
  Object.assign(obj, next);
}

/**
 * /status: only status changes, plus metadata labels and annotations as Kubernetes allows
 * (its status strategies reset spec and keep the rest of metadata from the stored object).
 */
export const STATUS_STRATEGY: SubresourceStrategy = {
  prepareForUpdate(obj, old) {
    const next = structuredClone(old);
    next.status = obj.status;
    if (next.status === undefined) delete next.status;
    next.metadata = { ...next.metadata, labels: obj.metadata.labels, annotations: obj.metadata.annotations };
    if (next.metadata.labels === undefined) delete next.metadata.labels;
    if (next.metadata.annotations === undefined) delete next.metadata.annotations;
    replaceContents(obj, next);
  },
};

/** /finalize (Namespace): only spec.finalizers changes (resources doc, Namespace). */
export const FINALIZE_STRATEGY: SubresourceStrategy = {
  prepareForUpdate(obj, old) {
    const next = structuredClone(old);
    const fins = asMap(obj.spec).finalizers;
    next.spec = { ...asMap(old.spec), finalizers: Array.isArray(fins) ? fins : [] };
    replaceContents(obj, next);
  },
};

/** The `status` subresource declaration: get, update and patch of status. */
export function statusSubresource(): SubresourceDeclaration {
  return { verbs: ['get', 'patch', 'update'], strategy: STATUS_STRATEGY };
}

/** The `finalize` subresource declaration (Namespace): update of spec.finalizers. */
export function finalizeSubresource(): SubresourceDeclaration {
  return { verbs: ['update'], strategy: FINALIZE_STRATEGY };
}

/** The declaration of subresource `name` of a kind, if it declares one. */
export function subresourceOf(decl: Pick<KindDeclaration, 'subresources'>, name: string): SubresourceDeclaration | undefined {
  if (!name || !decl.subresources || !Object.prototype.hasOwnProperty.call(decl.subresources, name)) return undefined;
  return decl.subresources[name];
}

/** True when the kind splits status into its own subresource (main writes keep stored status). */
export function hasStatusSubresource(decl: Pick<KindDeclaration, 'subresources'>): boolean {
  return subresourceOf(decl, 'status') !== undefined;
}
