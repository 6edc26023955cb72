/**
 * apps/v1 StatefulSet (+status, +scale) as a stored kind: no controller acts on it here, so no
 * Pods or claims follow and status stays what /status writes. kubectl's columns (pkg/printers
 * internalversion printStatefulSet): NAME READY AGE, and CONTAINERS IMAGES with -o wide.
 */
import { ageOf, statusSubresource, type KindDeclaration } from '@app/registry';
import { asMap } from '../../core/core.helpers.js';
import { ScalePorts, scaleSubresource } from '../deployment/deployment.scale.js';
import { num, TEMPLATE_COLUMNS } from '../workload.columns.js';
import { StatefulSetSchema } from './statefulset.schema.js';
import { statefulSetStatusStrategy, statefulSetStrategy } from './statefulset.strategy.js';

/** What the StatefulSet's scale subresource uses of the server; the apps group module fills it in at start. */
export const statefulSetScalePorts = new ScalePorts();

/** The StatefulSet declaration. */
export const statefulSetKind: KindDeclaration = {
  group: 'apps',
  version: 'v1',
  kind: 'StatefulSet',
  plural: 'statefulsets',
  singular: 'statefulset',
  shortNames: ['sts'],
  categories: ['all'],
  namespaced: true,
  schema: StatefulSetSchema,
  protobufMessage: 'k8s.io.api.apps.v1.StatefulSet',
  strategy: statefulSetStrategy,
  subresources: {
    status: { verbs: statusSubresource().verbs, strategy: statefulSetStatusStrategy },
    scale: scaleSubresource(statefulSetScalePorts),
  },
  generation: 'spec',
  tableColumns: [
    {
      name: 'Ready',
      type: 'string',
      priority: 0,
      description: 'Number of the pods ready of the desired',
      cell: (o) => `${num(asMap(o.status).readyReplicas)}/${num(asMap(o.spec).replicas)}`,
    },
    { name: 'Age', type: 'string', priority: 0, description: 'Time since creation', cell: (o, now) => ageOf(o, now) },
    ...TEMPLATE_COLUMNS,
  ],
};
