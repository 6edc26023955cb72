/** Role behaviour (pkg/registry/rbac/role, pkg/apis/rbac/validation ValidateRole): namespaced rules only. */
import type { Strategy } from '@app/registry';
import { validateRules } from '../rbac.validation.js';

/** The Role strategy. */
export const roleStrategy: Strategy = {
  validate: (obj) => validateRules(obj, true),
  validateUpdate: (obj) => validateRules(obj, true),
};
