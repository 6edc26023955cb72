/**
 * core/v1 ReplicationController (+status, +scale) as a stored kind: no replication manager runs
 * here, so no Pods follow and status stays what /status writes. kubectl needs the kind served:
 * `kubectl apply --prune` without an allowlist looks up every kind of its default list, this one
 * included. kubectl's columns (pkg/printers internalversion printReplicationController): NAME
 * DESIRED CURRENT READY AGE, and CONTAINERS IMAGES SELECTOR with -o wide. `status.replicas` is a
 * field selector, as in kube.
 */
import { statusSubresource, type KindDeclaration } from '@app/registry';
import { ScalePorts, mapSelectorString, scaleSubresource } from '../../apps/deployment/deployment.scale.js';
import { num, REPLICA_COLUMNS, TEMPLATE_COLUMNS } from '../../apps/workload.columns.js';
import { asMap } from '../core.helpers.js';
import { ReplicationControllerSchema } from './replicationcontroller.schema.js';
import { replicationControllerStatusStrategy, replicationControllerStrategy } from './replicationcontroller.strategy.js';

/** What the ReplicationController's scale subresource uses of the server; the core group module fills it in at start. */
export const replicationControllerScalePorts = new ScalePorts();

/** The ReplicationController declaration. */
export const replicationControllerKind: KindDeclaration = {
  group: '',
  version: 'v1',
  kind: 'ReplicationController',
  plural: 'replicationcontrollers',
  singular: 'replicationcontroller',
  shortNames: ['rc'],
  categories: ['all'],
  namespaced: true,
  schema: ReplicationControllerSchema,
  protobufMessage: 'k8s.io.api.core.v1.ReplicationController',
  strategy: replicationControllerStrategy,
  subresources: {
    status: { verbs: statusSubresource().verbs, strategy: replicationControllerStatusStrategy },
    scale: scaleSubresource(replicationControllerScalePorts, mapSelectorString),
  },
  generation: 'spec',
  tableColumns: [
    ...REPLICA_COLUMNS,
    ...TEMPLATE_COLUMNS,
    { name: 'Selector', type: 'string', priority: 1, description: 'The label selector of the pods', cell: mapSelectorString },
  ],
  fieldSelectors: { 'status.replicas': (o) => String(num(asMap(o.status).replicas)) },
};
