/**
 * apps/v1 Deployment (+status, +scale) as a stored kind: no controller acts on it here, so no
 * ReplicaSets or Pods follow and status stays what /status writes. kubectl's columns (pkg/printers
 * internalversion printDeployment): NAME READY UP-TO-DATE AVAILABLE AGE, and CONTAINERS IMAGES
 * SELECTOR with -o wide.
 */
import { ageOf, statusSubresource, type KindDeclaration } from '@app/registry';
import { asMap } from '../../core/core.helpers.js';
import { DeploymentSchema } from './deployment.schema.js';
import { ScalePorts, scaleSubresource } from './deployment.scale.js';
import { num, SELECTOR_COLUMN, TEMPLATE_COLUMNS } from '../workload.columns.js';
import { deploymentStatusStrategy, deploymentStrategy } from './deployment.strategy.js';

/** What the scale subresource uses of the server; the apps group module fills it in at start. */
export const scalePorts = new ScalePorts();

/** The Deployment declaration. */
export const deploymentKind: KindDeclaration = {
  group: 'apps',
  version: 'v1',
  kind: 'Deployment',
  plural: 'deployments',
  singular: 'deployment',
  shortNames: ['deploy'],
  categories: ['all'],
  namespaced: true,
  schema: DeploymentSchema,
  protobufMessage: 'k8s.io.api.apps.v1.Deployment',
  strategy: deploymentStrategy,
  subresources: {
    status: { verbs: statusSubresource().verbs, strategy: deploymentStatusStrategy },
    scale: scaleSubresource(scalePorts),
  },
  generation: 'spec',
  tableColumns: [
    {
      name: 'Ready',
      type: 'string',
      priority: 0,
      description: 'Ready pods of the desired replicas',
      cell: (o) => `${num(asMap(o.status).readyReplicas)}/${num(asMap(o.spec).replicas)}`,
    },
    {
      name: 'Up-to-date',
      type: 'integer',
      priority: 0,
      description: 'Pods with the current template',
      cell: (o) => num(asMap(o.status).updatedReplicas),
    },
    { name: 'Available', type: 'integer', priority: 0, description: 'Available pods', cell: (o) => num(asMap(o.status).availableReplicas) },
    { name: 'Age', type: 'string', priority: 0, description: 'Time since creation', cell: (o, now) => ageOf(o, now) },
    ...TEMPLATE_COLUMNS,
    SELECTOR_COLUMN,
  ],
};
