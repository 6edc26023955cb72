/**
 * storage.k8s.io/v1 CSIStorageCapacity (namespaced): declaration and strategy. kubectl's
 * columns: NAME STORAGECLASSNAME CAPACITY AGE. DELETE answers with a Status (resources doc).
 */
import type { KindDeclaration, Strategy } from '@app/registry';
import { CSIStorageCapacitySchema } from '../storage.schemas.js';
import { validateCSIStorageCapacity, validateCSIStorageCapacityUpdate } from '../storage.validation.js';

/** The CSIStorageCapacity strategy. */
export const csiStorageCapacityStrategy: Strategy = {
  validate: (c) => validateCSIStorageCapacity(c),
  validateUpdate: (c, old) => validateCSIStorageCapacityUpdate(c, old),
};

/** The CSIStorageCapacity declaration. */
export const csiStorageCapacityKind: KindDeclaration = {
  group: 'storage.k8s.io',
  version: 'v1',
  kind: 'CSIStorageCapacity',
  plural: 'csistoragecapacities',
  singular: 'csistoragecapacity',
  namespaced: true,
  schema: CSIStorageCapacitySchema,
  protobufMessage: 'k8s.io.api.storage.v1.CSIStorageCapacity',
  strategy: csiStorageCapacityStrategy,
  generation: 'none',
  tableColumns: [
    { name: 'StorageClassName', type: 'string', priority: 0, description: 'The class the capacity applies to', cell: (o) => String(o.storageClassName ?? '') },
    { name: 'Capacity', type: 'string', priority: 0, description: 'Capacity available', cell: (o) => String(o.capacity ?? '') },
  ],
};
