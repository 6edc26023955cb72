/**
 * kubectl columns shared by the apps/v1 workloads (pkg/printers/internalversion printers.go):
 * the -o wide CONTAINERS, IMAGES and SELECTOR of a pod template.
 */
import type { KubeObject } from '@app/apimachinery';
import { ageOf, type TableColumn } from '@app/registry';
import { asMap } from '../core/core.helpers.js';
import { selectorString } from './deployment/deployment.scale.js';

/** A number field, 0 when unset (Go's zero value). */
export const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

/** DESIRED, CURRENT, READY and AGE of a ReplicaSet or ReplicationController (printReplicaSet, printReplicationController). */
export const REPLICA_COLUMNS: readonly TableColumn[] = [
  { name: 'Desired', type: 'integer', priority: 0, description: 'Number of desired pods', cell: (o) => num(asMap(o.spec).replicas) },
  { name: 'Current', type: 'integer', priority: 0, description: 'Number of actual pods', cell: (o) => num(asMap(o.status).replicas) },
  { name: 'Ready', type: 'integer', priority: 0, description: 'Number of ready pods', cell: (o) => num(asMap(o.status).readyReplicas) },
  { name: 'Age', type: 'string', priority: 0, description: 'Time since creation', cell: (o, now) => ageOf(o, now) },
];

/** CONTAINERS and IMAGES of the pod template `templateOf` finds in an object, at `priority`. */
export function templateColumns(templateOf: (o: KubeObject) => unknown, priority: number): TableColumn[] {
  const containers = (o: KubeObject): Record<string, unknown>[] => {
    const cs = asMap(asMap(templateOf(o)).spec).containers;
    return Array.isArray(cs) ? cs.map(asMap) : [];
  };
  const names = (o: KubeObject, field: 'name' | 'image') =>
    containers(o)
      .map((c) => String(c[field] ?? ''))
      .join(',');
  return [
    { name: 'Containers', type: 'string', priority, description: 'Container names of the template', cell: (o) => names(o, 'name') },
    { name: 'Images', type: 'string', priority, description: 'Container images of the template', cell: (o) => names(o, 'image') },
  ];
}

/** CONTAINERS and IMAGES of spec.template, priority 1. */
export const TEMPLATE_COLUMNS: readonly TableColumn[] = templateColumns((o) => asMap(o.spec).template, 1);

/** SELECTOR of spec.selector, priority 1. */
export const SELECTOR_COLUMN: TableColumn = {
  name: 'Selector',
  type: 'string',
  priority: 1,
  description: 'The label selector of the pods',
  cell: selectorString,
};
