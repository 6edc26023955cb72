/**
 * storage.k8s.io/v1 StorageClass (cluster-scoped): declaration and strategy. kubectl's columns:
 * NAME PROVISIONER RECLAIMPOLICY VOLUMEBINDINGMODE ALLOWVOLUMEEXPANSION AGE. DELETE answers with
 * the object (resources doc).
 */
import type { KubeObject } from '@app/apimachinery';
import type { KindDeclaration, Strategy } from '@app/registry';
import { StorageClassSchema } from '../storage.schemas.js';
import { validateStorageClass, validateStorageClassUpdate } from '../storage.validation.js';

/** The annotations that make a class the default one (the beta key is still honoured by kube). */
const DEFAULT_CLASS_ANNOTATIONS = ['storageclass.kubernetes.io/is-default-class', 'storageclass.beta.kubernetes.io/is-default-class'];

/** Whether `sc` is marked as the cluster's default class. */
export function isDefaultClass(sc: KubeObject): boolean {
  const ann = (sc.metadata.annotations ?? {}) as Record<string, unknown>;
  return DEFAULT_CLASS_ANNOTATIONS.some((k) => ann[k] === 'true');
}

/** The default class among `classes` (util.GetDefaultClass): newest first, then by name. */
export function defaultStorageClass(classes: readonly KubeObject[]): KubeObject | undefined {
  const created = (sc: KubeObject) => Date.parse(String(sc.metadata.creationTimestamp ?? '')) || 0;
  return classes
    .filter(isDefaultClass)
    .sort(
      (a, b) => created(b) - created(a) || ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : (a.metadata.name ?? '') > (b.metadata.name ?? '') ? 1 : 0),
    )[0];
}

/** The annotation that named a claim's class before `spec.storageClassName`. */
export const BETA_STORAGE_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';

/** The class a claim names (helper.GetPersistentVolumeClaimClass): the beta annotation first, '' for none. */
export function claimClass(pvc: KubeObject): string {
  const ann = (pvc.metadata.annotations ?? {}) as Record<string, unknown>;
  if (typeof ann[BETA_STORAGE_CLASS_ANNOTATION] === 'string') return ann[BETA_STORAGE_CLASS_ANNOTATION];
  const name = ((pvc.spec ?? {}) as Record<string, unknown>).storageClassName;
  return typeof name === 'string' ? name : '';
}

/** Whether a claim chose a class, possibly none ('' is a choice): helper.PersistentVolumeClaimHasClass. */
export function claimHasClass(pvc: KubeObject): boolean {
  const name = ((pvc.spec ?? {}) as Record<string, unknown>).storageClassName;
  return (name !== undefined && name !== null) || BETA_STORAGE_CLASS_ANNOTATION in ((pvc.metadata.annotations ?? {}) as Record<string, unknown>);
}

/** The StorageClass strategy: validation only (the object has no status). */
export const storageClassStrategy: Strategy = {
  validate: (sc) => validateStorageClass(sc),
  validateUpdate: (sc, old) => validateStorageClassUpdate(sc, old),
};

/** The StorageClass declaration. */
export const storageClassKind: KindDeclaration = {
  group: 'storage.k8s.io',
  version: 'v1',
  kind: 'StorageClass',
  plural: 'storageclasses',
  singular: 'storageclass',
  shortNames: ['sc'],
  namespaced: false,
  schema: StorageClassSchema,
  protobufMessage: 'k8s.io.api.storage.v1.StorageClass',
  strategy: storageClassStrategy,
  deleteReturnsObject: true,
  // kubectl marks the default class: `fast (default)` (storageutil.IsDefaultAnnotation).
  nameCell: (o) => `${o.metadata.name ?? ''}${isDefaultClass(o) ? ' (default)' : ''}`,
  generation: 'none',
  tableColumns: [
    { name: 'Provisioner', type: 'string', priority: 0, description: 'Provisioner of the class', cell: (o) => String(o.provisioner ?? '') },
    { name: 'ReclaimPolicy', type: 'string', priority: 0, description: 'Reclaim policy of provisioned volumes', cell: (o) => String(o.reclaimPolicy ?? '') },
    { name: 'VolumeBindingMode', type: 'string', priority: 0, description: 'When volumes are bound', cell: (o) => String(o.volumeBindingMode ?? '') },
    { name: 'AllowVolumeExpansion', type: 'string', priority: 0, description: 'Whether claims may grow', cell: (o) => String(o.allowVolumeExpansion === true) },
  ],
};
