/**
 * PodDisruptionBudget behaviour (pkg/registry/policy/poddisruptionbudget): status emptied on
 * create and written through /status only (by the disruption controller and the eviction
 * subresource); the spec may change, bumping generation, which holds evictions back until the
 * controller has observed it.
 */
import { STATUS_STRATEGY, type Strategy, type SubresourceStrategy } from '@app/registry';
import { validatePodDisruptionBudget, validatePodDisruptionBudgetStatus, validatePodDisruptionBudgetUpdate } from './pdb.validation.js';

/** The PodDisruptionBudget strategy. */
export const podDisruptionBudgetStrategy: Strategy = {
  prepareForCreate(pdb) {
    pdb.status = {};
  },
  validate: validatePodDisruptionBudget,
  validateUpdate: validatePodDisruptionBudgetUpdate,
};

/** /status: only status (and labels, annotations) change, validated as a PodDisruptionBudgetStatus. */
export const podDisruptionBudgetStatusStrategy: SubresourceStrategy = {
  prepareForUpdate: STATUS_STRATEGY.prepareForUpdate,
  validateUpdate: validatePodDisruptionBudgetStatus,
};
