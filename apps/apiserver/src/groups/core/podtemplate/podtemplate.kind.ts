/**
 * core/v1 PodTemplate: its declaration. kubectl's columns (pkg/printers internalversion
 * printPodTemplate): NAME CONTAINERS IMAGES POD LABELS, without AGE.
 */
import type { KindDeclaration } from '@app/registry';
import { templateColumns } from '../../apps/workload.columns.js';
import { asMap, formatLabels } from '../core.helpers.js';
import { PodTemplateSchema } from './podtemplate.schema.js';
import { podTemplateStrategy } from './podtemplate.strategy.js';

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
    ...templateColumns((o) => o.template, 0),
    {
      name: 'Pod Labels',
      type: 'string',
      priority: 0,
      description: 'The labels of the pods',
      cell: (o) => formatLabels(asMap(asMap(o.template).metadata).labels),
    },
  ],
};
