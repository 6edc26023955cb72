/** RoleBinding behaviour (pkg/apis/rbac/validation ValidateRoleBinding, ValidateRoleBindingUpdate): defaults, roleRef and subjects, roleRef immutable. */
import type { Strategy } from '@app/registry';
import { defaultBinding, validateBinding, validateBindingUpdate } from '../rbac.validation.js';

/** The RoleBinding strategy. */
export const roleBindingStrategy: Strategy = {
  prepareForCreate: (obj) => defaultBinding(obj),
  prepareForUpdate: (obj) => defaultBinding(obj),
  validate: (obj) => validateBinding(obj, true),
  validateUpdate: (obj, old) => [...validateBinding(obj, true), ...validateBindingUpdate(obj, old)],
};
