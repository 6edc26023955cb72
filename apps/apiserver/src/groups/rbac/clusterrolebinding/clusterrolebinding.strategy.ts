/** ClusterRoleBinding behaviour (pkg/apis/rbac/validation ValidateClusterRoleBinding, ValidateRoleBindingUpdate): defaults, roleRef and subjects, roleRef immutable. */
import type { Strategy } from '@app/registry';
import { defaultBinding, validateBinding, validateBindingUpdate } from '../rbac.validation.js';

/** The ClusterRoleBinding strategy. */
export const clusterRoleBindingStrategy: Strategy = {
  prepareForCreate: (obj) => defaultBinding(obj),
  prepareForUpdate: (obj) => defaultBinding(obj),
  validate: (obj) => validateBinding(obj, false),
  validateUpdate: (obj, old) => [...validateBinding(obj, false), ...validateBindingUpdate(obj, old)],
};
