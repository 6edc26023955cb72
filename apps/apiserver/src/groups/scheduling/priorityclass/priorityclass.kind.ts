/**
 * scheduling.k8s.io/v1 PriorityClass (cluster-scoped): its declaration, with kubectl's columns
 * (NAME VALUE GLOBAL-DEFAULT AGE PREEMPTIONPOLICY, pkg/printers/internalversion) and the two
 * built-in classes as initial objects.
 */
import { ageOf, type KindDeclaration } from '@app/registry';
import { PriorityClassSchema } from './priorityclass.schema.js';
import { priorityClassStrategy, SYSTEM_PRIORITY_CLASSES } from './priorityclass.strategy.js';

/** The PriorityClass declaration. */
export const priorityClassKind: KindDeclaration = {
  group: 'scheduling.k8s.io',
  version: 'v1',
  kind: 'PriorityClass',
  plural: 'priorityclasses',
  singular: 'priorityclass',
  shortNames: ['pc'],
  namespaced: false,
  schema: PriorityClassSchema,
  protobufMessage: 'k8s.io.api.scheduling.v1.PriorityClass',
  strategy: priorityClassStrategy,
  // priorityClassStrategy.PrepareForCreate sets generation 1; nothing bumps it.
  generation: 'create',
  tableColumns: [
    { name: 'Value', type: 'integer', priority: 0, description: 'The priority pods of this class receive', cell: (o) => o.value ?? 0 },
    {
      name: 'Global-Default',
      type: 'boolean',
      priority: 0,
      description: 'Whether this is the default class of pods naming none',
      cell: (o) => o.globalDefault === true,
    },
    { name: 'Age', type: 'string', priority: 0, description: 'Time since creation', cell: (o, now) => ageOf(o, now) },
    {
      name: 'PreemptionPolicy',
      type: 'string',
      priority: 0,
      description: 'Whether pods of this class may preempt lower-priority pods',
      cell: (o) => o.preemptionPolicy ?? '',
    },
  ],
  initialObjects: SYSTEM_PRIORITY_CLASSES.map((c) => structuredClone(c)),
};
