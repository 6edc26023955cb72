/**
 * policy/v1 PodDisruptionBudget (+status). The disruption controller keeps its status; the pods'
 * eviction subresource reads and decrements it. kubectl's columns (pkg/printers internalversion
 * printPodDisruptionBudget): NAME MIN AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE.
 */
import { ageOf, statusSubresource, type KindDeclaration } from '@app/registry';
import { asMap } from '../../core/core.helpers.js';
import { PodDisruptionBudgetSchema } from './pdb.schema.js';
import { podDisruptionBudgetStatusStrategy, podDisruptionBudgetStrategy } from './pdb.strategy.js';

/** An int-or-string of the spec as printed, N/A when unset. */
const intOrString = (v: unknown): string => (typeof v === 'number' || typeof v === 'string' ? String(v) : 'N/A');

/** The PodDisruptionBudget declaration. */
export const podDisruptionBudgetKind: KindDeclaration = {
  group: 'policy',
  version: 'v1',
  kind: 'PodDisruptionBudget',
  plural: 'poddisruptionbudgets',
  singular: 'poddisruptionbudget',
  shortNames: ['pdb'],
  namespaced: true,
  schema: PodDisruptionBudgetSchema,
  protobufMessage: 'k8s.io.api.policy.v1.PodDisruptionBudget',
  strategy: podDisruptionBudgetStrategy,
  subresources: { status: { verbs: statusSubresource().verbs, strategy: podDisruptionBudgetStatusStrategy } },
  generation: 'spec',
  tableColumns: [
    { name: 'Min Available', type: 'string', priority: 0, description: 'Pods that must stay available', cell: (o) => intOrString(asMap(o.spec).minAvailable) },
    {
      name: 'Max Unavailable',
      type: 'string',
      priority: 0,
      description: 'Pods that may be unavailable',
      cell: (o) => intOrString(asMap(o.spec).maxUnavailable),
    },
    {
      name: 'Allowed Disruptions',
      type: 'integer',
      priority: 0,
      description: 'Evictions allowed now',
      cell: (o) => {
        const v = asMap(o.status).disruptionsAllowed;
        return typeof v === 'number' ? v : 0;
      },
    },
    { name: 'Age', type: 'string', priority: 0, description: 'Time since creation', cell: (o, now) => ageOf(o, now) },
  ],
};
