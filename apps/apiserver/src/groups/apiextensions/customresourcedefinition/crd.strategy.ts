/**
 * The CustomResourceDefinition strategy (kube's apiextensions-apiserver registry
 * customresourcedefinition strategy): status starts with the storage version in
 * storedVersions, which a new storage version joins on update; the first delete adds the
 * cleanup finalizer and the Terminating condition, so the definition stays until its objects
 * are gone (crd.controllers.ts).
 */
import type { KubeObject } from '@app/apimachinery';
import { STATUS_STRATEGY, type RequestContext, type Strategy, type SubresourceStrategy } from '@app/registry';
import { CLEANUP_FINALIZER, setCrdCondition, storageVersionOf } from './custom-resource.kinds.js';
import { validateCrd, validateCrdUpdate, validateStoredVersions } from './crd.validation.js';

type Obj = Record<string, unknown>;
const asMap = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});

function addStoredVersion(obj: KubeObject): void {
  const storage = storageVersionOf(obj);
  if (!storage) return;
  const status = asMap(obj.status);
  const stored = Array.isArray(status.storedVersions) ? (status.storedVersions as unknown[]) : [];
  if (!stored.includes(storage)) obj.status = { ...status, storedVersions: [...stored, storage] };
}

export const crdStrategy: Strategy = {
  prepareForCreate(obj) {
    obj.status = {};
    addStoredVersion(obj);
  },
  prepareForUpdate(obj) {
    // The stored status was put back by the store (the kind has /status).
    addStoredVersion(obj);
  },
  validate: (obj) => validateCrd(obj),
  validateUpdate: (obj, old) => validateCrdUpdate(obj, old),
  prepareForDelete(obj: KubeObject, ctx: RequestContext) {
    const fins = Array.isArray(obj.metadata.finalizers) ? (obj.metadata.finalizers as string[]) : [];
    if (!fins.includes(CLEANUP_FINALIZER)) obj.metadata.finalizers = [...fins, CLEANUP_FINALIZER];
    setCrdCondition(
      obj,
      {
        type: 'Terminating',
        status: 'True',
        reason: 'InstanceDeletionPending',
        message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon',
      },
      ctx.now(),
    );
  },
};

/** /status of a definition: status only, its stored versions still listed in spec.versions. */
export const crdStatusStrategy: SubresourceStrategy = {
  prepareForUpdate: (obj, old, ctx) => STATUS_STRATEGY.prepareForUpdate(obj, old, ctx),
  validateUpdate: (obj) => validateStoredVersions(obj),
};
