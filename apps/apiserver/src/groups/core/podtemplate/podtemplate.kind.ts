/**
 * core/v1 PodTemplate: its declaration. kubectl's columns (pkg/printers internalversion
 * printPodTemplate): NAME CONTAINERS IMAGES POD LABELS, without AGE.
 */
import type { KubeObject } from '@app/apimachinery';
import type { KindDeclaration } from '@app/registry';
import { asMap } from '../core.helpers.js';
import { PodTemplateSchema } from './podtemplate.schema.js';
import { podTemplateStrategy } from './podtemplate.strategy.js';

const containers = (o: KubeObject): Record<string, unknown>[] => {
  const cs = asMap(asMap(o.template).spec).containers;
  return Array.isArray(cs) ? cs.map(asMap) : [];
};

/** labels.FormatLabels: `k=v` pairs sorted by key, `<none>` when there are none. */
function formatLabels(labels: unknown): string {
  const pairs = Object.entries(asMap(labels))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${String(v)}`);
  return pairs.length ? pairs.join(',') : '<none>';
}

/** The PodTemplate declaration. */
export const podTemplateKind: KindDeclaration = {
  group: '',
  version: 'v1',
  kind: 'PodTemplate',
  plural: 'podtemplates',
  singular: 'podtemplate',
  namespaced: true,
  schema: PodTemplateSchema,
  protobufMessage: 'k8s.io.api.core.v1.PodTemplate',
  strategy: podTemplateStrategy,
  generation: 'create',
  ageColumn: false,
  tableColumns: [
    {
      name: 'Containers',
      type: 'string',
      priority: 0,
      description: 'Container names of the template',
      cell: (o) =>
        containers(o)
          .map((c) => String(c.name ?? ''))
          .join(','),
    },
    {
      name: 'Images',
      type: 'string',
      priority: 0,
      description: 'Container images of the template',
      cell: (o) =>
        containers(o)
          .map((c) => String(c.image ?? ''))
          .join(','),
    },
    {
      name: 'Pod Labels',
      type: 'string',
      priority: 0,
      description: 'The labels of the pods',
      cell: (o) => formatLabels(asMap(asMap(o.template).metadata).labels),
    },
  ],
};
