/**
 * storage.k8s.io/v1 CSIDriver (cluster-scoped): declaration and strategy. The name is the
 * driver's (CSI driver name rule, checked by the strategy instead of the DNS subdomain rule, as
 * kube lower-cases it first). kubectl's columns: NAME ATTACHREQUIRED PODINFOONMOUNT
 * STORAGECAPACITY TOKENREQUESTS REQUIRESREPUBLISH MODES AGE. DELETE answers with the object.
 */
import { ageOf, type KindDeclaration, type Strategy } from '@app/registry';
import { CSIDriverSchema } from '../storage.schemas.js';
import { validateCSIDriver, validateCSIDriverUpdate } from '../storage.validation.js';

const spec = (o: Record<string, unknown>): Record<string, unknown> => (o.spec ?? {}) as Record<string, unknown>;

/** The CSIDriver strategy. */
export const csiDriverStrategy: Strategy = {
  prepareForCreate(d) {
    // An empty list means Persistent (SetDefaults_CSIDriver); the schema default covers absence only.
    const s = spec(d);
    if (Array.isArray(s.volumeLifecycleModes) && s.volumeLifecycleModes.length === 0) s.volumeLifecycleModes = ['Persistent'];
  },
  validate: (d) => validateCSIDriver(d, d.metadata.name ?? ''),
  validateUpdate: (d, old) => validateCSIDriverUpdate(d, old, d.metadata.name ?? ''),
};

/** The CSIDriver declaration. */
export const csiDriverKind: KindDeclaration = {
  group: 'storage.k8s.io',
  version: 'v1',
  kind: 'CSIDriver',
  plural: 'csidrivers',
  singular: 'csidriver',
  namespaced: false,
  nameValidation: 'pathSegment',
  schema: CSIDriverSchema,
  protobufMessage: 'k8s.io.api.storage.v1.CSIDriver',
  strategy: csiDriverStrategy,
  deleteReturnsObject: true,
  generation: 'spec',
  tableColumns: [
    { name: 'AttachRequired', type: 'boolean', priority: 0, description: 'Whether an attach step is needed', cell: (o) => spec(o).attachRequired === true },
    { name: 'PodInfoOnMount', type: 'boolean', priority: 0, description: 'Whether mounts get pod information', cell: (o) => spec(o).podInfoOnMount === true },
    { name: 'StorageCapacity', type: 'boolean', priority: 0, description: 'Whether capacity is tracked', cell: (o) => spec(o).storageCapacity === true },
    {
      name: 'TokenRequests',
      type: 'string',
      priority: 0,
      description: 'Audiences of the requested tokens',
      cell: (o) => {
        const reqs = Array.isArray(spec(o).tokenRequests) ? (spec(o).tokenRequests as Array<Record<string, unknown>>) : [];
        return reqs.length ? reqs.map((r) => String(r.audience ?? '')).join(',') : '<unset>';
      },
    },
    {
      name: 'RequiresRepublish',
      type: 'boolean',
      priority: 0,
      description: 'Whether volumes are republished periodically',
      cell: (o) => spec(o).requiresRepublish === true,
    },
    {
      name: 'Modes',
      type: 'string',
      priority: 0,
      description: 'Volume lifecycle modes',
      cell: (o) => (Array.isArray(spec(o).volumeLifecycleModes) ? (spec(o).volumeLifecycleModes as string[]).join(',') : ''),
    },
    { name: 'Age', type: 'string', priority: 0, description: 'Time since creation', cell: (o, now) => ageOf(o, now) },
  ],
};
