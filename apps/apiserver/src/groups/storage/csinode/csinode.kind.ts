/**
 * storage.k8s.io/v1 CSINode (cluster-scoped): declaration and strategy. kubectl's columns: NAME
 * DRIVERS AGE. DELETE answers with the object.
 */
import type { KindDeclaration, Strategy } from '@app/registry';
import { CSINodeSchema } from '../storage.schemas.js';
import { validateCSINode, validateCSINodeUpdate } from '../storage.validation.js';

/** The CSINode strategy. */
export const csiNodeStrategy: Strategy = {
  validate: (n) => validateCSINode(n),
  validateUpdate: (n, old) => validateCSINodeUpdate(n, old),
};

/** The CSINode declaration. */
export const csiNodeKind: KindDeclaration = {
  group: 'storage.k8s.io',
  version: 'v1',
  kind: 'CSINode',
  plural: 'csinodes',
  singular: 'csinode',
  namespaced: false,
  schema: CSINodeSchema,
  protobufMessage: 'k8s.io.api.storage.v1.CSINode',
  strategy: csiNodeStrategy,
  deleteReturnsObject: true,
  generation: 'none',
  tableColumns: [
    {
      name: 'Drivers',
      type: 'integer',
      priority: 0,
      description: 'Number of CSI drivers on the node',
      cell: (o) => {
        const drivers = ((o.spec ?? {}) as Record<string, unknown>).drivers;
        return Array.isArray(drivers) ? drivers.length : 0;
      },
    },
  ],
};
