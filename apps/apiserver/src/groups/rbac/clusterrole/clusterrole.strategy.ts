/** ClusterRole behaviour (pkg/apis/rbac/validation ValidateClusterRole): rules and aggregationRule. */
import type { KubeObject } from '@app/apimachinery';
import type { Strategy } from '@app/registry';
import { validateAggregationRule, validateRules } from '../rbac.validation.js';

const validate = (obj: KubeObject) => [...validateRules(obj, false), ...validateAggregationRule(obj)];

/** The ClusterRole strategy. */
export const clusterRoleStrategy: Strategy = {
  validate,
  validateUpdate: validate,
};
