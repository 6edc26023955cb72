/**
 * kubectl columns shared by the apps/v1 workloads (pkg/printers/internalversion printers.go):
 * the -o wide CONTAINERS, IMAGES and SELECTOR of a pod template.
 */
import type { KubeObject } from '@app/apimachinery';
import type { TableColumn } from '@app/registry';
import { asMap } from '../core/core.helpers.js';
import { selectorString } from './deployment/deployment.scale.js';

/** A number field, 0 when unset (Go's zero value). */
export const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

const containers = (o: KubeObject): Record<string, unknown>[] => {
  const cs = asMap(asMap(asMap(o.spec).template).spec).containers;
  return Array.isArray(cs) ? cs.map(asMap) : [];
};

/** CONTAINERS and IMAGES of spec.template, priority 1. */
export const TEMPLATE_COLUMNS: readonly TableColumn[] = [
  {
    name: 'Containers',
    type: 'string',
    priority: 1,
    description: 'Container names of the template',
    cell: (o) =>
      containers(o)
        .map((c) => String(c.name ?? ''))
        .join(','),
  },
  {
    name: 'Images',
    type: 'string',
    priority: 1,
    description: 'Container images of the template',
    cell: (o) =>
      containers(o)
        .map((c) => String(c.image ?? ''))
        .join(','),
  },
];

/** SELECTOR of spec.selector, priority 1. */
export const SELECTOR_COLUMN: TableColumn = {
  name: 'Selector',
  type: 'string',
  priority: 1,
  description: 'The label selector of the pods',
  cell: selectorString,
};
