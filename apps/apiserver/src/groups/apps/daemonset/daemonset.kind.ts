/**
 * apps/v1 DaemonSet (+status) as a stored kind: no controller acts on it here, so no Pods
 * follow and status stays what /status writes. No scale subresource (one pod per node).
 * kubectl's columns (pkg/printers internalversion printDaemonSet): NAME DESIRED CURRENT READY
 * UP-TO-DATE AVAILABLE NODE SELECTOR AGE, and CONTAINERS IMAGES SELECTOR with -o wide.
 */
import { ageOf, statusSubresource, type KindDeclaration } from '@app/registry';
import type { KubeObject } from '@app/apimachinery';
import { asMap, formatLabels } from '../../core/core.helpers.js';
import { num, SELECTOR_COLUMN, TEMPLATE_COLUMNS } from '../workload.columns.js';
import { DaemonSetSchema } from './daemonset.schema.js';
import { daemonSetStatusStrategy, daemonSetStrategy } from './daemonset.strategy.js';

/** labels.FormatLabels of the template's nodeSelector: sorted k=v pairs, `<none>` when empty. */
const nodeSelectorOf = (o: KubeObject): string => formatLabels(asMap(asMap(asMap(o.spec).template).spec).nodeSelector);

const status = (o: KubeObject, f: string): number => num(asMap(o.status)[f]);

/** The DaemonSet declaration. */
export const daemonSetKind: KindDeclaration = {
  group: 'apps',
  version: 'v1',
  kind: 'DaemonSet',
  plural: 'daemonsets',
  singular: 'daemonset',
  shortNames: ['ds'],
  categories: ['all'],
  namespaced: true,
  schema: DaemonSetSchema,
  protobufMessage: 'k8s.io.api.apps.v1.DaemonSet',
  strategy: daemonSetStrategy,
  subresources: { status: { verbs: statusSubresource().verbs, strategy: daemonSetStatusStrategy } },
  generation: 'spec',
  tableColumns: [
    { name: 'Desired', type: 'integer', priority: 0, description: 'Nodes that should run the daemon pod', cell: (o) => status(o, 'desiredNumberScheduled') },
    { name: 'Current', type: 'integer', priority: 0, description: 'Nodes running the daemon pod', cell: (o) => status(o, 'currentNumberScheduled') },
    { name: 'Ready', type: 'integer', priority: 0, description: 'Nodes whose daemon pod is ready', cell: (o) => status(o, 'numberReady') },
    { name: 'Up-to-date', type: 'integer', priority: 0, description: 'Nodes running the updated daemon pod', cell: (o) => status(o, 'updatedNumberScheduled') },
    { name: 'Available', type: 'integer', priority: 0, description: 'Nodes whose daemon pod is available', cell: (o) => status(o, 'numberAvailable') },
    { name: 'Node Selector', type: 'string', priority: 0, description: 'The node selector of the template', cell: nodeSelectorOf },
    { name: 'Age', type: 'string', priority: 0, description: 'Time since creation', cell: (o, now) => ageOf(o, now) },
    ...TEMPLATE_COLUMNS,
    SELECTOR_COLUMN,
  ],
};
