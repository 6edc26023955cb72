/**
 * apps/v1 ReplicaSet (+status, +scale) as a stored kind: no controller acts on it here, so no
 * Pods follow and status stays what /status writes. kubectl's columns (pkg/printers
 * internalversion printReplicaSet): NAME DESIRED CURRENT READY AGE, and CONTAINERS IMAGES
 * SELECTOR with -o wide.
 */
import { statusSubresource, type KindDeclaration } from '@app/registry';
import { ScalePorts, scaleSubresource } from '../deployment/deployment.scale.js';
import { REPLICA_COLUMNS, SELECTOR_COLUMN, TEMPLATE_COLUMNS } from '../workload.columns.js';
import { ReplicaSetSchema } from './replicaset.schema.js';
import { replicaSetStatusStrategy, replicaSetStrategy } from './replicaset.strategy.js';

/** What the ReplicaSet's scale subresource uses of the server; the apps group module fills it in at start. */
export const replicaSetScalePorts = new ScalePorts();

/** The ReplicaSet declaration. */
export const replicaSetKind: KindDeclaration = {
  group: 'apps',
  version: 'v1',
  kind: 'ReplicaSet',
  plural: 'replicasets',
  singular: 'replicaset',
  shortNames: ['rs'],
  categories: ['all'],
  namespaced: true,
  schema: ReplicaSetSchema,
  protobufMessage: 'k8s.io.api.apps.v1.ReplicaSet',
  strategy: replicaSetStrategy,
  subresources: {
    status: { verbs: statusSubresource().verbs, strategy: replicaSetStatusStrategy },
    scale: scaleSubresource(replicaSetScalePorts),
  },
  generation: 'spec',
  tableColumns: [...REPLICA_COLUMNS, ...TEMPLATE_COLUMNS, SELECTOR_COLUMN],
};
