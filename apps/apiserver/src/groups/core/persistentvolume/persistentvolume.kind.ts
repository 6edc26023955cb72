/**
 * core/v1 PersistentVolume (cluster-scoped, +status): its declaration, with kubectl's columns
 * (NAME CAPACITY ACCESS MODES RECLAIM POLICY STATUS CLAIM STORAGECLASS VOLUMEATTRIBUTESCLASS
 * REASON AGE, VOLUMEMODE with -o wide). DELETE answers with the object (resources doc).
 */
import { ageOf, type KindDeclaration } from '@app/registry';
import { asMap } from '../core.helpers.js';
import { PersistentVolumeSchema } from './persistentvolume.schema.js';
import { accessModesShort, persistentVolumeStatusSubresource, persistentVolumeStrategy } from './persistentvolume.strategy.js';

/** The PersistentVolume declaration. */
export const persistentVolumeKind: KindDeclaration = {
  group: '',
  version: 'v1',
  kind: 'PersistentVolume',
  plural: 'persistentvolumes',
  singular: 'persistentvolume',
  shortNames: ['pv'],
  namespaced: false,
  schema: PersistentVolumeSchema,
  protobufMessage: 'k8s.io.api.core.v1.PersistentVolume',
  strategy: persistentVolumeStrategy,
  subresources: { status: persistentVolumeStatusSubresource },
  deleteReturnsObject: true,
  generation: 'none',
  fieldSelectors: { 'status.phase': (o) => String(asMap(o.status).phase ?? '') },
  tableColumns: [
    { name: 'Capacity', type: 'string', priority: 0, description: 'Storage capacity', cell: (o) => String(asMap(asMap(o.spec).capacity).storage ?? '') },
    { name: 'Access Modes', type: 'string', priority: 0, description: 'Access modes', cell: (o) => accessModesShort(asMap(o.spec).accessModes) },
    {
      name: 'Reclaim Policy',
      type: 'string',
      priority: 0,
      description: 'Reclaim policy',
      cell: (o) => String(asMap(o.spec).persistentVolumeReclaimPolicy ?? ''),
    },
    { name: 'Status', type: 'string', priority: 0, description: 'Phase of the volume', cell: (o) => String(asMap(o.status).phase ?? '') },
    {
      name: 'Claim',
      type: 'string',
      priority: 0,
      description: 'The claim bound to the volume',
      cell: (o) => {
        const ref = asMap(asMap(o.spec).claimRef);
        return ref.name ? `${String(ref.namespace ?? '')}/${String(ref.name)}` : '';
      },
    },
    { name: 'StorageClass', type: 'string', priority: 0, description: 'Storage class', cell: (o) => String(asMap(o.spec).storageClassName ?? '') },
    {
      name: 'VolumeAttributesClass',
      type: 'string',
      priority: 0,
      description: 'Volume attributes class',
      cell: (o) => String(asMap(o.spec).volumeAttributesClassName ?? '<unset>'),
    },
    { name: 'Reason', type: 'string', priority: 0, description: 'Reason of a failure', cell: (o) => String(asMap(o.status).reason ?? '') },
    { name: 'Age', type: 'string', priority: 0, description: 'Time since creation', cell: (o, now) => ageOf(o, now) },
    { name: 'VolumeMode', type: 'string', priority: 1, description: 'Volume mode', cell: (o) => String(asMap(o.spec).volumeMode ?? '') },
  ],
};
