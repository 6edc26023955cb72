/**
 * core/v1 PersistentVolumeClaim (+status): its declaration, with kubectl's columns (NAME STATUS
 * VOLUME CAPACITY ACCESS MODES STORAGECLASS VOLUMEATTRIBUTESCLASS AGE, VOLUMEMODE with -o wide).
 * DELETE answers with the object, as kube-apiserver's claim store does.
 */
import { ageOf, statusSubresource, type KindDeclaration } from '@app/registry';
import { asMap } from '../core.helpers.js';
import { accessModesShort } from '../persistentvolume/persistentvolume.strategy.js';
import { PersistentVolumeClaimSchema } from './persistentvolumeclaim.schema.js';
import { persistentVolumeClaimStrategy } from './persistentvolumeclaim.strategy.js';

/** The PersistentVolumeClaim declaration. */
export const persistentVolumeClaimKind: KindDeclaration = {
  group: '',
  version: 'v1',
  kind: 'PersistentVolumeClaim',
  plural: 'persistentvolumeclaims',
  singular: 'persistentvolumeclaim',
  shortNames: ['pvc'],
  namespaced: true,
  schema: PersistentVolumeClaimSchema,
  protobufMessage: 'k8s.io.api.core.v1.PersistentVolumeClaim',
  strategy: persistentVolumeClaimStrategy,
  subresources: { status: statusSubresource() },
  deleteReturnsObject: true,
  generation: 'none',
  tableColumns: [
    { name: 'Status', type: 'string', priority: 0, description: 'Phase of the claim', cell: (o) => String(asMap(o.status).phase ?? '') },
    { name: 'Volume', type: 'string', priority: 0, description: 'The bound volume', cell: (o) => String(asMap(o.spec).volumeName ?? '') },
    {
      name: 'Capacity',
      type: 'string',
      priority: 0,
      description: 'Capacity of the bound volume',
      cell: (o) => String(asMap(asMap(o.status).capacity).storage ?? ''),
    },
    {
      name: 'Access Modes',
      type: 'string',
      priority: 0,
      description: 'Access modes of the bound volume',
      cell: (o) => accessModesShort(asMap(o.status).accessModes),
    },
    { name: 'StorageClass', type: 'string', priority: 0, description: 'Storage class', cell: (o) => String(asMap(o.spec).storageClassName ?? '') },
    {
      name: 'VolumeAttributesClass',
      type: 'string',
      priority: 0,
      description: 'Volume attributes class',
      cell: (o) => String(asMap(o.spec).volumeAttributesClassName ?? '<unset>'),
    },
    { name: 'Age', type: 'string', priority: 0, description: 'Time since creation', cell: (o, now) => ageOf(o, now) },
    { name: 'VolumeMode', type: 'string', priority: 1, description: 'Volume mode', cell: (o) => String(asMap(o.spec).volumeMode ?? '') },
  ],
};
